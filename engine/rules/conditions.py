"""Condition trees of rules: ``all``/``any``/``not`` over leaves ``{fact, OP: value}``.

What the compiler, the linter and the explanations walk; :mod:`engine.rules.when` reads a
rule's ``when`` into one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Union

Value = Union[str, bool, int, float, None, tuple[Any, ...], "FactRef"]


@dataclass(frozen=True)
class FactRef:
    """A value that is another fact of the same fact (``{fact: other}``)."""

    name: str


@dataclass(frozen=True)
class PolicyRef:
    """A value that is a policy constant (``{policy: NAME}``), replaced by its value when the
    rules are loaded: a threshold written once, in catalog/policy.yaml."""

    name: str


@dataclass(frozen=True)
class Leaf:
    """``{fact: NAME, OP: VALUE}``."""

    fact: str
    op: str
    value: Value
    line: int | None = None


@dataclass(frozen=True)
class All:
    """Every child holds (an empty ``all`` always holds)."""

    children: tuple[Condition, ...]
    line: int | None = None


@dataclass(frozen=True)
class AnyOf:
    """At least one child holds."""

    children: tuple[Condition, ...]
    line: int | None = None


@dataclass(frozen=True)
class Not:
    """The child does not hold."""

    child: Condition
    line: int | None = None


Condition = Leaf | All | AnyOf | Not



def leaves(cond: Condition) -> Iterator[Leaf]:
    """Every leaf of a condition tree, in order."""
    if isinstance(cond, Leaf):
        yield cond
    elif isinstance(cond, Not):
        yield from leaves(cond.child)
    else:
        for child in cond.children:
            yield from leaves(child)


def facts_read(cond: Condition) -> set[str]:
    """Names of all facts a condition reads."""
    names: set[str] = set()
    for leaf in leaves(cond):
        names.add(leaf.fact)
        if isinstance(leaf.value, FactRef):
            names.add(leaf.value.name)
    return names


def holds(cond: Condition, facts: Mapping[str, Any]) -> bool:
    """Evaluate in Python, with the engine's semantics (an unknown fact satisfies no comparison).

    Used for explanations ("first condition that failed") and what-if probing; the
    recommendation itself is always evaluated by durable_rules.
    """
    return first_failure(cond, facts) is None


def first_failure(cond: Condition, facts: Mapping[str, Any]) -> Leaf | Condition | None:
    """The first leaf (or group) that makes ``cond`` false, or None when it holds."""
    if isinstance(cond, Leaf):
        return None if _leaf_holds(cond, facts) else cond
    if isinstance(cond, Not):
        return cond if first_failure(cond.child, facts) is None else None
    if isinstance(cond, All):
        for child in cond.children:
            failed = first_failure(child, facts)
            if failed is not None:
                return failed
        return None
    failures = [first_failure(c, facts) for c in cond.children]
    return None if any(f is None for f in failures) else cond


def _leaf_holds(leaf: Leaf, facts: Mapping[str, Any]) -> bool:
    value = facts.get(leaf.fact)
    if leaf.op == "exists":
        return (value is not None) == leaf.value
    if leaf.op == "is":
        return value is None if leaf.value is None else value is not None and value == leaf.value
    if value is None:
        return False
    target = leaf.value
    if isinstance(target, FactRef):
        target = facts.get(target.name)
        if target is None:
            return False
    if leaf.op == "in":
        return value in target  # type: ignore[operator]
    if leaf.op == "not_in":
        return value not in target  # type: ignore[operator]
    return bool(_COMPARE[leaf.op](value, target))


_COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "lte": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "gte": lambda a, b: a >= b,
}


def describe_leaf(leaf: Leaf) -> str:
    """``hours_per_year gte 3500`` / ``hours_per_year gte {break_even_hours}``."""
    value = f"{{{leaf.value.name}}}" if isinstance(leaf.value, FactRef) else leaf.value
    if isinstance(value, tuple):
        value = "[" + ", ".join(map(str, value)) + "]"
    return f"{leaf.fact} {leaf.op} {value}"
