"""What a configuration costs for a year's work: owning it, renting it, and where they cross.

Owning: the cards and the platform that holds them (desktop, workstation, server, HGX node),
networking for multi-node clusters, written off over the amortisation period minus their
resale value at its end, upkeep, and electricity (cards and platform) with cooling for the busy
hours. Renting: the busy hours at the offer's $/GPU-hour (plus the VM a GPU-only price needs,
plus work redone after spot interruptions), or every hour of a reserved term, with the hidden
costs of the cloud on top. Each figure carries its formula, inputs and sources.

Every cost here is a line in the year's work (:class:`CostLine`: a fixed part a year plus a
cost per unit of work), which is what the break-even, the payback and the chart are made of.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.catalog.models import ApiOffer, Gpu, Platform, Policy
from engine.errors import CatalogError
from engine.estimates.figure import Figure, figure


def platforms_taking(gpu: Gpu, platforms: Sequence[Platform]) -> list[Platform]:
    """The platforms that take ``gpu``: its form and its socket."""
    return [p for p in platforms if p.takes(gpu)]


def platform_for(gpu: Gpu, count: int, platforms: Sequence[Platform], *,
                 separate: bool = False) -> tuple[Platform, int] | None:
    """The platform that holds ``count`` × ``gpu`` and how many of it: the smallest single box
    of the card's form and socket, else nodes of the largest multi-node one, else (for jobs
    that each run on one box, ``separate``) whole boxes of the largest single one, side by
    side with no fabric between them (None: no home)."""
    fitting = sorted(platforms_taking(gpu, platforms),
                     key=lambda p: (p.max_gpus, p.price.mid_usd, p.id))
    for platform in fitting:
        if platform.max_gpus >= count:
            return platform, 1
    nodes = [p for p in fitting if p.multi_node]
    if not nodes and separate and fitting:
        box = max(fitting, key=lambda p: (p.max_gpus, -p.price.mid_usd, p.id))
        return (box, count // box.max_gpus) if count % box.max_gpus == 0 else None
    if not nodes:
        return None
    largest = max(nodes, key=lambda p: (p.max_gpus, -p.price.mid_usd, p.id))
    return largest, math.ceil(count / largest.max_gpus)


def most_in_one_place(gpu: Gpu, count: int, platforms: Sequence[Platform]) -> int:
    """The most of ``count`` × ``gpu`` that one box, or one cluster of nodes, holds (0 where
    no platform takes the card): where a job of a team's own cards runs."""
    fitting = platforms_taking(gpu, platforms)
    if not fitting:
        return 0
    if any(p.multi_node for p in fitting):
        return count
    return min(count, max(p.max_gpus for p in fitting))


def purchase_cost(gpu: Gpu, count: int, platform: Platform, boxes: int,
                  policy: Policy) -> Figure:
    """Up-front cost: the cards, the platforms that hold them and, across nodes, InfiniBand."""
    if gpu.purchase is None:
        raise CatalogError(f"GPU '{gpu.id}' has no purchase price in the catalog")
    # InfiniBand joins the nodes of a cluster; boxes of a pool side by side need none
    network = (policy.infiniband_per_node_usd.value * boxes
               if boxes > 1 and platform.multi_node else 0.0)
    cards = gpu.purchase.mid_usd * count
    return figure(
        cards + platform.price.mid_usd * boxes + network, "USD",
        "card price (mid of range) × cards + platform price × boxes + InfiniBand × nodes "
        "(several nodes only)",
        [*gpu.purchase.sources, *platform.price.sources,
         *(policy.infiniband_per_node_usd.sources if network else [])],
        card_usd=gpu.purchase.mid_usd, cards=count, cards_usd=cards, platform=platform.id,
        platform_usd=platform.price.mid_usd, boxes=boxes, network_usd=network,
    )


def running_cost_per_hour(gpu: Gpu, count: int, platform: Platform, boxes: int,
                          electricity_usd_per_kwh: float, policy: Policy) -> Figure:
    """Electricity with cooling per busy hour: the cards and the platforms around them."""
    platform_w = platform.watts_for(gpu.id)
    watts = gpu.tdp_w * count + platform_w * boxes
    factor = policy.cooling_power_factor.value
    return figure(
        watts / 1000 * factor * electricity_usd_per_kwh, "USD/hour",
        "(card TDP × cards + platform W × boxes) ÷ 1000 × cooling factor × $/kWh",
        [*gpu.sources, *platform.sources, *policy.cooling_power_factor.sources,
         "price.electricity"],
        tdp_w=gpu.tdp_w, cards=count, platform_w=platform_w, boxes=boxes,
        cooling_factor=factor, usd_per_kwh=electricity_usd_per_kwh,
    )


def owning_fixed_per_year(buy: Figure, gpu: Gpu, policy: Policy) -> Figure:
    """What owning costs a year whether or not it computes: the purchase written off over the
    amortisation period, less the cards' resale value at its end, plus upkeep."""
    years = policy.amortisation_years.value
    resale = policy.resale_fraction[gpu.form].value * float(buy.inputs["cards_usd"] or 0)
    upkeep = policy.maintenance_fraction_per_year.value
    return figure(
        (buy.value - resale) / years + buy.value * upkeep, "USD/year",
        "(purchase − resale of the cards) ÷ amortisation years + purchase × maintenance",
        [*buy.sources, *policy.amortisation_years.sources,
         *policy.resale_fraction[gpu.form].sources,
         *policy.maintenance_fraction_per_year.sources, "price.local-tco-parts"],
        purchase_usd=buy.value, resale_usd=resale, years=years, maintenance=upkeep,
    )


@dataclass(frozen=True)
class CostLine:
    """Cost a year as a line in the year's work: ``fixed_usd + usd_per_unit × work``."""

    fixed_usd: float
    usd_per_unit: float

    @classmethod
    def through(cls, fixed_usd: float, cost_usd: float, work: float) -> CostLine:
        """The line with this fixed part that costs ``cost_usd`` for ``work`` units."""
        return cls(fixed_usd, (cost_usd - fixed_usd) / work)

    def at(self, work: float) -> float:
        """The cost a year for ``work`` units of work."""
        return self.fixed_usd + self.usd_per_unit * work


def owning_cost(fixed: Figure, running: Figure, busy_hours: float) -> Figure:
    """Owning for a year's work: the fixed part plus electricity for the busy hours."""
    return figure(
        CostLine(fixed.value, running.value).at(busy_hours), "USD/year",
        "fixed cost a year + running $/hour × busy hours a year",
        [*fixed.sources, *running.sources],
        fixed_usd_per_year=fixed.value, running_usd_per_hour=running.value,
        busy_hours_per_year=busy_hours, purchase_usd=fixed.inputs["purchase_usd"],
    )


@dataclass(frozen=True)
class Owning:
    """What owning a configuration costs for a year's work, each part a figure with its
    formula, inputs and sources."""

    purchase: Figure
    """Up front (USD)."""
    fixed: Figure
    """A year whatever the work: write-off less resale, and upkeep (USD/year)."""
    running: Figure
    """Electricity with cooling per busy hour (USD/hour)."""
    cost: Figure
    """For the year's work, all in (USD/year)."""
    busy_hours: float

    @property
    def line(self) -> CostLine:
        """The cost a year by busy hours."""
        return CostLine(self.fixed.value, self.running.value)

    @property
    def running_usd_year(self) -> float:
        """Electricity with cooling for the year's busy hours."""
        return self.running.value * self.busy_hours


def already_owned(gpu: Gpu, count: int, home: tuple[Platform, int],
                  electricity_usd_per_kwh: float, busy_hours: float, policy: Policy) -> Owning:
    """GPUs the team already owns: their purchase is spent and their upkeep is paid whether
    they train or idle, so the work costs only their electricity; what selling them would
    bring (``resale_usd``) and save (``upkeep_usd_per_year``) are inputs of the fixed part,
    for the "sell them" comparison."""
    platform, boxes = home
    bought = (purchase_cost(gpu, count, platform, boxes, policy) if gpu.purchase is not None
              else figure(0.0, "USD", "no purchase price in the catalog: upkeep and resale "
                          "unknown", [*gpu.sources], cards_usd=0.0))
    resale = policy.resale_fraction[gpu.form].value * float(bought.inputs["cards_usd"] or 0)
    spent = figure(0.0, "USD", "already owned: the purchase is spent",
                   [*bought.sources, *policy.resale_fraction[gpu.form].sources],
                   **{**bought.inputs, "catalog_purchase_usd": bought.value,
                      "resale_usd": resale})
    upkeep = policy.maintenance_fraction_per_year.value
    fixed = figure(0.0, "USD/year",
                   "none: the purchase is spent and the upkeep (purchase value × maintenance) "
                   "is paid whether the GPUs train or idle",
                   [*bought.sources, *policy.maintenance_fraction_per_year.sources,
                    "price.local-tco-parts"],
                   purchase_usd=0.0, catalog_purchase_usd=bought.value, maintenance=upkeep,
                   upkeep_usd_per_year=bought.value * upkeep, resale_usd=resale)
    running = running_cost_per_hour(gpu, count, platform, boxes, electricity_usd_per_kwh,
                                    policy)
    return Owning(spent, fixed, running, owning_cost(fixed, running, busy_hours), busy_hours)


def adding_to_owned(gpu: Gpu, owned: int, count: int, owned_home: tuple[Platform, int],
                    home: tuple[Platform, int], electricity_usd_per_kwh: float,
                    busy_hours: float, policy: Policy) -> Owning:
    """Buying ``count − owned`` more × ``gpu`` beside the ``owned`` the team has: the purchase
    is what ``count`` costs beyond the ``owned`` (the cards added, a larger box or another
    node, the network across nodes), written off and kept up as any purchase; the power is
    that of every card. The upkeep of the GPUs owned is paid either way, so it is not counted."""
    platform, boxes = home
    whole = purchase_cost(gpu, count, platform, boxes, policy)
    have = purchase_cost(gpu, owned, *owned_home, policy)
    added = count - owned
    buy = figure(max(0.0, whole.value - have.value), "USD",
                 "purchase of the larger configuration − purchase of the one owned (the "
                 "cards added, a larger box or another node, InfiniBand across nodes)",
                 whole.sources, card_usd=whole.inputs["card_usd"], cards=added,
                 cards_usd=float(whole.inputs["card_usd"] or 0) * added, owned_cards=owned,
                 platform=platform.id, boxes=boxes, whole_usd=whole.value,
                 owned_usd=have.value)
    fixed = owning_fixed_per_year(buy, gpu, policy)
    running = running_cost_per_hour(gpu, count, platform, boxes, electricity_usd_per_kwh,
                                    policy)
    return Owning(buy, fixed, running, owning_cost(fixed, running, busy_hours), busy_hours)


def owning(gpu: Gpu, count: int, home: tuple[Platform, int], electricity_usd_per_kwh: float,
           busy_hours: float, policy: Policy) -> Owning:
    """Owning ``count`` × ``gpu`` in its ``home`` (platform, boxes: :func:`platform_for`),
    busy ``busy_hours`` hours a year: the one place owning's parts are put together."""
    platform, boxes = home
    buy = purchase_cost(gpu, count, platform, boxes, policy)
    fixed = owning_fixed_per_year(buy, gpu, policy)
    running = running_cost_per_hour(gpu, count, platform, boxes, electricity_usd_per_kwh,
                                    policy)
    return Owning(buy, fixed, running, owning_cost(fixed, running, busy_hours), busy_hours)


def hourly_rent_usd(usd_per_gpu_hour: float, gpus: int, vm_usd_per_instance_hour: float,
                    instances: int) -> float:
    """What a rented configuration costs per hour: its GPUs and the VMs a GPU-only price
    needs."""
    return usd_per_gpu_hour * gpus + vm_usd_per_instance_hour * instances


def all_in_usd_per_gpu_hour(usd_per_gpu_hour: float, gpus: int,
                            vm_usd_per_instance_hour: float, instances: int) -> float:
    """A rented GPU-hour all in: the offer's rate plus the GPU's share of the VMs a GPU-only
    price needs (the one place a $/GPU-hour is made; ``estimate cost`` and ``recommend``
    both read it)."""
    return hourly_rent_usd(usd_per_gpu_hour, gpus, vm_usd_per_instance_hour,
                           instances) / gpus


def renting_cost(hourly_usd: float, hours: float, pricing: str, policy: Policy, *,
                 sources: Sequence[str] = (), always_on: bool = False,
                 block_days: int | None = None, waves: bool = False,
                 **parts: float | int | str | None) -> Figure:
    """Renting for a year's work, hidden cloud costs included: the configuration's $/hour
    for the hours billed, which are every run's billed hours (start-up, training and, on
    spot, the expected rework), the blocks bought for each run, or every hour a committed
    term covers; a pool every hour of the year (``always_on``), or for each wave of the
    jobs it runs at once (``waves``: ``runs`` counts the waves)."""
    over = policy.hidden_cloud_overhead.expected
    if always_on:
        formula = ("(GPUs × $/GPU-hour + instances × VM $/hour) × every hour of the year (a "
                   "pool that must be there whenever jobs arrive) × (1 + hidden overhead)")
    elif block_days is not None:
        formula = ("(GPUs × $/GPU-hour + instances × VM $/hour) × runs × hours of the block "
                   f"bought for each run (start-up + training in whole {block_days}-day "
                   "steps, at least the shortest block) × (1 + hidden overhead)")
    elif pricing == "reserved":
        formula = ("(GPUs × $/GPU-hour + instances × VM $/hour) × hours the committed term "
                   "covers a year × (1 + hidden overhead)")
    elif waves:
        formula = ("(GPUs × $/GPU-hour + instances × VM $/hour) × waves a year (the year's "
                   "jobs ÷ the jobs at once, each job on its share while it runs) × billed "
                   "hours a wave (start-up + one job's training on its share, in the billing "
                   "increment) × (1 + hidden overhead)")
    else:
        formula = ("(GPUs × $/GPU-hour + instances × VM $/hour) × runs × billed hours a run "
                   "(start-up + training" + (" + expected spot rework" if pricing == "spot"
                                              else "") + ", in the billing increment) × "
                   "(1 + hidden overhead)")
    return figure(hourly_usd * hours * (1 + over), "USD/year", formula,
                  [*sources, *policy.hidden_cloud_overhead.sources],
                  hourly_usd=hourly_usd, hours=hours, hidden_overhead=over, pricing=pricing,
                  block_days=block_days, **parts)


def crossing(own: CostLine, rent: CostLine) -> float | None:
    """The work above which ``own`` costs less than ``rent``: None where it never does; zero
    or below where it does at any work."""
    saving = rent.usd_per_unit - own.usd_per_unit
    if saving <= 0:
        return None
    return (own.fixed_usd - rent.fixed_usd) / saving


def break_even(own: CostLine, rent: CostLine, *, unit: str, sources: Sequence[str],
               own_label: str, rent_label: str) -> Figure | None:
    """The work (in ``unit``) above which owning costs less than renting, both as lines in
    the work. None when owning never catches up."""
    value = crossing(own, rent)
    if value is None or value <= 0:
        return None
    return figure(
        value, unit,
        "(owning's fixed cost a year − renting's) ÷ (renting's − owning's cost per unit of "
        "work): above it owning the one costs less than renting the other for the same work",
        sources, own_fixed_usd=own.fixed_usd, own_usd_per_unit=own.usd_per_unit,
        rent_fixed_usd=rent.fixed_usd, rent_usd_per_unit=rent.usd_per_unit, own=own_label,
        rent=rent_label,
    )


def break_even_lines(inputs: Mapping[str, Any]) -> tuple[CostLine, CostLine]:
    """Owning's and renting's lines back from the inputs of a :func:`break_even` figure (as
    a decision's trace holds them)."""
    return (CostLine(float(inputs["own_fixed_usd"]), float(inputs["own_usd_per_unit"])),
            CostLine(float(inputs["rent_fixed_usd"]), float(inputs["rent_usd_per_unit"])))


def owning_lines(inputs: Mapping[str, Any]) -> tuple[CostLine, ...]:
    """Owning's lines in a :func:`break_even` figure's inputs: the purchase that crosses
    renting and, where the pick is another purchase (``pick_fixed_usd``), the pick's."""
    own = break_even_lines(inputs)[0]
    if "pick_fixed_usd" not in inputs:
        return (own,)
    return (own, CostLine(float(inputs["pick_fixed_usd"]), float(inputs["pick_usd_per_unit"])))


def payback_years(upfront_usd: float, own_running_usd_year: float,
                  rent_usd_year: float) -> float | None:
    """Years until a purchase is paid back by the rent it saves, less what running the
    owned configuration costs (None: it never is)."""
    saving = rent_usd_year - own_running_usd_year
    if saving <= 0:
        return None
    return upfront_usd / saving


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
