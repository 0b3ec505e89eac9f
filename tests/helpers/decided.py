"""Evaluations of answer files shared by the test modules of one pytest process.

Several modules check every scenario (the brief, the steps, the reasons, the trace): each
file is evaluated once per process with and once without trace, and every module reads the
same evaluation. No test may change one; a test that needs a fresh decision (determinism, a
decision id of its own) makes it itself.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from engine.answers.model import Answers, load_answers, validate_answers
from engine.decide.engine import Decision, Evaluation, load_engine
from engine.tools.scenarios import load_scenario


def answers_of(path: Path) -> Answers:
    """The validated answers of a scenario file or of an answers file."""
    engine = load_engine()
    if path.parent.name == "scenarios":
        return validate_answers(load_scenario(path).answers, engine.catalog)
    return load_answers(path, (), engine.catalog)


@cache
def evaluation_of(path: Path, trace: bool = False) -> Evaluation:
    """The bundled engine's evaluation of ``path`` (with every trace when ``trace``)."""
    return load_engine().evaluate(answers_of(path), trace=trace)


def decision_of(path: Path, trace: bool = False) -> Decision:
    """The decision of :func:`evaluation_of`."""
    return evaluation_of(path, trace).decision
