"""engine.rules.evaluate.Evaluator on real durable_rules: isolation, the session cap, errors that
must not vanish, no background threads, thread safety, and flat memory over 100k runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.answers.model import load_answers
from engine.decide.engine import Engine, load_engine
from engine.errors import EvaluationError
from engine.facts.build import build_facts
from engine.rules.compile import Compiled, CompiledRuleset, compile_rule
from engine.rules.conditions import FactRef, Leaf, Not
from engine.rules.evaluate import Evaluator, Firing
from engine.rules.limits import durable_fact
from engine.rules.load import Rule
from engine.rules.model import RuleModel

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "startup-7b-continuous.yaml"


def make_rule(rule_id: str, cond: Any) -> Rule:
    model = RuleModel.model_validate({
        "id": rule_id, "description": "test", "then": [{"suggest": {"id": "strategy.off-peak"}}],
        "because": "test", "sources": ["cost.strategies"],
    })
    return Rule(model, cond, "test.yaml", 1, 0)


def small_compiled() -> Compiled:
    rules = [
        make_rule("t.big", Leaf("x", "gt", 5)),
        make_rule("t.small", Leaf("x", "lte", 5)),
        make_rule("t.no-y", Not(Leaf("y", "exists", True))),
        make_rule("t.x-above-y", Leaf("x", "gt", FactRef("y"))),
    ]
    ruleset = CompiledRuleset("test_small", "request", 0,
                              {r.id: compile_rule(r) for r in rules}, tuple(r.id for r in rules))
    return Compiled((ruleset,), frozenset(), {"request": frozenset({"x", "y"})})


def signed(name: str, rules: list[Rule]) -> tuple[CompiledRuleset, Evaluator]:
    """A one-ruleset policy over facts x and y whose verdicts are reused by signature."""
    from engine.rules.signature import fields_of, signer_for

    signer = signer_for(r.condition for r in rules)
    ruleset = CompiledRuleset(
        name, "request", 0, {r.id: compile_rule(r) for r in rules}, tuple(r.id for r in rules),
        signer, rule_positions=tuple((r.id, signer.positions(fields_of(r.condition)))
                                     for r in rules))
    return ruleset, Evaluator(Compiled((ruleset,), frozenset(),
                                       {"request": frozenset({"x", "y"})}))


XY_RULES = [("t.big", Leaf("x", "gt", 5)), ("t.small", Leaf("x", "lte", 5)),
            ("t.x-above-y", Leaf("x", "gt", FactRef("y")))]


def fact(fact_id: str = "f", **values: Any) -> dict[str, Any]:
    return {"kind": "request", "fact_id": fact_id, **values}


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


@pytest.fixture(scope="module")
def request_fact(engine: Engine) -> dict[str, Any]:
    """The realistic request fact of the example answers, as durable_rules sees it."""
    answers = load_answers(EXAMPLE, [], engine.catalog)
    values = build_facts(answers, engine.catalog).values
    return {**durable_fact(values, engine.compiled.reads["request"]), "kind": "request",
            "fact_id": "request"}


def run_all(evaluator: Evaluator, rulesets: Sequence[CompiledRuleset],
            facts: list[dict[str, Any]], *, session: bool = False) -> list[Firing]:
    """Every firing of ``rulesets`` on ``facts``; ``session``: durable_rules decides every
    fact (no reuse of remembered verdicts)."""
    run = evaluator.run_session if session else evaluator.run
    return [f for rs in rulesets for f in run(rs, facts)]


def test_small_ruleset_fires_what_holds() -> None:
    compiled = small_compiled()
    ev, rs = Evaluator(compiled), compiled.rulesets[0]
    assert sorted(ev.run(rs, [fact(x=10)])) == [("t.big", "f"), ("t.no-y", "f")]
    assert sorted(ev.run(rs, [fact(x=3, y=1)])) == [("t.small", "f"), ("t.x-above-y", "f")]
    assert sorted(ev.run(rs, [fact("a", x=10), fact("b", x=1, y=9)])) == [
        ("t.big", "a"), ("t.no-y", "a"), ("t.small", "b")]
    assert ev.run(rs, []) == []  # regression: was error 309 (no session to read)


def test_evaluations_never_see_each_others_facts() -> None:
    compiled = small_compiled()
    ev, rs = Evaluator(compiled), compiled.rulesets[0]
    # If the first session's facts leaked, the second run (y present, x absent) would see
    # x = 10 and fire t.big / t.x-above-y, or see "no y" from the first and fire t.no-y.
    assert sorted(ev.run(rs, [fact("first", x=10)])) == [("t.big", "first"),
                                                          ("t.no-y", "first")]
    assert ev.run(rs, [fact("second", y=1)]) == []
    assert sorted(ev.run(rs, [fact("first", x=10)])) == [("t.big", "first"),
                                                          ("t.no-y", "first")]


def test_bundled_evaluations_are_order_independent(engine: Engine,
                                                   request_fact: dict[str, Any]) -> None:
    rulesets = engine.compiled.stratum("request", 1)
    other = {**request_fact, "hours_per_year": 100, "usage_pattern": "intermittent",
             "upfront_capex": False}
    first = sorted(set(run_all(engine.evaluator, rulesets, [request_fact])))
    middle = sorted(set(run_all(engine.evaluator, rulesets, [other])))
    again = sorted(set(run_all(engine.evaluator, rulesets, [request_fact])))
    assert first == again
    assert first != middle
    assert ("tier.no-capex", "request") in middle
    assert ("tier.no-capex", "request") not in first


def test_sessions_are_deleted_past_the_1024_cap() -> None:
    """durable_rules allows 1,024 live sessions per ruleset; each run must delete its own."""
    compiled = small_compiled()
    ev, rs = Evaluator(compiled), compiled.rulesets[0]
    expected = sorted(ev.run(rs, [fact(x=10)]))
    for i in range(1_100):
        assert sorted(ev.run(rs, [fact(x=10)])) == expected, i
    assert ev._fired == {}  # no per-session bookkeeping left behind


class _FailingEvaluator(Evaluator):
    def _recorder(self, rule_id: str) -> Callable[[Any], None]:
        def act(c: Any) -> None:
            raise RuntimeError(f"boom in {rule_id}")

        return act


def test_exception_in_action_surfaces_as_evaluation_error() -> None:
    compiled = small_compiled()
    ev, rs = _FailingEvaluator(compiled), compiled.rulesets[0]
    with pytest.raises(EvaluationError, match=r"rule action failed in test_small: .*boom in t\."):
        ev.run(rs, [fact(x=10)])
    # The failed session is gone: the next one fails afresh, not with stale state...
    with pytest.raises(EvaluationError, match="boom"):
        ev.run(rs, [fact(x=10)])
    # ...and a fact no rule fires on still evaluates cleanly.
    assert ev.run(rs, [fact(y=1)]) == []


class _InterruptedEvaluator(Evaluator):
    """Ctrl-C (or SIGTERM) arrives while durable_rules runs an action, once."""

    signum = signal.SIGINT

    def _recorder(self, rule_id: str) -> Callable[[Any], None]:
        record = super()._recorder(rule_id)

        def act(c: Any) -> None:
            if not self.sent:
                self.sent = True
                signal.raise_signal(self.signum)  # its handler runs at the next bytecode
            record(c)

        return act

    sent = False


def test_ctrl_c_in_an_action_interrupts_instead_of_failing_the_evaluation() -> None:
    """durable_rules turns any exception an action raises, KeyboardInterrupt included, into
    text in the session's state: the signal is held while it runs and delivered after, so
    the interrupt reaches the caller, and the evaluator is fine afterwards."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    try:
        compiled = small_compiled()
        ev, rs = _InterruptedEvaluator(compiled), compiled.rulesets[0]
        with pytest.raises(KeyboardInterrupt):
            ev.run(rs, [fact(x=10)], checked=True)
        assert ev.sent
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # as it was
        assert {r for r, _ in ev.run(rs, [fact(x=10)])} == {"t.big", "t.no-y"}
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_termination_handler_runs_after_the_session() -> None:
    """A handler of SIGTERM (batch raises from it) runs once, after durable_rules is done;
    an ignored signal stays ignored throughout."""
    seen: list[int] = []

    def terminated(signum: int, frame: Any) -> None:
        seen.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        compiled = small_compiled()
        ev, rs = _InterruptedEvaluator(compiled), compiled.rulesets[0]
        ev.signum = signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):
            ev.run(rs, [fact(x=10)])
        assert seen == [signal.SIGTERM] and signal.getsignal(signal.SIGTERM) is terminated
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        ev.sent = False
        assert {r for r, _ in ev.run(rs, [fact(x=10)])} == {"t.big", "t.no-y"}
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.mark.parametrize("value", [1e-05, 1e20, -3e-7, float("nan"), float("inf")])
def test_exponent_or_non_finite_float_in_fact_raises(value: float) -> None:
    compiled = small_compiled()
    ev = Evaluator(compiled)
    with pytest.raises(EvaluationError, match="'x'"):
        ev.run(compiled.rulesets[0], [fact(x=value)])


def test_non_scalar_fact_value_raises() -> None:
    compiled = small_compiled()
    with pytest.raises(EvaluationError, match="not a scalar"):
        Evaluator(compiled).run(compiled.rulesets[0], [fact(x=[1, 2])])


def test_boundary_floats_are_accepted() -> None:
    compiled = small_compiled()
    ev = Evaluator(compiled)
    assert sorted(ev.run(compiled.rulesets[0], [fact(x=0.0001)])) == [("t.no-y", "f"),
                                                                        ("t.small", "f")]
    assert sorted(ev.run(compiled.rulesets[0], [fact(x=1e14 + 0.5)])) == [("t.big", "f"),
                                                                           ("t.no-y", "f")]


def test_no_background_threads(request_fact: dict[str, Any]) -> None:
    before = threading.active_count()
    engine = load_engine()
    compiled = small_compiled()
    ev = Evaluator(compiled)
    ev.run(compiled.rulesets[0], [fact(x=10)])
    run_all(engine.evaluator, engine.compiled.stratum("request", 1), [request_fact])
    # Other libraries used elsewhere in the suite (dask) may keep helper threads of their
    # own; what must never appear is a durable_rules dispatcher or timer thread.
    ours = [t for t in threading.enumerate()
            if t is not threading.main_thread() and not t.name.startswith("Dask")]
    assert ours == [], ours
    assert not [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    assert threading.active_count() <= before


def test_thread_safety_four_threads(engine: Engine, request_fact: dict[str, Any]) -> None:
    rulesets = engine.compiled.stratum("request", 1)
    facts = [
        request_fact,
        {**request_fact, "hours_per_year": 100, "usage_pattern": "intermittent"},
        {**request_fact, "data_residency": "on-premises", "budget_usd": 50_000},
    ]
    expected = [sorted(run_all(engine.evaluator, rulesets, [f], session=True)) for f in facts]
    assert len({tuple(e) for e in expected}) == 3
    errors: list[str] = []

    def worker(offset: int) -> None:
        try:
            for i in range(300):
                k = (i + offset) % len(facts)
                # odd threads hit durable_rules every time, even ones the remembered verdicts
                got = sorted(run_all(engine.evaluator, rulesets, [facts[k]],
                                     session=offset % 2 == 1))
                if got != expected[k]:
                    errors.append(f"thread {offset} run {i}: {got} != {expected[k]}")
                    return
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(f"thread {offset}: {exc!r}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert errors == []


def _rss_mb() -> float:
    with Path("/proc/self/statm").open() as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.slow
def test_memory_flat_over_25k_evaluations(engine: Engine,
                                           request_fact: dict[str, Any]) -> None:
    """25,000 evaluations of the bundled request rules in one process (each on one of the
    request rulesets in turn, each in its own session): RSS grows < 20 MB between the
    5,000th and the 25,000th (a leaking session would cost ~85 KB each: 1.7 GB; the test
    finds a leak of 1 KB a session)."""
    rulesets = engine.compiled.stratum("request", 1)
    expected = sorted(run_all(engine.evaluator, rulesets, [request_fact], session=True))
    assert len(expected) >= 10  # the test means something: many rules fire
    start = time.perf_counter()
    rss_5k = 0.0
    for i in range(1, 25_001):
        engine.evaluator.run_session(rulesets[i % len(rulesets)], [request_fact])
        if i == 5_000:
            rss_5k = _rss_mb()
            assert sorted(run_all(engine.evaluator, rulesets, [request_fact],
                                  session=True)) == expected
    rss_25k = _rss_mb()
    elapsed = time.perf_counter() - start
    print(f"25k evaluations over {len(rulesets)} rulesets: {elapsed:.1f} s; "
          f"RSS {rss_5k:.1f} MB at 5k, {rss_25k:.1f} MB at 25k")
    assert sorted(run_all(engine.evaluator, rulesets, [request_fact], session=True)) == expected
    assert rss_25k - rss_5k < 20, (rss_5k, rss_25k)


# --------------------------------------------------------------------------------------------
# Remembered verdicts (engine.rules.signature): durable_rules decides each fact class once


def _variants(engine: Engine) -> list[Any]:
    """Every second scenario's answers (in file order: each decided twice on a fresh
    catalog, the slowest check of the suite), and each example across hours and budgets."""
    from engine.answers.model import validate_answers
    from engine.tools.scenarios import load_scenario, scenario_paths

    out = [validate_answers(load_scenario(p).answers, engine.catalog)
           for p in scenario_paths([REPO / "tests" / "scenarios"])[::2]]
    for path in sorted((REPO / "examples").iterdir()):
        base = load_answers(path, [], engine.catalog).model_dump(mode="json")
        base.update(training_tokens_b=None, runs_per_year=None)  # the work given as hours
        for hours in (0, 800, 8760):  # none, a modest year, every hour
            for budget in (0, 1_000_000):  # nothing for compute, a large production budget
                out.append(validate_answers({**base, "hours_per_year": hours,
                                             "budget_usd": budget}, engine.catalog))
    return out


def _without_id(engine: Engine, answers: Any) -> str:
    return engine.recommend(answers, decision_id="same").to_json()


@pytest.mark.slow
@pytest.mark.parametrize("part", range(4))
def test_remembered_verdicts_give_the_same_decisions_as_durable_every_time(
        engine: Engine, part: int) -> None:
    """Every second scenario, and the examples over hours × budgets: the engine reusing
    verdicts by signature and remembering figures across requests decides byte for byte like
    one that asks durable_rules about every fact on a catalog whose memos are empty (its
    own, for each request), whatever came before (in four parts, every eighth variant each,
    so that parallel workers share them: half the variants, the same half every run)."""
    asks_every_fact = Evaluator(engine.compiled, memo=False)

    def fresh(answers: Any) -> str:  # the same catalog, its memos empty (not copied over)
        return _without_id(Engine(replace(engine.catalog), engine.rulebook, engine.compiled,
                                  asks_every_fact), answers)

    remembering = Engine.build(engine.catalog, engine.rulebook)
    every = _variants(engine)
    assert len(every) > 70
    variants = every[part::8]
    expected = [fresh(answers) for answers in variants]
    for answers, want in zip(variants, expected, strict=True):
        assert _without_id(remembering, answers) == want
    for answers, want in zip(reversed(variants), reversed(expected), strict=True):  # memo only
        assert _without_id(remembering, answers) == want


def test_a_seen_fact_class_needs_no_session(engine: Engine) -> None:
    remembering = Engine.build(engine.catalog, engine.rulebook)
    evaluator = remembering.evaluator
    sessions: list[int] = []
    session = evaluator.run_session

    def counting(ruleset: CompiledRuleset, facts: Any, **kwargs: Any) -> list[Firing]:
        facts = list(facts)
        sessions.append(len(facts))
        return session(ruleset, facts, **kwargs)

    evaluator.run_session = counting  # type: ignore[method-assign]
    answers = load_answers(EXAMPLE, [], engine.catalog)
    first = _without_id(remembering, answers)
    assert sessions, "the first evaluation asks durable_rules"
    # 40-odd candidates share a handful of classes: fewer facts asserted than evaluated
    asserted = sum(sessions)
    sessions.clear()
    assert _without_id(remembering, answers) == first
    assert sessions == []
    # more hours: a different class for the rules about hours, so durable_rules is asked
    _without_id(remembering, answers.model_copy(update={"hours_per_year": 100}))
    assert 0 < sum(sessions) <= asserted


def test_durable_rules_sees_only_the_facts_that_hold_a_class_no_fact_before_holds() -> None:
    """Four facts, four signatures, but each rule tells apart only two classes: durable_rules
    decides the first two facts, and the other two follow rule by rule, as it would say."""
    rules = [("t.x-big", Leaf("x", "gt", 5)), ("t.y-big", Leaf("y", "gt", 5))]
    ruleset, ev = signed("test_cover", [make_rule(i, c) for i, c in rules])
    asserted: list[str] = []
    session = ev.run_session

    def counting(rs: CompiledRuleset, facts: Any, **kwargs: Any) -> list[Firing]:
        facts = list(facts)
        asserted.extend(str((f["x"], f["y"])) for f in facts)
        return session(rs, facts, **kwargs)

    ev.run_session = counting  # type: ignore[method-assign]
    facts = [fact("a", x=1, y=1), fact("b", x=9, y=9), fact("c", x=1, y=9),
             fact("d", x=9, y=1), fact("e", x=2, y=3)]
    got = sorted(ev.run(ruleset, facts))
    assert asserted == ["(1, 1)", "(9, 9)"]
    assert got == sorted(session(ruleset, facts)) == [
        ("t.x-big", "b"), ("t.x-big", "d"), ("t.y-big", "b"), ("t.y-big", "c")]


def test_remembered_verdicts_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.memo

    monkeypatch.setattr(engine.memo, "LIMIT", 3)
    ruleset, ev = signed("test_bounded", [make_rule(i, c) for i, c in XY_RULES])
    cases = [(x, y) for x in (1, 5, 6, 9) for y in (0, 5, 7)]
    for x, y in cases * 2:
        got = {r for r, _ in ev.run(ruleset, [fact(x=x, y=y)])}
        expected = {r for r, _ in ev.run_session(ruleset, [fact(x=x, y=y)])}
        assert got == expected, (x, y)
        assert max(memo_sizes(ev, "test_bounded")) <= 3


def test_session_reads_fact_ids_that_need_escaping() -> None:
    compiled = small_compiled()
    ev, rs = Evaluator(compiled, memo=False), compiled.rulesets[0]
    odd = 'a "quoted", \\ back\\slashed "fact_id": "x" id é'
    assert sorted(ev.run_session(rs, [fact(odd, x=10), fact("b", x=1)])) == [
        ("t.big", odd), ("t.no-y", odd), ("t.no-y", "b"), ("t.small", "b")]


def test_remembered_verdicts_are_thread_safe_while_evicting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Four threads, a memo of 3 signatures and 12 fact classes: constant eviction, and
    every answer still what durable_rules says."""
    import engine.memo

    monkeypatch.setattr(engine.memo, "LIMIT", 3)
    ruleset, ev = signed("test_threads", [make_rule(i, c) for i, c in XY_RULES])
    cases = [(x, y) for x in (1, 5, 6, 9) for y in (0, 5, 7)]
    expected = {case: sorted(ev.run_session(ruleset, [fact(x=case[0], y=case[1])]))
                for case in cases}
    errors: list[str] = []

    def worker(offset: int) -> None:
        try:
            for i in range(400):
                x, y = cases[(i * 7 + offset) % len(cases)]
                got = sorted(ev.run(ruleset, [fact(x=x, y=y)]))
                if got != expected[(x, y)]:
                    errors.append(f"{x},{y}: {got}")
                    return
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    assert max(memo_sizes(ev, "test_threads")) <= 3


def memo_sizes(ev: Evaluator, name: str) -> list[int]:
    """Entries of each rule's verdict memo in one ruleset."""
    return [len(seen) for _, _, seen in ev._rule_verdicts[name]]


PART_RULES = [("t.w-a", Leaf("w", "eq", "a")), ("t.x-big", Leaf("x", "gt", 5)),
              ("t.y-small", Leaf("y", "lte", 3)), ("t.y-above-x", Leaf("y", "gt", FactRef("x"))),
              ("t.z-known", Leaf("z", "exists", True))]
_PARTS = signed("test_parts", [make_rule(i, c) for i, c in PART_RULES])


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=st.sampled_from(["a", "b"]),
       parts=st.lists(st.fixed_dictionaries({"x": st.integers(0, 10)},
                                            optional={"z": st.just(1)}), min_size=1, max_size=3),
       rows=st.lists(st.tuples(st.integers(0, 2), st.one_of(st.none(), st.integers(0, 10))),
                     min_size=1, max_size=5))
def test_remembered_verdicts_are_what_durable_rules_decides(
        w: str, parts: list[dict[str, Any]], rows: list[tuple[int, int | None]]) -> None:
    """Facts that share parts, with a comparison across fields, through one evaluator that
    remembers verdicts across examples: every verdict is durable_rules' own."""
    ruleset, ev = _PARTS
    facts = []
    for i, (which, y) in enumerate(rows):
        part = parts[which % len(parts)]
        facts.append({"kind": "request", "w": w, **part, **({} if y is None else {"y": y}),
                      "fact_id": f"f{i}"})
    got = ev.run(ruleset, facts, checked=True)
    assert sorted(got) == sorted(ev.run_session(ruleset, facts, checked=True))


_COLLIDING_IDS = """
import os, sys
sys.path.insert(0, "tests")
from test_evaluate import fact, small_compiled
from engine.errors import EvaluationError
from engine.rules import evaluate
from engine.rules.evaluate import Evaluator

compiled = small_compiled()
ev, rs = Evaluator(compiled, memo=False), compiled.rulesets[0]
facts = [fact("a", x=10), fact("b", x=1)]
print(sorted(ev.run_session(rs, facts)))
evaluate.fact_ids = lambda count: ["f6059", "f264602"]
try:
    ev.run_session(rs, facts)
except EvaluationError as exc:
    print(exc)
sys.stdout.flush()
os._exit(0)  # a refused session can leave the C core to abort at teardown
"""


def test_distinct_facts_with_colliding_id_hashes_are_refused_by_durable_rules() -> None:
    """The trap ``engine.rules.fact_ids`` avoids: durable_rules compares the 32-bit hashes
    of fact ids only, so a session holding two ids of one hash is refused ("observed");
    run in a child, as a refused session may later crash the process."""
    from engine.rules.fact_ids import fnv1a_32

    assert fnv1a_32("f6059") == fnv1a_32("f264602")
    child = subprocess.run([sys.executable, "-c", _COLLIDING_IDS], cwd=REPO,
                           capture_output=True, text=True, check=False)
    lines = child.stdout.splitlines()
    assert lines[0] == str([("t.big", "a"), ("t.no-y", "a"), ("t.no-y", "b"),
                            ("t.small", "b")]), child.stderr
    assert lines[1] == "durable_rules refused the facts of test_small (result 2)"


def test_fact_ids_never_share_a_hash() -> None:
    from engine.rules.fact_ids import fact_ids, fnv1a_32

    ids = fact_ids(300_000)
    assert len({fnv1a_32(i) for i in ids}) == len(ids) == 300_000
    assert fact_ids(5) == ids[:5] == ["0", "1", "2", "3", "4"]
    # counting alone would do up to here, not beyond: "797186" shares the hash of "40189"
    assert fnv1a_32("40189") == fnv1a_32("797186")
