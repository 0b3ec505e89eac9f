"""A team on a hyperscaler that buying hardware beats for the work (by more than a close call,
within the budget) leaves that cloud whichever way it goes: other clouds are weighed against
owning on price, not held off by the team's cloud's services."""

from __future__ import annotations

from typing import Any

from helpers.properties import POLICY, evaluate, warned

RULE = "cloud.own-cloud-dearer-than-owning"
MARGIN = POLICY.close_call_margin.value
# an Azure team with capital: four 3B pretrains a year on 300B tokens, two at once
AZURE_PRETRAIN: dict[str, Any] = {
    "workload": "pretrain", "model": "llama-3.2-3b", "training_tokens_b": 300,
    "runs_per_year": 4, "usage_pattern": "bursty", "budget_usd": 2_000_000,
    "upfront_capex": True, "cloud_ecosystem": "azure", "concurrent_jobs": 2}


def test_owning_for_less_than_the_own_cloud_opens_the_others() -> None:
    evaluation = evaluate(AZURE_PRETRAIN)
    facts = evaluation.request_facts
    assert facts["own_cloud_dearer_than_owning"] is True
    assert facts["own_cloud_holds_job"] is False
    assert facts["owning_instead_cost_usd_year"] < (
        facts["own_cloud_least_cost_usd_year"] * (1 - MARGIN))
    assert RULE in evaluation.fired
    assert "cloud.own-cloud-holds-nothing" not in evaluation.fired
    pick = evaluation.decision.hardware.choice
    # rented elsewhere for less than owning, which was itself less than staying on Azure
    assert pick is not None and pick.where == "cloud" and pick.provider != "azure"
    assert pick.cost.per_year_usd < facts["owning_instead_cost_usd_year"]
    said = warned(evaluation.decision, "own-cloud-dearer-than-owning")
    assert len(said) == 1 and "Microsoft Azure" in said[0]


def test_a_purchase_over_the_budget_does_not_move_the_team() -> None:
    evaluation = evaluate({**AZURE_PRETRAIN, "budget_usd": 300_000})
    facts = evaluation.request_facts
    assert facts["own_cloud_dearer_than_owning"] is False
    assert RULE not in evaluation.fired


def test_without_capital_the_team_stays_in_its_cloud() -> None:
    evaluation = evaluate({**AZURE_PRETRAIN, "upfront_capex": False})
    facts = evaluation.request_facts
    assert facts["own_cloud_dearer_than_owning"] is False
    assert facts["own_cloud_holds_job"] is True
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.provider == "azure"
