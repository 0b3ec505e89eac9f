"""What every human-readable format says: the headline and the lines under it."""

from __future__ import annotations

from engine.decision import AxisDecision, Candidate
from engine.recommend import Decision

AXIS_TITLES = {
    "approach": "Approach",
    "method": "Method",
    "deployment": "Deployment",
    "cloud_kind": "Cloud kind",
    "pricing": "Pricing",
    "sharing": "Sharing",
}
NOT_APPLICABLE = {
    "cloud_kind": ("deployment", "local"),
    "pricing": ("deployment", "local"),
}


def usd(value: float) -> str:
    """``$1,234``."""
    return f"${value:,.0f}"


def config_name(c: Candidate) -> str:
    """``2× NVIDIA H100 SXM 80GB``."""
    return f"{c.count}× {c.gpu_name.removeprefix('NVIDIA ')}"


def headline(decision: Decision) -> str:
    """One line: what to do, on what, for how much."""
    choice = decision.hardware.choice
    deployment = decision.decisions["deployment"].choice
    approach = decision.decisions["approach"].choice
    if approach == "use-api":
        return "Use a hosted API rather than training your own model"
    if choice is None:
        return "No configuration in the catalog can hold this job"
    if choice.where == "local":
        return (f"Buy: {config_name(choice)}, ~{usd(choice.cost.upfront_usd)} up front "
                f"(~{usd(choice.cost.per_year_usd)}/year amortised)")
    where = {"specialised": "a specialised GPU cloud", "hyperscaler": "a hyperscaler"}.get(
        choice.provider_kind, "the cloud")
    verb = "Rent"
    dev = decision.facts.get("dev_gpu_name")
    if deployment == "hybrid":
        verb = (f"Develop on {decision.facts.get('dev_gpu_count')}× "
                f"{str(dev).removeprefix('NVIDIA ')}, rent" if dev else "Develop locally, rent")
    provider = f" ({choice.provider})" if choice.provider else ""
    return (f"{verb}: {config_name(choice)} on {where}{provider}, {choice.pricing}, "
            f"~{usd(choice.cost.per_year_usd)}/year")


def memory_line(decision: Decision) -> str:
    """The model, the method and what it needs: on one GPU, and per GPU as recommended."""
    mem = decision.estimates["memory"]
    facts = decision.facts
    line = (f"Model {facts['model_name']} ({facts['params_b']:g}B), {mem['method']}: "
            f"~{mem['total_gb']:.1f} GB on one GPU ({mem['range_gb']['low']:.1f}–"
            f"{mem['range_gb']['high']:.1f})")
    choice = decision.hardware.choice
    if choice is not None and choice.count > 1:
        line += f", ~{choice.vram_needed_gb:.1f} GB per GPU sharded over {choice.count}"
    be = facts.get("break_even_hours")
    if be:
        line += (f". Owning beats renting above {be:,.0f} busy hours a year; you plan "
                 f"{facts['hours_per_year']:,.0f}")
    return line + "."


def applies(decision: Decision, axis: str) -> bool:
    """Whether an axis matters given the other choices (pricing does not, if you buy)."""
    rule = NOT_APPLICABLE.get(axis)
    return rule is None or decision.decisions[rule[0]].choice != rule[1]


def top_reasons(axis: AxisDecision, limit: int = 4) -> list[tuple[str, str, list[str], str]]:
    """(sign, text, sources, rule) for the chosen option's reasons, strongest first."""
    chosen = next((r for r in axis.ranking if r.option == axis.choice), None)
    if chosen is None:
        return []
    reasons = sorted(chosen.reasons, key=lambda r: -r.weight)
    out = []
    for r in reasons[:limit]:
        sign = {"prefer": "+", "avoid": "−", "exclude": "✗"}[r.effect]
        out.append((sign, r.text, r.sources, r.rule))
    return out


def runner_up(axis: AxisDecision) -> str | None:
    """``cloud (3)`` — the best option not chosen, with its score."""
    rest = [r for r in axis.ranking if r.option != axis.choice and not r.excluded]
    if not rest:
        return None
    return f"{rest[0].option} ({rest[0].score:g})"
