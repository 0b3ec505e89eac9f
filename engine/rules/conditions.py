"""Condition trees of rules: ``all``/``any``/``not`` over leaves ``{fact, OP: value}``."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Union

from engine.rules.limits import MAX_LIST_VALUES, MAX_STRING_BYTES
from engine.rules.model import OPERATORS

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


class ConditionSyntaxError(ValueError):
    """A malformed condition; ``line`` locates it in the file when known."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def parse_condition(data: Any, line: int | None = None) -> Condition:
    """Parse YAML data into a condition tree (structure only; names are checked later)."""
    line = getattr(data, "line", None) or line
    if data is None:
        return All((), line)
    if not isinstance(data, Mapping):
        raise ConditionSyntaxError(
            f"a condition is a mapping (all/any/not or fact), got {type(data).__name__}", line)
    keys = set(data)
    if keys in ({"all"}, {"any"}):
        key = next(iter(keys))
        items = data[key]
        if not isinstance(items, list):
            raise ConditionSyntaxError(f"'{key}' takes a list of conditions", line)
        lines = getattr(items, "item_lines", [line] * len(items))
        children = tuple(parse_condition(c, ln) for c, ln in zip(items, lines, strict=True))
        return All(children, line) if key == "all" else AnyOf(children, line)
    if keys == {"not"}:
        return Not(parse_condition(data["not"], line), line)
    if "fact" in keys:
        return _leaf(data, line)
    raise ConditionSyntaxError(
        f"unknown condition keys {sorted(map(str, keys))}; expected all, any, not or fact", line)


def _leaf(data: Mapping[str, Any], line: int | None) -> Leaf:
    ops = [k for k in data if k != "fact"]
    if len(ops) != 1:
        raise ConditionSyntaxError(
            f"a leaf has 'fact' and exactly one operator of {', '.join(OPERATORS)}", line)
    op = str(ops[0])
    if op not in OPERATORS:
        from engine.files.validation import did_you_mean

        hint = did_you_mean(op, OPERATORS)
        raise ConditionSyntaxError(f"unknown operator '{op}'{hint}", line)
    fact = data["fact"]
    if not isinstance(fact, str):
        raise ConditionSyntaxError("'fact' must be a fact name", line)
    return Leaf(fact, op, _value(op, data[op], line), line)  # type: ignore[arg-type]


def _value(op: str, raw: Any, line: int | None) -> Value | PolicyRef:
    if isinstance(raw, Mapping) and set(raw) == {"policy"}:
        if not isinstance(raw["policy"], str) or op in ("in", "not_in", "is", "exists"):
            raise ConditionSyntaxError(f"'{op}' takes {{policy: NAME}} only with eq, ne, lt, "
                                       "lte, gt or gte and a constant's name", line)
        return PolicyRef(raw["policy"])
    if isinstance(raw, Mapping):
        if set(raw) != {"fact"} or not isinstance(raw["fact"], str):
            raise ConditionSyntaxError("a value is a literal, {fact: NAME} or {policy: NAME}",
                                       line)
        if op in ("in", "not_in", "is", "exists"):
            raise ConditionSyntaxError(f"'{op}' takes a literal, not {{fact: ...}}", line)
        return FactRef(raw["fact"])
    if op in ("in", "not_in"):
        if not isinstance(raw, list) or not raw:
            raise ConditionSyntaxError(f"'{op}' takes a non-empty list", line)
        if len(raw) > MAX_LIST_VALUES:
            raise ConditionSyntaxError(
                f"'{op}' lists {len(raw):,} values; at most {MAX_LIST_VALUES} (durable_rules "
                "2.0.28 hangs on 512 alternatives of one fact)", line)
        return tuple(_scalar(v, line) for v in raw)
    if op == "exists" and not isinstance(raw, bool):
        raise ConditionSyntaxError("'exists' takes true or false", line)
    if op == "is" and raw is not None and not isinstance(raw, bool):
        raise ConditionSyntaxError("'is' takes true, false or null", line)
    return _scalar(raw, line)


def _scalar(raw: Any, line: int | None) -> str | bool | int | float | None:
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise ConditionSyntaxError("NaN and Infinity are not allowed", line)
        if raw != 0 and not 1e-4 <= abs(raw) < 1e15:
            raise ConditionSyntaxError(
                f"{raw!r} would be written in exponent form, which durable_rules cannot parse; "
                "use a value between 0.0001 and 10^15", line)
    if isinstance(raw, int) and not isinstance(raw, bool) and abs(raw) >= 10**15:
        raise ConditionSyntaxError(f"{raw} is too large (limit 10^15)", line)
    if isinstance(raw, str) and len(raw) * 4 > MAX_STRING_BYTES and (
            len(raw.encode("utf-8", "surrogatepass")) > MAX_STRING_BYTES):
        raise ConditionSyntaxError(
            f"a string of {len(raw.encode('utf-8', 'surrogatepass')):,} bytes; at most "
            f"{MAX_STRING_BYTES:,} (durable_rules 2.0.28 compares long strings wrongly)", line)
    if raw is None or isinstance(raw, (str, bool, int, float)):
        return raw
    raise ConditionSyntaxError(f"expected a string, number, boolean or null, got {raw!r}", line)


def resolve_policy(cond: Condition, lookup: Callable[[str, int | None], Any]) -> Condition:
    """The condition with every ``{policy: NAME}`` replaced by ``lookup(NAME, line)``."""
    if isinstance(cond, Leaf):
        if isinstance(cond.value, PolicyRef):
            return replace(cond, value=_scalar(lookup(cond.value.name, cond.line), cond.line))
        return cond
    if isinstance(cond, Not):
        return replace(cond, child=resolve_policy(cond.child, lookup))
    return replace(cond, children=tuple(resolve_policy(c, lookup) for c in cond.children))


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
