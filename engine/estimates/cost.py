"""Costs: local TCO, cloud cost, the break-even hours between them, and API cost."""

from __future__ import annotations

import math

from engine.catalog.models import ApiOffer, Gpu, Policy
from engine.errors import CatalogError
from engine.estimates.trace import Figure, figure


def boxes_needed(gpu: Gpu, count: int, policy: Policy) -> int:
    """Machines needed to house ``count`` GPUs (consumer boxes hold a limited number)."""
    per_box = (
        policy.max_consumer_gpus_per_box.value
        if gpu.form == "consumer"
        else policy.max_gpus_per_cloud_node.value
    )
    return max(1, math.ceil(count / per_box))


def purchase_cost(gpu: Gpu, count: int, policy: Policy) -> Figure:
    """Up-front hardware cost: the cards plus the machines around them."""
    if gpu.purchase is None:
        raise CatalogError(f"GPU '{gpu.id}' has no purchase price in the catalog")
    platform = policy.platform_cost_usd[gpu.form]
    boxes = boxes_needed(gpu, count, policy)
    units = count if gpu.form == "datacenter" else boxes
    unit_name = "GPUs" if gpu.form == "datacenter" else "boxes"
    return figure(
        gpu.purchase.mid_usd * count + platform.value * units, "USD",
        f"card price (mid of range) × count + platform cost × {unit_name}",
        [*gpu.purchase.sources, *platform.sources],
        card_usd=gpu.purchase.mid_usd, count=count, platform_usd=platform.value, units=units,
    )


def running_cost_per_hour(gpu: Gpu, count: int, electricity_usd_per_kwh: float,
                          policy: Policy) -> Figure:
    """Electricity (with cooling) per busy hour for ``count`` GPUs and their machines."""
    boxes = boxes_needed(gpu, count, policy)
    watts = gpu.tdp_w * count + policy.platform_watts.value * boxes
    factor = policy.cooling_power_factor.value
    return figure(
        watts / 1000 * factor * electricity_usd_per_kwh, "USD/hour",
        "(TDP × count + platform W × boxes) ÷ 1000 × cooling factor × $/kWh",
        [*gpu.sources, *policy.platform_watts.sources, *policy.cooling_power_factor.sources,
         "price.electricity"],
        tdp_w=gpu.tdp_w, count=count, platform_w=policy.platform_watts.value, boxes=boxes,
        cooling_factor=factor, usd_per_kwh=electricity_usd_per_kwh,
    )


def local_tco(gpu: Gpu, count: int, hours_per_year: float, electricity_usd_per_kwh: float,
              policy: Policy, years: float | None = None) -> Figure:
    """Total cost of owning over ``years`` (default: the amortisation period)."""
    years = policy.amortisation_years.value if years is None else years
    buy = purchase_cost(gpu, count, policy)
    run = running_cost_per_hour(gpu, count, electricity_usd_per_kwh, policy)
    upkeep = policy.maintenance_fraction_per_year.value
    total = buy.value * (1 + upkeep * years) + run.value * hours_per_year * years
    return figure(
        total, "USD",
        "purchase × (1 + maintenance × years) + running $/h × hours/year × years",
        [*buy.sources, *run.sources, *policy.maintenance_fraction_per_year.sources,
         *policy.amortisation_years.sources, "price.local-tco-parts"],
        purchase_usd=buy.value, running_usd_per_hour=run.value, maintenance=upkeep,
        hours_per_year=hours_per_year, years=years,
    )


def cloud_cost(usd_per_gpu_hour: float, gpus: int, hours: float, policy: Policy,
               *, level: str = "expected") -> Figure:
    """Rental cost of ``gpus`` GPUs for ``hours`` busy hours, with hidden costs added."""
    over = getattr(policy.hidden_cloud_overhead, level)
    return figure(
        cloud_cost_usd(usd_per_gpu_hour, gpus, hours, policy, level=level), "USD",
        "$/GPU-hour × GPUs × hours × (1 + hidden overhead)",
        policy.hidden_cloud_overhead.sources,
        usd_per_gpu_hour=usd_per_gpu_hour, gpus=gpus, hours=hours, hidden_overhead=over,
    )


def cloud_cost_usd(usd_per_gpu_hour: float, gpus: int, hours: float, policy: Policy,
                   *, level: str = "expected") -> float:
    """The value of :func:`cloud_cost` (unrounded), without building its explanation."""
    over: float = getattr(policy.hidden_cloud_overhead, level)
    return usd_per_gpu_hour * gpus * hours * (1 + over)


def break_even_hours(local_gpu: Gpu, local_count: int, cloud_gpu: Gpu,
                     cloud_usd_per_gpu_hour: float, electricity_usd_per_kwh: float,
                     policy: Policy) -> Figure | None:
    """Busy hours after which owning ``local_count`` × ``local_gpu`` beats renting, like for like.

    One local hour does the work of (local throughput ÷ cloud GPU throughput) cloud GPU-hours;
    owning wins once the saved rent has paid the purchase and its maintenance over the
    amortisation period. None when renting is cheaper per hour than running the local cards.
    """
    ratio = local_gpu.training_tflops * local_count / cloud_gpu.training_tflops
    over = policy.hidden_cloud_overhead.expected
    rent = ratio * cloud_usd_per_gpu_hour * (1 + over)
    run = running_cost_per_hour(local_gpu, local_count, electricity_usd_per_kwh, policy)
    buy = purchase_cost(local_gpu, local_count, policy)
    years = policy.amortisation_years.value
    fixed = buy.value * (1 + policy.maintenance_fraction_per_year.value * years)
    saving = rent - run.value
    if saving <= 0:
        return None
    return figure(
        fixed / saving, "hours",
        "purchase × (1 + maintenance × years) ÷ (equivalent rent $/h − local running $/h); "
        "equivalent rent = cloud $/GPU-h × (1 + hidden overhead) × local ÷ cloud TFLOPS",
        ["price.break-even-4090", "price.onprem-break-even", *buy.sources, *run.sources,
         *policy.hidden_cloud_overhead.sources],
        purchase_usd=buy.value, maintenance=policy.maintenance_fraction_per_year.value,
        years=years, throughput_ratio=ratio, cloud_usd_per_gpu_hour=cloud_usd_per_gpu_hour,
        hidden_overhead=over, equivalent_rent_usd_per_hour=rent, running_usd_per_hour=run.value,
    )


def api_cost_per_month(tokens_m_per_month: float, api: ApiOffer, policy: Policy) -> Figure:
    """Monthly API bill for a token volume, blending input and output prices."""
    share = policy.api_output_token_share.value
    blended = api.input_usd_per_m_tokens * (1 - share) + api.output_usd_per_m_tokens * share
    return figure(
        tokens_m_per_month * blended, "USD/month",
        "M tokens/month × (input $/M × (1 − output share) + output $/M × output share)",
        [*api.sources, *policy.api_output_token_share.sources],
        tokens_m_per_month=tokens_m_per_month, input_usd_per_m=api.input_usd_per_m_tokens,
        output_usd_per_m=api.output_usd_per_m_tokens, output_share=share,
    )
