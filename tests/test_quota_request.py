"""A small team's offer sold by account (a quota request, days) is marked down, unless what is
sold by card costs far more for the work: then the account offer is weighed on its cost and
the one screen says what the request saves."""

from __future__ import annotations

from typing import Any

from helpers.properties import evaluate, warned

# 200 QLoRA jobs of a 32B model a year, 20 at once, on $3,000: 20 single-GPU instances at
# once need a raised quota
POOL_32B = {"workload": "fine-tune", "model": "qwen2.5-32b", "method": "qlora",
            "training_tokens_b": 0.1, "runs_per_year": 200, "usage_pattern": "bursty",
            "budget_usd": 3000, "upfront_capex": True, "concurrent_jobs": 20,
            "frequent_checkpoints": True}
# a course of 30 students at once on a 1B model: by card costs more, but tens of dollars
COURSE_1B = {"workload": "fine-tune", "model": "llama-3.2-1b", "method": "qlora",
             "training_tokens_b": 0.005, "runs_per_year": 300, "concurrent_jobs": 30,
             "usage_pattern": "bursty", "budget_usd": 3000, "upfront_capex": False}
RULE = "hardware.account-offer-for-a-small-team"


def _like(f: dict[str, Any]) -> tuple[Any, ...]:
    kind = f["provider_kind"]
    return (f["where"], f["pricing"], kind, f["provider"] if kind == "hyperscaler" else "",
            f["vendor"])


def test_each_account_row_is_compared_with_the_cheapest_of_its_like_sold_by_card() -> None:
    evaluation = evaluate(POOL_32B)
    facts = [f for f in evaluation.candidate_facts if f["where"] == "cloud"]
    excluded = {cid for group in evaluation.decision.hardware.excluded for cid in group.ids}
    compared = 0
    for f in facts:
        ratio, extra = f.get("self_serve_cost_ratio"), f.get("self_serve_extra_usd")
        if f["access"] != "account":
            assert ratio is None and extra is None and f["cheapest_self_serve_label"] == ""
            continue
        if ratio is None:
            assert extra is None
            continue
        compared += 1
        base = f["cost_usd_year"] + extra
        by_card = [g for g in facts if g["access"] == "self-serve" and _like(g) == _like(f)
                   and g["candidate_id"] not in excluded
                   and abs(g["cost_usd_year"] - base) <= 0.01]
        assert by_card, f["candidate_id"]
        assert abs(ratio - base / f["cost_usd_year"]) <= 6e-4
        assert f["cheapest_self_serve_label"].startswith(f"{by_card[0]['count']}× ")
    assert compared


def test_a_request_that_saves_several_times_the_cost_is_weighed_and_said() -> None:
    evaluation = evaluate(POOL_32B)
    decision = evaluation.decision
    pick = decision.hardware.choice
    assert pick is not None and pick.access == "account"
    said = warned(decision, "quota-request-pays")
    assert len(said) == 1
    text = " ".join(said[0].split())
    assert text.startswith("Asking Lambda for a quota pays: sold by card, the cheapest of its "
                           "kind costs $")
    assert pick.id not in evaluation.fired.get(RULE, [])


def test_a_request_that_saves_tens_of_dollars_is_not_worth_it() -> None:
    """By card costs more than a quarter more here, but less than
    quota_request_saving_usd_min a year: the pick stays sold by card."""
    evaluation = evaluate(COURSE_1B)
    decision = evaluation.decision
    pick = decision.hardware.choice
    assert pick is not None and pick.access == "self-serve"
    assert not warned(decision, "quota-request-pays")
    cheaper = [f for f in evaluation.candidate_facts if f["access"] == "account"
               and f.get("self_serve_extra_usd") is not None
               and f["self_serve_cost_ratio"] >= 1.25]
    assert cheaper and all(f["self_serve_extra_usd"] < 1000 for f in cheaper)


def test_a_team_with_a_production_budget_is_never_told() -> None:
    evaluation = evaluate({**POOL_32B, "budget_usd": 50000})
    assert not warned(evaluation.decision, "quota-request-pays")
