"""The box a team develops on (hybrid advice) is of a GPU vendor the team can use: its own
cards of another vendor are not offered for development, and a box to buy is of its vendors."""

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
