"""From scored candidates and decided axes to the hardware section of a decision.

The pick is the best configuration (rule score, then cost for the year's work) on the side
the deployment decision chose, of the decided cloud kind and pricing when rented. The output
lists it with the best alternatives, the excluded configurations with the rule that excluded
each, and the cheapest configuration the pick beat although it costs more, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from engine.catalog.models import METHOD_NAMES
from engine.decide.candidates import SHARE_SUFFIX, PricedCandidate
from engine.decide.configuration import Configuration, pronouns
from engine.decide.decision import (
    AxisDecision,
    CandidateCost,
    Cheaper,
    Excluded,
    Hardware,
    Note,
    Pool,
    Reason,
    Rival,
    fired_by_rule,
    keeps_every_exclusion,
    note,
    reason,
    text_of,
    to_buy,
)
from engine.decide.decision import (
    Candidate as CandidateOut,
)
from engine.decide.sides import Scored
from engine.estimates.figure import dollars, tidy
from engine.rules.load import Rule, Rulebook

ALTERNATIVES = 4


def score_candidates(book: Rulebook, firings: Iterable[tuple[str, str]],
                     candidates: Sequence[PricedCandidate]) -> list[Scored]:
    """Sum candidate-rule weights per candidate (texts are rendered later, only if shown)."""
    scored = {c.id: Scored(c) for c in candidates}
    on = fired_by_rule(firings)
    # each candidate's rules in precedence order (candidates are apart: their order is not)
    for rule_id in sorted(on, key=book.precedence.__getitem__):
        rule = book.rule(rule_id)
        excludes, deltas = rule.scoring
        for cid in on[rule_id]:
            entry = scored[cid]
            entry.rules.append(rule)
            if excludes:
                entry.excluded = True
            for delta in deltas:  # one by one, in effect order: the same float sums every time
                entry.score += delta
    return list(scored.values())


def hardware(choice: Scored | None, scored: Sequence[Scored],
             axes: Mapping[str, AxisDecision], book: Rulebook, *, margin: float,
             least_usd: float = 0.0, reach: float = math.inf,
             trace: bool = False, owned_usd: float = 0.0) -> Hardware:
    """The hardware section: the pick, alternatives, exclusions, the cheaper row it beat,
    the team's plan and the close calls (within ``margin`` of the pick's cost; a cheaper
    one that is no sooner only where it saves ``least_usd`` a year or more), each said
    why against the decided ``axes`` of ``book``; GPUs added to the team's own are shown
    always only where their first year costs under ``reach`` times the budget; with
    ``trace``, each configuration's own warnings and strategies, and every rule that
    excluded a configuration (else the first only). ``owned_usd``: the power of the team's
    own GPUs beside a pick that rents only a share of the work, so that configurations doing
    all of it are weighed against the whole cost."""
    plan = plan_of(scored, choice, axes, book)
    near, instead = (close_calls(choice, scored, margin, axes, book, least_usd=least_usd,
                                 owned_usd=owned_usd)
                     if choice else NearTies([], []))
    return Hardware(
        choice=rendered_candidate(choice, notes=trace) if choice else None,
        alternatives=[rendered_candidate(s, notes=trace)
                      for s in alternatives(choice, scored,
                                            keep=[plan, _best_added(choice, scored, reach),
                                                  *near, *instead])],
        considered=len(scored),
        excluded=(excluded(scored) if keeps_every_exclusion(traced=trace,
                                                            refusal=choice is None)
                  else first_excluded(scored)),
        cheaper=cheaper(choice, scored, axes, book, owned_usd) if choice else None,
        plan=rival(choice, plan, axes, book, owned_usd) if choice and plan else None,
        close_calls=[rival(choice, s, axes, book, owned_usd) for s in near] if choice else [],
        owned_why_not=_owned_why_not(scored, choice),
    )


def _best_added(choice: Scored | None, scored: Sequence[Scored],
                reach: float) -> Scored | None:
    """The best-ranked eligible configuration that adds GPUs to the team's own, unless the
    pick is one or its first year costs ``reach`` times the budget or more (8 bought H100s
    beside the one a $10,000 team owns are not an alternative for it)."""
    if choice is not None and choice.config.owned_added:
        return None
    return min((s for s in scored if s.config.owned_added and not s.excluded
                and float(s.facts.get("budget_ratio") or 0.0) < reach),
               key=lambda s: s.sort_key, default=None)


def owned_beside(choice: Scored | None, facts: Mapping[str, Any]) -> float:
    """The power of the team's own GPUs a year beside a pick that rents only the share of
    the work they leave (``peaks_owned_usd_year`` of the request ``facts``; 0 otherwise):
    :func:`hardware`'s ``owned_usd``."""
    if choice is None or not choice.id.endswith(SHARE_SUFFIX):
        return 0.0
    return float(facts.get("peaks_owned_usd_year") or 0.0)


def _owned_why_not(scored: Sequence[Scored], choice: Scored | None) -> str | None:
    """The reason of the first rule that excluded the team's own GPUs, when every method's
    configuration of them was excluded: a rule that excluded all of them where one did (a
    vendor the team cannot use); else of a method that fits them where one does (what else
    kept them out says more than that a heavier method does not fit), the pick's method
    first, then the best."""
    mine = [s for s in scored if s.config.is_owned]
    if not mine or not all(s.excluded for s in mine):
        return None
    if choice is not None and choice.id.endswith(SHARE_SUFFIX):
        return None  # they take a share of steady work in runs past the default limit
    method = choice.facts.get("train_method") if choice is not None else None
    first = min(mine, key=lambda s: (not s.facts.get("fits"),
                                     s.facts.get("train_method") != method,
                                     s.facts.get("method_rank", 0), s.id))
    excluding = [r for r in first.rules if r.scoring[0]]
    everywhere = [r for r in excluding if all(r in s.rules for s in mine)]
    rule = min(everywhere or excluding, key=lambda r: r.order)
    facts = first.facts
    # only the run limit kept them out: every rule that excluded them reads it
    slow = (facts.get("fits") and facts.get("meets_deadline") is False
            and all("meets_deadline" in r.reads for r in excluding))
    days = math.ceil(facts.get("days_per_run") or 0)
    given = facts.get("run_deadline_days")
    words = pronouns(first.config.count)
    hint = ("" if not slow else
            f" If a run may take {days:,} days, say so (max_days_per_run) and {words.they} "
            f"{words.do} it for {words.their} {POWER_ALONE}"
            if given is None else
            f" With runs of up to {days:,} days (max_days_per_run is {given:g}) {words.they} "
            f"would do it for {words.their} {POWER_ALONE}")
    return text_of(rule, facts) + hint


POWER_ALONE = "power alone."
"""How the reason the team's own GPUs are kept out ends where only the run limit keeps them
out: a longer limit lets them do the work."""


LIGHTER_METHODS: dict[str, tuple[str, ...]] = {"full": ("lora", "qlora"), "lora": ("qlora",)}
"""The methods lighter than one a team asked for, the better first."""


def own_too_small(scored: Sequence[Scored]) -> bool:
    """Whether the team's own GPUs are all kept out because the job does not fit them."""
    mine = [s for s in scored if s.config.is_owned]
    return bool(mine) and all(s.excluded and not s.facts.get("fits") for s in mine)


def own_best(scored: Sequence[Scored]) -> Scored | None:
    """The cheapest configuration of the team's own GPUs that does the work, if any."""
    return _cheapest([s for s in scored if s.config.is_owned and not s.excluded])


def with_lighter_method(why_not: str, method: str, own: Scored) -> str:
    """``why_not`` (why the team's own GPUs cannot do the work), then what they would cost
    with the lighter ``method`` that fits them."""
    c = own.config
    words = pronouns(c.count)
    return (f"{why_not.rstrip('.')}; with {METHOD_NAMES.get(method, method)} (method: "
            f"{method}) {words.they} would hold it, for ~${c.cost_usd_year:,.0f} a year of "
            f"{words.their} power.")


def plan_of(scored: Sequence[Scored], choice: Scored | None = None,
            axes: Mapping[str, AxisDecision] | None = None,
            book: Rulebook | None = None) -> Scored | None:
    """The team's planned configuration: of those marked as the plan, the best-ranked one
    that goes along with the decisions the pick followed (``axes`` of ``book``: the plan as
    the pick is bought or rented, even where a rule excluded it, which the plan line then
    says), else the best-ranked eligible one."""
    planned = [s for s in scored if s.config.is_plan]
    if not planned:
        return None

    def along(s: Scored) -> bool:
        return (choice is None or axes is None or book is None
                or axis_against(book, axes, choice.facts, s.facts) is None)

    return min(planned, key=lambda s: (not along(s), s.excluded, s.sort_key))


class NearTies(NamedTuple):
    """What :func:`close_calls` finds."""

    calls: list[Scored]
    """The close calls."""
    instead: list[Scored]
    """For each decision a cheaper configuration within the margin went against and that
    also keeps out one cheaper by more than the margin, the cheapest it keeps out: shown
    instead, since that decision was not close."""


def close_calls(choice: Scored, scored: Sequence[Scored], margin: float,
                axes: Mapping[str, AxisDecision], book: Rulebook,
                limit: int = 2, *, least_usd: float = 0.0, owned_usd: float = 0.0
                ) -> NearTies:
    """Eligible configurations of another GPU, place, kind of cloud or pricing (one each)
    whose cost for the work is within ``margin`` of the pick's (at most ``limit``): first
    those that cost no more, finish a run more than ``margin`` sooner and go against none of
    the decided ``axes`` (the pick won on a rule of its own, not on the work or a decision),
    then those that cost no more and finish sooner against a decision (a trade the team may
    weigh), then the nearest in cost. What would tip the decision is then said with them.
    One that costs more, finishes no sooner, needs no less up front and goes against a
    decision or ranks no higher is no call at all: the pick beats it on every count.
    One that costs less by under ``least_usd`` a year and finishes no sooner is none either:
    the sum is no decision to weigh.
    One that costs a little less is no close call either where a decision it goes against
    also keeps out one that costs less by more than ``margin``: that decision was not close
    (staying in the team's hyperscaler at 2.3× the best other cloud is no close call with
    another cloud 10 % cheaper), and the far cheaper one is shown instead."""
    cost, days = choice.config.cost_usd_year + owned_usd, choice.config.days_per_run
    eligible = [s for s in scored if not s.excluded and s is not choice]
    far: dict[str, Scored] | None = None  # found once, where a cheaper rival asks

    def sooner(s: Scored) -> bool:
        """Finishes a run more than ``margin`` sooner than the pick."""
        return s.config.days_per_run < days * (1 - margin)

    def order(s: Scored) -> tuple[bool, bool, float]:
        c = s.config
        trade = c.cost_usd_year <= cost and sooner(s)
        better = trade and axis_against(book, axes, choice.facts, s.facts) is None
        return not better, not trade, abs(c.cost_usd_year - cost)

    def beaten(s: Scored) -> bool:
        c = s.config
        return (c.cost_usd_year > cost and not sooner(s)
                and c.upfront_usd >= choice.config.upfront_usd
                and (s.score <= choice.score
                     or axis_against(book, axes, choice.facts, s.facts) is not None))

    def trifling(s: Scored) -> bool:
        """Saves under ``least_usd`` a year and finishes no sooner: no decision to weigh."""
        return cost - least_usd < s.config.cost_usd_year < cost and not sooner(s)

    found: list[Scored] = []
    instead: list[Scored] = []
    seen = {_side(choice)}
    for entry in sorted(eligible, key=order):
        other = entry.config.cost_usd_year
        if (not cost or abs(other - cost) > margin * cost or _side(entry) in seen
                or beaten(entry) or trifling(entry)):
            continue
        if other < cost:
            if far is None:
                far = _cheapest_kept_out(choice, eligible, cost * (1 - margin), axes, book)
            axis = axis_against(book, axes, choice.facts, entry.facts) if far else None
            cheaper_still = far.get(axis) if axis is not None else None
            if cheaper_still is not None:
                if cheaper_still not in instead:
                    instead.append(cheaper_still)
                continue
        seen.add(_side(entry))
        found.append(entry)
        if len(found) >= limit:
            break
    return NearTies(found, instead)


def _cheapest_kept_out(choice: Scored, eligible: Iterable[Scored], below: float,
                       axes: Mapping[str, AxisDecision], book: Rulebook) -> dict[str, Scored]:
    """Per decision, the cheapest of the ``eligible`` configurations costing less than
    ``below`` that it keeps out (the first axis each goes against)."""
    kept_out: dict[str, list[Scored]] = {}
    for s in eligible:
        if s.config.cost_usd_year < below:
            axis = axis_against(book, axes, choice.facts, s.facts)
            if axis is not None:
                kept_out.setdefault(axis, []).append(s)
    return {axis: found for axis, group in kept_out.items()
            if (found := _cheapest(group)) is not None}


def rival(choice: Scored, entry: Scored, axes: Mapping[str, AxisDecision],
          book: Rulebook, owned_usd: float = 0.0) -> Rival:
    """``entry`` against the pick (its cost with ``owned_usd``, as :func:`hardware` takes
    it): its cost, how much more, how busy, why it is not the pick."""
    c, cost = entry.config, choice.config.cost_usd_year + owned_usd
    reason_text: str | None = None
    if entry is not choice:
        if entry.excluded:
            rule = next((r for r in entry.rules if r.scoring[0]), None)
            reason_text = text_of(rule, entry.facts) if rule else None
        else:
            rule_id, text = _why_not(choice, entry, axes, book)
            reason_text = None if rule_id == "hardware.rank" else text
    return Rival(id=entry.id, label=label(entry), per_year_usd=dollars(c.cost_usd_year),
                 upfront_usd=c.upfront_usd,
                 premium=tidy(c.cost_usd_year / cost - 1, 3) if cost else 0.0,
                 busy_share=c.utilisation, days_per_run=c.days_per_run,
                 excluded=entry.excluded, reason=reason_text,
                 within_year=entry.facts.get("within_year") is not False)


def alternatives(choice: Scored | None, scored: Sequence[Scored],
                 limit: int = ALTERNATIVES, keep: Sequence[Scored | None] = ()) -> list[Scored]:
    """The best configuration of each other GPU and place, by rank, with the cheapest
    eligible configuration, the best one on the other side and those in ``keep`` (the plan,
    the close calls) always among them (the best by rank first where they share a GPU and
    place)."""
    ranked = sorted((s for s in scored if not s.excluded and s is not choice),
                    key=lambda s: s.sort_key)
    seen = {_group(choice)} if choice else set()
    picked: list[Scored] = []
    kept = [s for s in keep if s is not None and s is not choice and not s.excluded]
    must = [*kept, *(s for s in (_other_side(choice, ranked), _cheapest(ranked))
                     if s is not None)]
    room = max(limit, len({id(s) for s in must}))  # what must be shown always fits
    for entry in [*must, *ranked]:
        if len(picked) >= room:
            break
        if (entry in kept and entry not in picked) or _group(entry) not in seen:
            seen.add(_group(entry))
            picked.append(entry)
    return sorted(picked, key=lambda s: s.sort_key)


def _group(entry: Scored) -> tuple[str, str]:
    c = entry.config
    place = "yours" if c.is_owned else "yours+" if c.owned_added else c.where
    return c.gpu, place


def _side(entry: Scored) -> tuple[str, ...]:
    """The GPU, place and, rented, the kind of cloud and pricing: the same GPU rented on
    another kind of cloud or another pricing is a rival of its own (24× B200 on Google Cloud
    beside the same on Nebius)."""
    c = entry.config
    if c.where == "local":
        return _group(entry)
    return (*_group(entry), c.provider_kind, c.pricing)


def _cheapest(ranked: Sequence[Scored]) -> Scored | None:
    return min(ranked, key=lambda s: (s.config.cost_usd_year, s.id), default=None)


def _other_side(choice: Scored | None, ranked: Sequence[Scored]) -> Scored | None:
    if choice is None:
        return None
    return next((s for s in ranked if s.config.where != choice.config.where), None)


def excluded(scored: Sequence[Scored]) -> list[Excluded]:
    """The excluded configurations, one entry per rule and reason with the ids it excluded
    (a configuration under each rule that excluded it); in rule order, then by first id."""
    groups: dict[tuple[str, str], tuple[int, list[str]]] = {}
    for entry in sorted(scored, key=lambda s: s.id):
        if not entry.excluded:
            continue
        for rule in entry.rules:
            if rule.scoring[0]:
                key = (rule.id, text_of(rule, entry.facts))
                groups.setdefault(key, (rule.order, []))[1].append(entry.id)
    ordered = sorted(groups.items(), key=lambda g: (g[1][0], g[1][1][0]))
    return [Excluded(rule=rule, reason=reason, ids=ids) for (rule, reason), (_, ids) in ordered]


def first_excluded(scored: Sequence[Scored]) -> list[Excluded]:
    """``first_exclusions(excluded(scored))``, rendering only the reasons it keeps: each
    configuration under the first rule (in file order) that excluded it, one entry per rule
    with the reason of its first configuration by id."""
    firsts: dict[str, tuple[Rule, list[Scored]]] = {}
    for entry in scored:
        if entry.excluded:
            rule = min((r for r in entry.rules if r.scoring[0]), key=lambda r: r.order)
            firsts.setdefault(rule.id, (rule, []))[1].append(entry)
    out = []
    for rule, entries in sorted(firsts.values(), key=lambda found: found[0].order):
        entries.sort(key=lambda s: s.id)
        out.append(Excluded(rule=rule.id, reason=text_of(rule, entries[0].facts),
                            ids=[e.id for e in entries]))
    return out


def label(entry: Scored) -> str:
    """How a person names a configuration: ``8× A100 40GB, AWS on-demand``."""
    return label_of(entry.config)


def label_of(c: Configuration) -> str:
    """:func:`label` of a configuration."""
    where = ("yours" if c.is_owned else to_buy(c.condition == "used")) \
        if c.where == "local" else f"{c.provider_label} {c.pricing}"
    if c.owned_added:
        where = f"yours + {c.owned_added} bought"
    return f"{c.count:,}× {c.gpu_label}, {where}"


def cheaper(choice: Scored, scored: Sequence[Scored], axes: Mapping[str, AxisDecision],
            book: Rulebook, owned_usd: float = 0.0) -> Cheaper | None:
    """The cheapest eligible configuration that costs less for the work than the pick (its
    cost with ``owned_usd``, as :func:`hardware` takes it), and the one reason it was not
    picked: a decision it goes against, or the rule that scored it lower."""
    cost = choice.config.cost_usd_year + owned_usd
    rivals = [s for s in scored if not s.excluded and s.config.cost_usd_year < cost]
    if not rivals:
        return None
    rival = min(rivals, key=lambda s: (s.config.cost_usd_year, s.id))
    rule, text = _why_not(choice, rival, axes, book)
    return Cheaper(id=rival.id, label=label(rival),
                   per_year_usd=rival.config.cost_usd_year, rule=rule, reason=text)


def _why_not(choice: Scored, rival: Scored, axes: Mapping[str, AxisDecision],
             book: Rulebook) -> tuple[str, str]:
    """A rented rival of another kind or pricing than decided was never on the rented side
    the deployment decision weighed (the axes that apply only where another decided come
    first); then a rival on the other side; then the rules. Where the decision it goes
    against was taken by declared order alone, a rule that scored the rival lower is the
    better reason (an offer sold under contract, say)."""
    for axis in narrow_first(book):
        if goes_against(axis, book, axes, choice.facts, rival.facts):
            against = reason_against(axis, axes[axis], str(rival.facts[book.fields[axis]]))
            if against is not None:
                return against
            rule, text = axis_reason(axis, axes[axis])
            if rule == axis:     # no rule preferred the option: the declared order
                by_rule = _strongest_rule(choice, rival)
                if by_rule[1] != "hardware.rank":
                    return by_rule[1], by_rule[2]
            # a rule against the rival, or for the pick but not about where or how it is
            # rented (that restates the decisions), that weighs more than the axis's reason
            own = _strongest_rule(choice, rival, placeless=frozenset(book.fields.values()))
            return (own[1], own[2]) if own[0] > axis_weight(axes[axis]) else (rule, text)
    _, rule, text = _strongest_rule(choice, rival)
    return rule, text


def strongest_against(decision: AxisDecision, option: str) -> Reason | None:
    """The weightiest reason (avoid or exclude) the rules gave against ``option`` of an
    axis, or None where there is none (or no such option)."""
    theirs = next((o for o in decision.ranking if o.option == option), None)
    if theirs is None:
        return None
    return max((r for r in theirs.reasons if r.effect in ("avoid", "exclude")),
               key=lambda r: r.weight, default=None)


def reason_against(axis: str, decision: AxisDecision, option: str) -> tuple[str, str] | None:
    """(rule, text): the strongest reason the rules gave against ``option`` of an axis
    (marketplace: "not for proprietary data"), where it weighs at least as much as the
    strongest reason for the choice: the more telling why-not. None otherwise, or where the
    axis was revised from ``option`` (the revision says why not)."""
    if decision.revision and option == decision.revised_from:
        return None
    chosen = next((o for o in decision.ranking if o.option == decision.choice), None)
    if chosen is None:
        return None
    against = strongest_against(decision, option)
    if against is None or (against.effect == "avoid" and against.weight < axis_weight(decision)):
        return None
    label = axis.replace("_", " ")
    return against.rule, f"{label} is {decision.choice}, not {option}: {against.text}"


def constrained_axes(book: Rulebook) -> list[str]:
    """The axes a configuration can go against, in declared order: those that constrain a
    configuration fact, but for those the pick chooses (``chosen_by: pick``)."""
    return [axis for axis in book.fields if axis not in book.picked]


def narrow_first(book: Rulebook) -> list[str]:
    """:func:`constrained_axes`, those that apply only where another axis decided (cloud kind
    and pricing: renting) first: a rented rival of another kind or pricing than decided was
    never on the rented side the deployment decision weighed."""
    return sorted(constrained_axes(book), key=lambda a: not book.applies_when.get(a))


def axis_against(book: Rulebook, axes: Mapping[str, AxisDecision],
                 pick: Mapping[str, Any] | None, rival: Mapping[str, Any]) -> str | None:
    """The first axis, in :func:`narrow_first` order, whose decision a configuration
    (``rival``, by its facts) goes against (:func:`goes_against`), or None."""
    return next((axis for axis in narrow_first(book)
                 if goes_against(axis, book, axes, pick, rival)), None)


def goes_against(axis: str, book: Rulebook, axes: Mapping[str, AxisDecision],
                 pick: Mapping[str, Any] | None, rival: Mapping[str, Any]) -> bool:
    """Whether a configuration (``rival``, by its facts) goes against the decision of
    ``axis``, by the fact the axis constrains: for an axis that applies only where others
    chose some options (cloud kind and pricing: renting), when the rival is there and not of
    the choice; for any other, when the rival's value is not the pick's (deployment: the
    other side, as hybrid rents)."""
    field = book.fields.get(axis)
    if field is None or axis not in axes or rival.get(field) is None:
        return False
    when = book.applies_when.get(axis)
    if not when:
        return pick is not None and rival[field] != pick.get(field)
    there = all(rival.get(book.fields.get(other, "")) in options
                for other, options in when.items())
    return there and rival[field] != axes[axis].choice


def axis_reason(axis: str, decision: AxisDecision) -> tuple[str, str]:
    """(rule, text): why an axis chose what it chose, in its strongest reason (or the
    revision, or the declared order when no rule preferred an option)."""
    label = axis.replace("_", " ")
    if decision.revision:
        return f"{axis}.revised", f"{label} is {decision.choice}: {decision.revision}"
    chosen = next((o for o in decision.ranking if o.option == decision.choice), None)
    top = max(chosen.reasons, key=lambda x: x.weight, default=None) if chosen else None
    if top is None:
        return axis, (f"{label} is {decision.choice}, the first option in the declared order "
                      "(no rule preferred another)")
    return top.rule, f"{label} is {decision.choice}: {top.text}"


def axis_weight(decision: AxisDecision) -> float:
    """The weight of the strongest reason for an axis's choice (0 where none)."""
    chosen = next((o for o in decision.ranking if o.option == decision.choice), None)
    return max((r.weight for r in chosen.reasons), default=0.0) if chosen else 0.0


def _strongest_rule(choice: Scored, rival: Scored,
                    placeless: frozenset[str] = frozenset()) -> tuple[float, str, str]:
    """(weight, rule, text): the strongest rule that separates the two scores, for the pick
    or against the rival (weight 0, ``hardware.rank`` and the costs where none does); of
    the rules for the pick, only those that read none of the facts ``placeless`` names
    (the facts the decision axes constrain: where and how a configuration is had)."""
    options: list[tuple[float, Rule, Mapping[str, Any]]] = []
    for rule in choice.rules:
        gain = sum(d for d in rule.scoring[1] if d > 0)
        if gain and rule not in rival.rules and not rule.reads & placeless:
            options.append((gain, rule, choice.facts))
    for rule in rival.rules:
        loss = -sum(d for d in rule.scoring[1] if d < 0)
        if loss and rule not in choice.rules:
            options.append((loss, rule, rival.facts))
    if not options:
        return 0.0, "hardware.rank", _by_cost(choice, rival)
    weight, rule, facts = max(options, key=lambda o: (o[0], -o[1].order))
    return weight, rule.id, text_of(rule, facts)


def _by_cost(choice: Scored, rival: Scored) -> str:
    """Why the pick outranks a rival no rule separates: its cost for the same work."""
    mine, theirs = choice.config.cost_usd_year, rival.config.cost_usd_year
    if theirs > mine:
        return (f"equal rule score; it costs ${theirs - mine:,.0f} a year more than the pick "
                "for the same work")
    if theirs < mine:
        return (f"equal rule score and ${mine - theirs:,.0f} a year cheaper; ranked by "
                "cost, then id")
    return "equal rule score and cost; ranked by up-front cost, then id"


def candidate_notes(entry: Scored) -> list[Note]:
    """The warnings (with severity) and strategies a configuration's rules raised."""
    notes: list[Note] = []
    for rule in entry.rules:
        bodies = [e.body for e in rule.model.then if e.kind in ("warn", "suggest")]
        if bodies:
            text = text_of(rule, entry.facts)
            notes += [note(rule, b.id, getattr(b, "severity", None), text) for b in bodies]
    return notes


def rendered_candidate(entry: Scored, *, notes: bool = False) -> CandidateOut:
    """The output form of a candidate, with its reasons rendered (and its notes if asked)."""
    reasons: list[Reason] = []
    for rule in entry.rules:
        effects = [e for e in rule.model.then if e.kind in ("prefer", "avoid", "exclude")]
        if effects:
            text = text_of(rule, entry.facts)
            reasons += [reason(rule, e.kind, 0.0 if e.kind == "exclude" else e.body.weight, text)
                        for e in effects]
    c = entry.config
    local = c.where == "local"
    return CandidateOut(
        id=c.candidate_id, gpu=c.gpu, gpu_name=c.gpu_name, gpu_label=c.gpu_label,
        count=c.count,
        nodes=c.nodes, where=c.where, provider=None if local else c.provider,
        provider_name=c.provider_name, provider_label=c.provider_label,
        provider_kind=c.provider_kind,
        offer=None if local else c.offer, instance=c.instance or None,
        link=c.link or None, price_as_of=c.price_as_of or None,
        platform=c.platform if local else None, region=c.regions or None,
        location=None if local else (c.location or None),
        pricing=c.pricing, reserved_months=c.reserved_months or None,
        reserved_days=c.reserved_days or None,
        method=c.train_method, precision=c.precision,
        gradient_checkpointing=c.gradient_checkpointing_on,
        vram_needed_gib=c.vram_needed_gib,
        vram_without_checkpointing_gib=c.vram_without_checkpointing_gib,
        vram_total_gib=c.vram_total_gib, usd_per_gpu_hour=c.usd_per_gpu_hour,
        access=c.access, plan=c.is_plan, owned=bool(c.is_owned),
        resale_usd=float(c.resale_usd or 0.0),
        upkeep_usd_year=float(c.upkeep_usd_year or 0.0),
        added_to_owned=int(c.owned_added or 0),
        used=local and not c.is_owned and c.condition == "used",
        busy_hours_per_year=c.busy_hours_per_year, busy_share=c.utilisation,
        runs_per_year=c.runs_per_year,
        run_hours=c.run_hours, start_up_hours=c.start_up_hours,
        spot_rework_hours=c.spot_extra_hours, days_per_run=c.days_per_run,
        cost=CandidateCost(upfront_usd=c.upfront_usd, per_hour_usd=c.per_hour_usd,
                           fixed_usd_year=dollars(c.fixed_usd_year),
                           per_year_usd=dollars(c.cost_usd_year),
                           per_run_usd=tidy(c.cost_usd_per_run, 2),
                           start_up_usd_per_run=c.start_up_usd_per_run,
                           range_usd={"low": entry.candidate.low_cost,
                                      "high": entry.candidate.high_cost},
                           first_year_usd=dollars(c.first_year_bill_usd)),
        score=entry.score, reasons=reasons, pool=_pool(c),
        warnings=candidate_notes(entry) if notes else None,
    )


def _pool(c: Configuration) -> Pool | None:
    if not c.pool_layout:
        return None
    return Pool(jobs_at_once=c.jobs_at_once, layout=c.pool_layout,
                mig_profile=c.mig_profile or None, job_gib=c.job_gib, always_on=c.always_on)
