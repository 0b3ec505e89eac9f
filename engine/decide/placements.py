"""Where a job can run and how fast: the GPU counts a placement can have, and each count tried.

A placement is a GPU in a home: an owned platform (desktop, workstation, HGX node, several
nodes) or a cloud offer's instance shapes. A count is tried for one job (a method with its
memory question and its work): the per-GPU peak, whether gradient checkpointing is needed to
fit (only then is it on, unless the team decided), the effective speed, and the busy hours a
year and per run. Which count a configuration gets is the caller's choice (cost for the work).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from engine.catalog.load import Catalog
from engine.catalog.models import Gpu, MethodGroup, Network, Offer, Platform, Policy
from engine.estimates.cost import platform_for, platforms_taking
from engine.estimates.figure import Figure, tidy
from engine.estimates.memory import memory_model, usable_gib
from engine.estimates.throughput import effective_tflops, hours_for
from engine.facts.build import Job


class Trial(NamedTuple):
    """One count of one placement for one job (a tuple: made ~800 times a request, three
    times faster than a frozen dataclass)."""

    job: Job
    count: int  # type: ignore[assignment]  # the field, not tuple.count (never called)
    nodes: int
    peak: float
    """Per-GPU peak (GiB) with checkpointing as set."""
    peak_without_checkpointing: float
    fits: bool
    checkpointing: bool
    speed: Figure
    busy_hours: float
    """Hours a year the configuration is busy training (start-up excluded)."""
    run_hours: float
    """Hours one run keeps it busy training."""


def local_counts(catalog: Catalog, gpu: Gpu) -> tuple[int, ...]:
    """Card counts an owned configuration of this card can have (remembered per catalog)."""
    return catalog.derived(("local_counts", gpu.id), _counts_for, catalog, gpu)


def _counts_for(catalog: Catalog, gpu: Gpu) -> tuple[int, ...]:
    homes = platforms_taking(gpu, catalog.platforms)
    if not homes:
        return ()
    single = max(p.max_gpus for p in homes)
    if gpu.form == "consumer":
        single = min(single, int(catalog.policy.max_consumer_gpus_per_box.value))
    step = single if gpu.socket != "pcie" else 1  # SXM/OAM come as whole baseboards
    counts = list(range(step, single + 1, step))
    if any(p.multi_node for p in homes):
        counts += cluster_sizes(single, catalog.policy)
    # every count has a home (``home``): up to ``single`` a box that large, beyond it nodes of
    # a multi-node platform
    return tuple(counts)


def home(catalog: Catalog, gpu: Gpu, count: int,
         separate: bool = False) -> tuple[Platform, int] | None:
    """The platform that holds ``count`` × ``gpu`` and how many of it (remembered);
    ``separate``: boxes side by side will do (a pool whose jobs each run on one box)."""
    return catalog.derived(("home", gpu.id, count, separate),
                           lambda: platform_for(gpu, count, catalog.platforms,
                                                separate=separate))


def pool_box_counts(catalog: Catalog, gpu: Gpu, jobs: int) -> tuple[int, ...]:
    """Card counts beyond one box for a pool of ``jobs`` at once on a card no cluster
    platform takes (consumer and workstation cards): whole boxes, up to one box a job (a
    job of a large model takes all four cards of one)."""
    single = local_counts(catalog, gpu)
    if not single or any(p.multi_node for p in platforms_taking(gpu, catalog.platforms)):
        return ()
    return tuple(side_by_side(max(single), jobs, catalog.policy, whole=True))


def pool_instance_counts(catalog: Catalog, offer: Offer,
                         jobs: int) -> tuple[tuple[int, int], ...]:
    """(GPUs, instances) for a pool of ``jobs`` at once beyond the offer's own counts: an
    instance of each shape a job (three one-GPU pods for three jobs, not a four-GPU one);
    and, on an offer that does not span nodes, whole instances of its largest shape side by
    side, up to one GPU a job. Within the policy's largest count."""
    most = int(catalog.policy.max_gpus_considered.value)
    least = offer.min_gpus or 1
    each = [(jobs * shape, jobs) for shape in offer.shapes
            if shape >= least and jobs * shape <= most]
    if offer.multi_node or not offer.shapes:
        return tuple(each)
    box = offer.shapes[-1]
    return (*each, *((count, count // box)
                     for count in side_by_side(box, jobs, catalog.policy)))


def side_by_side(box: int, jobs: int, policy: Policy, *, whole: bool = False) -> range:
    """GPU counts of two or more ``box``-GPU machines side by side for ``jobs`` at once, up to
    one GPU a job (rounded up to whole machines), or with ``whole`` one machine a job (a job
    may need all of one), and the policy's largest count."""
    most = min(jobs * box if whole else -(-jobs // box) * box,
               int(policy.max_gpus_considered.value))
    return range(2 * box, most + 1, box)


def cloud_counts(catalog: Catalog, offer: Offer) -> tuple[tuple[int, int], ...]:
    """(GPUs, instances) an offer can be rented at: each shape, then whole multi-node sets
    (remembered per catalog)."""
    return catalog.derived(("cloud_counts", offer.id), lambda: tuple(_cloud_counts(catalog,
                                                                                    offer)))


def instance_sizes(catalog: Catalog, gpu_id: str) -> tuple[int, ...]:
    """The GPU counts one instance of ``gpu_id`` is rented at, by any offer, fewest first
    (remembered per catalog)."""
    return catalog.derived(("instance_sizes", gpu_id), lambda: tuple(sorted({
        shape for offer in catalog.offers if offer.gpu == gpu_id
        for shape in offer.shapes if shape >= (offer.min_gpus or 1)})))


def _cloud_counts(catalog: Catalog, offer: Offer) -> Iterator[tuple[int, int]]:
    least = offer.min_gpus or 1
    for shape in offer.shapes:
        if shape >= least:
            yield shape, 1
    if offer.multi_node:
        largest = offer.shapes[-1]
        for count in cluster_sizes(largest, catalog.policy):
            if count >= least:
                yield count, count // largest


def cluster_sizes(node: int, policy: Policy) -> list[int]:
    """GPU counts of clusters of ``node``-GPU nodes, from two nodes to the policy's largest:
    every whole number of nodes up to ``cluster_step_above_gpus``, then steps of an eighth
    of the power of two below the count (in whole nodes), so a frontier cluster of 16,384
    is a few dozen counts away, not thousands."""
    limit = int(policy.max_gpus_considered.value)
    linear = int(policy.cluster_step_above_gpus.value)
    counts = list(range(2 * node, min(linear, limit) + 1, node))
    count = counts[-1] if counts else node
    while True:
        power = 1 << (max(count, 1).bit_length() - 1)
        step = max(node, (power // 8) // node * node)
        count += step
        if count > limit:
            return counts
        counts.append(count)


def trial(catalog: Catalog, job: Job, gpu: Gpu, count: int, nodes: int,
          network: Network | None) -> Trial:
    """``count`` × ``gpu`` in ``nodes`` nodes doing ``job``."""
    peak, without, ckpt, speed = catalog.per_job(
        ("placement", job.request.token, job.method, job.precision, gpu.id, count, nodes,
         network),
        _placement, catalog, job, gpu, count, nodes, network)
    work = job.work
    return Trial(job=job, count=count, nodes=nodes, peak=peak,
                 peak_without_checkpointing=without,
                 fits=peak <= usable_gib(gpu, catalog.policy), checkpointing=ckpt, speed=speed,
                 busy_hours=hours_for(work.flops_per_year, speed.value),
                 run_hours=hours_for(work.flops_per_run, speed.value))


def _placement(catalog: Catalog, job: Job, gpu: Gpu, count: int, nodes: int,
               network: Network | None) -> tuple[float, float, bool, Figure]:
    """What a placement holds and how fast it trains, whatever the work: the per-GPU peak
    with checkpointing as needed and without it, whether it is on, the effective speed.

    The peaks depend on the job and the count, not the card; the speed on the card, the
    count and the method, not the job: each is remembered at that grain, so that the many
    offers of one card share a peak and a speed is computed once per catalog."""
    raw = peak_of(catalog, job, False, count)
    ckpt = memory_model(catalog).checkpointing_for(job.request, gpu, lambda: raw)
    without = tidy(raw, 2)
    peak = tidy(peak_of(catalog, job, True, count), 2) if ckpt else without
    return peak, without, ckpt, speed_of(catalog, gpu, count, nodes, network, job.method, ckpt,
                                         job.precision)


def speed_of(catalog: Catalog, gpu: Gpu, count: int, nodes: int, network: Network | None,
             method: MethodGroup, checkpointing: bool, precision: str = "bf16") -> Figure:
    """The effective speed of ``count`` × ``gpu`` for ``method`` (remembered per catalog)."""
    found: Figure = catalog.derived(
        ("speed", gpu.id, count, nodes, network, method, checkpointing, precision),
        effective_tflops, gpu, count, nodes, network, method, checkpointing, catalog.policy,
        precision)
    return found


def peak_of(catalog: Catalog, job: Job, ckpt: bool, count: int) -> float:
    """The job's unrounded per-GPU peak over ``count`` GPUs (remembered per job)."""
    return catalog.per_job(("peak", job.request, ckpt, count), memory_model(catalog).peak,
                           job.request, ckpt, count)


def nodes_of(catalog: Catalog, gpu: Gpu, count: int, separate: bool = False) -> int:
    """Boxes an owned ``count`` × ``gpu`` takes."""
    found = home(catalog, gpu, count, separate)
    return found[1] if found else 1
