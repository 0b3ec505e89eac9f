"""The decision steps one at a time, on the real rulebook, catalog and durable_rules engine.

Axis decisions (engine.decide.decision: exclusion, then summed weights, ties by declared
order), candidate scoring and the hardware section (engine.decide.pick), the cloud side and
the break-even (engine.decide.sides), and the candidates built for a sizing
(engine.decide.candidates). Scenario-based tests rebuild each step from what the engine
recorded (its firings, its facts) and check it against the engine's own decision.
"""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import decided
from helpers.axes import made_axis, why
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.answers.model import Answers, validate_answers
from engine.catalog.load import Catalog
from engine.decide.candidates import (
    SHARE_SUFFIX,
    PricedCandidate,
    build_candidates,
    for_share,
    market,
    with_ratios,
)
from engine.decide.decision import (
    AxisDecision,
    decide_axes,
    first_exclusions,
    rank_axes,
    text_of,
)
from engine.decide.engine import Engine, Evaluation, load_engine
from engine.decide.pick import (
    alternatives,
    cheaper,
    hardware,
    owned_beside,
    reason_against,
    score_candidates,
)
from engine.decide.sides import Scored, best, break_even_line, resolve_cloud
from engine.estimates.memory import usable_gib
from engine.facts.build import Sizing, build_facts, methods_allowed, size
from engine.resources import bundled_dir
from engine.rules.load import Rulebook, load_rulebook
from engine.tools.scenarios import scenario_paths

SCENARIOS = {p.stem: p for p in scenario_paths([Path(__file__).parent / "scenarios"])}
BOOK = load_engine().rulebook
DECLARED = BOOK.decisions
FIELDS = BOOK.fields
"""Axis → the configuration fact it constrains, as rules/decisions.yaml declares it."""
KINDS = DECLARED["cloud_kind"]
PRICINGS = DECLARED["pricing"]
"""The options of the cloud axes, as rules/decisions.yaml declares them."""
SOURCE = "decide.local"
"""A real knowledge id, for the test rules' ``sources``."""


# -- a rulebook of test rules, one per effect ------------------------------------------------
def _rule(rule_id: str, effect: str, *, because: str = "Test.", priority: int = 0,
          when: str | None = None) -> str:
    lines = [f"  - id: {rule_id}", "    description: A test rule.", f"    priority: {priority}"]
    if when is not None:
        lines.append(f"    when: {when}")
    lines += ["    then:", f"      - {effect}", f"    because: {because}",
              f"    sources: [{SOURCE}]"]
    return "\n".join(lines) + "\n"


WEIGHTS = {"w1": 1, "w2-5": 2.5, "w100": 100}
"""Prefer weights (exact in binary, so every order of summing gives the same float)."""
AVOID_WEIGHT = 3


def _axis_rules(decisions: Mapping[str, Sequence[str]]) -> str:
    """For every option of every axis: prefer it at each weight, avoid it, exclude it."""
    out = []
    for axis, options in decisions.items():
        for option in options:
            where = f"decision: {axis}, option: {option}"
            out += [_rule(f"p.{axis}.{option}.{name}", f"prefer: {{{where}, weight: {w}}}")
                    for name, w in WEIGHTS.items()]
            out.append(_rule(f"a.{axis}.{option}", f"avoid: {{{where}, weight: {AVOID_WEIGHT}}}"))
            out.append(_rule(f"x.{axis}.{option}", f"exclude: {{{where}}}"))
    out += [
        # the same weight as p.method.qlora.w2-5 but evaluated first
        _rule("first.method.qlora", "prefer: {decision: method, option: qlora, weight: 2.5}",
              priority=50),
        _rule("n.info", "warn: {id: over-budget, severity: info}"),
        _rule("n.warning", "warn: {id: peft-quality, severity: warning}"),
        _rule("n.critical", "warn: {id: nothing-fits, severity: critical}"),
        _rule("n.critical-too", "warn: {id: nothing-fits, severity: critical}"),
        _rule("s.off-peak", "suggest: {id: strategy.off-peak}"),
        _rule("s.off-peak-too", "suggest: {id: strategy.off-peak}"),
        _rule("t.filled", "prefer: {decision: sharing, option: fractional, weight: 1}",
              because="'{model_name} shares well.'"),
    ]
    return "rules:\n" + "".join(out)


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Rulebook:
    """The bundled decision axes with the test rules above, through the real loader."""
    path = tmp_path_factory.mktemp("rules") / "steps.yaml"
    path.write_text(_axis_rules(load_engine().rulebook.decisions), encoding="utf-8")
    return load_rulebook(path, catalog)


def _fired(*rule_ids: str) -> list[tuple[str, str]]:
    return [(rule_id, "request") for rule_id in rule_ids]


def _decide(book: Rulebook, *rule_ids: str) -> dict[str, AxisDecision]:
    axes, _, _ = decide_axes(book, _fired(*rule_ids), {"model_name": "Llama"})
    return axes


def _ranking(axis: AxisDecision) -> list[tuple[str, float, bool]]:
    return [(o.option, o.score, o.excluded) for o in axis.ranking]


# -- axis decisions -------------------------------------------------------------------------
def test_with_no_rule_fired_each_axis_takes_its_first_declared_option(book: Rulebook) -> None:
    axes = _decide(book)
    assert set(axes) == set(book.decisions)
    for axis, options in book.decisions.items():
        assert axes[axis].choice == options[0]
        assert _ranking(axes[axis]) == [(o, 0.0, False) for o in options]


def test_an_excluded_option_never_wins_even_with_the_highest_weight(book: Rulebook) -> None:
    deployment = _decide(book, "p.deployment.local.w100", "x.deployment.local")["deployment"]
    assert deployment.choice == "cloud"
    assert _ranking(deployment) == [("cloud", 0.0, False), ("hybrid", 0.0, False),
                                    ("local", 100.0, True)]
    local = deployment.ranking[-1]
    assert [(r.rule, r.effect, r.weight) for r in local.reasons] == [
        ("p.deployment.local.w100", "prefer", 100.0), ("x.deployment.local", "exclude", 0.0)]


def test_a_tie_goes_to_the_first_declared_option(book: Rulebook) -> None:
    method = _decide(book, "p.method.qlora.w2-5", "p.method.lora.w2-5")["method"]
    assert method.choice == "lora"
    assert _ranking(method) == [("lora", 2.5, False), ("qlora", 2.5, False),
                                ("full", 0.0, False)]


def test_a_tie_ignores_which_rule_ran_first(book: Rulebook) -> None:
    """Priority orders the reasons, never the options: qlora's rule runs first, lora wins."""
    assert book.precedence["first.method.qlora"] < book.precedence["p.method.lora.w2-5"]
    method = _decide(book, "first.method.qlora", "p.method.lora.w2-5")["method"]
    assert method.choice == "lora"


def test_weights_of_different_rules_add_up(book: Rulebook) -> None:
    deployment = _decide(book, "p.deployment.hybrid.w1", "p.deployment.hybrid.w2-5",
                         "p.deployment.local.w2-5")["deployment"]
    assert deployment.choice == "hybrid"
    assert _ranking(deployment)[:2] == [("hybrid", 3.5, False), ("local", 2.5, False)]


def test_avoid_puts_an_option_below_the_untouched_ones(book: Rulebook) -> None:
    deployment = _decide(book, "a.deployment.cloud")["deployment"]
    assert deployment.choice == "local"
    assert _ranking(deployment) == [("local", 0.0, False), ("hybrid", 0.0, False),
                                    ("cloud", -3.0, False)]


def test_every_option_excluded_leaves_the_axis_undecided(book: Rulebook) -> None:
    sharing = _decide(book, "x.sharing.dedicated", "x.sharing.fractional",
                      "p.sharing.fractional.w100")["sharing"]
    assert sharing.choice is None
    assert _ranking(sharing) == [("fractional", 100.0, True), ("dedicated", 0.0, True)]


def test_a_reason_carries_the_because_text_filled_from_the_facts(book: Rulebook) -> None:
    sharing = _decide(book, "t.filled")["sharing"]
    assert sharing.choice == "fractional"
    (reason,) = sharing.ranking[0].reasons
    assert (reason.rule, reason.text, reason.sources) == ("t.filled", "Llama shares well.",
                                                          [SOURCE])


def test_warnings_critical_first_each_once_per_rule_strategies_once(book: Rulebook) -> None:
    firings = _fired("n.info", "n.warning", "n.critical", "n.critical-too", "n.critical",
                     "s.off-peak", "s.off-peak-too")
    _, warnings, strategies = decide_axes(book, firings, {})
    assert [(w.severity, w.id, w.rule) for w in warnings] == [
        ("critical", "nothing-fits", "n.critical"), ("critical", "nothing-fits", "n.critical-too"),
        ("warning", "peft-quality", "n.warning"), ("info", "over-budget", "n.info")]
    assert [(s.id, s.rule) for s in strategies] == [("strategy.off-peak", "s.off-peak")]


def _expected_choice(book: Rulebook, fired: Iterable[str], axis: str) -> str | None:
    """What the decision must be, computed from the rules' effects directly."""
    options = book.decisions[axis]
    score = dict.fromkeys(options, 0.0)
    closed: set[str] = set()
    for rule_id in set(fired):
        for effect in book.rule(rule_id).model.then:
            if getattr(effect.body, "decision", None) != axis:
                continue
            if effect.kind == "exclude":
                closed.add(effect.body.option)
            else:
                sign = 1 if effect.kind == "prefer" else -1
                score[effect.body.option] += sign * effect.body.weight
    open_options = [o for o in options if o not in closed]
    if not open_options:
        return None
    top = max(score[o] for o in open_options)
    return next(o for o in open_options if score[o] == top)


@pytest.mark.slow
def test_every_axis_follows_exclusion_then_weights_then_declared_order(book: Rulebook) -> None:
    rule_ids = [r.id for r in book.rules]

    @settings(max_examples=150, deadline=None)
    @given(fired=st.lists(st.sampled_from(rule_ids), max_size=40), data=st.data())
    def check(fired: list[str], data: st.DataObject) -> None:
        axes = _decide(book, *fired)
        shuffled = _decide(book, *data.draw(st.permutations(fired)), *fired[:3])
        for axis, options in book.decisions.items():
            decided = axes[axis]
            assert decided.choice == _expected_choice(book, fired, axis), axis
            assert decided == shuffled[axis]  # firing order and repeats change nothing
            ranking = decided.ranking
            assert sorted(o.option for o in ranking) == sorted(options)
            flags = [o.excluded for o in ranking]
            assert flags == sorted(flags)  # every excluded option after every open one
            open_ = [(-o.score, options.index(o.option)) for o in ranking if not o.excluded]
            assert open_ == sorted(open_)
            # what the pipeline reads between phases: the same ranking, without reasons
            ranked = rank_axes(book, _fired(*fired))[axis]
            assert ranked == decided.model_copy(update={"ranking": [
                o.model_copy(update={"reasons": []}) for o in ranking]}), axis

    check()


# -- through durable_rules ------------------------------------------------------------------
ENGINE_RULES = (
    "rules:\n"
    + _rule("t.own", "prefer: {decision: deployment, option: local, weight: 100}",
            when="{all: [{fact: workload, eq: fine-tune}]}", because="Owning wins.")
    + _rule("t.no-owning", "exclude: {decision: deployment, option: local}",
            when="{all: [{fact: upfront_capex, is: false}]}", because="No money up front.")
)


@pytest.fixture(scope="module")
def small_engine(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Engine:
    """The bundled hardware rules and two deployment rules, compiled to durable_rules."""
    directory = tmp_path_factory.mktemp("engine-rules")
    shutil.copy(bundled_dir("rules") / "hardware.yaml", directory)
    (directory / "steps.yaml").write_text(ENGINE_RULES, encoding="utf-8")
    return Engine.build(catalog, load_rulebook(directory, catalog))


@pytest.mark.slow
@pytest.mark.parametrize(("upfront_capex", "deployment", "where"),
                         [(True, "local", "local"), (False, "cloud", "cloud")])
def test_through_durable_rules_an_exclusion_outweighs_any_preference(
        small_engine: Engine, catalog: Catalog, upfront_capex: bool, deployment: str,
        where: str) -> None:
    answers = validate_answers({"model": "llama-3.1-8b", "hours_per_year": 2000,
                                "upfront_capex": upfront_capex}, catalog)
    decision = small_engine.recommend(answers)
    fired = {rule for rule, facts in decision.fired.items() if "request" in facts}
    assert fired == ({"t.own"} if upfront_capex else {"t.own", "t.no-owning"})
    assert decision.decisions["deployment"].choice == deployment
    local = next(o for o in decision.decisions["deployment"].ranking if o.option == "local")
    assert (local.score, local.excluded) == (100.0, not upfront_capex)
    assert decision.hardware.choice is not None
    assert decision.hardware.choice.where == where


# -- the steps of a real recommendation -----------------------------------------------------
@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


@dataclass(frozen=True)
class Steps:
    """A scenario's recommendation and its steps rebuilt from what the engine recorded."""

    answers: Answers
    evaluation: Evaluation
    sizing: Sizing
    candidates: list[PricedCandidate]
    scored: list[Scored]

    @property
    def decisions(self) -> dict[str, AxisDecision]:
        return self.evaluation.decision.decisions

    def ranked(self, axis: str) -> list[str]:
        """The open options of an axis, best first (what the engine resolves the cloud by)."""
        return [o.option for o in self.decisions[axis].ranking if not o.excluded]

    def scored_by_id(self, candidate_id: str) -> Scored:
        found = next((s for s in self.scored if s.id == candidate_id), None)
        if found is None and candidate_id.endswith(SHARE_SUFFIX):
            # the peaks beside the team's own GPUs: the rented configuration priced again
            # for the share of the work they leave, as the engine does
            whole = self.scored_by_id(candidate_id.removesuffix(SHARE_SUFFIX))
            facts = self.evaluation.request_facts
            share = float(facts["peaks_owned_share"])
            rest = for_share(load_engine().catalog, self.sizing, whole.candidate, 1 - share,
                             int(facts.get("peaks_rented_jobs") or 0))
            assert rest is not None
            return Scored(rest, whole.score, whole.excluded, whole.rules)
        assert found is not None, candidate_id
        return found


def candidates_for(engine: Engine, answers: Answers,
                   decisions: Mapping[str, AxisDecision]) -> tuple[Sizing,
                                                                  list[PricedCandidate]]:
    """The candidates of the methods the decisions left open (as the engine builds them)."""
    facts = build_facts(answers, engine.catalog)
    open_methods = [o.option for o in decisions["method"].ranking if not o.excluded]
    methods = methods_allowed(decisions["approach"].choice, open_methods, answers.workload)
    sizing = size(facts, answers, engine.catalog, methods)
    return sizing, build_candidates(engine.catalog, sizing)


@cache
def steps_of(stem: str) -> Steps:
    engine = load_engine()
    evaluation = decided.evaluation_of(SCENARIOS[stem])
    answers = decided.answers_of(SCENARIOS[stem])
    decision = evaluation.decision
    sizing, candidates = candidates_for(engine, answers, decision.decisions)
    seen = {f["candidate_id"]: f for f in evaluation.candidate_facts}
    assert [c.id for c in candidates] == list(seen)  # the same configurations, in order
    for cand in candidates:
        cand.facts.update(seen[cand.id])  # shared request values and cost ratios
    fired = [(rule, fact) for rule, facts in evaluation.fired.items() for fact in facts
             if fact != "request"]
    scored = score_candidates(engine.rulebook, fired, candidates)
    return Steps(answers, evaluation, sizing, candidates, scored)


@pytest.mark.slow
@pytest.mark.parametrize("stem", sorted(SCENARIOS))
def test_the_steps_rebuild_the_engines_decision(engine: Engine, stem: str) -> None:
    """decide_axes on the engine's request firings gives its decisions (before revision);
    hardware() on its candidate firings gives its hardware section exactly (but for what a
    lighter method would cost on the team's own GPUs, which the engine adds to their why-not
    by evaluating the request again)."""
    steps = steps_of(stem)
    decision = steps.evaluation.decision
    request = [(rule, "request") for rule, facts in decision.fired.items() if "request" in facts]
    axes, warnings, _ = decide_axes(engine.rulebook, request, steps.evaluation.request_facts)
    choice = decision.hardware.choice
    pick = steps.scored_by_id(choice.id) if choice else None
    for name, axis in decision.decisions.items():
        if axis.follows is not None:  # chosen with the hardware: the pick's value
            assert axis.choice == (pick.facts[axis.follows] if pick else None), name
            assert ({(o.option, o.excluded) for o in axes[name].ranking}
                    == {(o.option, o.excluded) for o in axis.ranking}), name
            continue
        assert axes[name].choice == (axis.revised_from or axis.choice), name
        assert axes[name].ranking == axis.ranking, name
    assert all(w in decision.warnings for w in warnings)
    policy = engine.catalog.policy
    section = hardware(pick, steps.scored, decision.decisions, engine.rulebook,
                       margin=policy.close_call_margin.value,
                       least_usd=policy.thresholds["close_call_least_usd_year"].value,
                       reach=policy.thresholds["far_over_budget_ratio"].value,
                       owned_usd=owned_beside(pick, steps.evaluation.request_facts))
    said = decision.hardware.owned_why_not
    if said != section.owned_why_not:  # the engine adds what a lighter method costs on them
        assert section.owned_why_not is not None and said is not None
        assert said.startswith(section.owned_why_not.rstrip(".") + "; with "), said
        section = section.model_copy(update={"owned_why_not": said})
    assert section == decision.hardware


# -- candidate scoring ----------------------------------------------------------------------
def _candidate_rules(engine: Engine) -> list[str]:
    return [r.id for r in engine.rulebook.rules if r.match == "candidate"]


def test_a_candidate_score_sums_each_fired_rule_once(engine: Engine) -> None:
    book = engine.rulebook
    candidates = steps_of("03-intermittent-70b").candidates
    pair = st.tuples(st.sampled_from(_candidate_rules(engine)),
                     st.sampled_from([c.id for c in candidates[:12]]))

    @settings(max_examples=60, deadline=None)
    @given(pairs=st.lists(pair, max_size=40))
    def check(pairs: list[tuple[str, str]]) -> None:
        scored = score_candidates(book, [*pairs, *pairs[:5]], candidates)
        assert [s.id for s in scored] == [c.id for c in candidates]
        for entry in scored:
            on_it = sorted({r for r, c in pairs if c == entry.id},
                           key=book.precedence.__getitem__)
            assert [r.id for r in entry.rules] == on_it
            assert entry.excluded == any(book.rule(r).scoring[0] for r in on_it)
            expected = sum(d for r in on_it for d in book.rule(r).scoring[1])
            assert entry.score == pytest.approx(expected, abs=1e-9)
        again = score_candidates(book, list(reversed(pairs)), candidates)
        assert [(s.score, s.excluded) for s in again] == [(s.score, s.excluded)
                                                          for s in scored]

    check()


def test_an_excluding_rule_excludes_whatever_the_score(engine: Engine) -> None:
    book = engine.rulebook
    steps = steps_of("03-intermittent-70b")
    target = steps.candidates[0].id
    gains = [r.id for r in book.rules if r.match == "candidate" and not r.scoring[0]
             and sum(r.scoring[1]) > 0]
    fired = [(r, target) for r in [*gains, "hardware.does-not-fit"]]
    (entry, *_) = score_candidates(book, fired, steps.candidates)
    assert entry.score > 0 and entry.excluded
    assert best(score_candidates(book, fired, steps.candidates[:1])) is None


# -- the hardware section -------------------------------------------------------------------
def _group(entry: Scored) -> tuple[str, str]:
    """A GPU and where it is: rented, to buy, the team's own, or more added to the team's own
    (each a place of its own)."""
    f = entry.facts
    return f["gpu"], ("yours" if f.get("is_owned") else "yours+" if f.get("owned_added")
                      else f["where"])


def _cost(entry: Scored) -> float:
    return float(entry.facts["cost_usd_year"])


@pytest.mark.slow
@pytest.mark.parametrize("stem", sorted(SCENARIOS))
def test_alternatives_one_per_gpu_and_place_with_the_cheapest_and_the_other_side(
        stem: str) -> None:
    steps = steps_of(stem)
    decision = steps.evaluation.decision
    pick = steps.scored_by_id(decision.hardware.choice.id) if decision.hardware.choice else None
    shown = alternatives(pick, steps.scored)
    eligible = [s for s in steps.scored if not s.excluded and s is not pick]
    groups = {_group(s) for s in eligible} - ({_group(pick)} if pick else set())
    assert len(shown) == min(4, len(groups))
    assert all(not s.excluded and s is not pick for s in shown)
    assert len({_group(s) for s in shown}) == len(shown)
    assert pick is None or all(_group(s) != _group(pick) for s in shown)
    assert [s.sort_key for s in shown] == sorted(s.sort_key for s in shown)
    if eligible:
        cheapest = min(eligible, key=lambda s: (_cost(s), s.id))
        # the cheapest's GPU and place is shown (by its best-ranked configuration)
        assert (pick is not None and _group(cheapest) == _group(pick)) or (
            _group(cheapest) in {_group(s) for s in shown})
    if pick is not None:
        other = [s for s in eligible if s.facts["where"] != pick.facts["where"]]
        if other:
            assert min(other, key=lambda s: s.sort_key) in shown


@pytest.mark.slow
@pytest.mark.parametrize("stem", sorted(SCENARIOS))
def test_cheaper_names_the_cheapest_rival_and_the_decision_that_set_it_aside(
        stem: str) -> None:
    steps = steps_of(stem)
    decision = steps.evaluation.decision
    if decision.hardware.choice is None:
        return
    pick = steps.scored_by_id(decision.hardware.choice.id)
    found = cheaper(pick, steps.scored, decision.decisions, BOOK)
    rivals = [s for s in steps.scored if not s.excluded and _cost(s) < _cost(pick)]
    if not rivals:
        assert found is None
        return
    rival = min(rivals, key=lambda s: (_cost(s), s.id))
    assert found is not None
    assert (found.id, found.per_year_usd) == (rival.id, _cost(rival))
    rented = rival.facts["where"] == "cloud"
    for axis, differs in (("cloud_kind", rented and rival.facts["provider_kind"]
                           != decision.decisions["cloud_kind"].choice),
                          ("pricing", rented and rival.facts["pricing"]
                           != decision.decisions["pricing"].choice),
                          ("deployment", rival.facts["where"] != pick.facts["where"])):
        if differs:
            decided = decision.decisions[axis]
            chosen = next(o for o in decided.ranking if o.option == decided.choice)
            by_order = not decided.revision and not chosen.reasons
            if by_order and found.rule != axis:
                # the decision was only the declared order: the rule that scored the rival
                # down is the better reason
                assert any(r.id == found.rule for r in [*pick.rules, *rival.rules])
                return
            if not found.reason.startswith(f"{axis.replace('_', ' ')} is {decided.choice}"):
                # a rule between the two, against the rival or for the pick and not about
                # where or how it is rented, that weighs more than the axis's reason
                between = [r for r in [*pick.rules, *rival.rules] if r.id == found.rule]
                assert between and max(abs(sum(r.scoring[1])) for r in between) > max(
                    r.weight for r in chosen.reasons)
                assert all(not r.reads & set(BOOK.fields.values())
                           for r in between if r in pick.rules)
                return
            theirs = next(o for o in decided.ranking
                          if o.option == rival.facts[BOOK.fields[axis]])
            against = [r.rule for r in theirs.reasons if r.effect in ("avoid", "exclude")]
            # the reason for the choice, or the one against the rival's option when it weighs
            # at least as much (the more telling why-not: "not marketplace: …")
            assert found.rule in {axis, f"{axis}.revised", *(r.rule for r in chosen.reasons),
                                  *against}
            return
    assert found.rule == "hardware.rank" or any(
        r.id == found.rule for r in [*pick.rules, *rival.rules])


def test_no_cheaper_row_when_the_pick_is_the_cheapest() -> None:
    steps = steps_of("03-intermittent-70b")
    eligible = [s for s in steps.scored if not s.excluded]
    cheapest = min(eligible, key=lambda s: (_cost(s), s.id))
    assert cheaper(cheapest, steps.scored, steps.decisions, BOOK) is None


def test_excluded_lists_each_excluded_configuration_under_every_rule_that_excluded_it(
        engine: Engine) -> None:
    """One entry per rule and reason, with the ids it excluded: the (id, rule, reason) rows
    are exactly every excluding rule on every excluded configuration, in rule order."""
    steps = steps_of("16-eu-residency")
    section = hardware(None, steps.scored, steps.decisions, engine.rulebook, trace=True,
                       margin=0.1)
    assert section.choice is None and section.cheaper is None
    assert section.considered == len(steps.candidates)
    expected = {(s.id, r.id, text_of(r, s.facts)) for s in steps.scored if s.excluded
                for r in s.rules if r.scoring[0]}
    rows = [(i, g.rule, g.reason) for g in section.excluded for i in g.ids]
    assert sorted(rows) == sorted(expected) and len(rows) == len(set(rows))
    assert {row[0] for row in rows} == {s.id for s in steps.scored if s.excluded}
    assert len({(g.rule, g.reason) for g in section.excluded}) == len(section.excluded)
    assert all(g.ids == sorted(g.ids) for g in section.excluded)
    order = [engine.rulebook.rule(g.rule).order for g in section.excluded]
    assert order == sorted(order)
    assert len(set(order)) < len(section.excluded) < len(rows)  # grouped, and shared


def test_a_lean_decision_lists_each_excluded_configuration_under_its_first_rule(
        engine: Engine) -> None:
    """Without trace each excluded configuration appears once, under the first rule (in
    policy order) that excluded it; one entry per rule, with the reason of its first
    configuration; the traced groups give the same (first_exclusions, which
    Decision.untraced uses)."""
    steps = steps_of("16-eu-residency")
    chosen = steps.evaluation.decision.hardware.choice
    assert chosen is not None
    choice = next(s for s in steps.scored if s.id == chosen.id)
    lean = hardware(choice, steps.scored, steps.decisions, engine.rulebook, margin=0.1)
    traced = hardware(choice, steps.scored, steps.decisions, engine.rulebook, trace=True,
                      margin=0.1)
    rows = [(i, g.rule) for g in lean.excluded for i in g.ids]
    by_id = {s.id: s for s in steps.scored}
    expected = set()
    for s in steps.scored:
        if s.excluded:
            rule = min((r for r in s.rules if r.scoring[0]), key=lambda r: r.order)
            expected.add((s.id, rule.id))
    assert sorted(rows) == sorted(expected) and len(rows) == len(by_id.keys() & {
        r[0] for r in rows})
    assert len({g.rule for g in lean.excluded}) == len(lean.excluded)
    for group in lean.excluded:
        first = by_id[group.ids[0]]
        assert group.reason == text_of(next(r for r in first.rules if r.id == group.rule),
                                       first.facts)
    assert first_exclusions(traced.excluded) == lean.excluded
    assert len({i for g in traced.excluded for i in g.ids}) == len(rows) < sum(
        len(g.ids) for g in traced.excluded)            # some configuration had two rules
    refusal = hardware(None, steps.scored, steps.decisions, engine.rulebook, margin=0.1)
    assert refusal.excluded == traced.excluded  # a refusal keeps every exclusion


# -- the cloud side -------------------------------------------------------------------------
def _with_excluded(scored: Sequence[Scored], closed: set[str]) -> list[Scored]:
    return [Scored(s.candidate, s.score, s.excluded or s.id in closed, s.rules)
            for s in scored]


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_the_cloud_pick_has_the_decided_kind_and_pricing_or_says_why_not(
        data: st.DataObject) -> None:
    steps = steps_of(data.draw(st.sampled_from(["03-intermittent-70b", "06-low-volume-api",
                                                "16-eu-residency"])))
    cloud = [s for s in steps.scored if s.facts["where"] == "cloud"]
    # close whole kinds and pricings (so that decisions must be revised), and single offers
    groups = data.draw(st.sets(st.sampled_from([(k, p) for k in KINDS for p in PRICINGS])))
    closed = {s.id for s in cloud if (s.facts["provider_kind"], s.facts["pricing"]) in groups}
    closed |= set(data.draw(st.lists(st.sampled_from([s.id for s in cloud]), max_size=20)))
    scored = _with_excluded(steps.scored, closed)
    kinds = data.draw(st.permutations(KINDS))[:data.draw(st.integers(1, 3))]
    pricings = data.draw(st.permutations(PRICINGS))[:data.draw(st.integers(1, 3))]
    found, revisions = resolve_cloud(scored, kinds, pricings, FIELDS)

    def open_(kind: str, pricing: str | None = None) -> bool:
        return best(scored, where="cloud", provider_kind=kind, pricing=pricing) is not None

    if found is None:
        assert revisions == []
        assert not any(open_(k, p) for k in kinds for p in pricings)
        return
    f = found.facts
    assert not found.excluded and f["where"] == "cloud"
    assert found is best(scored, where="cloud", provider_kind=f["provider_kind"],
                         pricing=f["pricing"])
    revised = {r.axis: r for r in revisions}
    assert set(revised) <= {"cloud_kind", "pricing"}
    for axis, wanted, got in (("cloud_kind", kinds, f["provider_kind"]),
                              ("pricing", pricings, f["pricing"])):
        assert got in wanted
        if got == wanted[0]:
            assert axis not in revised
        else:
            assert (revised[axis].before, revised[axis].after) == (wanted[0], got)
    if "cloud_kind" in revised:  # no decided pricing of the decided kind holds the job
        assert not any(open_(kinds[0], p) for p in pricings)
    if "pricing" in revised and revised["pricing"].text.startswith("reserving on"):
        # a reservation that costs more than on demand on the kind taken gives way to it
        reserved = best(scored, where="cloud", provider_kind=f["provider_kind"],
                        pricing="reserved")
        assert f["pricing"] == "on-demand" and "reserved" in pricings
        assert reserved is not None and reserved.config.cost_usd_year > f["cost_usd_year"]
        better = pricings[:pricings.index(f["pricing"])]
        # it gives way to on demand, the same capacity uncommitted, even past spot where the
        # rules ranked spot between them (left open: spot may then be the better next)
        assert not any(open_(f["provider_kind"], p) for p in better
                       if p not in ("reserved", "spot"))
    elif "pricing" in revised and revised["pricing"].text.startswith("the best "):
        # the first pricing open on the kind taken is weighed against for its stack: the one
        # taken scores higher, and is the best-ranked of those that do
        held = next(b for p in pricings
                    for b in (best(scored, where="cloud", provider_kind=f["provider_kind"],
                                   pricing=p),) if b is not None)
        assert found.score > held.score
        for p in pricings:
            b = best(scored, where="cloud", provider_kind=f["provider_kind"], pricing=p)
            assert b is None or b.score <= held.score or b.sort_key >= found.sort_key
    elif "pricing" in revised:  # the kind taken lists no better-ranked pricing
        better = pricings[:pricings.index(f["pricing"])]
        assert not any(open_(f["provider_kind"], p) for p in better)
    if f["pricing"] == "on-demand" and "reserved" in pricings[:pricings.index("on-demand")]:
        reserved = best(scored, where="cloud", provider_kind=f["provider_kind"],
                        pricing="reserved")
        assert reserved is None or reserved.config.cost_usd_year > f["cost_usd_year"]


def test_the_decided_kind_and_pricing_are_taken_when_offered() -> None:
    steps = steps_of("03-intermittent-70b")
    found, revisions = resolve_cloud(steps.scored, ["hyperscaler", "specialised"],
                                     ["on-demand", "spot"], FIELDS)
    assert revisions == []
    assert found is not None
    assert (found.facts["provider_kind"], found.facts["pricing"]) == ("hyperscaler",
                                                                      "on-demand")


def test_a_pricing_no_offer_lists_becomes_the_next_ranked_and_says_so() -> None:
    steps = steps_of("06-low-volume-api")
    found, revisions = resolve_cloud(steps.scored, ["marketplace"], ["spot", "on-demand"],
                                     FIELDS)
    assert found is not None and found.facts["pricing"] == "on-demand"
    assert [(r.axis, r.before, r.after, r.text) for r in revisions] == [
        ("pricing", "spot", "on-demand",
         "no offer on a marketplace cloud that holds this job lists a spot price: on-demand")]


def test_a_reservation_dearer_than_on_demand_on_its_kind_gives_way_and_says_so() -> None:
    """The rules may rank reserved first on a reservation of another kind that pays; on the
    kind taken the best reservation costs more than paying on demand there: on demand."""
    steps = steps_of("36-continuous-team-with-a-plan")
    kind = "specialised"
    reserved = best(steps.scored, where="cloud", provider_kind=kind, pricing="reserved")
    on_demand = best(steps.scored, where="cloud", provider_kind=kind, pricing="on-demand")
    assert reserved is not None and on_demand is not None
    assert reserved.config.cost_usd_year > on_demand.config.cost_usd_year
    found, revisions = resolve_cloud(steps.scored, [kind], ["reserved", "on-demand"], FIELDS)
    assert found is on_demand
    assert [(r.axis, r.before, r.after) for r in revisions] == [
        ("pricing", "reserved", "on-demand")]
    assert revisions[0].text.startswith(f"reserving on a {kind} cloud would cost ")
    # without on demand among the options the rules ranked, the reservation stands
    assert resolve_cloud(steps.scored, [kind], ["reserved"], FIELDS) == (reserved, [])


def test_no_work_pays_nothing_on_demand_and_a_reservation_gives_way() -> None:
    """With no work on demand costs nothing: a reservation ranked first gives way to it, and
    the revision says both costs (no ratio to divide by zero)."""
    from engine.decide.engine import recommend

    decision = recommend({"workload": "fine-tune", "model_params_b": 7, "method": "qlora",
                          "hours_per_year": 0, "usage_pattern": "continuous",
                          "budget_usd": 500, "upfront_capex": True, "cloud_ecosystem": "aws"})
    pricing = decision.decisions["pricing"]
    assert (pricing.revised_from, pricing.choice) == ("reserved", "on-demand")
    assert pricing.revision is not None and "paying on demand there $0 " in pricing.revision


def test_a_team_on_a_hyperscaler_weighs_its_pricings_there() -> None:
    """Azure sells no spot capacity that holds a 70B QLoRA: the cheap spot node of another
    hyperscaler does not decide the pricing (before: 8x B200 on Google Cloud spot for an Azure
    shop); on demand on Azure does, and says why."""
    from engine.answers.model import load_answers
    from engine.decide.engine import recommend

    path = Path(__file__).parent / "teams" / "azure-70b-qlora.yaml"
    engine = load_engine()
    decision = engine.recommend(load_answers(path, (), engine.catalog))
    choice = decision.hardware.choice
    assert choice is not None and (choice.provider, choice.pricing) == ("azure", "on-demand")
    reasons = {r.rule for o in decision.decisions["pricing"].ranking for r in o.reasons}
    assert "pricing.no-spot-in-your-cloud" in reasons
    assert decision.facts["pricing_in_own_cloud"] is True
    # a team on no cloud still weighs spot on every cloud
    free = recommend({**load_answers(path, (), engine.catalog).model_dump(exclude_none=True),
                      "cloud_ecosystem": "none"})
    assert free.facts["pricing_in_own_cloud"] is False


def test_a_steady_team_is_not_told_to_reserve_where_no_reservation_holds_its_job() -> None:
    """Google Cloud sells no reservation of the L4 the weekly 8B LoRA takes: on demand, with
    the steady-work reason, not a reservation revised away (before: "revised from
    reserved")."""
    from engine.decide.engine import recommend

    decision = recommend({"workload": "fine-tune", "model": "qwen3-8b", "method": "lora",
                          "training_tokens_b": 0.05, "runs_per_year": 52,
                          "usage_pattern": "continuous", "budget_usd": 20000,
                          "upfront_capex": False, "cloud_ecosystem": "gcp"})
    pricing = decision.decisions["pricing"]
    assert decision.facts["reserved_available"] is False
    assert (pricing.choice, pricing.revised_from) == ("on-demand", None)
    assert "pricing.on-demand-for-steady-work" in {
        r.rule for o in pricing.ranking for r in o.reasons}


def test_the_method_says_why_a_better_one_is_not_on_the_picked_hardware() -> None:
    """The startup example buys one RTX 5090, which holds LoRA but not a full fine-tune: the
    method (chosen with the hardware) says so, with the memory each needs (before: "no rule
    weighed the options on it")."""
    from engine.answers.model import load_answers

    engine = load_engine()
    path = Path(__file__).parent.parent / "examples" / "startup-7b-continuous.yaml"
    decision = engine.recommend(load_answers(path, (), engine.catalog))
    method = decision.decisions["method"]
    assert method.choice == "lora"
    texts = [r.text for r in method.ranking[0].reasons
             if r.rule == "method.better-does-not-fit-here"]
    assert texts and texts[0].startswith("full needs ")
    assert texts[0].endswith("lora fits this hardware.")


def test_amd_is_not_taken_for_a_saving_too_small_to_pay_for_the_port() -> None:
    """A $5k team's 70B full fine-tune: 8x MI300X on demand saved $86 a year against 8x B200;
    moving a CUDA stack to ROCm costs more than that (before: TensorWave MI300X, 5.7-hour
    runs; now Lambda B200, 2-hour runs, self-serve)."""
    from engine.decide.engine import recommend

    decision = recommend({"workload": "fine-tune", "model": "llama-3.1-70b", "method": "full",
                          "training_tokens_b": 0.1, "runs_per_year": 2,
                          "usage_pattern": "intermittent", "budget_usd": 5000,
                          "upfront_capex": False})
    choice = decision.hardware.choice
    assert choice is not None and load_engine().catalog.gpus[choice.gpu].vendor == "nvidia"
    assert "hardware.rocm-saving-too-small" in decision.fired


def test_a_pricing_is_not_taken_onto_a_stack_the_team_did_not_choose() -> None:
    """A 405B LoRA team ($200k, intermittent): spot ranks first, and the only spot offer on a
    specialised cloud is an AMD node the ROCm rules weigh against; on demand there has an
    NVIDIA one: the pricing is revised to it, saying why (before the ROCm saving rule, the
    pick went to that AMD spot node)."""
    from engine.decide.engine import recommend

    decision = recommend({"workload": "fine-tune", "model": "llama-3.1-405b", "method": "lora",
                          "training_tokens_b": 0.02, "runs_per_year": 6,
                          "usage_pattern": "intermittent", "budget_usd": 200000,
                          "upfront_capex": False})
    choice = decision.hardware.choice
    pricing = decision.decisions["pricing"]
    assert choice is not None and choice.pricing == "on-demand"
    assert load_engine().catalog.gpus[choice.gpu].vendor == "nvidia"
    assert pricing.revised_from == "spot"
    assert pricing.revision is not None and "hardware.rocm-only-where-it-saves" in (
        pricing.revision)


def test_a_kind_with_no_eligible_offer_becomes_the_next_ranked_and_says_so() -> None:
    steps = steps_of("03-intermittent-70b")
    specialised = {s.id for s in steps.scored if s.facts["provider_kind"] == "specialised"}
    scored = _with_excluded(steps.scored, specialised)
    found, revisions = resolve_cloud(scored, ["specialised", "hyperscaler"], ["on-demand"],
                                     FIELDS)
    assert found is not None and found.facts["provider_kind"] == "hyperscaler"
    assert [(r.axis, r.before, r.after, r.text) for r in revisions] == [
        ("cloud_kind", "specialised", "hyperscaler",
         "no specialised cloud offers hold this job within your limits: hyperscaler "
         "instead")]


def test_no_cloud_side_without_an_eligible_offer_or_a_decided_option() -> None:
    steps = steps_of("03-intermittent-70b")
    all_cloud = {s.id for s in steps.scored if s.facts["where"] == "cloud"}
    closed = _with_excluded(steps.scored, all_cloud)
    assert resolve_cloud(closed, KINDS, PRICINGS, FIELDS) == (None, [])
    assert resolve_cloud(steps.scored, [], PRICINGS, FIELDS) == (None, [])
    assert resolve_cloud(steps.scored, KINDS, [], FIELDS) == (None, [])


def _best_id(scored: Iterable[Scored]) -> str | None:
    found = best(scored)
    return found.id if found else None


def test_best_ranks_by_score_then_cost_and_never_returns_an_excluded_one() -> None:
    steps = steps_of("03-intermittent-70b")
    eligible = sorted((s for s in steps.scored if not s.excluded),
                      key=lambda s: (_cost(s), s.facts["upfront_usd"], s.id))
    cheap, dear = eligible[0], eligible[-1]
    flat = [Scored(s.candidate, 0.0, s.excluded, s.rules) for s in steps.scored]
    assert _best_id(flat) == cheap.id
    raised = [Scored(s.candidate, 5.0 if s.id == dear.id else 0.0, s.excluded, s.rules)
              for s in flat]
    assert _best_id(raised) == dear.id
    closed = [Scored(s.candidate, s.score, s.excluded or s.id == dear.id, s.rules)
              for s in raised]
    assert _best_id(closed) == cheap.id


# -- break-even -----------------------------------------------------------------------------
def _sides(steps: Steps) -> tuple[Scored, Scored]:
    local = best(steps.scored, where="local")
    cloud, _ = resolve_cloud(steps.scored, steps.ranked("cloud_kind"), steps.ranked("pricing"),
                             FIELDS)
    assert local is not None and cloud is not None
    return local, cloud


def _costs_at(engine: Engine, steps: Steps, units: float,
              ids: Sequence[str]) -> list[float] | None:
    """The cost for the year's work of these configurations when the team's work is
    ``units`` of its own unit (GPU-hours on its GPU, or runs a year): the same
    configurations rebuilt (None where one of them then takes another count)."""
    field = "hours_per_year" if steps.sizing.jobs[0].work.mode == "hours" else "runs_per_year"
    raw = {**steps.answers.model_dump(mode="json"), field: units}
    answers = validate_answers(raw, engine.catalog)
    sizing, candidates = candidates_for(engine, answers, steps.decisions)
    assert sizing.jobs[0].work.units == pytest.approx(units)
    by_id = {c.id: c for c in candidates}
    if not all(i in by_id for i in ids):
        return None
    return [float(by_id[i].facts["cost_usd_year"]) for i in ids]


@pytest.mark.parametrize("stem", ["01-continuous-8b-fits-consumer", "03-intermittent-70b",
                                  "17-latest-hardware"])
def test_break_even_is_where_owning_and_renting_cost_the_same(engine: Engine,
                                                              stem: str) -> None:
    """In the team's own unit of work: at the break-even both cost the same (within the
    rounding of billed hours), below it renting costs less, above it owning does. Owning is
    the eligible purchase that crosses renting first: the pick, or a smaller one that becomes
    the best owned one with less work (scenario 1: 1× RTX 4090 below the RTX 5090's; 2× RTX
    3090 cross sooner, but a rule ranks them below one card that holds the job)."""
    steps = steps_of(stem)
    local, cloud = _sides(steps)
    work, policy = steps.sizing.jobs[-1].work, engine.catalog.policy
    own_line = break_even_line(local, cloud, work, policy)
    owned = [s for s in steps.scored if not s.excluded and s.config.where == "local"
             and s.score >= local.score]
    crossings = [(line, s) for s in owned
                 if (line := break_even_line(s, cloud, work, policy)) is not None]
    line, lowest = min(crossings, key=lambda pair: pair[0].value)
    assert own_line is not None and line.value <= own_line.value
    if stem.startswith("01-"):
        assert (local.config.gpu, lowest.config.gpu) == ("rtx-5090", "rtx-4090")
    assert line.value == pytest.approx(steps.evaluation.request_facts["break_even_work"],
                                       abs=0.01)
    ids = [lowest.id, cloud.id]
    at = _costs_at(engine, steps, line.value, ids)
    assert at is not None
    own, rent = at
    assert own == pytest.approx(rent, rel=2e-2)
    for scale, owning_cheaper in ((0.8, False), (1.25, True)):
        costs = _costs_at(engine, steps, line.value * scale, ids)
        if costs is not None:  # the same configurations at that much work
            assert (costs[0] < costs[1]) == owning_cheaper, scale


def test_no_break_even_against_a_reservation_or_without_work(engine: Engine) -> None:
    """A reserved term costs the same whatever the work, so owning never catches up (blocks
    bought for each run, as AWS Capacity Blocks, grow with the work like on-demand)."""
    steps = steps_of("03-intermittent-70b")
    local, _ = _sides(steps)
    terms = [s for s in steps.scored if not s.excluded and s.facts["pricing"] == "reserved"
             and not s.facts["reserved_days"]]
    reserved = min(terms, key=lambda s: s.sort_key)
    policy = engine.catalog.policy
    assert break_even_line(local, reserved, steps.sizing.jobs[-1].work, policy) is None
    _, cloud = _sides(steps)
    idle = steps.sizing.jobs[-1].work.model_copy(update={"hours_per_year": 0.0})
    assert break_even_line(local, cloud, idle, policy) is None


# -- candidates for a sizing ----------------------------------------------------------------
def _built(engine: Engine, **answers: Any) -> tuple[Sizing, list[PricedCandidate]]:
    """The candidates for these answers, for the methods they leave open (one, where they
    name a method)."""
    checked = validate_answers(answers, engine.catalog)
    axes = engine.choices(checked)
    return candidates_for(engine, checked, axes)


def _placement(candidate: PricedCandidate) -> str:
    """The id without its count: one owned GPU, or one offer at one price, one method."""
    head, _, tail = candidate.id.rpartition("x")
    return f"{head}:{tail.split(':', 1)[1]}"


def _counts(candidates: Iterable[PricedCandidate], *, ok_only: bool = False) -> dict[str, int]:
    """Each placement's count; with ``ok_only``, only those that hold and do the job in time."""
    return {_placement(c): int(c.facts["count"]) for c in candidates
            if not ok_only or c.ok}


def test_candidates_owned_first_then_every_offer_at_each_of_its_prices(engine: Engine) -> None:
    catalog = engine.catalog
    _, candidates = _built(engine, model="llama-3.1-8b", method="lora", hours_per_year=2000)
    ids = [c.id for c in candidates]
    assert len(ids) == len(set(ids))
    places = [c.facts["where"] for c in candidates]
    assert places == sorted(places, key=["local", "cloud"].index)
    owned = [c.facts["gpu"] for c in candidates if c.facts["where"] == "local"]
    buyable = [g.id for g in catalog.gpus.values() if g.buyable]
    assert owned == [g for g in buyable if g in owned] and owned
    assert {c.facts["train_method"] for c in candidates} == {"lora"}
    for offer in catalog.offers:
        rows = [c for c in candidates if c.facts["where"] == "cloud"
                and c.facts["offer"] == offer.id]
        prices = [*(["on-demand"] if offer.on_demand_usd_per_gpu_hour is not None else []),
                  *(["spot"] if offer.spot_usd_per_gpu_hour is not None else []),
                  *(f"reserved-{t.term_days}d" if t.term_days else f"reserved-{t.term_months}m"
                    for t in offer.reserved_terms)]
        assert [c.id.split(":")[2].rsplit("x", 1)[0] for c in rows] == prices, offer.id


def test_every_open_method_is_priced_and_dominated_ones_are_dropped(engine: Engine) -> None:
    """With the method left to the rules, each method is priced on the same hardware; QLoRA
    (the same FLOPs as LoRA, at a lower utilisation) stays only where it needs fewer GPUs."""
    _, candidates = _built(engine, model="llama-3.1-70b", training_tokens_b=0.1,
                           runs_per_year=4)
    methods: dict[str, dict[str, PricedCandidate]] = {}
    for cand in candidates:
        methods.setdefault(cand.hardware, {})[cand.facts["train_method"]] = cand
    assert any(len(found) > 1 for found in methods.values())
    for found in methods.values():
        lora, qlora = found.get("lora"), found.get("qlora")
        if lora is not None and qlora is not None and lora.ok:
            assert qlora.facts["count"] < lora.facts["count"]
        for cand in found.values():
            better = cand.facts["better_method"]
            if better != "none":
                dearer = found[better].facts["cost_usd_year"]
                assert cand.facts["better_method_premium"] == pytest.approx(
                    dearer / cand.facts["cost_usd_year"] - 1, abs=2e-3)


def test_a_candidate_cost_is_its_hourly_rate_for_its_billed_hours(engine: Engine) -> None:
    policy = engine.catalog.policy
    overhead = 1 + policy.hidden_cloud_overhead.expected
    _, candidates = _built(engine, model="llama-3.1-8b", hours_per_year=2000)
    for cand in candidates:
        f = cand.facts
        hourly, busy = f["per_hour_usd"], f["busy_hours_per_year"]
        if f["pricing"] == "purchase":
            expected = f["fixed_usd_year"] + hourly * busy
        else:
            expected = hourly * f["billed_hours_per_year"] * overhead
            # every run is billed with its start-up (and, on spot, its expected rework)
            wall = f["run_hours"] + f["start_up_hours"] + f["spot_extra_hours"]
            # each of the three facts is rounded to 0.001 hour, the billed hours to 0.1
            slack = 0.05 + f["runs_per_year"] * 0.0015
            assert f["billed_hours_per_year"] >= f["runs_per_year"] * wall - slack, cand.id
        assert f["cost_usd_year"] == pytest.approx(expected, rel=2e-3, abs=1), cand.id
        if f.get("reserved_days"):  # blocks of whole days bought for each run, the year at most
            block_h = 24 * f["reserved_days"]
            per_run = f["billed_hours_per_year"] / f["runs_per_year"]
            assert f["fixed_usd_year"] == 0.0, cand.id
            assert (f["billed_hours_per_year"] == 8760 or per_run / block_h
                    == pytest.approx(round(per_run / block_h), abs=1e-3)), cand.id
        elif f["pricing"] == "reserved":
            assert f["fixed_usd_year"] == f["cost_usd_year"]


def test_a_candidate_does_the_years_work_and_says_if_it_fits(engine: Engine) -> None:
    catalog = engine.catalog
    sizing, candidates = _built(engine, model="llama-3.1-8b", method="full",
                                training_tokens_b=2, runs_per_year=4, max_days_per_run=1)
    (job,) = sizing.jobs
    work = job.work
    assert sizing.deadline_days == 1
    for cand in candidates:
        f = cand.facts
        gpu = catalog.gpus[f["gpu"]]
        assert f["fits"] == (f["vram_needed_gib"] <= usable_gib(gpu, catalog.policy)), cand.id
        busy = work.flops_per_year / (cand.speed.value * 1e12 * 3600)
        assert f["busy_hours_per_year"] == pytest.approx(busy, rel=1e-3, abs=0.05), cand.id
        run = work.flops_per_run / (cand.speed.value * 1e12 * 3600)
        days = (run + f["start_up_hours"] + f["spot_extra_hours"]) / 24
        assert f["days_per_run"] == pytest.approx(days, rel=1e-3, abs=0.005), cand.id
        assert f["meets_deadline"] == (f["days_per_run"] <= 1), cand.id
        assert f["vram_total_gib"] == pytest.approx(gpu.vram_gib * f["count"], abs=0.01)
        if f["where"] == "local":  # owned capacity is sized to be busy at most the target
            cap = catalog.policy.capacity_busy_target["high"].value * 8760
            assert f["within_year"] == (busy <= cap), cand.id


def test_work_in_hours_runs_in_runs_and_meets_the_limit(engine: Engine) -> None:
    """GPU-hours a year come in runs (of the given length, or the policy's default, said as
    assumed), and every run meets the run limit like runs of tokens do."""
    sizing, candidates = _built(engine, model="llama-3.1-8b", hours_per_year=2000,
                                hours_per_run=10, max_days_per_run=0.5)
    work = sizing.jobs[0].work
    assert (work.runs_per_year, work.runs_assumed, sizing.deadline_days) == (200, False, 0.5)
    assert all(c.facts["meets_deadline"] == (c.facts["days_per_run"] <= 0.5)
               for c in candidates if abs(c.facts["days_per_run"] - 0.5) > 0.005)
    assert any(not c.facts["meets_deadline"] for c in candidates)
    assumed = _built(engine, model="llama-3.1-8b", hours_per_year=2000)[0].jobs[0].work
    assert assumed.runs_assumed and assumed.runs_per_year == pytest.approx(
        2000 / engine.catalog.policy.default_hours_per_run.value)


def test_runs_assumed_are_at_least_the_jobs_at_once(engine: Engine) -> None:
    """Ten jobs at once over 20 GPU-hours a year are ten runs of two hours, not one
    24-hour run shared by ten; where the hours make more runs, the default run length
    stands."""
    few = _built(engine, model="llama-3.2-1b", hours_per_year=20,
                 concurrent_jobs=10)[0].jobs[0].work
    assert few.runs_assumed and few.runs_per_year == 10
    many = _built(engine, model="llama-3.2-1b", hours_per_year=2400,
                  concurrent_jobs=10)[0].jobs[0].work
    assert many.runs_per_year == pytest.approx(
        2400 / engine.catalog.policy.default_hours_per_run.value)
    pretrain = _built(engine, model_params_b=1, workload="pretrain", hours_per_year=2000,
                      concurrent_jobs=3)[0].jobs[0].work
    assert pretrain.runs_per_year == 3


def test_a_tighter_deadline_never_gives_fewer_gpus(engine: Engine) -> None:
    """Where a configuration meets the tight deadline, the loose one needed no more GPUs."""
    job = {"model": "llama-3.1-8b", "method": "full", "training_tokens_b": 2,
           "runs_per_year": 4}
    loose = _counts(_built(engine, **job, max_days_per_run=30)[1])
    tight = _counts(_built(engine, **job, max_days_per_run=0.5)[1], ok_only=True)
    assert tight and tight.keys() <= loose.keys()
    assert all(tight[p] >= loose[p] for p in tight)
    assert any(tight[p] > loose[p] for p in tight)


def test_a_bigger_model_never_gives_fewer_gpus(engine: Engine) -> None:
    """Where a configuration holds and does the bigger job, the smaller needed no more GPUs
    (more memory and more work never make fewer GPUs enough)."""
    job = {"method": "full", "training_tokens_b": 1, "runs_per_year": 2,
           "max_days_per_run": 10}
    small = _counts(_built(engine, model="llama-3.1-8b", **job)[1])
    big = _counts(_built(engine, model="llama-3.1-70b", **job)[1], ok_only=True)
    assert big and big.keys() <= small.keys()
    assert all(big[p] >= small[p] for p in big)
    assert any(big[p] > small[p] for p in big)


def test_blocks_are_priced_for_the_whole_days_of_each_run(engine: Engine) -> None:
    """An AWS Capacity Block costs its rate for the whole days around each run (start-up
    included), nothing fixed; a Lambda 1-Click Cluster comes from 16 GPUs, two weeks a run."""
    over = 1 + engine.catalog.policy.hidden_cloud_overhead.expected
    _, candidates = _built(engine, model="llama-3.1-70b", method="lora", training_tokens_b=2,
                           runs_per_year=4)
    by_offer = {c.facts["offer"]: c.facts for c in candidates if c.facts.get("reserved_days")}
    block = by_offer["aws-h100-p5-capacity-block"]
    days = math.ceil((block["run_hours"] + block["start_up_hours"]) / 24)
    assert (block["reserved_days"], block["access"], block["fixed_usd_year"]) == (1, "self-serve",
                                                                                  0.0)
    assert block["billed_hours_per_year"] == pytest.approx(4 * days * 24)
    assert block["cost_usd_year"] == pytest.approx(
        block["count"] * 5.97 * 4 * days * 24 * over, rel=1e-3)
    lambda_1cc = [c.facts for c in candidates if c.facts["offer"] == "lambda-h100-1cc"]
    assert lambda_1cc and all(f["count"] >= 16 and f["reserved_days"] == 7
                              and f["billed_hours_per_year"] >= 4 * 14 * 24 for f in lambda_1cc)
    assert all(f["smallest_shape"] == 16 for f in lambda_1cc)


def test_a_better_method_is_priced_only_where_it_fits() -> None:
    """A method that does not fit a configuration says so; it is never also said to cost too
    much there (before: "full on this offer (1x GH200 hold it) costs 57% more than lora" beside
    "full needs 125 GiB per GPU on 1x GH200")."""
    from engine.decide.engine import recommend

    decision = recommend({"workload": "fine-tune", "model": "llama-3.1-8b",
                          "training_tokens_b": 0.05, "runs_per_year": 4,
                          "usage_pattern": "intermittent", "budget_usd": 50000,
                          "api_tokens_per_month_m": 2000}, trace=True)
    unfit = set(decision.fired["hardware.does-not-fit"])
    assert unfit & set(decision.fired["method.better-does-not-fit-here"])
    assert not unfit & set(decision.fired["method.better-beyond-margin"])
    assert decision.fired["method.better-beyond-margin"]


def test_a_year_is_written_as_a_year() -> None:
    """A release year in a reason reads "(2025)", not as a quantity ("(2,025)")."""
    from engine.decide.decision import text_of

    book = load_engine().rulebook
    rule = next(r for r in book.rules if "{release_year" in r.model.because)
    assert "(2025)" in text_of(rule, {"gpu_name": "NVIDIA B200", "release_year": 2025})


def test_notes_on_cards_the_team_owns_apply_to_them() -> None:
    """Four owned RTX 4090s: one warning on their PCIe lanes (not two saying the same), and
    none on writing them off (their purchase is spent)."""
    from engine.decide.engine import recommend

    decision = recommend({"workload": "pretrain", "model_params_b": 1, "training_tokens_b": 20,
                          "runs_per_year": 2, "usage_pattern": "intermittent",
                          "budget_usd": 5000, "owned_gpu": "rtx-4090", "owned_gpu_count": 4})
    choice = decision.hardware.choice
    assert choice is not None and choice.owned
    ids = [w.id for w in decision.warnings]
    assert "pitfall.bandwidth" in ids
    assert "pitfall.incompatible" not in ids and "hw.obsolescence" not in ids


def test_steady_work_stretches_only_the_limit_of_capacity_held_all_year(
        engine: Engine) -> None:
    """A continuous team's runs may take longer on owned or committed capacity (so it is
    busy) but not on what is paid by the hour it runs: there an idle hour costs nothing."""
    sizing, candidates = _built(engine, model="llama-3.1-70b", method="lora",
                                training_tokens_b=2, runs_per_year=12,
                                usage_pattern="continuous", budget_usd=500_000)
    default = engine.catalog.policy.max_days_per_run["fine-tune"].value
    assert sizing.burst_deadline_days == default < sizing.deadline_days
    held = by_the_hour = 0
    for cand in candidates:
        f = cand.facts
        all_year = f["where"] == "local" or f["pool_layout"] or (
            f["pricing"] == "reserved" and not f.get("reserved_days"))
        limit = sizing.deadline_days if all_year else sizing.burst_deadline_days
        held, by_the_hour = held + all_year, by_the_hour + (not all_year)
        assert f["run_limit_days"] == limit, cand.id
        assert f["meets_deadline"] == (f["days_per_run"] <= limit), cand.id
    assert held and by_the_hour
    answered, _ = _built(engine, model="llama-3.1-70b", method="lora", training_tokens_b=2,
                         runs_per_year=12, usage_pattern="continuous", max_days_per_run=9)
    assert answered.deadline_days == answered.burst_deadline_days == 9


def test_the_plan_is_priced_for_every_method(engine: Engine) -> None:
    """Where the scan finds the planned GPUs at the planned count for one method, the other
    methods are priced on the plan too (it is what the team would run on it)."""
    _, candidates = _built(engine, model="llama-3.1-70b", training_tokens_b=2,
                           runs_per_year=24, usage_pattern="continuous",
                           budget_usd=2_000_000, planned_gpu="h100-sxm", planned_gpu_count=16)
    planned = {c.facts["train_method"] for c in candidates
               if c.facts["is_plan"] and c.facts["count"] == 16}
    assert {"full", "lora"} <= planned


def test_another_vendor_is_weighed_against_what_the_team_would_buy_the_same_way(
        engine: Engine) -> None:
    """An AMD configuration's cost is compared with the cheapest NVIDIA one bought the same
    way (same side, pricing, kind of provider; the same hyperscaler), not with a spot or
    marketplace row the team would not take instead of an on-demand one."""
    _, candidates = _built(engine, model="llama-3.1-70b", method="qlora",
                           training_tokens_b=0.1, runs_per_year=50, budget_usd=30_000,
                           upfront_capex=False, max_days_per_run=0.42)
    eligible = {c.id: c.ok for c in candidates}
    with_ratios(candidates, eligible)

    def like(c: PricedCandidate) -> tuple[str, ...]:
        return (c.config.where, c.config.pricing, *market(c.config).values())

    checked = 0
    for cand in candidates:
        if cand.config.vendor != "amd" or cand.facts["cost_vs_other_vendor"] is None:
            continue
        same_way = [c.config.cost_usd_year for c in candidates if eligible[c.id]
                    and c.config.vendor == "nvidia" and like(c) == like(cand)]
        if not same_way:
            continue
        expected = cand.config.cost_usd_year / min(same_way)
        assert cand.facts["cost_vs_other_vendor"] == pytest.approx(expected, abs=1e-3), cand.id
        checked += 1
    assert checked


def test_why_not_names_the_reason_against_the_rivals_option() -> None:
    """A marketplace row set aside for a team with proprietary data says why marketplaces
    are out for it (−5), not only why the choice won (+2); a reason against that weighs less
    than the choice's own is not the why-not."""


    kind = made_axis("specialised", {
        "specialised": [why("gpu-centric", "prefer", 2)],
        "hyperscaler": [why("premium", "avoid", 1)],
        "marketplace": [why("sensitive-data", "avoid", 5)]})
    assert reason_against("cloud_kind", kind, "marketplace") == (
        "sensitive-data", "cloud kind is specialised, not marketplace: sensitive-data text")
    assert reason_against("cloud_kind", kind, "hyperscaler") is None


def test_a_team_leaves_its_cloud_only_where_the_rules_do_not_keep_it_there() -> None:
    """Staying on a hyperscaler for its services is a reason only where that cloud holds the
    job within reach of the budget and ranks above every other hyperscaler's offer: an Azure
    team with $500 for a job Azure does it for $2,675 is not told "you already run on azure"
    while it rents elsewhere (before: Azure's 1x A100 at 5x the budget); with the budget to
    pay for it, it stays."""
    from engine.decide.engine import recommend

    answers = {"workload": "fine-tune", "model": "deepseek-v2-lite", "method": "lora",
               "hours_per_year": 1500, "usage_pattern": "bursty", "budget_usd": 500,
               "upfront_capex": False, "proprietary_data": True, "cloud_ecosystem": "azure"}
    poor = recommend(answers)
    choice = poor.hardware.choice
    assert choice is not None and choice.provider != "azure"
    assert poor.facts["own_cloud_holds_job"] is False
    assert not {"cloud.embedded-hyperscaler", "cloud.embedded-hyperscaler-at-a-premium"} & set(
        poor.fired)
    assert poor.facts["own_cloud_over_budget"] is False   # nothing keeps within $500
    assert {"cloud.own-cloud-holds-nothing", "cloud.own-cloud-holds-nothing-note"} <= set(
        poor.fired)
    said = [r.text for o in poor.decisions["cloud_kind"].ranking for r in o.reasons
            if r.rule == "cloud.own-cloud-holds-nothing"]
    assert said and said[0].startswith("Microsoft Azure, the cloud you run on, sells nothing")
    assert "under 2× your compute budget" in said[0]
    rich = recommend({**answers, "budget_usd": 50000})
    choice = rich.hardware.choice
    assert choice is not None and choice.provider == "azure"
    assert rich.facts["own_cloud_holds_job"] is True
    assert rich.facts["own_cloud_over_budget"] is False
    assert {"cloud.embedded-hyperscaler", "cloud.embedded-hyperscaler-at-a-premium"} & set(
        rich.fired)


def test_a_team_is_not_kept_on_its_cloud_over_a_budget_another_cloud_keeps() -> None:
    """A Google Cloud team with $20,000 a year whose cloud does the work for $20,919 in its
    first year, where other clouds do it for a seventh of that, was kept there by "you
    already run on gcp" (staying was weighed against the budget only beyond twice it): it
    now rents within the budget, and is told what staying would cost; its cloud still holds
    a job that nothing does within the budget."""
    from engine.decide.engine import recommend

    answers = {"workload": "fine-tune", "model": "qwen3-0.6b", "method": "auto",
               "training_tokens_b": 2, "runs_per_year": 200, "usage_pattern": "bursty",
               "budget_usd": 20000, "upfront_capex": False, "cloud_ecosystem": "gcp",
               "max_days_per_run": 0.5, "seq_len": 4096}
    d = recommend(answers)
    choice = d.hardware.choice
    assert choice is not None and choice.provider != "gcp"
    assert d.facts["own_cloud_holds_job"] is False
    assert choice.cost.per_year_usd < 20000 / 2
    said = [w.text for w in d.warnings if w.id == "own-cloud-over-budget"]
    staying = re.match(r"Staying on Google Cloud would cost \$([\d,]+) in the first year, "
                       r"over the \$20,000 your budget leaves for compute", said[0] if said else "")
    assert staying is not None and int(staying.group(1).replace(",", "")) > 20000
    assert "cloud.embedded-hyperscaler-at-a-premium" not in d.fired
    tight = recommend({**answers, "budget_usd": 500})
    assert tight.facts["own_cloud_over_budget"] is False


def test_the_plan_is_priced_as_the_pick_is_rented() -> None:
    """A team without capital that plans 8x H100 for continuous 70B LoRA: on demand, as the
    pick is rented, its runs take 6.3 days, over the 3 days a rented run may take. The plan
    line says that, at the on-demand price, rather than quoting the one plan configuration
    no rule excluded, a 36-month Google Cloud reservation at $391,516 a year, as if that were
    the plan's cost (before: "not the pick: cloud kind is specialised")."""
    from engine.decide.engine import recommend

    decision = recommend({"workload": "fine-tune", "model": "llama-3.1-70b", "method": "lora",
                          "training_tokens_b": 5, "runs_per_year": 40,
                          "usage_pattern": "continuous", "budget_usd": 1500000,
                          "upfront_capex": False, "planned_gpu": "h100-sxm",
                          "planned_gpu_count": 8})
    plan, choice = decision.hardware.plan, decision.hardware.choice
    assert plan is not None and choice is not None
    assert ":on-demandx8:" in plan.id and plan.excluded
    assert plan.reason is not None and "longer than the 3 days a run may take" in plan.reason
    assert plan.per_year_usd < 300000 and plan.days_per_run is not None
    assert plan.days_per_run > 3 > choice.days_per_run


def test_a_revised_deployment_makes_cloud_kind_and_pricing_count_again() -> None:
    """Deployment decided local, then revised to cloud where no owned configuration holds
    the job: cloud kind and pricing, moot under local, apply to the rented pick."""
    from engine.decide.engine import _applicable, _revised
    from engine.decide.sides import Revision

    book = load_engine().rulebook
    axes = {"deployment": made_axis("local", {"local": [why("a", "prefer", 2)], "cloud": []}),
            "cloud_kind": made_axis("specialised", {"specialised": [], "hyperscaler": []}),
            "pricing": made_axis("on-demand", {"on-demand": [], "spot": []})}
    moot = _applicable(axes, book)
    assert not moot["cloud_kind"].applies and not moot["pricing"].applies
    revised = _revised(moot, [Revision("deployment", "local", "cloud", "none holds it")], book)
    assert revised["deployment"].choice == "cloud"
    assert revised["cloud_kind"].applies and revised["pricing"].applies
    back = _revised(revised, [Revision("deployment", "cloud", "local", "none holds it")], book)
    assert not back["cloud_kind"].applies and not back["pricing"].applies


def test_a_pretrain_is_not_said_to_be_the_lightest_method_allowed() -> None:
    """"Even with pretrain, the lightest method you allow, the job needs about 514 GiB"
    spoke of a pretrain as a method the team chose among lighter ones."""
    from engine.decide.engine import recommend

    d = recommend({"workload": "pretrain", "model_params_b": 34, "training_tokens_b": 20,
                   "runs_per_year": 1, "usage_pattern": "bursty", "budget_usd": 2000000,
                   "upfront_capex": True, "cloud_ecosystem": "none"})
    said = [r.text for o in d.decisions["deployment"].ranking for r in o.reasons
            if r.rule == "fit.exceeds-local-favours-cloud"]
    assert said and said[0].startswith(
        "Even with pretraining, the only method for training from scratch, the job needs")
    lora = recommend({"workload": "fine-tune", "model": "llama-3.1-405b", "method": "lora",
                      "training_tokens_b": 0.1, "runs_per_year": 4, "budget_usd": 50000,
                      "upfront_capex": True, "cloud_ecosystem": "none"})
    said = [r.text for o in lora.decisions["deployment"].ranking for r in o.reasons
            if r.rule == "fit.exceeds-local-favours-cloud"]
    assert said and said[0].startswith("Even with lora, the lightest method you allow, the job")
