"""An offer sold only under a sales contract is out of reach where the team's year's work at
that provider comes to less than such a contract is signed for, whatever the team's budget;
and a decided kind of cloud that sells the job only in blocks of days, far dearer than the
decided pricing elsewhere, gives way to the kind that sells it so."""

from __future__ import annotations

import re
from typing import Any

from helpers.properties import POLICY, decide

LEAST = POLICY.thresholds["contract_work_usd_min"].value
PREMIUM = POLICY.thresholds["hyperscaler_premium_ratio"].value

# one full fine-tune of a 72B model a year, on a production budget: a $90-a-year job
ONE_72B_FULL_RUN: dict[str, Any] = {
    "workload": "fine-tune", "model": "qwen2.5-72b", "method": "full",
    "training_tokens_b": 0.1, "runs_per_year": 1, "usage_pattern": "intermittent",
    "budget_usd": 500000, "upfront_capex": True, "cloud_ecosystem": "none"}

# a 7B pretrain on 50B tokens once a year, every run within 12 hours: 64+ GPUs for a day
OVERNIGHT_PRETRAIN: dict[str, Any] = {
    "workload": "pretrain", "model_params_b": 7, "training_tokens_b": 50,
    "runs_per_year": 1, "usage_pattern": "bursty", "budget_usd": 500000,
    "upfront_capex": False, "cloud_ecosystem": "none", "max_days_per_run": 0.5,
    "weeks_to_first_model": 2, "team_region": "uk"}


def test_a_contract_offer_is_out_of_reach_for_a_small_years_work() -> None:
    decision = decide(ONE_72B_FULL_RUN)
    choice = decision.hardware.choice
    assert choice is not None and choice.access != "contract"
    kept = [c for c in [choice, *decision.hardware.alternatives] if c.access == "contract"]
    assert kept == []
    excluded = {e.rule: e for e in decision.hardware.excluded}
    assert "hardware.contract-for-too-little-spend" in excluded
    said = excluded["hardware.contract-for-too-little-spend"].reason
    assert f"under the ${LEAST:,.0f} any such contract is signed for" in said


def test_a_kind_that_sells_the_job_only_in_blocks_gives_way() -> None:
    decision = decide(OVERNIGHT_PRETRAIN)
    choice = decision.hardware.choice
    assert choice is not None
    assert (choice.pricing, choice.reserved_days) == ("on-demand", None)
    kind = decision.decisions["cloud_kind"]
    assert (kind.revised_from, kind.choice) == ("specialised", "hyperscaler")
    assert kind.revision is not None
    assert "no specialised cloud sells this job on-demand" in kind.revision
    ratio = float(re.search(r"([\d.]+)× the", kind.revision).group(1))  # type: ignore[union-attr]
    assert ratio >= PREMIUM


# a 405B full fine-tune twice a year: only clusters sold under contract hold it in 3 days
ONLY_CONTRACTS: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-405b", "method": "full",
    "training_tokens_b": 5, "runs_per_year": 2, "usage_pattern": "intermittent",
    "budget_usd": 2000000, "upfront_capex": True, "cloud_ecosystem": "none"}


def test_where_only_contracts_do_the_work_the_cheapest_is_not_marked_down() -> None:
    decision = decide(ONLY_CONTRACTS)
    choice = decision.hardware.choice
    assert choice is not None and choice.access == "contract"
    rented = [c for c in [choice, *decision.hardware.alternatives] if c.where == "cloud"]
    assert all(c.access == "contract" for c in rented)
    # the pick is the cheapest contract for the work, not one dear enough to escape the rule
    assert choice.cost.per_year_usd == min(c.cost.per_year_usd for c in rented)
    assert all(r.rule != "hardware.contract-for-little-spend"
               for c in rented for r in c.reasons)
