"""A full fine-tune asked for whose memory sizes a purchase that sits idle most of the year
is said under the headline, with what LoRA needs; not where the purchase is busy, where
LoRA was asked for, or where the far-over-budget warning already says it. A lighter method
is suggested only where memory, not the work, sets what is paid for."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.properties import warned

from engine.decide.engine import Engine, load_engine

ONPREM_70B = {"workload": "fine-tune", "model": "llama-3.1-70b", "method": "full",
              "training_tokens_b": 0.02, "runs_per_year": 12, "usage_pattern": "continuous",
              "budget_usd": 1000000, "upfront_capex": True, "data_residency": "on-premises"}
WARNING = "method-bought-idle"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


def _said(engine: Engine, **answers: Any) -> list[str]:
    decision = engine.recommend({**ONPREM_70B, **answers}, decision_id="x")
    return warned(decision, WARNING)


def test_a_purchase_idle_most_of_the_year_says_what_lora_needs(engine: Engine) -> None:
    decision = engine.recommend(ONPREM_70B, decision_id="x")
    pick = decision.hardware.choice
    assert pick is not None and pick.where == "local" and pick.busy_share < 0.05
    said = warned(decision, WARNING)
    assert len(said) == 1
    text = " ".join(said[0].split())
    assert text.startswith("The full fine-tune you asked for needs 1,061 GiB: 16× ")
    assert "LoRA needs 142 GiB. Give method auto to weigh it." in text


def test_a_busy_purchase_is_not_told(engine: Engine) -> None:
    assert not _said(engine, training_tokens_b=0.5, runs_per_year=50)


def test_lora_asked_for_is_not_told(engine: Engine) -> None:
    assert not _said(engine, method="lora")


def test_far_over_budget_is_said_once(engine: Engine) -> None:
    decision = engine.recommend({**ONPREM_70B, "budget_usd": 60000}, decision_id="x")
    ids = [w.id for w in decision.warnings]
    assert "method-over-budget" in ids and WARNING not in ids


def test_a_lora_far_over_budget_on_one_gpu_is_not_told_to_weigh_qlora(engine: Engine) -> None:
    """6,000 RTX 4090 hours of an 8B LoRA on $800: the work, not the memory, sets the bill
    (one GPU holds the LoRA), and QLoRA runs slower; the hint is for configurations whose
    count memory sets (scenario 104 keeps it)."""
    answers = {"workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
               "hours_per_year": 6000, "usage_pattern": "intermittent", "budget_usd": 800,
               "upfront_capex": False, "proprietary_data": True}
    decision = engine.recommend(answers, decision_id="x")
    pick = decision.hardware.choice
    assert pick is not None and pick.count == 1
    assert "over-budget" in {w.id for w in decision.warnings}
    assert "method-over-budget" not in {w.id for w in decision.warnings}
