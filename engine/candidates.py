"""Hardware candidates: one fact per feasible configuration, sized for the decided method.

Local: every buyable GPU with the fewest cards that hold the job (consumer boxes capped by
policy). Cloud: every offer with the GPU count that holds the job, priced with the decided
pricing (on-demand when the offer lacks it). Offers outside the residency rules are still
candidates: the residency rules exclude them, so the output can say which and why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from engine.answers import Answers
from engine.catalog.load import Catalog
from engine.catalog.models import Gpu, Offer
from engine.estimates.cost import cloud_cost_usd, running_cost_per_hour
from engine.estimates.memory import Method, peak_on
from engine.estimates.trace import tidy
from engine.facts import (
    Facts,
    cloud_configs,
    cloud_count,
    durable_fact,
    local_configs,
    memory_of,
    memory_request,
    offer_allowed,
    purchase_of,
    scratch_reasons,
)


class Cost(NamedTuple):
    """What a configuration costs: up front, per busy hour, per year at the team's hours."""

    upfront_usd: float
    per_hour_usd: float
    per_year_usd: float


def newest_architecture(catalog: Catalog) -> str:
    """The architecture of the most recently released GPU in the catalog."""
    return catalog.derived(("newest_architecture",), _newest_architecture, catalog)


def _newest_architecture(catalog: Catalog) -> str:
    return max(catalog.gpus.values(), key=lambda g: (g.release_year, g.id)).architecture


def candidate_method(answers: Answers, method_choice: str) -> Method:
    """The method candidates are sized for: pretraining only when it is what we advise."""
    if answers.workload == "pretrain" and scratch_reasons(answers):
        return "pretrain"
    return method_choice  # type: ignore[return-value]


class CandidateFacts(NamedTuple):
    """One candidate's facts in two parts: those its configuration fixes, and those that
    vary with the request (fit, cost, budget, residency, run length)."""

    fixed: Mapping[str, Any]
    """The same object whenever this catalog builds this configuration; never mutated."""
    fixed_durable: Mapping[str, Any]
    """``fixed`` as durable_rules sees it (``facts.durable_fact``), with its ``fact_id``;
    also the same object every time."""
    varying: dict[str, Any]

    @property
    def facts(self) -> dict[str, Any]:
        """Every fact of the candidate."""
        return {**self.fixed, **self.varying}


def build_candidates(facts: Facts, answers: Answers, catalog: Catalog,
                     choices: dict[str, str]) -> list[CandidateFacts]:
    """Every candidate configuration, its facts flat (JSON-ready, durable-safe)."""
    assert facts.shape is not None
    method = candidate_method(answers, choices.get("method", "qlora"))
    req = memory_request(answers, facts.shape, method)
    pricing = choices.get("pricing", "on-demand")
    single_gpu_need = memory_of(catalog, req).total_gb
    out: list[CandidateFacts] = []
    # A run's length matters for the run we advise: not for pretraining we advise against.
    advised_run = answers.workload == "fine-tune" or scratch_reasons(answers) > 0
    flops = facts.training.flops if facts.training is not None and advised_run else None
    kwh = answers.electricity_usd_per_kwh
    years = catalog.policy.amortisation_years.value
    upkeep = catalog.policy.maintenance_fraction_per_year.value
    for gpu, n in local_configs(catalog, req):
        buy = purchase_of(catalog, gpu, n)
        run = catalog.derived(("running_cost", gpu.id, n, kwh), running_cost_per_hour, gpu, n,
                              kwh, catalog.policy)
        per_year = buy.value / years + buy.value * upkeep + run.value * answers.hours_per_year
        cost = Cost(tidy(buy.value, 0), tidy(run.value, 4), tidy(per_year, 0))
        fixed = _fixed(catalog, f"local:{gpu.id}x{n}", gpu, n, None, None)
        varying = _varying(gpu, n, catalog, req, cost, "purchase", True, True,
                           single_gpu_need, answers, flops, local=True)
        out.append(CandidateFacts(*fixed, varying))
    for offer, gpu, n in _cloud_counts(catalog, req, flops):
        price = offer.price(pricing)
        available = price is not None
        hourly = price if price is not None else offer.on_demand_usd_per_gpu_hour
        # the rounding of cloud_cost's Figure, then to whole dollars
        year = tidy(cloud_cost_usd(hourly, n, answers.hours_per_year, catalog.policy))
        cost = Cost(0.0, tidy(hourly * n, 4), tidy(year, 0))
        fixed = _fixed(catalog, f"cloud:{offer.id}x{n}", gpu, n, offer.provider, offer)
        varying = _varying(gpu, n, catalog, req, cost, pricing if available else "on-demand",
                           available, offer_allowed(offer, answers), single_gpu_need, answers,
                           flops, local=False)
        out.append(CandidateFacts(*fixed, varying))
    return out


def run_gpu_hours(flops: float, gpu: Gpu, catalog: Catalog) -> float:
    """Expected GPU-hours of a run of ``flops`` on this GPU (expected MFU)."""
    return flops / (gpu.training_tflops * 1e12 * catalog.policy.mfu.expected) / 3600


def _cloud_counts(catalog: Catalog, req: Any,
                  flops: float | None) -> list[tuple[Offer, Gpu, int]]:
    """Each offer at the count that holds the job and, for training runs, also at the count
    that finishes one run within the policy's target days."""
    out = []
    limit = int(catalog.policy.max_gpus_considered.value)
    days = catalog.policy.target_run_days.value
    for offer, gpu, n in cloud_configs(catalog, req, catalog.offers):
        out.append((offer, gpu, n))
        if flops is None:
            continue
        wanted = cloud_count(offer, math.ceil(run_gpu_hours(flops, gpu, catalog) / (days * 24)))
        if n < wanted <= limit:
            out.append((offer, gpu, wanted))
    return out


def _fixed(catalog: Catalog, cid: str, gpu: Gpu, count: int, provider_id: str | None,
           offer: Offer | None) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """The facts a configuration fixes, and their durable_rules form: built once per
    catalog, so that every request gets the same two objects for the same configuration."""
    return catalog.derived(("candidate", cid), _make_fixed, catalog, cid, gpu, count,
                           provider_id, offer)


def _make_fixed(catalog: Catalog, cid: str, gpu: Gpu, count: int, provider_id: str | None,
                offer: Offer | None) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    provider = catalog.providers[provider_id] if provider_id else None
    fixed: dict[str, Any] = {
        "candidate_id": cid,
        "gpu": gpu.id,
        "gpu_name": gpu.name,
        "count": count,
        "where": "local" if offer is None else "cloud",
        "provider": provider.id if provider else "none",
        "provider_name": provider.name if provider else "owned",
        "provider_kind": provider.kind if provider else "local",
        "provider_ecosystem": (provider.ecosystem or "none") if provider else "none",
        "regions": "" if offer is None else ",".join(offer.regions),
        "form": gpu.form,
        "vram_gb": gpu.vram_gb,
        "vram_total_gb": tidy(gpu.vram_gb * count, 2),
        "nvlink": gpu.nvlink,
        "bf16": gpu.bf16,
        "tdp_w": gpu.tdp_w,
        "total_tdp_w": gpu.tdp_w * count,
        "release_year": gpu.release_year,
        "is_newest_generation": gpu.architecture == newest_architecture(catalog),
        "tflops_total": tidy(gpu.training_tflops * count, 1),
        "gpus_per_instance": count if offer is None else offer.gpus_per_instance,
    }
    if offer is not None:
        fixed["offer"] = offer.id
    return MappingProxyType(fixed), MappingProxyType({**durable_fact(fixed), "fact_id": cid})


def _varying(gpu: Gpu, count: int, catalog: Catalog, req: Any, cost: Cost, pricing: str,
             pricing_available: bool, allowed: bool, single_gpu_need: float,
             answers: Answers, flops: float | None, *, local: bool) -> dict[str, Any]:
    per_gpu_need = catalog.derived(("peak_on", req, gpu.id, count), peak_on, req, gpu,
                                   catalog.policy, count)
    # what the first year costs: the purchase, or a year of rent
    first_year = cost.upfront_usd if local else cost.per_year_usd
    return {
        "in_allowed_region": allowed,
        "vram_needed_gb": per_gpu_need,
        "vram_ratio": tidy(gpu.vram_gb * count / single_gpu_need, 3) if single_gpu_need else 0.0,
        "vram_headroom_ratio": tidy(gpu.vram_gb / per_gpu_need, 3) if per_gpu_need else 0.0,
        "upfront_usd": cost.upfront_usd,
        "per_hour_usd": cost.per_hour_usd,
        "per_year_usd": cost.per_year_usd,
        "pricing": pricing,
        "pricing_available": pricing_available,
        "over_budget": first_year > answers.budget_usd,
        # capped: a (valid) budget of $5e-324 would make the ratio overflow to Infinity
        "budget_ratio": tidy(min(first_year / answers.budget_usd, MAX_RATIO), 3)
        if answers.budget_usd > 0 else 1000.0,
        "run_days": None if flops is None
        else tidy(run_gpu_hours(flops, gpu, catalog) / count / 24, 2),
    }


MAX_RATIO = 1e12
"""Largest budget_ratio reported (far beyond any rule threshold, still a plain number)."""
