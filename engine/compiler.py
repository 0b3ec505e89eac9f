"""Compile a rulebook to durable_rules JSON rulesets, avoiding every known trap.

- ``$neq`` (never ``$ne``), no ``$in``: ``in`` becomes ``$or`` of equalities.
- ``not`` is pushed down to the leaves (an unknown fact satisfies the negation).
- Every condition starts with a positive ``kind`` discriminator (no ``$nex``-only loops).
- ``{fact: other}`` compiles to a same-fact reference (``$m``), never a cross-fact one, and
  requires ``other`` to exist (durable_rules would otherwise let it match anything).
- Rules are split into rulesets of at most ``MAX_LEAVES`` compiled comparisons, so that no
  fact ever matches more than 64 of them (error 303, or a crash).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.conditions import All, AnyOf, Condition, FactRef, Leaf, Not
from engine.rulebook import Rule, Rulebook
from engine.signature import Signer, signer_for

MAX_LEAVES = 48
_INVERSE = {"eq": "ne", "ne": "eq", "lt": "gte", "gte": "lt", "lte": "gt", "gt": "lte",
            "in": "not_in", "not_in": "in"}
_DR_OP = {"ne": "$neq", "lt": "$lt", "lte": "$lte", "gt": "$gt", "gte": "$gte"}


@dataclass(frozen=True)
class CompiledRuleset:
    """One durable_rules ruleset: its name, definitions (without actions) and rule ids."""

    name: str
    kind: str
    stratum: int
    definitions: dict[str, Any]
    rule_ids: tuple[str, ...]
    signer: Signer | None = None
    """What these rules can tell apart in a fact: the key their verdicts are reused under
    (None: every evaluation goes to durable_rules)."""
    phase: int = 1
    """The phase of the decision its rules run in (see ``Rule.phase``)."""


@dataclass(frozen=True)
class Compiled:
    """The whole rulebook compiled: request rulesets per stratum, then candidate rulesets."""

    rulesets: tuple[CompiledRuleset, ...]
    candidate_copies: frozenset[str]
    """Request facts that candidate rules read: copied into every candidate fact."""
    reads: dict[str, frozenset[str]]
    """Per fact kind, every fact name a condition reads: all durable_rules needs to see."""

    def stratum(self, kind: str, phase: int, stratum: int = 0) -> tuple[CompiledRuleset, ...]:
        """The rulesets of one layer of one phase of one fact kind."""
        return tuple(r for r in self.rulesets
                     if r.kind == kind and r.phase == phase and r.stratum == stratum)


def compile_rulebook(book: Rulebook, candidate_fields: frozenset[str]) -> Compiled:
    """Compile every rule; ``candidate_fields`` are the names a candidate fact has itself."""
    rulesets: list[CompiledRuleset] = []
    groups: dict[tuple[str, int, int], list[Rule]] = {}
    for rule in book.rules:
        groups.setdefault((rule.match, rule.phase, rule.stratum), []).append(rule)
    for (kind, phase, stratum), rules in sorted(
            groups.items(), key=lambda kv: (kv[0][0] != "request", kv[0][1], kv[0][2])):
        for index, chunk in enumerate(_chunks(rules)):
            name = f"gpu_advisor_{kind}_{phase}_{stratum}_{index}"
            defs = {rule.id: compile_rule(rule) for rule in chunk}
            rulesets.append(CompiledRuleset(name, kind, stratum, defs,
                                            tuple(r.id for r in chunk),
                                            signer_for(r.condition for r in chunk), phase))
    copies = frozenset(
        name for rule in book.rules if rule.match == "candidate" for name in rule.reads
        if name not in candidate_fields
    ) | frozenset(
        name for rule in book.rules if rule.match == "candidate"
        for name in _template_names(rule) if name not in candidate_fields
    )
    reads = {kind: frozenset(n for r in book.rules if r.match == kind for n in r.reads)
             for kind in ("request", "candidate")}
    return Compiled(tuple(rulesets), copies, reads)


def _template_names(rule: Rule) -> list[str]:
    from engine.templates import fields

    return [name for name, _ in fields(rule.model.because)]


def _chunks(rules: list[Rule]) -> list[list[Rule]]:
    out: list[list[Rule]] = [[]]
    count = 0
    for rule in rules:
        n = comparisons(compile_condition(rule.condition))
        if out[-1] and count + n > MAX_LEAVES:
            out.append([])
            count = 0
        out[-1].append(rule)
        count += n
    return out


def comparisons(expr: dict[str, Any] | None) -> int:
    """Comparison nodes in a compiled expression (at least 1): what a chunk is limited by.

    Counting source leaves is not enough: a negated leaf compiles to 2-3 comparisons (``$or``
    of the inverse and ``$nex``), and each ``$or`` branch that holds is a separate match; 33
    rules of one negated ``{fact: other}`` leaf (66 matches) crash durable_rules 2.0.28.
    """
    if expr is None:
        return 1
    key, body = next(iter(expr.items()))
    if key in ("$and", "$or"):
        return sum(comparisons(part) for part in body)
    return 1


def compile_rule(rule: Rule) -> dict[str, Any]:
    """One rule → ``{"all": [{"m": {"$and": [{"kind": ...}, expr]}}]}``."""
    kind = {"kind": rule.match}
    expr = compile_condition(rule.condition)
    pattern = {"$and": [kind, expr]} if expr else kind
    return {"all": [{"m": pattern}]}


def compile_condition(cond: Condition, negate: bool = False) -> dict[str, Any] | None:
    """A condition tree as a durable_rules expression (None: always true)."""
    if isinstance(cond, Not):
        return compile_condition(cond.child, not negate)
    if isinstance(cond, Leaf):
        return _leaf(cond, negate)
    parts = [compile_condition(c, negate) for c in cond.children]
    conjunction = isinstance(cond, All) != negate
    if not parts:
        return None if conjunction else {"$nex": {"kind": 1}}
    if any(p is None for p in parts):
        if not conjunction:
            return None
        parts = [p for p in parts if p is not None]
        if not parts:  # every child always holds; {"$and": []} would hang durable_rules
            return None
    return parts[0] if len(parts) == 1 else {"$and" if conjunction else "$or": parts}


def _leaf(leaf: Leaf, negate: bool) -> dict[str, Any]:
    f, op, value = leaf.fact, leaf.op, leaf.value
    if op == "exists":
        present = bool(value) != negate
        return {"$ex" if present else "$nex": {f: 1}}
    if op == "is":
        if value is None:
            return {"$ex" if negate else "$nex": {f: 1}}
        op = "eq"
    if not negate:
        positive = _positive(f, op, value)
        if isinstance(value, FactRef):
            # durable_rules 2.0.28 treats any comparison with a missing ``$m`` field as true.
            return {"$and": [{"$ex": {value.name: 1}}, positive]}
        return positive
    inverse = _positive(f, _INVERSE[op], value)
    missing = [{"$nex": {f: 1}}]
    if isinstance(value, FactRef):
        missing.append({"$nex": {value.name: 1}})
    return {"$or": [inverse, *missing]}


def _positive(f: str, op: str, value: Any) -> dict[str, Any]:
    if isinstance(value, FactRef):
        value = {"$m": value.name}
    if op == "in":
        return _join("$or", [{f: v} for v in value])
    if op == "not_in":
        return _join("$and", [{"$neq": {f: v}} for v in value])
    if op == "eq":
        return {f: value}
    return {_DR_OP[op]: {f: value}}


def _join(op: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    return parts[0] if len(parts) == 1 else {op: parts}


__all__ = [
    "AnyOf",
    "Compiled",
    "CompiledRuleset",
    "compile_condition",
    "compile_rule",
    "compile_rulebook",
]
