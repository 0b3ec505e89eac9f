"""Generated valid answers (hypothesis) and the engine the property tests decide them on.

The answers strategy is built from catalog/questions.yaml (choices, bools, numbers within each
question's min/max, catalog ids) and respects the cross-answer rules (model xor
model_params_b; allowed_regions exactly when data_residency is region; the work stated, or
said unknown).
"""

from __future__ import annotations

import math
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from engine.answers.model import Answers, validate_answers
from engine.catalog.load import load_catalog
from engine.catalog.models import Question
from engine.decide.engine import Decision, Engine, Evaluation, load_engine

CATALOG = load_catalog()
ENGINE: Engine = load_engine()
POLICY = CATALOG.policy
QUESTIONS = {q.id: q for q in CATALOG.questions}
# 20 teams a property in the default run (each property draws its own); PROPERTY_EXAMPLES=200
# (and PROPERTY_RANDOM=1 for new ones each run) for a longer sweep
SETTINGS = settings(max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "20")), deadline=None,
                    derandomize=not os.environ.get("PROPERTY_RANDOM"),
                    suppress_health_check=[HealthCheck.too_slow])


def number(question: Question) -> st.SearchStrategy[Any]:
    low = question.min if question.min is not None else 0
    high = question.max if question.max is not None else 1e6
    if question.type == "int":
        return st.integers(int(low), int(high))
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


def _value(question: Question) -> st.SearchStrategy[Any]:
    kind = question.type
    if kind in ("int", "float"):
        strategy = number(question)
    elif kind == "bool":
        strategy = st.booleans()
    elif kind == "tristate":
        strategy = st.sampled_from(["auto", True, False])
    elif kind == "choice":
        strategy = st.sampled_from(list(question.choices or []))
    elif kind == "gpu":
        strategy = st.sampled_from(sorted(CATALOG.gpus))
    elif kind == "model":
        strategy = st.sampled_from(sorted(CATALOG.models))
    elif kind == "list":
        strategy = st.lists(st.sampled_from(list(question.choices or [])), unique=True,
                            max_size=2)
    else:  # pragma: no cover
        raise AssertionError(kind)
    return st.none() | strategy if question.nullable else strategy


SKIP = {"model", "model_params_b", "allowed_regions", "data_residency", "training_tokens_b",
        "runs_per_year", "hours_per_year", "hours_gpu", "hours_per_run", "max_days_per_run",
        "work_unknown"}


@st.composite
def raw_answers(draw: st.DrawFn) -> dict[str, Any]:
    """A valid answers mapping (some questions left to their defaults)."""
    out: dict[str, Any] = {}
    for question in CATALOG.questions:
        if question.id in SKIP or not draw(st.booleans()):
            continue
        out[question.id] = draw(_value(question))
    if draw(st.booleans()):
        out["model"] = draw(st.sampled_from(sorted(CATALOG.models)))
    else:
        out["model"] = None
        out["model_params_b"] = draw(number(QUESTIONS["model_params_b"]))
    if draw(st.booleans()):
        out["training_tokens_b"] = draw(_tokens())
        if draw(st.booleans()):
            out["runs_per_year"] = draw(st.floats(0.1, 500))
    elif draw(st.booleans()):
        out["hours_per_year"] = hours = draw(number(QUESTIONS["hours_per_year"]))
        if draw(st.booleans()):
            out["hours_gpu"] = draw(st.sampled_from(sorted(CATALOG.gpus)))
        if hours >= 0.01 and draw(st.booleans()):
            out["hours_per_run"] = draw(st.floats(0.01, max(0.01, hours)))
    else:
        out["work_unknown"] = True
    if draw(st.booleans()) and (out.get("hours_per_run") or "hours_per_year" not in out):
        out["max_days_per_run"] = draw(number(QUESTIONS["max_days_per_run"]))
    residency = draw(st.sampled_from(list(QUESTIONS["data_residency"].choices or [])))
    out["data_residency"] = residency
    if residency == "region":
        regions = QUESTIONS["allowed_regions"].choices or []
        out["allowed_regions"] = draw(st.lists(st.sampled_from(regions), min_size=1,
                                               max_size=len(regions), unique=True))
    for card in ("owned_gpu", "planned_gpu"):  # a count only with the card it counts
        if out.get(card) is None:
            out.pop(f"{card}_count", None)
    if out.get("workload") == "pretrain" and out.get("method") in ("lora", "qlora"):
        del out["method"]  # adapters are for fine-tuning
    if out.get("runs_per_year") is not None and "concurrent_jobs" in out:
        # jobs at once count in the runs a year
        out["concurrent_jobs"] = min(out["concurrent_jobs"],
                                     max(1, math.ceil(out["runs_per_year"])))
    if out.get("hours_per_run") and "concurrent_jobs" in out:  # as many runs as the hours make
        runs = out["hours_per_year"] / out["hours_per_run"]
        out["concurrent_jobs"] = min(out["concurrent_jobs"], max(1, math.ceil(runs - 1e-9)))
    return out


def _tokens() -> st.SearchStrategy[float]:
    """Tokens per run across the range teams use (a small fine-tune to a large pretrain)."""
    return st.sampled_from([0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]) | st.floats(
        QUESTIONS["training_tokens_b"].min or 1e-6, 3000)


def answers_of(raw: dict[str, Any]) -> Answers:
    return validate_answers(raw, CATALOG)


def decide(raw: dict[str, Any], *, trace: bool = False) -> Decision:
    return ENGINE.recommend(answers_of(raw), decision_id="property", trace=trace)


def evaluate(raw: dict[str, Any]) -> Evaluation:
    """The decision of ``raw`` with the request and candidate facts the rules saw and what
    each rule fired on."""
    return ENGINE.evaluate(answers_of(raw), trace=False)


def warned(decision: Decision, warning_id: str) -> list[str]:
    """The texts of the decision's warnings of ``warning_id``."""
    return [w.text for w in decision.warnings if w.id == warning_id]


def least_budget_candidate(evaluation: Evaluation) -> dict[str, Any]:
    """The candidate facts of the configuration no rule excluded whose first year is the
    least share of the compute budget."""
    out = {i for group in evaluation.decision.hardware.excluded for i in group.ids}
    left = [f for f in evaluation.candidate_facts if f["candidate_id"] not in out]
    return min(left, key=lambda f: f["budget_ratio"])
