"""Rules and rulebooks built in code, for tests of the compiler and of durable_rules' limits."""

from __future__ import annotations

from engine.rules.conditions import Condition
from engine.rules.load import Rule, Rulebook
from engine.rules.model import RuleModel


def make_rule(cond: Condition, rule_id: str = "t.rule", match: str = "request",
              order: int = 0) -> Rule:
    model = RuleModel.model_validate({
        "id": rule_id, "description": "test", "match": match,
        "then": [{"suggest": {"id": "strategy.off-peak"}}], "because": "test",
        "sources": ["cost.strategies"],
    })
    return Rule(model, cond, "test.yaml", 1, order)


def synthetic_book(rules: list[Rule]) -> Rulebook:
    return Rulebook(rules=tuple(rules), decisions={}, decision_descriptions={}, phases={},
                    warnings={},
                    strategies={}, set_facts={}, texts={}, applies_when={})
