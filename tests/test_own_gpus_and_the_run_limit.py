"""Where only the run limit keeps the team's own GPUs out, the answer says how long a limit
lets them do the work for their power alone, whether the limit is the default or the
team's; where anything else keeps them out too (a year's work they cannot do), it does not
offer the limit as the way."""

from __future__ import annotations

from typing import Any

from helpers.properties import evaluate

from engine.output.brief import brief_lines

# an on-premises team owning 2x B200 that pretrains 1B on 50B tokens twice a year, each run
# within half a day
HALF_DAY: dict[str, Any] = {
    "workload": "pretrain", "model": "llama-3.2-1b", "training_tokens_b": 50,
    "runs_per_year": 2, "usage_pattern": "continuous", "budget_usd": 2000000,
    "upfront_capex": True, "data_residency": "on-premises", "cloud_ecosystem": "gcp",
    "max_days_per_run": 0.5, "owned_gpu": "b200", "owned_gpu_count": 2}
# sixteen RTX 5090 owned for a 7B pretrain on 1T tokens: a run would take years
YEARS: dict[str, Any] = {
    "workload": "pretrain", "model_params_b": 7, "training_tokens_b": 1000,
    "runs_per_year": 1, "usage_pattern": "intermittent", "budget_usd": 2000000,
    "upfront_capex": True, "cloud_ecosystem": "none", "owned_gpu": "rtx-5090",
    "owned_gpu_count": 16}


def test_the_teams_own_limit_is_said_to_keep_its_gpus_out() -> None:
    decision = evaluate(HALF_DAY).decision
    choice = decision.hardware.choice
    assert choice is not None and choice.added_to_owned  # it buys more beside its own
    why = decision.hardware.owned_why_not
    assert why is not None and why.endswith(
        "With runs of up to 3 days (max_days_per_run is 0.5) they would do it for their "
        "power alone.")
    # the one screen says it too, beside the purchase it would spare
    assert "max_days_per_run is 0.5" in " ".join(brief_lines(decision))
    # and at that limit they do
    longer = evaluate({**HALF_DAY, "max_days_per_run": 3}).decision.hardware.choice
    assert longer is not None and longer.owned


def test_a_limit_is_not_offered_where_the_year_keeps_them_out_too() -> None:
    decision = evaluate(YEARS).decision
    why = decision.hardware.owned_why_not
    assert why is not None and "longer than the 30 days" in why
    assert "power alone" not in why and "max_days_per_run" not in why
