"""What-if in words: each decision a single answer change would flip, the change in the
team's own terms, and what the pick and its cost a year become."""

from __future__ import annotations

import json
from collections.abc import Sequence

from engine.decide.engine import Decision
from engine.output.summary import usd
from engine.tools.whatif import Outcome


def value_text(value: object) -> str:
    """A value as an answer is written (``4,096``, ``0.5``, ``aws``, ``["amd"]``)."""
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return json.dumps(value) if not isinstance(value, str) else value


def change_text(outcome: Outcome) -> str:
    """``runs_per_year ≥ 47 (now 6)``, ``cloud_ecosystem = aws (now none)``."""
    flip = outcome.flip
    if isinstance(flip.value, (int, float)) and not isinstance(flip.value, bool):
        way = "≥" if flip.value > (flip.current or 0) else "≤"
        return f"{flip.answer} {way} {value_text(flip.value)} (now {value_text(flip.current)})"
    return f"{flip.answer} = {value_text(flip.value)} (now {value_text(flip.current)})"


def whatif_lines(base: Decision, found: Sequence[Outcome]) -> list[str]:
    """One line per axis: how it flips and what it leads to, or that no single change does."""
    lines = []
    for outcome in found:
        flip = outcome.flip
        after = flip.after or "no choice"
        cost = ("" if outcome.per_year_usd is None
                else f", ~{usd(outcome.per_year_usd)} a year"
                + (f" ({usd(outcome.upfront_usd)} up front)" if outcome.upfront_usd else ""))
        becomes = f": {outcome.pick}{cost}" if outcome.pick else ": no configuration does the work"
        lines.append(f"{flip.axis}: {flip.before} → {after} if {change_text(outcome)}{becomes}")
    said = {o.flip.axis for o in found}  # an axis may have two lines: the work, the nearest
    for axis, decision in base.decisions.items():
        if axis not in said and decision.applies:
            lines.append(f"{axis}: {decision.choice} (no single answer change flips it)")
    return lines
