"""What a large SkyPilot ``vms.csv`` costs one ``recommend``: seconds and peak RSS.

Not part of the test suite (tests count rows and offers; time is measured here). Run from the
repository root with the project's virtualenv active:

    python benchmarks/csv_prices.py                   # every shape below, best of 3
    python benchmarks/csv_prices.py --only distinct   # one shape
    python benchmarks/csv_prices.py --root /tmp/old   # another checkout (git archive REV)

Each run is a fresh ``python -m engine recommend --prices aws=FILE`` for
``examples/enterprise-aws.json`` with the policy cache off (the cold path: the CSV is read
and its offers built and checked every time), its CPU time and peak RSS read from ``wait4``
(CPU time is what a busy machine does not inflate; wall time is shown beside it). Shapes:

- ``none``: no ``--prices`` (what every run costs anyway);
- ``cap``: 1,000 distinct instance types, every one an offer (``price_file_offers_max``);
- ``distinct``: ~2 MB of distinct instance types (43,500 rows), each an offer unless refused;
- ``skipped``: 48,000 rows for a GPU the catalog lacks and 1,000 offers, under 2 MB;
- ``zones``: 1,000 instance types in 43 zones each (43,000 rows, 1,000 offers).

Rows have an on-demand and a spot price, as SkyPilot's do (two candidates per offer).

Measured on 2 shared cores (best of 3, CPU seconds / peak RSS MB), before (776b294) → after:
none 0.42/47 → 0.43/47; cap 0.57/61 → 0.61/61; distinct 12.19/647 → 0.35/49 (refused at
line 1,002: more than 1,000 offers); skipped 0.72/78 → 0.68/68; zones 0.82/87 → 0.74/67.
Profiled (cProfile at 10,000 and 40,000 offers, ratios per function), the cost before was the
offers themselves: two candidates each, priced, given their facts, signed, evaluated by
durable_rules twice and scored, ~14 KB each. No function is quadratic, but the cost per offer
grows from ~0.15 ms of CPU at 1,000 offers to ~0.27 ms at 43,500 (a 650 MB heap: garbage
collection ~4 %, n·log n sorts of every firing and candidate, memory traffic), so the bound
is on the offers (and rows) one file may make, where the per-offer cost is lowest.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/enterprise-aws.json"
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,Region,AvailabilityZone,Price,SpotPrice"
GPUS = (("H100", 8, 55.04), ("A100", 8, 32.77), ("L40S", 1, 1.86), ("A10G", 1, 1.006))


def _row(i: int, zone: str = "", name: str | None = None) -> str:
    gpu, count, price = GPUS[i % len(GPUS)]
    return f"x{i}.{count}xl,{name or gpu},{count},us-east-1,{zone},{price:.2f},{price / 3:.2f}"


def _distinct(rows: int) -> Callable[[], Iterator[str]]:
    return lambda: (_row(i) for i in range(rows))


def _skipped() -> Iterator[str]:
    yield from (_row(i) for i in range(1000))
    yield from (_row(i, name="TPU") for i in range(1000, 49_000))


def _zones() -> Iterator[str]:
    for i in range(1000):
        yield from (_row(i, zone=f"z{z}") for z in range(43))


SHAPES: dict[str, Callable[[], Iterator[str]] | None] = {
    "none": None, "cap": _distinct(1000), "distinct": _distinct(43_500), "skipped": _skipped,
    "zones": _zones}


def run_once(root: Path, csv: Path | None,
             env: dict[str, str]) -> tuple[float, float, float, int, str]:
    """(CPU seconds, wall seconds, peak RSS in MB, exit code, last stderr line) of one cold
    recommend (CPU time: what a loaded machine does not inflate)."""
    prices = ["--prices", f"aws={csv}"] if csv is not None else []
    args = [sys.executable, "-m", "engine", "recommend", "--answers", str(root / EXAMPLE),
            *prices, "--no-audit", "--format", "json"]
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    last = (err.strip().splitlines() or [""])[-1]
    cpu = usage.ru_utime + usage.ru_stime
    return cpu, seconds, usage.ru_maxrss / 1024, proc.returncode, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(SHAPES), action="append",
                        help="run only these shapes")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout to run (default: this one)")
    options = parser.parse_args()
    root = options.root.resolve()
    env = {**os.environ, "GPU_ADVISOR_NO_CACHE": "1", "PYTHONPATH": str(root)}
    print(f"| shape | rows | bytes | exit | CPU s (best of {options.repeat}) | wall s | "
          "peak RSS MB | stderr |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as scratch:
        for name in options.only or SHAPES:
            make, csv = SHAPES[name], None
            rows = size = 0
            if make is not None:
                csv = Path(scratch) / f"{name}.csv"
                lines = [HEADER, *make()]
                csv.write_text("\n".join(lines) + "\n", encoding="utf-8")
                rows, size = len(lines) - 1, csv.stat().st_size
            runs = [run_once(root, csv, env) for _ in range(options.repeat)]
            best = min(runs)
            note = best[4][:90] if best[3] else ""
            print(f"| {name} | {rows:,} | {size:,} | {best[3]} | {best[0]:.2f} | "
                  f"{best[1]:.2f} | {best[2]:.0f} | {note} |", flush=True)


if __name__ == "__main__":
    main()
