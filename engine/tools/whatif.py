"""What-if: for each decision axis, the smallest single answer change that flips it.

Numeric answers are probed at and around every threshold the rules compare them with
(literal thresholds, and the current value of a fact they are compared against, such as
``break_even_work``); choice and boolean answers are tried at every other value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.answers.model import Answers, validate_answers
from engine.answers.model_shape import SHAPE_FIELD, SHAPE_OF
from engine.catalog.models import Question
from engine.decide.decision import AxisDecision
from engine.decide.engine import Decision, Engine, RequestProbe
from engine.errors import InputError
from engine.facts.spec import DERIVED, registry
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


WORK_ANSWERS = {"tokens": ("runs_per_year", "training_tokens_b"), "hours": ("hours_per_year",)}
"""Per way of stating the work, the answers the year's work is proportional to."""


ANSWER_LEVELS = {"api_tokens_per_month_m": ("api_break_even_tokens_m",),
                 "max_days_per_run": ("longer_run_answer_days",)}
"""Answers with facts that are values of them at which a comparison the rules make turns:
the volume at which a model of the team's own costs what the API does; the run limit that
lets in a configuration only the default limit keeps out."""
UNANSWERED_AS = {"max_days_per_run": "max_days_per_run_default"}
"""Answers left empty, and the fact that says the value the advice took for them."""


def thresholds(engine: Engine, field: str, facts: dict[str, Any]) -> list[float]:
    """Numbers the rules compare ``field`` with (literals, and compared facts' values), for an
    answer that sets the work, the value at which the work reaches each level of work a rule
    could turn on (the break-even), and the levels of the answer among the facts
    (:data:`ANSWER_LEVELS`)."""
    found: set[float] = set(_work_levels(field, facts))
    found.update(float(value) for name in ANSWER_LEVELS.get(field, ())
                 if isinstance(value := facts.get(name), (int, float)))
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
    (the work is proportional to it; levels are in the team's unit, ``work_units``)."""
    if field not in WORK_ANSWERS.get(str(facts.get("work_mode")), ()):
        return []
    current = _current(field, facts)
    work = facts.get("work_units")
    if not current or not work:
        return []
    levels = [facts.get(spec.name) for spec in DERIVED if spec.work_level]
    return [current * float(level) / float(work) for level in levels
            if isinstance(level, (int, float)) and level > 0]


def _current(field: str, facts: dict[str, Any]) -> float | None:
    value = facts.get(field)
    if value is None and field == "runs_per_year" and facts.get("training_tokens_b"):
        return 1.0
    if value is None and field in UNANSWERED_AS:
        value = facts.get(UNANSWERED_AS[field])
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
    if question.type == "list" and current:
        return [[]]  # the limit lifted (gpu_vendors: any vendor)
    return []


def what_if(engine: Engine, answers: Answers) -> tuple[Decision, list[Flip]]:
    """The base decision and, per axis, the smallest flipping change (if any).

    Changes are tried nearest first. Each is probed on the request rules alone
    (:class:`Probe`); the full recommendation runs only for a change the probe cannot rule
    out, and only a flip a full recommendation shows is reported. The first change that
    flips an axis is the smallest: once every axis has one, the rest are not tried. An
    answer named after an axis states its choice outright (``method``): changing it is the
    team asking for another option, not a change that flips the decision; nor is a change of
    what the team sets out to do (:data:`GOALS`), or one after which no option of the axis
    holds (nothing could do the work): neither says what would make another option better.
    """
    probe = Probe(engine, answers)
    choices = {axis: d.choice for axis, d in probe.base.decisions.items()}
    best: dict[str, Flip] = {}
    for trial in _trials(engine, answers, probe.facts):
        if len(best) == len(choices):
            break
        if probe.same_choices(trial.answers):
            continue
        decision = probe.full(trial.answer, trial.value, trial.answers)
        for axis in choices:
            after = decision[axis].choice
            if (axis not in best and after is not None and after != choices[axis]
                    and trial.answer != axis):
                best[axis] = Flip(axis, choices[axis], after, trial.answer, _plain(trial.value),
                                  trial.current, trial.distance)
    flips = [_refine(probe, best[a]) for a in choices if a in best]
    return probe.base, flips


@dataclass(frozen=True)
class _Trial:
    """One answer changed to one value, and how far that is from the current value."""

    answer: str
    value: Any
    current: Any
    distance: float
    answers: Answers


GOALS = frozenset({"workload"})
"""Answers that say what the team sets out to do (fine-tune or pretrain), not a
circumstance of it: what-if does not change them."""


def _trials(engine: Engine, answers: Answers, facts: dict[str, Any]) -> list[_Trial]:
    """Every valid single change, nearest first (ties: by answer, then questionnaire order)."""
    current_data = answers.model_dump(mode="json")
    found: list[tuple[float, str, int, _Trial]] = []
    for question in engine.catalog.questions:
        if question.id in GOALS:
            continue
        current = current_data.get(question.id)
        shown = current if current is not None else _current(question.id, facts)
        for value, distance in _candidates(engine, question, current, facts):
            trial = _with(engine, answers, question.id, value)
            if trial is not None:
                found.append((distance, question.id, len(found),
                              _Trial(question.id, value, shown, distance, trial)))
    return [entry[-1] for entry in sorted(found, key=lambda e: e[:3])]


CANDIDATE_PHASES = ("summary", "deployment")
"""The facts made from the candidates, which the quick probe holds at the base's values."""


class Probe:
    """The answers' full decision, and quick probes of changed answers against it.

    The quick probe (:meth:`Engine.request_probe`) runs the request rules of every phase on
    the changed answers' facts, the facts made from the candidates held at the base
    decision's values. Where the changed answers give the candidates the same inputs and the
    rules the same rankings, the full recommendation makes the base's choices
    (:meth:`same_choices`); elsewhere the quick probe only guides, and full recommendations
    (each made once) decide.
    """

    def __init__(self, engine: Engine, answers: Answers) -> None:
        self.engine = engine
        self.answers = answers
        evaluation = engine.evaluate(answers, decision_id="whatif")
        self.base = evaluation.decision
        self.facts = evaluation.request_facts
        """Every request fact of the base decision (with trace or not)."""
        specs = registry(engine.catalog, engine.rulebook.decisions)
        self.held = {name: value for name, value in self.facts.items()
                     if name in specs and specs[name].phase in CANDIDATE_PHASES}
        self.quick_base = engine.request_probe(answers, self.held)
        deployment = self.base.decisions.get("deployment")
        # owning or renting closed: the decision dropped break-even facts phase 3 read
        self.exact = deployment is None or not any(
            o.excluded and o.option in ("local", "cloud") for o in deployment.ranking)
        self._full: dict[str, dict[str, tuple[Any, dict[str, AxisDecision]]]] = {}
        """answer → repr of a value → (the value, the axes its full recommendation decides)"""

    def same_choices(self, trial: Answers) -> bool:
        """Whether the full recommendation of ``trial`` is sure to make every base choice:
        its candidates get the same inputs and the rules rank alike after phase 2 and at the
        end."""
        return self._same_course(self.engine.request_probe(trial, self.held))

    def _same_course(self, quick: RequestProbe) -> bool:
        base = self.quick_base
        return self.exact and (quick.candidate_inputs, quick.cloud_side, quick.outcome) == (
            base.candidate_inputs, base.cloud_side, base.outcome)

    def quick_flips(self, trial: Answers, axis: str) -> bool:
        """Whether the quick probe sees ``axis``' choice change."""
        quick = self.engine.request_probe(trial, self.held)
        return quick.choices[axis] != self.quick_base.choices[axis]

    def full(self, answer: str, value: Any, trial: Answers) -> dict[str, AxisDecision]:
        """The axes the full recommendation of ``trial`` (``answer`` changed to ``value``)
        decides; where no configuration does the work any more, every axis without a choice
        (a change after which nothing does the work flips nothing)."""
        runs = self._full.setdefault(answer, {})
        key = repr(_plain(value))
        if key not in runs:
            axes, holds = self.engine.decided(trial)
            if not holds and self.base.hardware.choice is not None:
                axes = {name: axis.model_copy(update={"choice": None})
                        for name, axis in axes.items()}
            runs[key] = (value, axes)
        return runs[key][1]

    def bracket(self, flip: Flip) -> tuple[float, float]:
        """The narrowest pair of values, between the current one and ``flip.value``, that
        full recommendations already made show not flipping and flipping ``flip.axis``: the
        nearest known flip to the current value, and the known value just before it."""
        assert isinstance(flip.current, (int, float))
        current, target = float(flip.current), float(flip.value)
        inside, outside = current, target
        low, high = sorted((current, target))
        known = sorted((abs(v - current), float(v), axes[flip.axis].choice)
                       for v, axes in self._full.get(flip.answer, {}).values()
                       if isinstance(v, (int, float)) and not isinstance(v, bool)
                       and low < v < high)
        for _, value, choice in known:
            if choice is not None and choice != flip.before:
                return inside, value
            inside = value
        return inside, outside

    def flips(self, flip: Flip, value: float, *, quick: bool = False) -> bool:
        """Whether ``flip.answer`` at ``value`` changes ``flip.axis``' choice: by the full
        recommendation, or the quick probe's view of it."""
        question = self.engine.catalog.question(flip.answer)
        value_as: Any = int(value) if question.type == "int" else value
        trial = _with(self.engine, self.answers, flip.answer, value_as)
        if trial is None:
            return False
        if quick:
            return self.quick_flips(trial, flip.axis)
        choice = self.full(flip.answer, value_as, trial)[flip.axis].choice
        return choice is not None and choice != flip.before


def _refine(probe: Probe, flip: Flip) -> Flip:
    """Bisect a numeric flip down to the value closest to the current one that still flips.

    Probes sit on rule thresholds, but a number can also act through derived facts (memory,
    cost), so the first flipping probe is narrowed to the actual flip point. Where the quick
    probe sees the flip, the bisection runs on it, and full recommendations check the two
    values it ends between (the same steps then lead there); else on full recommendations.
    """
    question = probe.engine.catalog.question(flip.answer)
    if question.type not in ("int", "float") or not isinstance(flip.current, (int, float)):
        return flip
    whole = question.type == "int"
    ends = None
    if probe.flips(flip, float(flip.value), quick=True):
        ends = _bisect(probe, flip, whole, quick=True)
        if not _ends_hold(probe, flip, *ends):
            ends = None
    inside, outside = ends or _bisect(probe, flip, whole, quick=False,
                                      start=probe.bracket(flip))
    del inside
    if outside == float(flip.value):
        return flip
    if question.type == "int":
        value: float = int(outside)
    else:  # round away from the current value, so the reported value still flips
        rounding = math.floor if outside < float(flip.current) else math.ceil
        value = rounding(outside * 100) / 100
        whole_value = float(rounding(outside))
        if abs(outside) >= 10 and whole_value != value and _flips_to(probe, flip, whole_value):
            value = whole_value  # 3,600 hours reads better than 3,599.07, if it flips too
    return Flip(flip.axis, flip.before, flip.after, flip.answer, _plain(value), flip.current,
                _distance(float(flip.current), outside))


def _bisect(probe: Probe, flip: Flip, whole: bool, *, quick: bool,
            start: tuple[float, float] | None = None) -> tuple[float, float]:
    """The last value that does not flip and the first that does, between the current value
    and the flipping one (or within ``start``, a narrower pair known to end that way)."""
    assert isinstance(flip.current, (int, float))
    inside, outside = start or (float(flip.current), float(flip.value))
    for _ in range(40):
        if whole and abs(outside - inside) <= 1:
            break
        if abs(outside - inside) <= max(abs(outside) * 1e-7, 0.005):
            break
        middle = (inside + outside) / 2
        if whole:
            middle = float(round(middle))
            if middle in (inside, outside):
                break
        if probe.flips(flip, middle, quick=quick):
            outside = middle
        else:
            inside = middle
    return inside, outside


def _ends_hold(probe: Probe, flip: Flip, inside: float, outside: float) -> bool:
    """Whether full recommendations agree with the quick probe at the two values a bisection
    ended between (the values it started from are known: the current one and the flip)."""
    assert isinstance(flip.current, (int, float))
    if outside != float(flip.value) and not probe.flips(flip, outside):
        return False
    return inside == float(flip.current) or not probe.flips(flip, inside)


def _flips_to(probe: Probe, flip: Flip, value: float) -> bool:
    trial = _with(probe.engine, probe.answers, flip.answer, value)
    return trial is not None and probe.full(
        flip.answer, value, trial)[flip.axis].choice == flip.after


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
    residency, a GPU count only with its card, adapters only for a fine-tune); None when
    that is not a valid set of answers."""
    data = answers.model_dump(mode="json")
    data[field] = value
    if field in SHAPE_OF:
        data.pop(SHAPE_FIELD, None)  # the shape was the current model's
    if field == "data_residency" and value == "region" and not data["allowed_regions"]:
        # the first region the questionnaire offers (catalog/questions.yaml)
        data["allowed_regions"] = list(engine.catalog.question("allowed_regions").choices
                                       or [])[:1]
    if field == "data_residency" and value != "region":
        data["allowed_regions"] = []
    if field in ("owned_gpu", "planned_gpu") and value is None:
        data[f"{field}_count"] = engine.catalog.question(f"{field}_count").default
    if field == "workload" and value == "pretrain" and data.get("method") in ("lora", "qlora"):
        data["method"] = "auto"
    try:
        return validate_answers(data, engine.catalog)
    except InputError:
        return None


@dataclass(frozen=True)
class Outcome:
    """What a flip makes of the recommendation: the pick and its cost a year."""

    flip: Flip
    pick: str | None
    """The pick in words (``2× B200, RunPod on-demand``), None where nothing is picked."""
    per_year_usd: float | None
    upfront_usd: float


def outcomes(engine: Engine, answers: Answers, base: Decision,
             flips: list[Flip]) -> list[Outcome]:
    """The flips worth saying, each with the pick and cost it leads to: a flip of an axis
    that does not apply before or after it (cloud pricing for a purchase) is left out."""
    out: list[Outcome] = []
    made: dict[tuple[str, str], Decision] = {}
    for flip in flips:
        if not base.decisions[flip.axis].applies:
            continue
        trial = _with(engine, answers, flip.answer, flip.value)
        if trial is None:
            continue
        key = (flip.answer, repr(flip.value))
        if key not in made:
            made[key] = engine.recommend(trial, decision_id="whatif")
        after = made[key]
        if flip.after is not None and not after.decisions[flip.axis].applies:
            continue
        out.append(Outcome(flip, *_result(after, base)))
    return out


def work_outcome(engine: Engine, answers: Answers, base: Decision) -> Outcome | None:
    """The deployment at the break-even, in the team's unit of work: runs a year (or
    GPU-hours a year) just past the work at which owning and renting cost the same, where
    that flips it (None where there is no break-even or it flips nothing)."""
    be = base.estimates.get("break_even") or {}
    work = base.estimates["work"]
    if not be.get("work") or work["mode"] not in WORK_ANSWERS:
        return None
    answer = WORK_ANSWERS[work["mode"]][0]
    current = work["runs_per_year"] if answer == "runs_per_year" else work["hours_per_year"]
    if not current:
        return None
    level = float(be["work"]) / float(work["units"]) * float(current)
    value = _plain(float(math.ceil(level)) if level > current else float(math.floor(level)))
    trial = _with(engine, answers, answer, value)
    if trial is None or value == current:
        return None
    after = engine.recommend(trial, decision_id="whatif")
    before = base.decisions["deployment"].choice
    if after.decisions["deployment"].choice == before:
        return None
    flip = Flip("deployment", before, after.decisions["deployment"].choice, answer, value,
                _plain(float(current)), abs(value - current))
    return Outcome(flip, *_result(after, base))


def _result(after: Decision, base: Decision) -> tuple[str | None, float | None, float]:
    """What a recommendation advises, in words, with its cost a year and up front: a hosted
    API where the change makes it one (the hardware is then for training it advises
    against), else the pick, as the training priced for an API's team is (None: nothing is
    picked)."""
    if (after.decisions["approach"].choice == "use-api"
            and base.decisions["approach"].choice != "use-api"):
        month, name = after.facts.get("api_cost_usd_month"), after.facts.get("api_name")
        words = "use a hosted API" + (f" ({name})" if name else "")
        return words, (month * 12 if isinstance(month, (int, float)) else None), 0.0
    choice = after.hardware.choice
    if choice is None:
        return None, None, 0.0
    return _pick_words(choice), choice.cost.per_year_usd, choice.cost.upfront_usd


def _pick_words(choice: Any) -> str:
    name = choice.gpu_label
    if choice.owned:
        return f"your {choice.count:,}× {name}"
    if choice.where == "local":
        return f"buy {choice.count:,}× {name}"
    return f"rent {choice.count:,}× {name}, {choice.provider_label} {choice.pricing}"


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
