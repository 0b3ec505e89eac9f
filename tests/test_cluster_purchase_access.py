"""A purchase of a cluster (contract_cluster_gpus or more bought) is sold through a vendor's
sales team, as a rented cluster of that size is, and is as far out of a small team's reach;
GPUs the team owns and smaller purchases are bought from a price list."""

from __future__ import annotations

from typing import Any

from helpers.properties import POLICY, evaluate

from engine.decide.engine import Evaluation

RULE = "hardware.cluster-purchase-for-a-small-team"
LARGE = POLICY.contract_cluster_gpus.value
SMALL_TEAM = POLICY.access_budget_usd_min["contract"].value
# one 13B pretrain a year on 2T tokens: only clusters meet the 30-day limit
PRETRAIN_13B = {"workload": "pretrain", "model_params_b": 13, "training_tokens_b": 2000,
                "runs_per_year": 1, "usage_pattern": "bursty", "budget_usd": 20000,
                "upfront_capex": True, "cloud_ecosystem": "none"}


def _purchases(evaluation: Evaluation) -> list[dict[str, Any]]:
    return [f for f in evaluation.candidate_facts
            if f["where"] == "local" and not f["is_owned"]]


def test_a_purchase_is_sold_by_contract_from_the_cluster_size() -> None:
    evaluation = evaluate(PRETRAIN_13B)
    purchases = _purchases(evaluation)
    assert any(f["count"] >= LARGE for f in purchases)
    assert any(f["count"] < LARGE for f in purchases)
    for f in purchases:
        assert f["access"] == ("contract" if f["count"] >= LARGE else "self-serve"), f
        assert bool(f["access_note"]) == (f["access"] == "contract")


def test_a_small_team_is_not_told_to_buy_a_cluster() -> None:
    evaluation = evaluate(PRETRAIN_13B)
    assert evaluation.request_facts["budget_usd"] < SMALL_TEAM
    assert RULE in evaluation.fired
    assert evaluation.decision.hardware.choice is None
    assert RULE in {e.rule for e in evaluation.decision.hardware.excluded}


def test_a_team_of_a_contract_budget_may_buy_the_cluster() -> None:
    evaluation = evaluate({**PRETRAIN_13B, "budget_usd": 5_000_000})
    assert RULE not in evaluation.fired
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.count >= LARGE
