"""What one training run costs beyond its busy hours, as operators count it.

A rented run pays for the whole configuration from the moment it is provisioned: the
instances start, pull the training image, download the base model (and quantise it for
QLoRA), and at the end upload the trained weights or adapters; the provider bills in its
increments with a minimum. Spot capacity is a bet on interruptions: each one loses the work
since the last checkpoint and pays a restart, and checkpoints take time to write. A committed
term is paid in whole terms, a block bought for each run in whole steps of its days. Every
figure here carries its formula, inputs and sources.
"""

from __future__ import annotations

import math

from engine.catalog.models import MethodGroup, Policy, ProviderKind
from engine.estimates.figure import Figure, figure
from engine.estimates.memory import adapter_params
from engine.estimates.shape import Shape

GB = 1e9
"""Bytes in a GB (network and storage throughput are quoted in decimal units)."""


def weights_gb(shape: Shape, method: MethodGroup, policy: Policy) -> float:
    """GB of base-model weights a fine-tuning run downloads (16-bit; none for a pretrain)."""
    if method == "pretrain":
        return 0.0
    return shape.params * policy.weight_bytes_16bit.value / GB


def trained_gb(shape: Shape, method: MethodGroup, policy: Policy) -> float:
    """GB a run uploads at its end: the 16-bit weights, or only the adapters."""
    if method in ("lora", "qlora"):
        params = adapter_params(shape, int(policy.lora_rank.value))
        return params * policy.weight_bytes_16bit.value / GB
    return shape.params * policy.weight_bytes_16bit.value / GB


def checkpoint_gb(shape: Shape, method: MethodGroup, policy: Policy) -> float:
    """GB of one resumable checkpoint: the trained weights with their optimizer states (only
    the adapters' for LoRA/QLoRA, whose base is frozen)."""
    if method in ("lora", "qlora"):
        params = adapter_params(shape, int(policy.lora_rank.value))
        return params * policy.adapter_state_bytes.value / GB
    per_param = (policy.weight_bytes_16bit.value + policy.master_weight_bytes.value
                 + policy.adam_state_bytes.value)
    return shape.params * per_param / GB


def run_overhead(shape: Shape, method: MethodGroup, kind: ProviderKind, nodes: int,
                 policy: Policy) -> Figure:
    """Hours a rented run spends on the whole configuration before and after training:
    provisioning (more for a multi-node cluster), the image pull, the weights download, 4-bit
    quantisation for QLoRA, and the upload of what it trained."""
    provisioning = policy.provisioning_minutes[kind]
    transfer = policy.transfer_gb_per_s[kind]
    provision = provisioning.value / 60
    cluster = policy.cluster_start_minutes.value / 60 if nodes > 1 else 0.0
    bandwidth = transfer.value
    image = policy.container_image_gb.value / bandwidth / 3600
    weights = weights_gb(shape, method, policy) / bandwidth / 3600
    quantise = (policy.qlora_quantise_seconds_per_b.value * shape.params_b / 3600
                if method == "qlora" else 0.0)
    upload = trained_gb(shape, method, policy) / bandwidth / 3600
    sources: list[str] = [*provisioning.sources, *policy.container_image_gb.sources,
                          *transfer.sources]
    if nodes > 1:
        sources += policy.cluster_start_minutes.sources
    if method == "qlora":
        sources += policy.qlora_quantise_seconds_per_b.sources
    return figure(
        provision + cluster + image + weights + quantise + upload, "hours/run",
        "provisioning (+ cluster start across nodes) + (image GB + weights GB + trained GB) "
        "÷ transfer GB/s ÷ 3600 + 4-bit quantisation (QLoRA)",
        sources, provisioning_h=provision, cluster_h=cluster, image_h=image,
        weights_h=weights, quantise_h=quantise, upload_h=upload, transfer_gb_per_s=bandwidth)


def billed_hours(hours: float, increment_s: int, minimum_s: int) -> float:
    """Hours a provider bills for an instance running ``hours``: rounded up to its billing
    increment, and at least its minimum."""
    seconds = max(hours * 3600, float(minimum_s))
    return math.ceil(seconds / increment_s - 1e-9) * increment_s / 3600


def checkpoint_every(write_h: float, instances: int, policy: Policy, *,
                     frequent: bool) -> float:
    """Hours between a spot run's checkpoints: the policy's cadence (the shorter one of a team
    that checkpoints often), stretched to Young's optimum, the square root of twice the write
    time over the interruption rate, where writing a checkpoint takes long against the time
    between interruptions (a 70B full fine-tune's 1.1 TB takes about 19 minutes: one every
    2.5 hours on one instance, not every half hour)."""
    every = (policy.frequent_checkpoint_interval_hours if frequent
             else policy.checkpoint_interval_hours).value
    rate = policy.spot_interruptions_per_instance_hour.value * instances
    if rate <= 0 or write_h <= 0:
        return every
    return max(every, math.sqrt(2 * write_h / rate))


def spot_rework(run_hours: float, instances: int, restart_h: float, checkpoint_gb_: float,
                policy: Policy, *, frequent: bool) -> tuple[float, float, float, float, float]:
    """(expected extra hours a run, interruptions, checkpoints, hours to write one, hours
    between them) of a spot run: the arithmetic of :func:`spot_overhead`, without its
    trace."""
    write = checkpoint_gb_ / policy.checkpoint_write_gb_per_s.value / 3600
    interval = checkpoint_every(write, instances, policy, frequent=frequent)
    expected = policy.spot_interruptions_per_instance_hour.value * instances * run_hours
    lost = min(interval, run_hours) / 2  # a run shorter than the interval has no checkpoint
    checkpoints = max(0.0, run_hours / interval - 1)  # the last is the run's own upload
    return (expected * (lost + restart_h) + checkpoints * write, expected, checkpoints, write,
            interval)


def spot_overhead(run_hours: float, instances: int, restart_h: float, shape: Shape,
                  method: MethodGroup, policy: Policy, *, frequent: bool) -> Figure:
    """Expected extra hours a spot run spends on interruptions and checkpoints.

    Interruptions arrive at the policy's rate per instance-hour, so their number grows with
    the run's length and its instances; each loses half a checkpoint interval of work (half
    the run where it is shorter) and pays a restart. Every checkpoint before the run's end
    stops the whole configuration while it is written, so a large one is written less often
    (:func:`checkpoint_every`).
    """
    every = (policy.frequent_checkpoint_interval_hours if frequent
             else policy.checkpoint_interval_hours)
    extra, expected, checkpoints, write, interval = spot_rework(
        run_hours, instances, restart_h, checkpoint_gb(shape, method, policy), policy,
        frequent=frequent)
    return figure(
        extra, "hours/run",
        "interruptions (rate × instances × run hours) × (half the work between checkpoints "
        "+ restart) + checkpoints before the end (run hours ÷ interval − 1) × checkpoint GB "
        "÷ write GB/s; the interval is the policy's, or √(2 × write hours ÷ interruptions an "
        "hour) where that is longer",
        [*policy.spot_interruptions_per_instance_hour.sources, *every.sources,
         *policy.checkpoint_write_gb_per_s.sources, "young-checkpoint-interval-1974"],
        interruptions=expected, interval_h=interval, restart_h=restart_h,
        checkpoints=checkpoints, checkpoint_write_h=write, instances=instances,
        run_hours=run_hours)


def committed_hours(term_months: int, runs: float, run_hours: float, policy: Policy) -> float:
    """Hours a year a committed term is paid for: a term of a year or more covers every hour;
    a shorter one is bought in whole terms around each run (at most every hour of the year)."""
    year = policy.hours_per_year_max.value
    term_h = term_months * policy.hours_per_month.value
    if term_h >= year:
        return year
    return min(year, runs * math.ceil(run_hours / term_h - 1e-9) * term_h)


HOURS_PER_DAY = 24


def block_hours(step_days: int, shortest_days: int, runs: float, run_hours: float,
                policy: Policy) -> float:
    """Hours a year blocks bought ahead for each run are paid for (AWS Capacity Blocks,
    Lambda 1-Click Clusters): each run's hours in whole steps of ``step_days``, at least
    ``shortest_days`` (at most every hour of the year)."""
    step_h = step_days * HOURS_PER_DAY
    per_run = max(shortest_days * HOURS_PER_DAY, math.ceil(run_hours / step_h - 1e-9) * step_h)
    return min(policy.hours_per_year_max.value, runs * per_run)
