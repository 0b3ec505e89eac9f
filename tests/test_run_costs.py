"""A run's fixed cost and spot's expected rework, as operators count them (estimates/runs.py)."""

from __future__ import annotations

import math

import pytest

from engine.catalog.load import Catalog
from engine.estimates.runs import (
    billed_hours,
    block_hours,
    checkpoint_every,
    checkpoint_gb,
    committed_hours,
    run_overhead,
    spot_overhead,
    spot_rework,
    trained_gb,
    weights_gb,
)
from engine.estimates.shape import Shape, resolve_shape


@pytest.fixture(scope="module")
def llama_70b(catalog: Catalog) -> Shape:
    return resolve_shape(catalog, model="llama-3.1-70b", params_b=None)


@pytest.fixture(scope="module")
def llama_8b(catalog: Catalog) -> Shape:
    return resolve_shape(catalog, model="llama-3.1-8b", params_b=None)


def test_a_run_downloads_16_bit_weights_and_uploads_what_it_trained(
        catalog: Catalog, llama_70b: Shape) -> None:
    policy = catalog.policy
    assert weights_gb(llama_70b, "lora", policy) == pytest.approx(141.1, abs=0.5)
    assert weights_gb(llama_70b, "pretrain", policy) == 0.0  # nothing to download
    assert trained_gb(llama_70b, "full", policy) == pytest.approx(141.1, abs=0.5)
    assert trained_gb(llama_70b, "lora", policy) < 2  # adapters only
    # resumable: 16-bit weights, fp32 master weights and Adam moments (2 + 4 + 8 bytes)
    assert checkpoint_gb(llama_70b, "full", policy) == pytest.approx(70.6 * 14, rel=0.01)


def test_start_up_grows_with_the_model_and_the_cluster(catalog: Catalog, llama_8b: Shape,
                                                       llama_70b: Shape) -> None:
    policy = catalog.policy
    small = run_overhead(llama_8b, "lora", "specialised", 1, policy)
    big = run_overhead(llama_70b, "lora", "specialised", 1, policy)
    cluster = run_overhead(llama_70b, "lora", "specialised", 4, policy)
    quantised = run_overhead(llama_70b, "qlora", "specialised", 1, policy)
    assert small.value < big.value < cluster.value
    assert quantised.value > big.value and quantised.inputs["quantise_h"]
    assert cluster.inputs["cluster_h"] == pytest.approx(
        policy.cluster_start_minutes.value / 60, abs=1e-4)
    # provisioning + transfers at the provider kind's rate; a marketplace host is slower
    assert run_overhead(llama_70b, "lora", "marketplace", 1, policy).value > big.value
    expected = (policy.provisioning_minutes["specialised"].value / 60
                + (policy.container_image_gb.value + weights_gb(llama_70b, "lora", policy)
                   + trained_gb(llama_70b, "lora", policy))
                / policy.transfer_gb_per_s["specialised"].value / 3600)
    assert big.value == pytest.approx(expected, abs=1e-3)


@pytest.mark.parametrize(("hours", "increment", "minimum", "billed"), [
    (0.5, 1, 60, 0.5),              # per second
    (10 / 3600, 1, 60, 60 / 3600),  # a 10-second run pays the minute minimum
    (0.51, 3600, 3600, 1.0),        # per hour: rounded up
    (1.01, 60, 60, 61 / 60),        # per minute
])
def test_billed_hours_round_up_to_the_increment(hours: float, increment: int, minimum: int,
                                                billed: float) -> None:
    assert billed_hours(hours, increment, minimum) == pytest.approx(billed, abs=1e-9)


def test_spot_rework_grows_with_run_length_and_instances(catalog: Catalog,
                                                         llama_8b: Shape) -> None:
    policy = catalog.policy
    size = checkpoint_gb(llama_8b, "lora", policy)
    short = spot_rework(1, 1, 0.2, size, policy, frequent=False)[0]
    long = spot_rework(20, 1, 0.2, size, policy, frequent=False)[0]
    wide = spot_rework(20, 4, 0.2, size, policy, frequent=False)[0]
    often = spot_rework(20, 4, 0.2, size, policy, frequent=True)[0]
    assert short < long < wide
    assert often < wide  # checkpointing often loses less per interruption
    extra, interruptions, _, _, _ = spot_rework(10, 2, 0.25, 0.0, policy, frequent=False)
    rate = policy.spot_interruptions_per_instance_hour.value
    interval = policy.checkpoint_interval_hours.value
    assert interruptions == pytest.approx(rate * 2 * 10)
    assert extra == pytest.approx(rate * 2 * 10 * (interval / 2 + 0.25))
    figure = spot_overhead(10, 2, 0.25, llama_8b, "lora", policy, frequent=False)
    assert figure.value == pytest.approx(spot_rework(
        10, 2, 0.25, checkpoint_gb(llama_8b, "lora", policy), policy, frequent=False)[0],
        abs=1e-3)


def test_a_large_checkpoint_is_written_less_often(catalog: Catalog) -> None:
    """A 70B full fine-tune's checkpoint (weights and optimizer states, about 1.1 TB) takes
    about 19 minutes to write: written every half hour it would stall most of a spot run.
    Operators write it at Young's interval, √(2 × write time ÷ interruption rate), about 2.5
    hours on one instance; a small adapter keeps the policy's cadence."""
    policy = catalog.policy
    rate = policy.spot_interruptions_per_instance_hour.value
    cadence = policy.checkpoint_interval_hours.value
    big = 70.6e9 * 16 / 1e9  # GB: 16-bit weights, fp32 master weights and Adam moments
    write = big / policy.checkpoint_write_gb_per_s.value / 3600
    extra, interruptions, checkpoints, written, interval = spot_rework(
        2.5, 1, 0.25, big, policy, frequent=False)
    assert written == pytest.approx(write)
    assert interval == pytest.approx(math.sqrt(2 * write / rate)) and interval > 4 * cadence
    assert checkpoints == 0.0  # a 2.5-hour run ends before its first checkpoint is due
    assert extra == pytest.approx(interruptions * (2.5 / 2 + 0.25))
    every_half_hour = rate * 2.5 * (cadence / 2 + 0.25) + (2.5 / cadence) * write
    assert extra < every_half_hour / 2
    assert checkpoint_every(0.001, 1, policy, frequent=False) == cadence


def test_a_run_shorter_than_the_interval_loses_half_of_itself(catalog: Catalog) -> None:
    policy = catalog.policy
    extra, interruptions, checkpoints, _, _ = spot_rework(0.2, 1, 0.1, 0.0, policy,
                                                          frequent=False)
    assert checkpoints == 0.0
    assert extra == pytest.approx(interruptions * (0.2 / 2 + 0.1))


def test_a_committed_term_is_paid_in_whole_terms(catalog: Catalog) -> None:
    policy = catalog.policy
    month = policy.hours_per_month.value
    assert committed_hours(12, 3, 100, policy) == policy.hours_per_year_max.value
    assert committed_hours(1, 2, 100, policy) == pytest.approx(2 * month)
    assert committed_hours(1, 2, month + 1, policy) == pytest.approx(4 * month)
    assert committed_hours(1, 40, month, policy) == policy.hours_per_year_max.value


def test_a_block_is_bought_for_each_run_in_whole_steps(catalog: Catalog) -> None:
    """AWS Capacity Blocks come in whole days; a Lambda 1-Click Cluster in weeks, two at least."""
    policy = catalog.policy
    year = policy.hours_per_year_max.value
    assert block_hours(1, 1, 4, 30, policy) == 4 * 48
    assert block_hours(1, 1, 4, 48, policy) == 4 * 48
    assert block_hours(1, 1, 4, 0.5, policy) == 4 * 24
    assert block_hours(7, 14, 2, 30, policy) == 2 * 14 * 24
    assert block_hours(7, 14, 2, 15 * 24, policy) == 2 * 21 * 24
    assert block_hours(1, 1, 400, 30, policy) == year
