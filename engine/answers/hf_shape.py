"""A Hugging Face ``config.json`` read into the shape a catalog model preset has.

The keys of the common decoder families (Llama, Mistral and Mixtral, Qwen2/Qwen3 and their
MoE variants, Gemma 1-3, Phi-3, DeepSeek-V2/V3) give the layers, widths, heads, vocabulary
and experts; the parameter counts are computed from them, weight matrix by weight matrix, as
the catalog's notes derive them. Any other ``model_type``, and any key a family needs that is
missing, is refused with one line naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from engine.answers.quoted import shown
from engine.catalog.models import ModelPreset
from engine.errors import InputError
from engine.files.yamlio import type_name

MAX_DIMENSION = 10_000_000
"""No count or width in a config is larger (the largest vocabularies are ~260,000); the
preset's own bounds then apply. Keeps the arithmetic far from overflow."""

D = TypeVar("D")


class Keys:
    """Typed access to one config's keys; every refusal names the file and the key."""

    def __init__(self, data: Mapping[str, Any], path: str) -> None:
        self.data = data
        self.path = path

    def error(self, key: str, message: str) -> InputError:
        """A refusal of ``key``."""
        return InputError(message, path=self.path, field=key)

    def whole(self, key: str, *, low: int = 1) -> int:
        """A whole number from ``low`` to :data:`MAX_DIMENSION` that must be given."""
        value = self._whole(key, low)
        if value is None:
            raise self.error(key, "required key is missing")
        return value

    def whole_or(self, key: str, default: D, *, low: int = 1) -> int | D:
        """A whole number from ``low`` to :data:`MAX_DIMENSION`, ``default`` when the key is
        absent or null."""
        value = self._whole(key, low)
        return default if value is None else value

    def _whole(self, key: str, low: int) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"expected a whole number, got {type_name(value)} "
                                  f"{shown(value)}")
        if not low <= value <= MAX_DIMENSION:
            raise self.error(key, f"expected a whole number from {low} to {MAX_DIMENSION:,}, "
                                  f"got {value:,}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        """A true/false key (``default`` when absent or null)."""
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {shown(value)}")
        return value

    def layer_list(self, key: str) -> list[int]:
        """A list of layer indices (empty when absent)."""
        value = self.data.get(key) or []
        if not isinstance(value, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in value):
            raise self.error(key, "expected a list of layer numbers")
        return value


# ---------------------------------------------------------------- mixture of experts
@dataclass(frozen=True)
class Moe:
    """The routed and shared experts of the MoE layers."""

    experts: int
    active: int
    expert_ffn: int
    """Feed-forward width of one routed expert."""
    moe_layers: int
    shared_ffn: int = 0
    """Total feed-forward width of the always-on shared expert(s)."""
    shared_gate: bool = False
    """A hidden → 1 gate on the shared expert (Qwen2-MoE)."""
    layer_step: int = 1


def _mixtral(keys: Keys, layers: int) -> Moe:
    """Every layer MoE; ``intermediate_size`` is the expert width."""
    return Moe(experts=keys.whole("num_local_experts"), active=_active(keys, "num_local_experts"),
               expert_ffn=keys.whole("intermediate_size"), moe_layers=layers)


def _active(keys: Keys, experts_key: str) -> int:
    """``num_experts_per_tok``, at most the number of experts."""
    active = keys.whole("num_experts_per_tok")
    if active > keys.whole(experts_key):
        raise keys.error("num_experts_per_tok", f"{active} is more than {experts_key}")
    return active


def _qwen_moe(keys: Keys, layers: int) -> Moe:
    """Every ``decoder_sparse_step``-th layer MoE unless listed in ``mlp_only_layers``;
    Qwen2-MoE adds one gated shared expert of ``shared_expert_intermediate_size``."""
    step = keys.whole_or("decoder_sparse_step", 1)
    dense_only = set(keys.layer_list("mlp_only_layers"))
    skipped = sum(1 for i in dense_only if 0 <= i < layers and (i + 1) % step == 0)
    moe_layers = layers // step - skipped
    shared = keys.whole_or("shared_expert_intermediate_size", 0, low=0)
    return Moe(experts=keys.whole("num_experts"), active=_active(keys, "num_experts"),
               expert_ffn=keys.whole("moe_intermediate_size"), moe_layers=moe_layers,
               shared_ffn=shared, shared_gate=shared > 0, layer_step=step)


def _deepseek(keys: Keys, layers: int) -> Moe:
    """Dense ``first_k_dense_replace`` layers, then every ``moe_layer_freq``-th layer MoE with
    ``n_shared_experts`` shared experts as wide as a routed one."""
    first = keys.whole_or("first_k_dense_replace", 0, low=0)
    step = keys.whole_or("moe_layer_freq", 1)
    width = keys.whole("moe_intermediate_size")
    moe_layers = max(0, (layers - 1) // step - (first - 1) // step)  # multiples of step >= first
    return Moe(experts=keys.whole("n_routed_experts"), active=_active(keys, "n_routed_experts"),
               expert_ffn=width, moe_layers=moe_layers,
               shared_ffn=keys.whole_or("n_shared_experts", 0, low=0) * width, layer_step=step)


# ---------------------------------------------------------------- families
@dataclass(frozen=True)
class Family:
    """What one ``model_type`` adds to the shared Llama-style layout."""

    tied_default: bool
    """transformers' default for ``tie_word_embeddings`` when the file omits it."""
    qkv_bias: bool = False
    qk_norm: bool = False
    """An RMSNorm of head size on queries and keys (Qwen3, Gemma 3)."""
    norms_per_layer: int = 2
    moe: Callable[[Keys, int], Moe] | None = None
    mla: bool = False
    """DeepSeek's multi-head latent attention (low-rank queries and keys/values)."""


FAMILIES: dict[str, Family] = {
    "llama": Family(tied_default=False),
    "mistral": Family(tied_default=False),
    "mixtral": Family(tied_default=False, moe=_mixtral),
    "qwen2": Family(tied_default=False, qkv_bias=True),
    "qwen2_moe": Family(tied_default=False, qkv_bias=True, moe=_qwen_moe),
    "qwen3": Family(tied_default=False, qk_norm=True),
    "qwen3_moe": Family(tied_default=False, qk_norm=True, moe=_qwen_moe),
    "gemma": Family(tied_default=True),
    "gemma2": Family(tied_default=True, norms_per_layer=4),
    "gemma3_text": Family(tied_default=True, qk_norm=True, norms_per_layer=4),
    "phi3": Family(tied_default=False),
    "deepseek_v2": Family(tied_default=False, moe=_deepseek, mla=True),
    "deepseek_v3": Family(tied_default=False, moe=_deepseek, mla=True),
}
WRAPPERS = {"gemma3": "text_config"}
"""Multimodal checkpoints whose text decoder is described by a nested config (the vision
tower is not counted)."""


def family_of(data: Mapping[str, Any], path: str) -> tuple[Mapping[str, Any], str, Family]:
    """The decoder's config (unwrapped from a multimodal one), its model_type and family."""
    model_type = data.get("model_type")
    if isinstance(model_type, str) and model_type in WRAPPERS:
        inner = data.get(WRAPPERS[model_type])
        if not isinstance(inner, Mapping):
            raise InputError("required key is missing (the text decoder's config)",
                             path=path, field=WRAPPERS[model_type])
        data, model_type = inner, inner.get("model_type", f"{model_type}_text")
    if model_type is None:
        raise InputError("required key is missing; is this a Hugging Face model config.json?",
                         path=path, field="model_type")
    family = FAMILIES.get(model_type) if isinstance(model_type, str) else None
    if family is None:
        known = sorted([*FAMILIES, *(f"{name} ({key})" for name, key in WRAPPERS.items())])
        raise InputError(f"{shown(model_type)} is not a model type this tool reads; it reads "
                         f"{', '.join(known)}", path=path, field="model_type")
    return data, model_type, family


# ---------------------------------------------------------------- the shape and its counts
@dataclass(frozen=True)
class Architecture:
    """The figures the parameter count needs, read from one config."""

    model_type: str
    family: Family
    layers: int
    hidden: int
    intermediate: int
    """Feed-forward width of a dense layer."""
    heads: int
    kv_heads: int
    head_dim: int | None
    vocab: int
    tied: bool
    attention: int
    """Parameters of one layer's attention block (weights, biases, q/k norms)."""
    moe: Moe | None


def architecture(data: Mapping[str, Any], path: str) -> Architecture:
    """The architecture a config describes, or an InputError naming the file and key."""
    data, model_type, family = family_of(data, path)
    keys = Keys(data, path)
    hidden = keys.whole("hidden_size")
    heads = keys.whole("num_attention_heads")
    head_dim = None if family.mla else keys.whole_or("head_dim", None)
    kv_heads = keys.whole_or("num_key_value_heads", heads)
    layers = keys.whole("num_hidden_layers")
    return Architecture(
        model_type=model_type, family=family, layers=layers, hidden=hidden,
        intermediate=keys.whole("intermediate_size"), heads=heads, kv_heads=kv_heads,
        head_dim=head_dim, vocab=keys.whole("vocab_size"),
        tied=keys.flag("tie_word_embeddings", family.tied_default),
        attention=_attention(keys, family, hidden, heads, kv_heads,
                             head_dim or hidden // heads),
        moe=family.moe(keys, layers) if family.moe else None,
    )


def _attention(keys: Keys, family: Family, hidden: int, heads: int, kv_heads: int,
               head_dim: int) -> int:
    """Parameters of one attention block: q, k, v, o (and their biases and norms)."""
    if family.mla:
        return _latent_attention(keys, hidden, heads)
    q, kv = heads * head_dim, kv_heads * head_dim
    weights = hidden * (q + 2 * kv) + q * hidden
    bias = q + 2 * kv if family.qkv_bias else 0
    if keys.flag("attention_bias", False):
        bias = q + 2 * kv + hidden
    return weights + bias + (2 * head_dim if family.qk_norm else 0)


def _latent_attention(keys: Keys, hidden: int, heads: int) -> int:
    """DeepSeek MLA: queries through an optional low-rank ``q_lora_rank``, keys and values
    through ``kv_lora_rank`` plus a shared rotary key, each compression normalised."""
    nope, rope = keys.whole("qk_nope_head_dim"), keys.whole("qk_rope_head_dim")
    value = keys.whole("v_head_dim")
    kv_rank = keys.whole("kv_lora_rank")
    q_rank = keys.whole_or("q_lora_rank", None)
    q_head = heads * (nope + rope)
    q = hidden * q_head if q_rank is None else hidden * q_rank + q_rank + q_rank * q_head
    kv = hidden * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + value)
    return q + kv + heads * value * hidden


def count_params(arch: Architecture) -> tuple[int, int]:
    """Total parameters, and those used per token (all but the routed experts a token skips).

    Both embedding matrices count (one when tied); a gated (SwiGLU/GeGLU) feed-forward has
    three matrices; RMSNorm weights count once per norm.
    """
    h = arch.hidden
    embeddings = arch.vocab * h * (1 if arch.tied else 2)
    per_layer = arch.attention + arch.family.norms_per_layer * h
    base = embeddings + arch.layers * per_layer + h
    moe = arch.moe
    if moe is None:
        total = base + arch.layers * 3 * h * arch.intermediate
        return total, total
    dense = (arch.layers - moe.moe_layers) * 3 * h * arch.intermediate
    always = 3 * h * moe.shared_ffn + h * moe.experts + (h if moe.shared_gate else 0)
    expert = 3 * h * moe.expert_ffn
    total = base + dense + moe.moe_layers * (always + moe.experts * expert)
    active = base + dense + moe.moe_layers * (always + moe.active * expert)
    return total, active


def quoted_billions(count: int) -> float:
    """A parameter count in billions to three significant figures, as model cards and the
    catalog quote it (the estimates carry no more precision than that)."""
    return float(f"{count / 1e9:.3g}")


def preset_from_config(data: Any, *, path: str, name: str) -> ModelPreset:
    """The preset a config describes: its shape, and its parameter counts computed from it."""
    if not isinstance(data, Mapping):
        raise InputError(f"expected a JSON object of model settings, got {type_name(data)}",
                         path=path)
    arch = architecture(data, path)
    total, active = count_params(arch)
    moe = arch.moe
    fields: dict[str, Any] = {
        "id": "config", "name": name, "family": arch.model_type,
        "params_b": quoted_billions(total), "layers": arch.layers, "hidden": arch.hidden,
        "intermediate": moe.expert_ffn if moe else arch.intermediate, "heads": arch.heads,
        "kv_heads": arch.kv_heads, "head_dim": arch.head_dim, "vocab": arch.vocab,
        "tied_embeddings": arch.tied, "sources": [path],
        "note": f"read from {path}: {total:,} parameters" + (
            f", {active:,} per token" if moe else ""),
    }
    if moe is not None:
        fields |= _moe_fields(arch, moe, active)
    try:
        return ModelPreset.model_validate(fields)
    except ValidationError as exc:
        raise _refusal(exc, path) from None


def _moe_fields(arch: Architecture, moe: Moe, active: int) -> dict[str, Any]:
    dense_layers = arch.layers - moe.moe_layers
    return {
        "experts": moe.experts, "experts_active": moe.active,
        "experts_shared": -(-moe.shared_ffn // moe.expert_ffn),
        "dense_layers": dense_layers, "moe_layer_step": moe.layer_step,
        "dense_intermediate": arch.intermediate if dense_layers else None,
        "active_params_b": quoted_billions(active),
    }


_CONFIG_KEY = {
    "layers": "num_hidden_layers", "hidden": "hidden_size", "heads": "num_attention_heads",
    "kv_heads": "num_key_value_heads", "vocab": "vocab_size", "head_dim": "head_dim",
    "intermediate": "intermediate_size", "dense_intermediate": "intermediate_size",
    "experts_active": "num_experts_per_tok",
    "params_b": "the parameter count", "active_params_b": "the parameter count",
}


def _refusal(exc: ValidationError, path: str) -> InputError:
    """A preset the config's figures do not make, as one line naming the config key."""
    error = exc.errors(include_url=False)[0]
    field = str(error["loc"][0]) if error["loc"] else None
    message = str(error["msg"])
    if field is None and "kv_heads" in message:
        field = "num_key_value_heads"
        message = "num_attention_heads must be a multiple of it"
    key = _CONFIG_KEY.get(field or "", field)
    return InputError(message[0].lower() + message[1:], path=path, field=key)
