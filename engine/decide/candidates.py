"""Hardware candidates: every configuration a team could buy or rent, priced for the same work.

Built once the rules have decided the method. For each buyable GPU (on the platform of its
form) and each training offer (at each pricing it is sold at), the smallest count that holds
the job in memory, does the year's work with no GPU busier than the hours in a year, and
finishes one run within the team's deadline; its busy hours, days per run and cost for the
year's work. A configuration that cannot meet one of these keeps its best attempt and says
which failed, so that the rules can exclude it with a reason the user can read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from engine.catalog.load import Catalog
from engine.catalog.models import Gpu, Offer, Platform
from engine.estimates.cost import hourly_rent_usd, owning, platform_for, renting_cost
from engine.estimates.figure import Figure, tidy
from engine.estimates.memory import memory_model, usable_gib
from engine.estimates.throughput import effective_tflops, hours_for
from engine.facts.build import Sizing

MAX_RATIO = 1e12
"""Largest ratio reported (far beyond any rule threshold, still a plain number)."""


@dataclass(frozen=True)
class PricedCandidate:
    """One priced configuration: its facts for the rules and the figures behind its cost."""

    facts: dict[str, Any]
    cost: Figure
    speed: Figure
    purchase: Figure | None = None

    @property
    def id(self) -> str:
        """The candidate id."""
        return str(self.facts["candidate_id"])


@dataclass(frozen=True)
class _Trial:
    """A count tried for one placement."""

    count: int
    nodes: int
    peak: float
    fits: bool
    checkpointing: bool
    speed: Figure
    busy_hours: float
    days_per_run: float | None
    within_year: bool
    meets_deadline: bool

    @property
    def ok(self) -> bool:
        return self.fits and self.within_year and self.meets_deadline


def build_candidates(catalog: Catalog, sizing: Sizing) -> list[PricedCandidate]:
    """Every local and cloud candidate for this sizing, local first, in catalog order."""
    out: list[PricedCandidate] = []
    for gpu in catalog.gpus.values():
        if gpu.buyable:
            found = _local(catalog, sizing, gpu)
            if found is not None:
                out.append(found)
    for offer in catalog.offers:
        out.extend(_cloud(catalog, sizing, offer))
    return out


# -- counts ------------------------------------------------------------------------------
def _local_counts(catalog: Catalog, gpu: Gpu) -> tuple[int, ...]:
    """Card counts an owned configuration of this card can have (remembered per catalog)."""
    return catalog.derived(("local_counts", gpu.id), _counts_for, catalog, gpu)


def _counts_for(catalog: Catalog, gpu: Gpu) -> tuple[int, ...]:
    limit = int(catalog.policy.max_gpus_considered.value)
    homes = [p for p in catalog.platforms if gpu.form in p.forms and p.socket == gpu.socket]
    if not homes:
        return ()
    single = max(p.max_gpus for p in homes)
    if gpu.form == "consumer":
        single = min(single, int(catalog.policy.max_consumer_gpus_per_box.value))
    step = single if gpu.socket != "pcie" else 1  # SXM/OAM come as whole baseboards
    counts = list(range(step, single + 1, step))
    if any(p.multi_node for p in homes):
        counts += range(2 * single, limit + 1, single)
    # every count has a home (``platform_for``): up to ``single`` a box that large, beyond it
    # nodes of a multi-node platform
    return tuple(counts)


def _home(catalog: Catalog, gpu: Gpu, count: int) -> tuple[Platform, int] | None:
    return catalog.derived(("home", gpu.id, count), platform_for, gpu, count, catalog.platforms)


def _cloud_counts(catalog: Catalog, offer: Offer) -> Iterator[tuple[int, int]]:
    """(GPUs, instances) an offer can be rented at: each shape, then whole multi-node sets."""
    limit = int(catalog.policy.max_gpus_considered.value)
    for shape in offer.shapes:
        yield shape, 1
    if offer.multi_node:
        largest = offer.shapes[-1]
        for instances in range(2, limit // largest + 1):
            yield largest * instances, instances


# -- trying a count -----------------------------------------------------------------------
def _trial(catalog: Catalog, sizing: Sizing, gpu: Gpu, count: int, nodes: int,
           network: Any) -> _Trial:
    policy = catalog.policy
    peak, ckpt, speed = catalog.derived(
        ("placement", sizing.request, sizing.method, gpu.id, count, nodes, network),
        _placement, catalog, sizing, gpu, count, nodes, network)
    work = sizing.work
    busy = hours_for(work.flops_per_year, speed.value)
    days = None if work.flops_per_run is None else hours_for(work.flops_per_run,
                                                             speed.value) / 24
    return _Trial(
        count=count, nodes=nodes, peak=peak, fits=peak <= usable_gib(gpu, policy),
        checkpointing=ckpt, speed=speed, busy_hours=busy, days_per_run=days,
        within_year=busy <= policy.hours_per_year_max.value,
        meets_deadline=(days is None or sizing.deadline_days is None
                        or days <= sizing.deadline_days),
    )


def _placement(catalog: Catalog, sizing: Sizing, gpu: Gpu, count: int, nodes: int,
               network: Any) -> tuple[float, bool, Figure]:
    """What a placement holds and how fast it trains, whatever the work: the per-GPU peak,
    whether checkpointing is on, the effective speed (remembered per catalog)."""
    memory = memory_model(catalog)
    peak = memory.peak_on(sizing.request, gpu, count)
    ckpt = memory.checkpointing_on(sizing.request, gpu, count)
    speed = effective_tflops(gpu, count, nodes, network, sizing.method, ckpt, catalog.policy)
    return peak, ckpt, speed


def _best_trial(trials: Iterator[_Trial]) -> _Trial | None:
    """The first trial that meets every requirement, else the best attempt: the fastest one
    that fits, else the first."""
    first: _Trial | None = None
    fastest: _Trial | None = None
    for trial in trials:
        if trial.ok:
            return trial
        first = first or trial
        if trial.fits and (fastest is None or trial.speed.value > fastest.speed.value):
            fastest = trial
    return fastest or first


def _nodes(catalog: Catalog, gpu: Gpu, count: int) -> int:
    home = _home(catalog, gpu, count)
    return home[1] if home else 1


# -- local ----------------------------------------------------------------------------------
def _local(catalog: Catalog, sizing: Sizing, gpu: Gpu) -> PricedCandidate | None:
    trial = _best_trial(_trial(catalog, sizing, gpu, count, _nodes(catalog, gpu, count),
                               "infiniband")
                        for count in _local_counts(catalog, gpu))
    if trial is None:
        return None
    home = _home(catalog, gpu, trial.count)
    assert home is not None
    platform, boxes = home
    own = owning(gpu, trial.count, home, sizing.electricity_usd_per_kwh, trial.busy_hours,
                 catalog.policy)
    facts = {
        **_config_facts(catalog, gpu, trial.count, None),
        "candidate_id": f"local:{gpu.id}x{trial.count}",
        "nodes": boxes,
        "platform": platform.id,
        "platform_name": platform.name,
        "condition": gpu.purchase.condition if gpu.purchase else "new",
        "pricing": "purchase",
        "in_allowed_region": True,
        "market_allowed": True,
        "upfront_usd": tidy(own.purchase.value, 0),
        "usd_per_gpu_hour": tidy(own.running.value / trial.count, 4),
        "per_hour_usd": tidy(own.running.value, 4),
        "fixed_usd_year": tidy(own.fixed.value, 0),
        **_sized_facts(sizing, gpu, trial, own.cost.value, first_year=own.purchase.value),
    }
    return PricedCandidate(facts, own.cost, trial.speed, own.purchase)


# -- cloud ----------------------------------------------------------------------------------
def _cloud(catalog: Catalog, sizing: Sizing, offer: Offer) -> list[PricedCandidate]:
    gpu = catalog.gpus[offer.gpu]
    counts = dict(_cloud_counts(catalog, offer))
    trial = _best_trial(_trial(catalog, sizing, gpu, count, instances, offer.network)
                        for count, instances in counts.items())
    if trial is None:
        return []
    instances = counts[trial.count]
    prices: list[tuple[str, int | None, float]] = [
        ("on-demand", None, offer.on_demand_usd_per_gpu_hour)]
    if offer.spot_usd_per_gpu_hour is not None:
        prices.append(("spot", None, offer.spot_usd_per_gpu_hour))
    prices += [("reserved", t.term_months, t.usd_per_gpu_hour) for t in offer.reserved_terms]
    return [_priced(catalog, sizing, offer, gpu, trial, instances, pricing, months, rate)
            for pricing, months, rate in prices]


def _priced(catalog: Catalog, sizing: Sizing, offer: Offer, gpu: Gpu, trial: _Trial,
            instances: int, pricing: str, months: int | None, rate: float) -> PricedCandidate:
    vm = offer.vm_usd_per_instance_hour or 0.0
    cost = renting_cost(rate, trial.count, instances, vm, trial.busy_hours, pricing,
                        catalog.policy, sources=offer.sources)
    provider = catalog.providers[offer.provider]
    allowed = sizing.allowed_regions
    suffix = pricing if months is None else f"reserved-{months}m"
    facts = {
        **_config_facts(catalog, gpu, trial.count, offer),
        "candidate_id": f"cloud:{offer.id}:{suffix}x{trial.count}",
        "nodes": instances,
        "provider": provider.id,
        "provider_name": provider.name,
        "provider_label": provider.short_name or provider.id,
        "provider_kind": provider.kind,
        "provider_ecosystem": provider.ecosystem or "none",
        "pricing": pricing,
        "condition": "rented",
        "reserved_months": months or 0,
        "in_allowed_region": allowed is None or any(r in allowed for r in offer.regions),
        "market_allowed": offer.market is None or (allowed is not None
                                                   and offer.market in allowed),
        "upfront_usd": 0.0,
        "usd_per_gpu_hour": tidy(rate + vm * instances / trial.count, 4),
        "per_hour_usd": tidy(hourly_rent_usd(rate, trial.count, vm, instances), 4),
        "fixed_usd_year": tidy(cost.value, 0) if pricing == "reserved" else 0.0,
        **_sized_facts(sizing, gpu, trial, cost.value, first_year=cost.value),
    }
    return PricedCandidate(facts, cost, trial.speed)


# -- facts ----------------------------------------------------------------------------------
def _config_facts(catalog: Catalog, gpu: Gpu, count: int, offer: Offer | None) -> dict[str, Any]:
    """What the configuration is, independent of the work (built once per catalog)."""
    found: dict[str, Any] = catalog.derived(
        ("config_facts", gpu.id, count, offer.id if offer else None), _make_config_facts,
        catalog, gpu, count, offer)
    return found


def _make_config_facts(catalog: Catalog, gpu: Gpu, count: int,
                       offer: Offer | None) -> dict[str, Any]:
    return {
        "gpu": gpu.id,
        "gpu_name": gpu.name,
        "gpu_label": gpu.label,
        "vendor": gpu.vendor,
        "count": count,
        "where": "local" if offer is None else "cloud",
        "provider": "none",
        "provider_name": "owned",
        "provider_label": "owned",
        "provider_kind": "local",
        "provider_ecosystem": "none",
        "offer": "none" if offer is None else offer.id,
        "instance": "" if offer is None or offer.instance is None else offer.instance,
        "regions": "" if offer is None else ",".join(offer.regions),
        "market": "" if offer is None or offer.market is None else offer.market,
        "smallest_shape": count if offer is None else offer.shapes[0],
        "multi_node": offer is not None and offer.multi_node,
        "form": gpu.form,
        "socket": gpu.socket,
        "vram_gib": tidy(gpu.vram_gib, 2),
        "vram_total_gib": tidy(gpu.vram_gib * count, 2),
        "nvlink": gpu.nvlink,
        "bf16": gpu.bf16,
        "ecc": gpu.ecc,
        "datacenter_licence": gpu.datacenter_licence,
        "mig": gpu.mig,
        "tdp_w": gpu.tdp_w,
        "total_tdp_w": gpu.tdp_w * count,
        "release_year": gpu.release_year,
        "is_newest_generation": gpu.architecture == newest_architecture(catalog),
        "tflops_total": tidy(gpu.training_tflops * count, 1),
    }


def _sized_facts(sizing: Sizing, gpu: Gpu, trial: _Trial, cost: float,
                 first_year: float) -> dict[str, Any]:
    """What the configuration does for this work and what it costs."""
    single = sizing.single_gpu_gib
    return {
        "vram_needed_gib": trial.peak,
        "fits": trial.fits,
        "gradient_checkpointing_on": trial.checkpointing,
        "effective_tflops": tidy(trial.speed.value, 1),
        "busy_hours_per_year": tidy(trial.busy_hours, 1),
        "gpu_hours_per_year": tidy(trial.busy_hours * trial.count, 1),
        "utilisation": tidy(min(trial.busy_hours / 8760, MAX_RATIO), 4),
        "within_year": trial.within_year,
        "days_per_run": None if trial.days_per_run is None else tidy(trial.days_per_run, 2),
        "meets_deadline": trial.meets_deadline,
        "cost_usd_year": tidy(cost, 0),
        "over_budget": first_year > sizing.budget_usd,
        "budget_ratio": tidy(min(first_year / sizing.budget_usd, MAX_RATIO), 3)
        if sizing.budget_usd > 0 else 1000.0,
        "vram_headroom_ratio": tidy(gpu.vram_gib / trial.peak, 3) if trial.peak else 0.0,
        "vram_ratio": tidy(gpu.vram_gib * trial.count / single, 3) if single else 0.0,
    }


def newest_architecture(catalog: Catalog) -> str:
    """The architecture of the most recently released GPU in the catalog."""
    return catalog.derived(("newest_architecture",), lambda: max(
        catalog.gpus.values(), key=lambda g: (g.release_year, g.id)).architecture)


def with_ratios(candidates: list[PricedCandidate], eligible: Mapping[str, bool]) -> None:
    """Add each candidate's cost relative to the cheapest eligible one: overall, on its side
    (owned or rented), and among its like (same side, kind of provider and pricing; among
    hyperscalers the same provider, since a team works in one ecosystem): what the rules
    weigh a preference against."""
    groups: dict[str, Callable[[Mapping[str, Any]], str]] = {
        "cost_vs_cheapest": lambda f: "all",
        "cost_vs_cheapest_same_side": lambda f: str(f["where"]),
        "cost_vs_cheapest_like": lambda f: f"{f['where']}/{f['provider_kind']}/{f['pricing']}"
        + (f"/{f['provider']}" if f["provider_kind"] == "hyperscaler" else ""),
    }
    cheapest: dict[tuple[str, str], float] = {}
    for cand in candidates:
        if not eligible.get(cand.id, False):
            continue
        cost = float(cand.facts["cost_usd_year"])
        for name, key in groups.items():
            slot = (name, key(cand.facts))
            cheapest[slot] = min(cheapest.get(slot, math.inf), cost)
    for cand in candidates:
        cost = float(cand.facts["cost_usd_year"])
        for name, key in groups.items():
            base = cheapest.get((name, key(cand.facts)))
            cand.facts[name] = None if not base else tidy(min(cost / base, MAX_RATIO), 3)
