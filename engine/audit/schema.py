"""The audit store's tables, version by version, and the steps from each to the next.

Schema 1: decisions with their answers and result as text, hash-chained. Schema 2: keyed
hashes (``hash_kind``, ``key_id``). Schema 3: each record's bytes compressed (zstd, with
dictionaries kept in the store, :mod:`engine.audit.codec`); the index columns stay. The
step to 3 compresses every existing record as the exact bytes its hash was made over, so
each hash, link and head stays valid and each result reads back byte for byte.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

from engine.audit.codec import Codec
from engine.audit.record import KEYED, PLAIN, json_content

VERSION = 3
LEGACY_COLUMNS = ("seq, id, created_at, engine_version, rules_hash, catalog_hash, answers, "
                  "result, choices, rules_fired, prev_hash, hash")
"""A schema-1/2 decision row (schema 2 adds ``hash_kind, key_id``)."""

_DECISIONS_3 = f"""
CREATE TABLE {{name}} (
    seq            {{serial}},
    id             TEXT NOT NULL UNIQUE,
    created_at     TEXT NOT NULL,
    engine_version TEXT NOT NULL,
    rules_hash     TEXT NOT NULL REFERENCES policies (hash),
    catalog_hash   TEXT NOT NULL REFERENCES policies (hash),
    choices        TEXT NOT NULL,
    rules_fired    TEXT NOT NULL,
    prev_hash      TEXT NOT NULL,
    hash           TEXT NOT NULL UNIQUE,
    hash_kind      TEXT NOT NULL CHECK (hash_kind IN ('{PLAIN}', '{KEYED}')),
    key_id         TEXT,
    dictionary     {{integer}} REFERENCES dictionaries (id),
    body           {{blob}} NOT NULL
)"""
"""Schema 3's decisions table, in each database's types (``serial``, ``integer``, ``blob``):
SQLite's below, PostgreSQL's in :mod:`engine.audit.postgres`."""
SQLITE_TYPES = {"serial": "INTEGER PRIMARY KEY AUTOINCREMENT", "integer": "INTEGER",
                "blob": "BLOB"}
"""(AUTOINCREMENT: a deleted last record's number is never given again.)"""


def decisions_table(name: str, types: dict[str, str]) -> str:
    """``CREATE TABLE name`` for schema 3's decisions, in these column types."""
    return _DECISIONS_3.format(name=name, **types)


_SQL: dict[int, str] = {
    1: """
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
    """,
    # Keyed hashes. Every schema-1 record is a plain sha256 one and stays verifiable as is.
    2: f"""
    ALTER TABLE decisions ADD COLUMN hash_kind TEXT NOT NULL DEFAULT '{PLAIN}'
        CHECK (hash_kind IN ('{PLAIN}', '{KEYED}'));
    ALTER TABLE decisions ADD COLUMN key_id TEXT;
    """,
    3: """
    CREATE TABLE dictionaries (
        id      INTEGER PRIMARY KEY,
        scope   TEXT NOT NULL UNIQUE,
        content BLOB NOT NULL
    );
    """ + decisions_table("decisions_3", SQLITE_TYPES) + ";",
}

_BATCH = 500



def step(conn: sqlite3.Connection, target: int) -> None:
    """Bring a store at ``target - 1`` to ``target`` (inside the caller's transaction)."""
    for statement in _statements(_SQL[target]):
        conn.execute(statement)
    if target == 3:
        _compress_decisions(conn)
    conn.execute(f"PRAGMA user_version = {target}")


def scope(form: str, engine_version: str, rules_hash: str, catalog_hash: str) -> str:
    """The dictionary scope of a record: its form, engine version and policy."""
    return f"{form} {engine_version} {rules_hash[:16]} {catalog_hash[:16]}"


def _compress_decisions(conn: sqlite3.Connection) -> None:
    """Copy every schema-2 decision into the schema-3 table as its compressed hashed bytes,
    then put that table in the old one's place (keeping the sequence of ``seq``)."""
    codec = Codec(conn)
    for rows in _batches(conn):
        conn.executemany(
            "INSERT INTO decisions_3 (seq, id, created_at, engine_version, rules_hash,"
            " catalog_hash, choices, rules_fired, prev_hash, hash, hash_kind, key_id,"
            " dictionary, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_compressed(codec, row) for row in rows])
    sequence = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'decisions'"
                            ).fetchone()
    conn.execute("DROP TABLE decisions")
    conn.execute("ALTER TABLE decisions_3 RENAME TO decisions")
    conn.execute("CREATE INDEX decisions_created ON decisions (created_at)")
    if sequence is not None:
        conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'decisions'",
                     (sequence[0],))


def _batches(conn: sqlite3.Connection) -> Iterator[list[tuple[Any, ...]]]:
    last = 0
    while True:
        rows = conn.execute(f"SELECT {LEGACY_COLUMNS}, hash_kind, key_id FROM decisions"
                            " WHERE seq > ? ORDER BY seq LIMIT ?", (last, _BATCH)).fetchall()
        if not rows:
            return
        yield rows
        last = rows[-1][0]


LEGACY_NAMES = ("seq", "id", "created_at", "engine_version", "rules_hash", "catalog_hash",
                "answers", "result", "choices", "rules_fired", "prev_hash", "hash", "hash_kind",
                "key_id")


def legacy_row(row: tuple[Any, ...]) -> tuple[dict[str, Any], bytes]:
    """A schema-1/2 row (:data:`LEGACY_NAMES`): its columns but answers and result, and the
    bytes its hash was made over, rebuilt from its columns as those schemas did. An edited
    row gives bytes that no longer match its hash, so ``audit verify`` finds it broken."""
    fields = dict(zip(LEGACY_NAMES, row, strict=True))
    texts = {name: _text(fields[name]) for name in LEGACY_NAMES[1:-2]}
    content = json_content({**texts, "hash_kind": fields["hash_kind"],
                            "key_id": fields["key_id"]})
    return {k: v for k, v in fields.items() if k not in ("answers", "result")}, content


def _compressed(codec: Codec, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A schema-2 row as a schema-3 one: its hashed bytes, compressed."""
    columns, content = legacy_row(row)
    body, dictionary = codec.pack(content, scope(
        "json", _text(columns["engine_version"]), _text(columns["rules_hash"]),
        _text(columns["catalog_hash"])))
    return (*columns.values(), dictionary, body)


def _text(value: Any) -> str:
    """A text column's value as text (SQLite lets an edit store a number or a blob)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else str(value)


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
