"""Steady jobs that each span several instances rent those instances while they run, as a
job alone would: the pool is not paid for every hour of the year because its share of GPUs
is no single shape the offer sells."""

from __future__ import annotations

from typing import Any

from helpers.properties import evaluate

from engine.output.brief import brief_lines

# two 8B pretrains at once, twice a year, each within half a day: two nodes a job
TWO_NODES_A_JOB: dict[str, Any] = {
    "workload": "pretrain", "model": "llama-3.1-8b", "training_tokens_b": 10,
    "runs_per_year": 2, "usage_pattern": "continuous", "budget_usd": 2000000,
    "upfront_capex": False, "cloud_ecosystem": "none", "max_days_per_run": 0.5,
    "concurrent_jobs": 2}


def test_jobs_spanning_instances_are_rented_job_by_job() -> None:
    evaluation = evaluate(TWO_NODES_A_JOB)
    spanning = [f for f in evaluation.candidate_facts
                if f["where"] == "cloud" and f.get("jobs_at_once", 0) >= 1
                and f["nodes"] // f["jobs_at_once"] > 1]
    assert spanning  # jobs of several nodes are weighed
    assert not [f["candidate_id"] for f in spanning if f["always_on"]]
    choice = evaluation.decision.hardware.choice
    assert choice is not None and choice.gpu == "b200" and choice.count == 32
    assert choice.pool is not None and not choice.pool.always_on
    # two runs a year of about ten hours: no row is priced for a year of idle nodes (a block
    # of days bought for each run is priced for those days, and says so)
    for row in [choice, *evaluation.decision.hardware.alternatives]:
        if not row.reserved_days:
            assert row.cost.per_year_usd < 20 * choice.cost.per_year_usd, row.id


def test_the_next_step_rents_each_jobs_instances() -> None:
    decision = evaluate(TWO_NODES_A_JOB).decision
    said = " ".join(brief_lines(decision))
    assert "×8 per instance, 2 instances for each job as it starts, up to 2 at once" in said


# two small QLoRA jobs at once on AWS: one GPU each, on instances of their own
TWO_SMALL_JOBS_ON_AWS: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-8b", "method": "qlora",
    "training_tokens_b": 0.005, "runs_per_year": 100, "usage_pattern": "bursty",
    "budget_usd": 10000, "upfront_capex": False, "cloud_ecosystem": "aws",
    "concurrent_jobs": 2}


def test_a_pool_of_one_node_jobs_is_not_held_against_its_instances() -> None:
    """Jobs that each stay on one instance need no network between the pool's instances:
    the rule against several nodes does not push them onto one larger instance that costs
    nearly twice as much (4× L40S, each job spread over two)."""
    evaluation = evaluate(TWO_SMALL_JOBS_ON_AWS)
    apart = next(f for f in evaluation.candidate_facts
                 if f["candidate_id"] == "cloud:aws-l40s-g6e:on-demandx2:qlora")
    assert apart["nodes"] == 2 and apart["nodes_per_job"] == 1
    assert apart["candidate_id"] not in evaluation.fired.get(
        "hardware.one-node-within-the-margin", [])
    choice = evaluation.decision.hardware.choice
    assert choice is not None and choice.id == apart["candidate_id"]
    said = " ".join(brief_lines(evaluation.decision))
    assert "2 instances (one for each of the 2 jobs at once)" in said


def test_a_job_spanning_nodes_counts_its_nodes() -> None:
    spanning = [f for f in evaluate(TWO_NODES_A_JOB).candidate_facts
                if f["where"] == "cloud" and f["jobs_at_once"] >= 1
                and f["nodes"] // f["jobs_at_once"] > 1]
    assert spanning and all(f["nodes_per_job"] == f["nodes"] // f["jobs_at_once"]
                            for f in spanning)
