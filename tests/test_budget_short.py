"""Where every configuration the rules leave takes the first year over the budget, though one
is within reach of it, the one screen names the least and by how much it misses; and a GPU
marketplace that comes nearer the budget than a specialised cloud by more than a close call
is preferred (for data that is not sensitive)."""

from __future__ import annotations

from typing import Any

from helpers.properties import POLICY, evaluate, least_budget_candidate, warned

# a 70B LoRA overnight, 100 runs a year, on $20,000: every offer costs 1.4-2× that
OVERNIGHT_70B: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-70b", "method": "auto",
    "training_tokens_b": 0.3, "runs_per_year": 100, "usage_pattern": "intermittent",
    "budget_usd": 20000, "upfront_capex": False, "cloud_ecosystem": "none",
    "max_days_per_run": 0.5}
FAR = POLICY.thresholds["far_over_budget_ratio"].value
MARGIN = POLICY.close_call_margin.value


def test_a_budget_short_of_every_configuration_names_the_least() -> None:
    evaluation = evaluate(OVERNIGHT_70B)
    least = least_budget_candidate(evaluation)
    assert 1 < least["budget_ratio"] < FAR
    said = warned(evaluation.decision, "budget-short")
    assert len(said) == 1
    assert f"costs ${least['first_year_bill_usd']:,.0f} in its first year" in said[0]
    assert f"{least['budget_ratio']:.2f}× your $20,000 for compute" in said[0]
    assert evaluation.request_facts["least_first_year_label"] in said[0]
    assert warned(evaluation.decision, "budget-far-short") == []


def test_a_budget_one_configuration_keeps_within_is_not_told() -> None:
    evaluation = evaluate({**OVERNIGHT_70B, "budget_usd": 60000})
    assert least_budget_candidate(evaluation)["budget_ratio"] <= 1
    assert warned(evaluation.decision, "budget-short") == []


def test_a_budget_far_short_is_told_by_its_own_line_only() -> None:
    evaluation = evaluate({**OVERNIGHT_70B, "budget_usd": 5000})
    assert least_budget_candidate(evaluation)["budget_ratio"] >= FAR
    assert warned(evaluation.decision, "budget-short") == []
    assert len(warned(evaluation.decision, "budget-far-short")) == 1


def test_the_marketplace_nearer_the_budget_is_taken() -> None:
    evaluation = evaluate(OVERNIGHT_70B)
    facts = evaluation.request_facts
    budget = facts["compute_budget_usd"]
    assert facts["best_specialised_first_year_usd"] > budget
    assert facts["best_marketplace_first_year_usd"] > budget
    assert facts["marketplace_saving_on_specialised"] > MARGIN
    assert "cloud.marketplace-nearer-the-budget" in evaluation.fired
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.provider_kind == "marketplace"
    assert pick.cost.first_year_usd < facts["best_specialised_first_year_usd"]


def test_sensitive_data_stays_off_the_marketplace_however_near() -> None:
    evaluation = evaluate({**OVERNIGHT_70B, "proprietary_data": True})
    assert "cloud.marketplace-nearer-the-budget" not in evaluation.fired
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.provider_kind != "marketplace"
