"""A continuous team whose own GPUs take longer than the default run limit and cannot do the
whole year's work anyway: they take the share they can, in runs up to the policy's bound on
a steady run (the team set no limit), and the rest is rented by the hour. Where the team
sets a limit, or its work is not steady, the default holds and it is all rented."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.properties import CATALOG, ENGINE

from engine.answers.model import validate_answers
from engine.decide.engine import Decision
from engine.output.brief import brief_lines
from engine.output.summary import work_line

# 4× RTX 4090 owned; a 14B LoRA on 1B tokens takes 4.4 days a run on them (the default limit
# for a fine-tune is 3) and 100 runs a year would need 440 days
STEADY: dict[str, Any] = {
    "workload": "fine-tune", "model": "qwen2.5-14b", "method": "lora",
    "training_tokens_b": 1, "runs_per_year": 100, "usage_pattern": "continuous",
    "budget_usd": 50000, "upfront_capex": False, "owned_gpu": "rtx-4090",
    "owned_gpu_count": 4}
WARNING = "own-runs-past-the-default-limit"


def _decide(answers: dict[str, Any]) -> Decision:
    return ENGINE.recommend(validate_answers(answers, CATALOG), decision_id="t", trace=True)


def test_own_gpus_take_a_share_of_steady_work_in_longer_runs() -> None:
    decision = _decide(STEADY)
    facts = decision.facts
    assert decision.decisions["deployment"].choice == "hybrid"
    assert facts["peaks_split"] == "hours"
    assert facts["peaks_owned_run_days"] > facts["max_days_per_run_default"]
    assert facts["peaks_owned_run_days"] <= facts["peaks_owned_longest_days"]
    assert 0 < facts["peaks_owned_share"] < 1
    # cheaper than renting it all, which is what the default limit alone gave
    assert facts["peaks_cost_usd_year"] < facts["cloud_cost_usd_year"]
    rented_all = _decide({**STEADY, "max_days_per_run": 3})
    assert rented_all.decisions["deployment"].choice == "cloud"
    choice = rented_all.hardware.choice
    assert choice is not None and facts["peaks_cost_usd_year"] < choice.cost.per_year_usd
    # the one screen says the split, how long a run takes on their own GPUs, and that it
    # is past the default limit
    lines = " ".join(brief_lines(decision, ENGINE.rulebook))
    assert lines.startswith("Keep your 4× RTX 4090 busy on ")
    assert f"on your GPUs ({facts['peaks_owned_run_length']} a run)" in work_line(decision)
    assert [w for w in decision.warnings if w.id == WARNING]
    assert "longer than the 3 days a run may take by default" in lines
    assert decision.hardware.owned_why_not is None


def test_a_limit_the_team_sets_holds_for_its_own_gpus_too() -> None:
    decision = _decide({**STEADY, "max_days_per_run": 3})
    assert "peaks_split" not in decision.facts
    assert not [w for w in decision.warnings if w.id == WARNING]
    why = decision.hardware.owned_why_not
    assert why is not None and "longer than the 3 days" in why


def test_work_that_is_not_steady_keeps_the_default_limit() -> None:
    decision = _decide({**STEADY, "usage_pattern": "intermittent"})
    assert "peaks_split" not in decision.facts
    assert decision.decisions["deployment"].choice == "cloud"
    assert not [w for w in decision.warnings if w.id == WARNING]


def test_own_runs_within_the_default_say_no_more() -> None:
    decision = _decide({**STEADY, "training_tokens_b": 0.5, "runs_per_year": 200})
    facts = decision.facts
    assert facts["peaks_split"] == "hours"
    assert facts["peaks_owned_run_days"] <= facts["max_days_per_run_default"]
    assert not [w for w in decision.warnings if w.id == WARNING]


# 8× RTX 5090 owned (four a box), an 8B LoRA on 5B tokens a run, 100 runs: they take 38 %
# of the work in runs of 7.6 days; the rest is rented on 8× H100, an instance larger than
# the fewest that meet the limit for a long run
FIVE_BILLION: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
    "training_tokens_b": 5, "runs_per_year": 100, "usage_pattern": "continuous",
    "budget_usd": 50000, "upfront_capex": False, "owned_gpu": "rtx-5090",
    "owned_gpu_count": 8}
# 4× RTX A6000 owned, a 14B model on 2B tokens, 200 runs: they take 20 % of the work
A6000: dict[str, Any] = {
    "workload": "fine-tune", "model": "qwen2.5-14b", "method": "auto",
    "training_tokens_b": 2, "runs_per_year": 200, "usage_pattern": "continuous",
    "budget_usd": 200000, "upfront_capex": False, "owned_gpu": "rtx-a6000",
    "owned_gpu_count": 4}


def test_the_share_pick_keeps_what_its_whole_year_said_of_a_larger_instance() -> None:
    decision = _decide(FIVE_BILLION)
    choice = decision.hardware.choice
    assert choice is not None and choice.id.endswith(":share")
    larger = [w.text for w in decision.warnings if w.id == "larger-instance-for-a-long-run"]
    assert larger and " on 0 (" not in larger[0] and "instead of 0.0" not in larger[0]


def test_no_budget_warning_where_the_split_keeps_within_it() -> None:
    decision = _decide(FIVE_BILLION)
    facts = decision.facts
    assert facts["least_budget_ratio"] > 1  # every configuration doing all of it is over
    assert facts["peaks_cost_usd_year"] <= facts["compute_budget_usd"]
    assert not [w for w in decision.warnings if w.id in ("budget-short", "budget-far-short")]


def test_close_calls_weigh_the_whole_cost_of_a_split() -> None:
    decision = _decide(A6000)
    choice = decision.hardware.choice
    assert choice is not None and choice.id.endswith(":share")
    whole = choice.cost.per_year_usd + decision.facts["peaks_owned_usd_year"]
    for call in decision.hardware.close_calls:
        assert call.premium == pytest.approx(call.per_year_usd / whole - 1, abs=2e-3)
    assert any(call.per_year_usd < whole and call.premium < 0
               for call in decision.hardware.close_calls)


def test_no_note_on_longer_own_runs_where_a_purchase_wins() -> None:
    """4× RTX 4090 owned would take 8.9 days a run: within the steady bound, so their share
    is priced, but buying 7× RTX PRO 6000 Server costs less a year than it: no note that
    their runs may be longer, since the pick does not use them."""
    decision = _decide({**STEADY, "training_tokens_b": 2, "runs_per_year": 200,
                        "method": "auto", "budget_usd": 200000, "upfront_capex": True})
    assert decision.decisions["deployment"].choice == "local"
    assert decision.facts["peaks_owned_run_days"] > decision.facts["max_days_per_run_default"]
    assert not [w for w in decision.warnings if w.id == WARNING]
