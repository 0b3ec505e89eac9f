"""Rules that cannot hang or crash durable_rules (engine/rules/limits.py, engine/rules/compile.py,
engine.evaluate.verified).

- The checker's model: what one fact can do to the network of a compiled rule.
- A rule too big for durable_rules is compiled in parts, or refused before any build with
  ``file:line: rule-id: message``; the parts fire exactly when the Python evaluation of the
  whole rule (``engine.rules.conditions.holds``) says so, on the real durable_rules engine.
- Every policy is built first in a child process under a time bound: a trap nobody listed
  (simulated by switching the checks off) ends in one line and exit 2, not a hang.

Every command-line run is a subprocess with a generous timeout, so that a regression hangs
one test, not the suite.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers.rulebooks import make_rule, synthetic_book
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import cli
from engine.errors import RuleError
from engine.rules import trial
from engine.rules.compile import (
    Compiled,
    CompiledRuleset,
    compile_rule,
    compile_rulebook,
    rule_parts,
    split_pattern,
)
from engine.rules.conditions import All, AnyOf, Condition, Leaf, Not, holds
from engine.rules.evaluate import Evaluator
from engine.rules.limits import (
    MAX_CHILDREN,
    MAX_GROUPS,
    MAX_PARTS,
    MAX_STACK,
    Network,
    groups,
    pattern_problem,
    shape,
)
from engine.rules.trial import TRIAL_STEP_CPU_S, verified

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "startup-7b-continuous.yaml"
TIMEOUT_S = 120


def leaf(i: int) -> dict[str, Any]:
    return {"$gt": {f"x{i}": 0}}


# -- the model -----------------------------------------------------------------------------
def test_a_list_is_one_match_a_chain_is_one_pending_entry() -> None:
    in_list = {"$or": [{"x": i} for i in range(300)]}
    assert shape(in_list) == dataclasses.replace(shape(in_list), first=1, peak=1, paths=1)
    assert shape(in_list).leaves == 300
    chain = {"$and": [{"$neq": {"x": i}} for i in range(300)]}
    assert (shape(chain).peak, shape(chain).paths) == (1, 1)
    # a negated comparison: present-and-inverse or missing, never both
    assert shape({"$or": [{"$lte": {"x": 1}}, {"$nex": {"x": 1}}]}).peak == 1
    # 1 and 1.0 are equal in durable_rules: both alternatives can hold
    assert shape({"$or": [{"x": 1}, {"x": 1.0}]}).peak == 2


def test_alternatives_multiply_ways_and_add_pending_entries() -> None:
    b, k = 5, 4
    expr = {"$and": [{"$or": [leaf(g * b + i) for i in range(b)]} for g in range(k)]}
    walk = shape(expr)
    assert walk.paths == b ** k
    assert walk.peak == (b - 1) * k + 1  # (b-1) siblings wait at each level, then one
    assert groups(expr) == k + 1


def test_network_counts_shared_nodes_once() -> None:
    network = Network()
    for i in range(3):
        network.add({"$and": [{"kind": "request"}, {"x": 1}, {"$gt": {"y": i}}]})
    assert network.most == {"children": 3, "joins": 0, "betas": 1}  # 3 under the shared x
    network.add({"$and": [{"kind": "request"}, {"$or": [{"x": 1}, {"x": 2}]}]})
    assert network.most["joins"] == 1 and network.most["children"] == 3
    assert network.stack == 1 + 4


@pytest.mark.parametrize(("pattern", "kind"), [
    ({"$and": [{"kind": "r"}, *({"$or": [leaf(i), {"$nex": {f"x{i}": 1}}]}
                                for i in range(MAX_GROUPS))]}, "groups"),
    ({"$and": [{"kind": "r"}, {"$or": [{"x": i} for i in range(MAX_CHILDREN + 1)]}]},
     "children"),
    ({"$and": [{"kind": "r"}, {"$or": [leaf(i) for i in range(MAX_STACK)]}]}, "stack"),
    ({"$and": [{"kind": "r"}, *({"$or": [leaf(3 * g + i) for i in range(3)]}
                                for g in range(6))]}, "paths"),
])
def test_pattern_problems_name_the_limit(pattern: dict[str, Any], kind: str) -> None:
    problem = pattern_problem(pattern)
    assert problem is not None and problem.kind == kind


# -- splitting ---------------------------------------------------------------------------
def test_a_list_over_the_node_limit_is_split_in_halves() -> None:
    pattern = {"$and": [{"kind": "r"}, {"$gt": {"y": 1}},
                        {"$or": [{"x": i} for i in range(400)]}]}
    parts = split_pattern(pattern)
    assert [len(p["$and"][2]["$or"]) for p in parts] == [200, 200]
    assert all(p["$and"][:2] == pattern["$and"][:2] for p in parts)


def test_too_many_groups_are_split_at_the_narrowest_alternatives() -> None:
    pairs = [{"$or": [leaf(i), {"$nex": {f"x{i}": 1}}]} for i in range(MAX_GROUPS + 1)]
    parts = split_pattern({"$and": [{"kind": "r"}, *pairs]})  # 1 + 15 groups
    assert len(parts) == 4
    assert all(groups(p) <= MAX_GROUPS for p in parts)


def test_what_no_split_can_fit_is_refused_with_the_limit() -> None:
    pairs = [{"$or": [leaf(i), {"$nex": {f"x{i}": 1}}]} for i in range(MAX_GROUPS + 10)]
    with pytest.raises(ValueError, match=r"^compiles to 25 nested all/any groups .*; split "
                                         rf"into {MAX_PARTS} parts it still does not fit"):
        split_pattern({"$and": [{"kind": "r"}, *pairs]})


# -- split and merged rules fire exactly as the Python evaluation says --------------------
VALUES = list(range(0, 1200, 2))


def _long_list() -> st.SearchStrategy[Leaf]:
    return st.builds(
        Leaf, st.sampled_from(("n1", "n2")), st.sampled_from(("in", "not_in")),
        st.lists(st.sampled_from(VALUES), min_size=200, max_size=500, unique=True).map(tuple))


def _small() -> st.SearchStrategy[Leaf]:
    return st.builds(Leaf, st.sampled_from(("n1", "n2", "n3")),
                     st.sampled_from(("eq", "ne", "lt", "gte")), st.sampled_from(VALUES[:20]))


def _wide_negation() -> st.SearchStrategy[Condition]:
    wide = st.lists(_small(), min_size=10, max_size=17).map(tuple)
    return st.one_of(wide.map(lambda c: Not(All(c))), wide.map(lambda c: Not(AnyOf(c))))


BIG = st.one_of(
    _long_list(),
    _long_list().map(Not),
    st.lists(st.one_of(_long_list(), _small()), min_size=2, max_size=3).map(
        lambda c: AnyOf(tuple(c))),
    st.tuples(_long_list(), _small()).map(All),
    _wide_negation(),
)
FACT = st.fixed_dictionaries({
    name: st.one_of(st.none(), st.sampled_from(VALUES), st.integers(-5, 1300))
    for name in ("n1", "n2", "n3")
}).map(lambda d: {k: v for k, v in d.items() if v is not None})


def fired_per_fact(compiled: Compiled, facts: list[dict[str, Any]]) -> list[set[str]]:
    evaluator = Evaluator(compiled, memo=False)
    fired: list[set[str]] = [set() for _ in facts]
    for ruleset in compiled.rulesets:
        for rule_id, fact_id in evaluator.run(ruleset, [
                {**fact, "kind": "request", "fact_id": str(i)} for i, fact in enumerate(facts)]):
            fired[int(fact_id)].add(rule_id)
    return fired


@pytest.mark.slow
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conditions=st.lists(BIG, min_size=1, max_size=3),
       facts=st.lists(FACT, min_size=1, max_size=6), data=st.data())
def test_split_rules_fire_as_python_evaluates(conditions: list[Condition],
                                              facts: list[dict[str, Any]],
                                              data: st.DataObject) -> None:
    rules = [make_rule(c, f"t.big{i}", order=i) for i, c in enumerate(conditions)]
    # values from the lists themselves, so that list membership is exercised
    listed = [v for c in conditions for lf in _leaves(c) if isinstance(lf.value, tuple)
              for v in lf.value]
    if listed:
        facts = [*facts, {"n1": data.draw(st.sampled_from(listed)),
                          "n2": data.draw(st.sampled_from(listed))}]
    compiled = verified(compile_rulebook(synthetic_book(rules), frozenset()))
    expected = [{r.id for r in rules if holds(r.condition, fact)} for fact in facts]
    assert fired_per_fact(compiled, facts) == expected


def _leaves(cond: Condition) -> list[Leaf]:
    from engine.rules.conditions import leaves

    return list(leaves(cond))


def test_long_lists_and_wide_negations_do_compile_in_parts() -> None:
    """The shapes above really are split (or merged), not just small."""
    long_in = make_rule(Leaf("n1", "in", tuple(range(500))), "t.in")
    assert [name for name, _ in rule_parts(long_in)] == ["t.in#1", "t.in#2"]
    not_all = make_rule(Not(All(tuple(Leaf("n1", "gt", i) for i in range(14)))), "t.not")
    merged = [{"$lte": {"n1": 0}}, {"$nex": {"n1": 1}},
              *({"$lte": {"n1": i}} for i in range(1, 14))]
    assert compile_rule(not_all) == {"all": [{"m": {"$and": [{"kind": "request"},
                                                             {"$or": merged}]}}]}
    assert len(rule_parts(not_all)) == 1
    not_any = make_rule(Not(AnyOf(tuple(Leaf(f"n{i % 3}", "gt", i) for i in range(17)))))
    assert len(rule_parts(not_any)) == 16


def test_many_rules_on_one_field_are_packed_into_rulesets_that_build() -> None:
    """≥ 512 rules branching on one field hung durable_rules in one ruleset: packed, 600 such
    rules (and 100 that all hold at once) build and fire exactly where they should."""
    rules = [make_rule(Leaf("n1", "eq", i), f"t.eq{i}", order=i) for i in range(600)]
    rules += [make_rule(Leaf("n2", "gt", i), f"t.gt{i}", order=600 + i) for i in range(100)]
    compiled = verified(compile_rulebook(synthetic_book(rules), frozenset()))
    assert len(compiled.rulesets) > 1
    for ruleset in compiled.rulesets:
        network = Network()
        for definition in ruleset.definitions.values():
            network.add(definition["all"][0]["m"])
        assert network.problem() is None
    fired = fired_per_fact(compiled, [{"n1": 7, "n2": 1000}, {"n1": 599, "n2": 50}])
    assert fired == [{"t.eq7", *(f"t.gt{i}" for i in range(100))},
                     {"t.eq599", *(f"t.gt{i}" for i in range(50))}]


# -- the bounded trial build ---------------------------------------------------------------
def raw(*definitions: dict[str, Any], origins: bool = True) -> Compiled:
    """Hand-written rulesets that bypass the compiler's checks (one rule per definition)."""
    defs = {f"raw.r{i}": d for i, d in enumerate(definitions)}
    ruleset = CompiledRuleset("gpu_advisor_raw", "request", 0, defs, tuple(defs))
    where = {name: ("raw.yaml", 10 + i) for i, name in enumerate(defs)} if origins else {}
    return Compiled((ruleset,), frozenset(), {"request": frozenset()}, where)


def pattern_rule(expr: dict[str, Any]) -> dict[str, Any]:
    return {"all": [{"m": {"$and": [{"kind": "request"}, expr]}}]}


HANGS = pattern_rule({"$or": [{"x": i} for i in range(513)]})
"""513 alternatives under one node: durable_rules never finishes building (measured)."""
ERROR_113 = pattern_rule({"$or": [{"$or": [leaf(i), {"$nex": {f"x{i}": 1}}]}
                                  for i in range(15)]})
FINE = pattern_rule({"$gt": {"x": 1}})


def test_a_policy_that_builds_is_marked_and_not_tried_again() -> None:
    compiled = verified(raw(FINE))
    assert compiled.built
    assert verified(compiled) is compiled


@pytest.mark.slow
def test_a_build_that_never_ends_is_cut_off_and_names_the_rule() -> None:
    with pytest.raises(RuleError) as info:
        verified(raw(HANGS))
    assert str(info.value) == (f"raw.yaml:10: raw.r0: durable_rules did not finish building "
                               f"the rules within {TRIAL_STEP_CPU_S:g} s of CPU time")


def test_a_policy_of_the_same_content_is_not_tried_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another catalog with the same rules compiles to the same rulesets: once one built,
    the other is marked without a child process."""
    assert verified(raw(FINE)).built

    def no_fork() -> int:
        raise AssertionError("tried again")

    monkeypatch.setattr("os.fork", no_fork)
    assert verified(raw(FINE)).built


@pytest.mark.slow
def test_a_child_that_waits_for_the_cpu_still_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a loaded machine does to the trial: the child gets no CPU for longer than a
    step's CPU bound. Wall-clock time does not count, so the policy builds."""
    monkeypatch.setattr(trial, "_limit_memory", lambda: time.sleep(TRIAL_STEP_CPU_S + 0.5))
    assert verified(raw(pattern_rule({"$lt": {"x": 5}}))).built


@pytest.mark.slow
def test_a_machine_too_busy_for_the_trial_is_named_not_a_rule(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trial, "TRIAL_STEP_WALL_S", 0.2)
    monkeypatch.setattr(trial, "_limit_memory", lambda: time.sleep(1.0))
    with pytest.raises(RuleError) as info:
        verified(raw(pattern_rule({"$lt": {"x": 6}})))
    assert str(info.value).startswith("the machine is too busy: the trial build of the rules "
                                      "got no answer within 0.2 s of wall-clock time")


def test_the_child_builds_without_the_garbage_collector(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A full collection in the child walks the parent's whole heap, copying each page: in a
    long test run it cost more than the step's CPU bound (CI, 2026-12-07). The child runs
    with the collector off (it exits with 3 here if not), and the parent gets it back."""
    def collector_off() -> None:
        if gc.isenabled():
            os._exit(3)

    monkeypatch.setattr(trial, "_limit_memory", collector_off)
    assert gc.isenabled()
    assert verified(raw(pattern_rule({"$lt": {"x": 7}}))).built
    assert gc.isenabled()


def test_an_error_code_names_the_rule_that_causes_it() -> None:
    with pytest.raises(RuleError) as info:
        verified(raw(FINE, ERROR_113))
    assert str(info.value) == (
        "raw.yaml:11: raw.r1: durable_rules failed building the rules: Could not create "
        "ruleset, error code: 113 (too many all/any groups in one rule)")


def test_a_crash_names_the_ruleset_rules() -> None:
    """65 absence tests all hold for a fact with no values: durable_rules crashes (or fails
    with error 303) when the trial asserts one."""
    absent = [pattern_rule({"$nex": {f"x{i}": 1}}) for i in range(65)]
    with pytest.raises(RuleError) as info:
        verified(raw(*absent, origins=False))
    message = str(info.value)
    assert message.startswith(("durable_rules crashed (signal ", "durable_rules failed "
                               "evaluating a fact: ")), message
    assert message.endswith("evaluating a fact: one of the rules raw.r0, raw.r1, raw.r2, "
                            "raw.r3, raw.r4, …") or "error code: 303" in message, message


def test_without_a_child_process_the_policy_is_left_untried(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr("os.fork", no_fork)
    compiled = raw(pattern_rule({"$gt": {"never_tried": 1}}))
    assert verified(compiled) is compiled and not compiled.built


@pytest.mark.slow
def test_the_evaluator_tries_an_untried_policy_first() -> None:
    with pytest.raises(RuleError, match="did not finish building"):
        Evaluator(raw(HANGS))


# -- the command line: one line, exit 2, never a hang -------------------------------------
LONG_LIST = """\
rules:
  - id: my.long-in
    description: a long list
    when:
      all:
        - {{fact: hours_per_year, in: [{values}]}}
    then:
      - prefer: {{decision: deployment, option: local, weight: 1}}
    because: long list
    sources: [decide.local]
"""
WIDE_NOT = """\
rules:
  - id: my.wide-not
    description: a negation of {n} comparisons
    when:
      not:
        {group}:
{leaves}
    then:
      - prefer: {{decision: deployment, option: cloud, weight: 1}}
    because: wide negation
    sources: [decide.cloud]
"""


def long_list(n: int) -> str:
    return LONG_LIST.format(values=", ".join(str(v) for v in range(1000, 1000 + n)))


def wide_not(group: str, n: int) -> str:
    leaves = "\n".join(f"          - {{fact: hours_per_year, gt: {100 * (i + 1)}}}"
                       for i in range(n))
    return WIDE_NOT.format(n=n, group=group, leaves=leaves)


def run(*args: str, script: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", script] if script else [sys.executable, "-m", "engine"]
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd=REPO,
                          timeout=TIMEOUT_S, check=False)


def folder(tmp_path: Path, text: str) -> tuple[Path, Path]:
    directory = tmp_path / "rules"
    directory.mkdir()
    path = directory / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    return directory, path


@pytest.mark.slow
@pytest.mark.parametrize(("text", "line", "message"), [
    (long_list(512), 6, "my.long-in: 'in' lists 512 values; at most 500 (durable_rules 2.0.28 "
                        "hangs on 512 alternatives of one fact)"),
    (wide_not("any", 20), 5, "my.wide-not: compiles to 21 nested all/any groups (each negated "
                             "comparison makes one); at most 14 (from 16, durable_rules 2.0.28 "
                             "fails with error 113); split into 16 parts it still does not "
                             "fit: simplify the rule"),
], ids=["in-512", "not-any-20"])
def test_rules_beyond_the_limits_end_in_one_line_and_exit_2(
        tmp_path: Path, text: str, line: int, message: str) -> None:
    directory, path = folder(tmp_path, text)
    recommend = run("recommend", "--rules", str(directory), "--answers", str(EXAMPLE),
                    "--no-audit")
    assert (recommend.returncode, recommend.stdout) == (2, "")
    assert recommend.stderr.splitlines() == [f"error: {path}:{line}: {message}"]
    check = run("rules", "check", "--rules", str(directory))
    assert check.returncode == 2
    finding = message.replace(": ", ": error: ", 1) if "compiles" in message else message
    assert [x for x in check.stdout.splitlines()
            if "is compared with the number" not in x] == [f"{path}:{line}: {finding}"]
    assert "Traceback" not in check.stderr + recommend.stderr


@pytest.mark.slow
@pytest.mark.parametrize("command", ["batch", "whatif"])
def test_batch_and_whatif_refuse_the_policy_at_load(tmp_path: Path, command: str) -> None:
    directory, path = folder(tmp_path, long_list(600))
    lines = tmp_path / "in.jsonl"
    lines.write_text('{"model": "llama-3-8b", "approach": "lora"}\n')
    args = {"batch": ["batch", str(lines), "--out", str(tmp_path / "out.jsonl")],
            "whatif": ["whatif", "--answers", str(EXAMPLE)]}
    result = CliRunner().invoke(cli, [*args[command], "--rules", str(directory)])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: {path}:6: my.long-in: 'in' lists 600 values; at most 500 (durable_rules 2.0.28 "
        "hangs on 512 alternatives of one fact)"]


@pytest.mark.slow
@pytest.mark.parametrize("text", [long_list(500), wide_not("all", 14), wide_not("any", 17)],
                         ids=["in-500", "not-all-14", "not-any-17"])
def test_rules_within_the_limits_build_and_run(tmp_path: Path, text: str) -> None:
    directory, _ = folder(tmp_path, text)
    check = run("rules", "check", "--rules", str(directory))
    assert check.returncode == 0, check.stdout + check.stderr
    recommend = run("recommend", "--rules", str(directory), "--answers", str(EXAMPLE),
                    "--no-audit", "--format", "json")
    assert recommend.returncode == 0, recommend.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("text", "parts", "hours"), [
    (long_list(500), 2, [0, 999, 1000, 1001, 1498, 1499, 1500, 6000]),
    (wide_not("all", 14), 1, [0, 50, 100, 150, 1400, 1500, 6000]),
    (wide_not("any", 17), 16, [0, 50, 100, 150, 1700, 6000]),
], ids=["in-500", "not-all-14", "not-any-17"])
def test_a_long_rule_fires_as_python_evaluates_it(tmp_path: Path, text: str, parts: int,
                                                  hours: list[int]) -> None:
    from engine.answers.model import load_answers
    from engine.decide.engine import load_engine

    directory, _ = folder(tmp_path, text)
    engine = load_engine(directory)
    rule = engine.rulebook.rules[0]
    assert sum(len(rs.definitions) for rs in engine.compiled.rulesets
               if rule.id in rs.rule_ids) == parts
    for value in hours:
        answers = load_answers(EXAMPLE, [f"hours_per_year={value}"], engine.catalog)
        evaluation = engine.evaluate(answers)
        fired = rule.id in evaluation.decision.fired
        assert fired == holds(rule.condition, evaluation.request_facts), value


UNCHECKED = textwrap.dedent("""
    import sys
    import engine.rules.limits as limits
    limits.MAX_LIST_VALUES = 10**6  # a trap the checks do not know about (before when.py reads it)
    import engine.rules.compile as compiler
    from engine.rules.limits import shape
    compiler._split = lambda pattern: [(pattern, shape(pattern))]  # nothing is split
    from engine.cli import main
    sys.argv[0] = "gpu-advisor"
    main()
""")


@pytest.mark.slow
def test_a_trap_nobody_listed_ends_in_one_line_and_exit_2(tmp_path: Path) -> None:
    """With the checks switched off, a 600-value list would make durable_rules build
    forever: the bounded trial build ends it."""
    directory, path = folder(tmp_path, long_list(600))
    result = run("recommend", "--rules", str(directory), "--answers", str(EXAMPLE),
                 "--no-audit", script=UNCHECKED)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        f"error: {path}:2: my.long-in: durable_rules did not finish building the rules within "
        f"{TRIAL_STEP_CPU_S:g} s of CPU time"]


@pytest.mark.slow
def test_facts_too_wide_for_durable_rules_are_refused_naming_the_rule(tmp_path: Path) -> None:
    """One rule sets 250 facts, another reads them all: the request fact would carry more
    than 253 properties (durable_rules 2.0.28 segfaults)."""
    head = ["rules:", "  - id: my.sets", "    description: sets many facts", "    then:"]
    sets = [f"      - set: {{fact: f{i}, value: true}}" for i in range(250)]
    middle = ["    because: many", "    sources: [decide.local]", "  - id: my.reads",
              "    description: reads them", "    when:", "      all:"]
    reads = [f"        - {{fact: f{i}, exists: true}}" for i in range(250)]
    tail = ["    then:", "      - prefer: {decision: deployment, option: local, weight: 1}",
            "    because: all of them", "    sources: [decide.local]"]
    lines = [*head, *sets, *middle, *reads, *tail]
    directory, path = folder(tmp_path, "\n".join(lines) + "\n")
    line = lines.index("  - id: my.reads") + 1
    message = (f"{path}:{line}: my.reads: with the facts this rule reads, request facts carry "
               "253 properties; at most 250 (from 254, durable_rules 2.0.28 crashes)")
    result = run("recommend", "--rules", str(directory), "--answers", str(EXAMPLE),
                 "--no-audit")
    assert (result.returncode, result.stderr.splitlines()) == (2, [f"error: {message}"])
    check = CliRunner().invoke(cli, ["rules", "check", "--rules", str(directory)])
    assert check.exit_code == 2
    assert message.replace(": with", ": error: with", 1) in check.stdout.splitlines()


@pytest.mark.slow
def test_explain_shows_the_parts_of_a_split_rule(tmp_path: Path) -> None:
    directory, _ = folder(tmp_path, long_list(500))
    (tmp_path / "scenarios").mkdir()
    result = CliRunner().invoke(cli, ["rules", "explain", "my.long-in", "--rules",
                                      str(directory), "--scenarios", str(tmp_path / "scenarios")])
    assert result.exit_code == 0, result.output
    assert "compiled (durable_rules JSON, in 2 parts that fire as one rule):" in result.stdout
    assert '"my.long-in#1": {' in result.stdout and '"my.long-in#2": {' in result.stdout
