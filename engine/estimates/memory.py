"""Training and inference memory, modelled as the peak over phases, not a sum of parts.

Full fine-tuning peaks at ``optimizer.step()`` (all model states plus temporaries) unless the
activations of forward/backward are larger; LoRA/QLoRA peak in forward/backward
(see ``measured-memory`` in sources.yaml). Sharding over N GPUs (ZeRO-3/FSDP) divides the
parameter-proportional parts by N; activations, logits and framework overhead stay per GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from engine.catalog.load import Catalog
from engine.catalog.models import Gpu, Policy
from engine.estimates.figure import GIB, Figure, figure, tidy
from engine.estimates.shape import Shape
from engine.memo import Memo

Method = Literal["full", "lora", "qlora", "pretrain", "inference"]
METHODS: tuple[Method, ...] = ("full", "lora", "qlora", "pretrain", "inference")

_PHASES: dict[str, dict[str, tuple[str, ...]]] = {
    "full": {
        "forward_backward": ("weights", "master_weights", "optimizer_states", "activations",
                             "logits", "sharding_buffers", "framework"),
        "optimizer_step": ("weights", "master_weights", "gradients", "optimizer_states",
                           "step_temporaries", "framework"),
    },
    "lora": {
        "forward_backward": ("weights", "adapters", "activations", "logits",
                             "sharding_buffers", "framework"),
        "optimizer_step": ("weights", "adapters", "framework"),
    },
    "qlora": {
        "forward_backward": ("weights", "adapters", "dequant_buffer", "activations", "logits",
                             "sharding_buffers", "framework"),
        "optimizer_step": ("weights", "adapters", "framework"),
    },
    "inference": {"serving": ("weights", "kv_cache", "framework")},
}
_PHASES["pretrain"] = _PHASES["full"]
_SHARDED = frozenset(
    {"weights", "master_weights", "gradients", "optimizer_states", "adapters",
     "step_temporaries", "kv_cache"}
)
_MULTI_GPU = frozenset({"sharding_buffers"})
"""Held only when the job is sharded over several GPUs (ZeRO-3/FSDP gather buffers)."""


@dataclass(frozen=True)
class MemoryRequest:
    """What to estimate: a model shape, a method and the run's batch geometry."""

    shape: Shape
    method: Method
    seq_len: int = 2048
    micro_batch: int = 1
    checkpointing: bool | None = None
    """True/False as asked; None = auto (on only when it lowers the peak noticeably)."""

    @cached_property
    def _key(self) -> tuple[Any, ...]:
        # Hashing/comparing the pydantic Shape field by field is slow on the hot path; the
        # numbers every estimate reads of it are enough. Computed once per request object.
        s = self.shape
        return (s.label, s.params_b, s.compute_params_b, s.layers, s.hidden, s.intermediate,
                s.heads, s.kv_heads, s.head_dim, s.vocab, s.tied_embeddings, self.method,
                self.seq_len, self.micro_batch, self.checkpointing)

    @cached_property
    def _hash(self) -> int:
        return hash(self._key)

    @cached_property
    def token(self) -> str:
        """Its identifying numbers as one string (exact: the repr of scalars), for memo keys
        looked up hundreds of times a request: hashed once, compared in C."""
        return repr(self._key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, MemoryRequest) and self._key == other._key)


class MemoryEstimate(BaseModel):
    """Peak memory per GPU, with the phase that binds and a breakdown that sums to it."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    model: str
    params_b: float
    method: Method
    seq_len: int
    micro_batch: int
    gpus: int
    gradient_checkpointing: bool
    checkpointing_auto: bool
    phases: dict[str, float]
    binding_phase: str
    total_gib: float
    range_gib: dict[str, float]
    breakdown: dict[str, float]
    components: dict[str, Figure]
    formula: str


def components(req: MemoryRequest, policy: Policy, checkpointing: bool) -> dict[str, Figure]:
    """Every memory component of the whole job in GiB (before sharding), with its formula."""
    return MemoryModel(policy).components(req, checkpointing)


def _components(req: MemoryRequest, policy: Policy, checkpointing: bool) -> dict[str, Figure]:
    s = req.shape
    p = s.params
    out: dict[str, Figure] = {}
    if req.method in ("full", "pretrain"):
        out.update(_model_states(p, policy))
        largest = s.vocab * s.hidden
        k = policy.step_temporary_tensors.value
        out["step_temporaries"] = figure(
            k * largest * 4 / GIB, "GiB", "k × vocab × hidden × 4 B (fp32 copies in the step)",
            policy.step_temporary_tensors.sources, k=k, vocab=s.vocab, hidden=s.hidden,
        )
    elif req.method in ("lora", "qlora"):
        out["weights"] = _frozen_weights(req, policy)
        out["adapters"] = _adapters(s, policy)
        if req.method == "qlora":
            out["dequant_buffer"] = figure(
                s.hidden * s.intermediate * 2 / GIB, "GiB",
                "hidden × intermediate × 2 B (one layer dequantised to bf16)",
                policy.nf4_bytes_per_param.sources, hidden=s.hidden, intermediate=s.intermediate,
            )
    else:
        out["weights"] = _param_bytes(p, policy.inference_weight_bytes, "weights")
        out["kv_cache"] = _kv_cache(req, policy)
    if req.method != "inference":
        out["activations"] = _activations(req, policy, checkpointing)
        out["logits"] = _logits(req, policy)
        out["sharding_buffers"] = _sharding_buffers(req, policy)
    out["framework"] = figure(
        policy.framework_overhead_gib.value, "GiB", "constant per GPU",
        policy.framework_overhead_gib.sources,
    )
    return out


def _param_bytes(p: float, constant: object, what: str) -> Figure:
    value = constant.value  # type: ignore[attr-defined]
    return figure(
        p * value / GIB, "GiB", f"params × {value:g} B ({what})",
        constant.sources, params=p, bytes_per_param=value,  # type: ignore[attr-defined]
    )


def _model_states(p: float, policy: Policy) -> dict[str, Figure]:
    return {
        "weights": _param_bytes(p, policy.weight_bytes_16bit, "16-bit weights"),
        "master_weights": _param_bytes(p, policy.master_weight_bytes, "fp32 master weights"),
        "gradients": _param_bytes(p, policy.gradient_bytes, "16-bit gradients"),
        "optimizer_states": _param_bytes(p, policy.adam_state_bytes, "AdamW moments"),
    }


def _frozen_weights(req: MemoryRequest, policy: Policy) -> Figure:
    s = req.shape
    if req.method == "lora":
        return _param_bytes(s.params, policy.weight_bytes_16bit, "frozen 16-bit base")
    emb = min(s.embedding_params, s.params * 0.5)
    nf4 = policy.nf4_bytes_per_param.value
    w16 = policy.weight_bytes_16bit.value
    return figure(
        ((s.params - emb) * nf4 + emb * w16) / GIB, "GiB",
        "(params − embeddings) × nf4 B + embeddings × 2 B (NF4, double quantisation)",
        [*policy.nf4_bytes_per_param.sources, *policy.weight_bytes_16bit.sources],
        params=s.params, embedding_params=emb, nf4_bytes=nf4,
    )


def adapter_params(shape: Shape, rank: int) -> float:
    """LoRA parameters with adapters on q, k, v, o, gate, up and down of every layer."""
    q = shape.heads * shape.head_dim
    kv = shape.kv_heads * shape.head_dim
    h, i = shape.hidden, shape.intermediate
    per_layer = rank * ((h + q) + 2 * (h + kv) + (q + h) + 3 * (h + i))
    return float(per_layer * shape.layers)


def _adapters(shape: Shape, policy: Policy) -> Figure:
    rank = int(policy.lora_rank.value)
    a = adapter_params(shape, rank)
    b = policy.adapter_state_bytes.value
    return figure(
        a * b / GIB, "GiB", "adapter params × B (weights, grads, AdamW moments)",
        [*policy.lora_rank.sources, *policy.adapter_state_bytes.sources],
        adapter_params=a, rank=rank, bytes_per_param=b,
    )


def _activations(req: MemoryRequest, policy: Policy, checkpointing: bool) -> Figure:
    s, sl, b = req.shape, req.seq_len, req.micro_batch
    c = policy.activation_bytes_per_token_hidden.value
    fused = bool(policy.fused_attention.value)
    attn = 0.0 if fused else policy.attention_score_coeff.value * s.heads * sl / s.hidden
    per_layer = sl * b * s.hidden * (c + attn)
    srcs = [*policy.activation_bytes_per_token_hidden.sources, *policy.fused_attention.sources]
    term = f"{c:g}" if fused else f"{c:g} + 5·a·s/h"
    if not checkpointing:
        return figure(
            s.layers * per_layer / GIB, "GiB", f"L × s × b × h × ({term})", srcs,
            layers=s.layers, seq_len=sl, micro_batch=b, hidden=s.hidden, heads=s.heads,
        )
    k = policy.checkpoint_bytes_per_token_hidden.value
    return figure(
        (s.layers * sl * b * s.hidden * k + per_layer) / GIB, "GiB",
        f"L × s × b × h × {k:g} (layer inputs) + s × b × h × ({term}) (one layer recomputed)",
        [*srcs, *policy.checkpoint_bytes_per_token_hidden.sources],
        layers=s.layers, seq_len=sl, micro_batch=b, hidden=s.hidden, heads=s.heads,
    )


def _logits(req: MemoryRequest, policy: Policy) -> Figure:
    k = policy.logits_bytes_per_token_vocab.value
    v = req.shape.vocab
    return figure(
        req.seq_len * req.micro_batch * v * k / GIB, "GiB", f"s × b × vocab × {k:g} B",
        policy.logits_bytes_per_token_vocab.sources,
        seq_len=req.seq_len, micro_batch=req.micro_batch, vocab=v,
    )


def _sharding_buffers(req: MemoryRequest, policy: Policy) -> Figure:
    """What ZeRO-3/FSDP hold unsharded on each GPU: the gathered layer and the prefetched next."""
    s = req.shape
    k = policy.sharding_buffer_layers.value
    layer = (s.params - s.embedding_params) / s.layers
    per_param = (policy.nf4_bytes_per_param if req.method == "qlora"
                 else policy.weight_bytes_16bit).value
    return figure(
        k * layer * per_param / GIB, "GiB",
        f"{k:g} layers × (params − embeddings) ÷ L × {per_param:g} B (gathered, prefetched; "
        "only when sharded over several GPUs)",
        [*policy.sharding_buffer_layers.sources], layers_held=k, layer_params=layer,
        bytes_per_param=per_param,
    )


def _kv_cache(req: MemoryRequest, policy: Policy) -> Figure:
    s = req.shape
    head_dim = s.head_dim
    k = policy.kv_cache_bytes.value
    value = 2 * s.layers * req.seq_len * req.micro_batch * s.kv_heads * head_dim * k
    return figure(
        value / GIB, "GiB", f"2 × L × s × b × kv_heads × head_dim × {k:g} B",
        policy.kv_cache_bytes.sources, layers=s.layers, seq_len=req.seq_len,
        micro_batch=req.micro_batch, kv_heads=s.kv_heads, head_dim=head_dim,
    )


def phase_split(method: Method, comps: dict[str, Figure]) -> dict[str, tuple[float, float, float]]:
    """Per phase: (GiB that shards over GPUs, GiB every GPU holds in full, GiB every GPU holds
    only when the job is sharded over several)."""
    out: dict[str, tuple[float, float, float]] = {}
    for phase, names in _PHASES[method].items():
        present = [n for n in names if n in comps]
        sharded = sum(comps[n].value for n in present if n in _SHARDED)
        multi = sum(comps[n].value for n in present if n in _MULTI_GPU)
        whole = sum(comps[n].value for n in present if n not in _SHARDED | _MULTI_GPU)
        out[phase] = (sharded, whole, multi)
    return out


def per_gpu_gib(split: dict[str, tuple[float, float, float]], gpus: int) -> dict[str, float]:
    """Per-GPU GiB of each phase when sharded over ``gpus`` GPUs."""
    return {phase: sharded / gpus + whole + (multi if gpus > 1 else 0.0)
            for phase, (sharded, whole, multi) in split.items()}


def estimate_memory(req: MemoryRequest, policy: Policy, gpus: int = 1) -> MemoryEstimate:
    """Peak memory per GPU for ``req`` sharded over ``gpus`` GPUs."""
    return MemoryModel(policy).estimate(req, gpus)


def peak_on(req: MemoryRequest, gpu: Gpu, policy: Policy, gpus: int) -> float:
    """:meth:`MemoryModel.peak_on` under ``policy``."""
    return MemoryModel(policy).peak_on(req, gpu, gpus)


def checkpointing_needed(req: MemoryRequest, gpu: Gpu, policy: Policy, gpus: int) -> bool:
    """:meth:`MemoryModel.checkpointing_needed` under ``policy``."""
    return MemoryModel(policy).checkpointing_needed(req, gpu, gpus)


def gpus_needed(req: MemoryRequest, gpu: Gpu, policy: Policy) -> int | None:
    """:meth:`MemoryModel.gpus_needed` under ``policy``."""
    return MemoryModel(policy).gpus_needed(req, gpu)


def usable_gib(gpu: Gpu, policy: Policy) -> float:
    """VRAM a job can count on, in GiB."""
    return gpu.vram_gib * policy.usable_vram_fraction.value


def memory_model(catalog: Catalog) -> MemoryModel:
    """The catalog's :class:`MemoryModel` (kept with what it derives from the catalog)."""
    found: MemoryModel = catalog.derived(("memory_model",), MemoryModel, catalog.policy)
    return found


class MemoryModel:
    """The memory of jobs under one policy, each job's components remembered (bounded).

    A catalog keeps one (:func:`memory_model`): what every candidate of a request asks
    again (a job's peak on each GPU count, whether checkpointing is on) is then derived from
    two phase splits per job.
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._memo: Memo[tuple[str, MemoryRequest, bool], Any] = Memo()

    def components(self, req: MemoryRequest, ckpt: bool) -> dict[str, Figure]:
        """:func:`components` of the job, remembered."""
        found: dict[str, Figure] = self._memo.remember(("components", req, ckpt), _components,
                                                       req, self.policy, ckpt)
        return found

    def split(self, req: MemoryRequest, ckpt: bool) -> dict[str, tuple[float, float, float]]:
        """:func:`phase_split` of the job's components, remembered."""
        found: dict[str, tuple[float, float, float]] = self._memo.remember(
            ("split", req, ckpt), lambda: phase_split(req.method, self.components(req, ckpt)))
        return found

    def peak(self, req: MemoryRequest, ckpt: bool, gpus: int) -> float:
        """The job's per-GPU peak (GiB) sharded over ``gpus`` GPUs."""
        return max(per_gpu_gib(self.split(req, ckpt), gpus).values())

    def estimate(self, req: MemoryRequest, gpus: int = 1) -> MemoryEstimate:
        """Peak memory per GPU for ``req`` sharded over ``gpus`` GPUs."""
        ckpt, auto = self.resolve_checkpointing(req, gpus)
        comps = self.components(req, ckpt)
        phases = per_gpu_gib(phase_split(req.method, comps), gpus)
        binding = max(phases, key=lambda k: phases[k])
        total = phases[binding]
        margin = self.policy.memory_margin_fraction.value
        names = [n for n in _PHASES[req.method][binding] if n in comps
                 and (gpus > 1 or n not in _MULTI_GPU)]
        breakdown = {
            n: tidy(comps[n].value / gpus if n in _SHARDED else comps[n].value, 2)
            for n in names
        }
        return MemoryEstimate(
            model=req.shape.label,
            params_b=req.shape.params_b,
            method=req.method,
            seq_len=req.seq_len,
            micro_batch=req.micro_batch,
            gpus=gpus,
            gradient_checkpointing=ckpt,
            checkpointing_auto=auto,
            phases={k: tidy(v, 2) for k, v in phases.items()},
            binding_phase=binding,
            total_gib=tidy(total, 2),
            range_gib={"low": tidy(total * (1 - margin), 2),
                       "high": tidy(total * (1 + margin), 2)},
            breakdown=breakdown,
            components=comps,
            formula=f"max over phases; {binding} = " + " + ".join(names)
            + ("" if gpus == 1 else f" (model states ÷ {gpus} GPUs, ZeRO-3/FSDP)"),
        )

    def peak_on(self, req: MemoryRequest, gpu: Gpu, gpus: int) -> float:
        """The per-GPU peak (GiB, rounded like ``total_gib``) on ``gpus`` cards of ``gpu``,
        checkpointing on only where it is needed (:meth:`checkpointing_needed`): consistent
        with :meth:`gpus_needed`."""
        return self.peak_with(req, self.checkpointing_needed(req, gpu, gpus), gpus)

    def peak_with(self, req: MemoryRequest, ckpt: bool, gpus: int) -> float:
        """The per-GPU peak (GiB, rounded like ``total_gib``) with checkpointing as given."""
        return tidy(self.peak(req, ckpt and req.method != "inference", gpus), 2)

    def checkpointing_needed(self, req: MemoryRequest, gpu: Gpu, gpus: int) -> bool:
        """Whether gradient checkpointing is on for ``gpus`` × ``gpu``: as the team asked,
        else only when the job does not fit the cards without it (recomputation costs time,
        so it is never on where nothing needs it)."""
        return self.checkpointing_for(req, gpu, lambda: self.peak(req, False, gpus))

    def checkpointing_for(self, req: MemoryRequest, gpu: Gpu,
                          peak_without: Callable[[], float],
                          room_gib: float | None = None) -> bool:
        """:meth:`checkpointing_needed` given the per-GPU peak without checkpointing (asked
        for only when the team left it to the estimate), in ``room_gib`` where the job gets
        less than the whole GPU (a MIG slice)."""
        if req.method == "inference":
            return False
        if req.checkpointing is not None:
            return req.checkpointing
        return peak_without() > (usable_gib(gpu, self.policy) if room_gib is None
                                 else room_gib)

    def resolve_checkpointing(self, req: MemoryRequest, gpus: int) -> tuple[bool, bool]:
        """(checkpointing on?, decided automatically?)."""
        if req.method == "inference":
            return False, False
        if req.checkpointing is not None:
            return req.checkpointing, False
        without = self.peak(req, False, gpus)
        with_ckpt = self.peak(req, True, gpus)
        saving = 1 - with_ckpt / without
        return saving >= self.policy.checkpointing_auto_min_saving.value, True

    def gpus_needed(self, req: MemoryRequest, gpu: Gpu) -> int | None:
        """Fewest GPUs of this kind that hold the job (sharded), or None if no count does.

        With checkpointing on auto, the count is the smaller of with and without it.
        """
        options = [req.checkpointing] if req.checkpointing is not None else [False, True]
        if req.method == "inference":
            options = [False]
        cap = usable_gib(gpu, self.policy)
        found = [c for c in (self._count(req, ckpt, cap) for ckpt in options) if c is not None]
        return min(found) if found else None

    def _count(self, req: MemoryRequest, ckpt: bool, cap: float) -> int | None:
        limit = int(self.policy.max_gpus_considered.value)
        split = self.split(req, ckpt)
        if all(sharded + whole <= cap for sharded, whole, _ in split.values()):
            return 1
        need = 2
        for sharded, whole, multi in split.values():
            room = cap - whole - multi
            if room <= 0:
                return None
            need = max(need, math.ceil(sharded / room - 1e-9))
        return need if need <= limit else None
