"""The one screen's alternatives show no row that a row above it, one the decisions leave
open, beats on cost, run length and money up front alike, nor one at ten times the pick's
year; and beside a purchase, a rented row that costs more is out by owning."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from helpers.properties import decide

from engine.cli import cli
from engine.decide.engine import load_engine
from engine.output.brief import FAR_DEARER, brief_items
from engine.output.hardware_rows import why_not_short
from engine.output.summary import usd

# a 7B fine-tune once a year, its data kept in Asia, on $500
ASIA_7B_ONCE: dict[str, Any] = {
    "workload": "fine-tune", "model": "qwen2.5-7b", "method": "auto",
    "training_tokens_b": 0.05, "runs_per_year": 1, "usage_pattern": "intermittent",
    "budget_usd": 500, "upfront_capex": False, "data_residency": "region",
    "allowed_regions": ["asia"], "cloud_ecosystem": "azure"}


def _days(text: str) -> float:
    number, unit = text.split()[:2]
    per = {"min": 1 / 1440, "hour": 1 / 24, "hours": 1 / 24, "day": 1.0, "days": 1.0}
    return float(number.replace(",", "")) * per[unit]


def test_alternatives_show_no_row_a_row_above_beats(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(ASIA_7B_ONCE))
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(path)])
    assert result.exit_code == 0, result.output
    block = result.stdout.split("Alternatives (cost a year for the same work):\n")[1]
    rows = []
    for line in block.splitlines():
        found = re.match(r"  \S.*: \$([\d,.]+), (.+?) a run", line)
        if not found:
            if line.startswith("    "):  # a "not taken" note wrapped
                continue
            break
        rows.append((float(found.group(1).replace(",", "")), _days(found.group(2)),
                     "(not taken" in line))
    assert len(rows) >= 2
    for i, (cost, days, _) in enumerate(rows):
        # a row the decisions rule out ("not taken") beats nothing the team may take
        assert not any(c <= cost and d <= days and not out for c, d, out in rows[:i]), rows


# a UK team with proprietary data, 4 QLoRA runs a year of a 72B model: $595 a year on AWS
# London, where another configuration open to it costs ten times that
UK_72B: dict[str, Any] = {
    "workload": "fine-tune", "model": "qwen2.5-72b", "training_tokens_b": 0.05,
    "runs_per_year": 4, "usage_pattern": "intermittent", "budget_usd": 20000,
    "upfront_capex": False, "data_residency": "region", "allowed_regions": ["uk"],
    "proprietary_data": True}


def test_no_alternative_far_dearer_than_the_pick(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(UK_72B))
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(path)])
    assert result.exit_code == 0, result.output
    pick = float(re.search(r"~\$([\d,]+) a year", result.stdout).group(1)  # type: ignore[union-attr]
                 .replace(",", ""))
    block = result.stdout.partition("Alternatives (cost a year for the same work):\n")[2]
    costs = [float(m.group(1).replace(",", "")) for line in block.splitlines()
             if (m := re.match(r"  \S.*: \$([\d,.]+), .+? a run$", line))]
    assert all(cost <= FAR_DEARER * pick for cost in costs), (pick, costs)
    # the premise: the full table has a row open to the team at ten times the pick's year
    full = CliRunner().invoke(cli, ["recommend", "--no-audit", "--explain", "--answers",
                                    str(path)]).stdout
    table = full.partition("\nHardware (")[2].partition("$ per GPU-h:")[0]
    years = [float(m.group(1).replace(",", "")) for m in re.finditer(r"\$([\d,]+)\n", table)]
    assert any(year > FAR_DEARER * pick for year in years), (pick, years)


# a GCP team with capital that pretrains 7B on 1,000B tokens twice a year: it buys 8× B200
GCP_PRETRAIN_BOUGHT: dict[str, Any] = {
    "workload": "pretrain", "model_params_b": 7, "training_tokens_b": 1000,
    "runs_per_year": 2, "usage_pattern": "continuous", "budget_usd": 500000,
    "upfront_capex": True, "cloud_ecosystem": "gcp"}


def test_a_rented_row_dearer_than_the_purchase_is_out_by_owning() -> None:
    decision = decide(GCP_PRETRAIN_BOUGHT)
    pick = decision.hardware.choice
    assert pick is not None and pick.where == "local" and not pick.owned
    book = load_engine().rulebook
    dearer = [c for c in decision.hardware.alternatives
              if c.where == "cloud" and c.cost.per_year_usd >= pick.cost.per_year_usd]
    assert dearer
    for c in dearer:  # not the kind of cloud or pricing the rented side resolved to
        why = why_not_short(decision, c, book)
        assert why is None or not why.startswith(("cloud kind is", "pricing is")), (c.id, why)
    said = [why_not_short(decision, c, book) for c in dearer]
    assert any(w and w.startswith("deployment is local") for w in said), said


# an Azure team with bursty LoRA runs of a 27B model: 8× A100 40GB on Azure, $259, 2.1 hours
AZURE_27B_BURSTY: dict[str, Any] = {
    "workload": "fine-tune", "model": "gemma-3-27b", "method": "auto",
    "training_tokens_b": 0.05, "runs_per_year": 4, "usage_pattern": "bursty",
    "budget_usd": 100000, "upfront_capex": False, "cloud_ecosystem": "azure"}


def test_no_alternative_the_pick_beats_though_the_decisions_leave_it_open() -> None:
    """"1× A100 80GB, Azure on-demand: $298, 18 hours a run" under a pick of $259 and 2.1
    hours: open to the team, it gives nothing the pick does not."""
    decision = decide(AZURE_27B_BURSTY)
    pick = decision.hardware.choice
    assert pick is not None and pick.days_per_run is not None
    book = load_engine().rulebook
    beaten = [c for c in decision.hardware.alternatives
              if c.cost.per_year_usd >= pick.cost.per_year_usd and c.days_per_run is not None
              and c.days_per_run >= pick.days_per_run and c.cost.upfront_usd == 0]
    assert any(why_not_short(decision, c, book) is None for c in beaten)  # the premise
    shown = [text for kind, text in brief_items(decision, 3, book) if kind == "alternative"]
    for c in beaten:
        assert not any(line.startswith(f"{c.count:,}× ") and f"{c.provider_label} "
                       f"{c.pricing}: {usd(c.cost.per_year_usd)}" in line for line in shown), c.id
