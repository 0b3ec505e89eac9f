"""`gpu-advisor paths`: the files a run keeps, where, and whether each exists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import cli

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Audit store and cache folder moved under ``tmp_path``; run from there."""
    found = {"audit": tmp_path / "data" / "audit.sqlite3", "cache": tmp_path / "cache"}
    monkeypatch.setenv("GPU_ADVISOR_AUDIT_DB", str(found["audit"]))
    monkeypatch.setenv("GPU_ADVISOR_CACHE_DIR", str(found["cache"]))
    monkeypatch.delenv("GPU_ADVISOR_NO_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    return found


def test_nothing_created_yet(runner: CliRunner, places: dict[str, Path],
                             tmp_path: Path) -> None:
    result = runner.invoke(cli, ["paths"])
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "audit store: not created yet\n"
        f"  {places['audit']}\n"
        "  Every recommendation is recorded here, unless --no-audit; moved by --audit-db\n"
        "  or GPU_ADVISOR_AUDIT_DB.\n"
        "policy cache: not created yet\n"
        f"  {places['cache']}\n"
        "  The loaded rules and catalog, as JSON; safe to delete (GPU_ADVISOR_NO_CACHE=1\n"
        "  turns it off); moved by GPU_ADVISOR_CACHE_DIR.\n"
        "answers file: not created yet\n"
        f"  {tmp_path / 'gpu-advisor-answers.yaml'}\n"
        "  Where `gpu-advisor ask` offers to save the answers; moved by ask --answers\n"
        "  FILE.\n")
    assert not any(path.exists() for path in places.values())  # looking creates nothing


def test_existing_files_and_cache_entries(runner: CliRunner, places: dict[str, Path]) -> None:
    places["cache"].mkdir()
    for name in ("policy-0-a.json", "policy-0-b.json", "policy-c.pickle", "other.txt"):
        (places["cache"] / name).write_bytes(b"")
    places["audit"].parent.mkdir()
    places["audit"].write_bytes(b"")
    result = runner.invoke(cli, ["paths", "--format", "json"])
    assert result.exit_code == 0, result.output
    states = {item["name"]: (item["exists"], item["state"]) for item in json.loads(result.stdout)}
    assert states == {"audit store": (True, "exists"),
                      "policy cache": (True, "exists, 2 entries"),
                      "answers file": (False, "not created yet")}


def test_audit_db_flag_and_a_path_that_cannot_be(runner: CliRunner, places: dict[str, Path],
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("GPU_ADVISOR_NO_CACHE", "1")
    result = runner.invoke(cli, ["paths", "--format", "json", "--audit-db",
                                 str(tmp_path / "file" / "audit.sqlite3")])
    assert result.exit_code == 0, result.output
    audit, cache = json.loads(result.stdout)[:2]
    assert (audit["path"], audit["exists"], audit["state"]) == (
        str(tmp_path / "file" / "audit.sqlite3"), False, "cannot be checked (Not a directory)")
    assert cache["state"] == "not created yet, turned off by GPU_ADVISOR_NO_CACHE"


def test_a_path_with_a_line_break_is_shown_on_one_line(runner: CliRunner,
                                                       places: dict[str, Path],
                                                       tmp_path: Path) -> None:
    result = runner.invoke(cli, ["paths", "--audit-db", str(tmp_path / "a\nb\x1b[2J")])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1] == f"  {tmp_path}/a\\nb\\x1b[2J"


def test_paths_are_the_files_a_real_run_writes(tmp_path: Path) -> None:
    """After one recorded recommendation in real processes, every place it wrote exists
    and is where `paths` says."""
    env = {**os.environ, "GPU_ADVISOR_AUDIT_DB": str(tmp_path / "data" / "audit.sqlite3"),
           "GPU_ADVISOR_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GPU_ADVISOR_NO_CACHE", None)

    def run(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                              text=True, timeout=120, check=False, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    before = {item["name"]: item["exists"] for item in json.loads(run("paths", "--format",
                                                                       "json"))}
    run("recommend", "--answers", str(ROOT / "examples" / "startup-7b-continuous.yaml"))
    after = json.loads(run("paths", "--format", "json"))
    assert before == dict.fromkeys(["audit store", "policy cache", "answers file"], False)
    assert [(item["path"], item["exists"]) for item in after] == [
        (str(tmp_path / "data" / "audit.sqlite3"), True), (str(tmp_path / "cache"), True),
        (str(tmp_path / "gpu-advisor-answers.yaml"), False)]
    written = {p for p in tmp_path.rglob("*") if p.is_file()}
    assert {p.parent for p in written} == {tmp_path / "data", tmp_path / "cache"}
