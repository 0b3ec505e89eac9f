"""An entry-budget team whose own hyperscaler sells nothing that holds its job is as free to
use a GPU marketplace as a team with no cloud: its services do not come with the GPUs."""

from __future__ import annotations

from helpers.properties import evaluate

RULE = "cloud.marketplace-for-small-budgets"
# an Azure team with $500: Azure holds nothing for 1,000 GPU-hours of a 0.6B LoRA
AZURE_ENTRY = {"workload": "fine-tune", "model": "qwen3-0.6b", "method": "auto",
               "hours_per_year": 1000, "usage_pattern": "intermittent", "budget_usd": 500,
               "upfront_capex": False, "gpu_vendors": ["nvidia"], "cloud_ecosystem": "azure"}


def test_an_entry_team_whose_cloud_holds_nothing_rents_from_a_marketplace() -> None:
    evaluation = evaluate(AZURE_ENTRY)
    facts = evaluation.request_facts
    assert facts["budget_tier"] == "entry" and facts["own_cloud_holds_job"] is False
    assert RULE in evaluation.fired
    pick = evaluation.decision.hardware.choice
    assert pick is not None
    pick_facts = next(f for f in evaluation.candidate_facts if f["candidate_id"] == pick.id)
    assert pick_facts["provider_kind"] == "marketplace"
    cheapest_specialised = min(f["cost_usd_year"] for f in evaluation.candidate_facts
                               if f["provider_kind"] == "specialised"
                               and f["cost_usd_year"] is not None)
    assert pick_facts["cost_usd_year"] < cheapest_specialised


def test_an_entry_team_whose_cloud_holds_the_job_stays_there() -> None:
    # the same team on AWS with a job its cloud holds: no marketplace preference
    raw = {**AZURE_ENTRY, "cloud_ecosystem": "aws", "hours_per_year": 20}
    evaluation = evaluate(raw)
    assert evaluation.request_facts["own_cloud_holds_job"] is True
    assert RULE not in evaluation.fired
