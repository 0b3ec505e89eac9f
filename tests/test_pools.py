"""Jobs that must run at once: the pool holds them all, says its layout, is paid all year."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.cli import cli

COURSE = {"model": "llama-3.2-1b", "hours_per_year": 1600, "hours_per_run": 2,
          "usage_pattern": "bursty", "budget_usd": 20000}


def decide(tmp_path: Path, answers: dict[str, Any], *sets: str) -> dict[str, Any]:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(path),
                                      "--format", "json", "--trace",
                                      *(a for s in sets for a in ("--set", s))])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return decide(tmp_path_factory.mktemp("course"), {**COURSE, "concurrent_jobs": 40})


def test_the_pick_holds_every_job_at_once(course: dict[str, Any]) -> None:
    pool = course["hardware"]["choice"]["pool"]
    assert pool["jobs_at_once"] >= 40
    assert pool["always_on"] is True
    assert f"{pool['jobs_at_once']} jobs at once" in pool["layout"]


def test_a_small_job_gets_a_mig_slice_that_holds_it(course: dict[str, Any]) -> None:
    choice = course["hardware"]["choice"]
    pool = choice["pool"]
    assert pool["mig_profile"], "a 1B LoRA job fits a MIG slice"
    per_gpu = int(pool["layout"].split(": ", 1)[1].split(" MIG")[0])
    assert choice["count"] * per_gpu == pool["jobs_at_once"]
    assert choice["count"] < 40, "slices, not one GPU per student"


def test_a_rented_pool_is_paid_for_every_hour_of_the_year(tmp_path: Path) -> None:
    found = decide(tmp_path, {**COURSE, "concurrent_jobs": 40, "upfront_capex": False})
    choice = found["hardware"]["choice"]
    assert choice["where"] == "cloud" and choice["pricing"] != "spot"
    hourly = choice["cost"]["per_hour_usd"]
    assert choice["cost"]["per_year_usd"] >= hourly * 8760 * 0.999


def test_every_excluded_configuration_says_how_many_jobs_it_runs(
        course: dict[str, Any]) -> None:
    rules = {e["rule"] for e in course["hardware"]["excluded"]}
    assert "hardware.too-few-for-jobs-at-once" in rules


def test_one_job_at_a_time_has_no_pool(tmp_path: Path) -> None:
    choice = decide(tmp_path, COURSE)["hardware"]["choice"]
    assert "pool" not in choice
