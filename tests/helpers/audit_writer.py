"""A separate process that records decisions into an audit store (for tests/test_audit.py).

    python tests/helpers/audit_writer.py DB WORKER COUNT [--go FILE] [--ready FILE]

Loads the bundled engine once, then (after ``--ready`` is created and ``--go`` appears, so
several writers can be released at the same moment) opens the store and appends COUNT
decisions with slightly different answers. COUNT 0 means "until killed" (kill -9 tests).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from engine.answers.model import validate_answers
from engine.audit.store import AuditStore
from engine.decide.engine import Decision, load_engine

# A quick persona to evaluate (a tiny QLoRA on the team's cloud: ~30 ms warm, half what a 7B
# team takes), so the processes spend their time on the store.
BASE = {"workload": "fine-tune", "model": "qwen2.5-0.5b", "method": "qlora",
        "usage_pattern": "intermittent", "budget_usd": 5000, "cloud_ecosystem": "aws",
        "upfront_capex": False}


def hours(worker: int, index: int) -> int:
    """The hours_per_year answer of a writer's index-th decision (unique per pair)."""
    return 1000 + worker * 100 + index


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("db", type=Path)
    parser.add_argument("worker", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--go", type=Path, default=None)
    parser.add_argument("--ready", type=Path, default=None)
    args = parser.parse_args()

    engine = load_engine()
    if args.ready is not None:
        args.ready.touch()
    if args.go is not None:
        deadline = time.monotonic() + 60
        while not args.go.exists():
            if time.monotonic() > deadline:
                print("never released", file=sys.stderr)
                return 3
            time.sleep(0.005)

    def decide(index: int) -> Decision:
        answers = validate_answers({**BASE, "hours_per_year": hours(args.worker, index)},
                                   engine.catalog)
        return engine.recommend(answers)

    rules, catalog = engine.rulebook.texts, engine.catalog.texts
    with AuditStore(args.db) as store:
        index = 0
        while args.count == 0 or index < args.count:
            store.append(decide(index), rules, catalog)
            index += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
