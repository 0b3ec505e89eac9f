"""The YAML → durable_rules compiler: exact JSON per operator, negation, the traps it avoids,
and a property test pinning the engine's semantics to ``engine.rules.conditions.holds``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.rulebooks import make_rule, synthetic_book
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine.decide.engine import Engine, load_engine
from engine.rules.compile import (
    Compiled,
    CompiledRuleset,
    compile_condition,
    compile_rule,
    compile_rulebook,
    rule_parts,
)
from engine.rules.conditions import All, AnyOf, Condition, FactRef, Leaf, Not, holds
from engine.rules.evaluate import Evaluator
from engine.rules.limits import MAX_STACK, Network
from engine.rules.load import Rule

REPO = Path(__file__).parent.parent
ALLOWED_DR_KEYS = {"$and", "$or", "$ex", "$nex", "$neq", "$lt", "$lte", "$gt", "$gte", "$m"}




@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


# -- one leaf per operator ----------------------------------------------------------------
LEAF_CASES: list[tuple[Leaf, dict[str, Any]]] = [
    (Leaf("x", "eq", 5), {"x": 5}),
    (Leaf("s", "eq", "cloud"), {"s": "cloud"}),
    (Leaf("x", "ne", 5), {"$neq": {"x": 5}}),
    (Leaf("x", "lt", 5), {"$lt": {"x": 5}}),
    (Leaf("x", "lte", 2.5), {"$lte": {"x": 2.5}}),
    (Leaf("x", "gt", 0), {"$gt": {"x": 0}}),
    (Leaf("x", "gte", -3), {"$gte": {"x": -3}}),
    (Leaf("s", "in", ("a", "b")), {"$or": [{"s": "a"}, {"s": "b"}]}),
    (Leaf("s", "in", ("a",)), {"s": "a"}),
    (Leaf("s", "not_in", ("a", "b")), {"$and": [{"$neq": {"s": "a"}}, {"$neq": {"s": "b"}}]}),
    (Leaf("s", "not_in", ("a",)), {"$neq": {"s": "a"}}),
    (Leaf("b", "is", True), {"b": True}),
    (Leaf("b", "is", False), {"b": False}),
    (Leaf("b", "is", None), {"$nex": {"b": 1}}),
    (Leaf("x", "exists", True), {"$ex": {"x": 1}}),
    (Leaf("x", "exists", False), {"$nex": {"x": 1}}),
    # {fact: other} → "$m", guarded by "$ex" (durable_rules matches a missing "$m" field).
    (Leaf("x", "eq", FactRef("y")), {"$and": [{"$ex": {"y": 1}}, {"x": {"$m": "y"}}]}),
    (Leaf("x", "ne", FactRef("y")), {"$and": [{"$ex": {"y": 1}}, {"$neq": {"x": {"$m": "y"}}}]}),
    (Leaf("x", "gte", FactRef("y")), {"$and": [{"$ex": {"y": 1}}, {"$gte": {"x": {"$m": "y"}}}]}),
    (Leaf("x", "lt", FactRef("y")), {"$and": [{"$ex": {"y": 1}}, {"$lt": {"x": {"$m": "y"}}}]}),
]


@pytest.mark.parametrize(("leaf", "expected"), LEAF_CASES,
                         ids=[f"{c[0].op}-{c[0].value}" for c in LEAF_CASES])
def test_compile_leaf(leaf: Leaf, expected: dict[str, Any]) -> None:
    assert compile_condition(leaf) == expected


def test_compile_rule_wraps_in_kind_discriminator() -> None:
    rule = make_rule(All((Leaf("x", "gt", 1), Leaf("s", "eq", "a"))))
    assert compile_rule(rule) == {"all": [{"m": {"$and": [
        {"kind": "request"}, {"$gt": {"x": 1}}, {"s": "a"}]}}]}


def test_compile_rule_single_leaf_and_empty_condition() -> None:
    assert compile_rule(make_rule(Leaf("x", "gt", 1), match="candidate")) == {
        "all": [{"m": {"$and": [{"kind": "candidate"}, {"$gt": {"x": 1}}]}}]}
    assert compile_rule(make_rule(All(()))) == {"all": [{"m": {"kind": "request"}}]}


# -- negation pushdown -------------------------------------------------------------------
NEGATION_CASES: list[tuple[Condition, dict[str, Any] | None]] = [
    (Not(Leaf("x", "eq", 5)), {"$or": [{"$neq": {"x": 5}}, {"$nex": {"x": 1}}]}),
    (Not(Leaf("x", "ne", 5)), {"$or": [{"x": 5}, {"$nex": {"x": 1}}]}),
    (Not(Leaf("x", "lt", 5)), {"$or": [{"$gte": {"x": 5}}, {"$nex": {"x": 1}}]}),
    (Not(Leaf("x", "lte", 5)), {"$or": [{"$gt": {"x": 5}}, {"$nex": {"x": 1}}]}),
    (Not(Leaf("x", "gt", 5)), {"$or": [{"$lte": {"x": 5}}, {"$nex": {"x": 1}}]}),
    (Not(Leaf("x", "gte", 5)), {"$or": [{"$lt": {"x": 5}}, {"$nex": {"x": 1}}]}),
    (Not(Leaf("s", "in", ("a", "b"))),
     {"$or": [{"$and": [{"$neq": {"s": "a"}}, {"$neq": {"s": "b"}}]}, {"$nex": {"s": 1}}]}),
    (Not(Leaf("s", "not_in", ("a", "b"))), {"$or": [{"s": "a"}, {"s": "b"}, {"$nex": {"s": 1}}]}),
    (Not(Leaf("b", "is", True)), {"$or": [{"$neq": {"b": True}}, {"$nex": {"b": 1}}]}),
    (Not(Leaf("b", "is", None)), {"$ex": {"b": 1}}),
    (Not(Leaf("x", "exists", True)), {"$nex": {"x": 1}}),
    (Not(Leaf("x", "exists", False)), {"$ex": {"x": 1}}),
    (Not(Leaf("x", "gte", FactRef("y"))),
     {"$or": [{"$lt": {"x": {"$m": "y"}}}, {"$nex": {"x": 1}}, {"$nex": {"y": 1}}]}),
    (Not(Not(Leaf("x", "gt", 1))), {"$gt": {"x": 1}}),
    # De Morgan: not all → any of the negations (one $or: nested ones are merged);
    # not any → all of them.
    (Not(All((Leaf("x", "gt", 1), Leaf("b", "exists", True)))),
     {"$or": [{"$lte": {"x": 1}}, {"$nex": {"x": 1}}, {"$nex": {"b": 1}}]}),
    (Not(AnyOf((Leaf("x", "gt", 1), Leaf("b", "exists", True)))),
     {"$and": [{"$or": [{"$lte": {"x": 1}}, {"$nex": {"x": 1}}]}, {"$nex": {"b": 1}}]}),
    # Empty groups: all() is true, any() is false (kind is always present).
    (All(()), None),
    (AnyOf(()), {"$nex": {"kind": 1}}),
    (Not(All(())), {"$nex": {"kind": 1}}),
    (Not(AnyOf(())), None),
    (All((All(()), Leaf("x", "gt", 1))), {"$gt": {"x": 1}}),
    # Regression: was {"$and": []}, on which durable_rules loops and eats memory.
    (All((All(()),)), None),
    (All((All(()), Not(AnyOf(())))), None),
    (Not(AnyOf((All(()), All(())))), {"$nex": {"kind": 1}}),  # repeats dropped
    # Groups of one kind merge; equal values of a list count once (1 == 1.0 in the engine).
    (All((Leaf("x", "gt", 1), All((Leaf("y", "gt", 2), Leaf("x", "gt", 1))))),
     {"$and": [{"$gt": {"x": 1}}, {"$gt": {"y": 2}}]}),
    (Leaf("x", "in", (1, 1.0, 2, 1)), {"$or": [{"x": 1}, {"x": 2}]}),
    (Leaf("s", "not_in", ("a", "a")), {"$neq": {"s": "a"}}),
    (AnyOf((All(()), Leaf("x", "gt", 1))), None),
]


@pytest.mark.parametrize(("cond", "expected"), NEGATION_CASES,
                         ids=[str(i) for i in range(len(NEGATION_CASES))])
def test_negation_pushdown(cond: Condition, expected: dict[str, Any] | None) -> None:
    assert compile_condition(cond) == expected


def test_negation_of_missing_fact_holds_in_python_too() -> None:
    """An unknown fact satisfies no comparison, so its negation holds (both evaluators)."""
    assert holds(Not(Leaf("x", "gt", 1)), {})
    assert not holds(Leaf("x", "gt", 1), {})
    assert not holds(Leaf("x", "ne", 1), {})
    assert holds(Not(Leaf("x", "gte", FactRef("y"))), {"x": 3})


# -- the compiled bundled rulebook -------------------------------------------------------
def walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair anywhere in nested dicts/lists."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)


def test_no_ne_or_in_anywhere_in_bundled_rulebook(engine: Engine) -> None:
    keys = {key for rs in engine.compiled.rulesets for key, _ in walk(rs.definitions)}
    assert "$ne" not in keys
    assert "$in" not in keys
    dollar = {k for k in keys if k.startswith("$")}
    assert dollar <= ALLOWED_DR_KEYS, dollar - ALLOWED_DR_KEYS
    assert "$neq" in dollar  # the walk really reaches the leaves


def test_no_cross_fact_references_in_bundled_rulebook(engine: Engine) -> None:
    for rs in engine.compiled.rulesets:
        for rule_id, definition in rs.definitions.items():
            assert list(definition) == ["all"], rule_id
            assert [list(p) for p in definition["all"]] == [["m"]], rule_id
            for key, value in walk(definition["all"][0]["m"]):
                if not key.startswith("$"):  # a fact name: a literal or a same-fact "$m"
                    assert not isinstance(value, (dict, list)) or list(value) == ["$m"], (
                        rule_id, key, value)


def test_every_compiled_rule_starts_with_positive_kind(engine: Engine) -> None:
    seen = 0
    for rs in engine.compiled.rulesets:
        for rule_id, definition in rs.definitions.items():
            pattern = definition["all"][0]["m"]
            kind = {"kind": engine.rulebook.rule(rule_id).match}
            assert pattern == kind or (list(pattern) == ["$and"] and pattern["$and"][0] == kind)
            assert rs.kind == kind["kind"]
            seen += 1
    assert seen == len(engine.rulebook.rules)


def network_of(ruleset: CompiledRuleset) -> Network:
    network = Network()
    for definition in ruleset.definitions.values():
        network.add(definition["all"][0]["m"])
    return network


def test_rulesets_stay_within_durable_limits(engine: Engine) -> None:
    for rs in engine.compiled.rulesets:
        assert network_of(rs).problem() is None, rs.name
        assert list(rs.definitions) == list(rs.rule_ids)  # no bundled rule needs splitting
    compiled_ids = [r for rs in engine.compiled.rulesets for r in rs.rule_ids]
    assert sorted(compiled_ids) == sorted(r.id for r in engine.rulebook.rules)




def test_chunking_counts_compiled_comparisons_not_leaves() -> None:
    """40 single-leaf rules whose negated {fact: other} leaf compiles to 3 alternatives that
    can hold together (the catch-all's match pending too: 1 + 3 per rule)."""
    rules = [make_rule(Not(Leaf(f"x{i}", "gt", FactRef(f"y{i}"))), f"t.neg{i}", order=i)
             for i in range(40)]
    compiled = compile_rulebook(synthetic_book(rules), frozenset())
    assert [len(rs.rule_ids) for rs in compiled.rulesets] == [15, 15, 10]
    for rs in compiled.rulesets:
        assert network_of(rs).stack <= MAX_STACK


@pytest.mark.slow
def test_many_matching_branches_do_not_crash_durable_rules() -> None:
    """Regression: chunked by leaves, 40 such rules shared one ruleset and a fact missing
    both facts matched 80 branches: 'double free or corruption' (SIGABRT) in the C core."""
    script = textwrap.dedent("""
        from engine.rules.compile import compile_rulebook
        from engine.rules.conditions import FactRef, Leaf, Not
        from engine.rules.evaluate import Evaluator
        from helpers.rulebooks import make_rule, synthetic_book
        rules = [make_rule(Not(Leaf(f"x{i}", "gt", FactRef(f"y{i}"))), f"t.neg{i}", order=i)
                 for i in range(40)]
        compiled = compile_rulebook(synthetic_book(rules), frozenset())
        ev = Evaluator(compiled)
        fired = set()
        for rs in compiled.rulesets:
            fired |= {r for r, _ in ev.run(rs, [{"kind": "request", "fact_id": "f"}])}
        print(len(fired))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=REPO / "tests", timeout=60, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "40"


# -- durable_rules agrees with conditions.holds ------------------------------------------
NUMS = [-4, 0, 1, 2.5, 3, 3.0, 10, 1000000]
STRS = ["", "a", "b", "on-premises"]
NUM_FACTS, BOOL_FACTS, STR_FACTS = ("n1", "n2"), ("b1",), ("s1", "s2")
ORDER_OPS = ("eq", "ne", "lt", "lte", "gt", "gte")


def _num_leaf() -> st.SearchStrategy[Leaf]:
    fact = st.sampled_from(NUM_FACTS)
    return st.one_of(
        st.builds(Leaf, fact, st.sampled_from(ORDER_OPS), st.sampled_from(NUMS)),
        st.builds(Leaf, fact, st.sampled_from(ORDER_OPS), st.sampled_from(NUM_FACTS).map(FactRef)),
        st.builds(Leaf, fact, st.sampled_from(("in", "not_in")),
                  st.lists(st.sampled_from(NUMS), min_size=1, max_size=3).map(tuple)),
    )


def _bool_leaf() -> st.SearchStrategy[Leaf]:
    fact = st.sampled_from(BOOL_FACTS)
    return st.one_of(
        st.builds(Leaf, fact, st.just("is"), st.sampled_from([True, False, None])),
        st.builds(Leaf, fact, st.sampled_from(("eq", "ne")), st.booleans()),
    )


def _str_leaf() -> st.SearchStrategy[Leaf]:
    fact = st.sampled_from(STR_FACTS)
    return st.one_of(
        st.builds(Leaf, fact, st.sampled_from(("eq", "ne")), st.sampled_from(STRS)),
        st.builds(Leaf, fact, st.sampled_from(("in", "not_in")),
                  st.lists(st.sampled_from(STRS), min_size=1, max_size=3).map(tuple)),
    )


def _any_leaf() -> st.SearchStrategy[Leaf]:
    fact = st.sampled_from(NUM_FACTS + BOOL_FACTS + STR_FACTS)
    return st.one_of(st.builds(Leaf, fact, st.just("exists"), st.booleans()),
                     st.builds(Leaf, fact, st.just("is"), st.none()))


LEAVES = st.one_of(_num_leaf(), _bool_leaf(), _str_leaf(), _any_leaf())
TREES = st.recursive(
    LEAVES,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3).map(lambda c: All(tuple(c))),
        st.lists(kids, max_size=3).map(lambda c: AnyOf(tuple(c))),
        kids.map(Not),
    ),
    max_leaves=8,
)


def _maybe(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), values)


FACTS = st.fixed_dictionaries({
    **{n: _maybe(st.sampled_from(NUMS)) for n in NUM_FACTS},
    **{b: _maybe(st.booleans()) for b in BOOL_FACTS},
    **{s: _maybe(st.sampled_from(STRS)) for s in STR_FACTS},
}).map(lambda d: {k: v for k, v in d.items() if v is not None})


def compiled_alone(rule: Rule, signer: Any = None) -> Compiled:
    """One rule in one ruleset, marked as built (no trial build per example): it fits
    durable_rules' limits whole, which the compiler's checks establish without building."""
    assert [name for name, _ in rule_parts(rule)] == [rule.id]
    ruleset = CompiledRuleset("prop", "request", 0, {rule.id: compile_rule(rule)}, (rule.id,),
                              signer)
    return Compiled((ruleset,), frozenset(), {"request": rule.reads}, built=True)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cond=TREES, facts=st.lists(FACTS, min_size=1, max_size=4))
def test_durable_rules_agrees_with_python_holds(cond: Condition,
                                                facts: list[dict[str, Any]]) -> None:
    rule = make_rule(cond)
    compiled = compiled_alone(rule)
    ruleset = compiled.rulesets[0]
    evaluator = Evaluator(compiled)
    for values in facts:
        fired = evaluator.run(ruleset, [{**values, "kind": "request", "fact_id": "f"}])
        assert bool(fired) == holds(cond, values), (compile_rule(rule), values)


def _same_class(signer: Any, values: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """``values`` with each number cut-classed by ``signer`` moved within its class, and each
    string equal to none of its field's literals replaced by another such string (fields
    compared with other fields stay, so the pairs' classes hold)."""
    out = dict(values)
    paired = {name for a, b, _ in signer.pairs for name in (a, b)}
    for name, classes in signer.literals:
        value = values.get(name)
        if isinstance(value, str) and name not in paired and value not in classes:
            unmatched = [v for v in ("zz", "other", value) if v not in classes]
            out[name] = data.draw(st.sampled_from(unmatched))
    for name, cuts in signer.cuts:
        value = values.get(name)
        if type(value) not in (int, float) or value in cuts or name in paired:
            continue
        below = max((c for c in cuts if c < value), default=value - 1000)
        above = min((c for c in cuts if c > value), default=value + 1000)
        moved = data.draw(st.floats(min_value=below, max_value=above, exclude_min=True,
                                    exclude_max=True, allow_nan=False,
                                    allow_subnormal=False).filter(lambda v: abs(v) > 1e-3))
        out[name] = round(moved, 3) if below < round(moved, 3) < above else value
    return out


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cond=TREES, values=FACTS, data=st.data())
def test_equal_signatures_get_equal_verdicts_from_durable_rules(
        cond: Condition, values: dict[str, Any], data: st.DataObject) -> None:
    """A fact moved within its signature class: durable_rules (no memo) gives the same
    verdict, so reusing verdicts by signature is exact."""
    from engine.rules.signature import signer_for

    rule = make_rule(cond)
    signer = signer_for([cond])
    moved = _same_class(signer, values, data)
    # (a move can land in another class when a field's literals are of another type)
    assume(signer.sign({**moved, "kind": "request"}) == signer.sign({**values, "kind": "request"}))
    compiled = compiled_alone(rule, signer)
    ruleset = compiled.rulesets[0]
    evaluator = Evaluator(compiled, memo=False)
    verdicts = [bool(evaluator.run(ruleset, [{**v, "kind": "request", "fact_id": "f"}]))
                for v in (values, moved)]
    assert verdicts[0] == verdicts[1] == holds(cond, values), (compile_rule(rule), values, moved)


ODD_VALUES = [None, True, False, *STRS, "3", *NUMS, 0.0, -0.0, 0.5, 3.0000001, 1e-5, -1e-5,
              1e15, 2e16, -3e17, float("inf"), float("-inf"), float("nan"), 2**53 + 1,
              -(2**60), [1, 2], (), {"a": 1}]
RAW_VALUES = st.sampled_from(ODD_VALUES)
"""What a configuration's own facts may hold before ``durable_fact`` converts them."""
FIELD_NAMES = (*NUM_FACTS, *BOOL_FACTS, *STR_FACTS)


@settings(max_examples=300, deadline=None)
@given(cond=TREES, common=st.dictionaries(st.sampled_from(FIELD_NAMES), RAW_VALUES),
       raw=st.fixed_dictionaries({name: RAW_VALUES for name in FIELD_NAMES}),
       own=st.sets(st.sampled_from(FIELD_NAMES)))
def test_a_bound_signer_signs_raw_facts_as_the_facts_they_make(
        cond: Condition, common: dict[str, Any], raw: dict[str, Any], own: set[str]) -> None:
    """``Signer.bind(common, own)(raw)`` is the signature of ``{**common,
    **durable_fact(raw, own)}``: the fields of ``own`` converted from ``raw`` (None, lists
    and mappings left out, floats made plain), the others ``common``'s, however odd."""
    from engine.rules.limits import durable_fact
    from engine.rules.signature import signer_for

    signer = signer_for([cond])
    shared = {**durable_fact(common), "kind": "candidate"}
    made = {**shared, **durable_fact(raw, own), "fact_id": "f"}
    assert signer.bind(shared, own)(raw) == signer.sign(made), (made, raw)


def test_a_bound_signer_converts_every_odd_value_as_durable_fact_does() -> None:
    """Each odd value in each kind of field (cut, literal, presence, either side of a pair),
    read from the raw facts or left to the common ones."""
    from engine.rules.limits import durable_fact
    from engine.rules.signature import signer_for

    signer = signer_for([All((Leaf("n1", "gt", 0), Leaf("s1", "in", ("a", "b")),
                              Leaf("b1", "exists", True), Leaf("n2", "lte", FactRef("n1")),
                              Leaf("s2", "eq", FactRef("s1"))))])
    for name in FIELD_NAMES:
        for value in ODD_VALUES:
            for common in ({}, {name: 1}, {name: "a"}):
                shared = {**durable_fact(common), "kind": "candidate"}
                for own in ({name}, set(FIELD_NAMES) - {name}):
                    raw = {name: value, "n1": 2, "s1": "a"}
                    made = {**shared, **durable_fact(raw, own), "fact_id": "f"}
                    assert signer.bind(shared, own)(raw) == signer.sign(made), (name, value,
                                                                                common, own)


def test_signature_tells_apart_what_the_rules_tell_apart() -> None:
    from engine.rules.signature import signer_for

    cond = All((Leaf("n1", "gt", 3), Leaf("n2", "lte", FactRef("n1")), Leaf("s1", "eq", "a"),
                Leaf("b1", "exists", True)))
    signer = signer_for([cond])
    assert signer.cuts == (("n1", (3,)),)
    assert [name for name, _ in signer.literals] == ["s1"]
    assert signer.exact == ()
    assert signer.presence == ("b1", "n2")
    assert signer.pairs == (("n2", "n1", True),)
    base = {"kind": "request", "n1": 5, "n2": 1, "s1": "a", "b1": False}
    same = [{**base, "n1": 4.5}, {**base, "n2": 2}, {**base, "b1": True}]
    different = [{**base, "n1": 3}, {**base, "n1": 2}, {**base, "n2": 5}, {**base, "n2": 6},
                 {**base, "s1": "b"}, {k: v for k, v in base.items() if k != "b1"},
                 {k: v for k, v in base.items() if k != "n2"}, {**base, "n1": "5"},
                 {**base, "s1": 1}, {**base, "s1": True}]
    # "b" and "c" both equal none of the literals: one class
    assert signer.sign({**base, "s1": "b"}) == signer.sign({**base, "s1": "c"})
    # integers a double cannot hold are classed by value (durable_rules would round them)
    big = 2**53
    assert signer.sign({**base, "n1": big + 1}) != signer.sign({**base, "n1": big + 3})
    assert signer.sign({**base, "n1": big - 1}) == signer.sign({**base, "n1": big - 3})
    # a pair compared only for equality: equal or not, whatever the values
    eq = signer_for([Leaf("s1", "eq", FactRef("s2"))])
    assert eq.pairs == (("s1", "s2", False),)
    assert eq.sign({"s1": "a", "s2": "a"}) == eq.sign({"s1": "b", "s2": "b"})
    assert eq.sign({"s1": "a", "s2": "a"}) != eq.sign({"s1": "a", "s2": "b"})
    for fact in same:
        assert signer.sign(fact) == signer.sign(base), fact
    for fact in different:
        assert signer.sign(fact) != signer.sign(base), fact
