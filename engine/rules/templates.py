"""``because`` templates: ``{fact}`` and ``{fact:,.0f}`` over facts, and nothing else.

No attribute access, no indexing, no conversions, no nested fields: a template can read the
value of a named fact and format it as a number; it cannot reach any Python object.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable, Mapping
from typing import Any

from engine.memo import Memo

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


def render(template: str, facts: Mapping[str, Any]) -> str:
    """Fill a checked template from facts; unknown values show as 'unknown'.

    Texts are remembered by template and the values (with their types) they show: most
    recur across requests, and formatting numbers costs more than looking a text up.
    """
    values = tuple(map(facts.get, _names(template)))
    if 0 in values:  # 0.0 and -0.0 (and False and 0) are equal keys that print apart
        return _render(template, values)
    try:
        key = (template, tuple(map(type, values)), values)
        found = _RENDERED.get(key)
    except TypeError:  # a list value: not hashable, not remembered
        return _render(template, values)
    return found if found is not None else _RENDERED.put(key, _render(template, values))


_RENDERED: Memo[tuple[Any, ...], str] = Memo(10_000)


def _render(template: str, values: tuple[Any, ...]) -> str:
    out = []
    it = iter(values)
    for literal, name, spec in _parsed(template):
        out.append(literal)
        if name is not None:
            out.append(_format(next(it), spec))
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def _names(template: str) -> tuple[str, ...]:
    """The fact names a template shows, in order (repeats included)."""
    return tuple(name for _, name, _ in _parsed(template) if name is not None)


@functools.lru_cache(maxsize=4096)
def _parsed(template: str) -> tuple[tuple[str, str | None, str], ...]:
    """(literal text, field name or None, format spec) parts of a template, parsed once."""
    return tuple((literal, name, spec or "")
                 for literal, name, spec, _ in string.Formatter().parse(template))


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
