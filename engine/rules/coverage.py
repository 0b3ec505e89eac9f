"""Bands a fact is set in: a classification such as the budget tier must cover every value of
the answer it reads, once.

Where several rules ``set`` one fact to different values, each from a range of the same
number (``budget_usd`` from one bound up to the next), the ranges are laid side by side over
the answer's whole range (its question's bounds): a stretch no rule covers is a gap (a
budget with no tier at all), a stretch two rules cover is an overlap, and a range outside the
answer's bounds is a value no input reaches. Rules whose conditions read anything else are
left alone: their coverage is not a question of ranges.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine.catalog.load import Catalog
from engine.rules.conditions import All, Condition, Leaf
from engine.rules.load import Rule, Rulebook

_LOWER = {"gt": False, "gte": True}
_UPPER = {"lt": False, "lte": True}


@dataclass(frozen=True)
class Band:
    """A range of one number: [low, high] with each end in or out."""

    fact: str
    low: float = -math.inf
    low_in: bool = False
    high: float = math.inf
    high_in: bool = False

    def empty(self) -> bool:
        """No number is in it."""
        return self.low > self.high or (self.low == self.high and not (
            self.low_in and self.high_in))

    def meet(self, other: Band) -> Band:
        """The numbers in both."""
        low, low_in = max((self.low, not self.low_in), (other.low, not other.low_in))
        high, high_in = min((self.high, self.high_in), (other.high, other.high_in))
        return Band(self.fact, low, not low_in, high, high_in)


def set_coverage(book: Rulebook, catalog: Catalog) -> list[tuple[Rule, str]]:
    """(rule, problem) for each gap, overlap or unreachable value of a banded fact."""
    found: list[tuple[Rule, str]] = []
    for fact, setters in _setters(book).items():
        if len({json.dumps(value) for _, value in setters}) < 2:
            continue  # one value: a flag, not a classification
        bands = [(rule, value, _band(rule.condition)) for rule, value in setters]
        numbers = {band.fact for _, _, band in bands if band is not None}
        if any(band is None for _, _, band in bands) or len(numbers) != 1:
            continue
        domain = _domain(numbers.pop(), catalog)
        placed = [(rule, value, band.meet(domain)) for rule, value, band in bands
                  if band is not None]
        found += _unreachable(fact, domain, placed)
        found += _gaps_and_overlaps(fact, domain, [p for p in placed if not p[2].empty()])
    return found


def _setters(book: Rulebook) -> dict[str, list[tuple[Rule, Any]]]:
    out: dict[str, list[tuple[Rule, Any]]] = {}
    for rule in book.rules:
        for effect in rule.model.then:
            if effect.kind == "set":
                out.setdefault(effect.body.fact, []).append((rule, effect.body.value))
    return out


def _band(condition: Condition) -> Band | None:
    """The range of one number a condition of comparisons with numbers holds in, else None."""
    leaves = list(_conjunction(condition))
    if not leaves or any(leaf is None for leaf in leaves):
        return None
    facts = {leaf.fact for leaf in leaves if leaf is not None}
    if len(facts) != 1:
        return None
    band = Band(facts.pop())
    for leaf in leaves:
        assert leaf is not None
        value = leaf.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if leaf.op in _LOWER:
            band = band.meet(Band(band.fact, float(value), _LOWER[leaf.op]))
        elif leaf.op in _UPPER:
            band = band.meet(Band(band.fact, high=float(value), high_in=_UPPER[leaf.op]))
        else:
            return None
    return band


def _conjunction(condition: Condition) -> Iterator[Leaf | None]:
    """The leaves of an all-of-leaves condition; None for anything else (or, not, nesting)."""
    if isinstance(condition, Leaf):
        yield condition
    elif isinstance(condition, All):
        for child in condition.children:
            yield from _conjunction(child)
    else:
        yield None


def _domain(fact: str, catalog: Catalog) -> Band:
    question = next((q for q in catalog.questions if q.id == fact), None)
    if question is None:
        return Band(fact)
    low = -math.inf if question.min is None else question.min
    high = math.inf if question.max is None else question.max
    return Band(fact, low, question.min is not None, high, question.max is not None)


def _unreachable(fact: str, domain: Band,
                 placed: list[tuple[Rule, Any, Band]]) -> list[tuple[Rule, str]]:
    return [(rule, f"{fact} = {value} can never be set: no {domain.fact} from "
                   f"{_num(domain.low)} to {_num(domain.high)} meets its condition")
            for rule, value, band in placed if band.empty()]


def _gaps_and_overlaps(fact: str, domain: Band,
                       placed: list[tuple[Rule, Any, Band]]) -> list[tuple[Rule, str]]:
    found: list[tuple[Rule, str]] = []
    ordered = sorted(placed, key=lambda p: (p[2].low, not p[2].low_in))
    reach, reach_in, last = domain.low, not domain.low_in, None
    for rule, value, band in ordered:
        if band.low > reach or (band.low == reach and not reach_in and not band.low_in):
            after = f" ({last.id} ends at {_num(reach)})" if last is not None else ""
            found.append((rule, f"{domain.fact} from {_num(reach)} up to {_num(band.low)} gets "
                                f"no {fact}: {rule.id} starts at {_num(band.low)}{after}"))
        elif last is not None and (band.low < reach or (band.low == reach and reach_in
                                                        and band.low_in)):
            found.append((rule, f"{domain.fact} at {_num(band.low)} gets two values of {fact}: "
                                f"{rule.id} ({value}) starts before {last.id} ends at "
                                f"{_num(reach)}"))
        if band.high > reach or (band.high == reach and band.high_in and not reach_in):
            reach, reach_in, last = band.high, band.high_in, rule
    if last is not None and (reach < domain.high or (
            reach == domain.high and domain.high_in and not reach_in)):
        found.append((last, f"{domain.fact} above {_num(reach)} gets no {fact}: {last.id} "
                            f"ends there and no rule covers the rest up to "
                            f"{_num(domain.high)}"))
    return found


def _num(value: float) -> str:
    return "any" if math.isinf(value) else f"{value:,g}"
