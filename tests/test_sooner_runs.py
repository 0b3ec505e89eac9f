"""A long run paid by the hour goes on a larger instance where that costs little more: the
fewest GPUs that meet the run limit may take weeks where a full node takes days, for about the
same GPU-hours."""

from __future__ import annotations

from typing import Any

import pytest

from engine.answers.model import validate_answers
from engine.decide.candidates import sooner_premium
from engine.decide.engine import load_engine
from engine.output.brief import brief_lines

PRETRAIN_1B = {"workload": "pretrain", "model": "llama-3.2-1b", "training_tokens_b": 50,
               "runs_per_year": 1, "budget_usd": 2000, "upfront_capex": False}


def _facts(answers: dict[str, Any]) -> dict[str, dict[str, Any]]:
    engine = load_engine()
    evaluation = engine.evaluate(validate_answers(answers, engine.catalog), trace=False)
    return {str(f["candidate_id"]): f for f in evaluation.candidate_facts}


def test_a_weeks_long_run_fills_the_instance_for_a_few_per_cent() -> None:
    engine = load_engine()
    decision = engine.recommend(validate_answers(PRETRAIN_1B, engine.catalog))
    pick = decision.hardware.choice
    assert pick is not None and pick.days_per_run is not None
    facts = _facts(PRETRAIN_1B)[pick.id]
    fewest, days = int(facts["sooner_than_count"]), float(facts["sooner_than_days"])
    assert 0 < fewest < pick.count and days > 1.5 * pick.days_per_run
    premium = sooner_premium(engine.catalog.policy, days)
    assert 0 <= float(facts["sooner_premium_share"]) <= premium
    said = [w.text for w in decision.warnings if w.id == "larger-instance-for-a-long-run"]
    assert said and f"instead of {days:.1f} on {fewest}" in " ".join(said[0].split())
    brief = " ".join(" ".join(brief_lines(decision, engine.rulebook)).split())
    assert " ".join(said[0].split()) in brief  # declared for the one screen


def test_what_is_taken_costs_at_most_the_premium_over_the_fewest() -> None:
    """Every rented configuration sized up for a long run: on one instance, paid by the hour,
    for one job, within the premium, and the fewest GPUs would take more than a day."""
    policy = load_engine().catalog.policy
    sized_up = [f for f in _facts(PRETRAIN_1B).values() if f["sooner_than_count"]]
    assert sized_up
    for f in sized_up:
        assert f["where"] == "cloud" and f["nodes"] == 1
        assert f["pricing"] in ("on-demand", "spot")
        assert f["sooner_than_days"] >= policy.sooner_run_min_days.value
        most = sooner_premium(policy, f["sooner_than_days"])
        assert policy.sooner_run_max_premium.value <= most
        assert f["sooner_premium_share"] <= most + 1e-9
        assert f["sooner_than_count"] < f["count"]


def test_a_run_of_hours_keeps_the_fewest_gpus() -> None:
    """A LoRA run of a few hours on one GPU finishes overnight: no larger instance for it."""
    short = {"model": "llama-3.1-8b", "method": "lora", "training_tokens_b": 0.05,
             "runs_per_year": 12, "budget_usd": 5000, "upfront_capex": False}
    assert not any(f["sooner_than_count"] for f in _facts(short).values())


def test_a_pool_spreads_its_jobs_instead() -> None:
    pool = {**PRETRAIN_1B, "concurrent_jobs": 2, "runs_per_year": 2, "budget_usd": 200000}
    assert not any(f["sooner_than_count"] for f in _facts(pool).values())


SMALL_PRETRAIN = {"workload": "pretrain", "model": "gemma-3-1b", "training_tokens_b": 100,
                  "runs_per_year": 2, "usage_pattern": "bursty", "budget_usd": 2500,
                  "upfront_capex": False}


def test_the_slow_runs_are_marked_down_within_the_most_over_the_cheapest() -> None:
    """The cheapest marketplace configurations take weeks (2× L40S 24.6 days, 1× H100 16.7);
    eight B200 on one instance take a day for 17 % more than the cheapest: the premium a
    run of weeks allows. Every slow run is marked down by one no harder to get, and what
    is taken costs at most sooner_run_premium_most more than the cheapest alike."""
    engine = load_engine()
    policy = engine.catalog.policy
    answers = validate_answers(SMALL_PRETRAIN, engine.catalog)
    evaluation = engine.evaluate(answers, trace=False)
    facts = {str(f["candidate_id"]): f for f in evaluation.candidate_facts}
    pick = evaluation.decision.hardware.choice
    assert pick is not None and pick.count == 8 and pick.days_per_run is not None
    assert pick.days_per_run < 2 and facts[pick.id]["sooner_alike_days"] == 0
    fewest = f"cloud:{pick.offer}:on-demandx1:pretrain"
    assert 0 < facts[fewest]["sooner_alike_days"] <= 0.6 * facts[fewest]["days_per_run"]
    assert fewest in evaluation.fired["hardware.slow-beside-a-sooner-alike"]
    kind = facts[pick.id]["provider_kind"]
    marked = {*evaluation.fired["hardware.slow-beside-a-sooner-alike"], pick.id}
    cheapest = min(f["cost_usd_year"] for f in facts.values() if f["provider_kind"] == kind
                   and f["pricing"] == "on-demand" and f["candidate_id"] in marked)
    assert cheapest * (1 + policy.sooner_run_max_premium.value) < pick.cost.per_year_usd
    assert pick.cost.per_year_usd <= cheapest * (1 + sooner_premium(policy, float("inf")))
    for f in facts.values():
        ratio = f.get("sooner_alike_cost_ratio")
        if f["sooner_alike_days"]:
            assert ratio is not None
            assert ratio <= 1 + sooner_premium(policy, f["days_per_run"]) + 1e-3
        else:
            assert ratio is None


PRETRAIN_1B_100B = {"workload": "pretrain", "model_params_b": 1, "training_tokens_b": 100,
                    "runs_per_year": 2, "usage_pattern": "intermittent", "budget_usd": 50000,
                    "upfront_capex": True}


def test_a_single_gpu_for_weeks_gives_way_to_a_node_for_a_day() -> None:
    """The cheapest specialised NVIDIA configuration of a 1B/100B-token pretrain is one
    GH200 for 16.7 days; eight B200 of the same kind and access finish it in a day for
    about a third more, within the premium 16.7 days allow; the configurations between
    (7.4, 3.8, 1.9 days) are marked down by the same node, each within its own days'
    premium, and all within the most over the cheapest."""
    engine = load_engine()
    policy = engine.catalog.policy
    facts = _facts(PRETRAIN_1B_100B)
    decision = engine.recommend(validate_answers(PRETRAIN_1B_100B, engine.catalog))
    pick = decision.hardware.choice
    assert pick is not None and pick.days_per_run is not None and pick.days_per_run <= 1.1
    gh200 = facts["cloud:lambda-gh200:on-demandx1:pretrain"]
    assert gh200["days_per_run"] > 14 and 0 < gh200["sooner_alike_days"] <= 1.1
    assert gh200["cost_usd_year"] < pick.cost.per_year_usd <= gh200["cost_usd_year"] * (
        1 + policy.sooner_run_premium_most.value)  # type: ignore[union-attr]
    assert facts[pick.id]["access"] == gh200["access"]


def test_a_policy_recorded_before_the_graded_premium_keeps_the_flat_one() -> None:
    """A recorded policy without sooner_run_premium_per_day replays as it decided: the
    premium is sooner_run_max_premium however long the run."""
    policy = load_engine().catalog.policy
    old = policy.model_copy(update={"sooner_run_premium_per_day": None,
                                    "sooner_run_premium_most": None})
    flat = policy.sooner_run_max_premium.value
    assert sooner_premium(old, 30) == flat == sooner_premium(old, 1)
    assert sooner_premium(policy, 1) == flat
    assert flat < sooner_premium(policy, 7) < sooner_premium(policy, 30)
    assert sooner_premium(policy, 30) == policy.sooner_run_premium_most.value  # type: ignore[union-attr]


RESEARCH_70B = {"workload": "fine-tune", "model": "llama-3.1-70b", "training_tokens_b": 0.2,
                "runs_per_year": 6, "usage_pattern": "intermittent", "budget_usd": 8000,
                "upfront_capex": True}
"""The README's research example: QLoRA fits one GH200 in 2.6-day runs; LoRA, a better
method, runs on 2× B200 of the same kind of cloud in 10 hours for under 1 % more."""


def test_a_better_method_in_hours_beats_a_lesser_one_in_days_at_the_same_price() -> None:
    engine = load_engine()
    facts = _facts(RESEARCH_70B)
    slow = facts["cloud:lambda-gh200:on-demandx1:qlora"]
    assert slow["days_per_run"] > 2 and 0 < slow["sooner_alike_days"] < 0.5
    decision = engine.recommend(validate_answers(RESEARCH_70B, engine.catalog))
    pick = decision.hardware.choice
    assert pick is not None and pick.days_per_run is not None
    assert pick.method == "lora" and pick.days_per_run < 1
    premium = engine.catalog.policy.sooner_run_max_premium.value
    assert pick.cost.per_year_usd <= slow["cost_usd_year"] * (1 + premium)
    # never the other way: what marks a LoRA run down is LoRA or full training, not QLoRA
    for f in facts.values():
        if f["method_option"] == "lora" and f.get("sooner_alike_days"):
            assert any(g["method_option"] in ("full", "lora")
                       and round(g["days_per_run"], 1) == f["sooner_alike_days"]
                       for g in facts.values()), f["candidate_id"]


def test_a_better_method_on_another_offer_is_weighed_within_the_margin() -> None:
    """Every configuration trained with adapters knows the cheapest one of its kind and GPU
    vendor trained with a better method, and what it costs more: never a worse method, and
    only eligible, one-job-at-a-time configurations."""
    facts = _facts(RESEARCH_70B)
    order = ("full", "lora", "qlora")
    seen = 0
    for f in facts.values():
        better = f["better_method_alike"]
        if better == "none":
            assert f["better_method_alike_premium"] is None
            continue
        seen += 1
        assert order.index(better) < order.index(f["method_option"]), f["candidate_id"]
        premium = f["better_method_alike_premium"]  # a share, to three decimals
        assert any(g["method_option"] == better
                   and abs(g["cost_usd_year"] / f["cost_usd_year"] - 1 - premium) <= 6e-4
                   for g in facts.values()), f["candidate_id"]
    assert seen


@pytest.mark.parametrize(("model", "method", "node", "ruled_out"), [
    ("llama-3.1-8b", "lora", "cloud:tensorwave-mi300x:on-demandx8:lora", True),
    ("mixtral-8x7b", "full", "cloud:runpod-h200:on-demandx8:full", False),
])
def test_a_short_run_takes_a_big_node_only_where_it_needs_most_of_it(
        model: str, method: str, node: str, ruled_out: bool) -> None:
    """A run under an hour on an 8-GPU node: an 8B LoRA (one GPU holds it) is kept off
    MI300X nodes though MI300X is sold only by eight (most of the node would idle); a
    Mixtral full fine-tune that six H200 hold takes the 8-GPU H200 node, since no smaller
    H200 instance holds it (it was ruled out, and the team sent to buy hardware)."""
    engine = load_engine()
    decision = engine.recommend(validate_answers(
        {"workload": "fine-tune", "model": model, "method": method, "training_tokens_b": 0.01,
         "runs_per_year": 12, "usage_pattern": "intermittent", "budget_usd": 50000},
        engine.catalog), trace=True)
    short = {i for e in decision.hardware.excluded
             if e.rule == "hardware.short-run-on-a-big-node" for i in e.ids}
    seen = {i for e in decision.hardware.excluded for i in e.ids} | {
        c.id for c in (decision.hardware.choice, *decision.hardware.alternatives) if c}
    assert node in seen and (node in short) is ruled_out


def test_the_pick_says_what_the_wait_would_save() -> None:
    """Where the pick was taken over a cheaper configuration of its kind for its sooner run,
    by more than a close call, its one screen says what the wait would save: the GH200's
    16.7 days for $789 a year less. Never for a row the rules kept out."""
    engine = load_engine()
    evaluation = engine.evaluate(validate_answers(PRETRAIN_1B_100B, engine.catalog),
                                 trace=False)
    decision = evaluation.decision
    pick = decision.hardware.choice
    assert pick is not None
    facts = {str(f["candidate_id"]): f for f in evaluation.candidate_facts}
    mine = facts[pick.id]
    gh200 = facts["cloud:lambda-gh200:on-demandx1:pretrain"]
    assert mine["sooner_than_alike_label"] == "1× GH200 (Lambda, on-demand)"
    assert mine["sooner_than_alike_days"] == round(gh200["days_per_run"], 1)
    assert abs(mine["sooner_than_alike_saving_usd"]
               - (mine["cost_usd_year"] - gh200["cost_usd_year"])) < 0.01
    said = [w.text for w in decision.warnings if w.id == "sooner-than-a-cheaper-alike"]
    assert len(said) == 1
    brief = " ".join(" ".join(brief_lines(decision, engine.rulebook)).split())
    assert "1× GH200 (Lambda, on-demand) would take 16.7 days for $789 a year less" in brief
    for f in facts.values():
        if f["sooner_than_alike_label"]:
            assert f["sooner_than_alike_saving_usd"] > 0


def test_a_pick_within_a_close_call_of_the_slow_one_leaves_it_to_the_close_call() -> None:
    """A short LoRA run whose pick is not far dearer than anything it marked down says
    nothing more (the close-call line covers a trade within close_call_margin)."""
    engine = load_engine()
    decision = engine.recommend(validate_answers(RESEARCH_70B, engine.catalog))
    assert not [w for w in decision.warnings if w.id == "sooner-than-a-cheaper-alike"]


def test_a_sooner_run_over_the_budget_does_not_mark_down_one_within_it() -> None:
    """A half-billion-parameter pretrain on 300B tokens with $3,000: Lambda's 8× B200 (1.5
    days) takes the year over budget, so it is no reason against configurations that keep
    within it; 1× GH200 (25 days, $2,220 in the first year) is weighed against 2× B200 (5.6
    days, $2,998, within budget) instead. Before, the over-budget node marked every slower
    one down alike, and the slowest within budget won on cost."""
    answers = {"workload": "pretrain", "model_params_b": 0.5, "training_tokens_b": 300,
               "runs_per_year": 1, "usage_pattern": "intermittent", "budget_usd": 3000,
               "upfront_capex": True, "cloud_ecosystem": "none"}
    facts = _facts(answers)
    by_days = {round(float(f["days_per_run"]), 1): f for f in facts.values()
               if f["provider"] == "lambda" and f["pricing"] == "on-demand"}
    within = [f for f in facts.values() if f["sooner_alike_days"] and not f["over_budget"]]
    assert within
    for f in within:
        sooner = [g for g in facts.values() if g["where"] == "cloud"
                  and g["pricing"] == f["pricing"] and g["nodes"] == 1
                  and round(float(g["days_per_run"]), 1) == f["sooner_alike_days"]]
        assert sooner and not all(g["over_budget"] for g in sooner), f["candidate_id"]
    gh200 = facts["cloud:lambda-gh200:on-demandx1:pretrain"]
    assert not gh200["over_budget"] and gh200["sooner_alike_days"] == 5.6
    assert by_days[1.5]["over_budget"]
