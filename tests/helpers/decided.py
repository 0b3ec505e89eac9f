"""Evaluations of answer files shared by the test modules of one pytest process.

Several modules check every scenario (the brief, the steps, the reasons, the trace): each
file is evaluated once per process with and once without trace, and every module reads the
same evaluation. No test may change one; a test that needs a fresh decision (determinism, a
decision id of its own) makes it itself.

The workers of one run (pytest-xdist) share them too: the first to evaluate a file leaves
the evaluation, pickled, in the run's private directory (``SHARED``, made by conftest before
any worker starts and removed after the run), and another worker reads it there instead of
deciding the file again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
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


SHARED = "GPU_ADVISOR_TEST_EVALUATIONS"
"""The environment variable naming the run's directory of shared evaluations."""


@cache
def evaluation_of(path: Path, trace: bool = False) -> Evaluation:
    """The bundled engine's evaluation of ``path`` (with every trace when ``trace``)."""
    shared = os.environ.get(SHARED)
    if not shared:
        return load_engine().evaluate(answers_of(path), trace=trace)
    key = hashlib.sha256(f"{path.resolve()}\0{trace}".encode()).hexdigest()
    kept = Path(shared) / f"{key}.pickle"
    if kept.exists():
        found: Evaluation = pickle.loads(kept.read_bytes())  # written by this run only
        return found
    made = load_engine().evaluate(answers_of(path), trace=trace)
    partial = kept.with_suffix(f".{os.getpid()}.part")
    partial.write_bytes(pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL))
    partial.replace(kept)  # whole or absent: another worker never reads half of it
    return made


def decision_of(path: Path, trace: bool = False) -> Decision:
    """The decision of :func:`evaluation_of`."""
    return evaluation_of(path, trace).decision
