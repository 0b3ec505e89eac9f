"""Issue 18.3: a ``--chart`` target that cannot be written (missing folder, unwritable, unknown
extension, PNG without matplotlib) is refused in one line, exit 2, before anything is printed
or recorded: the audit store that already holds decisions gains no record."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engine.cli import cli

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "startup-7b-continuous.yaml"


def store_bytes(store: Path) -> dict[str, bytes]:
    """Every file of the SQLite store (database, WAL, shared memory) with its content."""
    return {p.name: p.read_bytes() for p in sorted(store.parent.glob(store.name + "*"))}


@pytest.fixture
def store_with_a_record(runner: CliRunner, tmp_path: Path) -> Path:
    store = tmp_path / "store" / "audit.sqlite3"
    store.parent.mkdir()
    result = runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE), "--format", "json",
                                 "--audit-db", str(store)])
    assert result.exit_code == 0, result.stderr
    assert store.exists()
    return store


def refused(result: Result | subprocess.CompletedProcess[str]) -> str:
    code = result.exit_code if isinstance(result, Result) else result.returncode
    assert code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def targets(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    yield tmp_path / "cost.txt", "expected a .svg or .png file name"
    yield tmp_path / "missing" / "cost.svg", f"folder {tmp_path / 'missing'} does not exist"
    unwritable = tmp_path / "a-file"  # a folder nobody can write in, root included
    unwritable.write_text("not a folder\n")
    yield unwritable / "cost.svg", f"folder {unwritable} is not a folder"


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_a_bad_chart_leaves_the_store_as_it_was(runner: CliRunner, tmp_path: Path,
                                                store_with_a_record: Path, fmt: str) -> None:
    before = store_bytes(store_with_a_record)
    for target, problem in targets(tmp_path):
        result = runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE), "--format", fmt,
                                     "--audit-db", str(store_with_a_record),
                                     "--chart", str(target)])
        assert refused(result) == f"error: {target}: --chart: {problem}"
        assert not target.exists()
    assert store_bytes(store_with_a_record) == before


def test_png_without_matplotlib_leaves_the_store_as_it_was(
        runner: CliRunner, tmp_path: Path, store_with_a_record: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    before = store_bytes(store_with_a_record)
    target = tmp_path / "cost.png"
    result = runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE),
                                 "--audit-db", str(store_with_a_record), "--chart", str(target)])
    assert refused(result) == (f"error: {target}: --chart: needs matplotlib: "
                               "pip install 'gpu-advisor[chart]'")
    assert store_bytes(store_with_a_record) == before


@pytest.mark.slow
def test_a_bad_chart_as_a_subprocess(tmp_path: Path, store_with_a_record: Path) -> None:
    before = store_bytes(store_with_a_record)
    target = tmp_path / "nowhere" / "cost.svg"
    done = subprocess.run([sys.executable, "-m", "engine", "recommend", "--answers", str(EXAMPLE),
                           "--audit-db", str(store_with_a_record), "--chart", str(target)],
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert refused(done) == (f"error: {target}: --chart: folder {tmp_path / 'nowhere'} does "
                             "not exist")
    assert store_bytes(store_with_a_record) == before


def test_a_good_chart_is_written_after_the_advice(runner: CliRunner, tmp_path: Path,
                                                  store_with_a_record: Path) -> None:
    target = tmp_path / "cost.svg"
    result = runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE),
                                 "--audit-db", str(store_with_a_record), "--chart", str(target)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("Buy: ")
    assert result.stderr.splitlines()[-1] == f"Chart written to {target}"
    assert "<svg" in target.read_text(encoding="utf-8")
