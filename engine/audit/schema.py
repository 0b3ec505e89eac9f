"""The audit store's tables (schema 3): decisions hash-chained, each record's bytes
compressed (zstd, with dictionaries kept in the store, :mod:`engine.audit.codec`), the index
columns beside them. Schemas 1 and 2 were development versions, never released: a store of
either is refused (:meth:`engine.audit.store.AuditStore`), not read or migrated.
"""

from __future__ import annotations

import sqlite3

from engine.audit.record import KEYED, PLAIN

VERSION = 3

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


_SQL = """
CREATE TABLE policies (
    hash    TEXT PRIMARY KEY,
    kind    TEXT NOT NULL CHECK (kind IN ('rules', 'catalog')),
    content TEXT NOT NULL
);
CREATE TABLE dictionaries (
    id      INTEGER PRIMARY KEY,
    scope   TEXT NOT NULL UNIQUE,
    content BLOB NOT NULL
);
""" + decisions_table("decisions", SQLITE_TYPES) + """;
CREATE INDEX decisions_created ON decisions (created_at);
"""


def create(conn: sqlite3.Connection) -> None:
    """Make a new store's tables at :data:`VERSION` (inside the caller's transaction)."""
    for statement in _statements(_SQL):
        conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {VERSION}")


def scope(form: str, engine_version: str, rules_hash: str, catalog_hash: str) -> str:
    """The dictionary scope of a record: its form, engine version and policy."""
    return f"{form} {engine_version} {rules_hash[:16]} {catalog_hash[:16]}"


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]
