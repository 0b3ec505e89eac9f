"""Rendering: text (80 columns, plain off a terminal), markdown, json, the owning-vs-renting
chart (ASCII, SVG, PNG), and a cold ``recommend`` that imports no prompt or plot library."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine.cli import cli
from engine.output.chart import CostCurves, ascii_chart, curves_from

REPO = Path(__file__).parent.parent
EXAMPLES = REPO / "examples"
LOCAL = EXAMPLES / "startup-7b-continuous.yaml"       # buys
CLOUD = EXAMPLES / "research-70b-intermittent.yaml"   # rents
ALL = sorted(EXAMPLES.iterdir())
SEVERITY = {"critical": 0, "warning": 1, "info": 2}
# a plan that is too small and unprofiled: critical, warning and info warnings together
MIXED = [str(CLOUD), "--set", "planned_gpu=rtx-4090", "--set", "method=full",
         "--set", "budget_usd=100"]


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--explain", "--answers", *args],
                                env=env)
    assert result.exit_code == 0, result.stderr
    return result


def headline(out: str) -> str:
    """The headline, rejoined if it wrapped at 80 columns (it ends where the next line starts)."""
    end = min(out.index(f"\n{word}") for word in ("$", "Work:") if f"\n{word}" in out)
    return " ".join(out[:end].split())


def data(*args: str) -> dict[str, Any]:
    return json.loads(run(*args, "--format", "json").stdout)  # type: ignore[no-any-return]


# --- text -----------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("example", ALL, ids=lambda p: p.name)
@pytest.mark.parametrize("no_color", [False, True], ids=["plain", "NO_COLOR"])
def test_text_fits_80_columns_without_escapes(example: Path, no_color: bool) -> None:
    out = run(str(example), env={"NO_COLOR": "1"} if no_color else {}).stdout
    assert "\x1b" not in out
    long = [line for line in out.splitlines() if len(line) > 80]
    assert not long, long


def test_text_sections() -> None:
    out = run(str(LOCAL)).stdout
    lines = out.splitlines()
    for title in ("Approach: ", "Method: ", "Deployment: local", "Sharing: "):
        assert any(line.startswith(title) for line in lines), title
    assert not any(line.startswith("Pricing: ") for line in lines)   # buying: no pricing
    title = "Hardware (→ the pick, then by rule score and cost"
    assert any(line.startswith(title) for line in lines)
    assert "Warnings" in lines and "Strategies" in lines
    # reasons carry the rule id and the source ids
    assert re.search(r"\[usage\.[a-z-]+;\s+decide\.local", out)


def test_headline_local_and_cloud() -> None:
    local = data(str(LOCAL))
    head = headline(run(str(LOCAL)).stdout)
    assert local["hardware"]["choice"]["where"] == "local"
    assert re.fullmatch(r"Buy: \d+× .+, ~\$[\d,]+ up front, ~\$[\d,]+ a year for your work",
                        head), head
    cloud = data(str(CLOUD))
    head = headline(run(str(CLOUD)).stdout)
    assert cloud["hardware"]["choice"]["where"] == "cloud"
    assert re.fullmatch(r"Rent: \d+× .+ on .+ \(.+\), .+ at \$[\d.]+/GPU-hour, ~\$[\d,]+ a "
                        r"year for your work", head), head
    assert f"{cloud['hardware']['choice']['count']}× " in head


def test_warnings_ordered_by_severity() -> None:
    warnings = data(*MIXED)["warnings"]
    ranks = [SEVERITY[w["severity"]] for w in warnings]
    assert ranks == sorted(ranks)
    assert {0, 1} <= set(ranks)
    out = run(*MIXED).stdout.splitlines()
    start = out.index("Warnings")
    marks = [m for m in (line[:2] for line in out[start + 1:]) if m in ("!!", " !", " i")]
    order = {"!!": 0, " !": 1, " i": 2}
    assert [order[m] for m in marks] == sorted(order[m] for m in marks)
    assert marks[0] == "!!"


def test_ascii_chart_marks_the_break_even_fact() -> None:
    break_even = data(str(LOCAL))["estimates"]["break_even"]
    out = run(str(LOCAL)).stdout
    assert "Owning vs renting" in out
    marked = re.search(r"^\* break-even at ([\d,]+)", out, re.MULTILINE)
    assert marked is not None, out
    assert float(marked.group(1).replace(",", "")) == round(break_even["work"])
    chart = out[out.index("Owning vs renting"):].splitlines()
    assert sum(line.count("*") for line in chart if "┤" in line) == 1     # one crossing mark
    assert any(line.lstrip().startswith("o own ") for line in chart)


def test_no_chart_without_break_even() -> None:
    regulated = EXAMPLES / "regulated-on-premises.yaml"
    assert data(str(regulated))["estimates"]["break_even"] is None
    assert "break-even at" not in run(str(regulated)).stdout


# --- markdown and json ----------------------------------------------------------------------

def test_markdown() -> None:
    out = run(str(LOCAL), "--format", "markdown").stdout
    assert out.startswith("# Buy: ")
    assert "\n## Decisions\n" in out
    assert "\n## Hardware\n" in out and "\n## Warnings\n" in out
    assert "break-even at" in out
    assert "\x1b" not in out


def test_json_is_the_full_contract() -> None:
    decision = data(str(CLOUD))
    assert {"decisions", "hardware", "warnings", "strategies", "facts"} <= set(decision)


# --- chart files ----------------------------------------------------------------------------

def test_chart_svg(tmp_path: Path) -> None:
    path = tmp_path / "out.svg"
    result = run(str(LOCAL), "--chart", str(path))
    assert "Chart written to" in result.stderr
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<?xml") or "<svg" in text


@pytest.mark.slow
def test_chart_png(tmp_path: Path) -> None:
    path = tmp_path / "out.png"
    run(str(LOCAL), "--chart", str(path), "--format", "json")
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_chart_other_extension_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(LOCAL),
                                      "--chart", str(path)])
    assert result.exit_code == 2
    assert ".svg or .png" in result.stderr
    assert not path.exists()


def test_curves_cross_at_break_even() -> None:
    decision = data(str(LOCAL))
    curves = curves_from(decision["estimates"])
    assert isinstance(curves, CostCurves)
    be = decision["estimates"]["break_even"]["work"]
    assert curves.break_even == pytest.approx(be, abs=0.01)
    assert curves.own(be) == pytest.approx(curves.rent(be), rel=5e-3)
    assert curves.own(be * 0.5) > curves.rent(be * 0.5)       # below: renting is cheaper
    assert curves.own(be * 1.5) < curves.rent(be * 1.5)       # above: owning is cheaper
    lines = ascii_chart(curves)
    assert all(len(line) <= 80 for line in lines)
    assert sum(line.count("*") for line in lines if "┤" in line) == 1


# --- cold start -----------------------------------------------------------------------------

@pytest.mark.slow
def test_cold_recommend_imports_no_prompt_or_plot_library() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "engine", "recommend", "--answers",
         str(LOCAL), "--format", "json", "--no-audit"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    json.loads(done.stdout)
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "yaml" in imported                                 # importtime did report
    for module in ("questionary", "prompt_toolkit", "matplotlib"):
        assert module not in imported


def test_markdown_and_text_show_the_same_hardware_rows() -> None:
    """Both formats show each row's place, $/GPU-hour, busy hours and cost for the work."""
    hardware = data(str(CLOUD))["hardware"]
    rows = [hardware["choice"], *hardware["alternatives"]]
    md = run(str(CLOUD), "--format", "markdown").stdout
    text = " ".join(run(str(CLOUD)).stdout.split())
    for cand in rows:
        cells = [f"{cand['usd_per_gpu_hour']:.2f}", f"${cand['cost']['per_year_usd']:,.0f}"]
        for cell in cells:
            assert f"| {cell} |" in md, cell
            assert cell in text, cell


def test_importing_the_package_loads_nothing_heavy() -> None:
    """``import engine`` is free (exports load on first use), so the command line can set
    the process up (bytecode, pydantic plugins) before any of its modules load."""
    code = ("import sys, engine; heavy = {'pydantic', 'yaml', 'click', 'durable'} & "
            "{m.split('.')[0] for m in sys.modules}; print(sorted(heavy)); "
            "print(engine.load_answers.__module__)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60, check=True)
    assert done.stdout.splitlines() == ["[]", "engine.answers.model"]


def test_the_command_line_leaves_bytecode_to_the_user(tmp_path: Path) -> None:
    """PYTHONDONTWRITEBYTECODE is the user's: under it the command line writes no bytecode,
    without it Python's default applies; the package is copied so the checkout stays
    untouched."""
    import shutil

    shutil.copytree(REPO / "engine", tmp_path / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "engine" / "__pycache__"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    for dont_write, written in (("1", False), (None, True)):
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if dont_write:
            env["PYTHONDONTWRITEBYTECODE"] = dont_write
        shutil.rmtree(cache, ignore_errors=True)
        done = subprocess.run([sys.executable, "-m", "engine", "--version"], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 0, done.stderr
        assert bool(list(cache.glob("errors.*.pyc"))) is written
