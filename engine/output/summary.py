"""What every human-readable format says: the headline and the lines under it.

Every number here is about the pick (or, for the break-even, the pick against the best
configuration on the other side), taken from the decision as the engine made it.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.decide.decision import AxisDecision, Candidate, OptionScore
from engine.decide.engine import Decision
from engine.files.printable import printable_data

KIND_NAMES = {"specialised": "a specialised GPU cloud", "hyperscaler": "a hyperscaler",
              "marketplace": "a GPU marketplace"}
SCORE_LEGEND = ("Each choice is the option with the highest score: the weights of the rules "
                "for it minus those against it. Reasons: + for, − against, ✗ ruled out.")
NO_RULE = "No rule preferred an option; first declared option."


def printable_decision(decision: Decision, platforms: Mapping[str, str] | None = None
                       ) -> tuple[Decision, Mapping[str, str] | None]:
    """The decision (and platform names) with every string made printable, as text and
    Markdown show them: names and ids from a catalog, a price file, a config or an audit
    store cannot drive the terminal (the decision itself is returned when nothing changes)."""
    data = decision.model_dump(mode="json")
    shown = printable_data(data)
    if shown != data:
        decision = Decision.model_validate(shown)
    return decision, None if platforms is None else printable_data(platforms)


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


def run_length(days: float) -> str:
    """``2.8 days``, ``5 hours``, ``under an hour``."""
    if days >= 1:
        return f"{days:,.1f} days"
    hours_ = days * 24
    return "under an hour" if hours_ < 1 else f"{hours_:,.0f} hour{'s' if hours_ >= 1.5 else ''}"
