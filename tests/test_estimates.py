"""The estimators against hand-worked examples from the literature and our own measurements.

Memory is in GiB (2^30 bytes), the unit GPU memory is sold in: a "24 GB" card holds 24 GiB.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.catalog.load import Catalog
from engine.catalog.models import Constant, Policy
from engine.errors import CatalogError
from engine.estimates.cost import (
    CostLine,
    all_in_usd_per_gpu_hour,
    api_cost_per_month,
    break_even,
    hourly_rent_usd,
    owning_cost,
    owning_fixed_per_year,
    platform_for,
    purchase_cost,
    renting_cost,
    running_cost_per_hour,
)
from engine.estimates.memory import (
    MemoryRequest,
    Method,
    components,
    estimate_memory,
    gpus_needed,
    usable_gib,
)
from engine.estimates.shape import Shape, resolve_shape, shape_for_params
from engine.estimates.training import estimate_training

GB = 2**30
STATES = ("weights", "master_weights", "gradients", "optimizer_states")


def preset(catalog: Catalog, model_id: str) -> Shape:
    return resolve_shape(catalog, model=model_id, params_b=None)


def with_constants(policy: Policy, **values: float) -> Policy:
    """A policy copy with some Constant values changed (sources and units kept)."""
    update: dict[str, Any] = {
        name: getattr(policy, name).model_copy(update={"value": value})
        for name, value in values.items()
    }
    return policy.model_copy(update=update)


def mem(catalog: Catalog, shape: Shape, method: Method, *, seq_len: int = 2048,
        micro_batch: int = 1, checkpointing: bool | None = False, gpus: int = 1,
        policy: Policy | None = None) -> Any:
    req = MemoryRequest(shape=shape, method=method, seq_len=seq_len, micro_batch=micro_batch,
                        checkpointing=checkpointing)
    return estimate_memory(req, policy or catalog.policy, gpus)


# ------------------------------------------------------------------ model states (ZeRO)


def test_zero_paper_mixed_precision_adam_is_16_bytes_per_param(catalog: Catalog) -> None:
    """ZeRO (Rajbhandari et al., arXiv 1910.02054, §3.1): mixed-precision Adam keeps
    2 (fp16 weights) + 2 (fp16 grads) + 4 + 4 + 4 (fp32 master, momentum, variance) = 16 bytes
    per parameter; a 7.5B-parameter model needs 120 × 10^9 bytes (111.8 GiB) of model states."""
    shape = shape_for_params(7.5, catalog)
    req = MemoryRequest(shape=shape, method="full", seq_len=512)
    comps = components(req, catalog.policy, checkpointing=False)
    assert sum(comps[name].value for name in STATES) == pytest.approx(120e9 / GB, abs=1e-3)
    assert comps["weights"].value == pytest.approx(15e9 / GB, abs=1e-3)
    assert comps["gradients"].value == pytest.approx(15e9 / GB, abs=1e-3)
    assert comps["master_weights"].value + comps["optimizer_states"].value == pytest.approx(
        90e9 / GB, abs=1e-3)


def test_full_fine_tuning_peak_is_the_optimizer_step_at_short_sequence(catalog: Catalog) -> None:
    """measured-memory (our PyTorch runs): full fine-tuning peaks at optimizer.step() at short
    sequence, at ≈ 16·P + 2 fp32 copies of the largest tensor (the embedding), plus overhead."""
    shape = preset(catalog, "llama-2-7b")
    est = mem(catalog, shape, "full", seq_len=512)
    assert est.binding_phase == "optimizer_step"
    expected = (16 * shape.params + 2 * shape.vocab * shape.hidden * 4) / GB + 1.0
    assert est.total_gib == pytest.approx(expected, abs=0.01)
    assert sum(est.breakdown.values()) == pytest.approx(est.total_gib, abs=0.03)
    assert "activations" not in est.breakdown


def test_full_fine_tuning_binds_in_forward_backward_at_long_sequence(catalog: Catalog) -> None:
    """measured-memory: activations dominate once they exceed ~4·P bytes; then
    forward/backward binds (states + activations + logits), not the optimizer step."""
    shape = preset(catalog, "llama-2-7b")
    est = mem(catalog, shape, "full", seq_len=16384)
    assert est.binding_phase == "forward_backward"
    assert est.phases["forward_backward"] > est.phases["optimizer_step"]
    assert est.breakdown["activations"] > 4 * shape.params / GB


# ------------------------------------------------------------------ activations (Korthikanti)


def test_korthikanti_activations_with_eager_attention(catalog: Catalog) -> None:
    """Korthikanti et al. (arXiv 2205.05198, eq. 2): per layer s·b·h·(34 + 5·a·s/h) bytes of
    16-bit activations when the a×s×s attention scores are stored (no fused kernel)."""
    policy = with_constants(catalog.policy, fused_attention=0)
    shape = preset(catalog, "llama-2-7b")
    s, b, h, a, layers = 2048, 2, shape.hidden, shape.heads, shape.layers
    comps = components(MemoryRequest(shape=shape, method="full", seq_len=s, micro_batch=b),
                       policy, checkpointing=False)
    expected = layers * s * b * h * (34 + 5 * a * s / h) / GB
    assert comps["activations"].value == pytest.approx(expected, abs=1e-4)
    assert expected == pytest.approx(61.2e9 / GB, abs=0.1)  # 32 × 2048 × 2 × 4096 × (34 + 80) B


def test_korthikanti_activations_with_fused_attention(catalog: Catalog) -> None:
    """Korthikanti et al. without the 5·a·s/h score term (FlashAttention/SDPA keep no s×s
    matrix): 34·s·b·h bytes per layer — matched within 2–12 % by measured-memory."""
    shape = preset(catalog, "llama-2-7b")
    assert catalog.policy.fused_attention.value == 1
    s, b = 4096, 1
    comps = components(MemoryRequest(shape=shape, method="full", seq_len=s, micro_batch=b),
                       catalog.policy, checkpointing=False)
    assert comps["activations"].value == pytest.approx(
        shape.layers * 34 * s * b * shape.hidden / GB, abs=1e-4)


@pytest.mark.parametrize("fused", [1, 0])
def test_checkpointing_keeps_layer_inputs_plus_one_layer(catalog: Catalog, fused: int) -> None:
    """Korthikanti et al. §4 (full recomputation): only each layer's 2·s·b·h-byte input is
    kept, plus the activations of the one layer being recomputed."""
    policy = with_constants(catalog.policy, fused_attention=fused)
    shape = preset(catalog, "llama-2-13b")
    s, b, h, a, layers = 1024, 4, shape.hidden, shape.heads, shape.layers
    comps = components(MemoryRequest(shape=shape, method="lora", seq_len=s, micro_batch=b),
                       policy, checkpointing=True)
    one_layer = s * b * h * (34 + (0 if fused else 5 * a * s / h))
    assert comps["activations"].value == pytest.approx(
        (layers * 2 * s * b * h + one_layer) / GB, abs=1e-4)


def test_logits_are_12_bytes_per_token_per_vocab_entry(catalog: Catalog) -> None:
    """measured-memory: logits and loss add 10–12·s·V bytes (we take 12)."""
    shape = preset(catalog, "llama-2-7b")
    comps = components(MemoryRequest(shape=shape, method="full", seq_len=2048, micro_batch=3),
                       catalog.policy, checkpointing=False)
    assert comps["logits"].value == pytest.approx(12 * 2048 * 3 * 32000 / GB, abs=1e-4)


# ------------------------------------------------------------------ LoRA / QLoRA / inference


def test_qlora_65b_fits_one_48gb_gpu(catalog: Catalog) -> None:
    """QLoRA (Dettmers et al., arXiv 2305.14314, abstract): LLaMA 65B fine-tunes on a single
    48 GB GPU (sequence 512 in their runs) — but not on a 24 GB one."""
    req = MemoryRequest(shape=preset(catalog, "llama-1-65b"), method="qlora", seq_len=512)
    assert gpus_needed(req, catalog.gpu("l40s"), catalog.policy) == 1
    assert gpus_needed(req, catalog.gpu("rtx-6000-ada"), catalog.policy) == 1
    assert gpus_needed(req, catalog.gpu("rtx-4090"), catalog.policy) == 2
    total = estimate_memory(req, catalog.policy).total_gib
    assert 30 < total <= 48 * 0.95


def test_qlora_nf4_weights_are_0516_bytes_per_param(catalog: Catalog) -> None:
    """QLoRA §3: NF4 (4 bits) with double quantisation (0.127 bits/param of constants) is
    4.127 / 8 ≈ 0.516 byte/param; embeddings and the output head stay 16-bit."""
    shape = preset(catalog, "llama-1-65b")
    assert catalog.policy.nf4_bytes_per_param.value == pytest.approx(4.127 / 8, abs=1e-3)
    comps = components(MemoryRequest(shape=shape, method="qlora", seq_len=512),
                       catalog.policy, checkpointing=False)
    emb = 2 * 32000 * 8192
    expected = ((65.2e9 - emb) * 0.516 + emb * 2) / GB
    assert comps["weights"].value == pytest.approx(expected, abs=1e-4)
    assert 0.516 < comps["weights"].value * GB / shape.params < 0.55


def test_lora_peak_is_two_bytes_per_param_plus_activations(catalog: Catalog) -> None:
    """measured-memory: LoRA on a bf16 frozen base peaks at ≈ 2·P + activations; adapters
    with their grads and Adam states are small next to it."""
    shape = preset(catalog, "llama-2-7b")
    est = mem(catalog, shape, "lora", seq_len=1024)
    assert est.binding_phase == "forward_backward"
    assert est.breakdown["weights"] == pytest.approx(2 * shape.params / GB, abs=0.01)
    base = 2 * shape.params / GB + est.breakdown["activations"] + est.breakdown["logits"]
    assert base < est.total_gib < base * 1.15
    assert est.breakdown["adapters"] < 0.05 * est.breakdown["weights"]


def test_inference_is_two_bytes_per_param_plus_kv_cache(catalog: Catalog) -> None:
    """measured-memory: bf16 inference 2.0–2.5 bytes/param; the KV cache is
    2 (K and V) × L × s × b × kv_heads × head_dim × 2 bytes."""
    shape = preset(catalog, "llama-2-7b")
    est = mem(catalog, shape, "inference", seq_len=4096, micro_batch=2, checkpointing=None)
    kv = 2 * 32 * 4096 * 2 * 32 * 128 * 2 / GB
    weights = 2 * 6.74e9 / GB
    assert est.breakdown == pytest.approx(
        {"weights": round(weights, 2), "kv_cache": round(kv, 2), "framework": 1.0}, abs=0.01)
    assert est.total_gib == pytest.approx(weights + kv + 1.0, abs=0.01)
    assert est.gradient_checkpointing is False


# ------------------------------------------------------------------ sharding and GPU counts


@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_sharding_divides_model_states_by_n(catalog: Catalog, gpus: int) -> None:
    """ZeRO-3 (arXiv 1910.02054 §5.3, P_os+g+p): every model state is partitioned over N data
    parallel GPUs; activations, logits and framework overhead stay whole per GPU, and each
    GPU also holds the gathered layer and the prefetched next one (FSDP limit_all_gathers)."""
    shape = preset(catalog, "llama-2-13b")
    one = mem(catalog, shape, "full", seq_len=4096)
    many = mem(catalog, shape, "full", seq_len=4096, gpus=gpus)
    assert many.components == one.components  # whole-job figures; the split is per GPU
    fb = many.phases["forward_backward"]
    states = sum(one.components[n].value for n in ("weights", "master_weights",
                                                     "optimizer_states"))
    whole = sum(one.components[n].value for n in ("activations", "logits", "framework",
                                                   "sharding_buffers"))
    assert fb == pytest.approx(states / gpus + whole, abs=0.01)
    assert "sharding_buffers" in many.breakdown and "sharding_buffers" not in one.breakdown
    assert many.breakdown["optimizer_states"] == pytest.approx(
        one.components["optimizer_states"].value / gpus, abs=0.01)


@pytest.mark.parametrize(
    ("model", "method", "gpu"),
    [("llama-2-70b", "full", "a100-80gb"), ("llama-2-13b", "full", "rtx-4090"),
     ("llama-3.1-405b", "qlora", "h100-sxm"), ("llama-3.1-70b", "lora", "l40s")],
)
def test_gpus_needed_is_the_fewest_that_fit(catalog: Catalog, model: str, method: Method,
                                            gpu: str) -> None:
    """gpus_needed returns N such that N GPUs hold the job and N − 1 do not."""
    shape = preset(catalog, model)
    card = catalog.gpu(gpu)
    req = MemoryRequest(shape=shape, method=method, seq_len=2048, checkpointing=True)
    n = gpus_needed(req, card, catalog.policy)
    assert n is not None and n > 1
    cap = usable_gib(card, catalog.policy)
    assert estimate_memory(req, catalog.policy, n).total_gib <= cap + 0.01
    assert estimate_memory(req, catalog.policy, n - 1).total_gib > cap


def test_gpus_needed_is_none_when_per_gpu_parts_alone_overflow(catalog: Catalog) -> None:
    """Activations do not shard: 405B full training at 128k tokens cannot fit any count of T4s."""
    req = MemoryRequest(shape=preset(catalog, "llama-3.1-405b"), method="full",
                        seq_len=131072, checkpointing=False)
    assert gpus_needed(req, catalog.gpu("t4"), catalog.policy) is None


def test_auto_checkpointing_count_is_the_smaller(catalog: Catalog) -> None:
    """With checkpointing on auto, the count is the smaller of with and without it."""
    shape = preset(catalog, "llama-2-13b")
    counts = {
        ckpt: gpus_needed(MemoryRequest(shape=shape, method="full", seq_len=8192,
                                        checkpointing=ckpt), catalog.gpu("a100-80gb"),
                          catalog.policy)
        for ckpt in (None, True, False)
    }
    with_ckpt, without = counts[True], counts[False]
    assert with_ckpt is not None and without is not None
    assert with_ckpt < without
    assert counts[None] == counts[True]


# ------------------------------------------------------------------ shapes for bare sizes


def test_bare_8b_maps_to_the_llama_3_8b_shape(catalog: Catalog) -> None:
    """A bare size takes the shape of the nearest model of the policy's family (Llama 3)."""
    shape = shape_for_params(8.03, catalog)
    ref = preset(catalog, "llama-3.1-8b")
    assert (shape.layers, shape.hidden, shape.heads, shape.kv_heads, shape.vocab) == (
        ref.layers, ref.hidden, ref.heads, ref.kv_heads, ref.vocab)


def test_bare_size_gets_a_vocabulary_typical_of_its_size(catalog: Catalog) -> None:
    """A bare 1.2B once borrowed Gemma 2's 256k vocabulary; it takes Llama 3.2 1B's 128k."""
    shape = shape_for_params(1.2, catalog)
    assert shape.derived_from == "llama-3.2-1b" or shape.label.startswith("1.2B")
    assert shape.vocab == 128256 and shape.tied_embeddings


def test_bare_100b_is_a_scaled_shape(catalog: Catalog) -> None:
    """A bare 100B has no preset: depth and width grow by the cube root of the size ratio."""
    shape = shape_for_params(100, catalog)
    assert shape.params_b == 100 and shape.compute_params_b == 100
    assert shape.derived_from is not None
    base = catalog.model(shape.derived_from)
    assert shape.label == f"100B (shape scaled from {base.id})"
    assert shape.layers > base.layers
    assert shape.hidden >= base.hidden
    assert shape.hidden // shape.heads == base.hidden // base.heads
    assert shape.heads % shape.kv_heads == 0
    assert shape.heads // shape.kv_heads == base.heads // base.kv_heads
    # a plausible dense transformer: ~12·L·h² parameters within a factor 1.5 of the size
    assert 1 / 1.5 < 12 * shape.layers * shape.hidden**2 / 100e9 < 1.5


def test_scaled_shape_keeps_width_for_a_slightly_smaller_model(catalog: Catalog) -> None:
    """A size a little below a GQA preset keeps (nearly) its width: the head count rounds to
    the group size instead of flooring (which once halved a 0.4B model's heads)."""
    shape = shape_for_params(1.0, catalog)
    base = catalog.model("llama-3.2-1b")
    assert shape.derived_from == base.id
    group = base.heads // base.kv_heads
    assert abs(shape.heads - base.heads) <= group and shape.heads % group == 0


# ------------------------------------------------------------------ training compute


def test_chinchilla_default_tokens_and_kaplan_flops(catalog: Catalog) -> None:
    """Chinchilla (Hoffmann et al., arXiv 2203.15556): ~20 tokens per parameter is
    compute-optimal; training FLOPs ≈ 6·N·D (Kaplan et al., arXiv 2001.08361, §2.1)."""
    shape = preset(catalog, "llama-2-7b")
    est = estimate_training(shape, catalog.gpu("a100-80gb"), catalog.policy)
    assert est.tokens_from == "chinchilla"
    assert est.tokens_b == pytest.approx(20 * 6.74)
    assert est.flops == pytest.approx(6 * 6.74e9 * 20 * 6.74e9, rel=1e-3)


def test_lora_counts_four_flops_per_param_token(catalog: Catalog) -> None:
    """LoRA/QLoRA skip weight gradients of the frozen base: 2 forward + 2 backward FLOPs."""
    shape = preset(catalog, "llama-2-13b")
    est = estimate_training(shape, catalog.gpu("a100-80gb"), catalog.policy, method="lora",
                            tokens_b=1)
    assert est.tokens_from == "answer"
    assert est.flops == pytest.approx(4 * 13e9 * 1e9, rel=1e-3)


def test_moe_compute_counts_active_parameters(catalog: Catalog) -> None:
    """Mixtral 8x7B touches 12.9B of its 46.7B parameters per token; 6·N·D counts those."""
    shape = preset(catalog, "mixtral-8x7b")
    est = estimate_training(shape, catalog.gpu("h100-sxm"), catalog.policy, tokens_b=100)
    assert est.flops == pytest.approx(6 * 12.9e9 * 100e9, rel=1e-3)


@pytest.mark.parametrize(
    ("model", "tokens_b", "gpu", "published_gpu_hours"),
    [
        ("llama-2-7b", 2000, "a100-80gb", 184_320),
        ("llama-2-70b", 2000, "a100-80gb", 1_720_320),
        ("llama-3.1-405b", 15_600, "h100-sxm", 30_840_000),
    ],
)
def test_gpu_hours_match_published_runs(catalog: Catalog, model: str, tokens_b: float, gpu: str,
                                        published_gpu_hours: float) -> None:
    """Llama 2 (Touvron et al., arXiv 2307.09288, Table 2): 7B 184,320 and 70B 1,720,320
    A100-80GB GPU-hours for 2T tokens. Llama 3 (arXiv 2407.21783; model card): 405B, 15.6T
    tokens, 30.84M H100-80GB GPU-hours. Our expected figure lands within a factor 1.5."""
    est = estimate_training(preset(catalog, model), catalog.gpu(gpu), catalog.policy,
                            tokens_b=tokens_b)
    assert est.gpu_hours.low <= est.gpu_hours.expected <= est.gpu_hours.high
    ratio = est.gpu_hours.expected / published_gpu_hours
    assert 1 / 1.5 < ratio < 1.5
    assert est.gpu_hours.low <= published_gpu_hours * 1.2


def test_training_days_and_cost(catalog: Catalog) -> None:
    """Days = GPU-hours ÷ GPUs ÷ 24; cost = GPU-hours × $/GPU-hour × (1 + hidden overhead)."""
    shape = preset(catalog, "llama-2-7b")
    est = estimate_training(shape, catalog.gpu("a100-80gb"), catalog.policy, tokens_b=100,
                            gpus=64, prices_usd_per_gpu_hour=[1.0, 2.0, 4.0])
    assert est.days.expected == pytest.approx(est.gpu_hours.expected / 64 / 24, abs=0.01)
    assert est.price_usd_per_gpu_hour is not None and est.cost_usd is not None
    assert est.price_usd_per_gpu_hour.expected == 2.0
    assert est.cost_usd.expected == pytest.approx(est.gpu_hours.expected * 2.0 * 1.15, abs=1)
    assert est.cost_usd.low == pytest.approx(est.gpu_hours.low * 1.0 * 1.10, abs=1)
    assert est.cost_usd.high == pytest.approx(est.gpu_hours.high * 4.0 * 1.20, abs=1)


def test_checkpointing_slows_training(catalog: Catalog) -> None:
    """mem.grad-checkpointing: recomputation makes training 20–30 % longer (we take 25 %)."""
    shape, gpu = preset(catalog, "llama-2-7b"), catalog.gpu("h100-sxm")
    plain = estimate_training(shape, gpu, catalog.policy, tokens_b=10)
    ckpt = estimate_training(shape, gpu, catalog.policy, tokens_b=10, checkpointing=True)
    assert ckpt.gpu_hours.expected == pytest.approx(plain.gpu_hours.expected * 1.25, rel=1e-3)


# ------------------------------------------------------------------ cost


def test_electricity_of_a_450w_card_in_its_desktop(catalog: Catalog) -> None:
    """price.electricity: a 450 W card at $0.12/kWh; with the desktop around it and cooling:
    (450 + platform W) / 1000 × cooling factor × $/kWh."""
    gpu = catalog.gpu("rtx-4090")
    platform, boxes = platform_for(gpu, 1, catalog.platforms) or (None, 0)
    assert platform is not None and platform.id == "consumer-box-2" and boxes == 1
    run = running_cost_per_hour(gpu, 1, platform, boxes, 0.12, catalog.policy)
    factor = catalog.policy.cooling_power_factor.value
    assert run.value == pytest.approx((450 + platform.watts) / 1000 * factor * 0.12, abs=1e-4)


def test_a_node_draws_what_its_cards_generation_draws(catalog: Catalog) -> None:
    """The HGX host around eight A100s draws less than around eight H100s, and around eight
    B200s more (the DGX systems' maximum less their GPUs' TDP): the power of a busy hour
    follows the card's generation, not one figure for every SXM node."""
    policy = catalog.policy
    per_hour = {}
    for card in ("a100-80gb", "h100-sxm", "b200"):
        gpu = catalog.gpu(card)
        platform, boxes = platform_for(gpu, 8, catalog.platforms) or (None, 0)
        assert platform is not None and platform.id == "hgx-8" and boxes == 1
        run = running_cost_per_hour(gpu, 8, platform, boxes, 0.40, policy)
        per_hour[card] = run.inputs["platform_w"]
        assert run.value == pytest.approx(
            (gpu.tdp_w * 8 + run.inputs["platform_w"]) / 1000
            * policy.cooling_power_factor.value * 0.40, abs=1e-4)
    assert per_hour == {"a100-80gb": 3300, "h100-sxm": 4600, "b200": 6300}


def test_platform_is_the_smallest_box_of_the_cards_form(catalog: Catalog) -> None:
    """Consumer cards: a 2-card desktop, then a 4-card build; SXM modules: whole HGX nodes,
    several of them (InfiniBand) beyond eight GPUs."""
    rtx, h100 = catalog.gpu("rtx-4090"), catalog.gpu("h100-sxm")
    assert [platform_for(rtx, n, catalog.platforms)[0].id for n in (1, 2, 3, 4)] == [
        "consumer-box-2", "consumer-box-2", "consumer-box-4", "consumer-box-4"]
    assert platform_for(rtx, 5, catalog.platforms) is None
    home = platform_for(h100, 16, catalog.platforms)
    assert home is not None and home[0].id == "hgx-8" and home[1] == 2


def test_purchase_counts_cards_platforms_and_infiniband(catalog: Catalog) -> None:
    h100 = catalog.gpu("h100-sxm")
    platform, nodes = platform_for(h100, 16, catalog.platforms) or (None, 0)
    assert platform is not None
    buy = purchase_cost(h100, 16, platform, nodes, catalog.policy)
    assert h100.purchase is not None
    expected = (h100.purchase.mid_usd * 16 + platform.price.mid_usd * 2
                + catalog.policy.infiniband_per_node_usd.value * 2)
    assert buy.value == pytest.approx(expected)
    single = purchase_cost(h100, 8, platform, 1, catalog.policy)
    assert single.inputs["network_usd"] == 0.0


def test_owning_a_year_writes_off_less_resale_plus_upkeep_and_power(catalog: Catalog) -> None:
    """(purchase − resale of the cards) ÷ years + purchase × maintenance + power × busy hours."""
    rtx = catalog.gpu("rtx-4090")
    platform, boxes = platform_for(rtx, 2, catalog.platforms) or (None, 0)
    assert platform is not None and rtx.purchase is not None
    policy = catalog.policy
    buy = purchase_cost(rtx, 2, platform, boxes, policy)
    fixed = owning_fixed_per_year(buy, rtx, policy)
    resale = policy.resale_fraction["consumer"].value * rtx.purchase.mid_usd * 2
    years, upkeep = policy.amortisation_years.value, policy.maintenance_fraction_per_year.value
    assert fixed.value == pytest.approx((buy.value - resale) / years + buy.value * upkeep,
                                        abs=0.01)
    run = running_cost_per_hour(rtx, 2, platform, boxes, 0.12, policy)
    assert owning_cost(fixed, run, 2000).value == pytest.approx(
        fixed.value + run.value * 2000, abs=0.01)


def test_renting_pays_the_hours_billed_with_the_hidden_costs(catalog: Catalog) -> None:
    """The year's rent: the configuration's $/hour for the hours billed, hidden costs on top;
    a GPU-only price's VM is part of the hourly rent."""
    policy = catalog.policy
    over = policy.hidden_cloud_overhead.expected
    on_demand = renting_cost(2.0 * 8, 100, "on-demand", policy)
    assert on_demand.value == pytest.approx(2.0 * 8 * 100 * (1 + over), abs=0.01)
    reserved = renting_cost(2.0 * 8, 8760, "reserved", policy)
    assert reserved.value == pytest.approx(2.0 * 8 * 8760 * (1 + over), abs=0.01)
    assert "committed term" in reserved.formula and "spot" not in on_demand.formula
    assert "expected spot rework" in renting_cost(1.0, 1, "spot", policy).formula
    hourly = hourly_rent_usd(0.56, 1, 0.15, 1)
    assert renting_cost(hourly, 100, "on-demand", policy).value == pytest.approx(
        (0.56 + 0.15) * 100 * (1 + over), abs=0.01)


def test_an_all_in_gpu_hour_shares_the_vm_between_the_instance_s_gpus() -> None:
    """One home for a rented GPU-hour: an 8-GPU GPU-only quote at $2 with a $8 VM is $3."""
    assert all_in_usd_per_gpu_hour(2.0, 8, 8.0, 1) == pytest.approx(3.0)
    assert all_in_usd_per_gpu_hour(2.0, 16, 8.0, 2) == pytest.approx(3.0)
    assert all_in_usd_per_gpu_hour(2.0, 1, 0.0, 1) == pytest.approx(2.0)


def test_break_even_by_hand() -> None:
    """Owning $1,000 a year fixed + $0.10 per unit vs renting $0.60 per unit: 2,000 units."""
    line = break_even(CostLine(1000, 0.10), CostLine(0.0, 0.60), unit="h", sources=["s"],
                      own_label="own", rent_label="rent")
    assert line is not None and line.value == pytest.approx(2000)


def test_break_even_is_none_when_owning_never_catches_up() -> None:
    assert break_even(CostLine(1000, 0.60), CostLine(0.0, 0.10), unit="h", sources=["s"],
                      own_label="o", rent_label="r") is None
    assert break_even(CostLine(0.0, 0.10), CostLine(5000, 0.60), unit="h", sources=["s"],
                      own_label="o", rent_label="r") is None


def test_purchase_of_an_unbuyable_gpu_is_refused(catalog: Catalog) -> None:
    a800 = catalog.gpu("a800-80gb")
    platform = catalog.platforms[0]
    with pytest.raises(CatalogError) as exc:
        purchase_cost(a800, 1, platform, 1, catalog.policy)
    assert str(exc.value) == "GPU 'a800-80gb' has no purchase price in the catalog"


def test_api_cost_per_month_by_hand(catalog: Catalog) -> None:
    """knowledge.md decide.api: Gemini Flash-Lite $0.075/M input, $0.30/M output (2025);
    1.2M messages/day × 150 tokens ≈ 5,400M tokens/month; 25 % of tokens are output."""
    api = next(a for a in catalog.apis if a.id == "gemini-flash-lite")
    tokens_m = 1.2e6 * 150 * 30 / 1e6
    expected = tokens_m * (0.075 * 0.75 + 0.30 * 0.25)
    bill = api_cost_per_month(tokens_m, api, catalog.policy)
    assert bill.value == pytest.approx(expected)
    assert bill.value == pytest.approx(708.75)


# ------------------------------------------------------------------ properties

_methods = st.sampled_from(["full", "lora", "qlora", "inference", "pretrain"])


@settings(max_examples=60, deadline=None)
@given(
    small=st.floats(min_value=0.1, max_value=1000),
    growth=st.floats(min_value=1.0, max_value=1.5),
    method=_methods,
    seq_len=st.sampled_from([256, 2048, 8192]),
    micro_batch=st.integers(1, 8),
    checkpointing=st.booleans(),
)
def test_larger_model_never_needs_less_memory(
    catalog: Catalog, small: float, growth: float, method: Method, seq_len: int,
    micro_batch: int, checkpointing: bool,
) -> None:
    """Same method, sequence, batch and checkpointing, same architecture family: more
    parameters never lower the peak. (Across families the shape changes — see the report.)"""
    a = shape_for_params(small, catalog)
    b = shape_for_params(small * growth, catalog)
    assume((a.derived_from or a.label) == (b.derived_from or b.label))
    ma = mem(catalog, a, method, seq_len=seq_len, micro_batch=micro_batch,
             checkpointing=checkpointing)
    mb = mem(catalog, b, method, seq_len=seq_len, micro_batch=micro_batch,
             checkpointing=checkpointing)
    assert mb.total_gib >= ma.total_gib


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(["llama-2-7b", "llama-3.1-70b", "qwen2.5-0.5b", "mixtral-8x7b"]),
    method=_methods,
    seq_len=st.sampled_from([512, 4096, 32768]),
    checkpointing=st.sampled_from([None, True, False]),
    gpus=st.integers(1, 63),
)
def test_more_gpus_never_raise_per_gpu_memory(
    catalog: Catalog, model: str, method: Method, seq_len: int, checkpointing: bool | None,
    gpus: int,
) -> None:
    """Sharding over one more GPU never raises the per-GPU peak (also with auto checkpointing)."""
    shape = preset(catalog, model)
    fewer = mem(catalog, shape, method, seq_len=seq_len, checkpointing=checkpointing, gpus=gpus)
    more = mem(catalog, shape, method, seq_len=seq_len, checkpointing=checkpointing,
               gpus=gpus + 1)
    assert more.total_gib <= fewer.total_gib


def test_policy_constants_are_constants(catalog: Catalog) -> None:
    """with_constants only swaps values: the bundled policy object is left untouched."""
    changed = with_constants(catalog.policy, fused_attention=0)
    assert isinstance(changed.fused_attention, Constant)
    assert changed.fused_attention.value == 0
    assert catalog.policy.fused_attention.value == 1


@pytest.mark.parametrize(("gpu", "owned", "one_place"), [
    ("rtx-4090", 8, 4),      # no box takes eight GeForce cards: a job runs on one of four
    ("rtx-4090", 2, 2),
    ("h100-sxm", 16, 16),    # HGX nodes join into a cluster
    ("a100-80gb", 2, 2),
])
def test_owned_cards_run_a_job_in_one_place(catalog: Catalog, gpu: str, owned: int,
                                            one_place: int) -> None:
    from engine.estimates.cost import most_in_one_place

    assert most_in_one_place(catalog.gpu(gpu), owned, catalog.platforms) == one_place
