"""The volume at which a hosted API's bill and a model of the team's own cost the same:
said where the API is advised for its cost, and tried by what-if."""

from __future__ import annotations

from typing import Any

import pytest

from engine.answers.model import validate_answers
from engine.decide.engine import load_engine
from engine.facts.build import api_break_even
from engine.output.brief import brief_lines
from engine.tools.whatif import what_if

API_TEAM: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
    "training_tokens_b": 0.05, "runs_per_year": 6, "usage_pattern": "intermittent",
    "budget_usd": 80000, "upfront_capex": False, "api_tokens_per_month_m": 20000}


def _steps(tokens_m: float) -> float:
    """Serving in steps of $1,000 a month, one per 1,000M tokens a month begun."""
    return 1000.0 * (int(tokens_m // 1000) + 1)


@pytest.mark.parametrize("volume", [500, 2999, 4000])
def test_the_crossing_nearest_the_volume(volume: float) -> None:
    """At $2 a million tokens against $2,000 of training and serving in steps: the API costs
    less below 2,500M a month, the own model from there on (at 3,000M both cost $6,000, and
    just below the own model's serving takes a step less). From 500 the search goes up, from
    2,999 and 4,000 down, past the tie at 3,000, to 2,500."""
    found = api_break_even(volume, 2.0, 2000.0, _steps)
    assert found == pytest.approx(2500)
    assert 2.0 * found == pytest.approx(2000.0 + _steps(found))  # the bills are equal there


def test_no_crossing_without_serving_or_price() -> None:
    assert api_break_even(100, 1.0, 2000.0, lambda _: None) is None
    assert api_break_even(100, 0.0, 2000.0, _steps) is None


def test_the_api_advice_says_the_volume_at_which_your_own_model_pays() -> None:
    engine = load_engine()
    decision = engine.recommend(validate_answers(API_TEAM, engine.catalog))
    assert decision.decisions["approach"].choice == "use-api"
    even = float(decision.facts["api_break_even_tokens_m"])
    assert even > API_TEAM["api_tokens_per_month_m"]
    text = " ".join(" ".join(brief_lines(decision, engine.rulebook)).split())
    assert (f"Would change it: above ~{even:,.0f}M tokens a month (yours: 20,000M), a model "
            "of your own would cost less than the API.") in text
    for volume, own_cheaper in ((even * 0.995, False), (even * 1.005, True)):
        facts = engine.evaluate(validate_answers({**API_TEAM, "api_tokens_per_month_m": volume},
                                                 engine.catalog), trace=True).decision.facts
        assert (facts["api_to_own_cost_ratio"] >= 1) is own_cheaper


@pytest.mark.slow
def test_whatif_tries_that_volume() -> None:
    engine = load_engine()
    _, flips = what_if(engine, validate_answers(API_TEAM, engine.catalog))
    approach = next(f for f in flips if f.axis == "approach")
    assert approach.answer == "api_tokens_per_month_m" and approach.after == "fine-tune"
    assert 20000 < float(approach.value) < 30000


BUYS_IF_IT_TRAINS: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-70b", "method": "auto",
    "hours_per_year": 20000, "usage_pattern": "intermittent", "budget_usd": 250000,
    "upfront_capex": True, "frequent_checkpoints": True, "api_tokens_per_month_m": 10}
"""A team told to use an API whose best way to train anyway is a purchase."""


def test_the_api_steps_purchase_is_said_as_one() -> None:
    """"should you still fine-tune, 4× RTX A6000 from owned does your runs": the GPUs are
    not the team's; bought, they are said as bought, with what they cost up front."""
    decision = load_engine().recommend(BUYS_IF_IT_TRAINS, decision_id="x")
    choice = decision.hardware.choice
    assert decision.decisions["approach"].choice == "use-api"
    assert choice is not None and choice.where == "local" and not choice.owned
    text = " ".join(" ".join(brief_lines(decision)).split())
    assert "from owned" not in text
    assert f"should you still fine-tune, buying {choice.count}× " in text
    assert f"(${choice.cost.upfront_usd:,.0f} up front) does your runs" in text
