"""Fact signatures: what a ruleset can tell apart in a fact, so its verdicts can be reused.

Every condition leaf compares one fact field with a literal, with another field of the same
fact, or tests presence. So two facts on which every field falls in the same *class* get the
same verdict from every rule of the ruleset:

- a field compared only with numbers: which of the sorted literals it lies below, and
  whether it equals one (``x > 3`` cannot tell 4 from 5 when 3 is the only cut);
- a field compared only for (in)equality with strings or booleans: which literal it equals,
  or none of them (``gpu: t4`` cannot tell an A100 from an H100);
- a field only tested for presence: present or not;
- a pair ``{fact: other}``: the sign of the comparison (numbers), equality (other values
  compared with ``eq``/``ne``), or which side is missing;
- anything else (a field compared with mixed literals, strings ordered): its exact value.

A signature is the tuple of those classes. It is a refinement: equal signatures imply equal
truth of every leaf, hence of every rule. durable_rules still decides each signature the
first time it is seen (``engine.rules.evaluate``); the signature never evaluates a rule itself.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.rules.conditions import Condition, FactRef, leaves
from engine.rules.limits import PLAIN_LIMIT, PLAIN_MIN, durable_value
from engine.rules.operators import REGISTRY

_MISSING = ("missing",)
_NUMBER_OPS = frozenset(op.name for op in REGISTRY.values() if op.tells_numbers)
_EQUALITY_OPS = frozenset(op.name for op in REGISTRY.values() if op.tells_equal)
_EXACT_INT = 2**53
"""durable_rules compares numbers as doubles: beyond this, integers are classed by value."""
_OTHER = -1
"""The class of a value equal to none of a field's literals."""
_TYPES = (type, "types")
"""Key, in a field's literal classes, of the set of the literals' types."""


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _typed(value: Any) -> tuple[type, Any]:
    """A value with its type, so that ``True`` and ``1`` stay apart."""
    return (value.__class__, value)


def _pair_class(a: Any, b: Any, ordered: bool) -> Any:
    """The class of a ``{fact: other}`` pair: which side is missing, the sign of the
    comparison (numbers), equality (other values), or both exact values."""
    if a is _MISSING or b is _MISSING:
        return (a is _MISSING, b is _MISSING)
    if not ordered and a.__class__ is str and b.__class__ is str:  # the usual case
        return a == b
    if _is_number(a) and _is_number(b) and abs(a) <= _EXACT_INT and abs(b) <= _EXACT_INT:
        return (a > b) - (a < b)
    if not ordered and not (_is_number(a) and _is_number(b)):
        return a == b
    return (_typed(a), _typed(b))  # strings ordered, or integers beyond doubles


@dataclass(frozen=True)
class Signer:
    """The classes one ruleset distinguishes, per field it reads."""

    cuts: tuple[tuple[str, tuple[float, ...]], ...]
    """Fields compared only with numbers, with their sorted literals."""
    literals: tuple[tuple[str, Mapping[Any, Any]], ...]
    """Fields compared only for (in)equality with non-numbers: literal → its class (strings
    bare, other values typed) and, under ``_TYPES``, the literals' types."""
    exact: tuple[str, ...]
    """Fields whose exact value is the class."""
    presence: tuple[str, ...]
    """Fields only tested for presence (or compared only through ``pairs``)."""
    pairs: tuple[tuple[str, str, bool], ...]
    """``{fact: other}`` comparisons, and whether any of them orders (``lt``, ``gt``, …)."""

    def sign(self, fact: Mapping[str, Any]) -> tuple[Any, ...]:
        """The signature of ``fact``: equal signatures, equal verdicts of every rule."""
        get = fact.get
        key: list[Any] = [get("kind")]
        append = key.append
        for name, cuts in self.cuts:
            value = get(name, _MISSING)
            kind = value.__class__
            if kind is float or (kind is int and -_EXACT_INT <= value <= _EXACT_INT):
                at = bisect_left(cuts, value)
                append(2 * at + (at < len(cuts) and cuts[at] == value))
            else:  # missing, not a number after all, or an integer durable_rules would round
                append(value if value is _MISSING else (kind, value))
        for name, classes in self.literals:
            value = get(name, _MISSING)
            if value is _MISSING:
                append(value)
            else:
                kind = value.__class__
                found = classes.get(value if kind is str else (kind, value))
                # a value of another type than every literal: kept exact, no coercion assumed
                append(found if found is not None else
                       _OTHER if kind in classes[_TYPES] else _typed(value))
        for name in self.exact:
            value = get(name, _MISSING)
            append(value if value is _MISSING else _typed(value))
        for name in self.presence:
            append(name in fact)
        for left, right, ordered in self.pairs:
            append(_pair_class(get(left, _MISSING), get(right, _MISSING), ordered))
        return tuple(key)

    def bind(self, common: Mapping[str, Any],
             own: Iterable[str]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
        """A signer of the facts ``{**common, **durable_fact(raw, own)}`` that reads ``raw``
        itself: the classes of ``common`` (durable values already) are found once, and only
        the fields named ``own`` are read from each ``raw`` and converted as
        ``engine.rules.limits.durable_fact`` would (None, lists and mappings left out, floats
        made plain). Same signatures as :meth:`sign` on those facts, without building them."""
        mine = frozenset(own)
        template = list(self.sign(common))
        position = 1
        cuts = []
        for name, c in self.cuts:
            if name in mine:
                cuts.append((position, name, c, len(c)))
            position += 1
        literals = []
        for name, classes in self.literals:
            if name in mine:
                literals.append((position, name, classes, classes[_TYPES]))
            position += 1
        exact = []
        for name in self.exact:
            if name in mine:
                exact.append((position, name))
            position += 1
        presence = []
        for name in self.presence:
            if name in mine:
                presence.append((position, name))
            position += 1
        pairs = []
        for left, right, ordered in self.pairs:
            if left in mine or right in mine:
                pairs.append((position, left, right, ordered, left in mine, right in mine,
                              common.get(left, _MISSING), common.get(right, _MISSING)))
            position += 1
        kind_is_own = "kind" in mine

        def sign(raw: Mapping[str, Any]) -> tuple[Any, ...]:
            key = template.copy()
            get = raw.get
            if kind_is_own:
                kind = durable_value(get("kind"))
                key[0] = common.get("kind") if kind is None else kind
            for i, name, c, size in cuts:
                value: Any = get(name)
                kind = value.__class__
                if kind is float:
                    if not (PLAIN_MIN <= value < PLAIN_LIMIT or value == 0
                            or -PLAIN_LIMIT < value <= -PLAIN_MIN):
                        value = durable_value(value)
                elif kind is not int or not -_EXACT_INT <= value <= _EXACT_INT:
                    if durable_value(value) is not None:  # else the common class stays
                        key[i] = (kind, value)
                    continue
                at = bisect_left(c, value)
                key[i] = 2 * at + (at < size and c[at] == value)
            for i, name, classes, types in literals:
                value = get(name)
                kind = value.__class__
                if kind is str:  # the usual cases: a durable value already
                    cls = classes.get(value)
                elif kind is bool:
                    cls = classes.get((kind, value))
                else:
                    value = durable_value(value)
                    if value is None:
                        continue  # the common class stays
                    kind = value.__class__
                    cls = classes.get(value if kind is str else (kind, value))
                key[i] = cls if cls is not None else _OTHER if kind in types else _typed(value)
            for i, name in exact:
                value = durable_value(get(name))
                if value is not None:
                    key[i] = _typed(value)
            for i, name in presence:
                value = get(name)
                if value is not None and not isinstance(value, (list, tuple, dict)):
                    key[i] = True  # durable_rules sees it (else the common class stays)
            for i, left, right, ordered, left_own, right_own, left_common, right_common in pairs:
                a = durable_value(get(left)) if left_own else None
                b = durable_value(get(right)) if right_own else None
                key[i] = _pair_class(left_common if a is None else a,
                                     right_common if b is None else b, ordered)
            return tuple(key)

        return sign

    @property
    def width(self) -> int:
        """Positions of a signature: the fact kind, then one per field class."""
        return 1 + len(self.cuts) + len(self.literals) + len(self.exact) + len(
            self.presence) + len(self.pairs)

    def positions(self, names: Iterable[str]) -> tuple[int, ...]:
        """The positions of a signature that classes of the fields ``names`` fill (the fact
        kind's first): all a rule reading only these fields can tell apart."""
        wanted = set(names)
        fields: list[tuple[str, ...]] = [
            *((name,) for name, _ in self.cuts), *((name,) for name, _ in self.literals),
            *((name,) for name in self.exact), *((name,) for name in self.presence),
            *((left, right) for left, right, _ in self.pairs)]
        return (0, *(i for i, held in enumerate(fields, 1) if wanted.intersection(held)))


def fields_of(condition: Condition) -> frozenset[str]:
    """Every field a condition reads, those it compares others with included."""
    names: set[str] = set()
    for leaf in leaves(condition):
        names.add(leaf.fact)
        values = leaf.value if isinstance(leaf.value, tuple) else (leaf.value,)
        names.update(v.name for v in values if isinstance(v, FactRef))
    return frozenset(names)


def signer_for(conditions: Iterable[Condition]) -> Signer:
    """The signer of a ruleset whose rules have these conditions."""
    numbers: dict[str, set[float]] = {}
    others: dict[str, set[tuple[type, Any]]] = {}
    exact: set[str] = set()
    present: set[str] = set()
    pairs: dict[tuple[str, str], bool] = {}
    for condition in conditions:
        for leaf in leaves(condition):
            present.add(leaf.fact)
            if leaf.op == "exists":
                continue
            values = leaf.value if isinstance(leaf.value, tuple) else (leaf.value,)
            for value in values:
                if isinstance(value, FactRef):
                    pair = (leaf.fact, value.name)
                    pairs[pair] = pairs.get(pair, False) or leaf.op not in _EQUALITY_OPS
                    present.add(value.name)
                elif leaf.op in _NUMBER_OPS and _is_number(value):
                    numbers.setdefault(leaf.fact, set()).add(value)
                elif leaf.op in _EQUALITY_OPS:
                    others.setdefault(leaf.fact, set()).add(_typed(value))
                else:
                    exact.add(leaf.fact)
    exact |= set(numbers) & set(others)  # mixed literals: keep the value
    cuts = {name: tuple(sorted(v)) for name, v in numbers.items() if name not in exact}
    literals: dict[str, dict[Any, Any]] = {}
    for name, typed in others.items():
        if name not in exact:
            classes: dict[Any, Any] = {  # strings keyed bare (no other key equals a str)
                value if kind is str else (kind, value): i
                for i, (kind, value) in enumerate(sorted(typed, key=repr))}
            classes[_TYPES] = frozenset(kind for kind, _ in typed)
            literals[name] = classes
    presence = present - exact - set(cuts) - set(literals)
    return Signer(
        cuts=tuple(sorted(cuts.items())),
        literals=tuple(sorted(literals.items())),
        exact=tuple(sorted(exact)),
        presence=tuple(sorted(presence)),
        pairs=tuple((a, b, ordered) for (a, b), ordered in sorted(pairs.items())),
    )


__all__ = ["Signer", "fields_of", "signer_for"]
