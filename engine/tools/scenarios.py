"""Scenario files: answers in, expected decisions out. Run by pytest and ``rules test``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.answers.model import validate_answers
from engine.decide.engine import Decision, Engine
from engine.errors import AnswerError
from engine.files.validation import build
from engine.files.yamlio import load_yaml_file
from engine.resources import bundled_dir
from engine.rules.load import CASES_STEM


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ExpectedHardware(_Strict):
    """What the chosen hardware must be (each field optional)."""

    gpu: str | list[str] | None = None
    count: int | None = None
    where: Literal["local", "cloud"] | None = None
    provider: str | list[str] | None = None
    pricing: str | list[str] | None = None
    method: str | list[str] | None = None
    access: str | list[str] | None = None
    gradient_checkpointing: bool | None = None
    min_count: int | None = None
    max_count: int | None = None
    max_days_per_run: float | None = None
    max_per_year_usd: float | None = None
    """Bounds an operator would sign the pick within (GPUs, a run's length, its cost)."""

    _LIMITS: ClassVar[dict[str, tuple[str, str]]] = {
        "min_count": ("count", "ge"), "max_count": ("count", "le"),
        "max_days_per_run": ("days_per_run", "le"),
        "max_per_year_usd": ("per_year_usd", "le")}


class Expected(_Strict):
    """Expected outcome of a scenario."""

    decisions: dict[str, str | list[str]] = Field(default_factory=dict)
    hardware: ExpectedHardware | None = None
    warnings: list[str] = Field(default_factory=list)
    no_warnings: list[str] = Field(default_factory=list)
    strategies: list[str] = Field(default_factory=list)
    fired: list[str] = Field(default_factory=list)
    not_fired: list[str] = Field(default_factory=list)


class Scenario(_Strict):
    """A persona: a name, why it matters, answers, and what we expect."""

    name: str
    description: str
    answers: dict[str, Any]
    expect: Expected


@dataclass
class Outcome:
    """A scenario's result: failures (empty when it passed) and the rules that fired."""

    path: Path
    scenario: Scenario
    failures: list[str] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)
    decision: Decision | None = None

    @property
    def passed(self) -> bool:
        """No expectation failed."""
        return not self.failures


class CaseFile(_Strict):
    """Rule cases kept beside a rule file (``NAME_test.yaml``, as OPA keeps ``x_test.rego``):
    scenarios, each with its name, answers and expectations."""

    cases: list[Scenario] = Field(min_length=1)


CASES_SUFFIX = CASES_STEM + ".yaml"
"""A rule folder's files that hold cases, not rules."""


def load_scenario(path: Path) -> Scenario:
    """Read and validate one scenario file."""
    return build(Scenario, load_yaml_file(path), path=str(path))


def load_cases(path: Path) -> list[Scenario]:
    """The scenarios of a file: the cases of a ``cases:`` file, else the one scenario."""
    data = load_yaml_file(path)
    if isinstance(data, dict) and "cases" in data:
        return build(CaseFile, data, path=str(path)).cases
    return [build(Scenario, data, path=str(path))]


def case_files(rules: Path | None) -> list[Path]:
    """The case files beside the rules (a folder, or the one rule file given), sorted."""
    root = rules or bundled_dir("rules")
    if root.is_file():
        beside = root.with_name(root.stem + CASES_SUFFIX)
        return [beside] if beside.is_file() else []
    return sorted(p for p in root.glob("*" + CASES_SUFFIX) if p.is_file())


def scenario_paths(paths: Iterable[Path]) -> list[Path]:
    """Every scenario file under the given files/directories, sorted."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out.extend(sorted(p for p in path.glob("*.yaml") if p.is_file()))
        else:
            out.append(path)
    return out


def run_scenario(engine: Engine, path: Path) -> Outcome:
    """Evaluate one scenario file and compare with its expectations."""
    return evaluate(engine, path, load_scenario(path))


def run_cases(engine: Engine, path: Path) -> list[Outcome]:
    """Evaluate every scenario of a file (a scenario file or a case file)."""
    return [evaluate(engine, path, scenario) for scenario in load_cases(path)]


def evaluate(engine: Engine, path: Path, scenario: Scenario) -> Outcome:
    """Evaluate one scenario read from ``path`` and compare with its expectations."""
    try:
        # a scenario file is where its answers come in: a model config it names is read
        answers = validate_answers(scenario.answers, engine.catalog, read_model_files=True)
    except AnswerError as exc:
        return Outcome(path, scenario, [f"answers: {exc}"])
    decision = engine.recommend(answers, decision_id="scenario")
    fired = sorted(decision.fired)
    return Outcome(path, scenario, check(decision, scenario.expect, fired), fired, decision)


def _one_of(value: Any, expected: str | Sequence[str]) -> bool:
    return value in expected if isinstance(expected, list) else value == expected


def _hardware_failures(decision: Decision, want: ExpectedHardware) -> list[str]:
    """What the pick is not, of what ``want`` says it must be."""
    choice = decision.hardware.choice
    failures = []
    for attr in ("gpu", "count", "where", "provider", "pricing", "method", "access",
                 "gradient_checkpointing"):
        wanted = getattr(want, attr)
        got = getattr(choice, attr) if choice else None
        if wanted is not None and not _one_of(got, wanted):
            failures.append(f"hardware.{attr}: expected {wanted}, got {got}")
    for bound, (attr, op) in ExpectedHardware._LIMITS.items():
        limit = getattr(want, bound)
        if limit is None:
            continue
        got = None if choice is None else (
            choice.cost.per_year_usd if attr == "per_year_usd" else getattr(choice, attr))
        if got is None or (got < limit if op == "ge" else got > limit):
            failures.append(f"hardware.{bound}: expected {'≥' if op == 'ge' else '≤'} "
                            f"{limit:g}, got {got}")
    return failures


def check(decision: Decision, expect: Expected, fired: Sequence[str]) -> list[str]:
    """Each unmet expectation as ``what: expected X, got Y``."""
    failures = []
    for axis, want in expect.decisions.items():
        got = decision.decisions[axis].choice if axis in decision.decisions else None
        if not _one_of(got, want):
            failures.append(f"decisions.{axis}: expected {want}, got {got}")
    if expect.hardware is not None:
        failures += _hardware_failures(decision, expect.hardware)
    warning_ids = {w.id for w in decision.warnings}
    strategy_ids = {s.id for s in decision.strategies}
    failures += [f"warnings: expected {w} present, got {sorted(warning_ids)}"
                 for w in expect.warnings if w not in warning_ids]
    failures += [f"warnings: expected {w} absent, it is present"
                 for w in expect.no_warnings if w in warning_ids]
    failures += [f"strategies: expected {s} present, got {sorted(strategy_ids)}"
                 for s in expect.strategies if s not in strategy_ids]
    failures += [f"fired: expected {r} to fire" for r in expect.fired if r not in fired]
    failures += [f"fired: expected {r} not to fire" for r in expect.not_fired if r in fired]
    return failures
