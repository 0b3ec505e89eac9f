"""A team in a hyperscaler is told what moving its training to a specialised GPU cloud saves,
where that is far beyond what the move takes; the comparison is with what it could buy the
same way: the same GPU vendor and pricing, and an offer no harder to get."""

from __future__ import annotations

from helpers.properties import evaluate, warned

AWS_70B = {"workload": "fine-tune", "model": "llama-3.1-70b", "method": "lora",
           "training_tokens_b": 2, "runs_per_year": 100, "usage_pattern": "continuous",
           "budget_usd": 1500000, "upfront_capex": False, "cloud_ecosystem": "aws"}
ACCESS = ("self-serve", "account", "contract")


def test_each_hyperscaler_row_is_compared_with_what_it_could_buy_the_same_way() -> None:
    evaluation = evaluate(AWS_70B)
    facts = {str(f["candidate_id"]): f for f in evaluation.candidate_facts}
    compared = 0
    for f in facts.values():
        extra = f.get("extra_vs_specialised_usd")
        if f["provider_kind"] != "hyperscaler":
            assert extra is None and f.get("cost_vs_specialised") is None
            continue
        if extra is None:
            continue
        compared += 1
        base = f["cost_usd_year"] - extra
        same_way = [g for g in facts.values() if g["provider_kind"] == "specialised"
                    and g["vendor"] == f["vendor"] and g["pricing"] == f["pricing"]
                    and ACCESS.index(g["access"]) <= ACCESS.index(f["access"])
                    and abs(g["cost_usd_year"] - base) <= 0.01]
        assert same_way, f["candidate_id"]
        assert f["cheapest_specialised_label"].startswith(f"{same_way[0]['count']}× ")
        assert abs(f["cost_vs_specialised"] - f["cost_usd_year"] / base) <= 6e-4
    assert compared


def test_the_pick_says_what_the_move_saves_and_stays() -> None:
    evaluation = evaluate(AWS_70B)
    decision = evaluation.decision
    pick = decision.hardware.choice
    assert pick is not None and pick.provider == "aws"
    said = warned(decision, "own-cloud-premium-pays-a-move")
    assert len(said) == 1
    text = " ".join(said[0].split())
    assert text.startswith("Staying on Amazon Web Services costs $")
    assert "(Lambda, on-demand), a specialised GPU cloud" in text


def test_a_premium_smaller_than_the_move_is_not_said() -> None:
    """The same team with a quarter of the work: the premium over Lambda is under
    own_cloud_move_saving_usd_min, and nothing is said."""
    evaluation = evaluate({**AWS_70B, "training_tokens_b": 0.5})
    assert not warned(evaluation.decision, "own-cloud-premium-pays-a-move")


def test_a_team_outside_a_hyperscaler_is_never_told() -> None:
    evaluation = evaluate({**AWS_70B, "cloud_ecosystem": "none"})
    assert not warned(evaluation.decision, "own-cloud-premium-pays-a-move")
