"""The package imports and the bundled catalog loads."""

import pytest

from engine.catalog import load_catalog


def test_bundled_catalog_loads() -> None:
    catalog = load_catalog()
    assert "rtx-4090" in catalog.gpus


@pytest.mark.slow
def test_benchmark_script_runs_its_in_process_parts() -> None:
    """Not a timing test: the benchmark script must not rot (it prints one table)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).parent.parent
    done = subprocess.run(
        [sys.executable, "benchmarks/run.py", "--quick", "--only", "warm,raw,json",
         "--warm-calls", "4", "--distinct", "3"],
        cwd=repo, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "raw durable_rules per recommendation, Host API" in done.stdout
    assert "warm recommendations/s" in done.stdout
    assert "decision → JSON, compact" in done.stdout
