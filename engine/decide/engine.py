"""The pipeline: answers → facts → durable_rules firings → decisions → hardware → Decision."""

from __future__ import annotations

import functools
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from engine.answers.model import Answers, validate_answers
from engine.catalog.load import Catalog, content_hash, load_catalog
from engine.catalog.models import MethodGroup, Policy
from engine.catalog.prices import PriceInput, read_prices
from engine.decide.candidates import (
    SHARE_SUFFIX,
    PricedCandidate,
    against_sooner,
    against_the_wait,
    build_candidates,
    for_share,
    with_ratios,
)
from engine.decide.decision import (
    SHOWN_TRACES,
    AxisDecision,
    Decision,
    Hardware,
    Note,
    decide_axes,
    fired_by_rule,
    rank_axes,
    reason,
    request_firings,
    sort_warnings,
    text_of,
)
from engine.decide.owned_options import owned_options, peaks_facts
from engine.decide.pick import (
    LIGHTER_METHODS,
    candidate_notes,
    hardware,
    own_best,
    own_too_small,
    owned_beside,
    score_candidates,
    with_lighter_method,
)
from engine.decide.sides import (
    Revision,
    Scored,
    best,
    deployment_facts,
    longer_run_facts,
    pool_sharing,
    queued_owning_facts,
    resolve_cloud,
    summary_facts,
    vendor_limit_facts,
)
from engine.errors import EngineError
from engine.estimates.figure import figure, tidy
from engine.estimates.programme import programme, storage_price
from engine.estimates.workload import Workload
from engine.facts.build import (
    Facts,
    Sizing,
    build_facts,
    longest_run,
    methods_allowed,
    shared_of,
    size,
    steady_jobs,
)
from engine.facts.spec import CANDIDATE, OPTION_SUMMARY_AXES, RANKED
from engine.gc_pause import collector_paused
from engine.resources import bundled_dir
from engine.rules.compile import Compiled, compile_rulebook
from engine.rules.evaluate import Evaluator, SharedFacts
from engine.rules.limits import durable_fact
from engine.rules.load import Rule, Rulebook, load_rulebook
from engine.rules.trial import verified
from engine.version import __version__

SCHEMA_VERSION = 3
SHOWN_FACTS = frozenset({"model_name", "params_b", "hours_gpu_name", "dev_gpu_name",
                         "dev_gpu_count", "dev_purchase_usd", "owned_gpu_name",
                         "api_cost_usd_month", "api_name", "own_cost_usd_month",
                         "own_serving_usd_month", "own_training_usd_month",
                         "api_break_even_tokens_m"})
"""Facts the advice prints (its summary lines), in every decision beside the facts the
request rules read; the other facts come with ``trace``."""
_CANDIDATE_FIELDS = frozenset(s.name for s in (*CANDIDATE, *RANKED))


@dataclass(frozen=True)
class Evaluation:
    """A decision with the request facts and candidate facts the rules saw, and every fact
    each rule fired on (whether or not the decision was made with ``trace``)."""

    decision: Decision
    request_facts: dict[str, Any]
    candidate_facts: list[dict[str, Any]]
    fired: dict[str, list[str]]


@dataclass(frozen=True)
class RequestProbe:
    """What :meth:`Engine.request_probe` finds for some answers.

    Two answers with equal ``candidate_inputs`` get the same candidates, scored alike; with
    the same ``cloud_side`` too, the same cloud and owned configurations are weighed, so the
    deployment facts are the same; with the same ``outcome`` as well, the recommendation
    makes the same choices.
    """

    candidate_inputs: tuple[Any, ...]
    """The sizing, the request facts candidate rules read, the choices after phase 1."""
    cloud_side: tuple[Any, ...]
    """Every axis' choice and ranking after phase 2 (what the cloud side is resolved by)."""
    outcome: tuple[Any, ...]
    """Every axis' choice and ranking once the request rules of every phase have run."""
    choices: dict[str, str | None]
    """Every axis' choice then."""


@dataclass
class _Run:
    """One request on its way through the phases."""

    answers: Answers
    facts: Facts
    set_values: dict[str, Any]
    fired: list[tuple[str, str]]

    @property
    def values(self) -> dict[str, Any]:
        return {**self.facts.values, **self.set_values}


@dataclass(frozen=True)
class _Made:
    """A request with its axes decided: what the rules saw and what the pick is."""

    run: _Run
    axes: dict[str, AxisDecision]
    warnings: list[Note]
    strategies: list[Note]
    methods: tuple[MethodGroup, ...]
    candidates: list[PricedCandidate]
    scored: list[Scored]
    local: Scored | None
    cloud: Scored | None
    choice: Scored | None


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

    @cached_property
    def lean_facts(self) -> frozenset[str]:
        """The facts a decision made without ``trace`` holds: those the request rules read
        (what they decided on) beyond the answers, which the decision holds already, and
        those the advice prints."""
        answers = {question.id for question in self.catalog.questions}
        return (self.compiled.reads["request"] - answers) | SHOWN_FACTS

    def untraced(self, decision: Decision) -> Decision:
        """``decision`` as this engine makes it without ``trace``."""
        return decision.untraced(self.lean_facts)

    def recommend(self, answers: Answers | Mapping[str, Any], *,
                  decision_id: str | None = None, trace: bool = False) -> Decision:
        """Evaluate one team's answers (with every trace when ``trace``): validated
        :class:`Answers`, or a mapping validated here (:class:`InputError` if it is not)."""
        return self.evaluate(answers, decision_id=decision_id, trace=trace).decision

    def evaluate(self, answers: Answers | Mapping[str, Any], *,
                 decision_id: str | None = None, trace: bool = False) -> Evaluation:
        """The decision plus the facts it was made on (request and candidates), for tracing.

        The axes are decided as :meth:`choices` describes; the pick follows the decisions.
        The cyclic garbage collector is paused meanwhile (``engine.gc_pause``).
        """
        with collector_paused():
            return self._evaluate(answers, decision_id, trace)

    def _evaluate(self, answers: Answers | Mapping[str, Any], decision_id: str | None,
                  trace: bool) -> Evaluation:
        answers = self._answers(answers)
        made = self._made(answers)
        run, axes, choice = made.run, made.axes, made.choice
        policy = self.catalog.policy
        least = policy.thresholds.get("close_call_least_usd_year")  # None: an earlier policy
        hw = hardware(choice, made.scored, axes, self.rulebook, trace=trace,
                      margin=policy.close_call_margin.value,
                      least_usd=0.0 if least is None else least.value,
                      reach=policy.thresholds["far_over_budget_ratio"].value,
                      owned_usd=owned_beside(choice, run.values))
        hw = self._own_with_lighter(made, hw)
        warnings, strategies = made.warnings, made.strategies
        if choice is not None:
            notes = candidate_notes(choice)
            warnings = sort_warnings([*warnings, *(n for n in notes if n.severity is not None)])
            strategies = [*strategies, *(
                n for n in notes if n.severity is None
                and n.id not in {s.id for s in strategies})]
        values = run.values
        fired = fired_by_rule(run.fired)
        decision = Decision(
            schema_version=SCHEMA_VERSION,
            decision_id=decision_id or new_decision_id(),
            engine_version=__version__,
            ruleset={"hash": self.rulebook.hash, "rule_count": len(self.rulebook.rules)},
            catalog={"hash": self.catalog.hash, **({"prices": [
                c.record() for c in self.catalog.price_changes]}
                if self.catalog.price_changes else {})},
            answers=answers.model_dump(mode="json"),
            facts=values if trace else {k: v for k, v in values.items()
                                        if k in self.lean_facts},
            decisions=axes,
            hardware=hw,
            warnings=warnings,
            strategies=strategies,
            estimates={**_estimates(run.facts, made.methods, choice, made.local, made.cloud,
                                    trace=trace),
                       "programme": self._programme(run, choice),
                       **self._owned_options(made, choice)},
            fired=fired if trace else request_firings(fired),
        )
        return Evaluation(decision, values, [c.facts for c in made.candidates], fired)

    def _own_with_lighter(self, made: _Made, hw: Hardware) -> Hardware:
        """Where the team's own GPUs cannot hold its job with the method it asked for but
        would with a lighter one, say so, with what they would cost (one more evaluation a
        lighter method, for such a team only)."""
        answers = made.run.answers
        lighter = LIGHTER_METHODS.get(answers.method, ())
        if (hw.owned_why_not is None or not lighter or answers.workload != "fine-tune"
                or not own_too_small(made.scored)):
            return hw
        for method in lighter:
            own = own_best(self._made(answers.model_copy(update={"method": method})).scored)
            if own is not None:
                return hw.model_copy(update={"owned_why_not": with_lighter_method(
                    hw.owned_why_not, method, own)})
        return hw

    def _owned_options(self, made: _Made, choice: Scored | None) -> dict[str, Any]:
        """``owned_options`` for a team that owns GPUs (nothing otherwise)."""
        answers = made.run.answers
        found = owned_options(made.scored, choice, self.catalog.policy,
                              answers.concurrent_jobs, steady_jobs(answers),
                              owned_run_bound(made.run, self.catalog.policy))
        return {} if found is None else {"owned_options": found}

    def _programme(self, run: _Run, choice: Scored | None) -> dict[str, Any] | None:
        """The training programme's bill a year around the pick's compute."""
        if choice is None or run.facts.shape is None:
            return None
        c = choice.config
        catalog = self.catalog
        shared = shared_of(run.answers, catalog, run.facts.shape, c.train_method)
        provider = catalog.providers.get(c.provider) if c.where == "cloud" else None
        price = storage_price(provider, c.where != "cloud", catalog.policy)
        compute = choice.candidate.cost
        owned = (run.values.get("peaks_owned_usd_year") if choice.id.endswith(SHARE_SUFFIX)
                 else None)  # the team's own GPUs do part of the work
        if owned is not None:
            compute = figure(compute.value + float(owned), compute.unit,
                             "rent for the jobs your own GPUs do not hold at once + their "
                             "power on the jobs they hold (their upkeep is paid either way)"
                             if run.values.get("peaks_split") == "jobs" else
                             "rent of the peaks + power of your own GPUs busy on the rest of "
                             "the work (their upkeep is paid either way)",
                             [*compute.sources, "price.local-tco-parts"],
                             rent_usd=compute.value, own_gpus_usd=float(owned))
        # the team's own GPUs keep the base weights; a rented run downloads them
        return programme(shared, compute, price, catalog.policy,
                         rented=c.where == "cloud" and owned is None).record()

    def choices(self, answers: Answers) -> dict[str, AxisDecision]:
        """The decided axes of ``answers`` alone (what :meth:`recommend` decides, without
        the pick's figures, notes and output): what-if's full run.

        Phase 1: request rules decide approach and method. The job is sized for them and every
        candidate built and scored. Phase 2: rules decide cloud kind, pricing and sharing from
        how the candidates compare; the cloud side is resolved. Phase 3: rules decide
        deployment from owning vs renting the same work.
        """
        return self.decided(answers)[0]

    def decided(self, answers: Answers) -> tuple[dict[str, AxisDecision], bool]:
        """:meth:`choices`, and whether a configuration does the work (there is a pick)."""
        made = self._made(answers)
        return made.axes, made.choice is not None

    def _answers(self, answers: Answers | Mapping[str, Any]) -> Answers:
        """Validated answers; anything else is an :class:`InputError`."""
        if isinstance(answers, Answers):
            return answers
        if not isinstance(answers, Mapping):
            from engine.errors import InputError

            raise InputError(f"expected answers (a mapping of question → answer), got "
                             f"{type(answers).__name__}")
        return validate_answers(dict(answers), self.catalog)

    def _made(self, answers: Answers) -> _Made:
        """The request rules of every phase with the configurations built, scored and weighed
        between them (:meth:`_request`); the axes decided once, from every firing; the pick
        and what it revises."""
        priced = _Priced(self)
        run = self._request(answers, priced)
        axes, warnings, strategies = decide_axes(self.rulebook, _request_only(run.fired),
                                                 run.values)
        axes = _applicable(axes, self.rulebook)
        choice, revision = _pick(axes["deployment"], priced.local, priced.cloud)
        peaks: list[Revision] = []
        if axes["deployment"].choice == "hybrid" and choice is priced.cloud:
            choice, peaks = self._peaks_pick(run, priced, choice, axes["pricing"].choice)
        if {o.option for o in axes["deployment"].ranking if o.excluded} & {"local", "cloud"}:
            # owning or renting is not open to this team: no break-even to weigh
            run.facts.traces.pop("break_even_work", None)
            for name in ("break_even_work", "payback_years"):
                run.facts.values.pop(name, None)
        shared = pool_sharing(choice, axes["sharing"].choice)
        axes = _revised(axes, [*priced.revisions, *([revision] if revision else []), *peaks,
                               *([shared] if shared else [])], self.rulebook)
        axes = _followed(axes, choice, priced.scored, self.rulebook)
        return _Made(run, axes, warnings, strategies, priced.methods, priced.candidates,
                     priced.scored, priced.local, priced.cloud, choice)

    def _peaks_pick(self, run: _Run, priced: _Priced, cloud: Scored | None,
                    pricing: str | None) -> tuple[Scored | None, list[Revision]]:
        """A hybrid of the team's own GPUs and rented peaks: the configuration that rents
        them priced for the share of the work the own GPUs leave, with the pricing revised
        where the decided one was a committed term (``cloud`` where it is not that)."""
        share = run.values.get("peaks_owned_share")
        rented_id = run.values.get("peaks_rented_candidate")
        rented = next((s for s in priced.scored if s.id == rented_id), None)
        if rented is None or share is None or priced.sizing is None:
            return cloud, []
        rest = for_share(self.catalog, priced.sizing, rented.candidate, 1 - float(share),
                         int(run.values.get("peaks_rented_jobs") or 0))
        if rest is None:
            return cloud, []
        after = rest.config.pricing
        revised = [] if pricing in (None, after) else [Revision(
            "pricing", str(pricing), after,
            f"the peaks beside your own GPUs are rented by the hour: {after}")]
        return Scored(rest, rented.score, rented.excluded, rented.rules), revised

    def request_probe(self, answers: Answers, held: Mapping[str, Any]) -> RequestProbe:
        """What the request rules of every phase decide for ``answers`` with the facts made
        from the candidates (summary and deployment facts) ``held`` at given values, and what
        the candidates would be built and scored from: the recommendation's own
        :meth:`_request`, with no candidate built, nothing picked or revised. What-if's quick
        probe (see :class:`RequestProbe`)."""
        side = _Held(held, self.compiled.candidate_copies)
        axes = self._rank(self._request(answers, side))
        return RequestProbe(side.inputs, side.cloud_side, _outcome(axes),
                            {name: axis.choice for name, axis in axes.items()})

    def _request(self, answers: Answers, side: _Side) -> _Run:
        """The request rules of every phase on ``answers``' facts. Phase 1 decides approach and
        method, and the job is sized for them; ``side`` then gives the facts the
        configurations make for phase 2 (how they compare) and, from its rankings, for phase 3
        (owning against renting the same work)."""
        run = _Run(answers, build_facts(answers, self.catalog), {}, [])
        self._phase(run, 1)
        axes = self._rank(run)
        methods = _methods(axes, answers.workload)
        side.summary(run, axes, methods, size(run.facts, answers, self.catalog, methods))
        self._phase(run, 2)
        side.deployment(run, self._rank(run))
        self._phase(run, 3)
        return run

    def _phase(self, run: _Run, phase: int) -> None:
        """Run the request rules of one phase, layer by layer, feeding each the facts the
        layers before it set."""
        precedence = self.rulebook.precedence
        for stratum in range(self.rulebook.strata(phase)):
            fact = SharedFacts({**durable_fact(run.values, self.compiled.reads["request"]),
                                "kind": "request"}, (), [{}], ["request"])
            fired = self._run("request", phase, stratum, fact)
            run.fired.extend(fired)
            for rule_id, _ in sorted(set(fired), key=lambda p: precedence[p[0]]):
                for effect in self.rulebook.rule(rule_id).model.then:
                    if effect.set is not None and effect.set.fact not in run.set_values:
                        run.set_values[effect.set.fact] = effect.set.value

    def _rank(self, run: _Run) -> dict[str, AxisDecision]:
        """The axes as the request rules that have run so far rank them (no reasons)."""
        return rank_axes(self.rulebook, _request_only(run.fired))

    def _score(self, run: _Run, candidates: list[PricedCandidate],
               choices: dict[str, Any], stretched_from: float | None = None) -> list[Scored]:
        """Candidate rules in two rounds: the second sees costs relative to the cheapest
        configuration the first left eligible (and, where steady work stretched the run
        limit of held capacity past ``stretched_from`` days, the cheapest within it)."""
        values = run.values
        shared = {name: values.get(name) for name in self.compiled.candidate_copies}
        shared.update(choices)
        reads = self.compiled.reads["candidate"]
        # what every candidate fact shares, converted once per request; each candidate's own
        # fields are read from its facts where a ruleset signs them (ratios in round 2)
        common = {**durable_fact(shared, [n for n in reads if n in shared]),
                  "kind": "candidate"}
        for cand in candidates:
            cand.facts.update({k: v for k, v in shared.items() if k not in cand.facts})
        facts = SharedFacts(common, tuple(n for n in reads if n not in shared),
                            [cand.facts for cand in candidates], [cand.id for cand in candidates])
        fired = self._run("candidate", 1, 0, facts)
        scored = score_candidates(self.rulebook, fired, candidates)
        eligible = {s.id: not s.excluded for s in scored}
        against_sooner(candidates, eligible, self.catalog.policy)
        against_the_wait(candidates, eligible, self.catalog.policy, stretched_from)
        with_ratios(candidates, eligible)
        fired += self._run("candidate", 2, 0, facts)
        run.fired.extend(fired)
        return score_candidates(self.rulebook, fired, candidates)

    def _run(self, kind: str, phase: int, stratum: int,
             facts: SharedFacts) -> list[tuple[str, str]]:
        fired: list[tuple[str, str]] = []
        if not facts.ids:
            return fired
        precedence = self.rulebook.precedence
        for ruleset in self.compiled.stratum(kind, phase, stratum):
            # durable_fact() makes every value a representable scalar
            found = self.evaluator.run_shared(ruleset, facts)
            # one order however the firings were found (a session, or verdicts reused): by
            # rule precedence (a position, one per rule), then fact id
            on = fired_by_rule(found)
            for rule_id in sorted(on, key=precedence.__getitem__):
                ids = on[rule_id]
                ids.sort()
                fired += [(rule_id, fact_id) for fact_id in ids]
        return fired


class _Side(Protocol):
    """What the request rules of phases 2 and 3 read of the configurations."""

    def summary(self, run: _Run, axes: Mapping[str, AxisDecision],
                methods: tuple[MethodGroup, ...], sizing: Sizing) -> None:
        """After phase 1 (``axes`` as it ranks them, the job sized for ``methods``): the
        summary facts."""

    def deployment(self, run: _Run, axes: Mapping[str, AxisDecision]) -> None:
        """After phase 2 (``axes`` as it ranks them): the deployment facts."""


@dataclass
class _Priced:
    """A recommendation's configurations: built and scored for the sizing, compared for the
    rules of phase 2; the cloud side resolved and weighed against owning for phase 3."""

    engine: Engine
    methods: tuple[MethodGroup, ...] = ()
    candidates: list[PricedCandidate] = field(default_factory=list)
    scored: list[Scored] = field(default_factory=list)
    local: Scored | None = None
    cloud: Scored | None = None
    revisions: list[Revision] = field(default_factory=list)
    sizing: Sizing | None = None

    def summary(self, run: _Run, axes: Mapping[str, AxisDecision],
                methods: tuple[MethodGroup, ...], sizing: Sizing) -> None:
        book = self.engine.rulebook
        self.methods, self.sizing = methods, sizing
        self.candidates = build_candidates(self.engine.catalog, sizing)
        choices = {f"{axis}_choice": axes[axis].choice for axis in book.early_axes}
        self.scored = self.engine._score(run, self.candidates, choices, sizing.stretched_from)
        ecosystem = run.values.get("cloud_ecosystem")
        policy = self.engine.catalog.policy
        reach = policy.thresholds["far_over_budget_ratio"].value
        ruled_out = {book.fields[name]: frozenset(o.option for o in axes[name].ranking
                                                  if o.excluded)
                     for name in OPTION_SUMMARY_AXES}
        run.facts.values.update(summary_facts(self.scored, book, ecosystem, reach,
                                              {k: v for k, v in ruled_out.items() if v},
                                              policy.close_call_margin.value))
        run.facts.values["ecosystem_cloud_name"] = self.engine.catalog.ecosystem_name(ecosystem)

    def deployment(self, run: _Run, axes: Mapping[str, AxisDecision]) -> None:
        self.cloud, self.revisions = resolve_cloud(
            self.scored, _ranked(axes["cloud_kind"]), _ranked(axes["pricing"]),
            self.engine.rulebook.fields,
            self.engine.catalog.policy.thresholds["hyperscaler_premium_ratio"].value)
        self.local = best(self.scored, where="local")
        assert run.facts.work is not None
        policy = self.engine.catalog.policy
        owned = [s for s in self.scored if not s.excluded and s.config.where == "local"]
        assert self.sizing is not None
        facts, line = deployment_facts(self.local, self.cloud, run.facts.work, policy, owned,
                                       self.sizing.stretched_from)
        run.facts.values.update(facts)
        bound = longest_run(run.answers, run.facts.work, policy)
        run.facts.values.update(peaks_facts(self.scored, self.cloud, policy,
                                            run.answers.concurrent_jobs,
                                            steady_jobs(run.answers),
                                            owned_run_bound(run, policy)))
        if line is not None:
            run.facts.traces["break_even_work"] = line
        saving = policy.thresholds.get("longer_run_min_saving")  # None: an earlier policy
        if run.values.get("run_deadline_days") is None and bound is not None and saving:
            kinds, pricings = _ranked(axes["cloud_kind"]), _ranked(axes["pricing"])
            run.facts.values.update(longer_run_facts(
                self.scored, bound, kinds[0] if kinds else None,
                pricings[0] if pricings else None,
                [s for s in (self.local, self.cloud) if s is not None],
                saving.value,
                run.values.get("cloud_ecosystem") if run.values.get("own_cloud_holds_job")
                else None))
        queued = policy.thresholds.get("queued_owning_min_saving")  # None: an earlier policy
        if run.answers.concurrent_jobs > 1 and queued:
            split = run.values.get("peaks_cost_usd_year")  # the team's own GPUs and rent
            run.facts.values.update(queued_owning_facts(
                self.local, self.cloud, queued.value,
                float(run.values.get("compute_budget_usd") or 0.0),
                None if split is None else float(split)))
        limit = policy.thresholds.get("vendor_limit_min_saving")  # None: an earlier policy
        if run.answers.gpu_vendors and limit:
            # rented: of the kind and pricing the rented side resolved to (the decided ones
            # where nothing is rented)
            kinds, pricings = _ranked(axes["cloud_kind"]), _ranked(axes["pricing"])
            kind, pricing = ((self.cloud.config.provider_kind, self.cloud.config.pricing)
                             if self.cloud is not None else
                             (kinds[0] if kinds else None, pricings[0] if pricings else None))
            run.facts.values.update(vendor_limit_facts(
                self.scored, [s for s in (self.local, self.cloud) if s is not None],
                kind, pricing, limit.value))


def owned_run_bound(run: _Run, policy: Policy) -> float | None:
    """The days a run on the team's own GPUs may take where they do only a share of steady
    work and the team set no limit: the policy's bound on a steady run (None: the limit of
    every configuration holds)."""
    if (run.answers.usage_pattern != "continuous" or run.values.get("run_deadline_days")
            is not None or run.facts.work is None):
        return None
    return longest_run(run.answers, run.facts.work, policy)


@dataclass
class _Held:
    """What-if's quick probe: no configuration is built; the facts they would make are held
    at given values, and what they would be built and scored from, and the rankings the
    cloud side would be resolved by, are kept."""

    held: Mapping[str, Any]
    copies: frozenset[str]
    """The request facts candidate rules read (``Compiled.candidate_copies``)."""
    inputs: tuple[Any, ...] = ()
    cloud_side: tuple[Any, ...] = ()

    def summary(self, run: _Run, axes: Mapping[str, AxisDecision],
                methods: tuple[MethodGroup, ...], sizing: Sizing) -> None:
        values = run.values
        # every phase-1 choice: those the candidate rules read among them
        self.inputs = (sizing, {name: values.get(name) for name in self.copies},
                       {name: axis.choice for name, axis in axes.items()})
        run.facts.values.update(self.held)

    def deployment(self, run: _Run, axes: Mapping[str, AxisDecision]) -> None:
        self.cloud_side = _outcome(axes)


def _methods(axes: Mapping[str, AxisDecision], workload: str) -> tuple[MethodGroup, ...]:
    """The methods candidates are built for, from the phase-1 decisions."""
    return methods_allowed(axes["approach"].choice,
                           [o.option for o in axes["method"].ranking if not o.excluded],
                           workload)


def _followed(axes: dict[str, AxisDecision], choice: Scored | None, scored: list[Scored],
              book: Rulebook) -> dict[str, AxisDecision]:
    """The axes chosen by the pick (``chosen_by: pick``) take the picked configuration's
    value, with the reasons the candidate rules gave on that hardware for the options it
    kept and dropped (the method: why this method on this configuration)."""
    if choice is None:
        return {**axes, **{axis: axes[axis].model_copy(update={"choice": None, "follows": field})
                           for axis, field in book.picked.items()}}
    out = dict(axes)
    hardware = choice.candidate.hardware
    for axis, field_name in book.picked.items():
        option = str(choice.facts[field_name])
        notes = [reason(rule, "prefer", 0.0, text_of(rule, s.facts))
                 for s in scored if s.candidate.hardware == hardware and s is not choice
                 for rule in s.rules if rule.scoring[0]
                 and _speaks_of(rule, field_name)]
        ranking = [o.model_copy(update={"reasons": [*o.reasons, *notes]})
                   if o.option == option else o for o in axes[axis].ranking]
        ranking.sort(key=lambda o: (o.option != option, o.excluded, -o.score))
        out[axis] = axes[axis].model_copy(update={"choice": option, "ranking": ranking,
                                                  "follows": field_name})
    return out


def _speaks_of(rule: Rule, field_name: str) -> bool:
    """The rule reads the configuration fact an axis follows, or its neighbours'."""
    return any(name in rule.reads for name in (field_name, "better_method", "worse_method"))


def _outcome(axes: Mapping[str, AxisDecision]) -> tuple[Any, ...]:
    """Each axis' choice, open options in rank order and excluded options."""
    return tuple((name, axis.choice, tuple(_ranked(axis)),
                  frozenset(o.option for o in axis.ranking if o.excluded))
                 for name, axis in sorted(axes.items()))


def _request_only(fired: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [f for f in fired if f[1] == "request"]


def _ranked(axis: AxisDecision) -> list[str]:
    """The options of an axis, best first, without the excluded ones."""
    return [o.option for o in axis.ranking if not o.excluded]


def _applicable(axes: dict[str, AxisDecision], book: Rulebook) -> dict[str, AxisDecision]:
    """Mark the axes another decision makes moot (decisions.yaml ``applies_when``)."""
    out = {}
    for name, axis in axes.items():
        when = book.applies_when.get(name, {})
        applies = all(axes[other].choice in options for other, options in when.items())
        # both ways: a revised deployment (local → cloud) makes cloud kind and pricing count
        out[name] = axis if applies == axis.applies else axis.model_copy(
            update={"applies": applies})
    return out


def _pick(deployment: AxisDecision, local: Scored | None,
          cloud: Scored | None) -> tuple[Scored | None, Revision | None]:
    """The configuration the deployment decision points at; the other side, said why, when
    that side has no eligible configuration."""
    ranked = _ranked(deployment)
    wanted = deployment.choice
    side = local if wanted == "local" else cloud
    if side is not None or wanted is None:
        return side, None
    other, option = (cloud, "cloud") if wanted == "local" else (local, "local")
    if other is None or option not in ranked:
        return None, None
    what = "owned configuration" if wanted == "local" else "rented configuration"
    return other, Revision("deployment", wanted, option,
                           f"no {what} that holds this job is eligible: {option}")


def _revised(axes: dict[str, AxisDecision], revisions: list[Revision],
             book: Rulebook) -> dict[str, AxisDecision]:
    out = dict(axes)
    for rev in revisions:
        out[rev.axis] = out[rev.axis].model_copy(update={
            "choice": rev.after, "revised_from": rev.before, "revision": rev.text})
    return _applicable(out, book) if revisions else out


def _traces(facts: Facts, choice: Scored | None, local: Scored | None,
            cloud: Scored | None, *, trace: bool) -> dict[str, Any]:
    """Formula traces by figure: all of them with ``trace``, else those the advice prints."""
    def wanted(name: str) -> bool:
        return trace or name in SHOWN_TRACES

    traces = {k: v.model_dump(mode="json") for k, v in sorted(facts.traces.items())
              if wanted(k)}
    for label, entry in (("pick", choice), ("local", local), ("cloud", cloud)):
        if entry is None:
            continue
        candidate = entry.candidate
        for name, line in ((f"{label}_cost_usd_year", candidate.cost),
                           (f"{label}_effective_tflops", candidate.speed),
                           (f"{label}_purchase_usd", candidate.purchase)):
            if line is not None and wanted(name):
                traces[name] = line.model_dump(mode="json")
    return traces


def _estimates(facts: Facts, methods: tuple[MethodGroup, ...], choice: Scored | None,
               local: Scored | None, cloud: Scored | None, *, trace: bool) -> dict[str, Any]:
    method = choice.config.train_method if choice is not None else methods[-1]
    memory = facts.memory[method]
    work = facts.works.get(method, facts.work)
    assert work is not None
    traces = _traces(facts, choice, local, cloud, trace=trace)
    return {
        "memory": {
            "method": method,
            "total_gib": memory.total_gib,
            "range_gib": memory.range_gib,
            "binding_phase": memory.binding_phase,
            "gradient_checkpointing": memory.gradient_checkpointing,
            "breakdown": memory.breakdown,
            "by_method_gib": {m: e.total_gib for m, e in facts.memory.items()},
        },
        "work": {
            "mode": work.mode,
            "tokens_per_run_b": work.tokens_per_run_b,
            "tokens_from": work.tokens_from,
            "runs_per_year": work.runs_per_year,
            "runs_assumed": work.runs_assumed,
            "hours_per_year": work.hours_per_year,
            "hours_assumed": work.hours_assumed,
            "hours_gpu": work.hours_gpu,
            "units": tidy(work.units, 2),
            "unit": work.unit,
            "flops_per_run": float(f"{work.flops_per_run:.4g}"),
            "flops_per_year": float(f"{work.flops_per_year:.4g}"),
            "reference_gpu_hours": round(work.reference_gpu_hours, 1),
        },
        "break_even": _break_even(facts),
        "training": _training(work, choice),
        "traces": traces,
    }


def _break_even(facts: Facts) -> dict[str, Any] | None:
    line = facts.traces.get("break_even_work")
    if line is None:
        return None
    return {"work": tidy(line.value, 2), "unit": line.unit,
            "own": line.inputs["own"], "rent": line.inputs["rent"],
            "payback_years": facts.values.get("payback_years"),
            "write_off_years": facts.values.get("write_off_years")}


def _training(work: Workload, choice: Scored | None) -> dict[str, Any] | None:
    """One training run on the pick: GPU-hours, days (start-up included) and its cost."""
    if choice is None:
        return None
    c = choice.config
    return {
        "tokens_b": work.tokens_per_run_b,
        "tokens_from": work.tokens_from,
        "on": c.candidate_id,
        "gpus": c.count,
        "gpu": c.gpu,
        "method": c.train_method,
        "flops": float(f"{work.flops_per_run:.4g}"),
        "gpu_hours": round(c.run_hours * c.count, 1),
        "training_hours": c.run_hours,
        "start_up_hours": c.start_up_hours,
        "days": c.days_per_run,
        "cost_usd": round(c.cost_usd_per_run, 2) if c.where == "cloud" else None,
    }


def new_decision_id() -> str:
    """16 random hex digits: ids differ from their first digits, so a few are enough to name
    one (`audit show 3f9c2a`). Records are ordered by the store, not by id."""
    return secrets.token_hex(8)


_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()


def load_engine(rules: Path | None = None, catalog: Path | None = None,
                prices: Path | PriceInput | None = None) -> Engine:
    """Load, check and compile a policy once per process (keyed by path and content).

    Across processes the validated catalog and rulebook come from the user cache when no
    file changed (see ``engine.decide.policy_cache``), and are compiled again. A price
    file counts by what the catalog holds of it (text, layout, provider, date), so a CSV
    dated by its modification time misses the cache when touched.
    """
    from engine.decide.policy_cache import cached_policy, content_key

    rules_dir = rules or bundled_dir("rules")
    catalog_dir = catalog or bundled_dir("catalog")
    if isinstance(prices, Path):
        prices = read_prices(prices)
    key = content_key(rules_dir, catalog_dir) + (
        f":prices:{content_hash(prices.texts())}" if prices is not None else "")
    with _ENGINES_LOCK, collector_paused():  # a policy is made of long-lived objects
        if key not in _ENGINES:
            def build() -> tuple[Catalog, Rulebook, Compiled]:
                cat = load_catalog(catalog, prices=prices)
                book = load_rulebook(rules, cat)
                return cat, book, compile_policy(book)

            cat, book, compiled = cached_policy(
                key, build, functools.partial(compile_rulebook,
                                              candidate_fields=_CANDIDATE_FIELDS))
            _ENGINES[key] = Engine.build(cat, book, compiled)
        return _ENGINES[key]


def compile_policy(rulebook: Rulebook) -> Compiled:
    """The rulebook compiled to durable_rules rulesets for this engine's candidate facts, and
    built once in a bounded trial (so a cached policy is known to build)."""
    return verified(compile_rulebook(rulebook, _CANDIDATE_FIELDS))


def recommend(answers: Answers | Mapping[str, Any], *, rules: Path | None = None,
              catalog: Path | None = None, prices: Path | PriceInput | None = None,
              trace: bool = False) -> Decision:
    """Recommend for one team with the bundled (or given) policy; ``answers`` is an
    :class:`Answers` or a mapping of answers, checked like an answers file. ``trace`` adds
    every formula trace and per-candidate firing to the lean default decision."""
    engine = load_engine(rules, catalog, prices)
    if not isinstance(answers, Answers):
        answers = validate_answers(dict(answers), engine.catalog, require_model=True,
                                   read_model_files=True)
    return engine.recommend(answers, trace=trace)


__all__ = ["Decision", "Engine", "EngineError", "load_engine", "recommend"]
