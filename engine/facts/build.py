"""From answers + catalog + estimators to one flat dict of facts, each derived one traced.

Facts come in the order the decision needs them:

1. **Request facts** (:func:`build_facts`): every answer, the memory of each method on one GPU,
   how many consumer cards each method needs, the development box, the API comparison and
   what the team plans. The request rules decide approach and method from these.
2. **Sized facts** (:func:`size`): the decided method's memory, the year's work, the fit of
   the team's plan; then every candidate configuration is built for that sizing
   (``engine.decide.candidates``) and summarised (``engine.decide.sides``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from engine.answers.model import Answers
from engine.catalog.load import Catalog
from engine.catalog.models import Gpu, MethodGroup
from engine.estimates.cost import api_cost_per_month, platform_for, purchase_cost
from engine.estimates.figure import Figure, figure, tidy
from engine.estimates.memory import (
    MemoryEstimate,
    MemoryRequest,
    Method,
    memory_model,
)
from engine.estimates.shape import Shape, resolve_shape
from engine.estimates.throughput import effective_tflops
from engine.estimates.workload import Workload, workload
from engine.facts.spec import TRAINING_METHODS


@dataclass
class Facts:
    """The flat fact dict with a trace per derived figure."""

    values: dict[str, Any]
    traces: dict[str, Figure] = field(default_factory=dict)
    memory: dict[str, MemoryEstimate] = field(default_factory=dict)
    shape: Shape | None = None
    work: Workload | None = None

    def put(self, name: str, value: Any, trace: Figure | None = None) -> None:
        """Set a fact (floats tidied so they never need exponent form).

        A float that overflowed is unknown (None), as if it could not be computed: neither
        durable_rules nor JSON can carry Infinity.
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


def scratch_reasons(answers: Answers) -> int:
    """How many of the four reasons to train from scratch the team gives (decide.scratch)."""
    return sum((answers.proprietary_data, answers.specialised_domain,
                answers.competitive_moat, answers.regulated_control))


# -- 1. request facts ------------------------------------------------------------------------
def build_facts(answers: Answers, catalog: Catalog) -> Facts:
    """Every request fact for ``answers``: what the rules decide approach and method from."""
    facts = Facts(values=_answer_values(answers))
    shape = resolve_shape(catalog, model=answers.model, params_b=answers.model_params_b,
                          model_shape=answers.model_shape)
    facts.shape = shape
    facts.put("params_b", shape.params_b)
    facts.put("model_name", shape.label)
    facts.put("base_model_named", answers.model is not None)
    _method_memory_facts(facts, answers, catalog, shape)
    _dev_box_facts(facts, answers, catalog, shape)
    _api_facts(facts, answers, catalog, shape)
    _plan_facts(facts, answers, catalog)
    facts.put("scratch_reasons", scratch_reasons(answers))
    facts.put("fine_tune_advised",
              answers.workload == "fine-tune" or scratch_reasons(answers) == 0)
    facts.put("newest_release_year", max(g.release_year for g in catalog.gpus.values()))
    facts.put("max_consumer_gpus_per_box", int(catalog.policy.max_consumer_gpus_per_box.value))
    return facts


def _answer_values(answers: Answers) -> dict[str, Any]:
    values = answers.model_dump(mode="json")
    values.pop("model_shape", None)  # the shape is read into figures, not a fact itself
    ckpt = values["gradient_checkpointing"]
    values["gradient_checkpointing"] = ckpt if isinstance(ckpt, str) else str(ckpt).lower()
    return values


def consumer_gpus(catalog: Catalog) -> list[Gpu]:
    """Buyable consumer cards."""
    return [g for g in catalog.gpus.values() if g.form == "consumer" and g.buyable]


def _method_memory_facts(facts: Facts, answers: Answers, catalog: Catalog,
                         shape: Shape) -> None:
    """Per method: memory on one GPU, and the consumer cards it needs (what method rules read)."""
    policy = catalog.policy
    largest = max(consumer_gpus(catalog), key=lambda g: (g.vram_gib, g.id))
    box = int(policy.max_consumer_gpus_per_box.value)
    facts.put("largest_consumer_vram_gib", tidy(largest.vram_gib, 2))
    methods: tuple[Method, ...] = ("full", "lora", "qlora", "pretrain", "inference")
    for method in methods:
        req = memory_request(answers, shape, method)
        estimate = memory_of(catalog, req)
        facts.memory[method] = estimate
        facts.put(f"vram_{method}_gib", estimate.total_gib,
                  catalog.derived(("memory_trace", req), _memory_trace, estimate))
    for method in TRAINING_METHODS:
        n = needed_on(catalog, memory_request(answers, shape, method), largest)
        facts.put(f"consumer_gpus_needed_{method}", n)
        facts.put(f"fits_consumer_{method}", n is not None and n <= box)
    lora = facts.values["vram_lora_gib"]
    facts.put("full_to_lora_vram_ratio", facts.values["vram_full_gib"] / lora if lora else None)


def _memory_trace(estimate: MemoryEstimate) -> Figure:
    return figure(
        estimate.total_gib, "GiB", estimate.formula,
        [s for c in estimate.components.values() for s in c.sources],
        method=estimate.method, seq_len=estimate.seq_len, micro_batch=estimate.micro_batch,
        gradient_checkpointing=estimate.gradient_checkpointing,
        **{k: v for k, v in estimate.breakdown.items()},
    )


def needed_on(catalog: Catalog, req: MemoryRequest, gpu: Gpu) -> int | None:
    """:func:`gpus_needed` with the catalog's policy, remembered per catalog."""
    return catalog.derived(("gpus_needed", req, gpu.id), memory_model(catalog).gpus_needed, req,
                           gpu)


def memory_of(catalog: Catalog, req: MemoryRequest) -> MemoryEstimate:
    """:func:`estimate_memory` on one GPU with the catalog's policy, remembered per catalog."""
    return catalog.derived(("estimate_memory", req), memory_model(catalog).estimate, req, 1)


@dataclass(frozen=True)
class LocalBox:
    """The cheapest owned configuration that holds a job in memory."""

    gpu: Gpu
    count: int
    purchase: Figure


def cheapest_box(catalog: Catalog, req: MemoryRequest) -> LocalBox | None:
    """The owned configuration with the lowest purchase price that holds ``req`` (no more
    consumer cards than the policy's practical box)."""
    return catalog.derived(("cheapest_box", req), _cheapest_box, catalog, req)


def _cheapest_box(catalog: Catalog, req: MemoryRequest) -> LocalBox | None:
    practical = int(catalog.policy.practical_consumer_gpus_per_box.value)
    options = []
    for gpu in catalog.gpus.values():
        n = needed_on(catalog, req, gpu) if gpu.buyable else None
        if n is None or (gpu.form == "consumer" and n > practical):
            continue
        home = platform_for(gpu, n, catalog.platforms)
        if home is None:
            continue
        options.append(LocalBox(gpu, n, purchase_cost(gpu, n, *home, catalog.policy)))
    return min(options, key=lambda o: (o.purchase.value, o.gpu.id)) if options else None


def _dev_box_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape) -> None:
    """The cheapest box to develop and test on with QLoRA (for hybrid advice)."""
    dev = cheapest_box(catalog, memory_request(answers, shape, "qlora"))
    if dev is not None and answers.workload == "fine-tune":
        facts.put("dev_gpu_name", dev.gpu.name)
        facts.put("dev_gpu_count", dev.count)
        facts.put("dev_purchase_usd", dev.purchase.value, dev.purchase)


def _api_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape) -> None:
    """An API's monthly bill for the team's volume, against serving the model yourself."""
    volume = answers.api_tokens_per_month_m
    api = next((a for a in catalog.apis if a.id == catalog.policy.reference_api.value), None)
    if volume is None or api is None:
        return
    bill = api_cost_per_month(volume, api, catalog.policy)
    facts.put("api_cost_usd_month", bill.value, bill)
    req = memory_request(answers, shape, "inference")
    serving = []
    for offer in catalog.offers:
        if offer.market is not None:
            continue
        n = needed_on(catalog, req, catalog.gpus[offer.gpu])
        if n is not None and n <= offer.shapes[-1]:
            count = next(s for s in offer.shapes if s >= n)
            serving.append((offer.on_demand_usd_per_gpu_hour * count, offer.id, offer, count))
    if not serving:
        return
    _, _, offer, n = min(serving, key=lambda s: (s[0], s[1]))
    policy = catalog.policy
    hours = policy.hours_per_month.value
    over = policy.hidden_cloud_overhead.expected
    month = figure(offer.on_demand_usd_per_gpu_hour * n * hours * (1 + over), "USD/month",
                   "$/GPU-hour × GPUs × hours a month × (1 + hidden overhead), on demand",
                   [*offer.sources, *policy.hours_per_month.sources,
                    *policy.hidden_cloud_overhead.sources],
                   offer=offer.id, usd_per_gpu_hour=offer.on_demand_usd_per_gpu_hour, gpus=n,
                   hours=hours, hidden_overhead=over)
    facts.put("own_cost_usd_month", month.value, month)
    if month.value > 0:
        facts.put("api_to_own_cost_ratio", bill.value / month.value)


def _plan_facts(facts: Facts, answers: Answers, catalog: Catalog) -> None:
    """What the team plans to buy or rent, as far as it does not depend on the method."""
    if answers.planned_gpu is None:
        return
    gpu = catalog.gpu(answers.planned_gpu)
    count = answers.planned_gpu_count
    facts.put("planned_gpu_name", gpu.name)
    facts.put("planned_vram_gib", tidy(gpu.vram_gib, 2))
    facts.put("planned_vram_total_gib", tidy(gpu.vram_gib * count, 2))
    facts.put("planned_form", gpu.form)
    facts.put("planned_nvlink", gpu.nvlink)
    facts.put("planned_bf16", gpu.bf16)
    facts.put("planned_tdp_w", gpu.tdp_w)
    facts.put("planned_total_tdp_w", gpu.tdp_w * count)
    facts.put("planned_pcie_gen", gpu.pcie_gen)
    facts.put("planned_release_year", gpu.release_year)


@dataclass(frozen=True)
class Sizing:
    """What every candidate is sized and priced for."""

    request: MemoryRequest
    method: MethodGroup
    work: Workload
    deadline_days: float | None
    """Longest acceptable run (None when the work is given in hours: no run length known)."""
    electricity_usd_per_kwh: float
    budget_usd: float
    allowed_regions: frozenset[str] | None
    """Regions the team allows (None: any region, but no restricted market)."""
    single_gpu_gib: float
    """What the job needs on one GPU: the base of ``vram_ratio``."""


# -- 2. sized facts ------------------------------------------------------------------------
def method_sized(approach: str | None, method: str | None) -> MethodGroup:
    """What the hardware is sized for: pretraining when training from scratch, else the
    decided fine-tuning method."""
    if approach == "train-from-scratch":
        return "pretrain"
    return method if method in TRAINING_METHODS else "lora"  # type: ignore[return-value]


def size(facts: Facts, answers: Answers, catalog: Catalog, method: MethodGroup) -> Sizing:
    """The sized facts for the decided method, and what every candidate is sized for."""
    assert facts.shape is not None
    shape = facts.shape
    policy = catalog.policy
    req = memory_request(answers, shape, method)
    estimate = facts.memory[method]
    facts.put("method_sized", method)
    facts.put("vram_needed_gib", estimate.total_gib, facts.traces[f"vram_{method}_gib"])
    largest = max(consumer_gpus(catalog), key=lambda g: (g.vram_gib, g.id))
    consumer = needed_on(catalog, req, largest)
    box = int(policy.max_consumer_gpus_per_box.value)
    facts.put("consumer_gpus_needed", consumer)
    facts.put("fits_consumer_gpu", consumer is not None and consumer <= box)
    facts.put("fits_single_consumer_gpu", consumer == 1)
    reference = catalog.gpus[policy.reference_datacenter_gpu.value]
    facts.put("reference_datacenter_gpu_name", reference.name)
    facts.put("datacenter_gpus_needed", needed_on(catalog, req, reference))
    acts = estimate.breakdown.get("activations", 0.0) + estimate.breakdown.get("logits", 0.0)
    facts.put("activation_share", acts / estimate.total_gib if estimate.total_gib else 0.0)
    facts.put("checkpointing_on", estimate.gradient_checkpointing)
    work = _work_facts(facts, answers, catalog, shape, method)
    _plan_fit_facts(facts, answers, catalog, req)
    deadline = answers.max_days_per_run
    if deadline is None:
        deadline = policy.max_days_per_run[
            "pretrain" if method == "pretrain" else "fine-tune"].value
    facts.put("max_days_per_run_effective", deadline if work.flops_per_run else None)
    allowed = (frozenset(answers.allowed_regions) if answers.data_residency == "region"
               else None)
    return Sizing(request=req, method=method, work=work,
                  deadline_days=deadline if work.flops_per_run else None,
                  electricity_usd_per_kwh=answers.electricity_usd_per_kwh,
                  budget_usd=answers.budget_usd, allowed_regions=allowed,
                  single_gpu_gib=estimate.total_gib)


def _work_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape,
                method: MethodGroup) -> Workload:
    policy = catalog.policy
    hours_gpu = catalog.gpus[answers.hours_gpu or policy.reference_gpu.value]
    req = memory_request(answers, shape, method)
    n = needed_on(catalog, req, hours_gpu) or 1
    nodes = max(1, math.ceil(n / 8))
    speed = effective_tflops(hours_gpu, n, nodes, "infiniband", method,
                             memory_model(catalog).checkpointing_on(req, hours_gpu, n), policy)
    hour = figure(speed.value / n, "TFLOPS/GPU", "useful TFLOPS of the configuration ÷ GPUs",
                  speed.sources, gpus=n, useful_tflops=speed.value)
    work = workload(shape=shape, method=method, policy=policy, hours_gpu=hours_gpu, hour=hour,
                    tokens_per_run_b=answers.training_tokens_b,
                    runs_per_year=answers.runs_per_year, hours_per_year=answers.hours_per_year)
    facts.work = work
    facts.put("work_mode", work.mode)
    facts.put("work_assumed", work.hours_assumed or work.tokens_from == "chinchilla")
    facts.put("hours_gpu_name", work.hours_gpu_name)
    facts.put("work_gpu_hours_per_year", tidy(work.reference_gpu_hours, 1),
              work.trace["flops_per_year"])
    facts.put("work_flops_per_year", float(f"{work.flops_per_year:.4g}"))
    if work.tokens_per_run_b is not None:
        facts.put("tokens_per_run_b", work.tokens_per_run_b)
        facts.put("tokens_from", work.tokens_from)
        facts.put("runs_per_year_effective", work.runs_per_year)
    return work


def _plan_fit_facts(facts: Facts, answers: Answers, catalog: Catalog,
                    req: MemoryRequest) -> None:
    """Whether the team's planned GPUs hold the decided job."""
    if answers.planned_gpu is None:
        return
    gpu = catalog.gpu(answers.planned_gpu)
    needed = needed_on(catalog, req, gpu)
    vram_needed = facts.values["vram_needed_gib"]
    total = gpu.vram_gib * answers.planned_gpu_count
    facts.put("planned_vram_ratio", total / vram_needed if vram_needed else None)
    facts.put("planned_fits", needed is not None and needed <= answers.planned_gpu_count)
    facts.put("planned_gpus_needed", needed)
