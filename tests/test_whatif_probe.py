"""What-if probes changes on the request rules and runs full recommendations only where the
probe cannot rule a flip out; what it reports is what trying every change in full gives."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from engine.answers.model import Answers, load_answers
from engine.decide.engine import Decision, Engine, load_engine
from engine.tools import whatif as wi

REPO = Path(__file__).parent.parent
STARTUP = REPO / "examples" / "startup-7b-continuous.yaml"
REGULATED = REPO / "examples" / "regulated-on-premises.yaml"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


def _answers(engine: Engine, path: Path) -> Answers:
    return load_answers(path, (), engine.catalog)


# -- the reference: every change in full (what-if before the probe) -------------------------
def _full_choice(engine: Engine, answers: Answers, answer: str, value: Any,
                 axis: str) -> str | None:
    trial = wi._with(engine, answers, answer, value)
    if trial is None:
        return None
    return engine.recommend(trial, decision_id="ref").decisions[axis].choice


def _reference(engine: Engine, answers: Answers) -> list[dict[str, Any]]:
    """Every change recommended in full; per axis the nearest flip, bisected in full (the
    answer named after an axis, such as ``method``, asks for an option: not a flip)."""
    evaluation = engine.evaluate(answers, decision_id="ref")
    choices = {axis: d.choice for axis, d in evaluation.decision.decisions.items()}
    best: dict[str, wi.Flip] = {}
    for trial in wi._trials(engine, answers, evaluation.request_facts):
        decision = engine.recommend(trial.answers, decision_id="ref")
        for axis, before in choices.items():
            after = decision.decisions[axis].choice
            if (after is not None and after != before and axis not in best
                    and trial.answer != axis):
                best[axis] = wi.Flip(axis, before, after, trial.answer, wi._plain(trial.value),
                                     trial.current, trial.distance)
    return [_bisected(engine, answers, best[a]).as_json() for a in choices if a in best]


def _bisected(engine: Engine, answers: Answers, flip: wi.Flip) -> wi.Flip:
    question = engine.catalog.question(flip.answer)
    if question.type not in ("int", "float") or not isinstance(flip.current, (int, float)):
        return flip
    whole = question.type == "int"
    inside, outside = float(flip.current), float(flip.value)
    for _ in range(40):
        if (whole and abs(outside - inside) <= 1) or abs(outside - inside) <= max(
                abs(outside) * 1e-7, 0.005):
            break
        middle = (inside + outside) / 2
        if whole:
            middle = float(round(middle))
            if middle in (inside, outside):
                break
        choice = _full_choice(engine, answers, flip.answer,
                              int(middle) if whole else middle, flip.axis)
        if choice is not None and choice != flip.before:
            outside = middle
        else:
            inside = middle
    if outside == float(flip.value):
        return flip
    value: float = int(outside) if whole else 0.0
    if not whole:
        rounding = math.floor if outside < float(flip.current) else math.ceil
        value = rounding(outside * 100) / 100
        if abs(outside) >= 10 and float(rounding(outside)) != value and _full_choice(
                engine, answers, flip.answer, float(rounding(outside)), flip.axis) == flip.after:
            value = float(rounding(outside))
    return wi.Flip(flip.axis, flip.before, flip.after, flip.answer, wi._plain(value),
                   flip.current, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("path", [STARTUP, REGULATED], ids=lambda p: p.stem)
def test_the_flips_are_those_of_trying_every_change_in_full(engine: Engine,
                                                             path: Path) -> None:
    """Among them a break-even (hours_per_year → deployment) and an eligibility flip
    (data_residency → deployment) that the request rules alone cannot see."""
    answers = _answers(engine, path)
    _, flips = wi.what_if(engine, answers)
    reference = _reference(engine, answers)
    assert [f.as_json() for f in flips] == reference
    assert {(f["axis"], f["answer"]) for f in reference} & {
        ("deployment", "hours_per_year"), ("deployment", "data_residency")}


@pytest.mark.slow
def test_a_change_the_probe_rules_out_decides_as_the_base(engine: Engine) -> None:
    """Where the probe says the full recommendation makes the base's choices, it does."""
    answers = _answers(engine, STARTUP)
    probe = wi.Probe(engine, answers)
    base = {axis: d.choice for axis, d in probe.base.decisions.items()}
    ruled_out = [t for t in wi._trials(engine, answers, probe.facts)
                 if probe.same_choices(t.answers)]
    assert {t.answer for t in ruled_out} >= {"competitive_moat", "specialised_domain"}
    for trial in ruled_out:
        decision: Decision = engine.recommend(trial.answers, decision_id="check")
        assert {axis: d.choice for axis, d in decision.decisions.items()} == base, trial


def test_fewer_full_recommendations_than_changes(engine: Engine,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The startup example: 101 full recommendations when every change ran in full."""
    answers = _answers(engine, STARTUP)
    calls: list[int] = []
    recommend = Engine.recommend

    def counted(self: Engine, *args: Any, **kwargs: Any) -> Decision:
        calls.append(1)
        return recommend(self, *args, **kwargs)

    monkeypatch.setattr(Engine, "recommend", counted)
    _, flips = wi.what_if(engine, answers)
    # a reservation is no longer ranked where none holds the job; workload is not changed
    assert len(flips) == 3
    assert len(calls) < 70
