"""What every human-readable format says: the headline and the lines under it.

Every number here is about the pick (or, for the break-even, the pick against the best
configuration on the other side), taken from the decision as the engine made it.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.decide.decision import AxisDecision, Candidate, OptionScore
from engine.decide.engine import Decision

KIND_NAMES = {"specialised": "a specialised GPU cloud", "hyperscaler": "a hyperscaler",
              "marketplace": "a GPU marketplace"}
SCORE_LEGEND = ("Each choice is the option with the highest score: the weights of the rules "
                "for it minus those against it. Reasons: + for, − against, ✗ ruled out.")
NO_RULE = "No rule preferred an option; first declared option."


def axis_title(axis: str) -> str:
    """``Cloud kind`` for the axis ``cloud_kind`` (axes are declared in rules/decisions.yaml)."""
    return axis.replace("_", " ").capitalize()


def shown_axes(decision: Decision) -> list[tuple[str, AxisDecision]]:
    """(title, decision) of every axis that matters, in the rulebook's declared order (pricing
    is left out when buying)."""
    return [(axis_title(axis), result) for axis, result in decision.decisions.items()
            if result.applies]


def usd(value: float) -> str:
    """``$1,234``."""
    return f"${value:,.0f}"


def hours(value: float) -> str:
    """``1,234``, or ``0.4`` below ten."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def short_name(name: str) -> str:
    """``RTX 4090`` from ``NVIDIA GeForce RTX 4090``."""
    return name.removeprefix("NVIDIA ").removeprefix("AMD ").removeprefix("GeForce ")


def config_name(c: Candidate) -> str:
    """``2× H100 SXM``."""
    return f"{c.count}× {c.gpu_label}"


def headline(decision: Decision) -> str:
    """One line: what to do, on what, for how much."""
    choice = decision.hardware.choice
    axes = decision.decisions
    if axes["approach"].choice == "use-api":
        return "Use a hosted API rather than training your own model"
    if choice is None:
        return "No configuration in the catalog can do this job within your limits"
    if choice.where == "local":
        return (f"Buy: {config_name(choice)}, ~{usd(choice.cost.upfront_usd)} up front, "
                f"~{usd(choice.cost.per_year_usd)} a year for your work")
    verb = "Rent"
    facts = decision.facts
    if axes["deployment"].choice == "hybrid" and facts.get("dev_gpu_name"):
        verb = (f"Develop on {facts.get('dev_gpu_count')}× "
                f"{short_name(str(facts['dev_gpu_name']))} "
                f"(~{usd(float(facts.get('dev_purchase_usd') or 0))}), rent for full runs")
    pricing = choice.pricing if not choice.reserved_months else (
        f"reserved for {choice.reserved_months} months")
    return (f"{verb}: {config_name(choice)} on {KIND_NAMES.get(choice.provider_kind, 'a cloud')}"
            f" ({choice.provider_name}), {pricing} at ${choice.usd_per_gpu_hour:.2f}/GPU-hour, "
            f"~{usd(choice.cost.per_year_usd)} a year for your work")


def purchase_line(decision: Decision,
                  platforms: Mapping[str, str] | None = None) -> str | None:
    """``$4,480 up front = 1× RTX 4090 $2,500 + desktop for 1-2 GeForce cards $1,980.`` for an
    owned pick (``platforms``: platform id → name; the id is shown without it)."""
    choice = decision.hardware.choice
    trace = decision.estimates["traces"].get("pick_purchase_usd")
    if choice is None or choice.where != "local" or not trace:
        return None
    i = trace["inputs"]
    cards = f"{i['cards']}× {choice.gpu_label} {usd(i['cards_usd'])}"
    if i["cards"] > 1:
        cards += f" ({usd(i['card_usd'])} each)"
    boxes = f"{i['boxes']}× " if i["boxes"] > 1 else ""
    parts = [cards, f"{boxes}{platform_name(i['platform'], platforms)} "
                    f"{usd(i['platform_usd'] * i['boxes'])}"]
    if i.get("network_usd"):
        parts.append(f"InfiniBand between nodes {usd(i['network_usd'])}")
    return f"{usd(trace['value'])} up front = " + " + ".join(parts) + "."


def platform_name(platform_id: str, platforms: Mapping[str, str] | None) -> str:
    """``desktop for 1-2 GeForce cards`` (the catalog's name, its first word lower case unless
    it is an abbreviation), or ``platform ID`` without the catalog."""
    name = (platforms or {}).get(platform_id)
    if not name:
        return f"platform {platform_id}"
    first = name.split(" ", 1)[0]
    return name if first[1:2].isupper() or first[:1].isdigit() else name[0].lower() + name[1:]


def running_line(decision: Decision) -> str | None:
    """What an owned pick's cost a year is made of: the fixed part and power for the work."""
    choice = decision.hardware.choice
    trace = decision.estimates["traces"].get("pick_cost_usd_year")
    if choice is None or choice.where != "local" or not trace:
        return None
    i = trace["inputs"]
    power = i["running_usd_per_hour"] * i["busy_hours_per_year"]
    return (f"{usd(trace['value'])} a year = {usd(i['fixed_usd_per_year'])} write-off (less "
            f"resale) and upkeep + {usd(power)} power for {hours(i['busy_hours_per_year'])} "
            "busy hours.")


def work_line(decision: Decision) -> str:
    """The year's work and what it means on the pick."""
    work = decision.estimates["work"]
    facts = decision.facts
    gpu = short_name(str(facts.get("hours_gpu_name") or work["hours_gpu"]))
    if work["mode"] == "hours":
        said = "assumed: you gave no amount of work" if work["hours_assumed"] else "as given"
        text = (f"Work: {work['hours_per_year']:,.0f} GPU-hours a year on one {gpu} ({said})")
    else:
        source = ("Chinchilla default: 20 tokens per parameter" if work["tokens_from"]
                  == "chinchilla" else "as given")
        text = (f"Work: {_runs(work['runs_per_year'])} of {work['tokens_per_run_b']:,g}B tokens "
                f"({source}), {work['flops_per_year']:.2g} FLOPs a year, like "
                f"{work['reference_gpu_hours']:,.0f} GPU-hours on one {gpu}")
    choice = decision.hardware.choice
    if choice is not None:
        text += f"; the pick is busy {hours(choice.busy_hours_per_year)} hours a year"
        if choice.days_per_run is not None:
            text += f" and takes {run_length(choice.days_per_run)} a run"
    return text + "."


def _runs(runs: float | None) -> str:
    n = runs or 1
    return f"{n:g} run a year" if n == 1 else f"{n:g} runs a year"


def memory_line(decision: Decision) -> str:
    """The model, the method and what it needs: on one GPU, and per GPU on the pick."""
    mem = decision.estimates["memory"]
    facts = decision.facts
    line = (f"Model {facts['model_name']} ({facts['params_b']:g}B), {mem['method']}: "
            f"~{mem['total_gib']:.1f} GiB on one GPU ({mem['range_gib']['low']:.1f}–"
            f"{mem['range_gib']['high']:.1f})")
    choice = decision.hardware.choice
    if choice is not None:
        per = choice.vram_total_gib / choice.count
        line += f"; {choice.vram_needed_gib:.1f} of {per:g} GiB per GPU on the pick"
        if choice.count > 1:
            line += f" (sharded over {choice.count})"
    return line + "."


def break_even_line(decision: Decision) -> str | None:
    """Owning vs renting the same work: where they cross, against the team's work."""
    be = decision.estimates.get("break_even")
    if not be:
        return None
    work = decision.estimates["work"]["reference_gpu_hours"]
    gpu = short_name(str(decision.facts.get("hours_gpu_name") or ""))
    return (f"Owning {be['own']} costs less than renting {be['rent']} above "
            f"{be['hours_per_year']:,.0f} GPU-hours a year of {gpu} work; yours is "
            f"{work:,.0f}.")


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


def revision_note(axis: AxisDecision) -> str | None:
    """``revised from spot: …`` when no configuration offers what the rules chose."""
    if axis.revised_from is None:
        return None
    return f"revised from {axis.revised_from}: {axis.revision}"


def standing(axis: AxisDecision) -> str:
    """How the choice stood against the other options, in words: its score and the next
    best, a tie broken by the declared order, or the option the rules chose before a
    revision."""
    if axis.choice is None:
        return "every option was ruled out"
    if axis.revised_from is not None:
        wanted = _option(axis, axis.revised_from)
        at = f" at {wanted.score:g}" if wanted is not None else ""
        return f"revised: the rules chose {axis.revised_from}{at}"
    chosen = _option(axis, axis.choice)
    score = chosen.score if chosen is not None else 0.0
    rest = [r for r in axis.ranking if r.option != axis.choice and not r.excluded]
    if not rest:
        return f"score {score:g}; every other option was ruled out"
    if rest[0].score == score:
        return f"score {score:g}, tied with {rest[0].option}: first declared option"
    return f"score {score:g}, ahead of {rest[0].option} at {rest[0].score:g}"


def _option(axis: AxisDecision, option: str) -> OptionScore | None:
    return next((r for r in axis.ranking if r.option == option), None)


def top_reasons(axis: AxisDecision, limit: int = 4) -> list[tuple[str, str, list[str], str]]:
    """(sign, text, sources, rule) for the chosen option's reasons, strongest first; then why
    other options were ruled out (``✗ local: …``); and when the choice has no reason of its
    own, what weighed the others down (``− hybrid: …``)."""
    chosen = _option(axis, axis.revised_from or axis.choice or "")
    if chosen is None:
        return []
    reasons = sorted(chosen.reasons, key=lambda r: -r.weight)
    out = []
    for r in reasons[:limit]:
        sign = {"prefer": "+", "avoid": "−", "exclude": "✗"}[r.effect]
        out.append((sign, r.text, r.sources, r.rule))
    shown = {rule for *_, rule in out}
    effects = ["exclude", "avoid"] if not chosen.reasons else ["exclude"]
    for effect in effects:
        for option in axis.ranking:
            if option is chosen or (effect == "exclude") != option.excluded:
                continue
            for r in option.reasons:
                if r.effect == effect and r.rule not in shown:
                    shown.add(r.rule)
                    out.append(("✗" if effect == "exclude" else "−",
                                f"{option.option}: {r.text}", r.sources, r.rule))
    return out


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
    rows = sorted([hw.choice, *hw.alternatives], key=rank_key)
    return [("→" if c is hw.choice else "", c) for c in rows]


def passed_over(decision: Decision) -> list[str]:
    """Why each configuration ranked above the pick was not taken: it is not on the side,
    cloud kind or pricing decided above (the cheaper row is left to :func:`cheaper_line`)."""
    cheaper = decision.hardware.cheaper
    out = []
    for mark, c in table_rows(decision):
        if mark:
            break
        if cheaper is not None and c.id == cheaper.id:
            continue  # said by cheaper_line, with the engine's reason
        out.append(f"{row_label(c)} (ranked higher): {_decided_otherwise(decision, c)}.")
    return out


def _decided_otherwise(decision: Decision, c: Candidate) -> str:
    """The first decision the configuration goes against (deployment, cloud kind, pricing)."""
    pick = decision.hardware.choice
    axes = decision.decisions
    checks = (("deployment", pick is not None and c.where != pick.where, "owned" if
               c.where == "local" else "rented"),
              ("cloud_kind", c.where == "cloud", c.provider_kind),
              ("pricing", c.where == "cloud", c.pricing))
    for axis, applies, option in checks:
        decided = axes[axis].choice if axis in axes else None
        if applies and decided is not None and (axis == "deployment" or option != decided):
            return f"{axis_title(axis).lower()} is {decided}, this one is {option}"
    return "not on the side the decisions point to"


def row_label(c: Candidate) -> str:
    """``2× H100 SXM, Vast.ai on-demand`` or ``1× RTX 4090, owned``."""
    return f"{config_name(c)}, {offer(c)}"


def excluded_line(decision: Decision) -> str | None:
    """How many configurations rules excluded, with the most common reason."""
    hw = decision.hardware
    if not hw.excluded:
        return None
    counts: dict[str, int] = {}
    for x in hw.excluded:
        counts[x.rule] = counts.get(x.rule, 0) + 1
    rule = max(counts, key=lambda r: (counts[r], r))
    example = next(x for x in hw.excluded if x.rule == rule)
    return (f"{len(hw.excluded)} of {hw.considered} configurations excluded; {counts[rule]} by "
            f"{rule}, e.g. {example.label}: {example.reason}")


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


def table_legend(days: bool, *, compact: bool = True) -> str:
    """What the hardware table's columns mean (``compact``: the short titles)."""
    price, busy, run, cost = (("$ per GPU-h", "busy h/yr", "days a run", "cost a year")
                              if compact else ("$/GPU-hour", "busy hours a year",
                                               "days per run", "cost a year"))
    work = (f"{run}: how long one training run takes" if days else
            f"{busy}: hours a year it is busy with your work")
    return (f"{price}: price per GPU-hour (owned: power); {work}; {cost}: your year's "
            "work, all in (owned: write-off less resale, upkeep and power).")


def cells(c: Candidate, days: bool, *, compact: bool = False) -> list[str]:
    """The table cells of one candidate."""
    run = [run_days(c.days_per_run)] if days else []
    busy = [] if compact and days else [hours(c.busy_hours_per_year)]
    return [config_name(c), offer(c), region_text(c, compact=compact),
            f"{c.usd_per_gpu_hour:.2f}", *busy, *run, usd(c.cost.upfront_usd),
            usd(c.cost.per_year_usd)]


def run_days(days: float | None) -> str:
    """``2.3``, ``<0.1`` or ``n/a`` (days per run)."""
    if days is None:
        return "n/a"
    return "<0.1" if days < 0.05 else f"{days:,.1f}"


def run_length(days: float) -> str:
    """``2.8 days``, ``5 hours``, ``under an hour``."""
    if days >= 1:
        return f"{days:,.1f} days"
    hours_ = days * 24
    return "under an hour" if hours_ < 1 else f"{hours_:,.0f} hour{'s' if hours_ >= 1.5 else ''}"


def offer(c: Candidate) -> str:
    """``RunPod CC on-demand``, ``AWS reserved 12 mo``, ``owned``."""
    if c.where == "local":
        return "owned"
    pricing = f"reserved {c.reserved_months} mo" if c.reserved_months else c.pricing
    return f"{c.provider_label} {pricing}"


def region_text(c: Candidate, *, compact: bool = False) -> str:
    """The offer's regions: ``us, eu, uk``; compact ``us,eu +1``; owned ``on site``."""
    if c.where == "local":
        return "on site"
    parts = (c.region or "").split(",")
    if not parts[0]:
        return "any"
    if not compact:
        return ", ".join(parts)
    more = f" +{len(parts) - 2}" if len(parts) > 2 else ""
    return ",".join(parts[:2]) + more
