"""engine.rules.templates: filling ``because`` texts, and remembering them without changing them."""

from __future__ import annotations

from typing import Any

import pytest

from engine.memo import Memo
from engine.rules import templates
from engine.rules.templates import TemplateError, fields, render

TEMPLATE = "{x} then {x:,.0f} and {y:.1%}"


def fresh(template: str, facts: dict[str, Any]) -> str:
    """The text with nothing remembered."""
    return templates._render(template, tuple(facts.get(n) for n in templates._names(template)))


def test_formats_facts_and_unknowns() -> None:
    assert render(TEMPLATE, {"x": 1234.5, "y": 0.25}) == "1,234 then 1,234 and 25.0%"
    assert render("{x} {y}", {"x": True, "y": None}) == "yes unknown"
    assert render("{x}", {"x": ["eu", "us"]}) == "eu, us"
    assert render("{x}", {"x": []}) == "none"


@pytest.mark.parametrize("first, second", [
    (1, True), (True, 1), (1.0, 1), (0.0, -0.0), (-0.0, 0.0), (0, False), (5, 5.0)])
def test_equal_values_that_print_apart_never_share_a_text(first: Any, second: Any) -> None:
    template = "value {v} / {v:.1f}" if not isinstance(first, bool) else "value {v}"
    for value in (first, second, first):
        assert render(template, {"v": value}) == fresh(template, {"v": value})


def test_remembered_texts_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templates, "_RENDERED", Memo(10))
    for i in range(1, 40):
        assert render("{n} GB", {"n": i}) == f"{i} GB"
        assert len(templates._RENDERED) <= 10


def test_a_template_reaches_facts_and_nothing_else() -> None:
    assert fields("{a} {b:,.0f}") == [("a", ""), ("b", ",.0f")]
    for bad in ("{a.__class__}", "{a[0]}", "{a!r}", "{a:>{b}}"):
        with pytest.raises(TemplateError):
            fields(bad)
