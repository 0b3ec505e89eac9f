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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from engine.answers.model import Answers
from engine.catalog.load import Catalog
from engine.catalog.models import ApiOffer, Gpu, MethodGroup, Policy
from engine.estimates.cost import (
    api_cost_per_month,
    most_in_one_place,
    platform_for,
    purchase_cost,
)
from engine.estimates.figure import Figure, figure, plain, tidy
from engine.estimates.memory import (
    MemoryEstimate,
    MemoryRequest,
    Method,
    memory_model,
)
from engine.estimates.programme import Shared, shared_parts, storage_part, storage_price
from engine.estimates.reports import on_demand_prices
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
    """The work of the lightest method allowed (what the request-level sized facts speak of)."""
    works: dict[str, Workload] = field(default_factory=dict)
    """The work of every method candidates are built for."""

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


def _reasons_to_own(answers: Answers) -> list[str]:
    """The four reasons to train from scratch (decide.scratch) the team gives, in words."""
    given = (("proprietary data", answers.proprietary_data),
             ("a specialised domain", answers.specialised_domain),
             ("a competitive moat", answers.competitive_moat),
             ("regulated control", answers.regulated_control))
    return [name for name, holds in given if holds]


def _in_words(items: list[str]) -> str:
    if len(items) < 2:
        return items[0] if items else "none"
    return f"{', '.join(items[:-1])} and {items[-1]}"


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
    facts.put("is_moe", shape.compute_params_b < shape.params_b * 0.99)
    _method_memory_facts(facts, answers, catalog, shape)
    _dev_box_facts(facts, answers, catalog, shape)
    _programme_facts(facts, answers, catalog, shape)
    _api_facts(facts, answers, catalog, shape)
    _plan_facts(facts, answers, catalog)
    _owned_facts(facts, answers, catalog, shape)
    reasons = _reasons_to_own(answers)
    facts.put("scratch_reasons", len(reasons))
    facts.put("own_model_reasons", _in_words(reasons))
    facts.put("fine_tune_advised", answers.workload == "fine-tune" or not reasons)
    facts.put("newest_release_year", max(g.release_year for g in catalog.gpus.values()))
    announced = sorted(catalog.announced, key=lambda a: (a.expected, a.id))
    facts.put("announced_gpu", f"{announced[0].name}, expected {announced[0].expected}, no "
              "price yet" if announced else "none announced")
    facts.put("write_off_years", catalog.policy.amortisation_years.value)
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


def local_box_gpus(catalog: Catalog, vendors: Collection[str] = ()) -> list[Gpu]:
    """Buyable consumer and workstation cards: what a box at the desk or in an office holds;
    of the team's GPU ``vendors`` where it names them and the catalog sells one of them (all
    otherwise)."""
    boxes = [g for g in catalog.gpus.values()
             if g.form in ("consumer", "workstation") and g.buyable]
    return [g for g in boxes if g.vendor in vendors] or boxes


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
                  catalog.per_job(("memory_trace", req), _memory_trace, estimate))
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
    return catalog.per_job(("gpus_needed", req.token, gpu.id),
                           memory_model(catalog).gpus_needed, req, gpu)


def memory_of(catalog: Catalog, req: MemoryRequest) -> MemoryEstimate:
    """:func:`estimate_memory` on one GPU with the catalog's policy, remembered per catalog."""
    return catalog.per_job(("estimate_memory", req), memory_model(catalog).estimate, req, 1)


@dataclass(frozen=True)
class LocalBox:
    """The cheapest owned configuration that holds a job in memory."""

    gpu: Gpu
    count: int
    purchase: Figure


def cheapest_box(catalog: Catalog, req: MemoryRequest, *, regulated: bool = False,
                 vendors: frozenset[str] | None = None) -> LocalBox | None:
    """The owned configuration with the lowest purchase price that holds ``req`` (no more
    consumer cards than the policy's practical box); for a ``regulated`` team, of cards with
    ECC memory whose licence allows datacenter deployment (no GeForce); of the team's GPU
    ``vendors`` where it names them."""
    return catalog.per_job(("cheapest_box", req, regulated, vendors), _cheapest_box, catalog,
                           req, regulated, vendors)


def _cheapest_box(catalog: Catalog, req: MemoryRequest, regulated: bool,
                  vendors: frozenset[str] | None) -> LocalBox | None:
    practical = int(catalog.policy.practical_consumer_gpus_per_box.value)
    options = []
    for gpu in catalog.gpus.values():
        if regulated and not (gpu.ecc and gpu.datacenter_licence):
            continue
        if vendors is not None and gpu.vendor not in vendors:
            continue
        n = needed_on(catalog, req, gpu) if gpu.buyable else None
        if n is None or (gpu.form == "consumer" and n > practical):
            continue
        home = platform_for(gpu, n, catalog.platforms)
        if home is None:
            continue
        options.append(LocalBox(gpu, n, purchase_cost(gpu, n, *home, catalog.policy)))
    return min(options, key=lambda o: (o.purchase.value, o.gpu.id)) if options else None


def _dev_box_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape) -> None:
    """The box to develop and test on with QLoRA (for hybrid advice): the team's own GPUs,
    as many as one machine or cluster takes, where they hold it and are of a vendor the team
    can use, else the cheapest to buy of those vendors (for a regulated team, with ECC memory
    and a datacenter licence, as its other owned configurations)."""
    if answers.workload != "fine-tune":
        return
    request = memory_request(answers, shape, "qlora")
    vendors = frozenset(answers.gpu_vendors) or None
    owned = catalog.gpus.get(answers.owned_gpu) if answers.owned_gpu else None
    if owned is not None and vendors is not None and owned.vendor not in vendors:
        owned = None  # a stack on another vendor's cards does not develop on these
    needed = needed_on(catalog, request, owned) if owned is not None else None
    usable = 0 if owned is None else most_in_one_place(owned, answers.owned_gpu_count,
                                                       catalog.platforms)
    if owned is not None and needed is not None and needed <= usable:
        facts.put("dev_gpu_name", owned.name)
        facts.put("dev_gpu_count", usable)
        facts.put("dev_purchase_usd", 0.0)
        facts.put("dev_is_owned", True)
        facts.put("dev_box", f"your own {usable}× {owned.name} hold it")
        return
    dev = cheapest_box(catalog, request, regulated=answers.regulated_control, vendors=vendors)
    if dev is not None:
        facts.put("dev_gpu_name", dev.gpu.name)
        facts.put("dev_gpu_count", dev.count)
        facts.put("dev_purchase_usd", dev.purchase.value, dev.purchase)
        facts.put("dev_is_owned", False)
        facts.put("dev_box", f"e.g. {dev.count}× {dev.gpu.name}, ${dev.purchase.value:,.0f}")


def _api_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape) -> None:
    """A hosted API's monthly bill for the team's volume, against a model of its own on the
    whole bill: its training programme a month (compute at the reference rental, failed runs
    and evaluation, people, data, storage) and serving it around the clock."""
    volume = answers.api_tokens_per_month_m
    if volume is None:
        return
    api = api_for(catalog, shape, frontier=answers.needs_frontier_capability)
    if api is None:
        return
    bill = api_cost_per_month(volume, api, catalog.policy)
    facts.put("api_model_class", api.model_class)
    facts.put("api_name", api.name)
    facts.put("api_cost_usd_month", bill.value, bill)
    req = memory_request(answers, shape, "inference")
    training = facts.traces["own_training_usd_month"]
    # a team whose programme counts no paid engineers (the lowest tier: its own time) runs
    # its served model in its own time too
    own_time = not training.inputs.get("people_usd_year")
    fte = 0.0 if own_time else None
    month = serving_cost_per_month(catalog, shape, volume, req, answers.team_region,
                                   operations_fte=fte)
    if month is None:
        return
    own = figure(month.value + training.value, "USD/month",
                 "serving a month + the training programme a month",
                 [*month.sources, *training.sources], serving_usd_month=month.value,
                 training_usd_month=training.value)
    facts.put("own_serving_usd_month", month.value, month)
    facts.put("own_cost_usd_month", own.value, own)
    facts.put("own_serving_gpus", month.inputs["gpus"])
    facts.put("own_serving_gpu_name", month.inputs["gpu_name"])
    facts.put("own_serving_run_by", "your own time to run it" if own_time
              else "the share of an engineer who runs it")
    if own.value > 0:
        facts.put("api_to_own_cost_ratio", bill.value / own.value)

    def serving(tokens_m: float) -> float | None:
        found = serving_cost_per_month(catalog, shape, tokens_m, req, answers.team_region,
                                       operations_fte=fte)
        return None if found is None else found.value

    usd_per_m = api_cost_per_month(1.0, api, catalog.policy).value
    even = api_break_even(volume, usd_per_m, training.value, serving, month.value)
    if even is not None:
        facts.put("api_break_even_tokens_m", tidy(even, 0))


def api_break_even(volume: float, usd_per_m: float, training_usd_month: float,
                   serving: Callable[[float], float | None],
                   serving_now: float | None = None) -> float | None:
    """The monthly volume (M tokens) nearest ``volume`` at which a hosted API's bill
    (``usd_per_m`` a million tokens) and a model of the team's own (its training a month,
    and ``serving`` that volume, in steps of the GPUs it takes) cost the same: above
    ``volume`` where the API costs less there, else below. Each step from ``volume`` is the
    volume at which the API's bill reaches the own model's at the last serving cost; it
    stops where the serving cost no longer changes (None: no serving for a volume, no
    price, or no crossing within 64 steps). ``serving_now``: ``serving(volume)``, where the
    caller has it already."""
    cost = serving(volume) if serving_now is None else serving_now
    if usd_per_m <= 0 or cost is None:
        return None
    up = usd_per_m * volume < training_usd_month + cost
    for _ in range(64):
        even = (training_usd_month + cost) / usd_per_m
        # going down, the serving just below: where a step ends, the API is dearer there
        after = serving(even if up else even * (1 - 1e-9))
        if after is None or after == cost:
            return None if after is None else even
        cost = after
    return None


def request_method(answers: Answers) -> MethodGroup:
    """The method the team's answers name, before the decisions (LoRA for ``auto``): what
    the programme's data and storage are estimated for until a configuration is picked."""
    if answers.workload == "pretrain":
        return "pretrain"
    return "lora" if answers.method == "auto" else answers.method  # type: ignore[return-value]


def shared_of(answers: Answers, catalog: Catalog, shape: Shape,
              method: MethodGroup) -> Shared:
    """The programme's parts every configuration shares, for the work of ``method``."""
    work = _workload(answers, catalog, shape, method)
    bounds = sorted(catalog.policy.budget_tiers.bands.values())
    return shared_parts(workload_kind=answers.workload, engineers=answers.ml_engineers_fte,
                        region=answers.team_region, dataset_prep_usd=answers.dataset_prep_usd,
                        rework_share=answers.rework_share, shape=shape, work=work,
                        policy=catalog.policy,
                        lowest_tier=len(bounds) > 1 and answers.budget_usd < bounds[1])


def _programme_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape) -> None:
    """The programme beside compute before any configuration is priced: people, data,
    storage and the re-run shares; the training compute at the reference rental; what the
    budget leaves for compute."""
    policy = catalog.policy
    method = request_method(answers)
    shared = shared_of(answers, catalog, shape, method)
    compute = reference_rental(catalog, answers, shape, method)
    storage = storage_part(shared, storage_price(None, False, policy), policy, rented=True)
    facts.put("programme_engineers", shared.people.usd_per_year.inputs["engineers"])
    facts.put("programme_engineers_assumed", shared.people.assumed)
    facts.put("programme_people_usd_year", shared.people.usd_per_year.value,
              shared.people.usd_per_year)
    facts.put("programme_data_usd_year", shared.data.usd_per_year.value,
              shared.data.usd_per_year)
    facts.put("rerun_share", shared.rerun_share)
    beside = (shared.people.usd_per_year.value + shared.data.usd_per_year.value
              + storage.usd_per_year.value)
    facts.put("programme_beside_compute_usd_year", beside)
    if compute is not None:
        facts.put("training_compute_estimate_usd_year", compute.value, compute)
    rented = compute.value if compute is not None else 0.0
    training = figure(
        (rented * (1 + shared.rerun_share) + beside) / 12, "USD/month",
        "(training compute at the reference rental × (1 + evaluation and re-run share) "
        "+ people + data + storage) ÷ 12",
        [*(compute.sources if compute is not None else ()),
         *shared.people.usd_per_year.sources, *shared.data.usd_per_year.sources,
         *storage.usd_per_year.sources],
        compute_usd_year=rented, rerun_share=shared.rerun_share,
        people_usd_year=shared.people.usd_per_year.value,
        data_usd_year=shared.data.usd_per_year.value,
        storage_usd_year=storage.usd_per_year.value)
    facts.put("own_training_usd_month", training.value, training)
    covers = answers.budget_covers == "programme"
    facts.put("compute_budget_usd",
              max(answers.budget_usd - beside, 0.0) if covers else answers.budget_usd)
    dev = facts.values.get("dev_purchase_usd")
    if isinstance(dev, (int, float)):
        facts.put("budget_after_dev_box_usd",
                  max(facts.values["compute_budget_usd"] - dev, 0.0))


def reference_rental(catalog: Catalog, answers: Answers, shape: Shape,
                     method: MethodGroup) -> Figure | None:
    """The year's training compute rented on demand on the reference datacenter GPU at its
    cheapest listed price, before any configuration is priced (the API comparison's)."""
    policy = catalog.policy
    gpu = catalog.gpus[policy.reference_datacenter_gpu.value]
    prices = on_demand_prices(catalog, gpu.id)
    req = memory_request(answers, shape, method)
    n = needed_on(catalog, req, gpu)
    if not prices or n is None:
        return None
    work = _workload(answers, catalog, shape, method)
    nodes = max(1, math.ceil(n / 8))
    speed = effective_tflops(gpu, n, nodes, "infiniband", method,
                             memory_model(catalog).checkpointing_needed(req, gpu, n), policy,
                             answers.precision)
    gpu_hours = work.flops_per_year / (speed.value * 1e12) / 3600 * n if speed.value else 0.0
    over = policy.hidden_cloud_overhead.expected
    return figure(gpu_hours * prices[0] * (1 + over), "USD/year",
                  "GPU-hours of the year's work on the reference GPU × its cheapest on-demand "
                  "$/GPU-hour × (1 + hidden overhead)",
                  [*gpu.sources, *speed.sources, *policy.hidden_cloud_overhead.sources],
                  gpu=gpu.id, gpus=n, gpu_hours=gpu_hours, usd_per_gpu_hour=prices[0],
                  hidden_overhead=over)


def api_for(catalog: Catalog, shape: Shape, *, frontier: bool = False) -> ApiOffer | None:
    """The hosted API a team's own model of this size stands in for (a frontier one where the
    team needs frontier capability): the cheapest (blended) current price of its class
    (``api_class_max_params_b``; stale prices only when no current one is listed)."""
    policy = catalog.policy
    limits = policy.api_class_max_params_b
    model_class = ("frontier" if frontier or shape.params_b > limits["mid"].value else
                   "small" if shape.params_b <= limits["small"].value else "mid")
    offers = [a for a in catalog.apis if a.model_class == model_class]
    current = [a for a in offers if not catalog.is_stale(a.as_of)] or offers
    share = policy.api_output_token_share.value
    return min(current, key=lambda a: (a.input_usd_per_m_tokens * (1 - share)
                                       + a.output_usd_per_m_tokens * share, a.id),
               default=None)


def serving_cost_per_month(catalog: Catalog, shape: Shape, tokens_m_per_month: float,
                           req: MemoryRequest, region: str = "us", *,
                           operations_fte: float | None = None) -> Figure | None:
    """Serving the model yourself for a month: the GPUs that hold it and serve the busiest
    hours (decoding speed from memory bandwidth), rented on demand around the clock on the
    cheapest datacenter offer, plus the share of an engineer who runs it
    (``operations_fte``, default the policy's ``serving_operations_fte``; 0 for a team
    that runs it in its own time)."""
    policy = catalog.policy
    hours = policy.hours_per_month.value
    peak = tokens_m_per_month * 1e6 / (hours * 3600) * policy.serving_peak_to_mean.value
    over = policy.hidden_cloud_overhead.expected
    options = []
    for offer in catalog.offers:
        gpu = catalog.gpus[offer.gpu]
        if (offer.market is not None or gpu.form == "consumer"
                or offer.on_demand_usd_per_gpu_hour is None):
            continue
        memory = needed_on(catalog, req, gpu)
        if memory is None:
            continue
        speed = (policy.serving_tokens_per_s_per_bandwidth.value * gpu.bandwidth_gbps
                 / max(shape.compute_params_b, 0.01))
        need = max(memory, math.ceil(peak / speed - 1e-9), 1)
        count = next((s for s in offer.shapes if s >= need), None)
        if count is None and offer.multi_node:
            largest = offer.shapes[-1]
            count = largest * math.ceil(need / largest)
        if count is None:
            continue
        rent = offer.on_demand_usd_per_gpu_hour * count * hours * (1 + over)
        options.append((rent, offer.id, offer, gpu, count, speed))
    if not options:
        return None
    rent, _, offer, gpu, count, speed = min(options, key=lambda o: (o[0], o[1]))
    assert offer.on_demand_usd_per_gpu_hour is not None
    engineer = policy.engineer_usd_per_year[region]  # type: ignore[index]
    fte = policy.serving_operations_fte.value if operations_fte is None else operations_fte
    people = fte * engineer.value / 12
    return figure(
        rent + people, "USD/month",
        "GPUs × $/GPU-hour × hours a month × (1 + hidden overhead), on demand, for the GPUs "
        "that hold the model and serve the busiest hours (tokens a second × peak-to-mean ÷ "
        "tokens a second one GPU serves) + engineers × $ a year ÷ 12",
        [*offer.sources, *policy.hours_per_month.sources,
         *policy.hidden_cloud_overhead.sources,
         *policy.serving_tokens_per_s_per_bandwidth.sources,
         *policy.serving_peak_to_mean.sources,
         *(policy.serving_operations_fte.sources if operations_fte is None else ()),
         *engineer.sources],
        offer=offer.id, gpu_name=gpu.name, gpus=count,
        usd_per_gpu_hour=offer.on_demand_usd_per_gpu_hour, hours=hours, hidden_overhead=over,
        peak_tokens_per_s=peak, tokens_per_s_per_gpu=speed, gpus_usd_month=rent,
        operations_fte=fte, operations_usd_month=people)


def _owned_facts(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape) -> None:
    """Whether the team owns GPUs, which, and whether as many of them as one machine (or
    cluster) takes hold the job with the lightest method its answers allow (QLoRA where the
    method is left to the advice)."""
    facts.put("owns_gpus", answers.owned_gpu is not None)
    holds = False
    if answers.owned_gpu is not None:
        gpu = catalog.gpu(answers.owned_gpu)
        facts.put("owned_gpu_name", gpu.name)
        facts.put("owned_gpu_vendor", gpu.vendor)
        named = request_method(answers)
        lightest: MethodGroup = ("qlora" if answers.method == "auto" and named != "pretrain"
                                 else named)
        needed = needed_on(catalog, memory_request(answers, shape, lightest), gpu)
        usable = most_in_one_place(gpu, answers.owned_gpu_count, catalog.platforms)
        holds = needed is not None and needed <= usable
    facts.put("owned_gpus_hold_job", holds)


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
class Job:
    """One way of doing the team's training: a method, its memory question and its work."""

    method: MethodGroup
    request: MemoryRequest
    work: Workload
    single_gpu_gib: float
    """What the job needs on one GPU: the base of ``vram_ratio``."""
    precision: str = "bf16"
    """The precision the team asks for (FP8 where a card and the method allow it)."""

    @property
    def quality_rank(self) -> int:
        """0 for full training (and pretraining), 1 for LoRA, 2 for QLoRA: lower is better."""
        return METHOD_QUALITY.index("full" if self.method == "pretrain" else self.method)


METHOD_QUALITY: tuple[MethodGroup, ...] = ("full", "lora", "qlora")
"""Training methods best quality first: full training updates every weight in 16 bits, LoRA
trains 16-bit adapters on a frozen base, QLoRA adapters on a 4-bit base."""


@dataclass(frozen=True)
class Sizing:
    """What every candidate is sized and priced for."""

    jobs: tuple[Job, ...]
    """One per method the decisions allow, best quality first."""
    shape: Shape
    deadline_days: float
    """Longest acceptable run, start-up included, on owned or committed capacity (for steady
    work stretched so that it stays busy: ``RunLimits.held``)."""
    burst_deadline_days: float
    """The same for capacity paid by the hour it runs (on demand, spot, blocks bought per run):
    idle hours cost nothing there, so steady work does not stretch it
    (``RunLimits.rented``)."""
    electricity_usd_per_kwh: float
    budget_usd: float
    """What the budget leaves for compute (all of it unless it covers the whole programme)."""
    rerun_share: float
    """Evaluation and failed runs as a share of the counted runs' compute: the budget check's."""
    allowed_regions: frozenset[str] | None
    """Regions the team allows (None: any region, but no restricted market)."""
    gpu_vendors: frozenset[str] | None
    """GPU vendors the team can use (None: any)."""
    frequent_checkpoints: bool
    plan: tuple[str, int] | None
    """The GPU and count the team plans, priced as a candidate of its own."""
    owned: tuple[str, int] | None
    """The GPU and count the team owns, priced at what running them costs."""
    upfront_capex: bool
    concurrent_jobs: int = 1
    """Jobs that must run at the same time: above 1 a pool."""
    steady_jobs: bool = True
    """The jobs come when they come (continuous work), not together: a rented pool whose jobs
    share an instance is then paid every hour of the year; else, and for jobs on whole GPUs
    of their own, a pool is paid only while its jobs run (``candidates.rented_all_year``)."""

    @property
    def stretched_from(self) -> float | None:
        """The default limit steady work stretched held capacity's runs past
        (``burst_deadline_days``), or None where nothing was stretched."""
        return (self.burst_deadline_days if self.deadline_days > self.burst_deadline_days
                else None)


# -- 2. sized facts ------------------------------------------------------------------------
def methods_allowed(approach: str | None, open_methods: Collection[str],
                    workload: str) -> tuple[MethodGroup, ...]:
    """The methods candidates are built for: pretraining when training from scratch (or
    where an API is advised instead of the pretraining the team asked about: that is what is
    priced beside it), else every fine-tuning method the decisions left open, best quality
    first."""
    if approach == "train-from-scratch" or (approach == "use-api" and workload == "pretrain"):
        return ("pretrain",)
    found = tuple(m for m in METHOD_QUALITY if m in open_methods)
    return found or ("lora",)


def size(facts: Facts, answers: Answers, catalog: Catalog,
         methods: Sequence[MethodGroup]) -> Sizing:
    """The sized facts and what every candidate is sized for. The request-level sized facts
    (does the job fit a consumer box, how many datacenter GPUs it needs) are of the lightest
    method allowed: whether the job fits at all."""
    assert facts.shape is not None
    shape = facts.shape
    policy = catalog.policy
    jobs = tuple(_job(facts, answers, catalog, shape, m) for m in methods)
    lightest = jobs[-1]
    facts.work = lightest.work
    estimate = facts.memory[lightest.method]
    facts.put("method_sized", lightest.method)
    facts.put("method_sized_said", "pretraining, the only method for training from scratch"
              if lightest.method == "pretrain" else
              f"{lightest.method}, the lightest method you allow")
    facts.put("methods_considered", ",".join(methods))
    facts.put("vram_needed_gib", estimate.total_gib, facts.traces[f"vram_{lightest.method}_gib"])
    largest = max(consumer_gpus(catalog), key=lambda g: (g.vram_gib, g.id))
    consumer = needed_on(catalog, lightest.request, largest)
    box = int(policy.max_consumer_gpus_per_box.value)
    facts.put("consumer_gpus_needed", consumer)
    facts.put("fits_consumer_gpu", consumer is not None and consumer <= box)
    facts.put("fits_single_consumer_gpu", consumer == 1)
    roomiest_local = max(local_box_gpus(catalog, answers.gpu_vendors),
                         key=lambda g: (g.vram_gib, g.id))
    in_box = needed_on(catalog, lightest.request, roomiest_local)
    facts.put("fits_local_box", in_box is not None and in_box <= box)
    facts.put("largest_local_gpu_name", roomiest_local.label)
    facts.put("largest_local_vram_gib", tidy(roomiest_local.vram_gib, 2))
    reference = catalog.gpus[policy.reference_datacenter_gpu.value]
    facts.put("reference_datacenter_gpu_name", reference.name)
    # no bundled rule reads it since fit.nothing-fits reads the roomiest GPU, but the rules
    # of older records do (their replays must decide as they did) and so may an author's
    facts.put("datacenter_gpus_needed", needed_on(catalog, lightest.request, reference))
    roomiest = max(catalog.gpus.values(), key=lambda g: (g.vram_gib, g.id))
    facts.put("roomiest_gpu_name", roomiest.name)
    facts.put("roomiest_gpu_vram_gib", roomiest.vram_gib)
    facts.put("roomiest_gpus_needed", needed_on(catalog, lightest.request, roomiest))
    acts = estimate.breakdown.get("activations", 0.0) + estimate.breakdown.get("logits", 0.0)
    facts.put("activation_share", acts / estimate.total_gib if estimate.total_gib else 0.0)
    facts.put("checkpointing_on", estimate.gradient_checkpointing)
    _work_facts(facts, lightest.work)
    _plan_fit_facts(facts, answers, catalog, lightest.request)
    limits = run_limits(answers, lightest.work, policy)
    facts.put("max_days_per_run_effective", limits.held)
    facts.put("max_days_per_run_rented", limits.rented)
    facts.put("max_days_per_run_default", limits.default)
    if limits.team is not None:
        facts.put("run_deadline_days", limits.team)
    allowed = (frozenset(answers.allowed_regions) if answers.data_residency == "region"
               else None)
    plan = (answers.planned_gpu, answers.planned_gpu_count) if answers.planned_gpu else None
    return Sizing(jobs=jobs, shape=shape, deadline_days=limits.held,
                  burst_deadline_days=limits.rented,
                  electricity_usd_per_kwh=answers.electricity_usd_per_kwh,
                  budget_usd=facts.values["compute_budget_usd"],
                  rerun_share=facts.values["rerun_share"], allowed_regions=allowed,
                  gpu_vendors=frozenset(answers.gpu_vendors) or None,
                  frequent_checkpoints=answers.frequent_checkpoints, plan=plan,
                  owned=(answers.owned_gpu, answers.owned_gpu_count) if answers.owned_gpu
                  else None,
                  upfront_capex=answers.upfront_capex,
                  concurrent_jobs=answers.concurrent_jobs,
                  steady_jobs=steady_jobs(answers))


def steady_jobs(answers: Answers) -> bool:
    """Whether the team's jobs are steady work that comes when it comes (continuous), not
    together in waves."""
    return answers.usage_pattern == "continuous"


class RunLimits(NamedTuple):
    """The longest acceptable runs, in days, for one workload."""

    default: float
    """The policy's for the workload."""
    team: float | None
    """The team's (:func:`team_run_limit`), None where its answers set none."""
    rented: float
    """On capacity paid by the hour it runs: the team's, else the policy's (steady work does
    not stretch it: rented by the hour, shorter runs cost no more)."""
    held: float
    """On capacity held all year: ``rented``, and where the team gave no limit, for
    continuous work at least its runs back to back over the share of the year owned
    capacity is sized to be busy (never past the deadline for a first model, nor the
    policy's ``max_days_per_steady_run``)."""


def run_limits(answers: Answers, work: Workload, policy: Policy) -> RunLimits:
    """:class:`RunLimits` of ``work`` for the team's answers."""
    default = _default_run_limit(work, policy)
    team = team_run_limit(answers, default)
    rented = default if team is None else team
    if team is not None or answers.usage_pattern != "continuous" or work.runs_per_year <= 0:
        return RunLimits(default, team, rented, rented)
    year_days = policy.hours_per_year_max.value / 24
    fill = year_days * policy.capacity_busy_target["high"].value / work.runs_per_year
    first = _first_model_days(answers)  # the first model's run ends by then
    bounds = (year_days, first, steady_run_bound(work, policy))
    most = min(b for b in bounds if b is not None)
    return RunLimits(default, team, rented, tidy(max(rented, min(fill, most)), 2))


def team_run_limit(answers: Answers, default_days: float) -> float | None:
    """The longest run the team's answers allow, in days: ``max_days_per_run``, or the days
    to its deadline for a first model (``weeks_to_first_model``: a first model needs at
    least one whole run) where shorter than that or, with no ``max_days_per_run``, than
    the policy's ``default_days``; None where neither limits a run."""
    given = answers.max_days_per_run
    deadline = _first_model_days(answers)
    if deadline is None or deadline >= (default_days if given is None else given):
        return given
    return deadline


def _first_model_days(answers: Answers) -> float | None:
    """The days to the team's deadline for a first model (None where it gives none)."""
    weeks = answers.weeks_to_first_model
    return None if weeks is None else weeks * 7


def longest_run(answers: Answers, work: Workload, policy: Policy) -> float | None:
    """The longest a run of ``work`` may reasonably take where the team set no limit: the
    policy's ``max_days_per_steady_run``, never past the deadline for a first model (None:
    a policy recorded before the bound)."""
    bound, first = steady_run_bound(work, policy), _first_model_days(answers)
    return bound if first is None or bound is None else min(bound, first)


def steady_run_bound(work: Workload, policy: Policy) -> float | None:
    """The longest run steady work stretches to on capacity held all year (None: a policy
    recorded before the bound, whose runs stretch to the share of the year held)."""
    bound = policy.max_days_per_steady_run
    return None if bound is None else bound[_workload_key(work)].value


def _workload_key(work: Workload) -> Literal["fine-tune", "pretrain"]:
    return "pretrain" if work.method == "pretrain" else "fine-tune"


def _default_run_limit(work: Workload, policy: Policy) -> float:
    return policy.max_days_per_run[_workload_key(work)].value


def _job(facts: Facts, answers: Answers, catalog: Catalog, shape: Shape,
         method: MethodGroup) -> Job:
    req = memory_request(answers, shape, method)
    work = _workload(answers, catalog, shape, method)
    facts.works[method] = work
    return Job(method, req, work, facts.memory[method].total_gib, answers.precision)


def _workload(answers: Answers, catalog: Catalog, shape: Shape,
              method: MethodGroup) -> Workload:
    policy = catalog.policy
    hours_gpu = catalog.gpus[answers.hours_gpu or policy.reference_gpu.value]
    measured = hours_method(answers, method)
    req = memory_request(answers, shape, measured)
    n = needed_on(catalog, req, hours_gpu) or 1
    nodes = max(1, math.ceil(n / 8))
    speed = effective_tflops(hours_gpu, n, nodes, "infiniband", measured,
                             memory_model(catalog).checkpointing_needed(req, hours_gpu, n),
                             policy, answers.precision)
    hour = figure(speed.value / n, "TFLOPS/GPU", "useful TFLOPS of the configuration ÷ GPUs",
                  speed.sources, gpus=n, useful_tflops=speed.value, method=measured)
    return workload(shape=shape, method=method, policy=policy, hours_gpu=hours_gpu, hour=hour,
                    tokens_per_run_b=answers.training_tokens_b,
                    runs_per_year=answers.runs_per_year, hours_per_year=answers.hours_per_year,
                    hours_per_run=answers.hours_per_run, hours_method=measured,
                    concurrent_jobs=answers.concurrent_jobs)


def hours_method(answers: Answers, method: MethodGroup) -> MethodGroup:
    """The method a team's GPU-hours are hours of: pretraining, the method it asked for, or
    LoRA (the usual way to fine-tune) when it left the method to us."""
    if method == "pretrain":
        return "pretrain"
    return next((m for m in METHOD_QUALITY if m == answers.method), "lora")


def _work_facts(facts: Facts, work: Workload) -> None:
    facts.put("work_mode", work.mode)
    facts.put("work_assumed", work.hours_assumed or work.tokens_from == "chinchilla")
    facts.put("runs_assumed", work.runs_assumed)
    facts.put("hours_gpu_name", work.hours_gpu_name)
    facts.put("work_gpu_hours_per_year", tidy(work.reference_gpu_hours, 1),
              work.trace["flops_per_year"])
    facts.put("work_flops_per_year", float(f"{work.flops_per_year:.4g}"))
    facts.put("work_units", tidy(work.units, 2))
    facts.put("work_unit", work.unit)
    facts.put("work_description", describe_work(work))
    facts.put("runs_per_year_effective", work.runs_per_year)
    if work.tokens_per_run_b is not None:
        facts.put("tokens_per_run_b", work.tokens_per_run_b)
        facts.put("tokens_from", work.tokens_from)


def describe_work(work: Workload) -> str:
    """The year's work as the team stated it: ``6 runs a year of 0.2B tokens`` or ``6,000
    GPU-hours a year on one NVIDIA GeForce RTX 4090``."""
    if work.mode == "tokens":
        runs = plain(work.runs_per_year)
        return f"{runs} run{'s' if work.runs_per_year != 1 else ''} a year of " \
               f"{plain(work.tokens_per_run_b or 0)}B tokens"
    return f"{work.hours_per_year or 0:,.0f} GPU-hours a year on one {work.hours_gpu_name}"


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
    facts.put("plan_unpriced_because", _plan_unpriced_because(
        catalog, gpu, answers.planned_gpu_count, needed))


def _plan_unpriced_because(catalog: Catalog, gpu: Gpu, count: int, needed: int | None) -> str:
    """Why a plan that holds the job may find no price, in the words of the advice: no cloud
    rents that many and the catalog has no purchase price for the GPU, or no machine holds
    them (a purchase is priced, ruled out or not, wherever a machine holds the count; read
    only where the plan is not priced)."""
    rented = any(o.gpu == gpu.id for o in catalog.offers)
    rents = "no cloud in the catalog rents that many" if rented else (
        "no cloud in the catalog rents it")
    if not gpu.buyable:
        return f"{rents}, and the catalog has no purchase price for it"
    fewer = f" ({needed} would hold the job)" if needed is not None and needed < count else ""
    return f"{rents} and no machine in it holds them{fewer}"
