"""PROTOTYPE: the policy as JSON (validated data only), for the cache A/B of issue 28."""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Any

from engine.catalog.load import Catalog
from engine.rules.compile import Compiled
from engine.rules.conditions import All, AnyOf, Condition, FactRef, Leaf, Not
from engine.facts.spec import FactSpec
from engine.rules.load import Rule, Rulebook
from engine.rules.model import Declared

Policy = tuple[Catalog, Rulebook, Compiled]


@functools.cache
def _adapters() -> tuple[Any, Any, Any]:
    from pydantic import TypeAdapter

    from engine.rules.model import RuleModel

    return TypeAdapter(Catalog), TypeAdapter(list[RuleModel]), TypeAdapter(_RulebookRest)


@dataclasses.dataclass(frozen=True)
class _RulebookRest:
    decisions: dict[str, tuple[str, ...]]
    decision_descriptions: dict[str, str]
    applies_when: dict[str, dict[str, tuple[str, ...]]]
    phases: dict[str, int]
    warnings: dict[str, Declared]
    strategies: dict[str, Declared]
    set_facts: dict[str, FactSpec]
    texts: dict[str, str]
    fields: dict[str, str | None]
    picked: dict[str, str]


def _cond_out(cond: Condition) -> Any:
    if isinstance(cond, Leaf):
        value = cond.value
        if isinstance(value, FactRef):
            value = {"fact": value.name}
        elif isinstance(value, tuple):
            value = {"tuple": list(value)}
        return ["leaf", cond.fact, cond.op, value, cond.line]
    if isinstance(cond, Not):
        return ["not", _cond_out(cond.child), cond.line]
    kind = "all" if isinstance(cond, All) else "any"
    return [kind, [_cond_out(c) for c in cond.children], cond.line]


def _cond_in(data: Any) -> Condition:
    if data[0] == "leaf":
        _, fact, op, value, line = data
        if isinstance(value, dict):
            value = FactRef(value["fact"]) if "fact" in value else tuple(value["tuple"])
        return Leaf(fact, op, value, line)
    if data[0] == "not":
        return Not(_cond_in(data[1]), data[2])
    children = tuple(_cond_in(c) for c in data[1])
    return All(children, data[2]) if data[0] == "all" else AnyOf(children, data[2])


def encode(key: str, policy: Policy) -> bytes:
    catalog, book, compiled = policy
    cat_ta, rules_ta, rest_ta = _adapters()
    rest = _RulebookRest(**{f.name: getattr(book, f.name)
                            for f in dataclasses.fields(_RulebookRest)})
    head = json.dumps({"key": key, "built": compiled.built,
                       "rules": [[_cond_out(r.condition), r.path, r.line, r.order, r.stratum,
                                  r.phase] for r in book.rules]})
    return b"\n".join([head.encode(), cat_ta.dump_json(catalog, by_alias=True,
                                                       exclude_unset=True),
                       rules_ta.dump_json([r.model for r in book.rules], by_alias=True,
                                          exclude_unset=True),
                       rest_ta.dump_json(rest, by_alias=True, exclude_unset=True)])


def decode(data: bytes, key: str) -> Policy:
    from engine.decide.engine import compile_policy

    head_text, cat_text, rules_text, rest_text = data.split(b"\n")
    head = json.loads(head_text)
    if head["key"] != key:
        raise ValueError("written for another policy")
    cat_ta, rules_ta, rest_ta = _adapters()
    catalog = cat_ta.validate_json(cat_text)
    models = rules_ta.validate_json(rules_text)
    rest = rest_ta.validate_json(rest_text)
    rules = tuple(Rule(m, _cond_in(c), p, line, o, s, ph)
                  for m, (c, p, line, o, s, ph) in zip(models, head["rules"], strict=True))
    book = Rulebook(rules=rules, **{f.name: getattr(rest, f.name)
                                    for f in dataclasses.fields(_RulebookRest)})
    compiled = compile_policy_unverified(book, head["built"], compile_policy)
    return catalog, book, compiled


def compile_policy_unverified(book: Rulebook, built: bool, _: Any) -> Compiled:
    from engine.decide.engine import _CANDIDATE_FIELDS
    from engine.rules.compile import compile_rulebook

    return dataclasses.replace(compile_rulebook(book, _CANDIDATE_FIELDS), built=built)
