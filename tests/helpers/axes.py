"""Axis decisions made by hand for the tests of how reasons are told."""

from __future__ import annotations

from typing import Literal

from engine.decide.decision import AxisDecision, OptionScore, Reason

Effect = Literal["prefer", "avoid", "exclude"]


def why(rule: str, effect: Effect, weight: float) -> Reason:
    """A reason whose text is ``RULE text``."""
    return Reason(rule=rule, effect=effect, weight=weight, text=f"{rule} text",
                  sources=["house-assumption"])


def made_axis(choice: str, options: dict[str, list[Reason]]) -> AxisDecision:
    """``choice`` among ``options`` (in that order), each scored by its reasons."""
    def score(reasons: list[Reason]) -> float:
        return sum(r.weight if r.effect == "prefer" else -r.weight for r in reasons)

    return AxisDecision(choice=choice, ranking=[
        OptionScore(option=o, score=score(rs), excluded=False, reasons=rs)
        for o, rs in options.items()])
