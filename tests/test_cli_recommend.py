"""``gpu-advisor recommend`` through click's runner, and once as a real subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine.cli import cli
from engine.resources import bundled_dir

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "startup-7b-continuous.yaml"


def invoke(runner: CliRunner, *args: str) -> Result:
    return runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE), *args])


def as_json(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_text_has_headline(runner: CliRunner) -> None:
    result = invoke(runner)
    assert result.exit_code == 0, result.stderr
    headline = result.stdout.splitlines()[0]
    assert headline.startswith("Buy: 1× ") and "RTX 5090" in headline, headline
    assert "Why:" in result.stdout and "Next step: get quotes for 1× RTX 5090" in result.stdout
    # the first run into the test's new store says where it created it; nothing else
    assert not [line for line in result.stderr.splitlines()
                if not line.startswith("note: created the audit store ")]


def test_json_parses(runner: CliRunner) -> None:
    data = as_json(invoke(runner, "--format", "json"))
    assert data["schema_version"] == 3
    assert data["answers"]["hours_per_year"] == 6000
    assert data["decisions"]["deployment"]["choice"] == "local"
    assert data["hardware"]["choice"]["where"] == "local"


def test_markdown_starts_with_heading(runner: CliRunner) -> None:
    result = invoke(runner, "--format", "markdown")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("# ")
    assert "RTX 5090" in result.stdout.splitlines()[0]


def test_set_overrides_file_and_flips_deployment(runner: CliRunner) -> None:
    base = as_json(invoke(runner, "--format", "json"))
    low = as_json(invoke(runner, "--format", "json", "--set", "hours_per_year=100"))
    assert base["decisions"]["deployment"]["choice"] == "local"
    assert low["answers"]["hours_per_year"] == 100
    assert low["decisions"]["deployment"]["choice"] == "cloud"
    assert low["hardware"]["choice"]["where"] == "cloud"


def _one_error_line(result: Result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert result.stdout == ""
    return lines[0]


def test_set_unknown_answer_exits_2(runner: CliRunner) -> None:
    assert _one_error_line(invoke(runner, "--set", "bogus=1")) == \
        "error: --set: bogus: unknown answer"


def test_set_misspelt_answer_suggests(runner: CliRunner) -> None:
    assert _one_error_line(invoke(runner, "--set", "hours_per_yaer=1")) == \
        "error: --set: hours_per_yaer: unknown answer; did you mean 'hours_per_year'?"


def test_missing_answers_file_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    result = runner.invoke(cli, ["recommend", "--answers", str(missing)])
    assert _one_error_line(result) == f"error: {missing}: file not found"


def test_bad_format_exits_2(runner: CliRunner) -> None:
    assert invoke(runner, "--format", "pdf").exit_code == 2


@pytest.mark.parametrize("extra", [["--no-audit"], ["--audit-db", "{tmp}/audit.db"]])
def test_audit_flags_accepted(runner: CliRunner, tmp_path: Path, extra: list[str]) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in extra]
    data = as_json(invoke(runner, "--format", "json", *args))
    assert data["decisions"]["deployment"]["choice"] == "local"


@pytest.mark.slow
def test_rules_catalog_prices_accepted(runner: CliRunner, tmp_path: Path,
                                       catalog_copy: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), rules)
    prices = tmp_path / "prices.yaml"
    prices.write_text("offers: []\n", encoding="utf-8")
    default = as_json(invoke(runner, "--format", "json"))
    result = invoke(runner, "--format", "json", "--rules", str(rules),
                    "--catalog", str(catalog_copy), "--prices", str(prices))
    data = as_json(result)
    assert data["ruleset"] == default["ruleset"]  # same rule text → same hash
    assert data["decisions"]["deployment"]["choice"] == "local"


def test_missing_rules_dir_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    line = _one_error_line(invoke(runner, "--rules", str(tmp_path / "none")))
    assert line == f"error: {tmp_path / 'none'}: no such rule file or directory"


@pytest.mark.slow
def test_subprocess_json() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "engine", "recommend", "--answers", str(EXAMPLE),
         "--format", "json", "--no-audit"],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert data["decisions"]["deployment"]["choice"] == "local"
    assert data["hardware"]["choice"]["gpu"] == "rtx-5090"
