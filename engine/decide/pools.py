"""Pools: configurations that must hold several jobs at the same time.

A team whose ``concurrent_jobs`` must run at once (a platform team's shared pool, a course
whose students all train in the same lab hour) needs room for every one of them together:
each job on a MIG slice big enough for it, on a whole GPU, or on as many GPUs as one job
needs. The layout depends on the GPU and the job: the most jobs one GPU holds, among the
slices that hold one job in memory and finish its run within the limit; where no share of
one node finishes in time and the GPUs span nodes (a pretrain of several at once), a job gets
the fewest whole nodes that do. How many GPUs then follows from the number of jobs
(:meth:`Layout.jobs_at_once`). Where a configuration has more GPUs than that (an instance
sold only as 8 GPUs, for 3 jobs), :func:`spread` gives each job as many as leave room for the
others, so that none idles while the jobs run.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.catalog.load import Catalog
from engine.catalog.models import Gpu, MigProfile, Network
from engine.decide.placements import Trial, peak_of, speed_of, trial
from engine.estimates.figure import tidy
from engine.estimates.memory import memory_model, usable_gib
from engine.estimates.throughput import hours_for
from engine.facts.build import Job


@dataclass(frozen=True)
class Layout:
    """How one GPU model holds the jobs of a pool."""

    profile: str
    """The MIG profile each job gets (``1g.10gb``), empty for whole GPUs."""
    slice_gib: float
    """The memory one job gets."""
    per_gpu: int
    """Jobs one GPU holds (0 where one job needs several GPUs)."""
    gpus_per_job: int
    run_hours: float
    """One job's run on its share, training only."""
    fits: bool
    """One job fits its share."""
    peak_gib: float = 0.0
    """What one job needs on its share (gradient checkpointing on where it must be)."""
    spread: bool = False
    """Each job is given more GPUs than it needs, so that none idles while the jobs run."""
    nodes_per_job: int = 1
    """The nodes (instances) one job spans: more than one where a node is too slow."""

    @property
    def gpus_a_job(self) -> int:
        """The GPUs one job runs on (1 for a job on a slice or a whole GPU)."""
        return 1 if self.per_gpu else self.gpus_per_job

    def jobs_at_once(self, count: int) -> int:
        """The jobs ``count`` GPUs run at the same time."""
        if not self.fits:
            return 0
        return count * self.per_gpu if self.per_gpu else count // self.gpus_per_job

    def label(self, count: int) -> str:
        """``a job needs 8.5 GiB: 7 MIG slices of 10 GiB (1g.10gb) on each GPU, 14 jobs at
        once``."""
        jobs = self.jobs_at_once(count)
        at_once = f"{jobs:,} job{'' if jobs == 1 else 's'} at once"
        if not self.fits:
            return f"one job does not fit {self.gpus_per_job} of them"
        need = f"a job needs {self.peak_gib:,.1f} GiB"
        if self.profile:
            return (f"{need}: {self.per_gpu} MIG slices of {self.slice_gib:,.0f} GiB "
                    f"({self.profile}) on each GPU, {at_once}")
        if self.spread:
            share = "a GPU" if self.per_gpu else f"{self.gpus_per_job} GPUs"
            return (f"each job on {share} ({self.peak_gib:,.1f} GiB on each) so that none "
                    f"idles, {at_once}")
        if self.per_gpu:
            return f"{need}: one job per GPU, {at_once}"
        if self.nodes_per_job > 1:
            return (f"each job spans {self.nodes_per_job} nodes ({self.gpus_per_job} GPUs, "
                    f"{self.peak_gib:,.1f} GiB on each), {at_once}")
        return (f"a job needs {self.gpus_per_job} GPUs ({self.peak_gib:,.1f} GiB on each), "
                f"{at_once}")


Span = tuple[tuple[int, int], ...]
"""(GPUs, nodes) a job of a pool may span beyond one node, fewest first."""


def layout(catalog: Catalog, job: Job, gpu: Gpu, network: Network | None,
           deadline_hours: float, node_gpus: int, spans: Span = ()) -> Layout:
    """The layout of ``gpu`` for ``job``'s pool (remembered per job, its run's work, GPU and
    limit): the smallest MIG slice that holds a job and finishes its run within
    ``deadline_hours``, else a whole GPU, else the fewest GPUs of one node of ``node_gpus`` a
    job needs (1, 2, 4 …), else the fewest of ``spans`` (several nodes a job) that finish in
    time; where none does, the fastest that holds a job."""
    found: Layout = catalog.per_job(
        ("pool_layout", job.request, job.method, job.precision, job.work.flops_per_run, gpu.id,
         network, deadline_hours, node_gpus, spans),
        _layout, catalog, job, gpu, network, deadline_hours, node_gpus, spans)
    return found


def _layout(catalog: Catalog, job: Job, gpu: Gpu, network: Network | None,
            deadline_hours: float, node_gpus: int, spans: Span) -> Layout:
    whole = max((p.compute_slices for p in gpu.mig_profiles), default=1)
    for p in sorted(gpu.mig_profiles, key=lambda p: (-p.instances, -p.compute_slices)):
        if p.instances < 2:
            continue
        found = _on_slice(catalog, job, gpu, p, whole)
        if found is not None and found[0] <= deadline_hours:
            return Layout(p.name, tidy(_slice_gib(gpu, p), 1), p.instances, 1,
                          tidy(found[0], 3), True, tidy(found[1], 2))
    tried = [trial(catalog, job, gpu, k, 1, network) for k in _shares(node_gpus)]
    fitting = [t for t in tried if t.fits]
    on_time = [t for t in fitting if t.run_hours <= deadline_hours]
    if spans and not on_time:  # more nodes hold a job more easily and finish sooner: bisect
        spanned = _fewest_nodes(catalog, job, gpu, network or "infiniband",  # owned: a cluster
                                deadline_hours, spans)
        if spanned.fits:
            fitting.append(spanned)
            if spanned.run_hours <= deadline_hours:
                on_time.append(spanned)
    chosen = on_time[0] if on_time else (fitting[-1] if fitting else None)
    if chosen is None:
        return Layout("", tidy(gpu.vram_gib, 1), 0, node_gpus, 0.0, False)
    return Layout("", tidy(gpu.vram_gib, 1), 1 if chosen.count == 1 else 0, chosen.count,
                  tidy(chosen.run_hours, 3), True, chosen.peak, nodes_per_job=chosen.nodes)


def _fewest_nodes(catalog: Catalog, job: Job, gpu: Gpu, network: Network,
                  deadline_hours: float, spans: Span) -> Trial:
    """The trial of the fewest ``spans`` (not empty) that hold a job and finish its run
    within ``deadline_hours``, found by bisection (a few trials, not every span); where none
    does, the trial of the most, the fastest."""
    tried: dict[int, Trial] = {}

    def at(i: int) -> Trial:
        if i not in tried:
            tried[i] = trial(catalog, job, gpu, spans[i][0], spans[i][1], network)
        return tried[i]

    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        t = at(mid)
        if t.fits and t.run_hours <= deadline_hours:
            hi = mid
        else:
            lo = mid + 1
    return at(min(lo, len(spans) - 1))


def spread(catalog: Catalog, job: Job, gpu: Gpu, network: Network | None, base: Layout,
           count: int, jobs: int, node_gpus: int) -> Layout:
    """``base`` on ``count`` GPUs that run ``jobs`` at once: where the GPUs outnumber what
    the jobs need, each job gets the most GPUs of one node (1, 2, 4 …) that still leave room
    for all of them, as an operator spreads jobs over GPUs that would otherwise idle while
    they run (remembered per job, its run's work, GPU and count); else ``base``."""
    if not base.fits:
        return base
    found: Layout = catalog.per_job(
        ("pool_spread", job.request, job.method, job.precision, job.work.flops_per_run, gpu.id,
         network, base, count, jobs, node_gpus),
        _spread, catalog, job, gpu, network, base, count, jobs, node_gpus)
    return found


def _spread(catalog: Catalog, job: Job, gpu: Gpu, network: Network | None, base: Layout,
            count: int, jobs: int, node_gpus: int) -> Layout:
    need = base.gpus_a_job
    shares = [k for k in _shares(node_gpus) if need <= k and k * jobs <= count]
    if not shares or (shares[-1] == need and not base.profile):
        return base
    given = trial(catalog, job, gpu, shares[-1], 1, network)
    if not given.fits:
        return base
    return Layout("", tidy(gpu.vram_gib, 1), 1 if given.count == 1 else 0, given.count,
                  tidy(given.run_hours, 3), True, given.peak, spread=True)


def _shares(node_gpus: int) -> list[int]:
    """The GPUs of one node a job can be given: 1, 2, 4 … up to the whole node."""
    return [k for k in (1, 2, 4, 8, 16) if k < node_gpus] + [node_gpus]


def _on_slice(catalog: Catalog, job: Job, gpu: Gpu, p: MigProfile,
              whole: int) -> tuple[float, float] | None:
    """One job's training hours on a ``p`` slice of ``gpu`` and its peak there (None when it
    does not hold the job; gradient checkpointing as on a whole GPU: as the team asked, else
    only where the slice does not hold the job without it)."""
    room = _slice_gib(gpu, p) * usable_gib(gpu, catalog.policy) / gpu.vram_gib
    raw = peak_of(catalog, job, False, 1)
    checkpointing = memory_model(catalog).checkpointing_for(job.request, gpu, lambda: raw,
                                                            room)
    peak = peak_of(catalog, job, True, 1) if checkpointing else raw
    if peak > room:
        return None
    speed = speed_of(catalog, gpu, 1, 1, None, job.method, checkpointing, job.precision)
    return hours_for(job.work.flops_per_run, speed.value * p.compute_slices / whole), peak


def _slice_gib(gpu: Gpu, p: MigProfile) -> float:
    """A slice's memory in GiB: profiles count in the unit the GPU's memory is stated in."""
    return p.memory_gb * gpu.vram_gib / gpu.vram_gb
