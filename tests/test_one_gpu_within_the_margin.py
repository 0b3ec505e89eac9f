"""A job split over several GPUs gives way to one GPU a job that does the same work no slower
for about the same cost (same vendor, side, kind of provider and pricing), never to one that
takes the team past its compute budget where the split one keeps within it."""

from __future__ import annotations

from typing import Any

from helpers.properties import POLICY, evaluate

RULE = "hardware.one-gpu-within-the-margin"
MARGIN = POLICY.close_call_margin.value
HOBBYIST: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-8b", "method": "auto",
    "training_tokens_b": 0.02, "runs_per_year": 10, "usage_pattern": "intermittent",
    "budget_usd": 1500, "upfront_capex": True}
# a 0.5B full fine-tune all year on $4,000: 2x RTX 4070 Ti S fit the budget, 1x RTX 4090
# ($4,480 up front) does not
SMALL_STEADY: dict[str, Any] = {
    "model": "qwen2.5-0.5b", "hours_per_year": 4000, "usage_pattern": "continuous",
    "budget_usd": 4000}


def test_one_card_that_holds_the_job_beats_two_sharing_it() -> None:
    evaluation = evaluate(HOBBYIST)
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.count == 1 and pick.gpu == "l40s"
    split = next(f for f in evaluation.candidate_facts
                 if f["candidate_id"] == "cloud:runpod-community-rtx-4090:on-demandx2:lora")
    assert split["gpus_per_job"] == 2
    assert 0 < split["single_gpu_premium"] <= MARGIN  # the L40S costs a few per cent more
    assert RULE in evaluation.fired and split["candidate_id"] in evaluation.fired[RULE]
    assert pick.days_per_run is not None and pick.days_per_run <= split["days_per_run"]


def test_one_card_over_the_budget_is_no_reason_against_two_within_it() -> None:
    evaluation = evaluate(SMALL_STEADY)
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.where == "local"
    assert (pick.gpu, pick.count) == ("rtx-4070-ti-super", 2)
    assert pick.id not in evaluation.fired.get(RULE, [])
    assert not any(r.rule == "hardware.over-budget" for r in pick.reasons)


def test_a_single_gpu_is_never_told_to_give_way_to_one() -> None:
    evaluation = evaluate(HOBBYIST)
    for facts in evaluation.candidate_facts:
        if int(facts.get("gpus_per_job") or facts["count"]) == 1:
            assert facts.get("single_gpu_premium") is None
