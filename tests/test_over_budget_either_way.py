"""A purchase over the budget is marked down where renting fits the budget or costs about as
much; where renting is over the budget too and owning costs far less for the work, the cost
decides. And a LoRA over budget is told what QLoRA needs only where memory sets the count."""

from __future__ import annotations

from helpers.properties import POLICY, evaluate, warned

RULE = "tier.local-over-budget"
PAYS = POLICY.thresholds["over_budget_owning_pays_ratio"].value
# 1,000 Mixtral 8x22B fine-tunes a year on $100,000: renting 16x B200 costs $1.2M a year,
# owning 24x B200 a third of it
MIXTRAL_AT_SCALE = {"workload": "fine-tune", "model": "mixtral-8x22b", "method": "auto",
                    "training_tokens_b": 2, "runs_per_year": 1000,
                    "usage_pattern": "intermittent", "budget_usd": 100000,
                    "upfront_capex": True, "data_residency": "region",
                    "allowed_regions": ["eu", "uk"], "cloud_ecosystem": "gcp"}
# one 34B pretrain a year on $500: owning costs 0.6 of renting on AWS
# one 3B pretrain a year on $500, continuous and with capital: owning costs less than
# renting, with runs within the 30 days a pretrain takes by default (on 100B tokens the
# purchase's runs take 78 days, and renting within the limit is worth the wait:
# tests/test_rent_rather_than_wait.py)
PRETRAIN_3B_STEADY = {"workload": "pretrain", "model": "llama-3.2-3b", "training_tokens_b": 40,
                      "runs_per_year": 1, "usage_pattern": "continuous", "budget_usd": 500,
                      "upfront_capex": True, "cloud_ecosystem": "aws"}
PRETRAIN_34B = {"workload": "pretrain", "model_params_b": 34, "training_tokens_b": 100,
                "runs_per_year": 1, "usage_pattern": "continuous", "budget_usd": 500,
                "upfront_capex": True, "gpu_vendors": ["nvidia"], "cloud_ecosystem": "aws"}


def test_owning_far_cheaper_than_renting_over_budget_is_the_pick() -> None:
    evaluation = evaluate(MIXTRAL_AT_SCALE)
    facts = evaluation.request_facts
    assert facts["cloud_cost_usd_year"] > facts["budget_usd"]
    assert facts["own_to_rent_cost_ratio"] <= PAYS
    assert RULE not in evaluation.fired
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.where == "local"


def test_a_purchase_saving_little_over_a_rental_over_budget_is_still_marked_down() -> None:
    evaluation = evaluate(PRETRAIN_34B)
    facts = evaluation.request_facts
    assert facts["cloud_cost_usd_year"] > facts["budget_usd"]
    assert facts["own_to_rent_cost_ratio"] > PAYS
    assert RULE in evaluation.fired
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.where == "cloud"


def test_the_budget_outweighs_every_reason_to_own_together() -> None:
    # cheaper to own, continuous use and capital all favour owning; a purchase 17 times the
    # budget that saves a fifth of renting is still not the pick
    evaluation = evaluate(PRETRAIN_3B_STEADY)
    facts = evaluation.request_facts
    assert facts["local_purchase_usd"] > 10 * facts["budget_usd"]
    assert PAYS < facts["own_to_rent_cost_ratio"] < 1
    assert {RULE, "usage.cheaper-to-own", "usage.continuous-favours-local",
            "tier.capex-available"} <= set(evaluation.fired)
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.where == "cloud"


def test_a_lora_whose_count_the_work_or_the_offer_sets_is_not_told_to_weigh_qlora() -> None:
    # a 12B LoRA (32 GiB) on AWS's 8x B200, sold only as 8: QLoRA would rent the same node
    raw = {"workload": "fine-tune", "model": "gemma-3-12b", "method": "lora",
           "training_tokens_b": 2, "runs_per_year": 12, "usage_pattern": "continuous",
           "budget_usd": 3000, "upfront_capex": False, "cloud_ecosystem": "aws"}
    evaluation = evaluate(raw)
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.count > 1
    facts = next(f for f in evaluation.candidate_facts if f["candidate_id"] == pick.id)
    assert facts["budget_ratio"] >= POLICY.thresholds["far_over_budget_ratio"].value
    assert not facts["memory_sets_count"]
    assert warned(evaluation.decision, "method-over-budget") == []
