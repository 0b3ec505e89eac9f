"""Close calls that are calls, and why-nots that name their rule: a configuration within the
policy's margin of the pick's cost is said beside it only where the team could prefer it
(cheaper, sooner, or less up front); one the pick beats on every count is not; a row kept
out by a decision names the rule that decided it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from engine.answers.model import load_answers, validate_answers
from engine.decide.engine import Decision, load_engine
from engine.output.brief import brief_items
from engine.output.hardware_rows import decided_against, why_not_short
from engine.output.summary import close_call_lines

GCP_DE = {"workload": "fine-tune", "model": "llama-3.1-70b", "method": "lora",
          "training_tokens_b": 0.2, "runs_per_year": 12, "usage_pattern": "intermittent",
          "budget_usd": 60000, "upfront_capex": False, "cloud_ecosystem": "gcp",
          "data_residency": "region", "allowed_regions": ["de"]}
"""A GCP shop whose data stays in Germany: the marketplace rows go against its data rule."""
PRIVATE = {"workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
           "training_tokens_b": 0.1, "runs_per_year": 4, "usage_pattern": "intermittent",
           "budget_usd": 30000, "upfront_capex": False, "api_tokens_per_month_m": 2000,
           "proprietary_data": True}
"""Proprietary data, no ecosystem: marketplace rows cost about the same as the pick."""
STEADY = {"workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
          "training_tokens_b": 0.05, "runs_per_year": 200, "usage_pattern": "continuous",
          "budget_usd": 20000, "upfront_capex": True}
AWS_BURSTS = {"workload": "fine-tune", "model": "llama-3.1-70b", "method": "full",
              "training_tokens_b": 1, "runs_per_year": 6, "usage_pattern": "bursty",
              "budget_usd": 200000, "upfront_capex": False, "cloud_ecosystem": "aws",
              "owned_gpu": "h100-sxm", "owned_gpu_count": 8}
"""An AWS shop that stays on AWS at about twice the cost of the best other cloud."""


def _decide(answers: dict[str, Any]) -> Decision:
    engine = load_engine()
    return engine.recommend(validate_answers(answers, engine.catalog))


@pytest.mark.parametrize("answers", [GCP_DE, PRIVATE, STEADY], ids=["gcp-de", "private",
                                                                    "steady"])
def test_no_close_call_the_pick_beats_on_every_count(answers: dict[str, Any]) -> None:
    decision = _decide(answers)
    pick = decision.hardware.choice
    assert pick is not None and pick.days_per_run is not None
    for near in decision.hardware.close_calls:
        assert near.days_per_run is not None
        could_prefer = (near.premium < 0 or near.days_per_run < pick.days_per_run * 0.9
                        or near.upfront_usd < pick.cost.upfront_usd)
        assert could_prefer or not near.reason, (near.id, near.premium, near.reason)


def test_a_marketplace_row_names_the_data_rule_that_kept_it_out() -> None:
    engine = load_engine()
    decision = _decide(GCP_DE)
    shown = " ".join(" ".join(t for kind, t in brief_items(decision, 3, engine.rulebook)
                              if kind == "alternative").split())
    assert ("(not taken: cloud kind is hyperscaler, not marketplace "
            "[cloud.marketplace-sensitive-data])") in shown


@pytest.mark.parametrize("answers", [GCP_DE, PRIVATE, STEADY], ids=["gcp-de", "private",
                                                                    "steady"])
def test_every_decided_why_not_names_a_rule(answers: dict[str, Any]) -> None:
    engine = load_engine()
    decision = _decide(answers)
    rules = {r.id for r in engine.rulebook.rules}
    for c in decision.hardware.alternatives:
        why = why_not_short(decision, c, engine.rulebook)
        if decided_against(decision, c, engine.rulebook) is None or why is None:
            continue
        named = re.search(r"\[([a-z0-9.-]+)\]$", why)
        assert named is not None and named.group(1) in rules, why


def test_a_frontier_need_is_said_and_a_deadline_does_not_send_a_regulated_team_to_an_api(
) -> None:
    """A regulated team needing frontier capability keeps its own model, with a deadline
    too: the need and the cheaper API are said, and the deadline says the runs must fit."""
    team = {"model": "llama-3.1-70b", "training_tokens_b": 0.1, "runs_per_year": 4,
            "api_tokens_per_month_m": 200, "needs_frontier_capability": True,
            "regulated_control": True, "budget_usd": 40000, "upfront_capex": False}
    for extra in ({}, {"weeks_to_first_model": 2}):
        decision = _decide({**team, **extra})
        assert decision.decisions["approach"].choice == "fine-tune"
        need = [w.text for w in decision.warnings if w.id == "frontier-need"]
        assert len(need) == 1 and "If you keep your own for regulated control" in need[0]
        api = [w.text for w in decision.warnings if w.id == "api-cheaper-than-own"]
        assert len(api) == 1 and "frontier hosted model" in api[0]
        deadline = [w.text for w in decision.warnings if w.id == "tight-timeline"]
        assert len(deadline) == (1 if extra else 0)
        assert all("you keep your own for regulated control" in t for t in deadline)


def test_the_cheaper_api_is_said_where_the_data_keeps_the_team_off_it() -> None:
    decision = _decide(PRIVATE)
    assert decision.decisions["approach"].choice == "fine-tune"
    said = [w.text for w in decision.warnings if w.id == "api-cheaper-than-own"]
    assert len(said) == 1
    assert "2,000 M tokens a month" in said[0] and "serving it around the clock" in said[0]


LATEST = {"workload": "fine-tune", "model": "qwen3-32b", "method": "lora",
          "training_tokens_b": 0.5, "runs_per_year": 24, "usage_pattern": "continuous",
          "budget_usd": 250000, "upfront_capex": True, "gpu_vendors": ["nvidia"],
          "needs_latest_hardware": True}
"""A team that needs the newest hardware: H100s cost about what the pick's B200 does."""


def test_an_older_generation_is_not_taken_for_the_newest_one_the_team_asked_for() -> None:
    """The pick's preference for the newest generation (weight 4) outweighs the cloud-kind or
    pricing decision an H100 or H200 row also goes against: that is its why-not, in the close
    call and in the rows (an AWS team whose pick is bought); a preference for the pick that is
    about where it is rented (the team's own hyperscaler) restates the decision and is not."""
    engine = load_engine()
    decision = engine.recommend(validate_answers(LATEST, engine.catalog))
    pick = decision.hardware.choice
    assert pick is not None and pick.gpu == "b200"
    aws = engine.recommend(validate_answers({**LATEST, "cloud_ecosystem": "aws"},
                                            engine.catalog))
    pick = aws.hardware.choice
    assert pick is not None and pick.gpu == "rtx-pro-6000-blackwell"
    older = [c for c in aws.hardware.close_calls if "h100" in c.id or "h200" in c.id]
    assert older and all(c.reason is not None and "newest generation you asked for" in c.reason
                         for c in older)
    rows = [c for c in aws.hardware.alternatives
            if c.gpu in ("h100-sxm", "h100-pcie", "h100-nvl", "h200")]
    assert len(rows) >= 2 and all(why_not_short(aws, c, engine.rulebook)
                                  == "ranked lower: hardware.latest-generation" for c in rows)
    assert any(decided_against(aws, c, engine.rulebook) is not None for c in rows)
    anywhere = {k: v for k, v in GCP_DE.items() if k not in ("data_residency", "allowed_regions")}
    gcp = engine.recommend(validate_answers(anywhere, engine.catalog))
    for c in gcp.hardware.alternatives:
        said = why_not_short(gcp, c, engine.rulebook) or ""
        assert "cloud.same-ecosystem" not in said or decided_against(
            gcp, c, engine.rulebook) is None


@pytest.mark.parametrize("answers", [GCP_DE, PRIVATE, STEADY, AWS_BURSTS],
                         ids=["gcp-de", "private", "steady", "aws-bursts"])
def test_a_cheaper_close_call_is_not_beside_a_far_cheaper_row_of_its_decision(
        answers: dict[str, Any]) -> None:
    """A close call that costs a little less and goes against a decision is no close call
    where that decision also keeps out a row that costs less by more than the margin (here:
    among the rows shown): the decision was not close."""
    engine = load_engine()
    decision = _decide(answers)
    pick = decision.hardware.choice
    assert pick is not None
    margin = engine.catalog.policy.close_call_margin.value
    shown = {c.id: c for c in decision.hardware.alternatives}
    far = {decided_against(decision, c, engine.rulebook)
           for c in decision.hardware.alternatives
           if c.cost.per_year_usd < pick.cost.per_year_usd * (1 - margin)}
    for near in decision.hardware.close_calls:
        if near.premium >= 0:
            continue
        axis = decided_against(decision, shown[near.id], engine.rulebook)
        assert axis is None or axis not in far, (near.id, axis)


def test_staying_in_a_hyperscaler_at_twice_the_cost_is_no_close_call() -> None:
    """The AWS shop's pick costs 2.3× the best other cloud: another cloud 10 % cheaper is no
    close call (it read "A close call: 8× H200, RunPod on-demand costs 10 % less; the pick
    won on: … $7,884 a year (2.3×) dearer … than the best other cloud")."""
    decision = _decide(AWS_BURSTS)
    pick = decision.hardware.choice
    assert pick is not None and pick.provider == "aws"
    assert not [c for c in decision.hardware.close_calls if c.premium < 0]
    assert decision.facts["hyperscaler_to_other_cost_ratio"] > 2


def test_a_purchase_that_needs_less_up_front_says_so() -> None:
    """A close call that costs about the same a year but needs a fifth or more less up front
    says what it would save there (2× used RTX 3090 against an RTX 5090: $3,580 instead of
    $5,280); a few per cent less up front is not worth the line."""
    engine = load_engine()
    example = Path(__file__).resolve().parent.parent / "examples" / "startup-7b-continuous.yaml"
    decision = engine.recommend(load_answers(example, (), engine.catalog))
    pick = decision.hardware.choice
    assert pick is not None and pick.where == "local"
    cheaper_up_front = [c for c in decision.hardware.close_calls
                        if 0 < c.upfront_usd < pick.cost.upfront_usd * 0.8]
    assert cheaper_up_front
    lines = " ".join(close_call_lines(decision))
    for near in cheaper_up_front:
        assert (f"{near.label} costs" in lines and "you would rather spend less up front "
                f"(${near.upfront_usd:,.0f} instead of ${pick.cost.upfront_usd:,.0f})" in lines)


HOBBYIST = {"workload": "fine-tune", "model": "llama-3.1-8b", "method": "auto",
            "training_tokens_b": 0.02, "runs_per_year": 10, "usage_pattern": "intermittent",
            "budget_usd": 1500, "upfront_capex": True}
"""$14 a year of work: the cheaper rows save cents."""


def test_a_saving_of_a_few_dollars_that_is_no_sooner_is_no_close_call() -> None:
    engine = load_engine()
    least = engine.catalog.policy.thresholds["close_call_least_usd_year"].value
    decision = _decide(HOBBYIST)
    pick = decision.hardware.choice
    assert pick is not None and pick.days_per_run is not None
    cheaper = [a for a in decision.hardware.alternatives
               if a.cost.per_year_usd <= pick.cost.per_year_usd and a.days_per_run is not None
               and a.days_per_run >= pick.days_per_run and a.gpu != pick.gpu]
    assert cheaper  # 2× RTX 4090 beside the L40S, a few per cent and under a dollar less
    assert not {a.id for a in cheaper} & {c.id for c in decision.hardware.close_calls}
    assert all(pick.cost.per_year_usd - a.cost.per_year_usd < least for a in cheaper)
    assert not [line for line in close_call_lines(decision) if "less" in line]


def test_a_saving_worth_a_line_stays_a_close_call() -> None:
    # the Azure team of the test teams: 8x A100 80GB on AWS saves $51 a year, 2 %
    azure = {"workload": "fine-tune", "model": "llama-3.1-70b", "method": "qlora",
             "training_tokens_b": 0.1, "runs_per_year": 6, "usage_pattern": "intermittent",
             "budget_usd": 15000, "upfront_capex": False, "cloud_ecosystem": "azure"}
    least = load_engine().catalog.policy.thresholds["close_call_least_usd_year"].value
    decision = _decide(azure)
    pick = decision.hardware.choice
    assert pick is not None
    assert any(c.premium < 0 and pick.cost.per_year_usd - c.per_year_usd >= least
               for c in decision.hardware.close_calls)


@pytest.mark.parametrize("example", ["startup-7b-continuous.yaml",
                                     "research-70b-intermittent.yaml"])
def test_a_close_call_that_waits_longer_says_how_long(example: str) -> None:
    """A close call whose runs take notably longer than the pick's (what it saves, it saves
    by waiting) says how long, beside its cost; one that is no slower does not."""
    engine = load_engine()
    decision = engine.recommend(load_answers(
        Path(__file__).parent.parent / "examples" / example, [], engine.catalog),
        decision_id="x")
    choice = decision.hardware.choice
    assert choice is not None and choice.days_per_run is not None
    lines = close_call_lines(decision)
    assert lines
    for near, line in zip(decision.hardware.close_calls, lines, strict=False):
        assert near.days_per_run is not None
        head = line.split(";")[0]
        slower = near.days_per_run * 0.8 > choice.days_per_run
        assert (" a run instead of " in head) is slower, line
