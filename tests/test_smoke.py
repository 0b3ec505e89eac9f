"""The package imports and the bundled catalog loads."""

import pytest

from engine.catalog import load_catalog


def test_bundled_catalog_loads() -> None:
    catalog = load_catalog()
    assert "rtx-4090" in catalog.gpus


@pytest.mark.slow
def test_benchmark_script_runs_its_in_process_parts() -> None:
    """Not a timing test: the benchmark script must not rot (it prints one table, and
    n/a where a measure needs what was not given)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).parent.parent
    done = subprocess.run(
        [sys.executable, "benchmarks/run.py", "--quick", "--only", "size,audit,warm,raw",
         "--warm-calls", "4", "--distinct", "3", "--size-decisions", "3", "--size-cli", "0",
         "--audit-records", "3"],
        cwd=repo, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "raw durable_rules per recommendation, Host API" in done.stdout
    assert "warm recommendations/s" in done.stdout
    assert "bytes per decision, default" in done.stdout
    assert "| verify speed-up vs schema 1 | n/a |" in " ".join(done.stdout.split())
