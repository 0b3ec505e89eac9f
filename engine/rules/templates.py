"""``because`` templates: ``{fact}`` and ``{fact:,.0f}`` over facts, and nothing else.

No attribute access, no indexing, no conversions, no nested fields: a template can read the
value of a named fact and format it as a number; it cannot reach any Python object.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping
from typing import Any

from engine.estimates.figure import said_in_cents

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SPEC = re.compile(r"^[,_]?(\.\d{1,2})?[f%]?$")


class TemplateError(ValueError):
    """A template that names something other than a plain fact, or uses a disallowed format."""


def fields(template: str) -> list[tuple[str, str]]:
    """The (fact, format spec) pairs a template uses, after checking it is safe."""
    out: list[tuple[str, str]] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise TemplateError(f"malformed template: {exc}") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if conversion:
            raise TemplateError(f"conversion '!{conversion}' is not allowed in {{{name}}}")
        if not _NAME.match(name):
            raise TemplateError(
                f"'{{{name}}}' is not a fact name: only {{fact}} or {{fact:,.0f}} are allowed "
                "(no attributes, indexes or expressions)")
        if spec and not _SPEC.match(spec):
            raise TemplateError(f"format '{spec}' is not allowed in {{{name}}}; use e.g. "
                                ":,.0f or :.1%")
        out.append((name, spec or ""))
    return out


def check(template: str, known: Iterable[str]) -> list[str]:
    """Names in ``template`` that are not in ``known`` (after the safety check)."""
    names = set(known)
    return [name for name, _ in fields(template) if name not in names]


Parsed = tuple[tuple[str, str | None, str], ...]
"""(literal text, fact name or None, format spec) parts of a template."""


def render(template: str, facts: Mapping[str, Any]) -> str:
    """Fill a checked template from facts; unknown values show as 'unknown'."""
    return fill(parse(template), facts)


def parse(template: str) -> Parsed:
    """A checked template's parts, for :func:`fill` (``Rule.because_parts`` keeps a rule's)."""
    return tuple((literal, name, spec or "")
                 for literal, name, spec, _ in string.Formatter().parse(template))


def fill(parts: Parsed, facts: Mapping[str, Any]) -> str:
    """The text of a parsed template filled from facts, its counts agreeing with their
    nouns (:func:`agree`). A sum in whole dollars (``${fact:,.0f}``) under $10 keeps its
    cents, as every other output does: ``$0.37``, not ``$0``."""
    out = []
    for literal, name, spec in parts:
        out.append(literal)
        if name is not None:
            value: Any = facts.get(name)
            if literal.endswith("$") and spec in (",.0f", ".0f") and _cents(value):
                value, spec = max(value, 0.01), ".2f"
            out.append(_format(value, spec))
    return agree("".join(out))


def _cents(value: Any) -> bool:
    """Whether a fact is a sum of dollars said to the cent (:func:`said_in_cents`)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and said_in_cents(value))


_ONE = r"(?<![\d.,$])1 "
_ONE_OF_MANY = re.compile(_ONE + r"(\w+)\(s\)")
_MANY = re.compile(r"(\d) (\w+)\(s\)")
_ONE_UNIT = re.compile(_ONE + r"(day|hour|week|month|year|run|job|node|instance|time|card|GPU)s\b")


def agree(text: str) -> str:
    """``1 GPU(s)`` → ``1 GPU``, ``8 GPU(s)`` → ``8 GPUs``, ``1 days`` → ``1 day``: a filled
    count and the noun after it (a template cannot know the number it will hold)."""
    if "(s)" in text:
        text = _MANY.sub(r"\1 \2s", _ONE_OF_MANY.sub(r"1 \1", text))
    return _ONE_UNIT.sub(r"1 \1", text) if "1 " in text else text


def format_value(value: Any, spec: str = "") -> str:
    """A value as a template shows it (``spec`` checked like a template's)."""
    if spec and not _SPEC.match(spec):
        raise TemplateError(f"format '{spec}' is not allowed; use e.g. ,.0f or .1%")
    return _format(value, spec)


def _format(value: Any, spec: str) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        if spec:
            return format(value, spec)
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:g}"
    return str(value)
