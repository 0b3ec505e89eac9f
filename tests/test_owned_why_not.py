"""Why the team's own GPUs are not used names the limit that matters: one that keeps out all
of them (a vendor the team cannot use), else of a method that fits them, the pick's method
first; a purchase beside them says its method where it is not the pick's."""

from __future__ import annotations

from typing import Any

from helpers.properties import evaluate

from engine.output.summary import owned_line

# ten Llama 4 Scout jobs at once, method auto (LoRA picked), on an owned 8x A100 80GB node
SCOUT_POOL = {"workload": "fine-tune", "model": "llama-4-scout-17b-16e", "method": "auto",
              "hours_per_year": 1000, "usage_pattern": "intermittent", "budget_usd": 2000000,
              "upfront_capex": False, "data_residency": "region", "allowed_regions": ["eu"],
              "gpu_vendors": ["nvidia"], "cloud_ecosystem": "gcp", "concurrent_jobs": 10,
              "owned_gpu": "a100-80gb", "owned_gpu_count": 8}
# an AMD-only team that owns NVIDIA cards
AMD_ONLY = {"workload": "fine-tune", "model": "qwen3-235b-a22b", "method": "auto",
            "hours_per_year": 5000, "hours_gpu": "h200", "usage_pattern": "bursty",
            "budget_usd": 500, "upfront_capex": False, "gpu_vendors": ["amd"],
            "cloud_ecosystem": "none", "owned_gpu": "rtx-a6000", "owned_gpu_count": 8}
# a 27B model, method auto (LoRA picked), on one owned RTX 3090
ONE_3090 = {"workload": "fine-tune", "model": "gemma-3-27b", "method": "auto",
            "training_tokens_b": 0.005, "runs_per_year": 1, "usage_pattern": "bursty",
            "budget_usd": 20000, "upfront_capex": True, "cloud_ecosystem": "gcp",
            "owned_gpu": "rtx-3090", "owned_gpu_count": 1}


def _why(raw: dict[str, Any]) -> str:
    why = evaluate(raw).decision.hardware.owned_why_not
    assert why is not None
    return why


def test_a_method_that_fits_says_what_else_keeps_them_out() -> None:
    # before: "the job needs 205 GiB per GPU across 8 GPUs" (full fine-tuning's memory)
    assert "runs 2 of the 10 jobs you need at the same time" in _why(SCOUT_POOL)


def test_a_limit_on_every_method_is_the_reason() -> None:
    # before: "would have to run 11,938 hours a year" (QLoRA's year, on cards it cannot use)
    assert _why(AMD_ONLY).startswith("You can use only amd GPUs")


def test_the_picks_method_is_named_where_none_fits_and_a_purchase_says_its_own() -> None:
    decision = evaluate(ONE_3090).decision
    assert decision.hardware.choice is not None and decision.hardware.choice.method == "lora"
    why = decision.hardware.owned_why_not
    assert why is not None and "61.35 GiB" in why  # LoRA's, not full fine-tuning's 420
    line = owned_line(decision)
    assert line is not None and "$174 a year with QLoRA" in line


# an on-premises team without capital that owns one A10G and runs two small jobs at once
ONE_A10G_TWO_JOBS = {"workload": "fine-tune", "model": "qwen3-0.6b", "method": "full",
                     "training_tokens_b": 0.1, "runs_per_year": 12,
                     "usage_pattern": "continuous", "budget_usd": 100000,
                     "upfront_capex": False, "data_residency": "on-premises",
                     "cloud_ecosystem": "gcp", "concurrent_jobs": 2, "owned_gpu": "a10g",
                     "owned_gpu_count": 1}


def test_a_refusal_says_why_the_teams_own_gpus_are_out_first() -> None:
    """No configuration is eligible (no cloud on premises, no purchase without capital): of
    all those shut out, the one the team has says what keeps it out, on the one screen,
    before the counts."""
    from engine.output.brief import brief_lines

    decision = evaluate(ONE_A10G_TWO_JOBS).decision
    assert decision.hardware.choice is None
    lines = brief_lines(decision)
    said = " ".join(lines)
    assert lines[1].startswith("Your own 1× A10G cannot do this work within your limits:")
    assert "runs 1 of the 2 jobs you need at the same time" in said
    assert said.index("Your own 1× A10G") < said.index("configurations excluded")
