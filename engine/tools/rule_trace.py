"""``recommend --trace``: every rule, fired or not, and for those not fired the first
condition that failed with the value the fact had."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.decide.engine import Engine, Evaluation
from engine.rules.conditions import FactRef, Leaf, describe_leaf, first_failure


@dataclass(frozen=True)
class TraceLine:
    """One rule's outcome for one request."""

    rule: str
    match: str
    fired: bool
    detail: str

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"rule": self.rule, "match": self.match, "fired": self.fired,
                "detail": self.detail}


def trace(engine: Engine, evaluation: Evaluation) -> list[TraceLine]:
    """Per rule in file order: fired (on which facts) or the first failed condition."""
    decision = evaluation.decision
    fired = evaluation.fired
    chosen = decision.hardware.choice
    chosen_facts = next((c for c in evaluation.candidate_facts
                         if chosen is not None and c["candidate_id"] == chosen.id), None)
    lines = []
    for rule in engine.rulebook.rules:
        on = fired.get(rule.id, [])
        if rule.match == "request":
            facts: dict[str, Any] | None = evaluation.request_facts
            detail = "fired" if on else ""
        else:
            facts = chosen_facts
            count = len(evaluation.candidate_facts)
            detail = f"fired on {len(on)} of {count} candidates" if on else ""
            if on and chosen is not None:
                detail += "; the chosen one" + (" too" if chosen.id in on else " not")
        if not on or (rule.match == "candidate" and chosen is not None and chosen.id not in on):
            reason = _why_not(rule.condition, facts) if facts is not None else "no candidates"
            detail = f"{detail + '; ' if detail else ''}not fired: {reason}"
        lines.append(TraceLine(rule.id, rule.match, bool(on), detail))
    return lines


def _why_not(condition: Any, facts: dict[str, Any]) -> str:
    failed = first_failure(condition, facts)
    if failed is None:
        return "its conditions hold (suppressed by the engine?)"
    if isinstance(failed, Leaf):
        value = facts.get(failed.fact)
        shown = "unknown" if value is None else repr(value)
        extra = ""
        if isinstance(failed.value, FactRef):
            other = facts.get(failed.value.name)
            extra = f", {failed.value.name} = {'unknown' if other is None else repr(other)}"
        return f"{describe_leaf(failed)} is false ({failed.fact} = {shown}{extra})"
    return f"none of the alternatives (any) holds (line {getattr(failed, 'line', '?')})"
