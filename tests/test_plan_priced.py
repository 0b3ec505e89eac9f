"""The team's plan is priced beside the pick wherever it can be had: rented at its count,
or bought (where the team has no capital, as a purchase the rules rule out, saying so); where
neither is possible, the one screen says why it is not priced."""

from __future__ import annotations

from typing import Any

from helpers.properties import warned

from engine.decide.engine import Engine, load_engine
from engine.output.brief import brief_lines

PLAN = {"workload": "fine-tune", "model": "qwen2.5-7b", "method": "lora",
        "training_tokens_b": 0.5, "runs_per_year": 12, "usage_pattern": "intermittent",
        "budget_usd": 20000, "upfront_capex": False}


def _decide(engine: Engine, **answers: Any) -> Any:
    return engine.recommend({**PLAN, **answers}, decision_id="x")


def test_a_plan_to_buy_without_capital_is_priced_and_ruled_out() -> None:
    engine = load_engine()
    decision = _decide(engine, planned_gpu="rtx-pro-6000-blackwell", planned_gpu_count=2)
    plan = decision.hardware.plan
    assert plan is not None and plan.excluded and plan.upfront_usd > 0
    assert "capital up front" in (plan.reason or "")
    assert any(line.startswith("Your plan, 2× RTX PRO 6000, to buy:")
               for line in brief_lines(decision))


def test_a_plan_sold_nowhere_at_its_count_is_said() -> None:
    engine = load_engine()
    decision = _decide(engine, planned_gpu="rtx-pro-6000-blackwell", planned_gpu_count=8)
    assert decision.hardware.plan is None
    said = warned(decision, "plan-not-priced")
    assert len(said) == 1 and "cannot be priced" in said[0]
    assert decision.facts["plan_priced"] is False


def test_a_plan_rented_at_its_count_is_not_said_to_be_unpriced() -> None:
    engine = load_engine()
    decision = _decide(engine, planned_gpu="h100-sxm", planned_gpu_count=8)
    assert decision.hardware.plan is not None and decision.facts["plan_priced"] is True
    assert not warned(decision, "plan-not-priced")


def test_a_plan_that_cannot_do_the_year_is_not_priced_as_a_saving() -> None:
    # 16x L4 for four 0.5B pretrains of 2T tokens a year: busy 120 % of the year
    engine = load_engine()
    decision = engine.recommend(
        {"workload": "pretrain", "model_params_b": 0.5, "training_tokens_b": 2000,
         "runs_per_year": 4, "usage_pattern": "bursty", "budget_usd": 500000,
         "upfront_capex": False, "gpu_vendors": ["amd"], "max_days_per_run": 7,
         "planned_gpu": "l4", "planned_gpu_count": 16}, decision_id="x")
    plan = decision.hardware.plan
    assert plan is not None and not plan.within_year and plan.busy_share > 1
    assert plan.per_year_usd < decision.hardware.choice.cost.per_year_usd  # cheaper on paper
    line = next(x for x in brief_lines(decision) if x.startswith("Your plan"))
    assert "cannot do this work within a year" in line
    assert "less than the pick" not in line and "$" not in line.split("(ruled out")[0]


def test_a_plan_of_gpus_the_team_owns_is_not_priced_again() -> None:
    # it owns two A10G and plans one: the pick keeps using its own, and the plan is theirs
    engine = load_engine()
    decision = _decide(engine, model="llama-3.2-1b", owned_gpu="a10g", owned_gpu_count=2,
                       planned_gpu="a10g", planned_gpu_count=1)
    choice = decision.hardware.choice
    assert choice is not None and choice.owned
    lines = brief_lines(decision)
    assert "Your plan, 1× A10G, is of the GPUs you own: the pick keeps using them." in lines
    assert not any(line.startswith("Your plan, 1× A10G,") and "a year" in line
                   for line in lines)
    # planning more of them than it owns is a purchase or a rental, priced as before
    more = _decide(engine, model="llama-3.2-1b", owned_gpu="a10g", owned_gpu_count=2,
                   planned_gpu="a10g", planned_gpu_count=8)
    assert not any("is of the GPUs you own" in line for line in brief_lines(more))


def test_an_unpriced_plan_says_its_own_reason() -> None:
    engine = load_engine()
    # one card a machine holds, that no cloud rents and the catalog has no price for
    said = warned(_decide(engine, planned_gpu="rtx-pro-5000-blackwell", planned_gpu_count=1),
                  "plan-not-priced")
    assert len(said) == 1
    assert "no cloud in the catalog rents it, and the catalog has no purchase price" in said[0]
    assert "machine" not in said[0] and "would hold the job" not in said[0]
    # eight cards no machine holds: fewer would
    said = warned(_decide(engine, planned_gpu="rtx-pro-6000-blackwell", planned_gpu_count=8),
                  "plan-not-priced")
    assert "no machine in it holds them (1 would hold the job)" in said[0]
