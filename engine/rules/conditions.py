"""Condition trees of rules: ``all``/``any``/``not`` over leaves ``{fact, OP: value}``.

What the compiler, the linter and the explanations walk; :mod:`engine.rules.when` reads a
rule's ``when`` into one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Union

from pydantic import PlainSerializer, PlainValidator

from engine.rules.operators import REGISTRY

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


def condition_data(cond: Condition) -> Any:
    """The tree as JSON data, each node tagged with its kind (``all`` and ``any`` nodes hold
    the same fields), for the policy cache; :func:`condition_from_data` reads it back."""
    if isinstance(cond, Leaf):
        value: Any = cond.value
        if isinstance(value, FactRef):
            value = {"fact": value.name}
        elif isinstance(value, tuple):
            value = {"list": list(value)}
        return {"fact": cond.fact, "op": cond.op, "value": value, "line": cond.line}
    if isinstance(cond, Not):
        return {"not": condition_data(cond.child), "line": cond.line}
    kind = "all" if isinstance(cond, All) else "any"
    return {kind: [condition_data(child) for child in cond.children], "line": cond.line}


def condition_from_data(data: Any) -> Condition:
    """The tree :func:`condition_data` made (a tree as it is, given one); ValueError if
    ``data`` is not such a tree."""
    if isinstance(data, Leaf | All | AnyOf | Not):
        return data
    try:
        line = data["line"]
        if "fact" in data:
            value = data["value"]
            if isinstance(value, dict):
                value = FactRef(value["fact"]) if "fact" in value else tuple(value["list"])
            return Leaf(data["fact"], data["op"], value, line)
        if "not" in data:
            return Not(condition_from_data(data["not"]), line)
        kind = All if "all" in data else AnyOf
        children = tuple(condition_from_data(c) for c in data["all" if kind is All else "any"])
        return kind(children, line)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a condition tree ({exc})") from None


StoredCondition = Annotated[Condition, PlainValidator(condition_from_data),
                            PlainSerializer(condition_data)]
"""A condition as pydantic reads and writes it (``Rule.condition``): a tagged tree."""



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
    holds = REGISTRY[leaf.op].holds
    assert holds is not None  # only is/exists have none, handled above
    return bool(holds(value, target))


def describe_leaf(leaf: Leaf) -> str:
    """``hours_per_year gte 3500`` / ``hours_per_year gte {break_even_hours}``."""
    value = f"{{{leaf.value.name}}}" if isinstance(leaf.value, FactRef) else leaf.value
    if isinstance(value, tuple):
        value = "[" + ", ".join(map(str, value)) + "]"
    return f"{leaf.fact} {leaf.op} {value}"
