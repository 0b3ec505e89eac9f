"""Steady or bursty work goes on demand, since a reclaimed instance stops a run; where the
same cloud's spot would still save much, the answer says what frequent_checkpoints would
weigh, and answering it makes that spot configuration the pick at the cost it named."""

from __future__ import annotations

import re
from typing import Any

from helpers.properties import POLICY, decide

AWS_STEADY: dict[str, Any] = {
    "model": "llama-4-scout-17b-16e", "training_tokens_b": 1, "runs_per_year": 12,
    "usage_pattern": "continuous", "budget_usd": 10000, "upfront_capex": False,
    "cloud_ecosystem": "aws"}


def test_steady_work_on_demand_hears_what_spot_would_save() -> None:
    decision = decide(AWS_STEADY)
    choice = decision.hardware.choice
    assert choice is not None and choice.pricing == "on-demand"
    said = [w.text for w in decision.warnings if w.id == "spot-if-runs-restart"]
    assert len(said) == 1 and "(frequent_checkpoints)" in said[0]
    named = float(re.search(r"\$([\d,]+) a year", said[0]).group(1).replace(",", ""))  # type: ignore[union-attr]
    saving = 1 - named / choice.cost.per_year_usd
    assert saving >= POLICY.thresholds["spot_min_saving"].value and f"{saving:.0%} less" in said[0]
    # answered, spot on the same cloud is the pick, for no more than the note said (runs
    # that checkpoint often lose less at each interruption)
    restarts = decide({**AWS_STEADY, "frequent_checkpoints": True}).hardware.choice
    assert restarts is not None and restarts.pricing == "spot"
    assert restarts.provider == choice.provider
    assert f"{restarts.count}× {restarts.gpu_label} ({restarts.provider_label}, spot)" in said[0]
    assert restarts.cost.per_year_usd <= named


def test_no_spot_hint_where_the_team_already_restarts_or_runs_experiments() -> None:
    for answers in ({**AWS_STEADY, "frequent_checkpoints": True},
                    {**AWS_STEADY, "usage_pattern": "intermittent"}):
        decision = decide(answers)
        assert not [w for w in decision.warnings if w.id == "spot-if-runs-restart"]
