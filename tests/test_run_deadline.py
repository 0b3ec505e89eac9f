"""The team's limit on a run: max_days_per_run, or the days to its first model."""

from __future__ import annotations

from typing import Any

import pytest

from engine.answers.model import validate_answers
from engine.catalog import Catalog
from engine.facts.build import team_run_limit

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
