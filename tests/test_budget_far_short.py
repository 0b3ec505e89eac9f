"""Where no configuration the rules leave does the work within reach of the budget, the one
screen says so, with the least any of them costs: the work or the budget has to change."""

from __future__ import annotations

from typing import Any

from helpers.properties import POLICY, evaluate, least_budget_candidate, warned

# a 3B pretrain on 2T tokens four times a year, on $500
FAR_SHORT: dict[str, Any] = {
    "workload": "pretrain", "model_params_b": 3, "training_tokens_b": 2000,
    "runs_per_year": 4, "usage_pattern": "intermittent", "budget_usd": 500,
    "upfront_capex": True, "cloud_ecosystem": "aws"}
FAR = POLICY.thresholds["far_over_budget_ratio"].value


def test_a_budget_far_short_of_every_configuration_is_told() -> None:
    evaluation = evaluate(FAR_SHORT)
    facts = evaluation.request_facts
    least = least_budget_candidate(evaluation)
    assert facts["least_budget_ratio"] == least["budget_ratio"] >= FAR
    assert facts["least_first_year_bill_usd"] == least["first_year_bill_usd"]
    said = warned(evaluation.decision, "budget-far-short")
    assert len(said) == 1
    assert f"is ${least['first_year_bill_usd']:,.0f}, against the $500 it leaves" in said[0]


def test_a_budget_within_reach_of_one_configuration_is_not_told() -> None:
    least = evaluate(FAR_SHORT).request_facts["least_first_year_bill_usd"]
    # a budget the cheapest configuration costs under far_over_budget_ratio times
    evaluation = evaluate({**FAR_SHORT, "budget_usd": round(least / FAR * 1.1)})
    assert evaluation.request_facts["least_budget_ratio"] < FAR
    assert warned(evaluation.decision, "budget-far-short") == []


def test_a_budget_that_leaves_nothing_for_compute_is_told_otherwise() -> None:
    # the whole programme's people and data take all of it: another line says that
    evaluation = evaluate({**FAR_SHORT, "budget_covers": "programme"})
    assert evaluation.request_facts["compute_budget_usd"] == 0
    assert warned(evaluation.decision, "budget-far-short") == []
