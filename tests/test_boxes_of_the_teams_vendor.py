"""The boxes a team is weighed against are of a GPU vendor it can use: the box it develops on
(hybrid advice) is never its own cards of another vendor, a box to buy is of its vendors, and
whether the job fits a box at the desk is asked of its vendors' cards."""

from __future__ import annotations

from helpers.properties import evaluate

from engine.decide.engine import load_engine
from engine.output.brief import brief_lines

# an AMD-only team owning 8x L40S, 1,000 GPU-hours a year of a 14B fine-tune
AMD_TEAM_OWNING_NVIDIA = {"workload": "fine-tune", "model": "qwen2.5-14b", "method": "auto",
                          "hours_per_year": 1000, "usage_pattern": "intermittent",
                          "budget_usd": 500000, "upfront_capex": True, "gpu_vendors": ["amd"],
                          "cloud_ecosystem": "none", "concurrent_jobs": 2,
                          "owned_gpu": "l40s", "owned_gpu_count": 8}


def test_own_cards_of_another_vendor_are_not_the_development_box() -> None:
    evaluation = evaluate(AMD_TEAM_OWNING_NVIDIA)
    assert evaluation.request_facts.get("dev_is_owned") is not True
    assert "usage.develop-on-your-own" not in evaluation.fired
    decision = load_engine().recommend(AMD_TEAM_OWNING_NVIDIA, decision_id="x")
    assert not any(line.startswith("Develop on your own") for line in brief_lines(decision))


def test_a_development_box_to_buy_is_of_the_teams_vendor() -> None:
    raw = {k: v for k, v in AMD_TEAM_OWNING_NVIDIA.items()
           if k not in ("owned_gpu", "owned_gpu_count")}
    facts = evaluate(raw).request_facts
    assert facts["dev_is_owned"] is False
    assert str(facts["dev_gpu_name"]).startswith("AMD ")
    nvidia_team = evaluate({**raw, "gpu_vendors": ["nvidia"]}).request_facts
    assert str(nvidia_team["dev_gpu_name"]).startswith("NVIDIA ")


def test_whether_a_job_fits_a_box_is_asked_of_the_teams_vendor() -> None:
    # DeepSeek V3 full fine-tune: no box holds it; the reason names a box the team could buy
    raw = {"workload": "fine-tune", "model": "deepseek-v3", "method": "full",
           "training_tokens_b": 0.001, "runs_per_year": 12, "usage_pattern": "bursty",
           "budget_usd": 100000, "upfront_capex": True, "cloud_ecosystem": "aws"}
    amd = evaluate({**raw, "gpu_vendors": ["amd"]}).request_facts
    anyone = evaluate(raw).request_facts
    assert "Radeon" in str(amd["largest_local_gpu_name"])
    assert "RTX" in str(anyone["largest_local_gpu_name"])
    assert amd["largest_local_vram_gib"] < anyone["largest_local_vram_gib"]
