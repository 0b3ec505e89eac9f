"""JSON output: pydantic's compiled serializer is used only when its bytes are exactly those of
Python's ``json.dumps`` (the format recorded decisions have and replay compares), and a
non-finite number is still refused, never written as ``null``."""

from __future__ import annotations

import json
import math
import typing
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict
from pydantic_core import to_json

from engine.answers.model import validate_answers
from engine.decide.decision import Reason
from engine.decide.engine import Decision, load_engine
from engine.files import jsonout
from engine.files.jsonout import _compiled, _python_would_differ, compact, dumps, to_data


class Probe(BaseModel):
    """An output model as the decision models are configured."""

    model_config = ConfigDict(frozen=True, ser_json_inf_nan="constants")

    value: float
    data: dict[str, Any]
    texts: list[str]


def python_dumps(obj: Any) -> str:
    return json.dumps(to_data(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def python_compact(obj: Any) -> str:
    return json.dumps(to_data(obj), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


# every magnitude, with the ranges where the two serialisers disagree well represented
finite = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.builds(lambda m, e: m * 10.0 ** e, st.floats(1, 10), st.integers(-12, -3)),
    st.builds(lambda m, e: m * 10.0 ** e, st.floats(1, 10), st.integers(14, 23)),
)
scalar = st.one_of(finite, st.integers(-10**20, 10**20), st.booleans(), st.none(), st.text())
json_data = st.recursive(scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=finite, data=st.dictionaries(st.text(max_size=8), json_data, max_size=4),
       texts=st.lists(st.text(), max_size=3))
def test_output_is_byte_for_byte_pythons(value: float, data: dict[str, Any],
                                        texts: list[str]) -> None:
    probe = Probe(value=value, data=data, texts=texts)
    assert dumps(probe) == python_dumps(probe)
    assert compact(probe) == python_compact(probe)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(finite)
def test_every_float_the_two_write_differently_is_recognised(number: float) -> None:
    if to_json(number).decode() != json.dumps(number):
        assert _python_would_differ(to_json(number).decode())


def test_float_formats_at_every_decimal_exponent() -> None:
    """Exhaustive over exponents: where pydantic and Python disagree, the guard says so."""
    missed = []
    for exponent in range(-325, 309):
        for mantissa in (1.0, 1.5, 9.999999999999998):
            try:
                base = mantissa * 10.0 ** exponent
            except OverflowError:
                continue
            for number in (base, -base, math.nextafter(base, math.inf)):
                ours = to_json(number).decode()
                if ours != json.dumps(number) and not _python_would_differ(ours):
                    missed.append((number, ours))
    assert missed == []


@pytest.mark.parametrize("number", [1e-05, 2.5e-07, -9.99e-09])
def test_a_float_python_writes_in_exponent_form_takes_the_exact_path(number: float) -> None:
    probe = Probe(value=number, data={"nested": [number]}, texts=[])
    assert _compiled(probe, indent=None) is None
    assert compact(probe) == python_compact(probe)
    assert json.dumps(number) in dumps(probe)


@pytest.mark.parametrize("number", [math.inf, -math.inf, math.nan])
def test_a_non_finite_float_is_refused_as_before(number: float) -> None:
    for probe in (Probe(value=number, data={}, texts=[]),
                  Probe(value=1.0, data={"deep": [number]}, texts=[])):
        with pytest.raises(ValueError, match="not JSON compliant"):
            dumps(probe)
        with pytest.raises(ValueError, match="not JSON compliant"):
            compact(probe)
    reason = Reason(rule="r", effect="prefer", weight=number, text="t", sources=[])
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps(reason)


def test_data_that_is_not_an_output_model_takes_the_python_path() -> None:
    class Plain(BaseModel):
        value: float

    assert _compiled(Plain(value=1.0), indent=2) is None
    assert _compiled({"a": 1}, indent=2) is None
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps(Plain(value=math.inf))  # pydantic alone would have written null
    assert dumps({"é": (1, 2.5)}) == '{\n  "é": [\n    1,\n    2.5\n  ]\n}\n'


def _models_in(annotation: Any) -> set[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found = {annotation}
        for field in annotation.model_fields.values():
            found |= _models_in(field.annotation)
        return found
    return {m for arg in typing.get_args(annotation) for m in _models_in(arg)}


def test_every_model_of_a_decision_refuses_non_finite_floats() -> None:
    """A nested model without the setting would let pydantic write inf as null unnoticed."""
    models = _models_in(Decision)
    assert len(models) >= 8
    assert {m.__name__ for m in models
            if m.model_config.get("ser_json_inf_nan") != "constants"} == set()


@pytest.mark.parametrize(("raw", "compiled"), [
    ({"workload": "fine-tune", "model": "llama-3.1-8b", "hours_per_year": 3000,
      "budget_usd": 10000}, True),
    # 2e-05 billion tokens, echoed in the answers: written the Python way
    ({"workload": "pretrain", "model_params_b": 1.3, "training_tokens_b": 0.00002,
      "budget_usd": 500}, False),
])
def test_real_decisions_keep_their_bytes(raw: dict[str, Any], compiled: bool,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    engine = load_engine()
    decision = engine.recommend(validate_answers(raw, engine.catalog), decision_id="t")
    assert (_compiled(decision, indent=2) is not None) is compiled
    text = dumps(decision)
    assert text == python_dumps(decision)
    assert compact(decision) == python_compact(decision)
    monkeypatch.setattr(jsonout, "_python_would_differ", lambda text: True)
    assert dumps(decision) == text  # the exact path, forced, agrees
