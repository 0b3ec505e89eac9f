"""What a team that owns GPUs can do with them, each priced for the same work: keep using
them, add to them, rent the peaks beside them, run as many of its jobs at once as they hold
and rent GPUs for the others, or retire them (sell, and rent it all).

Owned GPUs are bought already: using them costs their power, and their upkeep is paid as
long as they are kept, whatever they do. So the work's cost on them, alone or beside rented
GPUs, is their power (and the rent): what the pick is weighed against. Each option's
``usd_per_year`` is the year's cost of keeping or retiring them, upkeep included where they
are kept: what selling them is weighed against.

Where the year's work needs them busier than the policy's busy target
(``capacity_busy_target``: the rest of the year is maintenance, failures, queueing), they can
still do the share of it that fits and a rented configuration the rest, on demand, for the
peaks: the work is the same, split by hours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.catalog.models import Policy
from engine.decide.candidates import (
    BURST_PRICING,
    SHARE_SUFFIX,
    gpus_a_job,
    owned_capacity_hours,
)
from engine.decide.configuration import Configuration, config_label, run_length
from engine.decide.sides import Scored
from engine.estimates.figure import dollars, tidy


def owned_options(scored: Sequence[Scored], choice: Scored | None,
                  policy: Policy, concurrent_jobs: int = 1,
                  steady_jobs: bool = False,
                  longest: float | None = None) -> dict[str, Any] | None:
    """The team's options for its own GPUs on the pick's method (None: it owns none; where
    they cannot run the job, fit, vendor and run limit, only selling them is feasible);
    ``concurrent_jobs``: the jobs it runs at once, ``steady_jobs``: whether they come when
    they come (:func:`jobs_held`); ``longest``: as :func:`peaks_facts` takes it."""
    if choice is None:
        return None
    method = choice.config.train_method
    same = [s for s in scored if s.config.train_method == method]
    mine = _owned(same, method)
    if mine is None:
        return None
    f = mine.config
    upkeep = float(f.upkeep_usd_year or 0.0)
    capacity = owned_capacity_hours(policy)
    busy = f.busy_hours_per_year
    feasible = runs_on_them(f) and f.within_year and busy <= capacity and f.holds_jobs_at_once
    options: list[dict[str, Any]] = [{
        "option": "keep", "feasible": feasible, "upfront_usd": 0.0,
        "usd_per_year": tidy(f.cost_usd_year + upkeep, 2),
        "power_usd_per_year": tidy(f.cost_usd_year, 2), "upkeep_usd_per_year": upkeep,
        "busy_hours_per_year": tidy(busy, 1)}]
    added = next((s.config for s in same if s.config.owned_added and not s.excluded), None)
    if added is not None:
        options.append({"option": "add", "feasible": True,
                        "gpus_added": added.owned_added,
                        "count": added.count, "gpu": added.gpu,
                        "upfront_usd": tidy(added.upfront_usd, 2),
                        "usd_per_year": tidy(added.cost_usd_year + upkeep, 2)})
    whole = choice.id.removesuffix(SHARE_SUFFIX)
    peaks_picked = whole != choice.id
    rented = (next((s for s in scored if s.id == whole), None) if peaks_picked
              else _cheapest_burst(same))
    if rented is not None and runs_on_them(f, longest) and busy > capacity:
        options.append(_peaks(f, rented, capacity, upkeep))
    # the jobs they hold at once beside a pick rented by the job (the whole of it where the
    # pick is that split already)
    beside = rented if peaks_picked else choice
    jobs = None if beside is None else _jobs_split(f, beside, capacity,
                                                   policy.hours_per_year_max.value, upkeep,
                                                   concurrent_jobs, steady_jobs)
    if jobs is not None:
        options.append(jobs)
    if rented is not None:
        options.append({"option": "retire", "feasible": True, "upfront_usd": 0.0,
                        "resale_usd": tidy(float(f.resale_usd or 0.0), 2),
                        "usd_per_year": tidy(rented.config.cost_usd_year, 2),
                        "rented": _config(rented)})
    doable = [o for o in options if o["feasible"]]
    best = min(doable, key=lambda o: (o["usd_per_year"], o["upfront_usd"])) if doable else None
    return {"method": method, "gpu": f.gpu, "count": f.count,
            "capacity_hours_per_year": tidy(capacity, 1), "options": options,
            "cheapest": best["option"] if best else None,
            "peaks_is_the_pick": peaks_picked,
            "peaks_beat_the_pick": not peaks_picked and _beats(options, choice, policy)}


def peaks_facts(scored: Sequence[Scored], cloud: Scored | None, policy: Policy,
                concurrent_jobs: int = 1, steady_jobs: bool = False,
                longest: float | None = None) -> dict[str, Any]:
    """What the deployment rules weigh for a team whose own GPUs do a run within the limit
    but not all of the work: not the year's work within the busy target (keep them busy up
    to it), or not all the ``concurrent_jobs`` at once (run those they hold,
    :func:`jobs_held`); the rest of the work rented by the hour, on the resolved cloud
    configuration or, where that is a committed term, the best hourly one of its kind of
    cloud (nothing where that does not apply). ``longest``: the days a run on them may take
    where they do only a share of steady work and the team set no limit (the policy's
    bound on a steady run; None: the limit of every configuration)."""
    rented = peaks_rented(scored, cloud)
    if rented is None:
        return {}
    mine = _owned(scored, rented.config.train_method)
    if mine is None:
        return {}
    f = mine.config
    capacity = owned_capacity_hours(policy)
    if not runs_on_them(f, longest) or f.busy_hours_per_year <= 0:
        return {}
    held = jobs_held(f, rented, concurrent_jobs, steady_jobs,
                     (capacity, policy.hours_per_year_max.value))
    share = _owned_share(f, held, concurrent_jobs, capacity)
    if share >= 1:
        return {}
    share = tidy(share, 6)
    owned, rent = _split(f, rented, share)  # their power: the upkeep is paid either way
    r = rented.config
    rest = 0 if held is None else concurrent_jobs - held
    gpus = gpus_a_job(rented.candidate) * rest if rest else r.count
    return {"peaks_owned_share": share, "peaks_owned_percent": tidy(100 * share, 0),
            "peaks_owned_run_days": tidy(f.days_per_run or 0.0, 2),
            "peaks_owned_run_length": run_length(f.days_per_run or 0.0),
            **({} if longest is None else {"peaks_owned_longest_days": tidy(longest, 1)}),
            "peaks_cost_usd_year": dollars(owned + rent),
            "peaks_owned_usd_year": dollars(owned), "peaks_rented_usd_year": dollars(rent),
            "peaks_owned_label": f"{f.count:,}× {f.gpu_label}",
            "peaks_split": "hours" if held is None else "jobs",
            "peaks_owned_jobs": held or 0, "peaks_rented_jobs": rest,
            "peaks_rented_candidate": rented.id,
            "peaks_rented_label": config_label(r, gpus)}


def runs_on_them(f: Configuration, longest: float | None = None) -> bool:
    """Whether a run of the job goes on the team's GPUs ``f``: it fits, on a vendor the team
    allows, within the limit or, where they do only a share of steady work, within
    ``longest`` days (None: the limit only)."""
    return f.fits and f.vendor_allowed and (
        f.meets_deadline or (longest is not None and f.days_per_run is not None
                             and f.days_per_run <= longest))


def _owned_share(f: Configuration, held: int | None, concurrent: int,
                 capacity: float) -> float:
    """The share of the work the team's GPUs ``f`` do beside rented ones: the jobs at once
    they hold of ``concurrent`` (``held``, None: all), within the busy target's ``capacity``
    hours (1 where they do it all)."""
    jobs = 1.0 if held is None else held / concurrent
    return min(jobs, capacity / f.busy_hours_per_year)


def peaks_rented(scored: Sequence[Scored], cloud: Scored | None) -> Scored | None:
    """What rents the peaks: ``cloud`` where it is rented by the hour, else the best
    eligible hourly configuration of its kind of cloud doing its method."""
    if cloud is None or cloud.config.pricing in BURST_PRICING:
        return cloud
    c = cloud.config
    found = [s for s in scored if not s.excluded and s.config.where == "cloud"
             and s.config.provider_kind == c.provider_kind
             and s.config.train_method == c.train_method
             and s.config.pricing in BURST_PRICING and s.config.meets_deadline]
    return min(found, key=lambda s: s.sort_key) if found else None


def _beats(options: list[dict[str, Any]], choice: Scored, policy: Policy) -> bool:
    """Whether renting the peaks beside the team's GPUs costs less than a pick that is not
    theirs by more than the close-call margin, with nothing to buy."""
    peaks = named(options, "peaks")
    pick = choice.config.cost_usd_year
    return peaks is not None and not choice.config.is_owned and (
        peaks["work_usd_per_year"] < pick * (1 - policy.close_call_margin.value))


def _peaks(f: Configuration, rented: Scored, capacity: float,
           upkeep: float) -> dict[str, Any]:
    """The owned GPUs busy up to the target, the rest of the work rented by the hour."""
    share = capacity / f.busy_hours_per_year
    power, rent = _split(f, rented, share)
    return {"option": "peaks", "feasible": True, "upfront_usd": 0.0,
            "owned_share": tidy(share, 4), "owned_busy_hours_per_year": tidy(capacity, 1),
            "owned_busy_share": tidy(f.utilisation * share, 4),
            "owned_days_per_run": tidy(f.days_per_run or 0.0, 2),
            "power_usd_per_year": tidy(power, 2), "upkeep_usd_per_year": upkeep,
            "rented_usd_per_year": tidy(rent, 2), "rented": _config(rented),
            "work_usd_per_year": tidy(power + rent, 2),
            "usd_per_year": tidy(power + upkeep + rent, 2)}


def jobs_held(f: Configuration, rented: Scored, concurrent: int, steady: bool = False,
              hours: tuple[float, float] | None = None) -> int | None:
    """How many of the ``concurrent`` jobs the team's GPUs ``f`` run at once, where that is
    some but not all and ``rented`` can run the others: rented by the hour, each job on
    instances of its own taken only while it runs, so that its rent scales with the work
    (None otherwise). Each job has instances of its own where the pool spans one or more
    instances a job, or where ``steady`` jobs (they come when they come) rent it by the job
    (a pool of them not rented all year: the offer sells a job's share as an instance).
    With ``hours`` (the owned GPUs' busy capacity and the hours of a year), only where the
    others, each on a job slot of its own, do the rest of the work within the year."""
    r = rented.config
    if (concurrent <= 1 or f.holds_jobs_at_once or f.jobs_at_once < 1 or not f.fits
            or not f.meets_deadline or f.busy_hours_per_year <= 0 or r.where != "cloud"
            or r.always_on or r.pricing not in BURST_PRICING or r.jobs_at_once < 1
            or (r.nodes % r.jobs_at_once and not (steady and not r.mig_profile))):
        return None
    if hours is not None:
        capacity, year = hours
        share = _owned_share(f, f.jobs_at_once, concurrent, capacity)
        # the rented configuration's job-slot hours for all the work, on the jobs left
        slot_hours = (r.busy_hours_per_year * max(1, r.jobs_at_once) * (1 - share)
                      / (concurrent - f.jobs_at_once))
        if slot_hours > year:
            return None
    return f.jobs_at_once


def _jobs_split(f: Configuration, rented: Scored, capacity: float, year: float,
                upkeep: float, concurrent: int, steady: bool) -> dict[str, Any] | None:
    """Where the team's GPUs run some, not all, of the jobs it needs at once
    (:func:`jobs_held`): they run as many as they hold, on that share of the work (within
    the busy target), and ``rented`` runs the others (None where that does not apply)."""
    held = jobs_held(f, rented, concurrent, steady, (capacity, year))
    if held is None:
        return None
    share = _owned_share(f, held, concurrent, capacity)
    power, rent = _split(f, rented, share)
    return {"option": "jobs", "feasible": True, "upfront_usd": 0.0,
            "owned_jobs_at_once": held,
            "rented_jobs_at_once": concurrent - held,
            "rented_gpus_per_job": gpus_a_job(rented.candidate),
            "owned_share": tidy(share, 4),
            "owned_busy_hours_per_year": tidy(f.busy_hours_per_year * share, 1),
            "owned_busy_share": tidy(f.utilisation * share, 4),
            "owned_days_per_run": tidy(f.days_per_run or 0.0, 2),
            "power_usd_per_year": tidy(power, 2), "upkeep_usd_per_year": upkeep,
            "rented_usd_per_year": tidy(rent, 2), "rented": _config(rented),
            "work_usd_per_year": tidy(power + rent, 2),
            "usd_per_year": tidy(power + upkeep + rent, 2)}


def _split(f: Configuration, rented: Scored, share: float) -> tuple[float, float]:
    """The power of the team's GPUs doing ``share`` of the work, and the rent of ``rented``
    doing the rest (it is priced for all of it; the rent scales with the runs)."""
    return f.cost_usd_year * share, rented.config.cost_usd_year * (1 - share)


def picked_split(found: Mapping[str, Any]) -> dict[str, Any] | None:
    """Of ``estimates.owned_options``, the option the pick is part of where it rents beside
    the team's own GPUs: running the jobs they hold at once (``jobs``), else keeping them busy
    up to the target (``peaks``); None where the pick is not such a split."""
    if not found.get("peaks_is_the_pick"):
        return None
    options = found.get("options", [])
    return named(options, "jobs") or named(options, "peaks")


def named(options: Sequence[Mapping[str, Any]], option: str) -> dict[str, Any] | None:
    """The option of that name among ``owned_options``' options (None where it is not)."""
    return next((dict(o) for o in options if o["option"] == option), None)


def own_usd_per_year(peaks: Mapping[str, Any]) -> float:
    """What the team's own GPUs cost the work a year in a peaks option: their power (their
    upkeep is paid as long as they are kept, whatever they do)."""
    return float(peaks.get("power_usd_per_year") or 0)


def _owned(scored: Sequence[Scored], method: str) -> Scored | None:
    """The team's own GPUs doing ``method`` (None: it owns none that hold the job)."""
    return next((s for s in scored if s.config.is_owned and s.config.train_method == method),
                None)


def _cheapest_burst(same: Sequence[Scored]) -> Scored | None:
    found = [s for s in same if s.config.where == "cloud" and not s.excluded
             and s.config.pricing in BURST_PRICING and s.config.meets_deadline]
    return min(found, key=lambda s: (s.config.cost_usd_year, s.id)) if found else None


def _config(s: Scored) -> dict[str, Any]:
    c = s.config
    return {"id": s.id, "count": c.count, "gpu": c.gpu, "gpu_label": c.gpu_label,
            "provider_label": c.provider_label, "pricing": c.pricing,
            "usd_per_year_for_all_the_work": tidy(c.cost_usd_year, 2)}
