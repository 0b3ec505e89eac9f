"""Combine rule firings into decisions: exclusions, summed weights, declared-order ties."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from engine.rules.load import Rule, Rulebook
from engine.rules.templates import fill

SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


class _Out(BaseModel):
    # "constants": a non-finite float reaches jsonout's exact path, which refuses it
    model_config = ConfigDict(frozen=True, defer_build=True, ser_json_inf_nan="constants")


class Reason(_Out):
    """Why an option or candidate gained or lost: the rule, its effect, the text, sources."""

    rule: str
    effect: Literal["prefer", "avoid", "exclude"]
    weight: float
    text: str
    sources: list[str]


class OptionScore(_Out):
    """One option of an axis with its summed score and reasons."""

    option: str
    score: float
    excluded: bool
    reasons: list[Reason]


class AxisDecision(_Out):
    """The chosen option of an axis and the full ranking.

    ``revised_from``/``revision``: the rules chose another option, but no configuration that
    holds the job offers it, so the decision became ``choice`` for the reason given.
    """

    choice: str | None
    ranking: list[OptionScore]
    applies: bool = True
    """False when another decision makes this one moot (pricing when buying)."""
    revised_from: str | None = None
    revision: str | None = None
    follows: str | None = None
    """The configuration fact whose value on the pick is the choice (``chosen_by: pick`` in
    decisions.yaml), else None: the rules' highest score chose it."""


class Note(_Out):
    """A warning (with severity) or a strategy raised by a rule."""

    id: str
    severity: Literal["info", "warning", "critical"] | None = None
    rule: str
    text: str
    sources: list[str]


class CandidateCost(_Out):
    """What a configuration costs for the year's work."""

    upfront_usd: float
    per_hour_usd: float
    fixed_usd_year: float
    per_year_usd: float
    per_run_usd: float
    start_up_usd_per_run: float
    """What a rented run pays on the whole configuration to start and finish."""
    range_usd: dict[str, float]
    """The cost a year at the high and low ends of the throughput range (``low``, ``high``)."""
    first_year_usd: float | None = None
    """What the budget check counts: an owned configuration's purchase, a rented one's year
    with the evaluation and failed runs the programme adds."""


class Pool(_Out):
    """How a configuration runs the jobs that must run at the same time."""

    jobs_at_once: int
    layout: str
    """In words: ``a job needs 8.5 GiB: 7 MIG slices of 10 GiB (1g.10gb) on each GPU, 14 jobs
    at once``."""
    mig_profile: str | None
    """The MIG profile each job gets (None: whole GPUs)."""
    job_gib: float
    """The memory each job gets (its slice, or its GPUs)."""
    always_on: bool
    """It must be there whenever jobs arrive: paid for every hour of the year."""


class Candidate(_Out):
    """A scored hardware configuration (the decision JSON, docs/architecture.md)."""

    id: str
    gpu: str
    gpu_name: str
    gpu_label: str
    count: int
    nodes: int
    where: Literal["local", "cloud"]
    provider: str | None
    provider_name: str
    provider_label: str
    provider_kind: Literal["local", "hyperscaler", "specialised", "marketplace"]
    offer: str | None
    instance: str | None
    link: str | None = None
    """The page that sells a rented pick (None for owned GPUs)."""
    price_as_of: str | None = None
    """The date of its price: the offer's, or the GPU's purchase price."""
    platform: str | None
    region: str | None
    location: str | None = None
    """Where to deploy a rented pick: the provider's region code, city and country of its
    first location the residency answer allows (``ap-northeast-1 (Tokyo, jp)``)."""
    pricing: str
    reserved_months: int | None
    reserved_days: int | None = None
    """A reserved block bought for each run comes in steps of these days (an AWS Capacity
    Block: 1; None for a term in months or no reservation)."""
    method: str
    """The method it is priced for (``pretrain``, ``full``, ``lora``, ``qlora``)."""
    precision: str = "bf16"
    """The training precision its speed assumes (``fp8`` only where asked and possible)."""
    gradient_checkpointing: bool
    vram_needed_gib: float
    vram_without_checkpointing_gib: float
    vram_total_gib: float
    usd_per_gpu_hour: float
    access: Literal["self-serve", "account", "contract"]
    plan: bool
    """The GPUs the team plans, at the planned count."""
    owned: bool = False
    """The team's own GPUs (purchase spent)."""
    resale_usd: float = 0.0
    """Owned: what selling them would bring."""
    upkeep_usd_year: float = 0.0
    """Owned: their upkeep a year, paid whether they train or idle."""
    added_to_owned: int = 0
    """GPUs to buy beside the team's own to make ``count`` (omitted when none)."""
    used: bool = False
    """Bought used: the catalog prices these cards second-hand (omitted when not)."""
    busy_hours_per_year: float
    busy_share: float
    """Busy hours ÷ hours in a year: the share of the year owned or reserved GPUs work (they
    are paid for the rest too)."""
    runs_per_year: float
    run_hours: float
    """Hours one run trains."""
    start_up_hours: float
    """Hours a rented run spends starting and finishing (provisioning, downloads, upload)."""
    spot_rework_hours: float
    """Expected hours a spot run loses to interruptions and checkpoints."""
    days_per_run: float | None
    cost: CandidateCost
    score: float
    reasons: list[Reason]
    pool: Pool | None = None
    """With concurrent_jobs above 1: how it runs them at once (omitted otherwise)."""
    warnings: list[Note] | None = None
    """The warnings and strategies its rules raised: with ``trace`` only (the pick's are in
    the decision's own warnings and strategies either way)."""

    @model_serializer(mode="wrap")
    def _omit_untraced(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.warnings is None:
            del data["warnings"]
        if self.pool is None:
            del data["pool"]
        if not self.added_to_owned:
            del data["added_to_owned"]
        if not self.used:
            del data["used"]
        return data


def to_buy(used: bool) -> str:
    """How a configuration to be bought is offered: ``to buy``, or ``to buy used``."""
    return "to buy used" if used else "to buy"


class Excluded(_Out):
    """Configurations one rule excluded for one reason: the rule, its text, their ids."""

    rule: str
    reason: str
    ids: list[str]


class Cheaper(_Out):
    """A configuration that costs less for the work than the pick, and why the pick won."""

    id: str
    label: str
    """``8× A100 40GB, AWS on-demand`` or ``2× RTX 4090, owned``."""
    per_year_usd: float
    rule: str
    reason: str


class Rival(_Out):
    """A configuration weighed against the pick: the team's plan, or a close call."""

    id: str
    label: str
    per_year_usd: float
    upfront_usd: float
    premium: float
    """Its cost for the work over the pick's, minus one (0.05: 5 % more; negative: less)."""
    busy_share: float
    """Hours it is busy ÷ hours in a year."""
    days_per_run: float | None
    excluded: bool
    reason: str | None
    """Why it is not the pick (the rule that excluded or scored it down), if it is not."""
    within_year: bool = True
    """Whether it does the year's work in the hours it can be busy (a decision recorded
    before this field: taken as doing it)."""


class Hardware(_Out):
    """The chosen configuration, alternatives, and what rules excluded."""

    choice: Candidate | None
    alternatives: list[Candidate]
    considered: int
    excluded: list[Excluded]
    cheaper: Cheaper | None = None
    """The cheapest configuration the pick beat despite costing more, if any, and why."""
    plan: Rival | None = None
    """The GPUs the team plans, priced for the same work (the pick itself when it wins)."""
    close_calls: list[Rival] = []
    """Eligible configurations whose cost for the work is within the policy's close-call
    margin of the pick's, of another GPU or on the other side (owned vs rented)."""
    owned_why_not: str | None = None
    """Why the team's own GPUs cannot do the work: the first rule that excluded them."""



def text_of(rule: Rule, facts: Mapping[str, Any]) -> str:
    """The rule's ``because`` text filled from facts."""
    return fill(rule.because_parts, facts)


def reason(rule: Rule, kind: str, weight: float, text: str) -> Reason:
    """The reason ``rule`` gives for an option or candidate."""
    return Reason(rule=rule.id, effect=kind, weight=weight, text=text,
                  sources=list(rule.model.sources))


def note(rule: Rule, note_id: str, severity: str | None, text: str) -> Note:
    """A warning (with severity) or strategy raised by ``rule``."""
    return Note(id=note_id, severity=severity, rule=rule.id, text=text,
                sources=list(rule.model.sources))


def fired_by_rule(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Rule → the facts it fired on, rules in order of first firing, facts in firing order."""
    out: dict[str, list[str]] = {}
    for rule, fact in dict.fromkeys(pairs):  # the first of each pair, in order
        facts = out.get(rule)
        if facts is None:
            out[rule] = [fact]
        else:
            facts.append(fact)
    return out


def first_exclusions(groups: Sequence[Excluded]) -> list[Excluded]:
    """``groups`` (as :func:`excluded` orders them) in the lean decision's form: each
    configuration under the first rule that excluded it only, one entry per rule, whose
    reason is that of its first configuration (the reason of each one comes with trace);
    made the same way from a traced decision's groups."""
    seen: set[str] = set()
    by_rule: dict[str, list[Excluded]] = {}
    for group in groups:
        ids = [i for i in group.ids if i not in seen]
        seen.update(ids)
        if ids:
            by_rule.setdefault(group.rule, []).append(group.model_copy(update={"ids": ids}))
    out = []
    for rule, rule_groups in by_rule.items():
        ordered = sorted(rule_groups, key=lambda g: g.ids[0])
        out.append(Excluded(rule=rule, reason=ordered[0].reason,
                            ids=sorted(i for g in ordered for i in g.ids)))
    return out


def keeps_every_exclusion(*, traced: bool, refusal: bool) -> bool:
    """Whether a decision lists every rule that excluded each configuration (traced, or a
    refusal, where no configuration is eligible and what shut out each one is the answer)
    or only each configuration's first."""
    return traced or refusal


def lean_exclusions(groups: Sequence[Excluded], *, refusal: bool) -> list[Excluded]:
    """The exclusions a decision made without trace keeps (see
    :func:`keeps_every_exclusion`)."""
    if keeps_every_exclusion(traced=False, refusal=refusal):
        return list(groups)
    return first_exclusions(groups)


def request_firings(fired: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """``fired`` without candidate facts, as a decision made without trace holds it (a rule
    that fired on candidates alone maps to an empty list)."""
    return {rule: [f for f in facts if f == "request"] for rule, facts in fired.items()}


def _order(book: Rulebook, firings: Iterable[tuple[str, str]]) -> list[tuple[Rule, str]]:
    """Firings in a deterministic order: priority (high first), then file order, then fact."""
    precedence = book.precedence
    rule = book.rule
    return [(rule(rule_id), fact) for rule_id, fact in
            sorted(set(firings), key=lambda p: (precedence[p[0]], p[1]))]


def decide_axes(book: Rulebook, firings: Iterable[tuple[str, str]],
                facts: Mapping[str, Any]) -> tuple[dict[str, AxisDecision], list[Note],
                                                   list[Note]]:
    """Per axis: drop excluded options, sum weights, break ties by declared order; with each
    option's reasons and the warnings and strategies, their texts filled from ``facts``."""
    ordered = _order(book, firings)
    reasons: dict[tuple[str, str], list[Reason]] = {}
    warnings: list[Note] = []
    strategies: list[Note] = []
    for rule, _ in ordered:
        text = text_of(rule, facts)
        for effect in rule.model.then:
            kind, body = effect.kind, effect.body
            if kind in ("prefer", "avoid", "exclude"):
                weight = 0.0 if kind == "exclude" else body.weight
                reasons.setdefault((body.decision, body.option), []).append(
                    reason(rule, kind, weight, text))
            elif kind == "warn":
                warnings.append(note(rule, body.id, body.severity, text))
            elif kind == "suggest":
                strategies.append(note(rule, body.id, None, text))
    return _ranked(book, ordered, reasons), sort_warnings(warnings), _dedupe(strategies)


def rank_axes(book: Rulebook, firings: Iterable[tuple[str, str]]) -> dict[str, AxisDecision]:
    """Each axis' choice and ranking as :func:`decide_axes` makes them, without reasons: what
    a phase of the request rules leaves decided for the next step, no text filled."""
    return _ranked(book, _order(book, firings), {})


def _ranked(book: Rulebook, ordered: Sequence[tuple[Rule, str]],
            reasons: Mapping[tuple[str, str], list[Reason]]) -> dict[str, AxisDecision]:
    """Per axis: drop excluded options, sum weights (in firing order, effect by effect: the
    same floats every time), break ties by declared order."""
    scores: dict[str, dict[str, float]] = {a: dict.fromkeys(o, 0.0)
                                           for a, o in book.decisions.items()}
    excluded: dict[str, set[str]] = {a: set() for a in book.decisions}
    for rule, _ in ordered:
        for effect in rule.model.then:
            kind, body = effect.kind, effect.body
            if kind == "exclude":
                excluded[body.decision].add(body.option)
            elif kind in ("prefer", "avoid"):
                scores[body.decision][body.option] += (body.weight if kind == "prefer"
                                                       else -body.weight)
    axes = {}
    for axis, options in book.decisions.items():
        ranking = [
            OptionScore(option=o, score=scores[axis][o], excluded=o in excluded[axis],
                        reasons=reasons.get((axis, o), []))
            for o in options
        ]
        ranked = sorted(ranking, key=lambda r: (r.excluded, -r.score, options.index(r.option)))
        choice = ranked[0].option if not ranked[0].excluded else None
        axes[axis] = AxisDecision(choice=choice, ranking=ranked)
    return axes


def sort_warnings(warnings: Sequence[Note]) -> list[Note]:
    """Critical first, then warning, then info; each id once per rule."""
    unique = _dedupe(warnings, key=lambda n: (n.id, n.rule))
    return sorted(unique, key=lambda n: SEVERITY_ORDER[n.severity or "info"])


def _dedupe(notes: Sequence[Note], key: Any = None) -> list[Note]:
    key = key or (lambda n: n.id)
    seen: set[Any] = set()
    out = []
    for note in notes:
        if key(note) not in seen:
            seen.add(key(note))
            out.append(note)
    return out


SHOWN_TRACES = ("break_even_work", "pick_cost_usd_year", "pick_purchase_usd",
                "pick_start_up_hours", "pick_spot_rework_hours")
"""The formula traces of figures the advice itself prints (the break-even chart, the pick's
cost and purchase): in every decision. The others come with ``trace``."""


class Decision(BaseModel):
    """A recommendation: the JSON contract of docs/architecture.md (``schema_version`` 3).

    Lean by default; made with ``trace`` it also holds every formula trace, each
    configuration's own notes and the candidates each candidate rule fired on.
    """

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
    fired: dict[str, list[str]]
    """Rule → the facts it fired on, in order of first firing (candidates with trace only)."""

    def to_json(self) -> str:
        """Deterministic JSON text (same input → same bytes, decision_id aside)."""
        from engine.files.jsonout import dumps

        return dumps(self)

    def untraced(self, facts: Collection[str]) -> Decision:
        """This decision as made without ``trace``, keeping ``facts`` (the engine's
        :attr:`Engine.lean_facts`): the same bytes a lean run gives."""
        hw = self.hardware
        lean = hw.model_copy(update={
            "choice": hw.choice and hw.choice.model_copy(update={"warnings": None}),
            "alternatives": [c.model_copy(update={"warnings": None}) for c in hw.alternatives],
            "excluded": lean_exclusions(hw.excluded, refusal=hw.choice is None)})
        traces = {k: v for k, v in self.estimates["traces"].items() if k in SHOWN_TRACES}
        return self.model_copy(update={
            "facts": {k: v for k, v in self.facts.items() if k in facts},
            "hardware": lean, "estimates": {**self.estimates, "traces": traces},
            "fired": request_firings(self.fired)})

