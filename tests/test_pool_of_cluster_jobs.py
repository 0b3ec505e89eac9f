"""Jobs at once that each need more than one node (pretrains run side by side): each job of
the pool spans the fewest whole nodes that finish its run in time, where the GPUs span nodes;
never where they do not. Within one node, a job's share is of the card's box, whatever count
is priced."""

from __future__ import annotations

from helpers.properties import evaluate

# four 8B pretrains on 1T tokens at once: one 8-GPU node takes about 70 days a run
FOUR_PRETRAINS = {"workload": "pretrain", "model": "llama-3.1-8b", "training_tokens_b": 1000,
                  "runs_per_year": 4, "usage_pattern": "bursty", "budget_usd": 2_000_000,
                  "upfront_capex": False, "concurrent_jobs": 4}


def test_each_job_of_a_pool_of_pretrains_spans_nodes_and_meets_the_run_limit() -> None:
    evaluation = evaluate(FOUR_PRETRAINS)
    pick = evaluation.decision.hardware.choice
    assert pick is not None  # before: no configuration, every job held to one node
    assert pick.pool is not None and pick.pool.jobs_at_once >= 4
    facts = next(f for f in evaluation.candidate_facts if f["candidate_id"] == pick.id)
    assert facts["gpus_per_job"] > 8 and facts["gpus_per_job"] * 4 <= pick.count
    assert facts["days_per_run"] <= facts["run_limit_days"]
    assert "each job spans " in pick.pool.layout
    # a job on one node fewer would miss the limit: the fewest nodes are given
    assert facts["days_per_run"] * facts["gpus_per_job"] / (facts["gpus_per_job"] - 8) > 30


def test_a_pool_job_spans_nodes_only_on_offers_that_span_nodes() -> None:
    evaluation = evaluate(FOUR_PRETRAINS)
    multi = {f["candidate_id"]: f for f in evaluation.candidate_facts if f["where"] == "cloud"}
    spanning = [f for f in multi.values() if "each job spans" in f["pool_layout"]]
    assert spanning
    for f in spanning:
        assert f["multi_node"], f["candidate_id"]
    for f in multi.values():
        if not f["multi_node"]:
            assert "each job spans" not in f["pool_layout"], f["candidate_id"]


def test_a_job_that_fits_one_node_in_time_is_not_spread_over_nodes() -> None:
    small = {**FOUR_PRETRAINS, "model": "llama-3.2-1b", "training_tokens_b": 20}
    evaluation = evaluate(small)
    assert not any("each job spans" in f["pool_layout"] for f in evaluation.candidate_facts)


def test_gpus_bought_beside_your_own_give_a_job_the_share_of_the_cards_box() -> None:
    # three 70B LoRA jobs at once on an owned 8× H100 node: a job needs 4 GPUs of a box;
    # counts beyond the box were priced with a one-GPU share that held no job
    raw = {"workload": "fine-tune", "model": "llama-3.1-70b", "method": "lora",
           "training_tokens_b": 0.2, "runs_per_year": 60, "usage_pattern": "continuous",
           "concurrent_jobs": 3, "budget_usd": 150000, "upfront_capex": True,
           "owned_gpu": "h100-sxm", "owned_gpu_count": 8}
    added = [f for f in evaluate(raw).candidate_facts
             if f["candidate_id"].endswith(":lora:added")]
    assert added
    for f in added:
        assert f["holds_jobs_at_once"], f["pool_layout"]
        assert f["gpus_per_job"] == 4, f["pool_layout"]
