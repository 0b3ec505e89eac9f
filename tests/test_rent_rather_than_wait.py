"""A purchase that costs less only because steady work stretched its runs past the default
limit loses the deployment to renting within the limit where the rent costs no more than the
wait is worth; the one screen then says what would make owning pay (runs allowed that long),
not a break-even the decision went against."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from helpers.properties import ENGINE, POLICY, decide

from engine.decide.sides import rent_sooner_worth_the_wait
from engine.output.text import render_brief

# a team on Google Cloud with capital: a 7B QLoRA on 1B tokens every month, steadily
MONTHLY_QLORA: dict[str, Any] = {
    "model": "mistral-7b", "method": "qlora", "training_tokens_b": 1, "runs_per_year": 12,
    "usage_pattern": "continuous", "budget_usd": 100_000, "upfront_capex": True,
    "cloud_ecosystem": "gcp"}


def test_two_week_runs_on_a_purchase_give_way_to_renting_within_the_limit() -> None:
    decision = decide(MONTHLY_QLORA)
    pick = decision.hardware.choice
    assert pick is not None and pick.where == "cloud"  # 1× RTX 4070 Ti S, 12.7 days before
    assert pick.days_per_run is not None and pick.days_per_run <= 3
    assert decision.decisions["deployment"].choice == "cloud"
    own = next(c for c in decision.hardware.alternatives if c.where == "local")
    assert own.days_per_run is not None and own.days_per_run > 3
    assert own.cost.per_year_usd < pick.cost.per_year_usd <= own.cost.per_year_usd * 1.4
    screen = render_brief(decision, ENGINE.rulebook)
    assert ("Would change it: allow runs of 12.7 days (max_days_per_run) and owning 1× RTX "
            "4070 Ti S, $1,308 a year, costs less than renting." in " ".join(screen.split()))
    assert "costs less than renting 8×" not in " ".join(screen.split())  # no break-even


def test_runs_allowed_that_long_the_purchase_is_kept() -> None:
    decision = decide({**MONTHLY_QLORA, "max_days_per_run": 14})
    pick = decision.hardware.choice
    assert pick is not None and pick.where == "local"
    assert not decision.facts.get("rent_sooner_worth_the_wait")


def _side(days: float, cost: float, *, owned: bool = False, over: bool = False,
          limit: float = 14.0) -> Any:
    config = SimpleNamespace(is_owned=owned, cost_usd_year=cost, days_per_run=days)
    return SimpleNamespace(config=config, facts={"run_limit_days": limit, "over_budget": over})


@pytest.mark.parametrize(("own", "rent", "expected"), [
    (_side(12.7, 1000.0), _side(0.1, 1370.0), 0.37),      # 40 % of a 12.7-day wait
    (_side(12.7, 1000.0), _side(0.1, 1450.0), None),      # dearer than the wait is worth
    (_side(5.0, 1000.0), _side(0.1, 1190.0), 0.19),       # 4 % a day of a 5-day run: 20 %
    (_side(5.0, 1000.0), _side(0.1, 1210.0), None),
    (_side(2.5, 1000.0), _side(0.1, 1050.0), None),       # within the limit: no wait
    (_side(12.7, 1000.0), _side(3.5, 1100.0), None),      # the rent waits too
    (_side(12.7, 1000.0), _side(0.1, 900.0), None),       # cheaper: another rule rents
    (_side(12.7, 1000.0, owned=True), _side(0.1, 1100.0), None),   # paid for already
    (_side(12.7, 1000.0, limit=3.0), _side(0.1, 1100.0), None),    # not stretched
    (_side(12.7, 1000.0), _side(0.1, 1100.0, over=True), None),    # rent over the budget
    (_side(12.7, 1000.0, over=True), _side(0.1, 1100.0, over=True), 0.1),
])
def test_renting_sooner_is_worth_no_more_than_the_wait(own: Any, rent: Any,
                                                       expected: float | None) -> None:
    extra = rent_sooner_worth_the_wait(own, rent, POLICY, 3.0)
    assert (extra is None) == (expected is None)
    if expected is not None:
        assert extra == pytest.approx(expected, abs=0.005)
    assert rent_sooner_worth_the_wait(own, rent, POLICY, None) is None
