"""Hardware candidates: one fact per feasible configuration, sized for the decided method.

Local: every buyable GPU with the fewest cards that hold the job (consumer boxes capped by
policy). Cloud: every offer with the GPU count that holds the job, priced with the decided
pricing (on-demand when the offer lacks it). Offers outside the residency rules are still
candidates: the residency rules exclude them, so the output can say which and why.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from engine.answers import Answers
from engine.catalog.load import Catalog
from engine.catalog.models import Gpu, Offer
from engine.estimates.cost import cloud_cost, running_cost_per_hour
from engine.estimates.memory import Method, peak_on
from engine.estimates.trace import tidy
from engine.facts import (
    Facts,
    cloud_configs,
    cloud_count,
    local_configs,
    memory_of,
    memory_request,
    offer_allowed,
    purchase_of,
    scratch_reasons,
)


class Cost(BaseModel):
    """What a configuration costs: up front, per busy hour, per year at the team's hours."""

    model_config = ConfigDict(frozen=True, defer_build=True)

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


def build_candidates(facts: Facts, answers: Answers, catalog: Catalog,
                     choices: dict[str, str]) -> list[dict[str, Any]]:
    """Every candidate configuration as a flat fact dict (JSON-ready, durable-safe)."""
    assert facts.shape is not None
    method = candidate_method(answers, choices.get("method", "qlora"))
    req = memory_request(answers, facts.shape, method)
    pricing = choices.get("pricing", "on-demand")
    newest = facts.values["newest_release_year"]
    single_gpu_need = memory_of(catalog, req).total_gb
    out: list[dict[str, Any]] = []
    # A run's length matters for the run we advise: not for pretraining we advise against.
    advised_run = answers.workload == "fine-tune" or scratch_reasons(answers) > 0
    flops = facts.training.flops if facts.training is not None and advised_run else None
    for gpu, n in local_configs(catalog, req):
        buy = purchase_of(catalog, gpu, n)
        kwh = answers.electricity_usd_per_kwh
        run = catalog.derived(("running_cost", gpu.id, n, kwh), running_cost_per_hour, gpu, n,
                              kwh, catalog.policy)
        years = catalog.policy.amortisation_years.value
        upkeep = catalog.policy.maintenance_fraction_per_year.value
        per_year = buy.value / years + buy.value * upkeep + run.value * answers.hours_per_year
        cost = Cost(upfront_usd=tidy(buy.value, 0), per_hour_usd=tidy(run.value, 4),
                    per_year_usd=tidy(per_year, 0))
        cand = _candidate(f"local:{gpu.id}x{n}", gpu, n, "local", None, catalog, req,
                          cost, "purchase", True, True, single_gpu_need, newest, answers)
        out.append(_with_run(cand, gpu, n, n, flops, catalog))
    for offer, gpu, n in _cloud_counts(catalog, req, flops):
        price = offer.price(pricing)
        available = price is not None
        hourly = price if price is not None else offer.on_demand_usd_per_gpu_hour
        year = cloud_cost(hourly, n, answers.hours_per_year, catalog.policy)
        cost = Cost(upfront_usd=0.0, per_hour_usd=tidy(hourly * n, 4),
                    per_year_usd=tidy(year.value, 0))
        cand = _candidate(f"cloud:{offer.id}x{n}", gpu, n, "cloud", offer.provider, catalog,
                          req, cost, pricing if available else "on-demand", available,
                          offer_allowed(offer, answers), single_gpu_need, newest, answers)
        cand["regions"] = ",".join(offer.regions)
        cand["offer"] = offer.id
        out.append(_with_run(cand, gpu, n, offer.gpus_per_instance, flops, catalog))
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


def _with_run(cand: dict[str, Any], gpu: Gpu, count: int, per_instance: int,
              flops: float | None, catalog: Catalog) -> dict[str, Any]:
    cand["gpus_per_instance"] = per_instance
    cand["run_days"] = (None if flops is None
                        else tidy(run_gpu_hours(flops, gpu, catalog) / count / 24, 2))
    return cand


def _candidate(cid: str, gpu: Gpu, count: int, where: str, provider_id: str | None,
               catalog: Catalog, req: Any, cost: Cost, pricing: str, pricing_available: bool,
               allowed: bool, single_gpu_need: float, newest: int,
               answers: Answers) -> dict[str, Any]:
    provider = catalog.providers[provider_id] if provider_id else None
    per_gpu_need = catalog.derived(("peak_on", req, gpu.id, count), peak_on, req, gpu,
                                   catalog.policy, count)
    return {
        "candidate_id": cid,
        "gpu": gpu.id,
        "gpu_name": gpu.name,
        "count": count,
        "where": where,
        "provider": provider.id if provider else "none",
        "provider_name": provider.name if provider else "owned",
        "provider_kind": provider.kind if provider else "local",
        "provider_ecosystem": (provider.ecosystem or "none") if provider else "none",
        "regions": "",
        "in_allowed_region": allowed,
        "form": gpu.form,
        "vram_gb": gpu.vram_gb,
        "vram_total_gb": tidy(gpu.vram_gb * count, 2),
        "vram_needed_gb": per_gpu_need,
        "vram_ratio": tidy(gpu.vram_gb * count / single_gpu_need, 3) if single_gpu_need else 0.0,
        "vram_headroom_ratio": tidy(gpu.vram_gb / per_gpu_need, 3) if per_gpu_need else 0.0,
        "nvlink": gpu.nvlink,
        "bf16": gpu.bf16,
        "tdp_w": gpu.tdp_w,
        "total_tdp_w": gpu.tdp_w * count,
        "release_year": gpu.release_year,
        "is_newest_generation": gpu.architecture == newest_architecture(catalog),
        "tflops_total": tidy(gpu.training_tflops * count, 1),
        "upfront_usd": cost.upfront_usd,
        "per_hour_usd": cost.per_hour_usd,
        "per_year_usd": cost.per_year_usd,
        "pricing": pricing,
        "pricing_available": pricing_available,
        "over_budget": _first_year(where, cost) > answers.budget_usd,
        # capped: a (valid) budget of $5e-324 would make the ratio overflow to Infinity
        "budget_ratio": tidy(min(_first_year(where, cost) / answers.budget_usd, MAX_RATIO), 3)
        if answers.budget_usd > 0 else 1000.0,
    }


MAX_RATIO = 1e12
"""Largest budget_ratio reported (far beyond any rule threshold, still a plain number)."""


def _first_year(where: str, cost: Cost) -> float:
    """What the configuration costs in its first year: the purchase, or a year of rent."""
    return cost.upfront_usd if where == "local" else cost.per_year_usd
