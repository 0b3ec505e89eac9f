"""engine.rules.templates: filling ``because`` texts."""

from __future__ import annotations

from typing import Any

import pytest

from engine.rules.templates import TemplateError, fields, fill, parse, render

TEMPLATE = "{x} then {x:,.0f} and {y:.1%}"


def test_formats_facts_and_unknowns() -> None:
    assert render(TEMPLATE, {"x": 1234.5, "y": 0.25}) == "1,234 then 1,234 and 25.0%"
    assert render("{x} {y}", {"x": True, "y": None}) == "yes unknown"
    assert render("{x}", {"x": ["eu", "us"]}) == "eu, us"
    assert render("{x}", {"x": []}) == "none"


@pytest.mark.parametrize("value, text", [
    (1, "value 1 / 1.0"), (1.0, "value 1 / 1.0"), (-0.0, "value -0 / -0.0"),
    (0, "value 0 / 0.0"), (1234.5, "value 1,234 / 1234.5")])
def test_a_rule_parses_its_text_once_and_fills_it_like_render(value: Any, text: str) -> None:
    template = "value {v} / {v:.1f}"
    assert render(template, {"v": value}) == text
    assert fill(parse(template), {"v": value}) == text
    assert render("value {v}", {"v": value == 1}) == f"value {'yes' if value == 1 else 'no'}"


@pytest.mark.parametrize("value, text", [
    (5.79, "costs $5.79 a year, 6"), (0.004, "costs $0.01 a year, 0"),
    (0, "costs $0 a year, 0"), (12.4, "costs $12 a year, 12"),
    (1234.5, "costs $1,234 a year, 1,234")])
def test_a_sum_under_ten_dollars_keeps_its_cents(value: Any, text: str) -> None:
    """"keeping your GPUs costs $6 a year" beside a headline of "~$5.79 a year": a sum in
    whole dollars under $10 is said to the cent; a number not after "$" is not."""
    assert render("costs ${v:,.0f} a year, {v:,.0f}", {"v": value}) == text


def test_a_template_reaches_facts_and_nothing_else() -> None:
    assert fields("{a} {b:,.0f}") == [("a", ""), ("b", ",.0f")]
    for bad in ("{a.__class__}", "{a[0]}", "{a!r}", "{a:>{b}}"):
        with pytest.raises(TemplateError):
            fields(bad)


@pytest.mark.parametrize("count, text", [
    (1, "1 run on 1 instance within 1 day"), (2, "2 runs on 2 instances within 2 days"),
    (0.1, "0.1 runs on 0.1 instances within 0.1 days"),
    (11, "11 runs on 11 instances within 11 days")])
def test_a_filled_count_agrees_with_its_noun(count: float, text: str) -> None:
    template = "{n} runs on {n} instance(s) within {n} days"
    assert render(template, {"n": count}) == text
    assert render("${n} days", {"n": 1}) == "$1 days"  # an amount, not a count
