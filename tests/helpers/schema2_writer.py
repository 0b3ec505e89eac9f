"""The audit writer of gpu-advisor 0.2.0 (schema 1 and 2), frozen: its tables, its canonical
JSON and hashes, its rows, byte for byte, and nothing from engine.audit, so stores built
here are what that release wrote whatever the engine does now. For the migration tests.

    python tests/helpers/schema2_writer.py DB COUNT [--schema 1|2] [--key KEY]

records COUNT decisions of the bundled engine (varied hours) into a new store DB.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import hmac
import json
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PLAIN, KEYED = "sha256", "hmac-sha256"
GENESIS = "0" * 64
SCHEMA_1 = """
CREATE TABLE policies (
    hash    TEXT PRIMARY KEY,
    kind    TEXT NOT NULL CHECK (kind IN ('rules', 'catalog')),
    content TEXT NOT NULL
);
CREATE TABLE decisions (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             TEXT NOT NULL UNIQUE,
    created_at     TEXT NOT NULL,
    engine_version TEXT NOT NULL,
    rules_hash     TEXT NOT NULL REFERENCES policies (hash),
    catalog_hash   TEXT NOT NULL REFERENCES policies (hash),
    answers        TEXT NOT NULL,
    result         TEXT NOT NULL,
    choices        TEXT NOT NULL,
    rules_fired    TEXT NOT NULL,
    prev_hash      TEXT NOT NULL,
    hash           TEXT NOT NULL UNIQUE
);
CREATE INDEX decisions_created ON decisions (created_at);
PRAGMA user_version = 1;
"""
SCHEMA_2 = f"""
ALTER TABLE decisions ADD COLUMN hash_kind TEXT NOT NULL DEFAULT '{PLAIN}'
    CHECK (hash_kind IN ('{PLAIN}', '{KEYED}'));
ALTER TABLE decisions ADD COLUMN key_id TEXT;
PRAGMA user_version = 2;
"""
_HASHED = ("id", "created_at", "engine_version", "rules_hash", "catalog_hash", "answers",
           "result", "prev_hash")


def key_id(secret: bytes) -> str:
    return hmac.new(secret, b"gpu-advisor audit key id", hashlib.sha256).hexdigest()[:16]


def canonical_bytes(fields: Mapping[str, Any]) -> bytes:
    content = {k: fields[k] for k in _HASHED}
    if fields.get("hash_kind", PLAIN) != PLAIN:
        content.update(hash_kind=fields["hash_kind"], key_id=fields["key_id"])
    return json.dumps(content, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":")).encode()


def record_hash(fields: Mapping[str, Any], secret: bytes | None) -> str:
    data = canonical_bytes(fields)
    if fields.get("hash_kind", PLAIN) == PLAIN:
        return hashlib.sha256(data).hexdigest()
    assert secret is not None
    return hmac.new(secret, data, hashlib.sha256).hexdigest()


def policy_hash(texts: Mapping[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(texts):
        digest.update(name.encode() + b"\0" + texts[name].encode() + b"\0")
    return digest.hexdigest()


class Schema2Store:
    """A schema-1 or schema-2 store as gpu-advisor 0.2.0 created and appended to it."""

    def __init__(self, path: Path, schema: int = 2) -> None:
        self.schema = schema
        self.conn = sqlite3.connect(path, isolation_level=None)
        if not self.conn.execute("PRAGMA user_version").fetchone()[0]:
            self.conn.executescript(SCHEMA_1 + (SCHEMA_2 if schema == 2 else ""))
        self.conn.execute("PRAGMA journal_mode = WAL")

    def close(self) -> None:
        self.conn.close()

    def append(self, result: str, rules: Mapping[str, str], catalog: Mapping[str, str],
               secret: bytes | None = None) -> dict[str, Any]:
        data = json.loads(result)
        fields: dict[str, Any] = {
            "id": data["decision_id"],
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            "engine_version": data["engine_version"],
            "rules_hash": data["ruleset"]["hash"],
            "catalog_hash": data["catalog"]["hash"],
            "answers": json.dumps(data["answers"], sort_keys=True, ensure_ascii=False),
            "result": result,
            "choices": json.dumps({a: d["choice"] for a, d in data["decisions"].items()},
                                  sort_keys=True),
            # the release saw fired as a list of {rule, fact}; today's results map rule → facts
            "rules_fired": json.dumps(sorted(set(data["fired"]) if isinstance(data["fired"], dict)
                                             else {f["rule"] for f in data["fired"]})),
        }
        self.conn.execute("BEGIN IMMEDIATE")
        for digest, kind, texts in ((fields["rules_hash"], "rules", rules),
                                    (fields["catalog_hash"], "catalog", catalog)):
            assert policy_hash(texts) == digest
            self.conn.execute("INSERT OR IGNORE INTO policies (hash, kind, content) VALUES "
                              "(?, ?, ?)", (digest, kind, json.dumps(dict(texts), sort_keys=True)))
        last = self.conn.execute("SELECT hash FROM decisions ORDER BY seq DESC LIMIT 1"
                                 ).fetchone()
        fields["prev_hash"] = last[0] if last else GENESIS
        fields["hash_kind"], fields["key_id"] = (
            (KEYED, key_id(secret)) if secret else (PLAIN, None))
        fields["hash"] = record_hash(fields, secret)
        names = [*_HASHED, "choices", "rules_fired", "hash"]
        if self.schema == 2:
            names += ["hash_kind", "key_id"]
        self.conn.execute(f"INSERT INTO decisions ({', '.join(names)}) VALUES "
                          f"({', '.join('?' * len(names))})", [fields[n] for n in names])
        self.conn.execute("COMMIT")
        return fields


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("db", type=Path)
    parser.add_argument("count", type=int)
    parser.add_argument("--schema", type=int, choices=(1, 2), default=2)
    parser.add_argument("--key", default=None)
    args = parser.parse_args()
    from engine.answers.model import validate_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    store = Schema2Store(args.db, args.schema)
    for index in range(args.count):
        answers = validate_answers({"hours_per_year": 1000 + index}, engine.catalog)
        store.append(engine.recommend(answers).to_json(), engine.rulebook.texts,
                     engine.catalog.texts, args.key.encode() if args.key else None)
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
