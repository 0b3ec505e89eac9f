"""Compile a rulebook to durable_rules JSON rulesets, avoiding every known trap.

- ``$neq`` (never ``$ne``), no ``$in``: ``in`` becomes ``$or`` of (distinct) equalities.
- ``not`` is pushed down to the leaves (an unknown fact satisfies the negation), and nested
  groups of one kind are merged (De Morgan's ``not all`` is one ``$or``, not an ``$or`` per
  leaf): fewer groups, which durable_rules limits (``engine.rules.limits``).
- Every condition starts with a positive ``kind`` discriminator (no ``$nex``-only loops).
- ``{fact: other}`` compiles to a same-fact reference (``$m``), never a cross-fact one, and
  requires ``other`` to exist (durable_rules would otherwise let it match anything).
- A rule too big for durable_rules is split into parts (``id#1``, ``id#2``, …) whose
  disjunction is the rule; rules and parts are packed into rulesets that each stay within
  every measured limit (matches per fact, alternatives per node, …). What cannot fit is a
  :class:`~engine.errors.RuleError` naming the rule, raised before durable_rules sees it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.errors import RuleError
from engine.rules.conditions import All, AnyOf, Condition, FactRef, Leaf, Not
from engine.rules.limits import (
    MAX_PARTS,
    MAX_PROPERTIES,
    Expr,
    LimitError,
    Network,
    Shape,
    is_group,
    pattern_problem,
    shape,
)
from engine.rules.load import Rule, Rulebook
from engine.rules.operators import DURABLE, NEGATION
from engine.rules.signature import Signer, fields_of, signer_for


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
    rule_of: Mapping[str, str] = field(default_factory=dict)
    """Definition name → rule id, for the parts of a split rule (``id#2``); other
    definitions are named by their rule id."""

    def rule_id(self, name: str) -> str:
        """The rule a definition belongs to."""
        return self.rule_of.get(name, name)
    phase: int = 1
    """The phase of the decision its rules run in (see ``Rule.phase``)."""
    rule_positions: tuple[tuple[str, tuple[int, ...]], ...] = ()
    """Per rule (in ``rule_ids`` order), the positions of the signature its own fields fill:
    a rule's verdict is a function of those alone (reused per rule, ``Evaluator.run``)."""


@dataclass(frozen=True)
class Compiled:
    """The whole rulebook compiled: request rulesets per stratum, then candidate rulesets."""

    rulesets: tuple[CompiledRuleset, ...]
    candidate_copies: frozenset[str]
    """Request facts that candidate rules read: copied into every candidate fact."""
    reads: dict[str, frozenset[str]]
    """Per fact kind, every fact name a condition reads: all durable_rules needs to see."""
    origins: Mapping[str, tuple[str, int | None]] = field(default_factory=dict)
    """Rule id → (file, line), to name a rule durable_rules fails on."""
    built: bool = False
    """durable_rules built every ruleset in a bounded trial (``engine.rules.evaluate.verified``)."""

    def stratum(self, kind: str, phase: int, stratum: int = 0) -> tuple[CompiledRuleset, ...]:
        """The rulesets of one layer of one phase of one fact kind."""
        return tuple(r for r in self.rulesets
                     if r.kind == kind and r.phase == phase and r.stratum == stratum)


def compile_rulebook(book: Rulebook, candidate_fields: frozenset[str]) -> Compiled:
    """Compile every rule; ``candidate_fields`` are the names a candidate fact has itself.

    Raises :class:`RuleError` (``file:line: rule-id: message``) for the first rule that cannot
    fit durable_rules' limits, before anything is built.
    """
    copies = frozenset(
        name for rule in book.rules if rule.match == "candidate" for name in rule.reads
        if name not in candidate_fields
    ) | frozenset(
        name for rule in book.rules if rule.match == "candidate"
        for name in _template_names(rule) if name not in candidate_fields
    )
    for rule, problem in fact_width_problems(book, candidate_fields):
        raise _located(rule, problem)
    rulesets: list[CompiledRuleset] = []
    groups: dict[tuple[str, int, int], list[Rule]] = {}
    for rule in book.rules:
        groups.setdefault((rule.match, rule.phase, rule.stratum), []).append(rule)
    for (kind, phase, stratum), rules in sorted(
            groups.items(), key=lambda kv: (kv[0][0] != "request", kv[0][1], kv[0][2])):
        for index, chunk in enumerate(_pack(rules)):
            members = list({rule.id: rule for _, rule, _ in chunk}.values())
            signer = signer_for(r.condition for r in members)
            rulesets.append(CompiledRuleset(
                f"gpu_advisor_{kind}_{phase}_{stratum}_{index}", kind, stratum,
                {name: {"all": [{"m": pattern}]} for name, _, pattern in chunk},
                tuple(r.id for r in members), signer,
                {name: rule.id for name, rule, _ in chunk if name != rule.id}, phase,
                tuple((r.id, signer.positions(fields_of(r.condition))) for r in members)))
    reads = {kind: frozenset(n for r in book.rules if r.match == kind for n in r.reads)
             for kind in ("request", "candidate")}
    origins = {rule.id: (rule.path, rule.line) for rule in book.rules}
    return Compiled(tuple(rulesets), copies, reads, origins)


def _template_names(rule: Rule) -> list[str]:
    from engine.rules.templates import fields

    return [name for name, _ in fields(rule.model.because)]


def _located(rule: Rule, problem: Exception, line: int | None = None) -> RuleError:
    return RuleError(str(problem), path=rule.path, line=line or rule.line, rule_id=rule.id)


def _pack(rules: Sequence[Rule]) -> list[list[tuple[str, Rule, Expr]]]:
    """Rules' parts in order, cut into rulesets whose network stays within every limit."""
    chunks: list[list[tuple[str, Rule, Expr]]] = [[]]
    network = Network()
    for rule in rules:
        for name, pattern, walk in _rule_parts(rule):
            network.add(pattern, walk.peak)
            if chunks[-1] and network.problem() is not None:
                chunks.append([])  # the part goes to a new ruleset, which it fits alone
                network = Network()
                network.add(pattern, walk.peak)
            chunks[-1].append((name, rule, pattern))
    return chunks


def rule_parts(rule: Rule) -> list[tuple[str, Expr]]:
    """(definition name, pattern) of each part of a rule: one named by the rule id when it
    fits durable_rules whole. Raises :class:`RuleError` when it cannot be made to fit."""
    return [(name, pattern) for name, pattern, _ in _rule_parts(rule)]


def _rule_parts(rule: Rule) -> list[tuple[str, Expr, Shape]]:
    try:
        parts = _split(rule_pattern(rule))
    except LimitError as exc:  # located at its condition
        raise _located(rule, exc, rule.condition.line) from None
    if len(parts) == 1:
        return [(rule.id, *parts[0])]
    return [(f"{rule.id}#{i}", *part) for i, part in enumerate(parts, start=1)]


def fact_width_problems(book: Rulebook, candidate_fields: frozenset[str]
                        ) -> list[tuple[Rule, LimitError]]:
    """Per fact kind, the first rule with which its facts would carry more than
    MAX_PROPERTIES properties (a candidate fact: its own fields, the decided options and the
    request facts candidate rules read or quote)."""
    start = {"request": set(), "candidate": set(candidate_fields) | {
        f"{axis}_choice" for axis in book.decisions}}
    found = []
    for kind, names in start.items():
        for rule in book.rules:
            if rule.match != kind:
                continue
            names |= rule.reads
            if kind == "candidate":
                names.update(_template_names(rule))
            width = len(names) + 3  # kind, fact_id, sid
            if width > MAX_PROPERTIES:
                found.append((rule, LimitError(
                    "properties", f"with the facts this rule reads, {kind} facts carry "
                    f"{width} properties; at most {MAX_PROPERTIES} (from 254, durable_rules "
                    "2.0.28 crashes)")))
                break
    return found


def split_pattern(pattern: Expr) -> list[Expr]:
    """Patterns whose disjunction is ``pattern``, each within durable_rules' limits alone.

    A compiled pattern has its negations pushed into the leaves, so each ``$or`` occurs
    once and positively: the pattern holds exactly when it holds with one half of that
    ``$or``'s alternatives in its place. The widest ``$or`` is halved (the narrowest, when
    there are too many groups) until every part fits; LimitError when that takes more than
    MAX_PARTS parts.
    """
    return [part for part, _ in _split(pattern)]


def _split(pattern: Expr) -> list[tuple[Expr, Shape]]:
    parts: list[tuple[Expr, Shape]] = []
    pending = [pattern]
    first: LimitError | None = None
    while pending:
        part = pending.pop()
        walk = shape(part)
        problem = pattern_problem(part, walk)
        if problem is None:
            parts.append((part, walk))
            continue
        first = first or problem
        halves = _halves(part, problem.kind)
        if halves is None:
            raise problem
        if len(parts) + len(pending) + len(halves) > MAX_PARTS:
            raise LimitError(first.kind, f"{first}; split into {MAX_PARTS} parts it still "
                             "does not fit: simplify the rule")
        pending.extend(reversed(halves))
    return parts


def _halves(pattern: Expr, kind: str) -> list[Expr] | None:
    choices = list(_ors(pattern))
    if not choices:
        return None
    pick = min if kind == "groups" else max
    path, children = pick(choices, key=lambda choice: len(choice[1]))
    middle = len(children) // 2
    return [_replace(pattern, path, children[:middle]), _replace(pattern, path, children[middle:])]


def _ors(expr: Expr, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], list[Expr]]]:
    """Every ``$or`` in an expression: (indexes leading to it, its alternatives)."""
    if not is_group(expr):
        return
    op, children = next(iter(expr.items()))
    if op == "$or":
        yield path, children
    for i, child in enumerate(children):
        yield from _ors(child, (*path, i))


def _replace(expr: Expr, path: tuple[int, ...], alternatives: list[Expr]) -> Expr:
    """``expr`` with the ``$or`` at ``path`` holding only ``alternatives``."""
    if not path:
        return _group("$or", alternatives)
    op, children = next(iter(expr.items()))
    i = path[0]
    return _group(op, [*children[:i], _replace(children[i], path[1:], alternatives),
                       *children[i + 1:]])


def rule_pattern(rule: Rule) -> Expr:
    """A rule's whole condition as one durable_rules pattern, behind its ``kind``."""
    kind = {"kind": rule.match}
    expr = compile_condition(rule.condition)
    return _group("$and", [kind, expr]) if expr else kind


def compile_rule(rule: Rule) -> dict[str, Any]:
    """One rule, unsplit → ``{"all": [{"m": {"$and": [{"kind": ...}, ...]}}]}``."""
    return {"all": [{"m": rule_pattern(rule)}]}


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
    present = [p for p in parts if p is not None]
    if len(present) < len(parts) and not conjunction:
        return None  # an alternative always holds
    if not present:  # every child always holds; {"$and": []} would hang durable_rules
        return None
    return _group("$and" if conjunction else "$or", present)


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
    inverse = _positive(f, NEGATION[op], value)
    missing = [{"$nex": {f: 1}}]
    if isinstance(value, FactRef):
        missing.append({"$nex": {value.name: 1}})
    return _group("$or", [inverse, *missing])


def _positive(f: str, op: str, value: Any) -> dict[str, Any]:
    if isinstance(value, FactRef):
        value = {"$m": value.name}
    if op == "in":
        return _group("$or", [{f: v} for v in _distinct(value)])
    if op == "not_in":
        return _group("$and", [{"$neq": {f: v}} for v in _distinct(value)])
    if op == "eq":
        return {f: value}
    return {DURABLE[op]: {f: value}}


def _distinct(values: Sequence[Any]) -> list[Any]:
    """List values without repeats as durable_rules compares them (1 and 1.0 are one)."""
    seen: dict[tuple[str, Any], Any] = {}
    for value in values:
        number = type(value) in (int, float)
        seen.setdefault(("number" if number else type(value).__name__, value), value)
    return list(seen.values())


def _group(op: str, parts: Sequence[Expr]) -> Expr:
    """``{op: parts}`` with nested groups of the same ``op`` merged, repeats dropped and a
    single part unwrapped: the same condition in fewer durable_rules groups."""
    flat: dict[str, Expr] = {}
    for part in parts:
        for item in part[op] if is_group(part, op) else [part]:
            flat.setdefault(repr(item), item)  # equal parts are built in the same key order
    items = list(flat.values())
    return items[0] if len(items) == 1 else {op: items}


__all__ = [
    "AnyOf",
    "Compiled",
    "CompiledRuleset",
    "compile_condition",
    "compile_rule",
    "compile_rulebook",
    "fact_width_problems",
    "rule_parts",
    "rule_pattern",
    "split_pattern",
]
