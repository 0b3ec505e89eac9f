"""What-if: for each decision axis, the smallest single answer change that flips it.

Numeric answers are probed at and around every threshold the rules compare them with
(literal thresholds, and the current value of a fact they are compared against, such as
``break_even_hours``); choice and boolean answers are tried at every other value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.answers.model import Answers, validate_answers
from engine.catalog.models import Question
from engine.decide.engine import Decision, Engine
from engine.errors import InputError
from engine.facts.spec import DERIVED
from engine.rules.conditions import FactRef, leaves

_EPS = 1e-6


@dataclass(frozen=True)
class Flip:
    """Changing ``answer`` to ``value`` flips ``axis`` from ``before`` to ``after``."""

    axis: str
    before: str | None
    after: str | None
    answer: str
    value: Any
    current: Any
    distance: float

    def as_json(self) -> dict[str, Any]:
        """The public JSON form: ``{axis, from, to, answer, value}`` (+ current)."""
        return {"axis": self.axis, "from": self.before, "to": self.after,
                "answer": self.answer, "value": self.value, "current": self.current}


WORK_ANSWERS = ("hours_per_year", "runs_per_year", "training_tokens_b")
"""Answers the year's work is proportional to."""


def thresholds(engine: Engine, field: str, facts: dict[str, Any]) -> list[float]:
    """Numbers the rules compare ``field`` with (literals, and compared facts' values), and
    for an answer that sets the work, the value at which the work reaches each level of
    work a rule could turn on (the break-even)."""
    found: set[float] = set(_work_levels(field, facts))
    for rule in engine.rulebook.rules:
        for leaf in leaves(rule.condition):
            if leaf.op in ("exists", "is", "in", "not_in"):
                continue
            value = leaf.value
            if leaf.fact == field:
                if isinstance(value, FactRef):
                    value = facts.get(value.name)
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    found.add(float(value))
            elif isinstance(value, FactRef) and value.name == field:
                other = facts.get(leaf.fact)
                if isinstance(other, (int, float)) and not isinstance(other, bool):
                    found.add(float(other))
    return sorted(found)


def _work_levels(field: str, facts: dict[str, Any]) -> list[float]:
    """``field``'s value at which the year's work equals each work level among the facts
    (the work is proportional to it)."""
    if field not in WORK_ANSWERS:
        return []
    current = _current(field, facts)
    work = facts.get("work_gpu_hours_per_year")
    if not current or not work:
        return []
    levels = [facts.get(spec.name) for spec in DERIVED if spec.work_level]
    return [current * float(level) / float(work) for level in levels
            if isinstance(level, (int, float)) and level > 0]


def _current(field: str, facts: dict[str, Any]) -> float | None:
    value = facts.get(field)
    if value is None and field == "runs_per_year" and facts.get("training_tokens_b"):
        return 1.0
    return float(value) if isinstance(value, (int, float)) else None


def _probes(question: Question, current: float, marks: Iterable[float]) -> list[float]:
    step = 1.0 if question.type == "int" else None
    values: set[float] = set()
    for t in marks:
        delta = step or max(abs(t) * 1e-3, 0.01)
        values.update((t, t - delta, t + delta))
    low = question.min if question.min is not None else -math.inf
    high = question.max if question.max is not None else math.inf
    out = []
    for v in values:
        if question.type == "int":
            v = float(round(v))
        if low <= v <= high and abs(v - current) > _EPS:
            out.append(v)
    return sorted(out, key=lambda v: abs(v - current))


def _alternatives(question: Question, current: Any) -> list[Any]:
    if question.type == "bool":
        return [not current]
    if question.type == "tristate":
        return [v for v in ("auto", True, False) if v != current]
    if question.type == "choice":
        return [c for c in question.choices or [] if c != current]
    if question.type in ("gpu", "model") and question.nullable and current is not None:
        return [None]
    return []


def what_if(engine: Engine, answers: Answers) -> tuple[Decision, list[Flip]]:
    """The base decision and, per axis, the smallest flipping change (if any)."""
    base = engine.recommend(answers, decision_id="whatif")
    choices = {axis: d.choice for axis, d in base.decisions.items()}
    current_data = answers.model_dump(mode="json")
    best: dict[str, Flip] = {}
    for question in engine.catalog.questions:
        current = current_data.get(question.id)
        for value, distance in _candidates(engine, question, current, base.facts):
            trial = _with(engine, answers, question.id, value)
            if trial is None:
                continue
            if current is None:
                current = _current(question.id, base.facts)
            decision = engine.recommend(trial, decision_id="whatif")
            for axis, before in choices.items():
                after = decision.decisions[axis].choice
                if after == before:
                    continue
                flip = Flip(axis, before, after, question.id, _plain(value), current, distance)
                known = best.get(axis)
                if known is None or (flip.distance, flip.answer) < (known.distance, known.answer):
                    best[axis] = flip
    flips = [_refine(engine, answers, best[a]) for a in choices if a in best]
    return base, flips


def _refine(engine: Engine, answers: Answers, flip: Flip) -> Flip:
    """Bisect a numeric flip down to the value closest to the current one that still flips.

    Probes sit on rule thresholds, but a number can also act through derived facts (memory,
    cost), so the first flipping probe is narrowed to the actual flip point.
    """
    question = engine.catalog.question(flip.answer)
    if question.type not in ("int", "float") or not isinstance(flip.current, (int, float)):
        return flip
    inside, outside = float(flip.current), float(flip.value)
    for _ in range(40):
        if question.type == "int" and abs(outside - inside) <= 1:
            break
        if abs(outside - inside) <= max(abs(outside) * 1e-7, 0.005):
            break
        middle = (inside + outside) / 2
        if question.type == "int":
            middle = float(round(middle))
            if middle in (inside, outside):
                break
        trial = _with(engine, answers, flip.answer,
                      int(middle) if question.type == "int" else middle)
        choice = None if trial is None else engine.recommend(
            trial, decision_id="whatif").decisions[flip.axis].choice
        if choice is not None and choice != flip.before:
            outside = middle
        else:
            inside = middle
    if outside == float(flip.value):
        return flip
    if question.type == "int":
        value: float = int(outside)
    else:  # round away from the current value, so the reported value still flips
        rounding = math.floor if outside < float(flip.current) else math.ceil
        value = rounding(outside * 100) / 100
        whole = float(rounding(outside))
        if abs(outside) >= 10 and whole != value and _flips(engine, answers, flip, whole):
            value = whole  # 3,600 hours reads better than 3,599.07, if it flips too
    return Flip(flip.axis, flip.before, flip.after, flip.answer, _plain(value), flip.current,
                _distance(float(flip.current), outside))


def _flips(engine: Engine, answers: Answers, flip: Flip, value: float) -> bool:
    trial = _with(engine, answers, flip.answer, value)
    return trial is not None and engine.recommend(
        trial, decision_id="whatif").decisions[flip.axis].choice == flip.after


def _candidates(engine: Engine, question: Question, current: Any,
                facts: dict[str, Any]) -> list[tuple[Any, float]]:
    if question.type in ("int", "float"):
        current = current if current is not None else _current(question.id, facts)
        if current is None:
            return []
        marks = thresholds(engine, question.id, facts)
        return [(int(v) if question.type == "int" else v, _distance(float(current), v))
                for v in _probes(question, float(current), marks)]
    return [(v, CHOICE_DISTANCE) for v in _alternatives(question, current)]


CHOICE_DISTANCE = 2.0
"""A changed choice or yes/no counts like a ~7× change of a number (log distance 2)."""


def _distance(current: float, value: float) -> float:
    """Log-scale distance between two non-negative numbers (1 added to both)."""
    return abs(math.log((abs(value) + 1) / (abs(current) + 1)))


def _with(engine: Engine, answers: Answers, field: str, value: Any) -> Answers | None:
    """The answers with one changed (and those it implies: regions only with region
    residency, runs only with tokens); None when that is not a valid set of answers."""
    data = answers.model_dump(mode="json")
    data[field] = value
    if field == "data_residency" and value == "region" and not data["allowed_regions"]:
        # the first region the questionnaire offers (catalog/questions.yaml)
        data["allowed_regions"] = list(engine.catalog.question("allowed_regions").choices
                                       or [])[:1]
    if field == "data_residency" and value != "region":
        data["allowed_regions"] = []
    try:
        return validate_answers(data, engine.catalog)
    except InputError:
        return None


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
