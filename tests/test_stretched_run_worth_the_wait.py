"""Steady work's stretched run limit is taken only where it pays for the wait: a card is
bought in the fewest that keep within the workload's default limit where those cost no more
than the wait is worth (and stay within the budget where the stretched purchase does), and a
stretched run is marked down beside a configuration of its side that keeps within it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from helpers.properties import POLICY, decide

from engine.decide.candidates import _Counts, _worth_the_wait

# a well-funded lab pretraining 0.5B on 100B tokens four times a year, steadily
SMALL_PRETRAIN: dict[str, Any] = {
    "workload": "pretrain", "model_params_b": 0.5, "training_tokens_b": 100,
    "runs_per_year": 4, "budget_usd": 5_000_000, "upfront_capex": True,
    "usage_pattern": "continuous"}


def test_a_run_of_two_months_gives_way_to_one_within_the_limit() -> None:
    decision = decide(SMALL_PRETRAIN)
    pick = decision.hardware.choice
    assert pick is not None and pick.where == "local"
    assert (pick.gpu, pick.count) == ("rtx-4090", 2)  # 1× for 43.5 days before
    assert pick.days_per_run is not None and pick.days_per_run <= 30
    marked = {c.gpu: c for c in decision.hardware.alternatives if c.where == "local"
              and any(r.rule == "hardware.stretched-run-not-worth-the-wait"
                      for r in c.reasons)}
    assert "rtx-5080" in marked  # 63.8 days a run for $1,740 against $2,302
    assert marked["rtx-5080"].days_per_run is not None
    assert marked["rtx-5080"].days_per_run > 60


def test_more_cards_for_sooner_runs_never_take_the_purchase_past_the_budget() -> None:
    decision = decide({**SMALL_PRETRAIN, "budget_usd": 5_000})
    pick = decision.hardware.choice
    assert pick is not None and pick.where == "local"
    assert pick.cost.upfront_usd <= 5_000
    assert not any(c.gpu == "rtx-4090" and c.count == 2 and c.where == "local"
                   for c in [pick, *decision.hardware.alternatives])


def _sized(counts: dict[int, tuple[float, float, float]], budget: float) -> int:
    """The count ``_worth_the_wait`` keeps of a card whose counts run (days, cost a year, up
    front) as given, the fewest first chosen under a stretched limit of 73 days."""
    listed = sorted(counts)
    trials = [SimpleNamespace(count=c) for c in listed]
    tried = _Counts(len(listed), lambda i: trials[i],  # type: ignore[arg-type,return-value]
                    lambda t: {"purchase": (True, counts[t.count][1])}, lambda: 0)
    sizing = SimpleNamespace(deadline_days=73.0, burst_deadline_days=30.0, stretched_from=30.0,
                             budget_usd=budget)
    kept = _worth_the_wait(POLICY, sizing, tried, 0,  # type: ignore[arg-type]
                           lambda t: True, lambda t: counts[t.count][0],
                           lambda n: counts[n][2])
    return int(kept.count)


def test_a_card_is_bought_in_more_only_where_the_wait_is_worth_it_and_affordable() -> None:
    runs = {1: (60.0, 1000.0, 3000.0), 2: (28.0, 1200.0, 7000.0), 4: (15.0, 2000.0, 14000.0)}
    assert _sized(runs, 1_000_000) == 2  # 20 % more for runs within 30 days: worth 40 %
    assert _sized(runs, 5_000) == 1  # the stretched one keeps within the budget, 2 do not
    dear = {**runs, 2: (28.0, 1500.0, 7000.0)}
    assert _sized(dear, 1_000_000) == 1  # 50 % more: more than a 60-day wait is worth
