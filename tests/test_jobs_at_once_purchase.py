"""Jobs at once are the team's to set: where they alone make a purchase larger, the one
screen says how few GPUs would do the year's work with the jobs run one at a time, and what
that saves up front."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.properties import POLICY, evaluate, warned

from engine.answers.model import validate_answers
from engine.decide.engine import load_engine

# an on-premises team running fifty 70B QLoRA fine-tunes a year, ten of them at once
TEN_AT_ONCE: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-70b", "method": "qlora",
    "training_tokens_b": 0.2, "runs_per_year": 50, "usage_pattern": "bursty",
    "budget_usd": 300000, "upfront_capex": True, "data_residency": "on-premises",
    "concurrent_jobs": 10}
MIN_SHARE = POLICY.thresholds["queued_purchase_min_saving"].value
YEAR = POLICY.hours_per_year_max.value


def _pick_facts(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    evaluation = evaluate(raw)
    choice = evaluation.decision.hardware.choice
    assert choice is not None and choice.where == "local"
    facts = next(f for f in evaluation.candidate_facts
                 if f["candidate_id"] == choice.id)
    return facts, warned(evaluation.decision, "jobs-at-once-size-the-purchase")


def test_ten_jobs_at_once_are_told_what_queueing_saves() -> None:
    facts, said = _pick_facts(TEN_AT_ONCE)
    # the purchase holds the ten jobs; far fewer of the card do the year's work queued
    assert facts["holds_jobs_at_once"] and facts["jobs_at_once"] >= 10
    assert 0 < facts["queued_count"] < facts["count"]
    assert facts["queued_saving_share"] >= MIN_SHARE
    # one after another, the fifty runs keep the smaller purchase busier, within the year
    assert facts["busy_hours_per_year"] / YEAR < facts["queued_busy_share"] <= 1
    assert len(said) == 1
    assert said[0].startswith(f"Your 10 jobs at once (concurrent_jobs) make the purchase "
                              f"{facts['count']} GPUs; run one at a time, "
                              f"{facts['queued_count']} would do the year's work for $")
    assert f"{facts['queued_run']} a run)" in said[0]


def test_one_job_at_a_time_hears_nothing_of_it() -> None:
    facts, said = _pick_facts({**TEN_AT_ONCE, "concurrent_jobs": 1})
    assert facts["queued_count"] == 0 and not said
    # and the purchase is the small one the line named
    queued, _ = _pick_facts(TEN_AT_ONCE)
    assert facts["count"] == queued["queued_count"]


def test_a_saving_under_the_policy_share_is_not_said(catalog_copy: Path) -> None:
    facts, _ = _pick_facts(TEN_AT_ONCE)
    policy = catalog_copy / "policy.yaml"
    text = policy.read_text()
    old = "    queued_purchase_min_saving:\n      value: 0.3\n"
    assert old in text
    above = round(facts["queued_saving_share"] + 0.01, 3)
    policy.write_text(text.replace(old, f"    queued_purchase_min_saving:\n      value: {above}\n"))
    engine = load_engine(catalog=catalog_copy)
    evaluation = engine.evaluate(validate_answers(TEN_AT_ONCE, engine.catalog), trace=False)
    assert warned(evaluation.decision, "jobs-at-once-size-the-purchase") == []


# a Google Cloud team running five short full fine-tunes at once, 300 a year
FIVE_AT_ONCE: dict[str, Any] = {
    "workload": "fine-tune", "model": "qwen3-14b", "method": "full",
    "training_tokens_b": 0.05, "runs_per_year": 300, "concurrent_jobs": 5,
    "usage_pattern": "continuous", "budget_usd": 300000, "upfront_capex": True,
    "cloud_ecosystem": "gcp"}
OWNING_SHARE = POLICY.thresholds["queued_owning_min_saving"].value


def test_jobs_at_once_that_keep_owning_out_are_told_what_queueing_costs_owned() -> None:
    evaluation = evaluate(FIVE_AT_ONCE)
    facts = evaluation.request_facts
    choice = evaluation.decision.hardware.choice
    assert choice is not None and choice.where == "cloud"
    # the best purchase holds the five jobs and costs more than renting
    assert facts["best_local_cost_usd_year"] > choice.cost.per_year_usd
    assert 0 < facts["queued_owning_count"] < facts["best_local_count"]
    assert facts["queued_owning_rent_cost_usd_year"] == facts["best_cloud_cost_usd_year"]
    assert (facts["queued_owning_cost_usd_year"]
            <= facts["queued_owning_rent_cost_usd_year"] * (1 - OWNING_SHARE))
    assert facts["queued_owning_upfront_usd"] <= facts["compute_budget_usd"]
    said = warned(evaluation.decision, "jobs-at-once-keep-owning-out")
    assert len(said) == 1 and said[0].startswith(
        "Your 5 jobs at once (concurrent_jobs) make owning "
        f"{facts['best_local_count']}× ")
    assert f"{facts['queued_owning_count']} would do the year's work for $" in said[0]


def test_one_job_at_a_time_buys_for_no_more_than_the_line_said() -> None:
    queued = evaluate(FIVE_AT_ONCE).request_facts
    evaluation = evaluate({**FIVE_AT_ONCE, "concurrent_jobs": 1})
    choice = evaluation.decision.hardware.choice
    # the purchase the line named, or a cloud that does the work for less still: owning for
    # less than its own cloud, the team is not held to it (cloud.own-cloud-dearer-than-owning)
    assert choice is not None
    assert choice.cost.per_year_usd <= queued["queued_owning_cost_usd_year"]
    assert warned(evaluation.decision, "jobs-at-once-keep-owning-out") == []
    assert "queued_owning_count" not in evaluation.request_facts


def test_a_queued_purchase_over_the_budget_is_not_offered() -> None:
    # the queued purchase costs more up front than a small budget leaves for compute
    upfront = evaluate(FIVE_AT_ONCE).request_facts["queued_owning_upfront_usd"]
    evaluation = evaluate({**FIVE_AT_ONCE, "budget_usd": round(upfront / 2)})
    assert "queued_owning_count" not in evaluation.request_facts
    assert warned(evaluation.decision, "jobs-at-once-keep-owning-out") == []
