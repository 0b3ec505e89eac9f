"""A light audit writer for the audit tests that need many processes: no engine, just the store.

    python tests/helpers/fast_audit_writer.py DB|URL TEMPLATE WORKER COUNT

TEMPLATE is a JSON file {"result": <a recommend --format json result>, "rules": {...},
"catalog": {...}} written by the test. The writer appends COUNT copies (0 = until killed),
each with its own decision_id, so a process starts in a fraction of the engine's start-up.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine.audit.location import parse_location
from engine.audit.store import AuditStore


class AppendedResult:
    """What AuditStore.append needs of a decision: its JSON (``data`` as ``recommend``
    writes it)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def to_json(self) -> str:
        return self._text


def write_template(engine: Any, path: Path) -> Path:
    """Write the TEMPLATE this writer reads: one recorded decision of ``engine`` and its
    policy texts."""
    from engine.answers.model import validate_answers

    answers = validate_answers({"hours_per_year": 1234}, engine.catalog)
    result = json.loads(engine.recommend(answers, decision_id="template").to_json())
    path.write_text(json.dumps({"result": result, "rules": dict(engine.rulebook.texts),
                                "catalog": dict(engine.catalog.texts)}), encoding="utf-8")
    return path


def spawn(store: str | Path, template: Path, worker: int,
          count: int) -> subprocess.Popen[bytes]:
    """This writer as a separate process, appending ``count`` records (0: until killed) to
    ``store`` (a file or a database URL)."""
    here = Path(__file__).resolve()
    return subprocess.Popen([sys.executable, str(here), str(store), str(template), str(worker),
                             str(count)], cwd=here.parents[2], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


def main() -> int:
    db, template = parse_location(sys.argv[1]), Path(sys.argv[2])
    worker, count = int(sys.argv[3]), int(sys.argv[4])
    spec = json.loads(template.read_text(encoding="utf-8"))
    with AuditStore(db) as store:
        index = 0
        while count == 0 or index < count:
            data = {**spec["result"], "decision_id": f"w{worker:03d}-{index:08d}"}
            store.append(AppendedResult(data), spec["rules"], spec["catalog"])
            index += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
