"""Hardware candidates: every configuration a team could buy or rent, priced for the same work.

Built once the request rules have decided which methods are open. For each method, each
buyable GPU (on the platform of its form) and each training offer (at each pricing it is sold
at, each committed term included): the count that does the year's work for the least, among
those that hold the job in memory, keep owned and committed capacity within the busy share of
the year it is sized for, and finish a run, start-up included, within the team's limit. A
rented run pays its start-up and its finish on the whole configuration, in the provider's
billing increments; a spot run also its expected rework. The team's own plan is a candidate of
its own. A configuration that cannot meet a requirement keeps its best attempt and says which
failed, so that the rules can exclude it with a reason the user can read.

Where several methods are open, each is priced on each configuration: a worse method that is
no cheaper than a better one on the same hardware is dropped, and the rules weigh the rest
(``better_method_cost_ratio``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, NamedTuple, TypeVar

from engine.catalog.load import Catalog
from engine.catalog.models import Gpu, Location, Network, Offer, Policy, Provider
from engine.decide.configuration import Configuration, config_label, run_length
from engine.decide.placements import (
    Trial,
    cloud_counts,
    home,
    instance_sizes,
    local_counts,
    nodes_of,
    pool_box_counts,
    pool_instance_counts,
    trial,
)
from engine.decide.pools import Layout, Span, layout, spread
from engine.estimates.cost import (
    Owning,
    adding_to_owned,
    all_in_usd_per_gpu_hour,
    already_owned,
    hourly_rent_usd,
    most_in_one_place,
    owning,
    owning_cost,
    renting_cost,
)
from engine.estimates.figure import Figure, dollars, tidy
from engine.estimates.runs import (
    billed_hours,
    block_hours,
    checkpoint_gb,
    committed_hours,
    run_overhead,
    spot_overhead,
    spot_rework,
)
from engine.estimates.throughput import in_fp8, mfu
from engine.facts.build import METHOD_QUALITY, Job, Sizing, needed_on

MAX_RATIO = 1e12
"""Largest ratio reported (far beyond any rule threshold, still a plain number)."""


@dataclass(frozen=True)
class PricedCandidate:
    """One priced configuration: its facts for the rules and the figures behind its cost
    (the cost's own figure is made when first asked for: most configurations are only
    ranked, never shown)."""

    facts: dict[str, Any]
    make_cost: Callable[[], Figure]
    speed: Figure
    purchase: Figure | None = None
    start_up: Figure | None = None
    make_spot: Callable[[], Figure | None] = lambda: None
    hardware: str = ""
    """What it is without its method: candidates of several methods on the same hardware
    share it."""
    low_cost: float = 0.0
    high_cost: float = 0.0
    """The cost for the work at the high and low ends of the throughput range."""
    config: Configuration = field(init=False, repr=False, compare=False)
    """Its facts as typed fields, made with it (the facts added later, for the rules only,
    are not among them)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "config", Configuration.of(self.facts))

    @property
    def id(self) -> str:
        """The candidate id."""
        return self.config.candidate_id

    @cached_property
    def cost(self) -> Figure:
        """The cost for the year's work, with its formula, inputs and sources."""
        return self.make_cost()

    @cached_property
    def spot(self) -> Figure | None:
        """The expected spot rework a run, for a spot configuration."""
        return self.make_spot()

    @property
    def ok(self) -> bool:
        """It holds the job, does the year's work and a run within the limit."""
        c = self.config
        return c.fits and c.within_year and c.meets_deadline and c.holds_jobs_at_once


def build_candidates(catalog: Catalog, sizing: Sizing) -> list[PricedCandidate]:
    """Every local and cloud candidate for this sizing, local first, in catalog order (each
    method in turn, best quality first), then the team's plan where it is not among them."""
    local: list[PricedCandidate] = []
    cloud: list[PricedCandidate] = []
    for gpu in catalog.gpus.values():
        if gpu.buyable:
            below: int | None = None
            every = (*local_counts(catalog, gpu), *_pool_boxes(catalog, sizing, gpu))
            for job, dominated in _jobs(catalog, sizing):
                counts = ([c for c in every if c < below]
                          if dominated and below is not None else list(every))
                found = _local(catalog, sizing, job, gpu, counts) if counts else None
                if found is not None:
                    local.append(found)
                below = found.config.count if found is not None and found.ok else None
    for offer in catalog.offers:
        below = None
        offered = _with_pools(cloud_counts(catalog, offer),
                              _pool_instances(catalog, sizing, offer))
        for job, dominated in _jobs(catalog, sizing):
            shapes = ([(c, n) for c, n in offered if c < below]
                      if dominated and below is not None else offered)
            found_cloud = _cloud(catalog, sizing, job, offer, shapes) if shapes else []
            cloud.extend(found_cloud)
            ok = [c.config.count for c in found_cloud if c.ok]
            below = min(ok) if ok else None
    out = _with_owned(catalog, sizing, _with_plan(catalog, sizing, [*local, *cloud]))
    return _methods_compared(out)


def pooled(t: Trial, pool: Layout | None) -> Trial:
    """``t`` as a pool runs it: each job on its share, so the configuration is busy for the
    year's jobs ÷ the jobs it runs at once, each job's run on its share (``t`` prices the whole
    configuration on one job)."""
    if pool is None or not (at_once := pool.jobs_at_once(t.count)):
        return t
    return t._replace(busy_hours=t.job.work.runs_per_year * pool.run_hours / at_once)


def _pool_boxes(catalog: Catalog, sizing: Sizing, gpu: Gpu) -> tuple[int, ...]:
    """For a pool, whole boxes of a card no cluster platform takes, side by side."""
    if sizing.concurrent_jobs <= 1:
        return ()
    return pool_box_counts(catalog, gpu, sizing.concurrent_jobs)


def _pool_instances(catalog: Catalog, sizing: Sizing,
                    offer: Offer) -> tuple[tuple[int, int], ...]:
    """For a pool, whole instances of an offer that does not span nodes, side by side."""
    if sizing.concurrent_jobs <= 1:
        return ()
    return pool_instance_counts(catalog, offer, sizing.concurrent_jobs)


def _with_pools(shapes: tuple[tuple[int, int], ...],
                pools: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """An offer's (GPUs, instances) with a pool's added, fewest GPUs first (the count search
    bisects them); where both give a count, the offer's own shape."""
    if not pools:
        return shapes
    found = dict(shapes)
    for count, instances in pools:
        found.setdefault(count, instances)
    return tuple(sorted(found.items()))


def _jobs(catalog: Catalog, sizing: Sizing) -> Iterator[tuple[Job, bool]]:
    """Each job, best quality first, with whether the one before it dominates it at the same
    GPU count (no more FLOPs per token, no lower utilisation: LoRA over QLoRA), so that only
    smaller counts than the better one needs are worth trying."""
    policy = catalog.policy
    previous: Job | None = None
    for job in sizing.jobs:
        dominated = previous is not None and (
            policy.flops_per_param_token[previous.method].value
            <= policy.flops_per_param_token[job.method].value
            and policy.mfu[previous.method].expected >= policy.mfu[job.method].expected)
        yield job, dominated
        previous = job


BURST_PRICING = ("on-demand", "spot")
"""Pricings paid by the hour a run runs (not held for the year or a block)."""

SHARE_SUFFIX = ":share"
"""The end of the id of a rented configuration priced for a share of the year's work (the
peaks beside the team's own GPUs)."""


def for_share(catalog: Catalog, sizing: Sizing, rented: PricedCandidate,
              share: float, jobs: int = 0) -> PricedCandidate | None:
    """``rented`` (a cloud configuration priced for the year's work) priced again for
    ``share`` of that work, the rest done elsewhere: the same offer, GPUs, pricing and
    method, for fewer runs (``SHARE_SUFFIX`` on its id); with ``jobs``, for that many of its
    jobs at once (each on the instances it takes in ``rented``). None where it no longer
    prices or cannot do that share (more hours than the year has on that many jobs)."""
    f = rented.config
    counts = [(f.count, f.nodes)]
    if jobs:  # each job on instances of its own in ``rented`` (owned_options.jobs_held):
        # its share of the pool's instances, or one where steady jobs each rent an instance
        # of their share while the pool is priced as one
        per_job = max(1, f.nodes // max(1, f.jobs_at_once))
        counts = [(gpus_a_job(rented) * jobs, per_job * jobs)]
        sizing = replace(sizing, concurrent_jobs=jobs)
    job = next((j for j in sizing.jobs if j.method == f.train_method), None)
    offer = next((o for o in catalog.offers if o.id == f.offer), None)
    if job is None or offer is None:
        return None
    work = job.work
    scaled = work.model_copy(update={
        "runs_per_year": work.runs_per_year * share,
        "flops_per_year": work.flops_per_year * share,
        "reference_gpu_hours": work.reference_gpu_hours * share,
        "hours_per_year": None if work.hours_per_year is None else work.hours_per_year * share})
    found = [c for c in _cloud(catalog, sizing, replace(job, work=scaled), offer, counts)
             if c.config.pricing == f.pricing and c.config.reserved_months == f.reserved_months
             and c.ok]  # its share of the work within the year, its jobs at once held
    if not found:
        return None
    # priced at its one count, it knows no smaller one that would do: what the whole year's
    # configuration said of the fewest GPUs that meet the limit holds a run alike, and the
    # premium for the share of the work
    sooner = {**{k: rented.facts[k] for k in _NOT_SOONER},
              "sooner_premium_usd": dollars(float(rented.facts["sooner_premium_usd"]) * share)
              } if rented.facts.get("sooner_than_count") else {}
    return replace(found[0], facts={**rented.facts, **found[0].facts, **sooner,
                                    "candidate_id": f"{f.candidate_id}{SHARE_SUFFIX}"})


def gpus_a_job(rented: PricedCandidate) -> int:
    """GPUs one job takes on a configuration (all of them where it runs one job)."""
    return int(rented.facts.get("gpus_per_job") or rented.config.count)


# -- choosing a count ---------------------------------------------------------------------
Verdicts = dict[str, tuple[bool, float]]
"""Per pricing: (meets every requirement, cost for the work)."""


class _Counts:
    """The counts of one placement, tried only where a search asks (each once)."""

    def __init__(self, size: int, make: Callable[[int], Trial],
                 judge: Callable[[Trial], Verdicts], one_node: Callable[[], int]) -> None:
        self.size, self._make, self._judge = size, make, judge
        self.one_node = one_node
        """The index of the largest count on one node (or instance), found where asked."""
        self._made: dict[int, Trial] = {}
        self._seen: dict[int, tuple[Trial, Verdicts]] = {}

    def made(self, i: int) -> Trial:
        """The trial of index ``i``, not priced."""
        if i not in self._made:
            self._made[i] = self._make(i)
        return self._made[i]

    def at(self, i: int) -> tuple[Trial, Verdicts]:
        if i not in self._seen:
            t = self.made(i)
            self._seen[i] = (t, self._judge(t))
        return self._seen[i]

    def first(self, holds: Callable[[Trial, Verdicts], bool], lo: int = 0) -> int | None:
        """The first index from ``lo`` where ``holds``, for a requirement that, once met by
        a count, is met by every larger one (bisection: a few trials, not every count)."""
        hi = self.size
        while lo < hi:
            mid = (lo + hi) // 2
            if holds(*self.at(mid)):
                hi = mid
            else:
                lo = mid + 1
        return lo if lo < self.size and holds(*self.at(lo)) else None


def _scan(counts: _Counts, keys: Iterable[str],
          one_node_margin: float) -> tuple[dict[str, Trial], int | None]:
    """Per key (a pricing), the trial to price, and the fewest GPUs that hold the job.

    More GPUs hold the job more easily, finish a run sooner and are busy fewer hours, so
    each requirement, once met, stays met as the count grows; and from the first count that
    meets them all, more GPUs only cost more, unless they let gradient checkpointing off.
    So the candidates are the first count that meets every requirement and the first that
    does without recomputation: the cheaper is priced, unless the first runs on fewer nodes
    for at most ``one_node_margin`` more (as the rule against several nodes weighs it: no
    network between nodes to tune, fewer parts to fail). Where no count meets them, the best
    attempt is the largest count (the fastest: its exclusion says even it misses), or where
    not even the largest holds the job (what does not shard, activations, outgrows the card)
    the largest on one node, with no search: its exclusion says the job does not fit.
    """
    def fits(t: Trial, _: Verdicts) -> bool:
        return t.fits

    fit = counts.first(fits) if counts.made(counts.size - 1).fits else None
    chosen: dict[str, Trial] = {}
    for key in keys:
        def meets(t: Trial, v: Verdicts, key: str = key) -> bool:
            return v[key][0]

        def plainly(t: Trial, v: Verdicts, key: str = key) -> bool:
            return v[key][0] and not t.checkpointing

        ok = None if fit is None else counts.first(meets, fit)
        if ok is None:
            chosen[key] = counts.at(counts.size - 1 if fit is not None else counts.one_node())[0]
            continue
        plain = counts.first(plainly, ok)
        least = counts.at(ok)
        if plain is None or plain == ok:
            chosen[key] = least[0]
            continue
        bare = counts.at(plain)
        cost, bare_cost = least[1][key][1], bare[1][key][1]
        fewer_nodes = least[0].nodes < bare[0].nodes
        keep = (cost <= bare_cost * (1 + one_node_margin) if fewer_nodes
                else (cost, least[0].count) <= (bare_cost, bare[0].count))
        chosen[key] = least[0] if keep else bare[0]
    return chosen, None if fit is None else counts.at(fit)[0].count


# -- local ----------------------------------------------------------------------------------
def within_year(needed_hours: float, cap_hours: float) -> bool:
    """Whether the hours a year a configuration must be busy fit the hours it can be."""
    return needed_hours <= cap_hours * (1 + 1e-9)


def owned_capacity_hours(policy: Policy) -> float:
    """Hours a year owned GPUs can be busy: the policy's busy target of the year (the rest is
    upkeep, failures and queueing)."""
    return policy.capacity_busy_target["high"].value * policy.hours_per_year_max.value


def _worth_the_wait(policy: Policy, sizing: Sizing, tried: _Counts, at: int,
                    held: Callable[[Trial], bool], run_days: Callable[[Trial], float],
                    upfront: Callable[[int], float]) -> Trial:
    """The purchase of index ``at``, or more of the card where steady work stretched its run
    past the workload's default limit (``Sizing.burst_deadline_days``) and the fewest that
    keep within that default cost no more than the wait is worth: :func:`sooner_premium` of
    the stretched run's days over its cost, as a run paid by the hour weighs a sooner one.
    Stretching keeps held GPUs busy; nobody waits two months a run to save a few hundred
    dollars a year. Never past the compute budget where the stretched purchase keeps within
    it (``upfront`` of a count): there the wait is the saving."""
    chosen, verdicts = tried.at(at)
    default = sizing.stretched_from
    if default is None or run_days(chosen) <= default:
        return chosen
    sooner = tried.first(lambda t, _: held(t) and run_days(t) <= default, at + 1)
    if sooner is None:
        return chosen
    t, faster = tried.at(sooner)
    if upfront(chosen.count) <= sizing.budget_usd < upfront(t.count):
        return chosen
    worth = verdicts["purchase"][1] * (1 + sooner_premium(policy, run_days(chosen)))
    return t if faster["purchase"][1] <= worth else chosen


def _local(catalog: Catalog, sizing: Sizing, job: Job, gpu: Gpu, counts: Iterable[int],
           *, plan: bool = False, owned: bool = False,
           added: bool = False) -> PricedCandidate | None:
    """The best owned configuration of ``gpu`` among ``counts`` for ``job``: to buy, the
    team's own GPUs (``owned``), whose purchase is spent, or (``added``) more bought beside
    them."""
    policy = catalog.policy
    counts_of = list(counts)  # every count local_counts gives has a home
    cap = owned_capacity_hours(policy)
    parts_of = _owned_parts if owned else _added_parts if added else _owning_parts

    separate = sizing.concurrent_jobs > 1
    every = local_counts(catalog, gpu)  # a job's share is the card's, whatever is priced
    pools = _pool(catalog, sizing, job, gpu, None,
                  (c for c in every if nodes_of(catalog, gpu, c, separate) == 1),
                  tuple((c, n) for c in every if (n := nodes_of(catalog, gpu, c)) > 1))

    def run_hours(t: Trial) -> float:
        pool = pools(t.count)
        return t.run_hours if pool is None else pool.run_hours

    def run_days(t: Trial) -> float:
        return run_hours(t) / 24

    def held(t: Trial) -> bool:
        """Every requirement but the run limit: the job fits, the year's work and the jobs
        at once are held."""
        return t.fits and within_year(t.busy_hours, cap) and _holds(sizing, pools(t.count),
                                                                    t.count)

    def judge(t: Trial) -> Verdicts:
        line = parts_of(catalog, sizing, gpu, t.count).line
        ok = held(t) and run_days(t) <= sizing.deadline_days
        return {"purchase": (ok, line.at(t.busy_hours))}

    def make(i: int) -> Trial:
        count = counts_of[i]
        return pooled(trial(catalog, job, gpu, count, nodes_of(catalog, gpu, count, separate),
                            "infiniband"), pools(count))

    if not counts_of:
        return None
    def one_node() -> int:
        return max((i for i, c in enumerate(counts_of)
                    if nodes_of(catalog, gpu, c, separate) == 1), default=0)

    tried = _Counts(len(counts_of), make, judge, one_node)
    found, fewest = _scan(tried, ("purchase",), policy.close_call_margin.value)
    chosen = found.get("purchase")
    if chosen is None:
        return None
    if not (owned or plan):
        chosen = _worth_the_wait(
            policy, sizing, tried, counts_of.index(chosen.count), held, run_days,
            lambda count: parts_of(catalog, sizing, gpu, count).purchase.value)
    at = counts_of.index(chosen.count)
    met = tried.at(at)[1]["purchase"][0]  # else the best attempt: nothing smaller to offer
    # the next smaller purchase, where only the run limit kept it out
    smaller = tried.at(at - 1)[0] if met and not owned and at else None
    slower = smaller if (smaller is not None and held(smaller)
                         and run_days(smaller) > sizing.deadline_days) else None
    queued = (_queued(catalog, sizing, job, gpu, counts_of[:at], cap)
              if met and separate and not (owned or added or plan) else None)
    placed = home(catalog, gpu, chosen.count, separate)
    assert placed is not None
    platform, boxes = placed
    parts = parts_of(catalog, sizing, gpu, chosen.count)
    own = replace(parts, cost=owning_cost(parts.fixed, parts.running, chosen.busy_hours),
                  busy_hours=chosen.busy_hours)
    suffix = ":plan" if plan else ":owned" if owned else ":added" if added else ""
    beside = sizing.owned[1] if added and sizing.owned else 0  # the team's own, not bought
    facts = {
        **_config_facts(catalog, gpu, chosen.count, None),
        **({"provider_name": "yours", "provider_label": "yours"} if owned else {}),
        "candidate_id": f"local:{gpu.id}x{chosen.count}:{job.method}{suffix}",
        "nodes": boxes,
        "platform": platform.id,
        "platform_name": platform.name,
        "condition": gpu.purchase.condition if gpu.purchase else "new",
        "pricing": "purchase",
        "is_owned": owned,
        "owned_added": chosen.count - beside if beside else 0,
        "resale_usd": dollars(float(parts.fixed.inputs.get("resale_usd") or 0.0))
        if owned else 0.0,
        "upkeep_usd_year": dollars(float(parts.fixed.inputs.get("upkeep_usd_per_year") or 0.0))
        if owned else 0.0,
        "in_allowed_region": True,
        "location": "on site",
        "vendor_allowed": sizing.gpu_vendors is None or gpu.vendor in sizing.gpu_vendors,
        "vendor_chosen": sizing.gpu_vendors is not None and gpu.vendor in sizing.gpu_vendors,
        "market_allowed": True,
        **_purchase_access(catalog, 0 if owned else chosen.count - beside),
        "upfront_usd": tidy(own.purchase.value, 0),
        "usd_per_gpu_hour": tidy(own.running.value / chosen.count, 4),
        "per_hour_usd": tidy(own.running.value, 4),
        "fixed_usd_year": tidy(own.fixed.value, 2),
        "start_up_hours": 0.0,
        "spot_extra_hours": 0.0,
        "interruptions_per_run": 0.0,
        **_spot_said(0.0, 0.0),
        "instance_longest_hours": 0.0,
        "instance_restarts": 0,
        "outlived_count": 0,
        "outlived_days": 0.0,
        **_NOT_SOONER,
        **_slower_facts(catalog, sizing, gpu, parts_of, own.purchase.value, slower,
                        run_days(slower) if slower else 0.0),
        **_queued_facts(catalog, sizing, gpu, parts_of, own.purchase.value, queued),
        "start_up_usd_per_run": 0.0,
        **_NO_START_UP,
        "billed_hours_per_year": tidy(chosen.busy_hours, 1),
        "is_plan": plan,
        **_sized_facts(catalog, sizing, gpu, chosen,
                       wall_hours=run_hours(chosen),
                       needed=chosen.busy_hours, busy_cap=cap, cost=own.cost.value,
                       first_year=own.purchase.value, fewest=fewest,
                       smallest=next(iter(counts_of), chosen.count),
                       limit_days=sizing.deadline_days),
        **_pool_facts(sizing, pools(chosen.count), chosen.count, boxes, always_on=True),
    }
    low, high = _cost_range(catalog, gpu, chosen, lambda hours: own.line.at(hours))
    return PricedCandidate(facts, lambda: own.cost, chosen.speed, own.purchase,
                           hardware=f"local:{gpu.id}{suffix}", low_cost=low, high_cost=high)


def _slower_facts(catalog: Catalog, sizing: Sizing, gpu: Gpu,
                  parts_of: Callable[[Catalog, Sizing, Gpu, int], Owning], upfront: float,
                  slower: Trial | None, days: float) -> dict[str, Any]:
    """What the next smaller purchase would be where only the run limit kept it out: its
    count, the ``days`` a run takes on it and how much less it costs up front (zeros where
    there is none)."""
    if slower is None:
        return {"slower_count": 0, "slower_days": 0.0, "slower_saving_usd": 0.0,
                "slower_saving_share": 0.0}
    saving = upfront - parts_of(catalog, sizing, gpu, slower.count).purchase.value
    return {"slower_count": slower.count, "slower_days": tidy(days, 1),
            "slower_saving_usd": dollars(saving),
            "slower_saving_share": tidy(saving / upfront, 3) if upfront else 0.0}


def _queued(catalog: Catalog, sizing: Sizing, job: Job, gpu: Gpu, counts: Sequence[int],
            cap: float) -> Trial | None:
    """The fewest of ``counts`` (those smaller than a purchase sized for the team's jobs at
    once) that would do the year's work with the jobs run one at a time, each on all of
    them: the job fits, the year's runs one after another fit the busy target, and a run
    meets the run limit (None where none does)."""
    def make(i: int) -> Trial:
        count = counts[i]
        return trial(catalog, job, gpu, count, nodes_of(catalog, gpu, count), "infiniband")

    def judge(t: Trial) -> Verdicts:
        ok = (t.fits and within_year(t.busy_hours, cap)
              and t.run_hours / 24 <= sizing.deadline_days)
        return {"queued": (ok, 0.0)}

    tried = _Counts(len(counts), make, judge, lambda: 0)
    found = tried.first(lambda t, v: v["queued"][0])
    return None if found is None else tried.at(found)[0]


_NOT_QUEUED: dict[str, Any] = {"queued_count": 0, "queued_run": "", "queued_busy_share": 0.0,
                               "queued_saving_usd": 0.0, "queued_saving_share": 0.0,
                               "queued_cost_usd_year": 0.0}


def _queued_facts(catalog: Catalog, sizing: Sizing, gpu: Gpu,
                  parts_of: Callable[[Catalog, Sizing, Gpu, int], Owning], upfront: float,
                  queued: Trial | None) -> dict[str, Any]:
    """What the smaller purchase of :func:`_queued` would be: its count, how long a run
    takes on it (in words), how busy the year's runs one after another keep it, how much
    less it costs up front and what it costs for the year's work (zeros where there is
    none)."""
    if queued is None or not upfront:
        return _NOT_QUEUED
    parts = parts_of(catalog, sizing, gpu, queued.count)
    saving = upfront - parts.purchase.value
    return {"queued_count": queued.count, "queued_run": run_length(queued.run_hours / 24),
            "queued_busy_share": tidy(queued.busy_hours / catalog.policy.hours_per_year_max.value,
                                      3),
            "queued_saving_usd": dollars(saving),
            "queued_saving_share": tidy(saving / upfront, 3),
            "queued_cost_usd_year": tidy(parts.line.at(queued.busy_hours), 2)}


def _owned_parts(catalog: Catalog, sizing: Sizing, gpu: Gpu, count: int) -> Owning:
    """What the team's own ``count`` × ``gpu`` cost a year whatever the work (upkeep) and per
    busy hour (electricity): the purchase is spent (remembered per catalog)."""
    placed = home(catalog, gpu, count, sizing.concurrent_jobs > 1)
    assert placed is not None
    found: Owning = catalog.derived(
        ("owned", gpu.id, count, sizing.electricity_usd_per_kwh), already_owned, gpu, count,
        placed, sizing.electricity_usd_per_kwh, 0.0, catalog.policy)
    return found


def _added_parts(catalog: Catalog, sizing: Sizing, gpu: Gpu, count: int) -> Owning:
    """What ``count`` × ``gpu`` cost when the team owns some of them already: the purchase of
    the rest, written off and kept up, and the power of all (remembered per catalog)."""
    assert sizing.owned is not None
    owned = sizing.owned[1]
    separate = sizing.concurrent_jobs > 1  # a pool's machines side by side
    placed, mine = home(catalog, gpu, count, separate), home(catalog, gpu, owned, separate)
    assert placed is not None and mine is not None
    found: Owning = catalog.derived(
        ("added", gpu.id, owned, count, sizing.electricity_usd_per_kwh), adding_to_owned, gpu,
        owned, count, mine, placed, sizing.electricity_usd_per_kwh, 0.0, catalog.policy)
    return found


def _owning_parts(catalog: Catalog, sizing: Sizing, gpu: Gpu, count: int) -> Owning:
    """What owning ``count`` × ``gpu`` costs whatever the work (purchase, fixed, running),
    remembered per catalog: a trial's cost is then one line, ``fixed + running × hours``."""
    placed = home(catalog, gpu, count, sizing.concurrent_jobs > 1)
    assert placed is not None
    found: Owning = catalog.derived(
        ("owning", gpu.id, count, sizing.electricity_usd_per_kwh), owning, gpu, count, placed,
        sizing.electricity_usd_per_kwh, 0.0, catalog.policy)
    return found


# -- cloud ----------------------------------------------------------------------------------
class _Price(NamedTuple):
    """One way an offer is paid: a pricing, its committed months or the days of the block
    bought for each run (and the shortest block), its $/GPU-hour; ``key`` names it among the
    offer's (:func:`_price`)."""

    pricing: str
    months: int | None
    rate: float
    days: int | None
    shortest_days: int | None
    key: str
    longest_hours: float | None
    """How long an instance runs before the provider ends it (None: until stopped)."""


def _price(pricing: str, months: int | None, rate: float, days: int | None = None,
           shortest_days: int | None = None, longest_hours: float | None = None) -> _Price:
    key = (f"reserved-{days}d" if days is not None
           else pricing if months is None else f"reserved-{months}m")
    return _Price(pricing, months, rate, days, shortest_days, key, longest_hours)


class _Rented(NamedTuple):
    """What one trial of an offer costs at one price (numbers; the figures behind them are
    made for the configuration chosen, :func:`_priced`)."""

    trial: Trial
    price: _Price
    instances: int
    start_up: Figure
    spot_hours: float
    interruptions: float
    wall_hours: float
    hours: float
    cost: float
    busy: float
    """Hours a year it must be busy for the work (start-ups and spot rework included)."""
    ok: bool
    cap: float
    """Hours a year it can be busy: the year's, or the busy target of a committed term."""
    limit_days: float
    """The longest acceptable run on it (:func:`run_limit`)."""
    all_year: bool
    """It is a pool paid for every hour of the year (:func:`rented_all_year`)."""
    restarts: int
    """Times a run stops because the provider ends its instances (``_Price.longest_hours``)
    and starts again on new ones."""
    held: bool
    """It meets every requirement but the life of the provider's instances (``ok`` is this
    where no run outlives them, or the team checkpoints often)."""


def _prices(catalog: Catalog, offer: Offer, where: Location | None) -> tuple[_Price, ...]:
    """Every way ``offer`` is paid where it is rented (``where``: a location with list prices
    of its own has only those, on demand and spot where known; any other the offer's),
    remembered per catalog."""
    own = where if where is not None and where.own_prices else None
    found: tuple[_Price, ...] = catalog.derived(
        ("prices", offer.id, None if own is None else (own.country, own.region)),
        _make_prices, offer, own)
    return found


def _make_prices(offer: Offer, own: Location | None) -> tuple[_Price, ...]:
    offer = offer.priced_at(own)
    prices = ([] if offer.on_demand_usd_per_gpu_hour is None
              else [_price("on-demand", None, offer.on_demand_usd_per_gpu_hour,
                           longest_hours=offer.on_demand_longest_hours)])
    if offer.spot_usd_per_gpu_hour is not None:
        prices.append(_price("spot", None, offer.spot_usd_per_gpu_hour))
    prices += [_price("reserved", t.term_months, t.usd_per_gpu_hour, t.term_days,
                      t.shortest_days) for t in offer.reserved_terms]
    return tuple(prices)


def _rent(catalog: Catalog, sizing: Sizing, offer: Offer, provider: Provider, t: Trial,
          instances: int, start: Figure, price: _Price,
          pool: Layout | None = None) -> _Rented:
    """``t`` rented at ``price`` on ``instances`` instances that take ``start`` to start and
    finish a run: the year's billed hours, cost and whether it meets every requirement. A
    ``pool`` is rented for every hour of the year; each of its jobs runs on its share."""
    policy = catalog.policy
    job = t.job
    spot = interruptions = 0.0
    if price.pricing == "spot" and pool is None:
        spot, interruptions, *_ = spot_rework(t.run_hours, instances, _restart_hours(start),
                                              _checkpoint_gb(catalog, job), policy,
                                              frequent=sizing.frequent_checkpoints)
    runs = job.work.runs_per_year
    all_year = rented_all_year(sizing, pool, offer)
    wall = (t.run_hours + spot if pool is None else pool.run_hours) + start.value
    restarts = 0 if price.longest_hours is None else instance_restarts(wall, price.longest_hours)
    if restarts and sizing.frequent_checkpoints:  # each piece starts again from a checkpoint
        wall += restarts * _restart_hours(start)
    if pool is None:
        hours = _billed(catalog, provider, price, runs, wall)
        busy = runs * wall
    else:  # on every hour of the year, or while each wave of jobs at once runs
        hours = (policy.hours_per_year_max.value if all_year
                 else _billed(catalog, provider, price, waves(sizing, runs), wall))
        busy = t.busy_hours
    if price.days is not None:  # blocks bought for each run hold the runs they are bought for
        cap = hours
    elif price.pricing == "reserved":
        cap = policy.capacity_busy_target["high"].value * hours
    else:
        cap = policy.hours_per_year_max.value
    within = within_year(busy, cap)
    hourly = hourly_rent_usd(price.rate, t.count, offer.vm_usd_per_instance_hour or 0.0,
                             instances)
    cost = hourly * hours * (1 + policy.hidden_cloud_overhead.expected)
    limit = run_limit(sizing, price.pricing, price.days, all_year)
    held = t.fits and within and wall / 24 <= limit and _holds(sizing, pool, t.count)
    ok = held and (not restarts or sizing.frequent_checkpoints)
    return _Rented(t, price, instances, start, spot, interruptions, wall, hours, cost, busy,
                   ok, cap, limit, all_year, restarts, held)


def instance_restarts(wall_hours: float, longest_hours: float | None) -> int:
    """Times a run of ``wall_hours`` stops where the provider ends an instance after
    ``longest_hours`` (0 where it runs until stopped, or the run fits)."""
    if longest_hours is None or wall_hours <= longest_hours:
        return 0
    return math.ceil(wall_hours / longest_hours) - 1


def run_limit(sizing: Sizing, pricing: str, block_days: int | None,
              all_year: bool = False) -> float:
    """The longest acceptable run (days) on capacity paid as ``pricing``: owned, committed
    and pools rented all year are sized for the year, so steady work stretches their limit;
    what is paid by the hour it runs (on demand, spot, blocks bought per run) keeps the
    workload's own. ``all_year``: a pool rented every hour (``rented_all_year``)."""
    if all_year or (pricing == "reserved" and block_days is None):
        return sizing.deadline_days
    return sizing.burst_deadline_days


def rented_all_year(sizing: Sizing, pool: Layout | None, offer: Offer) -> bool:
    """Whether a rented ``pool`` is paid for every hour of the year: jobs of steady work that
    share an instance (MIG slices, or GPUs of an instance larger than one job's share) come
    when they come and need it there. Where the offer sells an instance of one job's share,
    or a job spans whole instances of its own (several nodes a job), each job rents them
    while it runs, as one job alone would, and no pool sits idle between jobs; where jobs
    come together, the pool is rented for each wave (the same GPU-hours, billed on the whole
    pool)."""
    if pool is None or not sizing.steady_jobs:
        return False
    if pool.nodes_per_job > 1:  # each job spans whole instances of its own
        return False
    share = pool.gpus_a_job
    return bool(pool.profile) or share < offer.smallest_gpus or share not in offer.shapes


def waves(sizing: Sizing, runs: float) -> float:
    """How often a year a pool rented while its jobs run is on: the year's jobs over the jobs
    at once (at least one wave where there is any work). Where each job rents its own whole
    GPUs, a wave is the GPU-hours of that many jobs, whenever they run."""
    return max(1.0, runs / sizing.concurrent_jobs) if runs > 0 else 0.0


def _start_up(catalog: Catalog, job: Job, provider: Provider, instances: int) -> Figure:
    found: Figure = catalog.per_job(  # the job's token names its shape exactly
        ("run_overhead", job.request.token, job.method, provider.kind, instances),
        run_overhead, job.request.shape, job.method, provider.kind, instances, catalog.policy)
    return found


def _restart_hours(start: Figure) -> float:
    """A restart after an interruption: the start-up without the final upload."""
    return float(start.value) - float(start.inputs["upload_h"] or 0.0)


def _checkpoint_gb(catalog: Catalog, job: Job) -> float:
    found: float = catalog.per_job(("checkpoint_gb", job.request.token, job.method),
                                   checkpoint_gb, job.request.shape, job.method, catalog.policy)
    return found


def _billed(catalog: Catalog, provider: Provider, price: _Price, runs: float,
            wall: float) -> float:
    """Hours a year the provider bills: each run in its increments, the blocks bought for each
    run, or the committed term."""
    if price.days is not None:
        assert price.shortest_days is not None
        return block_hours(price.days, price.shortest_days, runs, wall, catalog.policy)
    if price.pricing == "reserved":
        assert price.months is not None
        return committed_hours(price.months, runs, wall, catalog.policy)
    return runs * billed_hours(wall, provider.billing_increment_s, provider.billing_minimum_s)


def _cloud(catalog: Catalog, sizing: Sizing, job: Job, offer: Offer,
           counts: Iterable[tuple[int, int]] | None = None, *,
           plan: bool = False) -> list[PricedCandidate]:
    gpu = catalog.gpus[offer.gpu]
    provider = catalog.providers[offer.provider]
    sold = cloud_counts(catalog, offer)
    shapes = dict(sold if counts is None else counts)
    prices = _prices(catalog, offer, catalog.sold_at(offer, sizing.allowed_regions))
    rented: dict[tuple[int, str], _Rented] = {}
    # a pool's job is laid out on the instances the offer sells, whatever counts are priced
    pools = _pool(catalog, sizing, job, gpu, offer.network,
                  (c for c, n in sold if n == 1), tuple((c, n) for c, n in sold if n > 1))

    def judge(t: Trial) -> Verdicts:
        out = {}
        instances = shapes[t.count]
        # a pool's job starts on its own instances, not across the whole pool
        pool = pools(t.count)
        start = _start_up(catalog, t.job, provider,
                          instances if pool is None else pool.nodes_per_job)
        for price in prices:
            r = _rent(catalog, sizing, offer, provider, t, instances, start, price,
                      pools(t.count))
            rented[(t.count, price.key)] = r
            out[price.key] = (r.ok, r.cost)
        return out

    listed = list(shapes.items())

    def make(i: int) -> Trial:
        count, instances = listed[i]
        return pooled(trial(catalog, job, gpu, count, instances, offer.network), pools(count))

    if not listed:
        return []
    def one_node() -> int:
        return max((i for i, (_, n) in enumerate(listed) if n == 1), default=0)

    tried = _Counts(len(listed), make, judge, one_node)
    chosen, fewest = _scan(tried, [p.key for p in prices], catalog.policy.close_call_margin.value)
    if sizing.concurrent_jobs > 1 and sizing.steady_jobs:
        chosen = {key: _instance_a_job(tried, listed, rented, t, key, sizing.concurrent_jobs)
                  for key, t in chosen.items()}
    lives = offer.on_demand_longest_hours is not None
    out = []
    for key, least in chosen.items():
        sooner = _sooner(catalog.policy, sizing, tried, listed, rented, least, key)
        for t in (least, sooner) if sooner is not least else (least,):
            out.append(_priced(
                catalog, sizing, offer, provider, gpu, rented[(t.count, key)], plan=plan,
                fewest=fewest, smallest=next(iter(shapes)), pool=pools(t.count),
                outlived=_outlived(tried, listed, rented, t, key) if lives else None,
                sooner_than=None if t is least else rented[(least.count, key)]))
    return out


def _instance_a_job(counts: _Counts, listed: list[tuple[int, int]],
                    rented: Mapping[tuple[int, str], _Rented], t: Trial, key: str,
                    jobs: int) -> Trial:
    """Where steady jobs sharing an instance would keep ``t`` rented every hour of the year
    (:func:`rented_all_year`: the offer sells no instance of one job's share) at a pricing
    paid by the hour, an instance for each job, rented while it runs, where that costs less:
    as an operator runs jobs that come when they come on an offer sold only in instances
    larger than one job needs. Else ``t``."""
    r = rented[(t.count, key)]
    if not r.all_year or r.price.pricing not in BURST_PRICING:
        return t
    best, cost = t, r.cost
    for i, (count, instances) in enumerate(listed):
        if instances != jobs or count <= t.count:
            continue
        each, verdicts = counts.at(i)
        ok, each_cost = verdicts[key]
        if ok and not rented[(count, key)].all_year and each_cost < cost:
            best, cost = each, each_cost
    return best


def _index(listed: list[tuple[int, int]], count: int) -> int:
    """Where ``count`` is among an offer's (GPUs, instances)."""
    return next(i for i, (c, _) in enumerate(listed) if c == count)


def _sooner(policy: Policy, sizing: Sizing, counts: _Counts, listed: list[tuple[int, int]],
            rented: Mapping[tuple[int, str], _Rented], t: Trial, key: str) -> Trial:
    """Where a run paid by the hour on ``t`` (the fewest GPUs that meet every requirement)
    takes days, the largest count of one instance that finishes it sooner for at most the
    policy's premium a year (:func:`sooner_premium` of its days), else ``t``: priced beside ``t``,
    for the ranking to weigh (:func:`against_sooner`). A pool spreads its jobs instead
    (:func:`engine.decide.pools.spread`)."""
    r = rented[(t.count, key)]
    if (sizing.concurrent_jobs > 1 or not r.ok or r.price.pricing not in BURST_PRICING
            or r.wall_hours < 24 * policy.sooner_run_min_days.value):
        return t
    most = r.cost * (1 + sooner_premium(policy, r.wall_hours / 24))
    best = t
    for i in range(_index(listed, t.count) + 1, counts.size):
        if listed[i][1] != 1:
            break
        larger, verdicts = counts.at(i)
        ok, cost = verdicts[key]
        if not ok or cost > most:
            break
        best = larger
    return best


def _outlived(counts: _Counts, listed: list[tuple[int, int]],
              rented: Mapping[tuple[int, str], _Rented], t: Trial,
              key: str) -> tuple[int, float] | None:
    """Where the provider ends its instances before a run on the next smaller count would
    finish, and that alone kept it out: that count and the days its run would take (None
    otherwise)."""
    r = rented[(t.count, key)]
    if r.price.longest_hours is None or not r.ok:
        return None
    i = _index(listed, t.count)
    if i == 0:
        return None
    smaller = listed[i - 1][0]
    counts.at(i - 1)
    before = rented[(smaller, key)]
    return (smaller, before.wall_hours / 24) if before.restarts and before.held else None


def _placed(catalog: Catalog, offer: Offer, allowed: frozenset[str] | None) -> dict[str, Any]:
    """Whether the offer is sold where the data may go, and where to deploy it (remembered
    per catalog, offer and allowed set)."""
    where = catalog.sold_at(offer, allowed)
    return {"in_allowed_region": allowed is None or where is not None,
            "location": location_label(catalog, where)}


def location_label(catalog: Catalog, loc: Location | None) -> str:
    """``ap-northeast-1 (Tokyo, Japan)``, ``eu-north1 (Finland)``, ``Japan``; empty when
    unknown."""
    if loc is None:
        return ""
    country = catalog.countries.get(loc.country)
    place = ", ".join(x for x in (loc.city, country.name if country else loc.country) if x)
    return f"{loc.region} ({place})" if loc.region else place


def _priced(catalog: Catalog, sizing: Sizing, offer: Offer, provider: Provider, gpu: Gpu,
            r: _Rented, *, plan: bool, fewest: int | None, smallest: int,
            pool: Layout | None = None,
            outlived: tuple[int, float] | None = None,
            sooner_than: _Rented | None = None) -> PricedCandidate:
    t, price = r.trial, r.price
    runs = t.job.work.runs_per_year
    allowed = sizing.allowed_regions
    vm = offer.vm_usd_per_instance_hour or 0.0
    hourly = hourly_rent_usd(price.rate, t.count, vm, r.instances)
    over = 1 + catalog.policy.hidden_cloud_overhead.expected
    start_usd = hourly * r.start_up.value * over  # what starting and finishing a run costs
    policy = catalog.policy

    def spot() -> Figure | None:
        return spot_overhead(t.run_hours, r.instances, _restart_hours(r.start_up),
                             sizing.shape, t.job.method, policy,
                             frequent=sizing.frequent_checkpoints
                             ) if price.pricing == "spot" else None

    always_on = r.all_year
    in_waves = pool is not None and not always_on

    def cost() -> Figure:
        return renting_cost(hourly, r.hours, price.pricing, policy, sources=offer.sources,
                            usd_per_gpu_hour=price.rate, gpus=t.count, instances=r.instances,
                            vm_usd_per_instance_hour=vm,
                            runs=waves(sizing, runs) if in_waves else runs,
                            training_hours_per_run=pool.run_hours if in_waves and pool
                            else t.run_hours,
                            start_up_hours_per_run=r.start_up.value,
                            spot_rework_hours_per_run=r.spot_hours,
                            committed_months=price.months, block_days=price.days,
                            shortest_block_days=price.shortest_days,
                            always_on=always_on, waves=in_waves)
    plan_suffix = ":plan" if plan else ""
    facts = {
        **_config_facts(catalog, gpu, t.count, offer),
        "candidate_id": f"cloud:{offer.id}:{price.key}x{t.count}:{t.job.method}{plan_suffix}",
        **catalog.per_job(("offer_facts", offer.id, price.key, t.count, r.instances, allowed,
                           sizing.gpu_vendors), _offer_facts, catalog, offer, provider, gpu,
                          price, t.count, r.instances, allowed, sizing.gpu_vendors),
        "fixed_usd_year": tidy(r.cost, 2)
        if (price.pricing == "reserved" and price.days is None) or always_on else 0.0,
        "start_up_hours": tidy(r.start_up.value, 3),
        "slower_count": 0,
        "slower_days": 0.0,
        "slower_saving_usd": 0.0,
        "slower_saving_share": 0.0,
        **_NOT_QUEUED,
        "instance_longest_hours": price.longest_hours or 0.0,
        "instance_restarts": r.restarts,
        "outlived_count": 0 if outlived is None else outlived[0],
        "outlived_days": 0.0 if outlived is None else tidy(outlived[1], 1),
        **_sooner_facts(r, sooner_than),
        "spot_extra_hours": tidy(r.spot_hours, 3),
        "interruptions_per_run": tidy(r.interruptions, 3),
        **_spot_said(r.interruptions, r.spot_hours),
        "start_up_usd_per_run": tidy(start_usd, 2),
        **_start_up_facts(r, start_usd * runs, paid_per_run=pool is None and not always_on),
        "commitment_saving_max_usd": tidy(r.cost * _commitment_discount(provider, price), 0),
        "billed_hours_per_year": tidy(r.hours, 1),
        "is_plan": plan,
        **_sized_facts(catalog, sizing, gpu, t, wall_hours=r.wall_hours, needed=r.busy,
                       busy_cap=r.cap,
                       cost=r.cost, first_year=r.cost, fewest=fewest, smallest=smallest,
                       limit_days=r.limit_days,
                       rented=True),
        **_pool_facts(sizing, pool, t.count, r.instances, always_on=always_on),
    }
    if pool is not None and facts["gpus_for_memory"] is not None:  # of one job's GPUs
        facts["memory_share_of_node"] = tidy(facts["gpus_for_memory"] / pool.gpus_a_job, 3)
    extra = r.wall_hours - t.run_hours

    def at(busy: float) -> float:
        if always_on:
            return r.cost
        if pool is not None:  # each wave's run stretches with the speed
            scale = busy / t.busy_hours if t.busy_hours else 1.0
            wall = pool.run_hours * scale + r.start_up.value
            return hourly * _billed(catalog, provider, price, waves(sizing, runs), wall) * over
        wall = busy / runs + extra if runs else extra
        return hourly * _billed(catalog, provider, price, runs, wall) * over

    low, high = _cost_range(catalog, gpu, t, at)
    return PricedCandidate(facts, cost, t.speed, start_up=r.start_up, make_spot=spot,
                           hardware=f"cloud:{offer.id}:{price.key}{plan_suffix}"
                           + (f":x{t.count}" if sooner_than else ""),
                           low_cost=low, high_cost=high)


_NO_START_UP: dict[str, Any] = {"start_up_share": 0.0, "start_up_usd_year": 0.0}
"""The start-up facts of GPUs that pay none a run: owned, a pool's waves, rented all year."""


def _start_up_facts(r: _Rented, usd_year: float, *, paid_per_run: bool) -> dict[str, Any]:
    """The share of a run's hours its start-up and upload take, and what they cost a year,
    where each run pays its own (:data:`_NO_START_UP` for a pool's waves and capacity rented
    all year)."""
    if not paid_per_run or not r.wall_hours:
        return _NO_START_UP
    return {"start_up_share": tidy(r.start_up.value / r.wall_hours, 3),
            "start_up_usd_year": tidy(usd_year, 2)}


def _sooner_facts(r: _Rented, fewest: _Rented | None) -> dict[str, Any]:
    """What the fewest GPUs that meet every requirement would be, where a larger instance
    was taken to finish a long run sooner (:func:`_sooner`): their count, the days a run
    would take on them and what the larger instance costs more a year (zeros otherwise)."""
    if fewest is None:
        return _NOT_SOONER
    return {"sooner_than_count": fewest.trial.count,
            "sooner_than_days": tidy(fewest.wall_hours / 24, 1),
            "sooner_premium_usd": dollars(r.cost - fewest.cost),
            "sooner_premium_share": tidy(r.cost / fewest.cost - 1, 3) if fewest.cost else 0.0}


_NOT_SOONER: dict[str, Any] = {"sooner_than_count": 0, "sooner_than_days": 0.0,
                               "sooner_premium_usd": 0.0, "sooner_premium_share": 0.0}


def _offer_facts(catalog: Catalog, offer: Offer, provider: Provider, gpu: Gpu, price: _Price,
                 count: int, instances: int, allowed: frozenset[str] | None,
                 vendors: frozenset[str] | None) -> dict[str, Any]:
    """What renting ``count`` GPUs of ``offer`` at ``price`` is, whatever the work: who sells
    it, where, how, and at what rate (remembered per job memo: the team's regions and vendors
    are part of the key). Callers must not mutate it."""
    vm = offer.vm_usd_per_instance_hour or 0.0
    return {
        "nodes": instances,
        "provider": provider.id,
        "provider_name": provider.name,
        "provider_label": provider.short_name or provider.id,
        "provider_kind": provider.kind,
        "provider_ecosystem": provider.ecosystem or "none",
        "pricing": price.pricing,
        "condition": "rented",
        "reserved_months": price.months or 0,
        "reserved_days": price.days or 0,
        "commitment_discount_max": _commitment_discount(provider, price),
        "commitment_how": provider.commitment.how if provider.commitment else "",
        **catalog.derived(("placed", offer.id, allowed), _placed, catalog, offer, allowed),
        "vendor_allowed": vendors is None or gpu.vendor in vendors,
        "vendor_chosen": vendors is not None and gpu.vendor in vendors,
        "market_allowed": offer.market is None or (allowed is not None
                                                   and offer.market in allowed),
        **_access(catalog, offer, provider, count, instances),
        "upfront_usd": 0.0,
        "usd_per_gpu_hour": tidy(all_in_usd_per_gpu_hour(price.rate, count, vm, instances), 4),
        "per_hour_usd": tidy(hourly_rent_usd(price.rate, count, vm, instances), 4),
    }


def _spot_said(interruptions: float, hours: float) -> dict[str, str]:
    """A spot run's expected interruptions and the hours they cost, in words that stay
    readable for short runs (``about 1 interruption in 40 runs``, ``3 min``)."""
    if interruptions >= 0.095:
        said = f"about {interruptions:.1f} interruptions a run"
    elif interruptions >= 1e-6:  # fewer read as none (and 1 ÷ a denormal overflows)
        said = f"about 1 interruption in {round(1 / interruptions):,} runs"
    else:
        said = "almost no interruptions"
    minutes = hours * 60
    lost = ("under 1 min" if minutes < 1 else f"{minutes:.0f} min" if minutes < 90
            else f"{hours:,.1f} hours")
    return {"interruptions_said": said, "spot_extra_said": lost}


def _commitment_discount(provider: Provider, price: _Price) -> float:
    """The most a commitment the provider quotes (and does not list) takes off ``price``:
    its advertised discount on an on-demand price, else 0."""
    if provider.commitment is None or price.pricing != "on-demand":
        return 0.0
    return provider.commitment.discount_max


# -- pools ------------------------------------------------------------------------------
def _pool(catalog: Catalog, sizing: Sizing, job: Job, gpu: Gpu, network: Network | None,
          single_node: Iterable[int], spans: Span) -> Callable[[int], Layout | None]:
    """How ``count`` GPUs of ``gpu`` hold the team's jobs at once, a job on one node of the
    largest of ``single_node`` counts, or where that is too slow on several, the fewest of
    ``spans`` (GPUs, nodes) that leave room for every job (None, and nothing read, for one
    job at a time)."""
    if sizing.concurrent_jobs <= 1:
        return _no_pool
    node = max(single_node, default=1)
    most = int(catalog.policy.max_gpus_considered.value) // sizing.concurrent_jobs
    base = layout(catalog, job, gpu, network, sizing.deadline_days * 24, node,
                  tuple((c, n) for c, n in spans if c <= most))

    def at(count: int) -> Layout:
        return spread(catalog, job, gpu, network, base, count, sizing.concurrent_jobs, node)
    return at


def _no_pool(count: int) -> None:
    return None


def _holds(sizing: Sizing, pool: Layout | None, count: int) -> bool:
    return pool is None or pool.jobs_at_once(count) >= sizing.concurrent_jobs


_NO_POOL: dict[str, Any] = {"jobs_at_once": 1, "holds_jobs_at_once": True, "always_on": False,
                            "slices_per_gpu": 0, "job_gib": 0.0, "mig_profile": "",
                            "pool_layout": ""}


def _pool_facts(sizing: Sizing, pool: Layout | None, count: int, nodes: int, *,
                always_on: bool) -> dict[str, Any]:
    """What the configuration's pool is (the same for every configuration without one) on
    its ``nodes``; ``always_on``: there every hour of the year (owned, or rented for steady
    work)."""
    if pool is None:
        return {**_NO_POOL, "gpus_per_job": count, "nodes_per_job": nodes}
    return {"jobs_at_once": pool.jobs_at_once(count),
            "gpus_per_job": pool.gpus_a_job,
            "nodes_per_job": pool.nodes_per_job,
            "holds_jobs_at_once": _holds(sizing, pool, count),
            "always_on": always_on,
            "slices_per_gpu": pool.per_gpu if pool.profile else 0,
            "job_gib": pool.slice_gib * (1 if pool.profile else pool.gpus_per_job),
            "mig_profile": pool.profile,
            "pool_layout": pool.label(count),
            "run_hours": pool.run_hours}


_ACCESS_ORDER = ("self-serve", "account", "contract")


def _access(catalog: Catalog, offer: Offer, provider: Provider, gpus: int,
            instances: int) -> dict[str, str]:
    """How this configuration is sold: the offer's way, at least by account for several
    instances at once, and by contract from the policy's cluster size."""
    sold = offer.access or provider.access
    note = provider.access_note or ""
    if instances > 1 and sold == "self-serve":
        sold, note = "account", (f"{instances} instances at once need a raised quota or a "
                                 "reservation (days)")
    large = catalog.policy.contract_cluster_gpus.value
    if gpus >= large and sold != "contract":
        sold, note = "contract", (f"clusters of {large:,.0f} GPUs or more are arranged with "
                                  "the provider's sales team, weeks ahead")
    return {"access": sold, "access_note": note}


def _purchase_access(catalog: Catalog, bought: int) -> dict[str, str]:
    """How ``bought`` GPUs are bought: a cluster of the policy's size (``contract_cluster_gpus``)
    or more through a vendor's sales team, else from a price list (the team's own: nothing
    to buy)."""
    large = catalog.policy.contract_cluster_gpus.value
    if bought >= large:
        return {"access": "contract",
                "access_note": (f"clusters of {large:,.0f} GPUs or more are bought through a "
                                "vendor's sales team: quotes, lead times of weeks")}
    return {"access": "self-serve", "access_note": ""}


def _cost_range(catalog: Catalog, gpu: Gpu, t: Trial,
                cost_at: Callable[[float], float]) -> tuple[float, float]:
    """The cost for the work at the high and the low end of the method's MFU range: busy
    hours scale inversely with the utilisation reached."""
    method, policy = t.job.method, catalog.policy
    expected = mfu(gpu, method, policy, "expected", t.job.precision)
    fast = t.busy_hours * expected / mfu(gpu, method, policy, "high", t.job.precision)
    slow = t.busy_hours * expected / mfu(gpu, method, policy, "low", t.job.precision)
    return dollars(cost_at(fast)), dollars(cost_at(slow))


# -- the team's plan ------------------------------------------------------------------------
def _with_plan(catalog: Catalog, sizing: Sizing,
               found: list[PricedCandidate]) -> list[PricedCandidate]:
    """``found`` with the team's planned GPUs priced for the same work, for each method:
    owned where it can buy them, else the cheapest offer of that GPU at that count, else (no
    cloud rents that many) owned all the same, for the rules to say what keeps it out; a
    candidate already among ``found`` at the planned count is marked as the plan instead (and
    its method is not priced again)."""
    if sizing.plan is None:
        return found
    gpu_id, count = sizing.plan
    gpu = catalog.gpus[gpu_id]
    where = "local" if sizing.upfront_capex and gpu.buyable else "cloud"

    def planned_shape(c: PricedCandidate) -> bool:
        return c.config.gpu == gpu_id and c.config.count == count and c.config.where == where

    priced = {c.config.train_method for c in found if planned_shape(c)}
    planned: list[PricedCandidate] = []

    def bought(job: Job) -> list[PricedCandidate]:
        local = (_local(catalog, sizing, job, gpu, [count], plan=True)
                 if gpu.buyable and home(catalog, gpu, count) is not None else None)
        return [local] if local is not None else []

    for job in sizing.jobs:
        if job.method in priced:
            continue
        if where == "local":
            planned += bought(job)
            continue
        offered = [c for offer in catalog.offers if offer.gpu == gpu_id
                   and count in (shapes := dict(_with_pools(
                       cloud_counts(catalog, offer), _pool_instances(catalog, sizing, offer))))
                   for c in _cloud(catalog, sizing, job, offer, [(count, shapes[count])],
                                   plan=True) if c.config.pricing == "on-demand"]
        planned += ([min(offered, key=lambda c: (c.config.cost_usd_year, c.id))] if offered
                    else bought(job))
    return [_marked(c) if planned_shape(c) else c for c in found] + planned


def _with_owned(catalog: Catalog, sizing: Sizing,
                found: list[PricedCandidate]) -> list[PricedCandidate]:
    """``found`` with the team's own GPUs, for each method, at their count (where no platform
    holds that many, as eight GeForce cards in one box, at the most one machine holds: a job
    runs on one of their machines); where they cannot do a method's work and the team can
    buy, the fewest more of the same GPU beside them that can."""
    if sizing.owned is None:
        return found
    gpu_id, owned = sizing.owned
    gpu = catalog.gpus[gpu_id]
    count = most_in_one_place(gpu, owned, catalog.platforms)
    if count == 0:
        return found
    if sizing.concurrent_jobs > 1 and count < owned:
        # a pool: its jobs each run on a machine of their own, whole machines side by side
        count *= min(owned // count, sizing.concurrent_jobs)
    out = list(found)
    more = ([c for c in (*local_counts(catalog, gpu), *_pool_boxes(catalog, sizing, gpu))
             if c > count] if count == owned else [])
    for job in sizing.jobs:
        mine = _local(catalog, sizing, job, gpu, [count], owned=True)
        out += [mine] if mine is not None else []
        if (mine is None or not mine.ok) and more and sizing.upfront_capex and gpu.buyable:
            added = _local(catalog, sizing, job, gpu, more, added=True)
            out += [added] if added is not None else []
    return out



def _marked(candidate: PricedCandidate) -> PricedCandidate:
    return replace(candidate, facts={**candidate.facts, "is_plan": True})


# -- several methods on the same hardware --------------------------------------------------
def _methods_compared(found: list[PricedCandidate]) -> list[PricedCandidate]:
    """Candidates with, per hardware, the next better method's cost against theirs (and the
    next worse one's); a worse method that costs no less than a better one that meets every
    requirement on the same hardware is dropped (it could only lose)."""
    by_hardware: dict[str, list[PricedCandidate]] = {}
    for cand in found:
        by_hardware.setdefault(cand.hardware, []).append(cand)
    dropped: set[str] = set()
    for group in by_hardware.values():
        group.sort(key=lambda c: c.config.method_rank)
        for i, cand in enumerate(group):
            better = [c for c in group[:i] if c.ok and c.config.method_rank
                      < cand.config.method_rank]
            if any(c.config.cost_usd_year <= cand.config.cost_usd_year for c in better):
                dropped.add(cand.id)
    kept = [c for c in found if c.id not in dropped]
    groups: dict[str, list[PricedCandidate]] = {}
    for cand in kept:
        groups.setdefault(cand.hardware, []).append(cand)
    for group in groups.values():
        _method_neighbours(group)
    return kept


def _method_neighbours(group: list[PricedCandidate]) -> None:
    ranked = sorted(group, key=lambda c: c.config.method_rank)
    for i, cand in enumerate(ranked):
        f = cand.facts
        better = next((c for c in reversed(ranked[:i]) if c.ok), None)
        worse = next((c for c in ranked[i + 1:] if c.ok), None)
        f["better_method"] = better.config.train_method if better else "none"
        f["better_method_premium"] = _premium(better, cand)
        f["worse_method"] = worse.config.train_method if worse else "none"
        f["premium_over_worse_method"] = _premium(cand, worse)


def _premium(dearer: PricedCandidate | None, cheaper: PricedCandidate | None) -> float | None:
    """How much more the better method costs than the worse for the same work (a share)."""
    if dearer is None or cheaper is None or not cheaper.config.cost_usd_year:
        return None
    return tidy(min(dearer.config.cost_usd_year / cheaper.config.cost_usd_year - 1,
                    MAX_RATIO), 3)


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
        "link": "" if offer is None else (
            offer.link or catalog.providers[offer.provider].url or ""),
        "price_as_of": (gpu.purchase.as_of.isoformat() if gpu.purchase else "")
        if offer is None else offer.as_of.isoformat(),
        "regions": "" if offer is None else ",".join(offer.regions),
        "countries": "" if offer is None else catalog.derived(
            ("countries", offer.id), lambda: ",".join(
                dict.fromkeys(loc.country for loc in catalog.locations_of(offer)))),
        "market": "" if offer is None or offer.market is None else offer.market,
        "smallest_shape": count if offer is None else offer.smallest_gpus,
        "provider_smallest_shape": count if offer is None else min(
            o.smallest_gpus for o in catalog.offers
            if o.provider == offer.provider and o.gpu == offer.gpu),

        "multi_node": offer is not None and offer.multi_node,
        "network": "infiniband" if offer is None else offer.network,
        "form": gpu.form,
        "socket": gpu.socket,
        "host_cpu": gpu.host_cpu,
        "vram_gib": tidy(gpu.vram_gib, 2),
        "vram_usable_gib": tidy(gpu.vram_gib * catalog.policy.usable_vram_fraction.value, 1),
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


def _smallest_instance(catalog: Catalog, gpu: Gpu, for_memory: int | None) -> int | None:
    """The fewest of ``gpu`` one instance is rented at, by any offer, that hold a job needing
    ``for_memory`` of them (None where no instance does)."""
    if for_memory is None:
        return None
    return next((n for n in instance_sizes(catalog, gpu.id) if n >= for_memory), None)


def _smallest_instance_of_any_gpu(catalog: Catalog, job: Job,
                                  vendors: frozenset[str] | None) -> int | None:
    """The fewest GPUs one rented instance of any card of the team's vendors holds ``job``
    with (None where none does)."""
    sizes = [_smallest_instance(catalog, gpu, needed_on(catalog, job.request, gpu))
             for gpu in catalog.gpus.values() if vendors is None or gpu.vendor in vendors]
    return min((n for n in sizes if n is not None), default=None)


def _sized_facts(catalog: Catalog, sizing: Sizing, gpu: Gpu, t: Trial, *, wall_hours: float,
                 needed: float, busy_cap: float, cost: float, first_year: float,
                 fewest: int | None, smallest: int, limit_days: float,
                 rented: bool = False) -> dict[str, Any]:
    """What the configuration does for this work and what it costs; ``fewest`` is the
    fewest GPUs of the placement that hold the job, ``smallest`` the fewest it comes as.

    The budget check sees the first year's bill: rented compute grows by the evaluation
    and failed runs the programme adds (owned GPUs absorb them in hours they own)."""
    job = t.job
    bill = first_year + (cost * sizing.rerun_share if rented else 0.0)
    runs = job.work.runs_per_year
    single = job.single_gpu_gib
    for_memory = needed_on(catalog, job.request, gpu)
    fp8 = in_fp8(gpu, job.method, job.precision)
    return {
        "train_method": job.method,
        "precision": "fp8" if fp8 else "bf16",
        "fp8_declined": job.precision == "fp8" and not fp8,
        "fp8_card": gpu.fp8,
        "method_option": "full" if job.method == "pretrain" else job.method,
        "method_rank": job.quality_rank,
        "vram_needed_gib": t.peak,
        "vram_without_checkpointing_gib": t.peak_without_checkpointing,
        "fits": t.fits,
        "gradient_checkpointing_on": t.checkpointing,
        "gpus_for_memory": for_memory,
        "smallest_instance_holding": _smallest_instance(catalog, gpu, for_memory),
        "smallest_instance_of_any_gpu": catalog.per_job(
            ("smallest_instance_of_any_gpu", job.request.token, sizing.gpu_vendors),
            _smallest_instance_of_any_gpu, catalog, job, sizing.gpu_vendors),
        "memory_share_of_node": None if for_memory is None else tidy(for_memory / t.count, 3),
        "fewest_gpus_that_fit": fewest,
        "speed_sets_count": fewest is not None and t.count > fewest,
        "memory_sets_count": fewest is not None and t.count == fewest and fewest > smallest,
        "effective_tflops": tidy(t.speed.value, 1),
        "busy_hours_per_year": tidy(t.busy_hours, 1),
        "hours_needed_per_year": tidy(needed, 1),
        "busy_hours_cap": tidy(busy_cap, 1),
        "gpu_hours_per_year": tidy(t.busy_hours * t.count, 1),
        "gpus_filled": tidy(t.busy_hours * t.count / owned_capacity_hours(catalog.policy), 2),
        "utilisation": tidy(min(t.busy_hours / catalog.policy.hours_per_year_max.value,
                                MAX_RATIO), 4),
        "within_year": within_year(needed, busy_cap),
        "runs_per_year": runs,
        "run_hours": tidy(t.run_hours, 3),
        "days_per_run": tidy(wall_hours / 24, 4),
        "meets_deadline": wall_hours / 24 <= limit_days,
        "run_limit_days": limit_days,
        "run_limit_share": tidy(min(wall_hours / 24 / limit_days, MAX_RATIO), 3),
        "cost_usd_year": tidy(cost, 2),
        "cost_usd_per_run": tidy(cost / runs, 2) if runs else 0.0,
        "first_year_bill_usd": tidy(bill, 2),
        "over_budget": bill > sizing.budget_usd,
        "budget_ratio": tidy(min(bill / sizing.budget_usd, MAX_RATIO), 3)
        if sizing.budget_usd > 0 else 1000.0,
        "vram_headroom_ratio": tidy(gpu.vram_gib / t.peak, 3) if t.peak else 0.0,
        "vram_ratio": tidy(gpu.vram_gib * t.count / single, 3) if single else 0.0,
        "vram_job_gib": tidy(single, 2),
    }


def newest_architecture(catalog: Catalog) -> str:
    """The architecture of the most recently released GPU in the catalog."""
    return catalog.derived(("newest_architecture",), lambda: max(
        catalog.gpus.values(), key=lambda g: (g.release_year, g.id)).architecture)


def with_ratios(candidates: list[PricedCandidate], eligible: Mapping[str, bool]) -> None:
    """Add each candidate's cost relative to the cheapest eligible one: overall, on its side
    (owned or rented), and among its like (same GPU vendor, side, kind of provider and
    pricing, new or used; among hyperscalers the same provider, since a team works in one
    ecosystem): what the rules weigh a preference against."""
    groups: dict[str, Callable[[Configuration], str]] = {
        "cost_vs_cheapest": lambda c: "all",
        "cost_vs_cheapest_same_side": lambda c: c.where,
        "cost_vs_cheapest_like": lambda c: "/".join((*_like(c), c.vendor, c.condition or "")),
    }
    cheapest: dict[tuple[str, str], float] = {}
    for cand in candidates:
        if not eligible.get(cand.id, False):
            continue
        cost = cand.config.cost_usd_year
        for name, key in groups.items():
            slot = (name, key(cand.config))
            cheapest[slot] = min(cheapest.get(slot, math.inf), cost)
    for cand in candidates:
        cost = cand.config.cost_usd_year
        for name, key in groups.items():
            base = cheapest.get((name, key(cand.config)))
            cand.facts[name] = None if not base else tidy(min(cost / base, MAX_RATIO), 3)
    _against_other_vendors(candidates, eligible)
    _against_specialised(candidates, eligible)
    _against_self_serve(candidates, eligible)
    _provider_least(candidates, eligible)
    _open_cloud(candidates, eligible)
    _spot_instead(candidates, eligible)
    _against_one_node(candidates, eligible)
    _against_split(candidates, eligible)
    _dominance(candidates, eligible)
    _against_held(candidates, eligible)


def sooner_premium(policy: Policy, days: float) -> float:
    """The most a configuration that finishes a run of ``days`` in about half the time may
    cost more a year: ``sooner_run_premium_per_day`` a day of the run, between
    ``sooner_run_max_premium`` and ``sooner_run_premium_most`` (the first alone where a
    recorded policy predates the others)."""
    least = policy.sooner_run_max_premium.value
    per_day, most = policy.sooner_run_premium_per_day, policy.sooner_run_premium_most
    if per_day is None or most is None:
        return least
    return min(most.value, max(least, per_day.value * days))


def against_sooner(candidates: list[PricedCandidate], eligible: Mapping[str, bool],
                   policy: Policy) -> None:
    """For a run paid by the hour that takes days, the shortest run among the eligible
    configurations of its like and GPU vendor, trained with a method at least as good (full
    before LoRA before QLoRA), on one instance, where it is at most
    ``sooner_run_days_share`` of this one's (about half; ``sooner_alike_days``, 0 where there
    is none, and ``sooner_alike_cost_ratio``, its cost ÷ this one's): the ranking marks the
    slow one down, as an operator fills a node rather than wait weeks for a few per cent,
    and takes LoRA in hours over QLoRA in days at the same price.

    A sooner configuration may cost ``sooner_run_max_premium`` more than the cheapest of
    them; where even the cheapest one's run is long enough to be worth more
    (:func:`sooner_premium` of its days), one no harder to get than this one
    (:data:`_ACCESS_ORDER`) may cost :func:`sooner_premium` of this one's days more than
    this one, never more than ``sooner_run_premium_most`` over the cheapest: the longer the
    wait, the more a sooner run is worth, a step at a time, the steps bounded together.

    A sooner configuration whose first year goes over the compute budget (``over_budget``)
    is worth no premium over one that keeps within it: there the wait is the saving."""
    least_days = policy.sooner_run_min_days.value
    share = policy.sooner_run_days_share.value
    base = policy.sooner_run_max_premium.value

    def by_the_hour(c: Configuration) -> bool:
        return (c.where == "cloud" and c.pricing in BURST_PRICING
                and c.jobs_at_once <= 1)

    keys = [(_alike(cand.config), _quality(cand.config)) for cand in candidates]
    rows: dict[tuple[str, ...], list[tuple[int, Configuration]]] = {}
    affordable: set[str] = set()
    for cand, (alike_key, rank) in zip(candidates, keys, strict=True):
        if eligible.get(cand.id, False) and by_the_hour(cand.config):
            rows.setdefault(alike_key, []).append((rank, cand.config))
            if not cand.facts.get("over_budget"):
                affordable.add(cand.config.candidate_id)
    # per like and method rank: the sooner within the premium over the cheapest, and (where
    # the cheapest's run is long) the one-instance rows a graded premium weighs, fastest first
    fastest: dict[tuple[tuple[str, ...], int, bool], Configuration | None] = {}
    graded: dict[tuple[tuple[str, ...], int], tuple[float, list[Configuration]]] = {}
    for alike_key, alike in rows.items():
        for rank in range(len(METHOD_QUALITY)):
            good = [c for r, c in alike if r <= rank]
            if not good:
                continue
            cheapest = min(good, key=lambda c: (c.cost_usd_year, c.days_per_run))
            most = cheapest.cost_usd_year * (1 + base)
            for within in (False, True):
                fastest[alike_key, rank, within] = min(
                    (c for c in good if c.nodes == 1 and c.cost_usd_year <= most
                     and (not within or c is cheapest or c.candidate_id in affordable)),
                    key=lambda c: (c.days_per_run, c.cost_usd_year), default=None)
            if sooner_premium(policy, cheapest.days_per_run) > base:
                ceiling = cheapest.cost_usd_year * (1 + sooner_premium(policy, math.inf))
                graded[alike_key, rank] = (ceiling, sorted(
                    (c for c in good if c.nodes == 1 and c.cost_usd_year <= ceiling),
                    key=lambda c: (c.days_per_run, c.cost_usd_year)))
    _better_alike(candidates, keys, eligible)
    slowest_cheaper: dict[str, Configuration] = {}
    for cand, key in zip(candidates, keys, strict=True):
        c = cand.config
        found: Configuration | None = None
        if by_the_hour(c) and c.days_per_run >= least_days:
            within = c.candidate_id in affordable
            found = fastest.get((*key, within))
            if key in graded:
                ceiling, sooner = graded[key]
                most = min(ceiling, c.cost_usd_year * (1 + sooner_premium(policy,
                                                                          c.days_per_run)))
                mine = _ACCESS_ORDER.index(c.access)
                step = next((s for s in sooner if s.cost_usd_year <= most
                             and _ACCESS_ORDER.index(s.access) <= mine
                             and (not within or s.candidate_id in affordable)), None)
                if step is not None and (found is None
                                         or step.days_per_run < found.days_per_run):
                    found = step
            if found is not None and found.days_per_run > c.days_per_run * share:
                found = None
        cand.facts["sooner_alike_days"] = (0.0 if found is None
                                           else tidy(found.days_per_run, 1))
        cand.facts["sooner_alike_cost_ratio"] = (
            tidy(found.cost_usd_year / c.cost_usd_year, 3)
            if found is not None and c.cost_usd_year else None)
        if (found is not None and eligible.get(cand.id, False)
                and c.cost_usd_year < found.cost_usd_year):
            _keep_cheapest(slowest_cheaper, found.candidate_id, c)
    _said_against_cheaper(candidates, slowest_cheaper)


def stretched_past(c: Configuration, facts: Mapping[str, Any],
                   default_days: float | None) -> bool:
    """Whether steady work stretched the run of ``c``, capacity held all year (bought, or
    committed for months: not the team's own GPUs, paid for already), past the workload's
    default limit ``default_days`` (None: nothing was stretched): its run limit and its run
    both go past it."""
    return (default_days is not None and not c.is_owned
            and float(facts.get("run_limit_days") or 0.0) > default_days
            and c.days_per_run > default_days)


def against_the_wait(candidates: list[PricedCandidate], eligible: Mapping[str, bool],
                     policy: Policy, default_days: float | None) -> None:
    """For a configuration held all year (bought, or committed for months) whose run steady
    work stretched past the workload's default limit (``default_days``; None where nothing
    was stretched), the cheapest eligible configuration on its side (owned or rented) whose
    runs keep within that default, trained with a method at least as good, where it costs
    no more than the wait is worth: :func:`sooner_premium` of this one's days over its cost
    (``within_default_days``, 0 where there is none; ``within_default_cost_ratio``, its cost
    ÷ this one's; ``within_default_label``). Stretching keeps held GPUs busy; a run of weeks
    does not pay for a few per cent. One whose first year goes over the compute budget is no
    reason against one that keeps within it: there the wait is the saving."""
    rows = ([] if default_days is None else
            [cand.config for cand in candidates if eligible.get(cand.id, False)
             and cand.config.days_per_run <= default_days])
    over = {cand.config.candidate_id for cand in candidates if cand.facts.get("over_budget")}
    for cand in candidates:
        c = cand.config
        found: Configuration | None = None
        if stretched_past(c, cand.facts, default_days) and c.cost_usd_year:
            most = c.cost_usd_year * (1 + sooner_premium(policy, c.days_per_run))
            within = not cand.facts.get("over_budget")
            found = min((s for s in rows if s.cost_usd_year <= most and s.where == c.where
                         and _quality(s) <= _quality(c)
                         and not (within and s.candidate_id in over)),
                        key=lambda s: (s.cost_usd_year, s.days_per_run), default=None)
        cand.facts["within_default_days"] = (0.0 if found is None
                                             else tidy(found.days_per_run, 2))
        cand.facts["within_default_cost_ratio"] = (
            None if found is None else tidy(found.cost_usd_year / c.cost_usd_year, 3))
        cand.facts["within_default_label"] = "" if found is None else config_label(found)


_Key = TypeVar("_Key")


def _keep_cheapest(held: dict[_Key, Configuration], key: _Key, c: Configuration) -> None:
    """Keep under ``key`` the cheaper a year of ``c`` and the one held (ties: the smaller
    candidate id, so the order candidates come in never decides)."""
    kept = held.get(key)
    if kept is None or (c.cost_usd_year, c.candidate_id) < (kept.cost_usd_year,
                                                             kept.candidate_id):
        held[key] = c


def _said_against_cheaper(candidates: list[PricedCandidate],
                          cheaper: Mapping[str, Configuration]) -> None:
    """For each configuration that marked a cheaper, slower, eligible one of its like down
    (:func:`against_sooner`), the cheapest of those, as the advice names it
    (``sooner_than_alike_label``), its days a run and what it would save a year, in dollars
    and as a share of this one's cost: what the sooner run costs, said beside the pick."""
    for cand in candidates:
        c = cand.config
        slow = cheaper.get(c.candidate_id)
        saving = None if slow is None else c.cost_usd_year - slow.cost_usd_year
        cand.facts["sooner_than_alike_label"] = "" if slow is None else config_label(slow)
        cand.facts["sooner_than_alike_days"] = 0.0 if slow is None else tidy(
            slow.days_per_run, 1)
        cand.facts["sooner_than_alike_saving_usd"] = (
            None if saving is None else tidy(saving, 2))
        cand.facts["sooner_than_alike_saving_share"] = (
            None if saving is None or not c.cost_usd_year
            else tidy(saving / c.cost_usd_year, 3))


def _against_held(candidates: list[PricedCandidate], eligible: Mapping[str, bool]) -> None:
    """What the cheapest eligible configuration held all year (owned, or a committed term
    in months) costs for the work against each configuration (``held_vs_cost``; None where
    none is eligible): an on-demand cluster is the wrong shape for steady work only where
    such capacity does the work for about as much."""
    held = [cand.config.cost_usd_year for cand in candidates
            if eligible.get(cand.id, False) and (cand.config.where == "local"
                                                 or cand.config.reserved_months)]
    least = min(held) if held else None
    for cand in candidates:
        cost = cand.config.cost_usd_year
        cand.facts["held_vs_cost"] = (None if least is None or not cost
                                      else tidy(min(least / cost, MAX_RATIO), 3))


def _better_alike(candidates: list[PricedCandidate],
                  keys: list[tuple[tuple[str, ...], int]], eligible: Mapping[str, bool]) -> None:
    """For each configuration trained with adapters, the cheapest eligible one of its like
    and GPU vendor trained with a better method (``better_method_alike``, 'none' where there
    is none) and what it costs more (``better_method_alike_premium``): the method is chosen
    with the hardware across offers too, not only on one offer. ``keys``: each candidate's
    (:func:`_alike`, :func:`_quality`)."""
    cheapest: dict[tuple[tuple[str, ...], int], tuple[float, str]] = {}
    for cand, key in zip(candidates, keys, strict=True):
        c = cand.config
        if (eligible.get(cand.id, False) and c.jobs_at_once <= 1
                and (key not in cheapest or c.cost_usd_year < cheapest[key][0])):
            cheapest[key] = (c.cost_usd_year, c.train_method)
    for cand, (mine, quality) in zip(candidates, keys, strict=True):
        c = cand.config
        better = [cheapest[mine, rank] for rank in range(quality)
                  if (mine, rank) in cheapest]
        found = min(better) if better and c.cost_usd_year and c.jobs_at_once <= 1 else None
        cand.facts["better_method_alike"] = "none" if found is None else found[1]
        premium = None if found is None else tidy(found[0] / c.cost_usd_year - 1, 3)
        cand.facts["better_method_alike_premium"] = premium
        cand.facts["better_method_alike_cost_said"] = (
            "" if premium is None else _dearer_said(premium))


def _dearer_said(share: float) -> str:
    """How much more (or less) one thing costs than another, in words that read before
    the other: ``3% more than``, ``2% less than``, ``about the same as``."""
    percent = round(abs(share) * 100)
    if not percent:
        return "about the same as"
    return f"{percent}% {'more' if share > 0 else 'less'} than"


def _alike(c: Configuration) -> tuple[str, ...]:
    """What a run's length is weighed among: its like and GPU vendor (each method among
    those at least as good, :func:`_quality`)."""
    return (*_like(c), c.vendor)


def _quality(c: Configuration) -> int:
    """0 for full training or a pretrain, 1 for LoRA, 2 for QLoRA: lower is better (as
    ``Job.quality_rank`` ranks a job)."""
    return METHOD_QUALITY.index("full" if c.train_method == "pretrain" else c.train_method)


def _like(c: Configuration) -> tuple[str, ...]:
    """What makes configurations alike to a team weighing them: owned or rented, the pricing,
    the kind of provider and, among hyperscalers, the provider itself."""
    return (c.where, c.pricing, *market(c).values())


def market(c: Configuration) -> dict[str, str]:
    """The facts that say which configurations ``c`` competes with on its side: its kind of
    provider and, among hyperscalers, the provider itself (a team works in one ecosystem)."""
    if c.provider_kind == "hyperscaler":
        return {"provider_kind": c.provider_kind, "provider": c.provider}
    return {"provider_kind": c.provider_kind}


def _dominance(candidates: list[PricedCandidate], eligible: Mapping[str, bool]) -> None:
    """Whether an eligible configuration on the same side (owned or rented) costs no more
    for the work and finishes a run sooner: a configuration so beaten on both counts gets no
    preference of a guide's tier (``dominated_same_side``)."""
    sides: dict[str, list[tuple[float, float]]] = {}
    for cand in candidates:
        c = cand.config
        if eligible.get(cand.id, False):
            sides.setdefault(c.where, []).append((c.cost_usd_year, c.days_per_run))
    # per side, by cost: the shortest run among those costing up to each cost
    envelope: dict[str, tuple[list[float], list[float]]] = {}
    for where, rows in sides.items():
        rows.sort()
        costs, fastest, best = [], [], math.inf
        for cost, days in rows:
            best = min(best, days)
            costs.append(cost)
            fastest.append(best)
        envelope[where] = (costs, fastest)
    for cand in candidates:
        c = cand.config
        dominated = False
        if c.where in envelope:
            costs, fastest = envelope[c.where]
            at = bisect_right(costs, c.cost_usd_year)  # those costing no more
            dominated = at > 0 and fastest[at - 1] < c.days_per_run
        cand.facts["dominated_same_side"] = dominated


def _against_one_node(candidates: list[PricedCandidate], eligible: Mapping[str, bool]) -> None:
    """For a configuration of several nodes, what the cheapest eligible single-node one alike
    to it (:func:`_alike`: paid the same way, from the same kind of provider, of the same GPU
    vendor) costs more (a share; None where there is none, and on a single node): what
    keeping to one machine would cost, on the same software stack and terms. A cheaper node
    the team would not take for other reasons (another cloud, spot) is not that choice."""
    cheapest: dict[tuple[str, ...], float] = {}
    for cand in candidates:
        c = cand.config
        if eligible.get(cand.id, False) and c.nodes == 1:
            slot = _alike(c)
            cheapest[slot] = min(cheapest.get(slot, math.inf), c.cost_usd_year)
    for cand in candidates:
        c = cand.config
        base = cheapest.get(_alike(c))
        cand.facts["single_node_premium"] = (
            None if c.nodes <= 1 or base is None or not c.cost_usd_year
            else tidy(min(base / c.cost_usd_year - 1, MAX_RATIO), 3))


def _against_split(candidates: list[PricedCandidate], eligible: Mapping[str, bool]) -> None:
    """For a configuration whose job trains on several GPUs together, what the cheapest
    eligible one alike (:func:`_alike`) with one GPU a job, trained with a method at least as
    good, whose run takes no longer, costs more (``single_gpu_premium``, a share; None where
    there is none): the job without sharding or gradient exchange to set up, on a card that
    is easier to find (2× RTX 4090 beside one L40S that holds the job). One whose first year
    goes over the compute budget is no reason against one that keeps within it."""
    singles: dict[tuple[str, ...], list[tuple[Configuration, bool]]] = {}
    for cand in candidates:
        if eligible.get(cand.id, False) and gpus_a_job(cand) == 1:
            singles.setdefault(_alike(cand.config), []).append(
                (cand.config, bool(cand.facts.get("over_budget"))))
    for cand in candidates:
        c = cand.config
        found = None
        if gpus_a_job(cand) > 1 and c.cost_usd_year:
            within = not cand.facts.get("over_budget")
            found = min((s.cost_usd_year for s, over in singles.get(_alike(c), ())
                         if _quality(s) <= _quality(c) and s.days_per_run <= c.days_per_run
                         and not (within and over)), default=None)
        cand.facts["single_gpu_premium"] = (
            None if found is None else tidy(min(found / c.cost_usd_year - 1, MAX_RATIO), 3))


def _against_specialised(candidates: list[PricedCandidate],
                         eligible: Mapping[str, bool]) -> None:
    """For each hyperscaler's configuration, what it costs a year more than the cheapest
    eligible configuration of a specialised GPU cloud of its GPU vendor, paid the same way
    and no harder to get (:data:`_ACCESS_ORDER`; ``extra_vs_specialised_usd``), how many
    times as much (``cost_vs_specialised``; both None for others and where there is none),
    and that one's name: what staying in a team's cloud costs against moving its
    training."""
    cheapest: dict[tuple[str, str, int], Configuration] = {}
    for cand in candidates:
        c = cand.config
        if (eligible.get(cand.id, False) and c.where == "cloud"
                and c.provider_kind == "specialised" and c.cost_usd_year):
            for rank in range(_ACCESS_ORDER.index(c.access), len(_ACCESS_ORDER)):
                _keep_cheapest(cheapest, (c.vendor, c.pricing, rank), c)
    for cand in candidates:
        c = cand.config
        found = (cheapest.get((c.vendor, c.pricing, _ACCESS_ORDER.index(c.access)))
                 if c.provider_kind == "hyperscaler" else None)
        cand.facts["extra_vs_specialised_usd"] = (
            None if found is None else tidy(c.cost_usd_year - found.cost_usd_year, 2))
        cand.facts["cost_vs_specialised"] = (
            None if found is None else tidy(min(c.cost_usd_year / found.cost_usd_year,
                                                MAX_RATIO), 3))
        cand.facts["cheapest_specialised_label"] = "" if found is None else config_label(found)


def _provider_least(candidates: list[PricedCandidate], eligible: Mapping[str, bool]) -> None:
    """For each rented configuration, the least any eligible configuration of its provider
    costs for the year's work (``provider_least_cost_usd_year``; None for owned ones and
    where none is eligible): what the team would spend there at the least, whatever the
    count or pricing, against what a contract with that provider commits."""
    least: dict[str, float] = {}
    for cand in candidates:
        c = cand.config
        if eligible.get(cand.id, False) and c.where == "cloud":
            least[c.provider] = min(least.get(c.provider, math.inf), c.cost_usd_year)
    for cand in candidates:
        c = cand.config
        found = least.get(c.provider) if c.where == "cloud" else None
        cand.facts["provider_least_cost_usd_year"] = found


def _open_cloud(candidates: list[PricedCandidate], eligible: Mapping[str, bool]) -> None:
    """Whether an eligible rented configuration sold by card or by account does the work
    (``open_cloud_available``): where none does, a sales contract is the only way to rent
    it, and one for little spend is no worse than one for more."""
    found = any(eligible.get(cand.id, False) and cand.config.where == "cloud"
                and cand.config.access != "contract" for cand in candidates)
    for cand in candidates:
        cand.facts["open_cloud_available"] = found


def _spot_instead(candidates: list[PricedCandidate], eligible: Mapping[str, bool]) -> None:
    """For each configuration rented on demand, the cheapest eligible spot configuration of
    the same provider: what it saves as a share of this one's cost a year
    (``spot_instead_saving``; None for others and where there is none), its cost a year
    (``spot_instead_cost_usd_year``) and name (``spot_instead_label``): what runs that
    checkpoint and resume would weigh, in the same cloud."""
    cheapest: dict[str, Configuration] = {}
    for cand in candidates:
        c = cand.config
        if eligible.get(cand.id, False) and c.where == "cloud" and c.pricing == "spot":
            _keep_cheapest(cheapest, c.provider or "", c)
    for cand in candidates:
        c = cand.config
        found = (cheapest.get(c.provider or "") if c.where == "cloud"
                 and c.pricing == "on-demand" and c.cost_usd_year > 0 else None)
        cand.facts["spot_instead_saving"] = (
            None if found is None else tidy(1 - found.cost_usd_year / c.cost_usd_year, 3))
        cand.facts["spot_instead_cost_usd_year"] = (
            None if found is None else found.cost_usd_year)
        cand.facts["spot_instead_saving_usd"] = (
            None if found is None else tidy(c.cost_usd_year - found.cost_usd_year, 2))
        cand.facts["spot_instead_label"] = "" if found is None else config_label(found)


def _against_self_serve(candidates: list[PricedCandidate],
                        eligible: Mapping[str, bool]) -> None:
    """For each configuration sold by account (a quota request or an account review), the
    cheapest eligible one of its like and GPU vendor sold by card, ÷ this one's cost
    (``self_serve_cost_ratio``), what it costs more a year (``self_serve_extra_usd``; both
    None for others and where there is none) and its name (``cheapest_self_serve_label``):
    what a few days of asking for a quota save."""
    cheapest: dict[tuple[str, ...], Configuration] = {}
    for cand in candidates:
        c = cand.config
        if eligible.get(cand.id, False) and c.where == "cloud" and c.access == "self-serve":
            _keep_cheapest(cheapest, (*_like(c), c.vendor), c)
    for cand in candidates:
        c = cand.config
        found = (cheapest.get((*_like(c), c.vendor))
                 if c.where == "cloud" and c.access == "account" else None)
        cand.facts["self_serve_cost_ratio"] = (
            None if found is None or not c.cost_usd_year
            else tidy(min(found.cost_usd_year / c.cost_usd_year, MAX_RATIO), 3))
        cand.facts["self_serve_extra_usd"] = (
            None if found is None else tidy(found.cost_usd_year - c.cost_usd_year, 2))
        cand.facts["cheapest_self_serve_label"] = "" if found is None else config_label(found)


def _against_other_vendors(candidates: list[PricedCandidate],
                           eligible: Mapping[str, bool]) -> None:
    """Each candidate's cost ÷ the cheapest eligible one of another GPU vendor of its like
    (same side, pricing and kind of provider, the same provider among hyperscalers), else on
    its side (None where there is none), and that saving a year: what switching software
    stacks would save, weighed against what the team would otherwise buy the same way (not
    one :func:`against_sooner` marked down, where it has run)."""
    cheapest: dict[tuple[str, ...], float] = {}
    for cand in candidates:
        # one marked down for a sooner alike is not what the team would otherwise buy
        if eligible.get(cand.id, False) and not cand.facts.get("sooner_alike_days"):
            c = cand.config
            for slot in ((*_like(c), c.vendor), (c.where, c.vendor)):
                cheapest[slot] = min(cheapest.get(slot, math.inf), c.cost_usd_year)
    vendors = {cand.config.vendor for cand in candidates}
    for cand in candidates:
        c = cand.config
        others = [v for v in vendors if v != c.vendor]
        base = min((cheapest.get((*_like(c), v), math.inf) for v in others), default=math.inf)
        if base == math.inf:
            base = min((cheapest.get((c.where, v), math.inf) for v in others),
                       default=math.inf)
        base = 0.0 if base == math.inf else base
        cand.facts["cost_vs_other_vendor"] = None if not base else tidy(
            min(c.cost_usd_year / base, MAX_RATIO), 3)
        cand.facts["saving_vs_other_vendor_usd"] = None if not base else tidy(
            base - c.cost_usd_year, 2)
