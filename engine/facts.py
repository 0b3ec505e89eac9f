"""From answers + catalog + estimators to one flat dict of facts, each derived one traced.

Request facts are every answer plus derived figures (VRAM per method, consumer fit, the
cheapest local and cloud configurations, break-even hours, training and API costs, the
team's plan). Hardware candidates are built later (``engine.candidates``), once the request
rules have decided the method and pricing they are sized and priced for.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.answers import Answers
from engine.catalog.load import Catalog
from engine.catalog.models import Gpu, Offer
from engine.estimates.cost import (
    api_cost_per_month,
    break_even_hours,
    cloud_cost,
    local_tco,
    purchase_cost,
)
from engine.estimates.memory import (
    MemoryEstimate,
    MemoryRequest,
    Method,
    estimate_memory,
    gpus_needed,
)
from engine.estimates.shape import Shape, resolve_shape
from engine.estimates.trace import Figure, figure, tidy
from engine.estimates.training import (
    TrainingEstimate,
    TrainMethod,
    default_tokens_b,
    estimate_training,
)

HOURS_PER_MONTH = 730
REFERENCE_DATACENTER_GPU = "h100-sxm"


@dataclass
class Facts:
    """The flat fact dict with a trace per derived figure."""

    values: dict[str, Any]
    traces: dict[str, Figure] = field(default_factory=dict)
    memory: dict[str, MemoryEstimate] = field(default_factory=dict)
    shape: Shape | None = None
    training: TrainingEstimate | None = None

    def put(self, name: str, value: Any, trace: Figure | None = None) -> None:
        """Set a fact (floats tidied so they never need exponent form).

        A float that overflowed (e.g. break-even years for 1e-308 busy hours a year) is
        unknown (None), as if it could not be computed: neither durable_rules nor JSON can
        carry Infinity.
        """
        if isinstance(value, float) and not math.isfinite(value):
            self.values[name] = None
            return
        self.values[name] = tidy(value, 4) if isinstance(value, float) else value
        if trace is not None:
            self.traces[name] = trace


def memory_request(answers: Answers, shape: Shape, method: Method) -> MemoryRequest:
    """The memory question for one method, from the team's batch geometry."""
    ckpt = answers.gradient_checkpointing
    return MemoryRequest(shape=shape, method=method, seq_len=answers.seq_len,
                         micro_batch=answers.micro_batch,
                         checkpointing=None if ckpt == "auto" else bool(ckpt))


def sizing_method(answers: Answers, practical: dict[str, bool] | None = None) -> Method:
    """The method the pre-decision VRAM facts are sized for.

    Pretraining with a reason to (decide.scratch) sizes as ``pretrain``; without one the
    advice is to fine-tune, so it sizes like ``auto`` fine-tuning. A requested fine-tuning
    method sizes as itself. With ``auto``: the
    method the method rules pick when nothing else intervenes (rules/method.yaml) - the
    first of full, LoRA, QLoRA that fits a practical consumer box (policy
    ``practical_consumer_gpus_per_box`` cards), else LoRA on datacenter GPUs.
    """
    if answers.workload == "pretrain" and scratch_reasons(answers):
        return "pretrain"
    if answers.workload == "fine-tune" and answers.method != "auto":
        return answers.method
    fits = practical or {}
    return next((m for m in ("full", "lora", "qlora") if fits.get(m)), "lora")


def scratch_reasons(answers: Answers) -> int:
    """How many of the four reasons to train from scratch the team gives (decide.scratch)."""
    return sum((answers.proprietary_data, answers.specialised_domain,
                answers.competitive_moat, answers.regulated_control))


def build_facts(answers: Answers, catalog: Catalog) -> Facts:
    """Every request fact for ``answers``."""
    facts = Facts(values=_answer_values(answers))
    shape = resolve_shape(catalog, model=answers.model, params_b=answers.model_params_b)
    facts.shape = shape
    facts.put("params_b", shape.params_b)
    facts.put("model_name", shape.label)
    _memory_facts(facts, answers, catalog, shape)
    local = _local_facts(facts, answers, catalog, shape)
    cloud = _cloud_facts(facts, answers, catalog, shape)
    _break_even_facts(facts, answers, catalog, local, cloud)
    _training_facts(facts, answers, catalog, shape, local, cloud)
    _api_facts(facts, answers, catalog, shape)
    _plan_facts(facts, answers, catalog, shape)
    facts.put("scratch_reasons", scratch_reasons(answers))
    facts.put("fine_tune_advised",
              answers.workload == "fine-tune" or scratch_reasons(answers) == 0)
    facts.put("hours_share_of_year",
              answers.hours_per_year / catalog.policy.hours_per_year_max.value)
    facts.put("newest_release_year", max(g.release_year for g in catalog.gpus.values()))
    facts.put("max_consumer_gpus_per_box", int(catalog.policy.max_consumer_gpus_per_box.value))
    return facts


def _sizing(facts: Facts) -> Method:
    return facts.values["sizing_method"]  # type: ignore[no-any-return]


def _answer_values(answers: Answers) -> dict[str, Any]:
    values = answers.model_dump(mode="json")
    ckpt = values["gradient_checkpointing"]
    values["gradient_checkpointing"] = ckpt if isinstance(ckpt, str) else str(ckpt).lower()
    return values


def consumer_gpus(catalog: Catalog) -> list[Gpu]:
    """Buyable consumer cards."""
    return [g for g in catalog.gpus.values() if g.form == "consumer" and g.buyable]


def _memory_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape) -> None:
    policy = catalog.policy
    largest = max(consumer_gpus(catalog), key=lambda g: (g.vram_gb, g.id))
    box = int(policy.max_consumer_gpus_per_box.value)
    facts.put("largest_consumer_vram_gb", largest.vram_gb)
    methods: tuple[Method, ...] = ("full", "lora", "qlora", "pretrain", "inference")
    for method in methods:
        req = memory_request(answers, shape, method)
        estimate = memory_of(catalog, req)
        facts.memory[method] = estimate
        facts.put(f"vram_{method}_gb", estimate.total_gb,
                  catalog.derived(("memory_trace", req), _memory_trace, estimate))
    for method in methods[:3]:
        n = needed_on(catalog, memory_request(answers, shape, method), largest)
        facts.put(f"consumer_gpus_needed_{method}", n)
        facts.put(f"fits_consumer_{method}", n is not None and n <= box)
    practical = int(policy.practical_consumer_gpus_per_box.value)
    sizing = sizing_method(answers, {
        m: (facts.values[f"consumer_gpus_needed_{m}"] or practical + 1) <= practical
        for m in ("full", "lora", "qlora")})
    facts.put("sizing_method", sizing)
    key = "full" if sizing == "pretrain" else sizing
    facts.put("vram_needed_gb", facts.values[f"vram_{sizing}_gb"],
              facts.traces[f"vram_{sizing}_gb"])
    facts.put("fits_consumer_gpu", facts.values[f"fits_consumer_{key}"])
    facts.put("consumer_gpus_needed", facts.values[f"consumer_gpus_needed_{key}"])
    facts.put("fits_single_consumer_gpu", facts.values[f"consumer_gpus_needed_{key}"] == 1)
    reference = catalog.gpus.get(REFERENCE_DATACENTER_GPU) or max(
        catalog.gpus.values(), key=lambda g: g.vram_gb)
    facts.put("datacenter_gpus_needed",
              gpus_needed(memory_request(answers, shape, sizing), reference, policy))
    lora = facts.values["vram_lora_gb"]
    facts.put("full_to_lora_vram_ratio", facts.values["vram_full_gb"] / lora if lora else None)
    est = facts.memory[sizing]
    acts = est.breakdown.get("activations", 0.0) + est.breakdown.get("logits", 0.0)
    facts.put("activation_share", acts / est.total_gb if est.total_gb else 0.0)


def _memory_trace(estimate: MemoryEstimate) -> Figure:
    return figure(
        estimate.total_gb, "GB", estimate.formula,
        [s for c in estimate.components.values() for s in c.sources],
        method=estimate.method, seq_len=estimate.seq_len, micro_batch=estimate.micro_batch,
        gradient_checkpointing=estimate.gradient_checkpointing,
        **{k: v for k, v in estimate.breakdown.items()},
    )


@dataclass(frozen=True)
class LocalOption:
    """The cheapest local configuration that holds the job."""

    gpu: Gpu
    count: int
    purchase: Figure


@dataclass(frozen=True)
class CloudOption:
    """The cheapest allowed cloud configuration that holds the job."""

    offer: Offer
    gpu: Gpu
    count: int
    usd_per_hour: float


def local_configs(catalog: Catalog, req: MemoryRequest) -> Iterable[tuple[Gpu, int]]:
    """Buyable GPUs with the fewest cards that hold the job (consumer boxes limited)."""
    return catalog.derived(("local_configs", req), _local_configs, catalog, req)


def _local_configs(catalog: Catalog, req: MemoryRequest) -> tuple[tuple[Gpu, int], ...]:
    box = catalog.policy.max_consumer_gpus_per_box.value
    out = []
    for gpu in catalog.gpus.values():
        if not gpu.buyable:
            continue
        n = needed_on(catalog, req, gpu)
        if n is None or (gpu.form == "consumer" and n > box):
            continue
        out.append((gpu, n))
    return tuple(out)


def needed_on(catalog: Catalog, req: MemoryRequest, gpu: Gpu) -> int | None:
    """:func:`gpus_needed` with the catalog's policy, remembered per catalog."""
    return catalog.derived(("gpus_needed", req, gpu.id), gpus_needed, req, gpu, catalog.policy)


def memory_of(catalog: Catalog, req: MemoryRequest) -> MemoryEstimate:
    """:func:`estimate_memory` on one GPU with the catalog's policy, remembered per catalog."""
    return catalog.derived(("estimate_memory", req), estimate_memory, req, catalog.policy, 1)


def purchase_of(catalog: Catalog, gpu: Gpu, count: int) -> Figure:
    """:func:`purchase_cost` with the catalog's policy, remembered per catalog."""
    return catalog.derived(("purchase_cost", gpu.id, count), purchase_cost, gpu, count,
                           catalog.policy)


def offer_allowed(offer: Offer, answers: Answers) -> bool:
    """Whether data residency lets the team use this offer."""
    if answers.data_residency == "on-premises":
        return False
    if answers.data_residency == "region":
        return any(r in answers.allowed_regions for r in offer.regions)
    return True


def cloud_count(offer: Offer, needed: int) -> int:
    """GPUs actually rented: whole instances for multi-GPU instance types."""
    per = offer.gpus_per_instance
    return needed if per == 1 else per * math.ceil(needed / per)


def cloud_configs(catalog: Catalog, req: MemoryRequest,
                  offers: Iterable[Offer]) -> Iterable[tuple[Offer, Gpu, int]]:
    """Offers with the GPU count that holds the job."""
    for offer in offers:
        gpu = catalog.gpus[offer.gpu]
        n = needed_on(catalog, req, gpu)
        if n is not None:
            yield offer, gpu, cloud_count(offer, n)


def cheapest_local(catalog: Catalog, req: MemoryRequest) -> LocalOption | None:
    """The local configuration with the lowest purchase price that holds ``req``."""
    return catalog.derived(("cheapest_local", req), _cheapest_local, catalog, req)


def _cheapest_local(catalog: Catalog, req: MemoryRequest) -> LocalOption | None:
    options = [
        LocalOption(gpu, n, purchase_of(catalog, gpu, n))
        for gpu, n in local_configs(catalog, req)
    ]
    return min(options, key=lambda o: (o.purchase.value, o.gpu.id)) if options else None


def _local_facts(facts: Facts, answers: Answers, catalog: Catalog,
                 shape: Shape) -> LocalOption | None:
    dev = cheapest_local(catalog, memory_request(answers, shape, "qlora"))
    if dev is not None and answers.workload == "fine-tune":
        facts.put("dev_gpu_name", dev.gpu.name)
        facts.put("dev_gpu_count", dev.count)
        facts.put("dev_purchase_usd", dev.purchase.value, dev.purchase)
    best = cheapest_local(catalog, memory_request(answers, shape, _sizing(facts)))
    if best is None:
        return None
    facts.put("local_gpu", best.gpu.id)
    facts.put("local_gpu_name", best.gpu.name)
    facts.put("local_gpu_count", best.count)
    facts.put("local_purchase_usd", best.purchase.value, best.purchase)
    tco = local_tco(best.gpu, best.count, answers.hours_per_year,
                    answers.electricity_usd_per_kwh, catalog.policy)
    facts.put("local_tco_usd_3y", tco.value, tco)
    return best


def _cloud_facts(facts: Facts, answers: Answers, catalog: Catalog,
                 shape: Shape) -> CloudOption | None:
    req = memory_request(answers, shape, _sizing(facts))
    everywhere = [
        CloudOption(offer, gpu, n, offer.on_demand_usd_per_gpu_hour * n)
        for offer, gpu, n in cloud_configs(catalog, req, catalog.offers)
    ]
    if everywhere:
        cheapest = min(o.usd_per_hour for o in everywhere)
        facts.put("cloud_usd_per_hour_anywhere", cheapest)
    options = [o for o in everywhere if offer_allowed(o.offer, answers)]
    if not options:
        return None
    best = min(options, key=lambda o: (o.usd_per_hour, o.offer.id))
    facts.put("residency_price_ratio", best.usd_per_hour / cheapest)
    facts.put("cloud_offer", best.offer.id)
    facts.put("cloud_gpu_name", best.gpu.name)
    facts.put("cloud_gpu_count", best.count)
    facts.put("cloud_usd_per_hour", best.usd_per_hour)
    year = cloud_cost(best.offer.on_demand_usd_per_gpu_hour, best.count, answers.hours_per_year,
                      catalog.policy)
    facts.put("cloud_cost_usd_year", year.value, year)
    facts.put("cloud_cost_usd_3y", year.value * catalog.policy.amortisation_years.value)
    return best


def _break_even_facts(facts: Facts, answers: Answers, catalog: Catalog,
                      local: LocalOption | None, cloud: CloudOption | None) -> None:
    if local is None or cloud is None:
        return
    be = break_even_hours(local.gpu, local.count, cloud.gpu,
                          cloud.offer.on_demand_usd_per_gpu_hour,
                          answers.electricity_usd_per_kwh, catalog.policy)
    if be is None:
        return
    years = catalog.policy.amortisation_years.value
    per_year = figure(
        be.value / years, "hours/year",
        "payback hours ÷ amortisation years: busy hours a year above which owning costs less "
        "than renting the same work over the hardware's life; payback hours = " + be.formula,
        be.sources, payback_hours=be.value, **be.inputs)
    facts.put("break_even_hours", round(per_year.value), per_year)
    facts.put("payback_hours", round(be.value))
    if answers.hours_per_year > 0:
        facts.put("break_even_years", be.value / answers.hours_per_year)


def _training_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape,
                    local: LocalOption | None, cloud: CloudOption | None) -> None:
    tokens = answers.training_tokens_b
    if tokens is None and answers.workload == "pretrain":
        tokens = default_tokens_b(shape, catalog.policy)
    if tokens is None:
        return
    facts.put("training_tokens_b_effective", tokens)
    method = _sizing(facts)
    train_method: TrainMethod = ("pretrain" if answers.workload == "pretrain"
                                 else "full" if method == "inference" else method)
    if cloud is not None:
        run = estimate_training(shape, cloud.gpu, catalog.policy, method=train_method,
                                tokens_b=tokens, gpus=cloud.count,
                                prices_usd_per_gpu_hour=[cloud.offer.on_demand_usd_per_gpu_hour])
        facts.training = run
        facts.put("training_gpu_hours", run.gpu_hours.expected, run.trace["gpu_hours"])
        if run.cost_usd is not None:
            facts.put("training_run_cost_usd", run.cost_usd.expected, run.trace.get("cost_usd"))
    if local is not None:
        run = estimate_training(shape, local.gpu, catalog.policy, method=train_method,
                                tokens_b=tokens, gpus=local.count)
        facts.put("training_days_on_local", run.days.expected, run.trace["gpu_hours"])


def _api_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape) -> None:
    volume = answers.api_tokens_per_month_m
    if volume is None or not catalog.apis:
        return
    api = next((a for a in catalog.apis if a.id == "api-typical"), catalog.apis[0])
    bill = api_cost_per_month(volume, api, catalog.policy)
    facts.put("api_cost_usd_month", bill.value, bill)
    req = memory_request(answers, shape, "inference")
    allowed = [o for o in catalog.offers if offer_allowed(o, answers)] or list(catalog.offers)
    serving = [
        (offer.on_demand_usd_per_gpu_hour * n, offer.id, offer, n)
        for offer, _, n in cloud_configs(catalog, req, allowed)
    ]
    if not serving:
        return
    _, _, offer, n = min(serving, key=lambda s: (s[0], s[1]))
    month = cloud_cost(offer.on_demand_usd_per_gpu_hour, n, HOURS_PER_MONTH, catalog.policy)
    facts.put("own_cost_usd_month", month.value, month)
    if month.value > 0:
        facts.put("api_to_own_cost_ratio", bill.value / month.value)


def _plan_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape) -> None:
    if answers.planned_gpu is None:
        return
    gpu = catalog.gpu(answers.planned_gpu)
    count = answers.planned_gpu_count
    req = memory_request(answers, shape, _sizing(facts))
    needed = gpus_needed(req, gpu, catalog.policy)
    total = gpu.vram_gb * count
    facts.put("planned_gpu_name", gpu.name)
    facts.put("planned_vram_gb", gpu.vram_gb)
    facts.put("planned_vram_total_gb", total)
    vram_needed = facts.values["vram_needed_gb"]
    facts.put("planned_vram_ratio", total / vram_needed if vram_needed else None)
    facts.put("planned_fits", needed is not None and needed <= count)
    facts.put("planned_form", gpu.form)
    facts.put("planned_nvlink", gpu.nvlink)
    facts.put("planned_bf16", gpu.bf16)
    facts.put("planned_tdp_w", gpu.tdp_w)
    facts.put("planned_total_tdp_w", gpu.tdp_w * count)
    facts.put("planned_pcie_gen", gpu.pcie_gen)
    facts.put("planned_release_year", gpu.release_year)


def durable_fact(values: dict[str, Any], names: Iterable[str] | None = None) -> dict[str, Any]:
    """The scalar, non-null facts durable_rules sees (lists and unknowns left out)."""
    keys = values if names is None else names
    out: dict[str, Any] = {}
    for key in keys:
        value = values.get(key)
        if value is None or isinstance(value, (list, tuple, dict)):
            continue
        out[key] = _representable(value) if type(value) is float else value
    return out


def _representable(value: float) -> float:
    """A finite float durable_rules can parse: never in exponent form.

    Answers are only range-checked (a budget of $0.000001 is valid) and ratios of them can be
    huge, but durable_rules cannot read ``1e-06`` or ``1e+16``. The rule checker admits only
    literals that are 0 or between 0.0001 and 10^15, so tiny values become 0 (as ``tidy``
    does for derived facts) and huge ones the largest value below 10^15; comparisons with
    any literal keep their outcome (except ``gt: 0`` for a tiny positive value).
    """
    if not math.isfinite(value) or value == 0:
        return value  # non-finite: left for the evaluator to refuse loudly
    if abs(value) < 1e-4:
        return 0.0
    if abs(value) >= 1e15:
        return math.copysign(999_999_999_999_999.0, value)
    return value
