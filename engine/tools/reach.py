"""Which options of the decision axes no input reaches: the rules' cases and the team
scenarios first (written to reach them), then answers sampled from the questionnaire.

An option that none of them chose is one the policy can no longer give, for instance after
an edit that excludes it everywhere or removes what preferred it. Sampling shows only that
the inputs tried do not reach it, so the finding says how many were tried.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from engine.answers.model import Answers
from engine.decide.engine import Engine
from engine.tools.sampling import sampled_answers

SAMPLED = 120
"""Answers sampled from the questionnaire when the cases leave an option unreached."""


@dataclass(frozen=True)
class Unreached:
    """An axis option no tried input chose."""

    axis: str
    option: str
    cases: int
    sampled: int

    def __str__(self) -> str:
        return (f"{self.axis}.{self.option}: no input reaches this option (chosen in none of "
                f"{self.cases} case(s) and {self.sampled} answers sampled from the "
                "questionnaire)")


def unreached_options(engine: Engine, cases: Iterable[Answers],
                      sampled: int = SAMPLED) -> list[Unreached]:
    """Each option of each axis that no case, then no sampled answer, makes the decision."""
    open_ = {(axis, option) for axis, options in engine.rulebook.decisions.items()
             for option in options}
    tried_cases = _reach(engine, cases, open_)
    tried_samples = 0
    if open_:
        tried_samples = _reach(engine, sampled_answers(engine.catalog, sampled), open_)
    order = {(axis, option): i for i, (axis, option) in enumerate(
        (a, o) for a, opts in engine.rulebook.decisions.items() for o in opts)}
    return [Unreached(axis, option, tried_cases, tried_samples)
            for axis, option in sorted(open_, key=order.__getitem__)]


def _reach(engine: Engine, inputs: Iterable[Answers], open_: set[tuple[str, str]]) -> int:
    """Evaluate ``inputs`` until every option in ``open_`` is reached (removed); how many."""
    tried = 0
    for answers in _until_empty(inputs, open_):
        tried += 1
        decision = engine.recommend(answers, decision_id="reach")
        for axis, chosen in decision.decisions.items():
            if chosen.applies and chosen.choice is not None:
                open_.discard((axis, chosen.choice))
    return tried


def _until_empty(inputs: Iterable[Answers], open_: set[tuple[str, str]]) -> Iterator[Answers]:
    for answers in inputs:
        if not open_:
            return
        yield answers
