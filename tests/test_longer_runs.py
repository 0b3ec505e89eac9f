"""A configuration the default run limit alone keeps out, that would do the year's work for
much less, is said with the limit that lets it in (pitfall.default-run-limit-costs-more)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.answers.model import validate_answers
from engine.decide.decision import Decision
from engine.decide.engine import load_engine

AMD_PRETRAIN: dict[str, Any] = {
    "workload": "pretrain", "model": "llama-3.1-8b", "training_tokens_b": 200,
    "runs_per_year": 2, "usage_pattern": "bursty", "budget_usd": 500000,
    "upfront_capex": True, "gpu_vendors": ["amd"]}
WARNING = "default-limit-costs-more"


def _decide(**changes: Any) -> Decision:
    """The decision with every fact (traced)."""
    engine = load_engine()
    answers = validate_answers({**AMD_PRETRAIN, **changes}, engine.catalog)
    return engine.evaluate(answers, trace=True).decision


def _said(decision: Decision) -> list[str]:
    return [" ".join(w.text.split()) for w in decision.warnings if w.id == WARNING]


def test_the_node_kept_out_by_the_default_limit_is_said_with_its_limit() -> None:
    decision = _decide()
    pick = decision.hardware.choice
    assert pick is not None and pick.days_per_run is not None and pick.days_per_run <= 30
    facts = decision.facts
    days, cost = float(facts["longer_run_days"]), float(facts["longer_run_cost_usd_year"])
    assert 30 < days <= 90  # past the default, within max_days_per_steady_run
    saving = load_engine().catalog.policy.thresholds["longer_run_min_saving"].value
    assert cost <= pick.cost.per_year_usd * (1 - saving)
    said = _said(decision)
    assert said and said[0].startswith(
        f"Runs of up to {int(facts['longer_run_answer_days'])} days (max_days_per_run; the "
        "default is 30) let in 8× MI300X (TensorWave, on-demand)")
    assert f"${cost:,.0f} a year against ${pick.cost.per_year_usd:,.0f}" in said[0]


def test_with_that_limit_it_is_the_pick_and_nothing_is_said() -> None:
    before = _decide().facts
    after = _decide(max_days_per_run=before["longer_run_answer_days"])
    pick = after.hardware.choice
    assert pick is not None and pick.id == before["longer_run_candidate"]
    assert pick.cost.per_year_usd == pytest.approx(before["longer_run_cost_usd_year"], abs=1)
    assert not _said(after)


@pytest.mark.parametrize("changes", [
    {"max_days_per_run": 30},        # the team's own limit: not a default to lift
    {"weeks_to_first_model": 6},     # 42 days to a first model: a 49-day run misses it
    {"runs_per_year": 8},            # eight runs of 49 days do not fit the year
])
def test_nothing_is_said_where_a_longer_run_is_no_option(changes: dict[str, Any]) -> None:
    assert not _said(_decide(**changes))
