"""Figures that round to nothing are said in words that still mean something: a spot pick's
rare interruptions and their minutes, and a better method that costs less, not "-1% more"."""

from __future__ import annotations

import re
from typing import Any

from helpers.properties import evaluate, warned

from engine.output.brief import brief_lines

# a few tiny LoRA runs a year on one GCP L4 in the US: spot, runs of minutes (no spot price
# of Tokyo is known)
TINY_SPOT: dict[str, Any] = {
    "workload": "fine-tune", "model": "qwen3-0.6b", "method": "auto",
    "training_tokens_b": 0.001, "runs_per_year": 4, "usage_pattern": "intermittent",
    "budget_usd": 100000, "upfront_capex": False, "data_residency": "region",
    "allowed_regions": ["us"], "cloud_ecosystem": "gcp"}
# a thousand small fine-tunes a year bought as consumer cards: QLoRA and LoRA cost alike
MANY_SMALL: dict[str, Any] = {
    "workload": "fine-tune", "model": "gemma-2-9b", "method": "auto",
    "training_tokens_b": 0.01, "runs_per_year": 1000, "usage_pattern": "continuous",
    "budget_usd": 3000, "upfront_capex": True, "cloud_ecosystem": "aws"}


def test_rare_spot_interruptions_are_said_as_one_in_so_many_runs() -> None:
    evaluation = evaluate(TINY_SPOT)
    choice = evaluation.decision.hardware.choice
    assert choice is not None and choice.pricing == "spot"
    facts = next(f for f in evaluation.candidate_facts if f["candidate_id"] == choice.id)
    assert 0 < facts["interruptions_per_run"] < 0.05
    said = warned(evaluation.decision, "spot-risk")
    assert len(said) == 1
    match = re.search(r"about 1 interruption in ([\d,]+) runs", said[0])
    assert match is not None
    runs = int(match[1].replace(",", ""))  # the fact is kept to three decimals
    assert abs(runs * facts["interruptions_per_run"] - 1) < 0.05
    assert "0.0 hours" not in said[0] and "0.00 interruptions" not in said[0]
    # the minutes count checkpoint writes too, which come with or without interruptions
    minutes = float(facts["spot_extra_hours"]) * 60
    expected = "under 1 min" if minutes < 1 else f"{minutes:.0f} min"
    assert f"({expected} a run with checkpoints, priced in)" in said[0]


def test_a_better_method_that_costs_less_is_said_to_cost_less() -> None:
    evaluation = evaluate(MANY_SMALL)
    cheaper = [f for f in evaluation.candidate_facts
               if f.get("better_method_alike_premium") is not None
               and f["better_method_alike_premium"] <= -0.005]
    assert cheaper
    for facts in cheaper:
        percent = round(-facts["better_method_alike_premium"] * 100)
        assert facts["better_method_alike_cost_said"] == f"{percent}% less than"
    said = evaluation.decision.model_dump_json()
    assert "less than qlora on" in said and "does the work for -" not in said


# one full fine-tune a year of a 400B MoE on a million tokens: seconds of training on the
# rented cluster, an hour of starting it
SECONDS: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-4-maverick-17b-128e", "method": "full",
    "training_tokens_b": 0.001, "runs_per_year": 1, "usage_pattern": "continuous",
    "budget_usd": 5000000, "upfront_capex": False}


def test_seconds_of_training_a_year_are_not_said_as_none() -> None:
    """"a run takes 1.2 hours on the pick (72 min of it start-up and upload), busy 0.0 hours
    a year" read as if the GPUs did no work."""
    decision = evaluate(SECONDS).decision
    choice = decision.hardware.choice
    assert choice is not None and choice.where == "cloud" and choice.busy_hours_per_year == 0
    text = " ".join(" ".join(brief_lines(decision)).split())
    assert "busy under 0.1 hours a year" in text and "busy 0.0" not in text
