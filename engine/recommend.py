"""The pipeline: answers → facts → durable_rules firings → decisions → hardware → Decision."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from engine import __version__
from engine.answers import Answers
from engine.candidates import CandidateFacts, build_candidates
from engine.catalog.load import Catalog, load_catalog
from engine.compiler import Compiled, compile_rulebook
from engine.decision import (
    AxisDecision,
    Firing,
    Hardware,
    Note,
    choose_hardware,
    decide_axes,
    firings,
    score_candidates,
    sort_warnings,
)
from engine.errors import EngineError
from engine.evaluate import Evaluator
from engine.facts import Facts, build_facts, durable_fact
from engine.factspec import CANDIDATE
from engine.resources import bundled_dir
from engine.rulebook import Rulebook, load_rulebook
from engine.trial import verified

SCHEMA_VERSION = 1
_CANDIDATE_FIELDS = frozenset(s.name for s in CANDIDATE)


class Decision(BaseModel):
    """A recommendation: the JSON contract of DESIGN.md."""

    # "constants": a non-finite float reaches jsonout's exact path, which refuses it
    model_config = ConfigDict(frozen=True, defer_build=True, ser_json_inf_nan="constants")

    schema_version: int
    decision_id: str
    engine_version: str
    ruleset: dict[str, Any]
    catalog: dict[str, Any]
    answers: dict[str, Any]
    facts: dict[str, Any]
    decisions: dict[str, AxisDecision]
    hardware: Hardware
    warnings: list[Note]
    strategies: list[Note]
    estimates: dict[str, Any]
    fired: list[Firing]

    def to_json(self) -> str:
        """Deterministic JSON text (same input → same bytes, decision_id aside)."""
        from engine.render.jsonout import dumps

        return dumps(self)


@dataclass(frozen=True)
class Evaluation:
    """A decision with the request facts and candidate facts the rules saw."""

    decision: Decision
    request_facts: dict[str, Any]
    candidate_facts: list[dict[str, Any]]


@dataclass(frozen=True)
class Engine:
    """A loaded, compiled policy (rules + catalog) ready to evaluate many requests."""

    catalog: Catalog
    rulebook: Rulebook
    compiled: Compiled
    evaluator: Evaluator

    @classmethod
    def build(cls, catalog: Catalog, rulebook: Rulebook,
              compiled: Compiled | None = None) -> Engine:
        """Compile the rulebook (unless given compiled) and create its durable_rules host."""
        compiled = compiled if compiled is not None else compile_policy(rulebook)
        return cls(catalog, rulebook, compiled, Evaluator(compiled))

    def recommend(self, answers: Answers, *, decision_id: str | None = None) -> Decision:
        """Evaluate one team's answers."""
        return self.evaluate(answers, decision_id=decision_id).decision

    def evaluate(self, answers: Answers, *, decision_id: str | None = None) -> Evaluation:
        """The decision plus the facts it was made on (request and candidates), for tracing."""
        facts = build_facts(answers, self.catalog)
        set_values, request_firings = self._request_rules(facts)
        values = {**facts.values, **set_values}
        axes, warnings, strategies = decide_axes(self.rulebook, request_firings, values)
        choices = {axis: d.choice for axis, d in axes.items() if d.choice is not None}
        shared, own = self._candidates(facts, answers, values, choices)
        candidates = [{**shared, **c.fixed, **c.varying} for c in own]
        reads = self.compiled.reads["candidate"]
        # Each candidate fact in three parts: the request's (converted and signed once per
        # request), its configuration's (converted once per catalog, signed once per
        # process), and the rest.
        common = {**{k: v for k, v in durable_fact(shared, reads).items()
                     if k not in _CANDIDATE_FIELDS}, "kind": "candidate"}
        varying_reads = [name for name in own[0].varying if name in reads] if own else []
        fixed = [c.fixed_durable for c in own]
        candidate_firings = self._run("candidate", 0, [
            {**common, **part, **durable_fact(c.varying, varying_reads)}
            for c, part in zip(own, fixed, strict=True)
        ], common, fixed)
        scored = score_candidates(self.rulebook, candidate_firings, candidates)
        hardware = choose_hardware(scored)
        if hardware.choice is not None:
            warnings = sort_warnings([*warnings, *(
                n for n in hardware.choice.warnings if n.severity is not None)])
            strategies = [*strategies, *(
                n for n in hardware.choice.warnings if n.severity is None
                and n.id not in {s.id for s in strategies})]
        file_order = self.rulebook.file_order
        fired = sorted({*request_firings, *candidate_firings},
                       key=lambda p: (file_order[p[0]], p[1]))
        decision = Decision(
            schema_version=SCHEMA_VERSION,
            decision_id=decision_id or new_decision_id(),
            engine_version=__version__,
            ruleset={"hash": self.rulebook.hash, "rule_count": len(self.rulebook.rules)},
            catalog={"hash": self.catalog.hash},
            answers=answers.model_dump(mode="json"),
            facts=values,
            decisions=axes,
            hardware=hardware,
            warnings=warnings,
            strategies=strategies,
            estimates=_estimates(facts),
            fired=firings(fired),
        )
        return Evaluation(decision, values, candidates)

    def _request_rules(self, facts: Facts) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """Run the request strata in order, feeding each one the facts the last one set."""
        set_values: dict[str, Any] = {}
        firings: list[tuple[str, str]] = []
        precedence = self.rulebook.precedence
        for stratum in range(self.rulebook.strata):
            fact = {**durable_fact({**facts.values, **set_values},
                                   self.compiled.reads["request"]), "kind": "request",
                    "fact_id": "request"}
            fired = self._run("request", stratum, [fact])
            firings.extend(fired)
            for rule_id, _ in sorted(set(fired), key=lambda p: precedence[p[0]]):
                for effect in self.rulebook.rule(rule_id).model.then:
                    if effect.set is not None and effect.set.fact not in set_values:
                        set_values[effect.set.fact] = effect.set.value
        return set_values, firings

    def _run(self, kind: str, stratum: int, facts: list[dict[str, Any]],
             common: dict[str, Any] | None = None,
             fixed: list[Mapping[str, Any]] | None = None) -> list[tuple[str, str]]:
        fired: list[tuple[str, str]] = []
        if not facts:
            return fired
        for ruleset in self.compiled.stratum(kind, stratum):
            # durable_fact() already made every value a representable scalar
            fired.extend(self.evaluator.run(ruleset, facts, checked=True, common=common,
                                            fixed=fixed))
        return fired

    def _candidates(self, facts: Facts, answers: Answers, values: dict[str, Any],
                    choices: dict[str, str]) -> tuple[dict[str, Any], list[CandidateFacts]]:
        """The request facts every candidate carries (copies and decisions), and the
        candidates' own facts."""
        candidates = build_candidates(facts, answers, self.catalog, choices)
        shared = {name: values.get(name) for name in self.compiled.candidate_copies}
        shared.update({f"{axis}_choice": option for axis, option in choices.items()})
        return shared, candidates


def _estimates(facts: Facts) -> dict[str, Any]:
    sizing = facts.values["sizing_method"]
    memory = facts.memory[sizing]
    return {
        "memory": {
            "method": sizing,
            "total_gb": memory.total_gb,
            "range_gb": memory.range_gb,
            "binding_phase": memory.binding_phase,
            "gradient_checkpointing": memory.gradient_checkpointing,
            "breakdown": memory.breakdown,
            "by_method_gb": {m: e.total_gb for m, e in facts.memory.items()},
        },
        "break_even_hours": facts.values.get("break_even_hours"),
        "training": _training(facts),
        "traces": {k: v.model_dump(mode="json") for k, v in sorted(facts.traces.items())},
    }


def _training(facts: Facts) -> dict[str, Any] | None:
    run = facts.training
    if run is None:
        return None
    return {
        "tokens_b": run.tokens_b,
        "tokens_from": run.tokens_from,
        "on": f"{run.gpus} × {run.gpu} ({facts.values.get('cloud_offer')})",
        "gpu_hours": run.gpu_hours.model_dump(),
        "days": run.days.model_dump(),
        "cost_usd": None if run.cost_usd is None else run.cost_usd.model_dump(),
    }


def new_decision_id() -> str:
    """A sortable id: 12 hex digits of milliseconds since the epoch, then 8 random ones."""
    return f"{int(time.time() * 1000):012x}{secrets.token_hex(4)}"


_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()


def load_engine(rules: Path | None = None, catalog: Path | None = None,
                prices: Path | None = None) -> Engine:
    """Load, check and compile a policy once per process (keyed by path and content).

    Across processes the validated catalog and rulebook and their compiled rulesets come
    from the user cache when no file changed (see ``engine.cache``).
    """
    from engine.cache import cached_policy, content_key

    rules_dir = rules or bundled_dir("rules")
    catalog_dir = catalog or bundled_dir("catalog")
    key = content_key(rules_dir, catalog_dir, prices)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            def build() -> tuple[Catalog, Rulebook, Compiled]:
                cat = load_catalog(catalog, prices=prices)
                book = load_rulebook(rules, cat)
                return cat, book, compile_policy(book)

            cat, book, compiled = cached_policy(key, build)
            _ENGINES[key] = Engine.build(cat, book, compiled)
        return _ENGINES[key]


def compile_policy(rulebook: Rulebook) -> Compiled:
    """The rulebook compiled to durable_rules rulesets for this engine's candidate facts, and
    built once in a bounded trial (so a cached policy is known to build)."""
    return verified(compile_rulebook(rulebook, _CANDIDATE_FIELDS))


def recommend(answers: Answers, *, rules: Path | None = None, catalog: Path | None = None,
              prices: Path | None = None) -> Decision:
    """Recommend for one team with the bundled (or given) policy."""
    return load_engine(rules, catalog, prices).recommend(answers)


__all__ = ["Decision", "Engine", "EngineError", "load_engine", "recommend"]
