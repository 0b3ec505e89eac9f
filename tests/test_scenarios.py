"""Every persona in tests/scenarios/ through the real engine (durable_rules, no mocks)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import decided

from engine.decide.engine import Engine, load_engine
from engine.tools.scenarios import check, load_scenario, run_scenario, scenario_paths

SCENARIOS = scenario_paths([Path(__file__).parent / "scenarios"])


@pytest.fixture(scope="session")
def engine() -> Engine:
    return load_engine()


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    # the decision the other modules read (helpers.decided); `rules test` itself, which
    # decides each again, is test_rule_tools' and test_policy_checks'
    decision = decided.decision_of(path)
    fired = sorted(decision.fired)
    failures = check(decision, load_scenario(path).expect, fired)
    assert not failures, "\n".join([*failures, f"fired: {', '.join(fired)}"])


def test_the_tool_runs_a_scenario(engine: Engine) -> None:
    outcome = run_scenario(engine, SCENARIOS[0])
    assert outcome.passed and outcome.decision is not None


# That every rule fires in some scenario is test_rule_tools'
# test_rules_test_coverage_reports_every_rule_fired (`rules test --coverage`: 100 %).


def test_at_least_fifteen_personas() -> None:
    assert len(SCENARIOS) >= 15


def test_cards_in_several_servers_hear_of_the_network_not_one_board(engine: Engine) -> None:
    """Scenario 103's team with a budget that buys a cluster by contract: its pick, 80 PCIe
    cards in ten servers, has a note that speaks of the servers and the network between
    them; the one-board note (which smaller, excluded configurations of the same card may
    raise) is not the pick's."""
    from engine.answers.model import validate_answers
    from engine.tools.scenarios import load_scenario

    scenario = load_scenario(Path(__file__).parent / "scenarios"
                             / "103-a-full-fine-tune-far-over-budget.yaml")
    answers = {**scenario.answers,
               "budget_usd": engine.catalog.policy.access_budget_usd_min["contract"].value}
    decision = engine.recommend(validate_answers(answers, engine.catalog))
    choice = decision.hardware.choice
    assert choice is not None and choice.nodes > 1 and "Server" in choice.gpu_label
    rules = {w.rule for w in decision.warnings}
    assert "hardware.multi-server-without-nvlink" in rules
    assert "hardware.multi-gpu-without-nvlink" not in rules
