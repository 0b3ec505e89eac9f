"""Fact signatures: what a ruleset can tell apart in a fact, so its verdicts can be reused.

Every condition leaf compares one fact field with a literal, with another field of the same
fact, or tests presence. So two facts on which every field falls in the same *class* get the
same verdict from every rule of the ruleset:

- a field compared only with numbers: which of the sorted literals it lies below, and
  whether it equals one (``x > 3`` cannot tell 4 from 5 when 3 is the only cut);
- a field compared with anything else: its exact value (type included);
- a field only tested for presence: present or not;
- a pair ``{fact: other}``: the sign of the comparison, or which side is missing.

A signature is the tuple of those classes. It is a refinement: equal signatures imply equal
truth of every leaf, hence of every rule. durable_rules still decides each signature the
first time it is seen (``engine.evaluate``); the signature never evaluates a rule itself.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.conditions import Condition, FactRef, leaves

_MISSING = ("missing",)
_PRESENT = ("present",)
_NUMBER_OPS = frozenset({"eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in"})


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


@dataclass(frozen=True)
class Signer:
    """The classes one ruleset distinguishes, per field it reads."""

    cuts: tuple[tuple[str, tuple[float, ...]], ...]
    """Fields compared only with numbers, with their sorted literals."""
    exact: tuple[str, ...]
    """Fields compared with non-numbers (strings, booleans, None): the value is the class."""
    presence: tuple[str, ...]
    """Fields only tested for presence."""
    pairs: tuple[tuple[str, str], ...]
    """``{fact: other}`` comparisons (both fields are also classed on their own)."""

    def sign(self, fact: Mapping[str, Any]) -> tuple[Any, ...]:
        """The signature of ``fact``: equal signatures, equal verdicts of every rule."""
        key: list[Any] = [fact.get("kind")]
        for name, cuts in self.cuts:
            value = fact.get(name, _MISSING)
            if value is _MISSING:
                key.append(_MISSING)
            elif _is_number(value):
                at = bisect_left(cuts, value)
                key.append((at, at < len(cuts) and cuts[at] == value))
            else:  # not a number after all: the exact value is always a safe class
                key.append((type(value).__name__, value))
        for name in self.exact:
            value = fact.get(name, _MISSING)
            key.append(_MISSING if value is _MISSING else (type(value).__name__, value))
        for name in self.presence:
            key.append(_PRESENT if name in fact else _MISSING)
        for left, right in self.pairs:
            a, b = fact.get(left, _MISSING), fact.get(right, _MISSING)
            if a is _MISSING or b is _MISSING:
                key.append((a is _MISSING, b is _MISSING))
            elif _is_number(a) and _is_number(b):
                key.append((a > b) - (a < b))
            else:  # anything else: both exact values
                key.append(((type(a).__name__, a), (type(b).__name__, b)))
        return tuple(key)


def signer_for(conditions: Iterable[Condition]) -> Signer:
    """The signer of a ruleset whose rules have these conditions."""
    numbers: dict[str, set[float]] = {}
    others: set[str] = set()
    present: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for condition in conditions:
        for leaf in leaves(condition):
            present.add(leaf.fact)
            values = leaf.value if isinstance(leaf.value, tuple) else (leaf.value,)
            if leaf.op == "exists":
                continue
            for value in values:
                if isinstance(value, FactRef):
                    pairs.add((leaf.fact, value.name))
                    present.add(value.name)
                elif leaf.op in _NUMBER_OPS and _is_number(value):
                    numbers.setdefault(leaf.fact, set()).add(value)
                else:
                    others.add(leaf.fact)
    exact = others
    cuts = {name: tuple(sorted(v)) for name, v in numbers.items() if name not in exact}
    presence = present - exact - set(cuts)
    return Signer(
        cuts=tuple(sorted(cuts.items())),
        exact=tuple(sorted(exact)),
        presence=tuple(sorted(presence)),
        pairs=tuple(sorted(pairs)),
    )


__all__ = ["Signer", "signer_for"]
