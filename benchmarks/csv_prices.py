"""What a large SkyPilot ``vms.csv`` costs one ``recommend``: seconds and peak RSS.

Not part of the test suite (tests count rows and offers; time is measured here). Run from the
repository root with the project's virtualenv active:

    python benchmarks/csv_prices.py                 # 2 MB: ~43,500 instance types
    python benchmarks/csv_prices.py --rows 5000     # any size
    python benchmarks/csv_prices.py --repeat 3      # best of three

Each run is a fresh ``python -m engine recommend --prices aws=FILE`` with the policy cache off
(the cold path: the CSV is read and its offers built and checked every time), its peak RSS
read from ``wait4``. The file holds one row per instance type, each a distinct name, all for
catalog GPUs in an AWS region: every row becomes an offer unless the import's caps refuse
the file first (then the figure is what the refusal costs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "enterprise-aws.json"
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice"
GPUS = (("H100", 8, 55.04), ("A100", 8, 32.77), ("L40S", 1, 1.86), ("A10G", 1, 1.006))


def write_csv(path: Path, rows: int) -> int:
    """A vms.csv of ``rows`` distinct instance types; its size in bytes."""
    lines = [HEADER]
    for i in range(rows):
        name, count, price = GPUS[i % len(GPUS)]
        lines.append(f"x{i}.{count}xl,{name},{count},us-east-1,{price + i * 1e-4:.4f},")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path.stat().st_size


def run_once(csv: Path, env: dict[str, str]) -> tuple[float, float, int, str]:
    """(seconds, peak RSS in MB, exit code, last stderr line) of one cold recommend."""
    args = [sys.executable, "-m", "engine", "recommend", "--answers", str(EXAMPLE),
            "--prices", f"aws={csv}", "--no-audit", "--format", "json"]
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    last = (err.strip().splitlines() or [""])[-1][:120]
    return seconds, usage.ru_maxrss / 1024, proc.returncode, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=43_500, help="instance types (rows)")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the best is reported")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        csv = Path(scratch) / "vms.csv"
        size = write_csv(csv, options.rows)
        env = {**os.environ, "GPU_ADVISOR_NO_CACHE": "1"}
        runs = [run_once(csv, env) for _ in range(options.repeat)]
    best = min(runs)
    print(f"| rows | bytes | exit | seconds (best of {options.repeat}) | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {options.rows:,} | {size:,} | {best[2]} | {best[0]:.2f} | {best[1]:.0f} |")
    if best[2] != 0:
        print(f"stderr: {best[3]}")


if __name__ == "__main__":
    main()
