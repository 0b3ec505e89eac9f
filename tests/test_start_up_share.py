"""Where start-up and upload are most of every rented run, the pick's strategies say so, with
what they cost a year: several experiments on one instance while it is up, or fewer, longer
runs (stated, where the number of runs was assumed)."""

from __future__ import annotations

from typing import Any

from engine.answers.model import validate_answers
from engine.decide.decision import Decision
from engine.decide.engine import load_engine


def _decide(answers: dict[str, Any]) -> tuple[Decision, dict[str, Any]]:
    engine = load_engine()
    evaluation = engine.evaluate(validate_answers(answers, engine.catalog), trace=False)
    decision = evaluation.decision
    assert decision.hardware.choice is not None
    facts = {str(f["candidate_id"]): f for f in evaluation.candidate_facts}
    return decision, facts[decision.hardware.choice.id]


def _said(decision: Decision) -> list[str]:
    return [" ".join(s.text.split()) for s in decision.strategies if s.id == "strategy.batch-runs"]


def test_assumed_runs_of_minutes_ask_for_the_run_length() -> None:
    """5,000 L40S-hours of a 235B full fine-tune in runs of 24 L40S-hours (assumed) are 208
    runs of 8 minutes' training on 32 B200, each paying 52 minutes to start and upload."""
    decision, pick = _decide({
        "workload": "fine-tune", "model": "qwen3-235b-a22b", "method": "full",
        "hours_per_year": 5000, "hours_gpu": "l40s", "usage_pattern": "bursty",
        "budget_usd": 500000, "upfront_capex": False, "cloud_ecosystem": "gcp"})
    share, usd = float(pick["start_up_share"]), float(pick["start_up_usd_year"])
    assert share >= 0.5
    assert usd > 0.5 * float(pick["cost_usd_year"])
    assert abs(usd - float(pick["start_up_usd_per_run"]) * float(pick["runs_per_year"])) < 1
    said = _said(decision)
    assert len(said) == 1
    assert f"Start-up and upload take {share:.0%} of each run" in said[0]
    assert f"(${usd:,.0f} of the ${float(pick['cost_usd_year']):,.0f} a year)" in said[0]
    assert "runs a year assumed: if your work comes in fewer, longer runs" in said[0]


def test_stated_runs_of_minutes_are_told_to_share_an_instance() -> None:
    """Twelve 8B LoRA runs of half a million tokens each: minutes of training, most of each
    rented run spent starting."""
    decision, pick = _decide({
        "workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
        "training_tokens_b": 0.0005, "runs_per_year": 12, "usage_pattern": "intermittent",
        "budget_usd": 3000, "upfront_capex": False, "cloud_ecosystem": "none"})
    assert float(pick["start_up_share"]) >= 0.5
    said = _said(decision)
    assert len(said) == 1 and "assumed" not in said[0]
    assert "run several experiments on one instance while it is up" in said[0]


def test_runs_of_hours_and_owned_gpus_are_not_told() -> None:
    decision, pick = _decide({
        "workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
        "training_tokens_b": 0.3, "runs_per_year": 12, "usage_pattern": "intermittent",
        "budget_usd": 3000, "upfront_capex": False, "cloud_ecosystem": "none"})
    assert 0 < float(pick["start_up_share"]) < 0.5 and not _said(decision)
    owned, facts = _decide({
        "workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
        "training_tokens_b": 0.001, "runs_per_year": 12, "usage_pattern": "intermittent",
        "budget_usd": 3000, "upfront_capex": False, "cloud_ecosystem": "none",
        "owned_gpu": "rtx-4090", "owned_gpu_count": 2})
    assert facts["where"] == "local" and facts["start_up_share"] == 0.0
    assert not _said(owned)
