"""The typed configuration (engine.decide.configuration): each field a candidate fact of
engine.facts.spec under its own name and type, and the same as the facts it was made from
once every fact is set."""

from __future__ import annotations

import types
import typing
from dataclasses import FrozenInstanceError, fields
from pathlib import Path
from typing import Any, Literal

import pytest

from engine.answers.model import validate_answers
from engine.decide.configuration import Configuration
from engine.decide.engine import Engine, load_engine
from engine.facts.spec import CANDIDATE, candidate_registry
from engine.tools.scenarios import load_scenario, scenario_paths

HINTS = typing.get_type_hints(Configuration)
SPEC = {s.name: s for s in CANDIDATE}
PYTHON_TYPES: dict[str, set[type]] = {"number": {int, float}, "string": {str}, "bool": {bool}}
SCENARIOS = Path(__file__).parent / "scenarios"
# owned and added GPUs, a plan, pools, reserved terms and blocks, the peaks beside owned GPUs
SAMPLE = ("01-", "09-", "14-", "49-", "51-", "56-", "66-", "68-", "70-")


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


def _parts(hint: Any) -> tuple[set[Any], bool]:
    """The types a field's annotation allows (a Literal as itself), and whether None is one."""
    args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    return {a for a in args if a is not type(None)}, type(None) in args


def _python_type(part: Any) -> type:
    """The runtime type of one part of an annotation (a Literal: its values')."""
    if typing.get_origin(part) is Literal:
        kinds = {type(v) for v in typing.get_args(part)}
        assert len(kinds) == 1, part
        return kinds.pop()
    assert isinstance(part, type), part
    return part


@pytest.mark.parametrize("name", list(HINTS))
def test_each_field_is_a_candidate_fact_of_its_spec_type(name: str) -> None:
    assert name in SPEC, f"{name} is not a candidate fact in engine.facts.spec"
    parts, optional = _parts(HINTS[name])
    allowed = PYTHON_TYPES[SPEC[name].type]
    assert {_python_type(p) for p in parts} <= allowed, (name, HINTS[name], SPEC[name].type)
    default = next(f.default for f in fields(Configuration) if f.name == name)
    assert optional == (default is None), f"{name}: optional exactly when it may be absent"


def test_literal_fields_take_the_values_the_spec_declares(engine: Engine) -> None:
    book = engine.rulebook
    known = candidate_registry(engine.catalog, book.decisions, book.early_axes, book.fields)
    literals = {name: part for name, hint in HINTS.items() for part in _parts(hint)[0]
                if typing.get_origin(part) is Literal}
    assert literals, "where and train_method are Literals"
    for name, part in literals.items():
        assert set(typing.get_args(part)) == set(known[name].choices or ()), name


def _candidates(engine: Engine, prefix: str) -> list[Any]:
    path = next(p for p in scenario_paths([SCENARIOS]) if p.name.startswith(prefix))
    made = engine._made(validate_answers(load_scenario(path).answers, engine.catalog))
    choice = [made.choice.candidate] if made.choice is not None else []
    return [*made.candidates, *choice]


def _holds(value: Any, hint: Any) -> bool:
    parts, optional = _parts(hint)
    if value is None:
        return optional
    for part in parts:
        if typing.get_origin(part) is Literal:
            if value in typing.get_args(part):
                return True
        elif type(value) is part:  # exactly: an int is no float here, a bool no int
            return True
    return False


@pytest.mark.parametrize("prefix", SAMPLE)
def test_a_configuration_is_its_facts_once_every_fact_is_set(engine: Engine,
                                                             prefix: str) -> None:
    """The typed view, made on first read, equals one made from the facts after the
    recommendation set every fact (nothing it holds changed after it was made), and each
    value is of its field's type; an optional field is None exactly where the fact is
    absent."""
    candidates = _candidates(engine, prefix)
    assert candidates
    for cand in candidates:
        assert cand.config == Configuration.of(cand.facts), cand.id
        for name, hint in HINTS.items():
            value = getattr(cand.config, name)
            assert _holds(value, hint), (cand.id, name, value)
            assert (value is None) == (name not in cand.facts), (cand.id, name)


@pytest.mark.parametrize("prefix", ["49-", "68-"])
def test_the_conversion_makes_a_frozen_configuration_like_its_constructor(
        engine: Engine, prefix: str) -> None:
    """Configuration.of fills a twin's slots and makes it a Configuration (the fast path):
    the same value, hash and frozenness as one its own constructor makes."""
    for cand in _candidates(engine, prefix)[:40]:
        made = Configuration.of(cand.facts)
        built = Configuration(**{f.name: cand.facts.get(f.name) for f in fields(Configuration)})
        assert type(made) is Configuration
        assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
        with pytest.raises(FrozenInstanceError):
            made.count = 1  # type: ignore[misc]
