"""Audit store size and `audit verify` speed on distinct generated decisions, before/after.

Not part of the test suite. From the repository root, with the project's virtualenv active:

    python benchmarks/audit_size.py                    # 10,000 distinct decisions
    python benchmarks/audit_size.py --records 500      # quick
    python benchmarks/audit_size.py --json             # the numbers as JSON

"Before" is a schema-2 store as gpu-advisor 0.2.0 wrote it (tests/helpers/schema2_writer.py,
frozen: answers and result as text columns, hashed over their canonical JSON); "after" is the
same decisions recorded by today's store (schema 3: compressed, framed). Today's store reads
schema 3 only (schemas 1 and 2 were never released), so only the schema-3 store is verified.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

Row = tuple[str, str, str]
"""(measure, value, target or note), as benchmarks/run.py prints them."""


class _Result:
    """A recorded result text, shaped like a Decision for ``AuditStore.append``."""

    def __init__(self, text: str) -> None:
        self._text = text

    def to_json(self) -> str:
        return self._text


def generated_answers(count: int, seed: int, models: Sequence[str]) -> list[dict[str, Any]]:
    """``count`` varied valid answers (each distinct: its hours differ from every other's)."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for index in range(count):
        workload = "pretrain" if rng.random() < 0.1 else "fine-tune"
        answers: dict[str, Any] = {"workload": workload, "model": rng.choice(models)}
        if workload == "fine-tune":
            answers["method"] = rng.choice(["auto", "full", "lora", "qlora"])
        answers["hours_per_year"] = rng.choice([20, 300, 1500, 4000, 8000]) + index % 500
        answers["usage_pattern"] = rng.choice(["continuous", "intermittent", "bursty"])
        answers["budget_usd"] = rng.choice([500, 3000, 10000, 100000, 1_000_000])
        answers["upfront_capex"] = rng.random() < 0.6
        answers["data_residency"] = rng.choice(["none", "none", "region", "on-premises"])
        if answers["data_residency"] == "region":
            answers["allowed_regions"] = sorted(rng.sample(["us", "eu", "uk", "asia"], 2))
        answers["proprietary_data"] = rng.random() < 0.5
        out.append(answers)
    return out


def decisions(count: int, seed: int) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """``count`` distinct decisions' JSON texts, and the policy texts that made them."""
    from engine.answers.model import validate_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    models = sorted(engine.catalog.models)
    texts = [engine.recommend(validate_answers(a, engine.catalog)).to_json()
             for a in generated_answers(count, seed, models)]
    return texts, dict(engine.rulebook.texts), dict(engine.catalog.texts)


def store_bytes(path: Path) -> int:
    """The store's size on disk: the database and any WAL beside it."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def write_schema2(path: Path, results: list[str], rules: dict[str, str],
                  catalog: dict[str, str]) -> float:
    """Record as gpu-advisor 0.2.0 did; seconds taken."""
    from helpers.schema2_writer import Schema2Store

    store = Schema2Store(path)
    start = time.perf_counter()
    for text in results:
        store.append(text, rules, catalog)
    took = time.perf_counter() - start
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return took


def write_current(path: Path, results: list[str], rules: dict[str, str],
                  catalog: dict[str, str]) -> float:
    """Record with today's store; seconds taken."""
    from engine.audit.store import AuditStore

    with AuditStore(path, key=None) as store:
        start = time.perf_counter()
        for text in results:
            store.append(_Result(text), rules, catalog)
        return time.perf_counter() - start


def verify_rate(path: Path, repeat: int = 3) -> float:
    """Records per second `audit verify` walks (in-process, best of ``repeat``)."""
    from engine.audit.chain import verify
    from engine.audit.store import AuditStore

    best = float("inf")
    for _ in range(repeat):
        with AuditStore(path, create=False, key=None) as store:
            start = time.perf_counter()
            result = verify(store)
            best = min(best, time.perf_counter() - start)
        if not result.ok:
            sys.exit(f"{path}: {result.line()}")
    return result.count / best


def measure(records: int, seed: int, keep: Path | None = None) -> dict[str, Any]:
    """Every number, as data (the stores are left in ``keep`` if given)."""
    results, rules, catalog = decisions(records, seed)
    result_bytes = sum(len(t.encode()) for t in results) / records
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-audit-size-") as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        before, after = folder / "schema2.sqlite3", folder / "schema3.sqlite3"
        for path in (before, after):
            for old in folder.glob(path.name + "*"):
                old.unlink()
        before_append_s = write_schema2(before, results, rules, catalog)
        append_s = write_current(after, results, rules, catalog)
        out = {"records": records, "result_bytes": result_bytes,
               "before_bytes": store_bytes(before) / records,
               "after_bytes": store_bytes(after) / records,
               "before_append_per_s": records / before_append_s,
               "append_per_s": records / append_s,
               "after_verify_per_s": verify_rate(after)}
    return out


def rows(records: int = 10_000, seed: int = 7, keep: Path | None = None) -> list[Row]:
    """The table rows for benchmarks/run.py."""
    m = measure(records, seed, keep)
    n = f"{records:,} distinct decisions"
    kb: Callable[[float], str] = lambda b: f"{b / 1000:,.1f} kB"  # noqa: E731
    return [
        (f"audit store bytes/record, {n}", f"{kb(m['before_bytes'])} → {kb(m['after_bytes'])}",
         f"≤ 10 kB; {m['before_bytes'] / m['after_bytes']:.1f}× smaller; result JSON "
         f"{kb(m['result_bytes'])}"),
        (f"`audit verify` records/s, {n}", f"{m['after_verify_per_s']:,.0f}", "schema 3"),
        ("audit append records/s", f"{m['before_append_per_s']:,.0f} → "
         f"{m['append_per_s']:,.0f}", "one transaction each"),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="leave the stores in DIR (schema2, schema3)")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.records, args.seed, args.keep), indent=2))
        return 0
    print("| measure | before → after | target / note |\n|---|---|---|")
    for row in rows(args.records, args.seed, args.keep):
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
