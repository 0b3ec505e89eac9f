"""Answers drawn from the questionnaire itself: valid, varied and the same for the same seed.

Used where a check must try the answer space rather than a few hand-written teams (which
options some input can reach). Each question keeps its default more often than not, else
takes a value of its own type within its bounds (numbers log-uniformly, so that every order
of magnitude of a budget or of a year's work is tried); answers the cross-checks refuse lose
the field they name and are checked again.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from typing import Any

from engine.answers.model import Answers, validate_answers
from engine.catalog.load import Catalog
from engine.catalog.models import Question
from engine.errors import AnswerError

_KEEP_DEFAULT = 0.6
_TRIES = 8
_WORK = ("training_tokens_b", "runs_per_year", "hours_per_year", "work_unknown")


def sampled_answers(catalog: Catalog, count: int, seed: int = 0) -> Iterator[Answers]:
    """``count`` valid answers (fewer only where the questionnaire refuses most draws)."""
    rng = random.Random(seed)
    made = 0
    for _ in range(count * _TRIES):
        if made == count:
            return
        answers = _valid(catalog, _draw(catalog, rng))
        if answers is not None:
            made += 1
            yield answers


def _draw(catalog: Catalog, rng: random.Random) -> dict[str, Any]:
    raw: dict[str, Any] = {}
    for question in catalog.questions:
        if question.id in _WORK or rng.random() < _KEEP_DEFAULT:
            continue
        value = _value(question, catalog, rng)
        if value is not None:
            raw[question.id] = value
    if rng.random() < 0.5:
        raw["training_tokens_b"] = _log_uniform(rng, 0.001, 2000.0)
        raw["runs_per_year"] = float(rng.choice([1, 2, 4, 12, 50]))
    else:
        raw["hours_per_year"] = _log_uniform(rng, 1.0, 20000.0)
    return raw


def _value(question: Question, catalog: Catalog, rng: random.Random) -> Any:
    kind = question.type
    if kind in ("choice", "tristate"):
        return rng.choice(question.choices or [None])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "list":
        choices = question.choices or []
        return sorted(rng.sample(choices, rng.randint(1, min(3, len(choices))))) if choices \
            else None
    if kind == "gpu":
        return rng.choice(sorted(catalog.gpus))
    if kind == "model":
        return rng.choice(sorted(catalog.models))
    if kind in ("int", "float"):
        low, high = question.min or 0.0, question.max or 1e6
        if isinstance(question.default, (int, float)) and question.default > 0:
            # around the default: two orders of magnitude either way, within the bounds
            low, high = max(low, question.default / 100), min(high, question.default * 100)
        number = _log_uniform(rng, low, high)
        return max(1, round(number)) if kind == "int" else number
    return None


def _log_uniform(rng: random.Random, low: float, high: float) -> float:
    low = max(low, high * 1e-9, 1e-6)
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def _valid(catalog: Catalog, raw: dict[str, Any]) -> Answers | None:
    for _ in range(_TRIES):
        try:
            return validate_answers(raw, catalog)
        except AnswerError as exc:
            if exc.field not in raw or exc.field in _WORK:
                return None
            del raw[exc.field]
    return None
