"""The hardware table every human-readable format shows: the pick and its alternatives in
the engine's rank order, their cells and legend, and why the others were not taken."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import NamedTuple

from engine.decide.decision import Candidate, lean_exclusions, to_buy
from engine.decide.engine import Decision
from engine.decide.owned_options import own_usd_per_year
from engine.decide.pick import (
    axis_against,
    axis_reason,
    axis_weight,
    goes_against,
    reason_against,
)
from engine.output.summary import config_name, hours, peaks_pick, rounds_to_no_hours, usd
from engine.rules.load import Rulebook

DEPLOYMENT = "deployment"
"""The axis that decides owning against renting."""


def cheaper_line(decision: Decision) -> str | None:
    """Why the pick beat a configuration that costs less for the same work (the engine's
    reason, from the decision)."""
    cheaper = decision.hardware.cheaper
    choice = decision.hardware.choice
    if cheaper is None or choice is None:
        return None
    return (f"{cheaper.label} ({usd(cheaper.per_year_usd)} a year, "
            f"{usd(choice.cost.per_year_usd - cheaper.per_year_usd)} less): {cheaper.reason} "
            f"[{cheaper.rule}]")


def rank_key(c: Candidate) -> tuple[float, float, float, str]:
    """The engine's rank of a configuration (decide/sides.py ``Scored.sort_key``): best
    score, then lowest cost for the year's work, lowest up-front cost, id."""
    return (-c.score, c.cost.per_year_usd, c.cost.upfront_usd, c.id)


def table_rows(decision: Decision) -> list[tuple[str, Candidate]]:
    """(mark, candidate) for the hardware table: the pick (``→``) and its alternatives, in
    rank order."""
    hw = decision.hardware
    if hw.choice is None:
        return []
    # costs are shown to the dollar, but the engine ranked them unrounded: on a tie to the
    # dollar the pick goes first (it won on the cents, or on a decision the rival goes against)
    rows = sorted([hw.choice, *hw.alternatives],
                  key=lambda c: (rank_key(c)[:2], c is not hw.choice, rank_key(c)[2:]))
    return [("→" if c is hw.choice else "", c) for c in rows]


def passed_over(decision: Decision, book: Rulebook) -> list[str]:
    """Why each configuration ranked above the pick was not taken: it is not on the side,
    cloud kind or pricing decided above, by the facts ``book``'s axes constrain (the cheaper
    row is left to :func:`cheaper_line`)."""
    cheaper = decision.hardware.cheaper
    out = []
    for mark, c in table_rows(decision):
        if mark:
            break
        if cheaper is not None and c.id == cheaper.id:
            continue  # said by cheaper_line, with the engine's reason
        out.append(f"{row_label(c)} (ranked higher): {_decided_otherwise(decision, c, book)}")
    return out


def decided_against(decision: Decision, c: Candidate, book: Rulebook
                    ) -> tuple[str, str | None] | None:
    """The first decision the configuration goes against, the axes that apply only to renting
    first (cloud kind, pricing, then deployment: ``pick.narrow_first``): (axis, its choice),
    or None."""
    pick = decision.hardware.choice
    axis = axis_against(book, decision.decisions, dict(pick) if pick else None, dict(c))
    return None if axis is None else (axis, decision.decisions[axis].choice)


def _said_axis(decision: Decision, c: Candidate, book: Rulebook, axis: str) -> str:
    """The decision to name as ``c``'s why-not where it goes against ``axis``: the deployment
    for a rented configuration that costs more than the purchase picked (owning is the
    plainer reason than the kind of cloud or pricing the rented side resolved to), else
    ``axis``."""
    pick = decision.hardware.choice
    plainer = (pick is not None and pick.where == "local" and not pick.owned
               and c.where == "cloud" and c.cost.per_year_usd >= pick.cost.per_year_usd
               and goes_against(DEPLOYMENT, book, decision.decisions, dict(pick), dict(c)))
    return DEPLOYMENT if plainer else axis


def why_not_short(decision: Decision, c: Candidate, book: Rulebook) -> str | None:
    """In a few words, why a configuration is not the pick: the rule against its option of the
    decision it goes against, else the strongest rule that scored it below the pick where
    that weighs more than the decision (``ranked lower: cloud.same-ecosystem``), else the
    decision (:func:`_said_axis`) and the rule that decided it (``cloud kind is specialised
    [cloud.gpu-centric-specialised]``); None where none holds."""
    against = decided_against(decision, c, book)
    if against is not None:
        axis, choice = against
        axis_decision = decision.decisions[axis]
        option = str(dict(c).get(book.fields[axis]))
        said = f"{axis.replace('_', ' ')} is {choice}"
        against_it = reason_against(axis, axis_decision, option)
        if against_it is not None:
            return f"{said}, not {option} [{against_it[0]}]"
        # a rule against the row, or for the pick but not about where or how it is rented,
        # that weighs more than the axis's reason
        own = _deciding(decision, c, book)
        if own is not None and own[0] > axis_weight(axis_decision):
            return f"ranked lower: {own[1]}"
        axis = _said_axis(decision, c, book, axis)
        said = f"{axis.replace('_', ' ')} is {decision.decisions[axis].choice}"
        rule = axis_reason(axis, decision.decisions[axis])[0]
        return said if rule == axis else f"{said} [{rule}]"
    pick = decision.hardware.choice
    if pick is None or c.score >= pick.score:
        return None
    own = _deciding(decision, c)  # below the pick on no decision: any rule between them
    return None if own is None else f"ranked lower: {own[1]}"


def _deciding(decision: Decision, c: Candidate,
              book: Rulebook | None = None) -> tuple[float, str] | None:
    """(weight, rule): the strongest rule that separates ``c`` from the pick, for the pick
    (a preference ``c`` lacks; with ``book``, only one that reads none of the facts the
    decision axes constrain) or against ``c`` (a penalty the pick does not share); the twin
    of the decision's ``pick._strongest_rule``."""
    pick = decision.hardware.choice
    if pick is None:
        return None
    mine = {r.rule for r in c.reasons}
    theirs = {r.rule for r in pick.reasons}
    placed = frozenset(book.fields.values()) if book is not None else frozenset()
    deciding = [(r.weight, r.rule) for r in pick.reasons
                if r.effect == "prefer" and r.rule not in mine
                and not (placed and book is not None and book.rule(r.rule).reads & placed)]
    deciding += [(r.weight, r.rule) for r in c.reasons
                 if r.effect == "avoid" and r.rule not in theirs]
    return max(deciding, key=lambda d: d[0], default=None)


def _decided_otherwise(decision: Decision, c: Candidate, book: Rulebook) -> str:
    """The first decision the configuration goes against, with that decision's own
    strongest reason and its rule."""
    against = decided_against(decision, c, book)
    if against is None:
        return "not on the side the decisions point to."
    axis = _said_axis(decision, c, book, against[0])
    rule, text = axis_reason(axis, decision.decisions[axis])
    return f"{text.rstrip('.')} [{rule}]."


def row_label(c: Candidate) -> str:
    """``2× H100 SXM, Vast.ai on-demand`` or ``1× RTX 4090, owned``."""
    return f"{config_name(c)}, {offer(c)}"


def excluded_line(decision: Decision) -> str | None:
    """How many configurations rules excluded, with the rule that excluded the most first and
    one of its reasons (counted as :func:`_exclusions` counts)."""
    if not decision.hardware.excluded:
        return None
    counts, reason = _exclusions(decision)
    return _excluded_text(decision, counts, reason, _top_exclusion(counts))


def _excluded_text(decision: Decision, counts: Mapping[str, int],
                   reason: Callable[[str], str], rule: str) -> str:
    hw = decision.hardware
    total = len({i for x in hw.excluded for i in x.ids})
    return (f"{total} of {hw.considered} configurations excluded; "
            f"{counts[rule]} by {rule}, e.g.: {reason(rule)}")


def _top_exclusion(counts: Mapping[str, int]) -> str:
    """The rule that excluded the most configurations (ties: the last id)."""
    return max(counts, key=lambda r: (counts[r], r))


def brief_refusal(decision: Decision) -> list[str]:
    """A refusal on one screen: :func:`excluded_line`, then the limits that alone keep
    configurations out (:func:`one_limit_line`, its rule's reason not said twice)."""
    if not decision.hardware.excluded:
        return []
    counts, reason = _exclusions(decision)
    rule = _top_exclusion(counts)
    alone = one_limit_line(decision, (rule,))
    memory = memory_line(decision) if rule == _DOES_NOT_FIT else None
    return [_excluded_text(decision, counts, reason, rule),
            *(line for line in (memory, alone) if line)]


_DOES_NOT_FIT = "hardware.does-not-fit"
_GROWS_WITH = {"logits": "seq_len × micro_batch × the vocabulary",
               "activations": "seq_len × micro_batch"}
"""What a part of a job's memory grows with, where an answer cuts it."""


def memory_line(decision: Decision) -> str | None:
    """Where the job fits nowhere and one part of its memory is most of it: that part, and
    what it grows with (``Most of it is logits: 223 of the 292 GiB one copy of the job
    needs; …``). None where no part is half of it."""
    memory = decision.estimates.get("memory") or {}
    total = float(memory.get("total_gib") or 0.0)
    parts = memory.get("breakdown") or {}
    if not total or not parts:
        return None
    part, gib = max(parts.items(), key=lambda p: (float(p[1]), p[0]))
    if float(gib) < total / 2:
        return None
    said = (f"Most of it is {part}: {float(gib):,.0f} of the {total:,.0f} GiB one copy of the "
            "job needs")
    if (grows := _GROWS_WITH.get(part)) is None:
        return f"{said}."
    cut = "a smaller micro_batch"
    if part == "activations" and decision.answers.get("gradient_checkpointing") is False:
        cut = f"gradient checkpointing (false in your answers) or {cut}"
    return f"{said}; it grows with {grows}: {cut} cuts it."


class Refusal(NamedTuple):
    """Where no configuration is eligible, what every full format shows."""

    head: str
    """``All 260 configurations are excluded:``"""
    rules: list[str]
    """The rules that excluded them, most first, each with its count and one of its reasons
    (counted as :func:`_exclusions` counts)."""
    alone: str | None
    """:func:`one_limit_line`, without the reasons ``rules`` gave already."""
    memory: str | None = None
    """:func:`memory_line`, where most were excluded for not fitting."""


def refusal(decision: Decision, most: int = 4) -> Refusal | None:
    """What shut out the configurations of a decision none of which is eligible (None where
    nothing was excluded)."""
    counts, reason = _exclusions(decision)
    ranked = sorted(counts, key=lambda r: (-counts[r], r))[:most]
    if not ranked:
        return None
    return Refusal(f"All {decision.hardware.considered} configurations are excluded:",
                   [f"{counts[rule]} by {rule}, e.g.: {reason(rule)}" for rule in ranked],
                   one_limit_line(decision, ranked),
                   memory_line(decision) if ranked[0] == _DOES_NOT_FIT else None)


def one_limit_line(decision: Decision, explained: Collection[str] = (),
                   most: int = 3) -> str | None:
    """In a refusal, the limits that alone shut out configurations: per rule, how many
    configurations it is the only rule to exclude, most first, each with the reason given
    for the first of them unless its rule is ``explained`` already. None outside a refusal,
    where every configuration has two reasons or more, or where the only such rule is the
    one explained (nothing to add)."""
    hw = decision.hardware
    if hw.choice is not None or not hw.excluded:
        return None
    rules: dict[str, set[str]] = {}  # a refusal keeps every rule that excluded each
    for x in hw.excluded:
        for i in x.ids:
            rules.setdefault(i, set()).add(x.rule)
    alone: dict[str, list[str]] = {}
    for i, found in sorted(rules.items()):
        if len(found) == 1:
            alone.setdefault(next(iter(found)), []).append(i)
    if not alone or (set(alone) <= set(explained) and len(alone) == 1):
        return None
    reasons: dict[str, str] = {}
    for x in hw.excluded:
        if x.rule in alone and alone[x.rule][0] in x.ids:
            reasons.setdefault(x.rule, x.reason.rstrip("."))
    ranked = sorted(alone, key=lambda r: (-len(alone[r]), r))[:most]
    parts = [f"{len(alone[r]):,} by {r}" + ("" if r in explained else f" ({reasons[r]})")
             for r in ranked]
    return "Kept out by one limit only: " + "; ".join(parts) + "."


def _exclusions(decision: Decision) -> tuple[dict[str, int], Callable[[str], str]]:
    """Configurations excluded per rule and a rule's example reason (that of its entry with
    the first id). Each configuration counts under its first excluding rule, as a decision
    without trace lists them (so a traced decision reads the same), except in a refusal,
    which keeps every exclusion: there each rule counts every configuration it excluded, so
    the rule that shut out the most (the data's region, no capital) leads."""
    hw = decision.hardware
    groups = lean_exclusions(hw.excluded, refusal=hw.choice is None)
    ids: dict[str, set[str]] = {}
    for x in groups:
        ids.setdefault(x.rule, set()).update(x.ids)
    counts = {rule: len(found) for rule, found in ids.items()}

    def reason(rule: str) -> str:
        return min((x for x in groups if x.rule == rule), key=lambda x: x.ids[0]).reason

    return counts, reason


def with_days(decision: Decision) -> bool:
    """Whether the table shows days per run (only when the work is given in runs)."""
    return any(c.days_per_run is not None for _, c in table_rows(decision))


def headers(days: bool, *, compact: bool = False) -> list[str]:
    """The hardware table's column titles (``compact``: short ones for an 80-column
    terminal, explained by :func:`table_legend`)."""
    if compact:
        return ["configuration", "offer", "region", "$ per\nGPU-h",
                "days\na run" if days else "busy\nh/yr", "up\nfront", "cost\na year"]
    return ["configuration", "offer", "region", "$/GPU-hour", "busy hours a year",
            *(["days per run"] if days else []), "up front", "cost a year"]


def table_legend(days: bool, *, compact: bool = True, split: bool = False) -> str:
    """What the hardware table's columns mean (``compact``: the short titles; ``split``: the
    pick rents beside the team's own GPUs)."""
    price, busy, run, cost = (("$ per GPU-h", "busy h/yr", "days a run", "cost a year")
                              if compact else ("$/GPU-hour", "busy hours a year",
                                               "days per run", "cost a year"))
    work = (f"{run}: how long one training run takes" if days else
            f"{busy}: hours a year it is busy with your work")
    return (f"{price}: price per GPU-hour (owned: power); {work}; {cost}: your year's "
            "work, all in (owned: write-off less resale, upkeep and power"
            + ("; + yours: the rent beside your own GPUs and their power" if split else "")
            + ").")


def cells(c: Candidate, days: bool, *, compact: bool = False,
          money: Callable[[float], str] = usd, beside_own: float | None = None,
          rented_at: bool = False) -> list[str]:
    """The table cells of one candidate (``money``: how sums are written; ``beside_own``:
    the power of the team's own GPUs where the row rents beside them, added to its cost so
    that every row prices the whole year's work; ``rented_at``: the region column says where
    a rented row is rented, for a team whose data stays in a region)."""
    run = [run_days(c.days_per_run)] if days else []
    busy = [] if compact and days else [
        "<0.1" if rounds_to_no_hours(c) else hours(c.busy_hours_per_year)]
    per_year = c.cost.per_year_usd + (beside_own or 0.0)
    sold = offer(c) + (" + yours" if beside_own is not None else "")
    return [config_name(c), sold, region_text(c, compact=compact, rented_at=rented_at),
            f"{c.usd_per_gpu_hour:.2f}", *busy, *run, money(c.cost.upfront_usd),
            money(per_year)]


def beside_own(decision: Decision, c: Candidate | None) -> float | None:
    """Where ``c`` is a pick that rents beside the team's own GPUs (the peaks, or the jobs
    they do not hold): what those GPUs cost the work a year (their power); None otherwise."""
    if c is None or c is not decision.hardware.choice:
        return None
    _, split = peaks_pick(decision)
    return None if split is None else own_usd_per_year(split)


def usd_short(value: float) -> str:
    """A sum in at most six characters for a table too wide for the terminal: ``$9,999``,
    ``$65.8k``, ``$240k``, ``$5.32M``, ``$17.1M``, ``$1,250M``."""
    if value < 9_999.5:
        return usd(value)
    figure, unit = (value / 1e3, "k") if value < 999_500 else (value / 1e6, "M")
    places = 2 if figure < 9.995 else 1 if figure < 99.95 else 0
    return f"${figure:,.{places}f}{unit}"


def run_days(days: float | None) -> str:
    """``2.3``, ``<0.1`` or ``n/a`` (days per run)."""
    if days is None:
        return "n/a"
    return "<0.1" if days < 0.05 else f"{days:,.1f}"


def offer(c: Candidate) -> str:
    """``RunPod CC on-demand``, ``AWS reserved 12 mo``, ``AWS 1-day blocks``, ``to buy``,
    ``to buy used``, ``yours``, ``yours + 2`` (more bought beside the team's own)."""
    if c.where == "local":
        if c.added_to_owned:
            return f"yours + {c.added_to_owned}"
        return "yours" if c.owned else to_buy(c.used)
    return f"{c.provider_label} {pricing_label(c)}"


def pricing_label(c: Candidate) -> str:
    """``on-demand``, ``reserved 12 mo``, ``1-day blocks`` (a block bought for each run)."""
    if c.reserved_days:
        return f"{c.reserved_days}-day blocks"
    return f"reserved {c.reserved_months} mo" if c.reserved_months else c.pricing


def data_stays_in_region(decision: Decision) -> bool:
    """Whether the team's data may go only to some regions: its table then says where each
    rented row is rented, not every region its offer is sold in."""
    return decision.answers.get("data_residency") == "region"


def region_text(c: Candidate, *, compact: bool = False, rented_at: bool = False) -> str:
    """The offer's regions: ``us, eu, uk``; compact ``us,eu +1``; owned ``on site``; with
    ``rented_at``, where it is rented: ``eu-central-1 (Frankfurt, Germany)``, compact
    ``Frankfurt``."""
    if c.where == "local":
        return "on site"
    if rented_at and c.location:
        if not compact:
            return c.location
        place = c.location.partition("(")[2].rstrip(")") or c.location
        return place.split(",")[0].strip()
    parts = (c.region or "").split(",")
    if not parts[0]:
        return "any"
    if not compact:
        return ", ".join(parts)
    more = f" +{len(parts) - 2}" if len(parts) > 2 else ""
    return ",".join(parts[:2]) + more
