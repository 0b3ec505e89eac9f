"""A development box beside rented runs is advised only where the box and the first year of
those runs keep within the compute budget, and the year-one line counts the box it advises."""

from __future__ import annotations

from typing import Any

from helpers.properties import decide

from engine.output.brief import brief_lines

# steady 13B full fine-tuning: develop on consumer cards, rent the full runs ($30,000)
STEADY_FULL: dict[str, Any] = {
    "model": "llama-2-13b", "method": "full", "hours_per_year": 3000,
    "usage_pattern": "continuous", "budget_usd": 30000, "upfront_capex": True}


def test_a_development_box_beyond_the_budget_is_not_advised() -> None:
    within = decide(STEADY_FULL)
    assert within.decisions["deployment"].choice == "hybrid"
    box = within.facts["dev_purchase_usd"]
    assert box > 0
    first = within.hardware.choice.cost.first_year_usd
    # a budget that holds the rented runs but not the box beside them: rent only
    tight = decide({**STEADY_FULL, "budget_usd": round(first + box / 2)})
    assert tight.decisions["deployment"].choice == "cloud"
    fired = {r.rule for o in tight.decisions["deployment"].ranking for r in o.reasons}
    assert "usage.hybrid-steady-dev-big-runs" not in fired


def test_the_year_one_line_counts_the_development_box() -> None:
    decision = decide(STEADY_FULL)
    box = decision.facts["dev_purchase_usd"]
    first = decision.hardware.choice.cost.first_year_usd
    text = " ".join(brief_lines(decision))
    assert "year one with evaluation, failed runs and the development box: " \
        f"${first + box:,.0f} of your $30,000 budget" in text
