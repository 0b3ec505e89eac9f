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
    return f"{c.count}× {c.gpu_name}"


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
    kind = decision.decisions["cloud_kind"].choice
    where = {"specialised": "a specialised GPU cloud", "hyperscaler": "a hyperscaler"}.get(
        kind or "", "the cloud")
    verb = "Develop locally, rent" if deployment == "hybrid" else "Rent"
    provider = f" ({choice.provider})" if choice.provider else ""
    return (f"{verb}: {config_name(choice)} on {where}{provider}, {choice.pricing}, "
            f"~{usd(choice.cost.per_year_usd)}/year")


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
