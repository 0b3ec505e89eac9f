"""Lint a valid rulebook: what loads but is probably wrong, and durable_rules traps.

Findings are warnings unless they would break the engine (then errors): contradictory
conditions, identical conditions with conflicting effects, options no rule can prefer,
sources cited nowhere, thresholds on the wrong unit scale, ``because`` texts that repeat a
threshold of their own condition (write ``{fact}`` or ``{policy.NAME}``: said once, never
stale), and rules that cannot fit
durable_rules' limits even split (``engine.rules.limits``; the compiler refuses them
too). Nothing here builds durable_rules.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from engine.catalog.load import Catalog, cited_sources
from engine.errors import RuleError
from engine.facts.spec import CANDIDATE, FactSpec, registry
from engine.files.yamlio import line_of, load_yaml_file
from engine.resources import bundled_dir
from engine.rules.compile import compile_condition, fact_width_problems, rule_parts
from engine.rules.conditions import All, AnyOf, Condition, FactRef, Leaf, Not
from engine.rules.coverage import set_coverage
from engine.rules.load import Rule, Rulebook
from engine.rules.operators import COMPARISONS, NEGATION

Severity = Literal["error", "warning"]
_MAX_DNF = 256


@dataclass(frozen=True)
class Finding:
    """One problem: where, which rule (or catalog entry), what, how bad."""

    path: str
    line: int | None
    subject: str
    message: str
    severity: Severity
    refused: bool = False
    """The engine would refuse the rules (an error of the files, not of the policy)."""

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.subject}: {self.severity}: {self.message}"


def lint(book: Rulebook, catalog: Catalog, rules_dir: Any = None,
         catalog_dir: Any = None, *, whole_policy: bool = True) -> list[Finding]:
    """Every lint finding for a loaded rulebook, in file order.

    ``whole_policy`` is False when only some rule files are checked: then options nobody
    prefers and sources nobody cites say nothing, so those checks are skipped.
    """
    found: list[Finding] = []
    for rule in book.rules:
        found += _durable_limits(rule)
        if not satisfiable(rule.condition):
            found.append(_at(rule, "can never fire: its conditions contradict each other",
                             "warning"))
        found += _unit_scale(rule, catalog, book)
    found += _repeated_literals(book)
    found += _literal_thresholds(book)
    found += [_at(rule, message, "error") for rule, message in set_coverage(book, catalog)]
    found += _conflicts(book)
    if whole_policy:
        found += _unpreferred_options(book, rules_dir)
        found += _uncited_sources(book, catalog, catalog_dir)
        found += gpus_without_offers(catalog, catalog_dir)
    found += _fact_width(book)
    return found


def _at(rule: Rule, message: str, severity: Severity, line: int | None = None, *,
        refused: bool = False) -> Finding:
    return Finding(rule.path, line or rule.line, rule.id, message, severity, refused)


# -- durable_rules limits ------------------------------------------------------------------
def _durable_limits(rule: Rule) -> list[Finding]:
    try:
        rule_parts(rule)
    except RuleError as exc:
        return [_at(rule, exc.message, "error", exc.line, refused=True)]
    return []


def _fact_width(book: Rulebook) -> list[Finding]:
    fields = frozenset(s.name for s in CANDIDATE)
    return [_at(rule, str(problem), "error", refused=True) for rule, problem in
            fact_width_problems(book, fields)]


# -- satisfiability -----------------------------------------------------------------------
Literal_ = tuple[str, str, Any]
"""(fact, op, value) with op possibly 'missing'."""


def _dnf(cond: Condition, negate: bool = False) -> list[list[Literal_]]:
    """Disjunctive normal form of a condition (negations pushed to the leaves)."""
    if isinstance(cond, Not):
        return _dnf(cond.child, not negate)
    if isinstance(cond, Leaf):
        return _leaf_dnf(cond, negate)
    conj = isinstance(cond, All) != negate
    parts = [_dnf(c, negate) for c in cond.children]
    if not parts:
        return [[]] if conj else []
    if not conj:
        return [c for p in parts for c in p][:_MAX_DNF]
    out: list[list[Literal_]] = [[]]
    for part in parts:
        out = [a + b for a, b in itertools.product(out, part)][:_MAX_DNF]
    return out


def _leaf_dnf(leaf: Leaf, negate: bool) -> list[list[Literal_]]:
    f, op, v = leaf.fact, leaf.op, leaf.value
    if op == "exists":
        return [[(f, "present" if bool(v) != negate else "missing", None)]]
    if op == "is":
        if v is None:
            return [[(f, "present" if negate else "missing", None)]]
        op = "eq"
    if isinstance(v, FactRef):
        return [[(f, "present", None), (v.name, "present", None)]] if not negate else [[]]
    if not negate:
        return [[(f, op, v)]]
    return [[(f, NEGATION[op], v)], [(f, "missing", None)]]


def satisfiable(cond: Condition) -> bool:
    """Whether some assignment of facts makes the condition hold."""
    return any(_consistent(conj) for conj in _dnf(cond))


def _consistent(conj: Iterable[Literal_]) -> bool:
    by_fact: dict[str, list[tuple[str, Any]]] = {}
    for fact, op, value in conj:
        by_fact.setdefault(fact, []).append((op, value))
    return all(_fact_consistent(ops) for ops in by_fact.values())


def _fact_consistent(ops: list[tuple[str, Any]]) -> bool:
    kinds = {op for op, _ in ops}
    if "missing" in kinds:
        return kinds <= {"missing"}
    low, low_strict, high, high_strict = -math.inf, False, math.inf, False
    allowed: set[Any] | None = None
    banned: set[Any] = set()
    for op, value in ops:
        if op == "eq":
            allowed = {value} if allowed is None else allowed & {value}
        elif op == "in":
            allowed = set(value) if allowed is None else allowed & set(value)
        elif op == "ne":
            banned.add(value)
        elif op == "not_in":
            banned |= set(value)
        elif op in ("gt", "gte") and isinstance(value, (int, float)) and (
                value > low or (value == low and op == "gt")):
            low, low_strict = value, op == "gt"
        elif op in ("lt", "lte") and isinstance(value, (int, float)) and (
                value < high or (value == high and op == "lt")):
            high, high_strict = value, op == "lt"
    if low > high or (low == high and (low_strict or high_strict)):
        return False
    if allowed is not None:
        allowed = {v for v in allowed if v not in banned and _within(v, low, low_strict, high,
                                                                     high_strict)}
        return bool(allowed)
    return True


def _within(v: Any, low: float, low_strict: bool, high: float, high_strict: bool) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return math.isinf(low) and math.isinf(high)
    above = v > low if low_strict else v >= low
    below = v < high if high_strict else v <= high
    return above and below


# -- conflicting twins --------------------------------------------------------------------
def _effect_keys(rule: Rule) -> set[tuple[str, ...]]:
    keys: set[tuple[str, ...]] = set()
    for effect in rule.model.then:
        body = effect.body
        if effect.kind in ("prefer", "avoid", "exclude"):
            keys.add((effect.kind, str(body.decision), str(body.option)))
        elif effect.kind == "set":
            keys.add(("set", body.fact, json.dumps(body.value)))
    return keys


def _conflict(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> str | None:
    for kind, x, y in a:
        for other, x2, y2 in b:
            if (x, y) == (x2, y2) and {kind, other} in ({"prefer", "avoid"},
                                                          {"prefer", "exclude"}):
                return f"{kind} vs {other} of {x} {y}"
            if kind == other == "set" and x == x2 and y != y2:
                return f"set {x} to {y} vs {y2}"
    return None


def _conflicts(book: Rulebook) -> list[Finding]:
    groups: dict[str, list[Rule]] = {}
    for rule in book.rules:
        key = rule.match + json.dumps(compile_condition(rule.condition), sort_keys=True)
        groups.setdefault(key, []).append(rule)
    found = []
    for rules in groups.values():
        for a, b in itertools.combinations(rules, 2):
            why = _conflict(_effect_keys(a), _effect_keys(b))
            if why:
                found.append(_at(b, f"same conditions as {a.id} with a conflicting effect "
                                    f"({why})", "warning"))
    return found


# -- coverage of options and sources -------------------------------------------------------
def _unpreferred_options(book: Rulebook, rules_dir: Any) -> list[Finding]:
    preferred = {(e.body.decision, e.body.option) for r in book.rules for e in r.model.then
                 if e.kind == "prefer"}
    path = (rules_dir or bundled_dir("rules")) / "decisions.yaml"
    raw = _raw(path)
    found = []
    for axis, options in book.decisions.items():
        if axis in book.picked:
            continue  # the pick's configuration chooses it; rules exclude and weigh those
        for i, option in enumerate(options):
            if (axis, option) not in preferred:
                found.append(Finding(str(path), line_of(raw, ("decisions", axis, "options", i)),
                                     f"{axis}.{option}", "no rule can ever prefer this option",
                                     "warning"))
    return found


def _uncited_sources(book: Rulebook, catalog: Catalog, catalog_dir: Any) -> list[Finding]:
    cited: set[str] = set()
    for rule in book.rules:
        cited |= set(rule.model.sources)
    for declared in (*book.warnings.values(), *book.strategies.values()):
        cited |= set(declared.sources) | {declared.id}
    for rule in book.rules:
        cited |= {e.body.id for e in rule.model.then if e.kind in ("warn", "suggest")}
    for name, text in catalog.texts.items():
        if not name.endswith("sources.yaml"):
            cited |= set(_source_ids(text))
    cited |= {s.publisher for s in catalog.sources.values()}  # a document its rules come from
    path = (catalog_dir or bundled_dir("catalog")) / "sources.yaml"
    raw = _raw(path)
    found = []
    for i, source in enumerate(catalog.sources.values()):
        if source.id not in cited:
            found.append(Finding(str(path), line_of(raw, ("sources", i)), source.id,
                                 "source cited nowhere (no rule or catalog entry names it)",
                                 "warning"))
    return found


def gpus_without_offers(catalog: Catalog, catalog_dir: Any = None) -> list[Finding]:
    """A GPU no offer rents and no ``no_offer_reason`` explains (a buyer would ask why), and
    a reason left on a GPU that offers now rent."""
    rented = {o.gpu for o in catalog.offers}
    path = (catalog_dir or bundled_dir("catalog")) / "gpus.yaml"
    raw = _raw(path)
    found = []
    for i, gpu in enumerate(catalog.gpus.values()):
        line = line_of(raw, ("gpus", i))
        if gpu.id not in rented and not gpu.no_offer_reason:
            found.append(Finding(str(path), line, gpu.id, "no cloud offer rents this GPU and "
                                 "no_offer_reason says why", "warning"))
        elif gpu.id in rented and gpu.no_offer_reason:
            found.append(Finding(str(path), line, gpu.id, "no_offer_reason is set, but offers "
                                 "rent this GPU: drop the reason", "warning"))
    return found


def _source_ids(text: str) -> list[str]:
    import yaml

    return cited_sources(yaml.safe_load(text))


def _raw(path: Any) -> Any:
    try:
        return load_yaml_file(Path(path))
    except Exception:
        return None


# -- a threshold said twice -------------------------------------------------------------
def _repeated_literals(book: Rulebook) -> list[Finding]:
    """A ``because`` text that writes out a number its own condition compares with: the two
    drift apart when one is edited. Read from the file, before ``{policy.X}`` is filled in."""
    found = []
    for rule, entry in _raw_entries(book):
        because = entry.get("because")
        if not isinstance(because, str):
            continue
        for leaf in _leaves(rule.condition):
            if _literal_in_text(leaf, because, entry):
                found.append(_at(rule, f"because repeats {leaf.value:,g}, the threshold of "
                                 f"{leaf.fact} in its condition: write {{{leaf.fact}}} or a "
                                 "{policy.NAME} so it is said once", "warning", leaf.line))
    return found


def _literal_thresholds(book: Rulebook) -> list[Finding]:
    """A condition that compares with a number written in the rule (other than 0 and 1):
    a threshold belongs in catalog/policy.yaml, named once, with its source."""
    found = []
    for rule, entry in _raw_entries(book):
        for leaf in _leaves(rule.condition):
            value = leaf.value
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or value in (0, 1) or not _written_literally(entry.get("when"),
                                                                 leaf.fact, value)):
                continue
            found.append(_at(rule, f"{leaf.fact} is compared with the number {value:,g}: name "
                             "it under thresholds: in catalog/policy.yaml (with its source) and "
                             "write {policy: NAME}", "warning", leaf.line))
    return found


def _raw_entries(book: Rulebook) -> Iterator[tuple[Rule, dict[str, Any]]]:
    """Each rule with its entry as written in its file (before ``{policy: …}`` is read)."""
    files: dict[str, dict[str, Any]] = {}
    for rule in book.rules:
        if rule.path not in files:
            raw = _raw(rule.path)
            entries = raw.get("rules") if isinstance(raw, dict) else None
            files[rule.path] = {str(e.get("id")): e for e in entries or ()
                                if isinstance(e, dict)}
        yield rule, files[rule.path].get(rule.id) or {}


def _literal_in_text(leaf: Leaf, because: str, entry: dict[str, Any]) -> bool:
    import re

    value = leaf.value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value) < 10:
        return False  # 0, 1, 2…: too common in prose to mean the threshold
    if not _written_literally(entry.get("when"), leaf.fact, value):
        return False  # a {policy: NAME}: the text may quote the constant's value
    forms = {f"{value:g}", f"{value:,g}", f"{value:,.0f}" if value == int(value) else ""} - {""}
    pattern = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.search(rf"(?<![\d.,])(?:{pattern})(?![\d,]|\.\d)", because) is not None


def _written_literally(when: Any, fact: str, value: float) -> bool:
    """Whether the raw condition compares ``fact`` with the number itself (not a reference)."""
    if isinstance(when, dict):
        if when.get("fact") == fact and any(
                isinstance(v, (int, float)) and not isinstance(v, bool) and v == value
                for k, v in when.items() if k != "fact"):
            return True
        return any(_written_literally(v, fact, value) for v in when.values())
    if isinstance(when, list):
        return any(_written_literally(v, fact, value) for v in when)
    return False


# -- unit scale ---------------------------------------------------------------------------
_UNIT_RANGES = {
    "GB": (0.001, 100_000.0),
    "billion parameters": (0.001, 10_000.0),
    "hours": (0.0, 10_000_000.0),
    "hours/year": (0.0, 9_000_000.0),
    "GPUs": (0.0, 100_000.0),
    "W": (1.0, 10_000_000.0),
}


def _unit_scale(rule: Rule, catalog: Catalog, book: Rulebook) -> list[Finding]:
    specs: dict[str, FactSpec] = {**registry(catalog, book.decisions), **book.set_facts}
    bounds = {q.id: (q.min, q.max, q.unit) for q in catalog.questions}
    found = []
    for leaf in _leaves(rule.condition):
        if leaf.op not in COMPARISONS:
            continue
        value = leaf.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        message = _scale_problem(leaf.fact, float(value), specs.get(leaf.fact),
                                 bounds.get(leaf.fact))
        if message:
            found.append(_at(rule, message, "warning", leaf.line))
    return found


def _scale_problem(fact: str, value: float, spec: FactSpec | None,
                   bounds: tuple[float | None, float | None, str | None] | None) -> str | None:
    if bounds is not None:
        low, high, unit = bounds
        if (low is not None and value < low) or (high is not None and value > high):
            return (f"{fact} threshold {value:g} is outside the answer's range "
                    f"{low:g}-{high:g} {unit or ''}".rstrip() + ": wrong unit scale?")
        if unit == "%" and 0 < value < 1:
            return f"{fact} is in percent; {value:g} looks like a fraction"
    unit = spec.unit if spec else None
    if unit in _UNIT_RANGES:
        low_u, high_u = _UNIT_RANGES[unit]
        if not low_u <= abs(value) <= high_u and value != 0:
            return f"{fact} is in {unit}; {value:g} looks like the wrong unit scale"
    if fact.endswith(("_share", "_fraction")) and value > 1:
        return f"{fact} is a fraction of 1; {value:g} looks like a percentage"
    return None


def _leaves(cond: Condition) -> Iterator[Leaf]:
    if isinstance(cond, Leaf):
        yield cond
    elif isinstance(cond, Not):
        yield from _leaves(cond.child)
    elif isinstance(cond, (All, AnyOf)):
        for child in cond.children:
            yield from _leaves(child)
