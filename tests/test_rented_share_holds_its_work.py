"""The rented side of a split with the team's own GPUs does its share of the work within the
year on the jobs it runs at once, or the split is not offered."""

from __future__ import annotations

from helpers.properties import POLICY, evaluate

# 1,000 full fine-tunes of a 4B model a year, 3 at once, beside an owned 4x A100 80GB node
# that runs 2 of them: the one job rented at a time would need 23,690 hours a year
THREE_AT_ONCE = {"workload": "fine-tune", "model": "phi-4-mini", "method": "full",
                 "training_tokens_b": 2, "runs_per_year": 1000, "usage_pattern": "continuous",
                 "budget_usd": 3000, "upfront_capex": False, "gpu_vendors": ["nvidia"],
                 "cloud_ecosystem": "none", "concurrent_jobs": 3, "owned_gpu": "a100-80gb",
                 "owned_gpu_count": 4}


def test_the_pick_is_never_busy_more_hours_than_a_year_has() -> None:
    pick = evaluate(THREE_AT_ONCE).decision.hardware.choice
    assert pick is not None
    assert pick.busy_hours_per_year <= POLICY.hours_per_year_max.value
