"""A team's own workstation or consumer cards beyond one machine run its jobs at once, a job on
each machine; buying for jobs at once may take several machines side by side, each holding a
job that needs all of its cards; a pick that rents beside the team's own GPUs shows its whole
year in the hardware table; and a purchase sized for the jobs run one at a time is not offered
where the team's own GPUs with rent beside them cost less."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from helpers.properties import decide, warned

from engine.cli import cli
from engine.output.summary import peaks_pick, peaks_total

# 8 RTX PRO 6000 Workstation cards (two machines of four), two jobs at once, a steady year
OWN_TWO_WORKSTATIONS: dict[str, Any] = {
    "workload": "fine-tune", "model": "gemma-3-12b", "method": "auto",
    "training_tokens_b": 0.5, "runs_per_year": 1000, "usage_pattern": "continuous",
    "budget_usd": 500000, "upfront_capex": False, "data_residency": "region",
    "allowed_regions": ["us"], "gpu_vendors": ["nvidia"], "cloud_ecosystem": "gcp",
    "concurrent_jobs": 2, "owned_gpu": "rtx-pro-6000-blackwell", "owned_gpu_count": 8}

# a 70B QLoRA needs four 24 GB cards: 8 RTX 4090 (two machines) hold two of four jobs
ON_PREMISES_70B: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-70b", "method": "auto",
    "hours_per_year": 500, "usage_pattern": "continuous", "budget_usd": 300000,
    "upfront_capex": True, "data_residency": "on-premises", "regulated_control": True,
    "concurrent_jobs": 4, "owned_gpu": "rtx-4090", "owned_gpu_count": 8}

# 4 of 10 jobs at once on the team's A100s, the rest rented as they run
FOUR_OF_TEN_ON_OWN: dict[str, Any] = {
    "workload": "fine-tune", "model": "qwen3-32b", "method": "auto",
    "training_tokens_b": 0.05, "runs_per_year": 50, "usage_pattern": "bursty",
    "budget_usd": 500000, "upfront_capex": False, "gpu_vendors": ["nvidia"],
    "cloud_ecosystem": "none", "concurrent_jobs": 10, "owned_gpu": "a100-80gb",
    "owned_gpu_count": 4}

# 2 of 3 jobs at once on the team's H100s; a purchase for the jobs one at a time costs more
TWO_OF_THREE_ON_OWN: dict[str, Any] = {
    "workload": "fine-tune", "model": "llama-3.1-70b", "method": "lora",
    "training_tokens_b": 0.2, "runs_per_year": 60, "usage_pattern": "continuous",
    "concurrent_jobs": 3, "budget_usd": 150000, "upfront_capex": True,
    "owned_gpu": "h100-sxm", "owned_gpu_count": 8}


def test_own_cards_on_two_machines_run_two_jobs_at_once() -> None:
    decision = decide(OWN_TWO_WORKSTATIONS)
    choice = decision.hardware.choice
    assert choice is not None and choice.owned
    assert (choice.count, choice.nodes) == (8, 2)
    assert peaks_pick(decision)[1] is None  # nothing rented beside them


def test_own_cards_hold_as_many_jobs_as_they_have_machines() -> None:
    decision = decide(ON_PREMISES_70B)
    said = decision.hardware.owned_why_not or ""
    assert "8× NVIDIA GeForce RTX 4090 runs 2 of the 4 jobs" in said


def _explained(raw: dict[str, Any], tmp_path: Path, fmt: str = "text") -> str:
    import yaml

    path = tmp_path / "answers.yaml"
    path.write_text(yaml.safe_dump(raw))
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--explain", "--answers",
                                      str(path), "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_pick_beside_own_gpus_shows_its_whole_year_in_the_table(tmp_path: Path) -> None:
    decision = decide(FOUR_OF_TEN_ON_OWN)
    _, split = peaks_pick(decision)
    assert split is not None
    whole = peaks_total(decision, split)
    choice = decision.hardware.choice
    assert choice is not None and whole > choice.cost.per_year_usd
    table = _explained(FOUR_OF_TEN_ON_OWN, tmp_path, "markdown")
    row = next(line for line in table.splitlines() if line.startswith("| → |"))
    assert "+ yours" in row
    assert row.rstrip(" |").endswith(f"${whole:,.0f}")
    assert "+ yours: the rent beside your own GPUs and their power" in table


def test_no_purchase_for_jobs_one_at_a_time_where_own_gpus_and_rent_cost_less() -> None:
    decision = decide(TWO_OF_THREE_ON_OWN)
    _, split = peaks_pick(decision)
    assert split is not None
    assert warned(decision, "jobs-at-once-keep-owning-out") == []


# 2 of 4 jobs at once on the team's two A10G, the others rented; a cheaper row ranks above it
TWO_OF_FOUR_ON_A10G: dict[str, Any] = {
    "workload": "fine-tune", "model": "qwen3-0.6b", "method": "lora",
    "training_tokens_b": 0.05, "runs_per_year": 50, "usage_pattern": "continuous",
    "budget_usd": 3000, "upfront_capex": True, "cloud_ecosystem": "none",
    "concurrent_jobs": 4, "owned_gpu": "a10g", "owned_gpu_count": 2}


def test_the_legend_says_yours_where_the_pick_is_not_the_first_row(tmp_path: Path) -> None:
    decision = decide(TWO_OF_FOUR_ON_A10G)
    assert peaks_pick(decision)[1] is not None
    text = _explained(TWO_OF_FOUR_ON_A10G, tmp_path)
    table = text.split("Hardware (→ the pick")[1].split("Why not the others")[0]
    first = table.splitlines()[4]  # title, header (two lines), rule, then the first row
    assert not first.startswith("→")  # a row ranked above the pick comes first
    assert "+ yours: the rent beside your own GPUs and their power" in " ".join(table.split())
