"""The answer on one screen: what to do, what it costs, why, the next step, the nearest
alternatives and what would change it, in at most 23 lines of 80 columns (a 24-row
terminal with its prompt).

It is the default text output; ``--explain`` gives the full one (every reason with its
sources, the hardware table, warnings, strategies and the chart), which this one points to.
"""

from __future__ import annotations

import itertools
import re
import textwrap
from collections.abc import Mapping

from engine.decide.configuration import run_length
from engine.decide.decision import Candidate, to_buy
from engine.decide.engine import Decision
from engine.decide.owned_options import own_usd_per_year
from engine.output.hardware_rows import brief_refusal, table_rows, why_not_short
from engine.output.summary import (
    advises_api,
    amount,
    assumed_work_line,
    break_even_line,
    close_call_lines,
    config_name,
    headline,
    owned_notice,
    peaks_notice,
    peaks_pick,
    peaks_total,
    plan_line,
    price_lines,
    programme_line,
    retire_split_line,
    serving_line,
    short_name,
    steady_work,
    top_reasons,
    usd,
    work_line,
)
from engine.rules.load import Rulebook

WIDTH = 80
MAX_LINES = 23
"""One line short of a 24-row terminal: the prompt after it keeps the first line in view."""
_WHY_AXES = ("deployment", "cloud_kind", "pricing", "method", "approach")
"""Whose reasons say why, strongest first (the approach first where it is the headline)."""
_WHY_LINES = 6
FAR_DEARER = 10.0
"""An alternative costing more than this many times the pick's year is no alternative on
the one screen (the full table keeps it), unless it says why the pick beat it; beside the
team's own GPUs, whose year is their power, every alternative is shown."""
_ACCESS = {"self-serve": "self-serve: sign up with a card, minutes",
           "account": "needs an account or quota approval: days",
           "contract": "sold by contract through sales: weeks"}


def brief_lines(decision: Decision, book: Rulebook | None = None) -> list[str]:
    """The one-screen answer, each line at most 80 columns: shortened where it would run
    over 23 lines (the reasons, the strongest first, to one line each, fewer alternatives,
    the programme to one line, then the work, what would change it to one, then no
    alternatives, then the notes above the cost), never the decision, its cost, the next
    step or where the rest is."""
    for why_lines, rows, work_most, programme_most, change_most, notes_most in _SHORTER:
        lines = _lines(brief_items(decision, rows, book), why_lines,
                       {"work": work_most, "programme": programme_most, "change": change_most},
                       notes_most)
        if len(lines) <= MAX_LINES:
            return lines
    return lines[:MAX_LINES - 2] + lines[-2:]  # where the rest is, and the decision's id


Item = tuple[str, str]
"""(kind, text): ``headline``, ``notice``, ``owned`` (why the team's own GPUs are not the
pick), ``warning`` (one the rules declare for the one screen), ``refused`` (where no
configuration is eligible: what shut them out), ``cost``,
``work``, ``programme``, ``why`` (a heading, then a ``reason`` each),
``next``, ``alternatives`` (then an ``alternative`` each), ``change``, ``more``,
``identity``."""


def brief_items(decision: Decision, rows: int = 3, book: Rulebook | None = None
                ) -> list[Item]:
    """The one-screen answer as items of whole text, for any renderer (the HTML page shows
    them unwrapped). With the ``book`` the decision was made by, an alternative ranked above
    the pick says which decision it goes against."""
    choice = decision.hardware.choice
    api = advises_api(decision)
    items: list[Item] = [("headline", headline(decision))]
    mine = None if api else owned_notice(decision)
    hardware = [] if api else [plan_line(decision), mine, *close_call_lines(decision)[:1]]
    items += [("owned" if n is mine else "notice", n)
              for n in (*price_lines(decision), assumed_work_line(decision),
                        peaks_notice(decision), serving_line(decision), *hardware)
              if n]
    if not api:
        items += [("warning", n) for n in _brief_warnings(decision, book)]
    if choice is None and not api:  # a refusal: what shut out the most, and what alone
        items += [("refused", n) for n in brief_refusal(decision)]
    if choice is not None and not api:
        items += [("cost", _cost(decision, choice)), ("work", work_line(decision))]
        programme = programme_line(decision)
        if programme:
            items.append(("programme", programme))
    reasons = _reasons(decision)
    if reasons:
        items += [("why", "Why:"), *((_REASON_KINDS[sign], text) for sign, text in reasons)]
    if choice is not None:
        items.append(("next", _api_step(decision, choice) if api
                      else _next_step(decision, choice)))
    elif not api:
        items.append(("next", "Next step: run gpu-advisor whatif on the same answers: it "
                              "finds the smallest change to one answer that lets a "
                              "configuration in."))
    alternatives = _alternatives(decision, rows, book)
    if alternatives:
        title = "If you train anyway" if api else "Alternatives"
        items.append(("alternatives", f"{title} (cost a year for the same work):"))
        items += [("alternative", a) for a in alternatives]
    change = _would_change(decision, book)
    if change:
        items.append(("change", change))
    return [*items, ("more", _more(decision)), ("identity", identity_line(decision))]


_NOTES = ("notice", "owned", "warning")
"""The notes above the cost, shortened together last."""
_SHORTER = ((_WHY_LINES, 3, 2, 2, 2, 4), (5, 3, 2, 2, 2, 4), (4, 3, 2, 2, 2, 4),
            (3, 3, 2, 2, 2, 4), (3, 2, 2, 2, 2, 4), (3, 2, 2, 1, 2, 4), (3, 1, 2, 1, 2, 4),
            (3, 1, 1, 1, 2, 4), (3, 1, 1, 1, 1, 4), (3, 0, 1, 1, 1, 4), (2, 0, 1, 1, 1, 4),
            (1, 0, 1, 1, 1, 4), (1, 0, 1, 1, 1, 2), (1, 0, 1, 1, 1, 1))
"""Each step shorter than the one before: (lines of reasons, alternatives, lines of the work,
of the programme, of what would change it, of each note above the cost). The work (how long
a run takes, how busy the pick is) keeps its two lines until only what would change the
answer has two; the reasons go down to the strongest one, then the notes above the cost to
two lines and one, where they crowd the screen; the next step is never shortened
(:func:`_lines`)."""


def _lines(items: list[Item], why_lines: int, most_of: Mapping[str, int],
           notes_most: int = 4) -> list[str]:
    # the next step keeps its four lines: where, at what price of which date, how to get
    # it (a hyperscaler's pricing page alone takes most of a line)
    most = {"headline": 3, "notice": 2, "owned": 4, "refused": 3, "warning": 3, "cost": 3,
            "next": 4, "more": 2, **most_of}
    for kind in _NOTES:  # each note's own most, or fewer where the screen is crowded
        most[kind] = min(most[kind], notes_most)
    reasons = [(_REASON_SIGNS[kind], text) for kind, text in items if kind in _REASON_SIGNS]
    lines: list[str] = []
    for kind, text in items:
        if kind in _REASON_SIGNS:
            continue
        if kind == "why":
            lines += ["Why:", *_why_lines(reasons, why_lines)]
        elif kind == "alternative":
            lines += _wrap(text, 2, first="  ", rest="    ")
        elif kind in ("alternatives", "identity"):
            lines.append(text)
        else:
            lines += _wrap(text, most[kind])
    return lines


def _wrap(text: str, most: int, first: str = "", rest: str = "") -> list[str]:
    """``text`` in lines of 80 columns, at most ``most`` of them (the last cut with …),
    indented by ``first`` and then ``rest``."""
    lines = textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                          break_long_words=False, break_on_hyphens=False)
    if len(lines) <= most:
        return lines
    kept = lines[:most]
    kept[-1] = _cut(kept[-1] + " " + lines[most], WIDTH)
    return kept


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _cost(decision: Decision, choice: Candidate) -> str:
    cost = choice.cost
    low, high = cost.range_usd.get("low"), cost.range_usd.get("high")
    # a pool rented for every hour of the year costs the same at any speed: no range
    spread = (f" ({usd(low)}–{usd(high)} as speed varies)"
              if low and high and usd(low) != usd(high) else "")
    text = f"Cost: ~{usd(cost.per_year_usd)} a year{spread}"
    _, peaks = peaks_pick(decision)
    if peaks is not None:
        text = (f"Cost: ~{usd(peaks_total(decision, peaks))} a year: "
                f"{usd(own_usd_per_year(peaks))} power of your GPUs + "
                f"~{usd(cost.per_year_usd)} a year of rent{spread}")
    if cost.upfront_usd:
        text = f"Cost: {usd(cost.upfront_usd)} up front, then ~{usd(cost.per_year_usd)} a " \
               f"year{spread}"
    if choice.runs_per_year and choice.where == "cloud":
        rented = " rented:" if peaks is not None else ""
        text += (f";{rented} {usd(cost.per_run_usd)} a run, "
                 f"~{usd(cost.per_year_usd / 12)} a month")
    return text + budget_clause(decision, choice) + "."


def budget_clause(decision: Decision, choice: Candidate) -> str:
    """``; year one with evaluation and failed runs: $5,850 of your $5,000 budget (over
    it)``: what the budget check counts (with the development box a hybrid pick says to
    buy), against what the budget leaves for compute."""
    budget = decision.answers.get("budget_usd")
    first = choice.cost.first_year_usd
    if not isinstance(budget, (int, float)) or budget <= 0 or first is None:
        return ""
    left = decision.facts.get("compute_budget_usd", budget)
    whole = decision.answers.get("budget_covers") == "programme"
    of = (f"of the {usd(left)} your {usd(budget)} budget leaves for compute" if whole
          else f"of your {usd(budget)} budget")
    if choice.where == "local":
        over = " (over it)" if first > left else ""
        return f"; {usd(first)} up front {of}{over}"
    box = decision.facts.get("dev_purchase_usd")
    counted = "evaluation and failed runs"
    if decision.decisions["deployment"].choice == "hybrid" and isinstance(box, (int, float)) \
            and box > 0:  # the development box the advice says to buy is bought in year one
        first, counted = first + box, "evaluation, failed runs and the development box"
    over = " (over it)" if first > left else ""
    return f"; year one with {counted}: {usd(first)} {of}{over}"


_REASON_KINDS = {"+": "reason", "✗": "ruled-out"}
"""The item kind of a reason for the headline, and of one that ruled an option out."""
_REASON_SIGNS = {kind: sign for sign, kind in _REASON_KINDS.items()}


def _reasons(decision: Decision) -> list[tuple[str, str]]:
    """Up to three reasons (sign, text): the strongest of the axes the headline rests on
    (``+``), or why each option of an axis was ruled out (``✗``)."""
    picked: list[tuple[str, str]] = []
    said: set[str] = set()
    approach = decision.decisions["approach"].choice
    # under an API's headline the hardware's axes are about training it would not do
    axes = (("approach",) if approach == "use-api" else
            ("approach", *_WHY_AXES[:-1]) if approach != "fine-tune" else _WHY_AXES)
    for axis in axes:
        result = decision.decisions.get(axis)
        if result is None or not result.applies:
            continue
        if result.revision and result.revised_from:  # the decided option's reasons no longer
            text = (f"{axis.replace('_', ' ').capitalize()}: {result.choice}, not "  # hold
                    f"{result.revised_from}: {result.revision}.")
            if text not in said:
                said.add(text)
                picked.append(("+", text))
            if len(picked) == 3:
                break
            continue
        # every option was ruled out by the rules (not for want of hardware): say why, each
        ruled_out = result.choice is None and result.follows is None
        # an API is the answer: its own reasons (the timeline, the prices) come first
        every = ruled_out or (axis == "approach" and approach == "use-api")
        for sign, text, _, _ in top_reasons(result, limit=3 if every else 1):
            if (sign == "+" or ruled_out) and text not in said:
                said.add(text)
                picked.append(("✗" if ruled_out else "+", text))
                if not every or len(picked) == 3:
                    break
        if len(picked) == 3:
            break
    return picked


def _why_lines(picked: list[tuple[str, str]], most: int = _WHY_LINES) -> list[str]:
    """The reasons (sign, text) in ``most`` lines, each at least one (the strongest ``most``
    where there are more)."""
    picked = picked[:most]
    lines: list[str] = []
    for i, (sign, text) in enumerate(picked):
        room = most - len(lines) - (len(picked) - i - 1)
        wrapped = textwrap.wrap(text, WIDTH - 3, break_long_words=False,
                                break_on_hyphens=False)
        kept = wrapped[:max(1, min(2 if len(picked) > 1 else 4, room))]
        if len(wrapped) > len(kept):
            kept[-1] = _cut(kept[-1] + " " + wrapped[len(kept)], WIDTH - 3)
        lines += [f" {sign} {kept[0]}", *(f"   {rest}" for rest in kept[1:])]
    return lines


_SIZES = re.compile(r"(\d+)([a-z])((?:/\d+\2)+)")
"""A list of sizes in an instance's name: ``1g/2g/4g/8g``, ``1x/2x/4x/8x``."""


def instance_of(instance: str, gpus: int) -> str:
    """The name of the instance of ``gpus`` where the catalog names several sizes at once
    (``a2-ultragpu-1g/2g/4g/8g`` of 4 GPUs: ``a2-ultragpu-4g``); else ``instance``."""
    found = _SIZES.search(instance)
    if found is None:
        return instance
    sizes = [found.group(1), *re.findall(r"/(\d+)", found.group(3))]
    if str(gpus) not in sizes:
        return instance
    return f"{instance[:found.start()]}{gpus}{found.group(2)}{instance[found.end():]}"


def _next_step(decision: Decision, choice: Candidate) -> str:
    dated = f" (price of {choice.price_as_of})" if choice.price_as_of else ""
    if choice.owned:
        return (f"Next step: schedule the runs on your {choice.count:,}× "
                f"{short_name(choice.gpu_label)}; nothing to buy.")
    if choice.where == "local":
        used = "used " if choice.used else ""
        what = (f"{choice.added_to_owned}× {used}{short_name(choice.gpu_label)} to add to yours"
                if choice.added_to_owned else
                f"{choice.count:,}× {used}{short_name(choice.gpu_label)}")
        return (f"Next step: get quotes for {what}{dated} and what holds them "
                "(the parts and their prices are in --explain).")
    where = f" in {choice.location}" if choice.location else ""
    link = f" at {choice.link}" if choice.link else ""
    pool = choice.pool
    if pool is not None and not pool.always_on and steady_work(decision):  # rented job by job
        jobs = max(1, pool.jobs_at_once)
        nodes = max(1, choice.nodes // jobs)  # a job spanning several instances rents them all
        share = choice.count // jobs // nodes
        instance = f" {instance_of(choice.instance, share)}" if choice.instance else ""
        each = f", {nodes:,} instances" if nodes > 1 else ""
        return (f"Next step: rent{instance} ×{share} per instance{each} for each job as it "
                f"starts, up to {pool.jobs_at_once:,} at once, from {choice.provider_name}"
                f"{where}{link}, {choice.pricing}{dated}; {_ACCESS[choice.access]}.")
    shape = choice.count // max(1, choice.nodes)
    instance = f" {instance_of(choice.instance, shape)}" if choice.instance else ""
    return (f"Next step: rent{instance} ×{shape} per instance{_instances(choice)}"
            f" from {choice.provider_name}{where}{link}, {choice.pricing}{dated}; "
            f"{_ACCESS[choice.access]}.")


def _instances(choice: Candidate) -> str:
    """``, 5 instances``; for a pool's jobs at once each on instances of their own, which
    are whose (``, 2 instances (one for each of the 2 jobs at once)``)."""
    if choice.nodes <= 1:
        return ""
    jobs = choice.pool.jobs_at_once if choice.pool is not None else 1
    if jobs <= 1 or choice.nodes % jobs:
        return f", {choice.nodes:,} instances"
    per = choice.nodes // jobs
    return (f", {choice.nodes:,} instances ({'one' if per == 1 else f'{per:,}'} for each of "
            f"the {jobs:,} jobs at once)")


def _api_step(decision: Decision, choice: Candidate) -> str:
    training = "pretrain" if decision.answers.get("workload") == "pretrain" else "fine-tune"
    gpus = f"{choice.count:,}× {short_name(choice.gpu_label)}"
    if choice.owned:
        does = f"your {gpus} do"
    elif choice.added_to_owned:
        does = (f"{gpus}, yours and {choice.added_to_owned:,} bought "
                f"({usd(choice.cost.upfront_usd)} up front), do")
    elif choice.where == "local":
        does = (f"buying {gpus}{' used' if choice.used else ''} "
                f"({usd(choice.cost.upfront_usd)} up front) does")
    else:
        does = f"{gpus} from {choice.provider_name} does"
    return (f"Next step: serve from a hosted API now; should you still {training}, {does} "
            f"your runs for ~{usd(choice.cost.per_year_usd)} a year.")


def _alternatives(decision: Decision, most: int, book: Rulebook | None) -> list[str]:
    rows = table_rows(decision)
    above = {c.id for _, c in itertools.takewhile(lambda row: not row[0].strip(), rows)}
    pick = decision.hardware.choice
    out: list[str] = []
    shown = plan_line(decision) and not advises_api(decision)
    plan = decision.hardware.plan if shown else None
    taken_rows: list[Candidate] = []  # shown and left open by the decisions
    for c in (c for mark, c in rows if not mark.strip()):
        if len(out) == most:
            break
        if pick is not None and _no_better(c, pick):  # the pick gives as much for less
            continue
        if plan is not None and c.id == plan.id:  # priced on its own line above
            continue
        if any(_no_better(c, s) for s in taken_rows):  # one above gives as much for less
            continue
        days = f", {run_length(c.days_per_run)} a run" if c.days_per_run is not None else ""
        cheaper = pick is not None and c.cost.per_year_usd < pick.cost.per_year_usd
        why = why_not_short(decision, c, book) if book and (c.id in above or cheaper) else None
        note = f" (not taken: {why})" if why else ""
        if not why and pick is not None and not pick.owned and c.cost.per_year_usd > (
                FAR_DEARER * pick.cost.per_year_usd):
            continue  # a year's rent of idle capacity beside a few runs: no alternative
        if not why:  # one the decisions leave open: it beats what it costs less than
            taken_rows.append(c)
        out.append(f"{_label(c)}: {usd(c.cost.per_year_usd)}{days}{note}")
    return out


def _no_better(c: Candidate, other: Candidate) -> bool:
    """``c`` costs as much or more for the year and up front as ``other`` and takes as long
    or longer a run: nothing to show it for beside ``other``."""
    return (c.cost.per_year_usd >= other.cost.per_year_usd
            and c.cost.upfront_usd >= other.cost.upfront_usd
            and (c.days_per_run or 0.0) >= (other.days_per_run or 0.0))


def _label(c: Candidate) -> str:
    where = ("yours" if c.owned else f"yours + {c.added_to_owned} bought" if c.added_to_owned
             else to_buy(c.used) if c.where == "local" else f"{c.provider_label} {c.pricing}")
    return f"{c.count:,}× {short_name(c.gpu_label)}, {where}"


def _brief_warnings(decision: Decision, book: Rulebook | None) -> list[str]:
    """The warnings ``book`` declares for the one screen (``brief: true``)."""
    if book is None:
        return []
    return [w.text for w in decision.warnings
            if (declared := book.warnings.get(w.id)) is not None and declared.brief]


def _would_change(decision: Decision, book: Rulebook | None = None) -> str | None:
    if advises_api(decision):
        return _own_model_pays(decision, book)
    if peaks_pick(decision)[1] is not None:  # the break-even is of the whole work, not the pick
        retire = retire_split_line(decision)
        return f"Would change it: {retire}" if retire else None
    waited = _wait_line(decision)
    if waited:
        return waited
    line = break_even_line(decision)
    if line:
        return f"Would change it: {line[0].lower()}{line[1:]}"
    return None


def _wait_line(decision: Decision) -> str | None:
    """Where renting won only because owning's runs are stretched past the default limit
    (``rent_sooner_worth_the_wait``): owning would pay with those runs allowed. The
    break-even says owning costs less at the team's work, which is not what decided."""
    choice = decision.hardware.choice
    if (not decision.facts.get("rent_sooner_worth_the_wait") or choice is None
            or choice.where != "cloud"):
        return None
    own = next((c for c in decision.hardware.alternatives
                if c.where == "local" and not c.owned), None)
    if own is None or own.days_per_run is None:
        return None
    budget, first = decision.facts.get("compute_budget_usd"), own.cost.first_year_usd
    if isinstance(budget, (int, float)) and first is not None and first > budget:
        return None  # over the budget, owning would not win with longer runs either
    return (f"Would change it: allow runs of {run_length(own.days_per_run)} "
            f"(max_days_per_run) and owning {config_name(own)}, "
            f"{usd(own.cost.per_year_usd)} a year, costs less than renting.")


def _cost_decides(decision: Decision, book: Rulebook | None) -> bool:
    """Whether the hosted API leads the approach only by the rules that compare its bill with
    a model of the team's own (``api_to_own_cost_ratio``): without them another option would
    lead or tie, so a volume at which the comparison turns changes the advice."""
    ranking = decision.decisions["approach"].ranking
    api = next((o for o in ranking if o.option == "use-api"), None)
    others = [o.score for o in ranking if o.option != "use-api" and not o.excluded]
    if book is None or api is None or not others:
        return False
    weight = sum(r.weight for r in api.reasons if r.effect == "prefer"
                 and "api_to_own_cost_ratio" in book.rule(r.rule).reads)
    return api.score - weight <= max(others)


def _more(decision: Decision) -> str:
    notes = []
    if decision.warnings:
        notes.append(f"{len(decision.warnings)} warning{'s' * (len(decision.warnings) != 1)}")
    if decision.strategies:
        notes.append(f"{len(decision.strategies)} way{'s' * (len(decision.strategies) != 1)} "
                     "to cut the bill")
    return "--explain: " + ", ".join([*notes, "every reason and the chart."])


def identity_line(decision: Decision) -> str:
    """``decision ID · rules HASH · catalog HASH``: what an auditor looks the decision up by."""
    return (f"decision {decision.decision_id} · rules {decision.ruleset['hash'][:12]} · "
            f"catalog {decision.catalog['hash'][:12]}")


def _own_model_pays(decision: Decision, book: Rulebook | None = None) -> str | None:
    """Where an API is advised for the capability a model of the team's own would lack, though
    that model would cost less: what the need costs. Where the API is advised for costing
    less (with ``book``: without the rules that compare the two bills it would not lead):
    the volume above which a model of the team's own would cost less."""
    facts = decision.facts
    own, bill = facts.get("own_cost_usd_month"), facts.get("api_cost_usd_month")
    if not isinstance(own, (int, float)) or not isinstance(bill, (int, float)):
        return None
    said = any(w.id == "frontier-need-at-volume" for w in decision.warnings)
    even, volume = facts.get("api_break_even_tokens_m"), decision.answers.get(
        "api_tokens_per_month_m")
    if (not said and bill < own and isinstance(even, (int, float))
            and isinstance(volume, (int, float)) and even > volume
            and _cost_decides(decision, book)):
        return (f"Would change it: above ~{amount(even)}M tokens a month (yours: "
                f"{amount(volume)}M), a model of your own would cost less than the API.")
    if not said:
        return None
    return (f"Would change it: without the need for frontier capability, a model of your "
            f"own at ~{usd(own)} a month would cost less than the API's {usd(bill)}.")
