"""What every human-readable format says: the headline and the lines under it.

Every number here is about the pick (or, for the break-even, the pick against the best
configuration on the other side), taken from the decision as the engine made it.
"""

from __future__ import annotations

from engine.decide.decision import AxisDecision, Candidate
from engine.decide.engine import Decision

KIND_NAMES = {"specialised": "a specialised GPU cloud", "hyperscaler": "a hyperscaler",
              "marketplace": "a GPU marketplace"}
SCORE_LEGEND = ("Scores: an option's score is the sum of the weights of the rules that prefer "
                "it, minus those that avoid it; (next: option, score) is the runner-up.")


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


def where(c: Candidate) -> str:
    """``owned`` or ``lambda on-demand us``."""
    if c.where == "local":
        return "owned"
    pricing = c.pricing if not c.reserved_months else f"reserved {c.reserved_months}mo"
    return f"{c.provider_label} {pricing} {region(c.region)}"


def region(regions: str | None) -> str:
    """At most two region ids."""
    parts = (regions or "").split(",")
    return ",".join(parts[:2]) + ("…" if len(parts) > 2 else "")


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


def purchase_line(decision: Decision) -> str | None:
    """``cards $7,150 + platform $8,386 (professional workstation)`` for an owned pick."""
    choice = decision.hardware.choice
    trace = decision.estimates["traces"].get("pick_purchase_usd")
    if choice is None or choice.where != "local" or not trace:
        return None
    i = trace["inputs"]
    parts = [f"{i['cards']}× card at {usd(i['card_usd'])} = {usd(i['cards_usd'])}",
             f"platform {usd(i['platform_usd'] * i['boxes'])}"
             + (f" ({i['boxes']}×)" if i["boxes"] > 1 else "")]
    if i.get("network_usd"):
        parts.append(f"InfiniBand {usd(i['network_usd'])}")
    return "Up front: " + " + ".join(parts) + "."


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
    """Why the pick beat a configuration that costs less for the same work."""
    cheaper = decision.hardware.cheaper
    choice = decision.hardware.choice
    if cheaper is None or choice is None:
        return None
    return (f"Why not {cheaper.label} ({usd(cheaper.per_year_usd)} a year, "
            f"{usd(choice.cost.per_year_usd - cheaper.per_year_usd)} less): {cheaper.reason} "
            f"[{cheaper.rule}]")


def revision_note(axis: AxisDecision) -> str | None:
    """``revised from spot: …`` when no configuration offers what the rules chose."""
    if axis.revised_from is None:
        return None
    return f"revised from {axis.revised_from}: {axis.revision}"


def top_reasons(axis: AxisDecision, limit: int = 4) -> list[tuple[str, str, list[str], str]]:
    """(sign, text, sources, rule) for the chosen option's reasons, strongest first, then
    why other options were ruled out (``✗ local: …``)."""
    chosen = next((r for r in axis.ranking if r.option == (axis.revised_from or axis.choice)),
                  None)
    if chosen is None:
        return []
    reasons = sorted(chosen.reasons, key=lambda r: -r.weight)
    out = []
    for r in reasons[:limit]:
        sign = {"prefer": "+", "avoid": "−", "exclude": "✗"}[r.effect]
        out.append((sign, r.text, r.sources, r.rule))
    shown = {rule for *_, rule in out}
    for option in axis.ranking:
        if option is chosen or not option.excluded:
            continue
        for r in option.reasons:
            if r.effect == "exclude" and r.rule not in shown:
                shown.add(r.rule)
                out.append(("✗", f"{option.option}: {r.text}", r.sources, r.rule))
    return out


def runner_up(axis: AxisDecision) -> str | None:
    """``cloud, 3`` — the best option not chosen, with its score."""
    rest = [r for r in axis.ranking if r.option != axis.choice and not r.excluded]
    if not rest:
        return None
    return f"{rest[0].option}, {rest[0].score:g}"


def table_rows(decision: Decision) -> list[tuple[str, Candidate]]:
    """(mark, candidate) for the hardware table: the pick and its alternatives, by rank."""
    hw = decision.hardware
    if hw.choice is None:
        return []
    return [("→", hw.choice), *(("", c) for c in hw.alternatives)]


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
    terminal, explained by :data:`TABLE_LEGEND`)."""
    if compact:
        return ["configuration", "where", "$/h", "h/yr", *(["days"] if days else []), "buy",
                "$/yr"]
    return ["configuration", "where", "$/GPU-h", "busy h/yr", *(["days/run"] if days else []),
            "up front", "per year"]


TABLE_LEGEND = ("$/h: price per GPU-hour; h/yr: hours a year the configuration is busy with "
                "your work; days: per training run; buy: up front; $/yr: cost a year for your "
                "work, all in")


def cells(c: Candidate, days: bool, *, compact: bool = False) -> list[str]:
    """The table cells of one candidate."""
    run = ["—" if c.days_per_run is None else "<0.1" if c.days_per_run < 0.05
           else f"{c.days_per_run:,.1f}"] if days else []
    return [config_name(c), short_where(c) if compact else where(c),
            f"{c.usd_per_gpu_hour:.2f}", hours(c.busy_hours_per_year), *run,
            usd(c.cost.upfront_usd), usd(c.cost.per_year_usd)]


def run_length(days: float) -> str:
    """``2.8 days``, ``5 hours``, ``under an hour``."""
    if days >= 1:
        return f"{days:,.1f} days"
    hours_ = days * 24
    return "under an hour" if hours_ < 1 else f"{hours_:,.0f} hour{'s' if hours_ >= 1.5 else ''}"


def short_where(c: Candidate) -> str:
    """``RunPod on-dem. us+2``, ``AWS resv 12mo us``, ``owned``."""
    if c.where == "local":
        return "owned"
    pricing = {"on-demand": "on-dem."}.get(c.pricing, c.pricing)
    if c.reserved_months:
        pricing = f"resv {c.reserved_months}mo"
    parts = (c.region or "").split(",")
    more = f"+{len(parts) - 1}" if len(parts) > 1 else ""
    return f"{c.provider_label} {pricing} {parts[0]}{more}".strip()
