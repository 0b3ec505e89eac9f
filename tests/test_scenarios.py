"""Every persona in tests/scenarios/ through the real engine (durable_rules, no mocks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.decide.engine import Engine, load_engine
from engine.tools.scenarios import run_scenario, scenario_paths

SCENARIOS = scenario_paths([Path(__file__).parent / "scenarios"])


@pytest.fixture(scope="session")
def engine() -> Engine:
    return load_engine()


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(engine: Engine, path: Path) -> None:
    outcome = run_scenario(engine, path)
    assert outcome.passed, "\n".join([*outcome.failures, f"fired: {', '.join(outcome.fired)}"])


@pytest.mark.slow
def test_every_rule_fires_in_some_scenario(engine: Engine) -> None:
    fired = {rule for path in SCENARIOS for rule in run_scenario(engine, path).fired}
    never = [r.id for r in engine.rulebook.rules if r.id not in fired]
    assert never == []


def test_at_least_fifteen_personas() -> None:
    assert len(SCENARIOS) >= 15
