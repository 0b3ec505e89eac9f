"""The team's limit on a run: max_days_per_run, or the days to its first model."""

from __future__ import annotations

from typing import Any

import pytest

from engine.answers.model import validate_answers
from engine.catalog import Catalog
from engine.facts.build import build_facts, run_limits, size, team_run_limit

BASE: dict[str, Any] = {"model": "llama-3.1-8b", "training_tokens_b": 1, "runs_per_year": 4}


@pytest.mark.parametrize(("extra", "default", "limit"), [
    ({}, 3.0, None),                                                 # neither: the default
    ({"max_days_per_run": 5}, 3.0, 5.0),                             # the team's answer
    ({"weeks_to_first_model": 1}, 3.0, None),                        # 7 days: the default binds
    ({"weeks_to_first_model": 0.5}, 30.0, 3.5),                      # the deadline binds
    ({"weeks_to_first_model": 2, "max_days_per_run": 20}, 3.0, 14.0),  # shorter than the answer
    ({"weeks_to_first_model": 4, "max_days_per_run": 20}, 3.0, 20.0),  # the answer is shorter
])
def test_the_deadline_only_shortens_a_run(catalog: Catalog, extra: dict[str, Any],
                                          default: float, limit: float | None) -> None:
    answers = validate_answers({**BASE, **extra}, catalog)
    assert team_run_limit(answers, default) == limit


@pytest.mark.parametrize(("workload", "runs", "held"), [
    ("fine-tune", 1, 14.0),    # 292 days to fill the year's busy share: the bound binds
    ("fine-tune", 52, 5.62),   # a week's share of the busy year: under the bound
    ("pretrain", 1, 90.0),     # not seven months of one pretrain on a few cards
    ("pretrain", 4, 73.0),     # four back to back fill the busy share within the bound
])
def test_steady_runs_stretch_no_further_than_the_policy_bound(
        catalog: Catalog, workload: str, runs: int, held: float) -> None:
    """Continuous work on capacity held all year may run longer than the workload's default,
    so fewer GPUs stay busy, but never past ``max_days_per_steady_run``; a policy recorded
    before that bound (none) stretches a run to the whole busy share, as its records did."""
    model = "llama-3.2-1b" if workload == "pretrain" else "llama-3.1-8b"
    answers = validate_answers({"workload": workload, "model": model, "training_tokens_b": 1,
                                "runs_per_year": runs, "usage_pattern": "continuous"}, catalog)
    facts = build_facts(answers, catalog)
    sized = size(facts, answers, catalog, ("pretrain",) if workload == "pretrain" else ("lora",))
    assert sized.deadline_days == held
    assert facts.work is not None
    unbounded = catalog.policy.model_copy(update={"max_days_per_steady_run": None})
    busy_share = catalog.policy.capacity_busy_target["high"].value
    assert run_limits(answers, facts.work, unbounded).held == round(365 * busy_share / runs, 2)
