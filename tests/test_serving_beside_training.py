"""A team that states its tokens a month and keeps a model of its own is told, under a
headline about training, what serving that model costs against the hosted API's bill; a
team whose API bill is a small share of its own model's uses the API, however it trains."""

from __future__ import annotations

from typing import Any

from helpers.properties import POLICY, decide

from engine.output.brief import brief_items
from engine.output.summary import serving_line, usd

# a small model for a high volume: a model of its own pays
HIGH_VOLUME: dict[str, Any] = {
    "model": "qwen3-8b", "training_tokens_b": 0.01, "runs_per_year": 4,
    "api_tokens_per_month_m": 20_000, "budget_usd": 2000, "upfront_capex": True,
    "proprietary_data": True}
# proprietary data at a low volume: its own model, though the API would cost far less
PROPRIETARY_LOW: dict[str, Any] = {
    "model": "phi-4-mini", "training_tokens_b": 0.01, "runs_per_year": 4,
    "api_tokens_per_month_m": 50, "budget_usd": 2000, "upfront_capex": False,
    "proprietary_data": True}
STEADY_LOW: dict[str, Any] = {
    "model": "gemma-2-2b", "method": "auto", "training_tokens_b": 0.05, "runs_per_year": 3,
    "usage_pattern": "continuous", "budget_usd": 500, "upfront_capex": False,
    "cloud_ecosystem": "aws", "api_tokens_per_month_m": 100}


def _notices(raw: dict[str, Any]) -> list[str]:
    return [text for kind, text in brief_items(decide(raw)) if kind == "notice"]


def test_serving_a_model_of_your_own_is_said_beside_its_training() -> None:
    decision = decide(HIGH_VOLUME)
    assert decision.decisions["approach"].choice == "fine-tune"
    line = serving_line(decision)
    assert line is not None and line in _notices(HIGH_VOLUME)
    facts = decision.facts
    assert f"on {facts['own_serving_gpus']:,.0f} GPUs around the clock" in line
    assert f"${facts['own_cost_usd_month']:,.0f} a month all in" in line
    # the month's bill split into its parts, so that serving is not read as the whole of it
    serving, training = facts["own_serving_usd_month"], facts["own_training_usd_month"]
    assert f"({usd(serving)} serving it on" in line
    assert f"{usd(training)} its training programme)" in line
    assert abs(serving + training - facts["own_cost_usd_month"]) < 1
    assert f"${facts['api_cost_usd_month']:,.0f} for your 20,000M tokens" in line
    assert f"less below ~{facts['api_break_even_tokens_m']:,.0f}M" in line


def test_an_api_kept_out_for_another_reason_is_said_with_it() -> None:
    line = serving_line(decide(PROPRIETARY_LOW))
    assert line is not None and ", more than " in line
    assert line.endswith("not an API: your data is proprietary and cannot be shared with an "
                         "external model provider.")


def test_no_serving_line_under_an_api_headline_or_without_a_volume() -> None:
    decision = decide(STEADY_LOW)
    assert decision.decisions["approach"].choice == "use-api"  # $85 against $4,650 a month
    assert decision.facts["api_to_own_cost_ratio"] <= POLICY.thresholds[
        "api_far_cheaper_ratio"].value
    assert serving_line(decision) is None
    assert serving_line(decide({**HIGH_VOLUME, "api_tokens_per_month_m": None})) is None


def test_a_team_that_counts_no_paid_engineers_serves_in_its_own_time() -> None:
    """The lowest budget tier's programme counts no paid engineers ("your own time"): the
    model it serves is run in its own time too, not by a share of a paid engineer."""
    low = decide(PROPRIETARY_LOW)  # $2,000: people not counted
    paid = decide({**PROPRIETARY_LOW, "budget_usd": 50000})
    fte = POLICY.serving_operations_fte.value
    salary = POLICY.engineer_usd_per_year["us"].value
    extra = paid.facts["own_serving_usd_month"] - low.facts["own_serving_usd_month"]
    assert abs(extra - fte * salary / 12) < 1
    said = {w.id: w.text for w in low.warnings}
    assert "your own time to run it" in said["api-cheaper-than-own"]
    assert "share of an engineer" in {w.id: w.text for w in paid.warnings}[
        "api-cheaper-than-own"]
