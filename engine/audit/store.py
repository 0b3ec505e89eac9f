"""The audit store: every recommendation, hash-chained, with the exact policy that made it.

SQLite (WAL, file mode 0600). Each record holds the answers, the full result (facts and
traces included), the engine version and the rule-set and catalog hashes, as the bytes its
hash is made over (:mod:`engine.audit.record`), compressed (:mod:`engine.audit.codec`);
the rules and catalog texts are stored once per hash, so any record can be replayed on its
own policy. ``prev_hash``/``hash`` chain the records: editing one breaks the chain at that
record. A record's ``hash_kind`` says how its hash was made: ``sha256`` over its bytes, or
``hmac-sha256`` under the audit key (:mod:`engine.audit.key`), which only the key's holder
can compute. :mod:`engine.audit.chain` walks and checks the chain; :mod:`engine.audit.schema`
holds the tables of each schema version and the steps between them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from engine.audit import schema
from engine.audit.codec import BodyError, Codec
from engine.audit.key import ENV_KEY, ENV_KEY_FILE, AuditKey, load_key
from engine.audit.record import (
    KEYED,
    PLAIN,
    Entry,
    Record,
    Stored,
    framed_content,
    index_columns,
)
from engine.audit.record import digest as record_digest
from engine.audit.sqlite import AuditError, connect, connect_reader, enable_wal, storage_error
from engine.errors import InputError
from engine.files.printable import printable

__all__ = ["KEYED", "PLAIN", "AuditError", "AuditStore", "Entry", "PolicyMismatch", "Record",
           "Stored", "default_path", "index_columns", "policy_hash"]

SCHEMA_VERSION = schema.VERSION
GENESIS = "0" * 64
ENV_VAR = "GPU_ADVISOR_AUDIT_DB"
FROM_ENVIRONMENT: Literal["environment"] = "environment"
_COLUMNS = ("seq, id, created_at, engine_version, rules_hash, catalog_hash, choices, "
            "rules_fired, prev_hash, hash, hash_kind, key_id")
_ENTRY_COLUMNS = "seq, id, created_at, engine_version, rules_hash, catalog_hash, choices"
_SHOWN_MATCHES = 3
"""How many of the decisions an ambiguous id prefix matches are named."""


class PolicyMismatch(AuditError):
    """A stored policy's texts no longer hash to the hash it is stored (and recorded) under."""

    exit_code = 1


def default_path() -> Path:
    """``$GPU_ADVISOR_AUDIT_DB`` or ``audit.sqlite3`` in the user data directory."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("gpu-advisor")) / "audit.sqlite3"


def policy_hash(texts: Mapping[str, str]) -> str:
    """The content hash rules and catalogs are stored under (same as the engine's)."""
    from engine.catalog.load import content_hash

    return content_hash(texts)


class AuditStore:
    """An open audit store. Use as a context manager or call :meth:`close`.

    A writer (``create=True``) creates and migrates the store and records with ``key``
    (by default the audit key from the environment, if any); a reader (``create=False``)
    never writes, not even a migration, so it also reads a store it cannot write to.
    """

    def __init__(self, path: Path, *, create: bool = True,
                 key: AuditKey | Literal["environment"] | None = FROM_ENVIRONMENT) -> None:
        self.path = path
        self._key = key
        self._conn = connect(path, create=True) if create else connect_reader(path)
        self._codec = Codec(self._conn)
        try:
            self._version = self._check_schema()
            # this writer makes the store: it had no tables when opened
            self.created = create and self._version == 0
            if create:
                enable_wal(self._conn, path)
                self._version = self._migrate()
        except BaseException:
            self._conn.close()
            raise

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    # -- schema --------------------------------------------------------------------------
    def _check_schema(self) -> int:
        """Refuse a newer or foreign database before anything is written to it (read only,
        one snapshot, so a concurrent first migration is not mistaken for foreign tables)."""
        try:
            self._conn.execute("BEGIN")
        except sqlite3.DatabaseError as exc:
            raise storage_error(self.path, exc) from None
        try:
            return self._schema_version()
        finally:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("COMMIT")

    def _schema_version(self) -> int:
        version = int(self._query_one("PRAGMA user_version")[0])
        if version > SCHEMA_VERSION:
            raise AuditError(f"{self.path}: audit store schema version {version} is newer than "
                             f"this gpu-advisor supports ({SCHEMA_VERSION}); upgrade gpu-advisor")
        if version == 0 and self._has_foreign_tables():
            raise AuditError(f"{self.path}: not a gpu-advisor audit store (it has other tables); "
                             "refusing to touch it")
        return version

    def _migrate(self) -> int:
        if int(self._query_one("PRAGMA user_version")[0]) == SCHEMA_VERSION:
            return SCHEMA_VERSION
        with self._write():
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = self._schema_version()
            for target in range(version + 1, SCHEMA_VERSION + 1):
                try:
                    schema.step(self._conn, target)
                except BodyError as exc:  # a record too large to keep: nothing changes
                    raise AuditError(f"{self.path}: cannot bring the audit store to schema "
                                     f"{target} ({exc}); it was not modified") from None
        if 0 < version < 3:
            # the uncompressed records' pages are free now: give them back to the disk
            # (if this fails, e.g. for want of space, SQLite reuses them for new records)
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("VACUUM")
        return SCHEMA_VERSION

    def _has_foreign_tables(self) -> bool:
        return self._query_one(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ) is not None

    def _query_one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        try:
            return self._conn.execute(sql, params).fetchone()
        except sqlite3.DatabaseError as exc:
            raise AuditError(f"{self.path}: not a usable audit store ({exc})") from None

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One IMMEDIATE write transaction (serialises writers; all or nothing)."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise storage_error(self.path, exc) from None
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise storage_error(self.path, exc) from None
            raise

    # -- writing ---------------------------------------------------------------------------
    @property
    def key(self) -> AuditKey | None:
        """The key new records are made with (read from the environment on first use)."""
        if self._key == FROM_ENVIRONMENT:
            self._key = load_key()
        return self._key

    def append(self, decision: Any, rules_texts: Mapping[str, str],
               catalog_texts: Mapping[str, str]) -> Record:
        """Record one decision (and its policy, once per hash) at the end of the chain."""
        result = decision.to_json()
        data = json.loads(result)
        fields: dict[str, Any] = {
            "id": data["decision_id"],
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            "engine_version": data["engine_version"],
            "rules_hash": data["ruleset"]["hash"],
            "catalog_hash": data["catalog"]["hash"],
            "answers": json.dumps(data["answers"], sort_keys=True, ensure_ascii=False),
            "result": result,
            **index_columns(data),
        }
        key = self.key
        with self._write():
            self._store_policy(fields["rules_hash"], "rules", rules_texts)
            self._store_policy(fields["catalog_hash"], "catalog", catalog_texts)
            last = self._conn.execute("SELECT hash, hash_kind, key_id FROM decisions"
                                      " ORDER BY seq DESC LIMIT 1").fetchone()
            self._check_key_continues(last, key)
            fields["prev_hash"] = last[0] if last else GENESIS
            fields["hash_kind"], fields["key_id"] = (KEYED, key.id) if key else (PLAIN, None)
            content = framed_content(fields)
            fields["hash"] = record_digest(content, fields["hash_kind"], key)
            fields["body"], fields["dictionary"] = self._pack(content, fields)
            cursor = self._conn.execute(
                "INSERT INTO decisions (id, created_at, engine_version, rules_hash, catalog_hash,"
                " choices, rules_fired, prev_hash, hash, hash_kind, key_id, dictionary, body)"
                " VALUES (:id, :created_at, :engine_version, :rules_hash, :catalog_hash,"
                " :choices, :rules_fired, :prev_hash, :hash, :hash_kind, :key_id, :dictionary,"
                " :body)", fields)
            seq = int(cursor.lastrowid or 0)
        del fields["body"], fields["dictionary"]
        return Record(seq=seq, **fields)

    def _pack(self, content: bytes, fields: Mapping[str, Any]) -> tuple[bytes, int]:
        try:
            return self._codec.pack(content, schema.scope(
                "framed", fields["engine_version"], fields["rules_hash"],
                fields["catalog_hash"]))
        except BodyError as exc:
            raise AuditError(f"{self.path}: {exc}; nothing was recorded") from None

    def _check_key_continues(self, last: tuple[str, str, str | None] | None,
                             key: AuditKey | None) -> None:
        """Once a store is keyed, every later record is keyed with the same key: a plain
        record after a keyed one can then only be a forgery, and verify says so."""
        if last is None or last[1] == PLAIN:
            return
        if key is None:
            raise AuditError(f"{self.path}: this audit store is keyed; set {ENV_KEY} or "
                             f"{ENV_KEY_FILE} to record into it; nothing was recorded")
        if last[2] != key.id:
            raise AuditError(f"{self.path}: this audit store is keyed with key {last[2]}, not "
                             f"with the key from {key.source} ({key.id}); nothing was recorded")

    def _store_policy(self, digest: str, kind: str, texts: Mapping[str, str]) -> None:
        if policy_hash(texts) != digest:
            raise AuditError(f"{kind} content does not match its hash {digest[:12]}")
        # Stored once per hash: the check runs inside the write transaction, so it holds.
        # (Serialising a whole policy only for INSERT OR IGNORE to drop it took ~40 % of
        # an append.)
        if self._conn.execute("SELECT 1 FROM policies WHERE hash = ?", (digest,)).fetchone():
            return
        self._conn.execute("INSERT OR IGNORE INTO policies (hash, kind, content) VALUES (?, ?, ?)",
                           (digest, kind, json.dumps(dict(texts), sort_keys=True)))

    # -- reading ---------------------------------------------------------------------------
    def get(self, decision_id: str) -> Record:
        """The record with this id (a unique prefix is enough)."""
        exact = self._select("WHERE id = ?", (decision_id,))
        if exact:
            return exact[0]
        ids = self._ids_starting(decision_id, _SHOWN_MATCHES + 1)
        if not ids:
            raise InputError(f"no decision '{decision_id}' in {self.path}", field="ID")
        if len(ids) > 1:
            more = ", …" if len(ids) > _SHOWN_MATCHES else ""
            raise InputError(f"'{decision_id}' matches several decisions "
                             f"({', '.join(ids[:_SHOWN_MATCHES])}{more}); give more of the id",
                             field="ID")
        return self._select("WHERE id = ?", (ids[0],))[0]

    def _ids_starting(self, prefix: str, limit: int) -> list[str]:
        """Up to ``limit`` ids that start with ``prefix``, oldest first."""
        if not self._version:
            return []
        pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._fetch("SELECT id FROM decisions WHERE id LIKE ? ESCAPE '\\' ORDER BY seq"
                           " LIMIT ?", (pattern, limit))
        return [str(row[0]) for row in rows]

    def policy(self, digest: str) -> dict[str, str]:
        """The exact texts stored under a policy hash, checked against it: a stored policy
        that no longer matches its hash raises :class:`PolicyMismatch`."""
        row = (self._query_one("SELECT kind, content FROM policies WHERE hash = ?", (digest,))
               if self._version else None)
        if row is None:
            raise AuditError(f"{self.path}: policy {digest[:12]} is missing from the store")
        try:
            texts = json.loads(row[1])
            actual = policy_hash(texts)
        except (ValueError, TypeError, AttributeError):
            actual = "not valid policy texts"
        if actual != digest:
            raise PolicyMismatch(f"{self.path}: the stored {row[0]} policy {digest[:12]} no "
                                 f"longer matches its hash (its texts hash to {actual[:12]}): "
                                 "the store was altered")
        return texts  # type: ignore[no-any-return]

    def records(self, *, since: str | None = None, until: str | None = None,
                choice: tuple[str, str] | None = None, rule: str | None = None,
                limit: int | None = None) -> list[Record]:
        """Records in chain order, filtered."""
        return self._select(*_filters(since, until, choice, rule, limit))

    def entries(self, *, since: str | None = None, until: str | None = None,
                choice: tuple[str, str] | None = None, rule: str | None = None,
                limit: int | None = None) -> list[Entry]:
        """What ``audit list`` shows of the records, filtered, in chain order (their bodies
        are not read)."""
        clause, params = _filters(since, until, choice, rule, limit)
        if not self._version:
            return []
        sql = f"SELECT {_ENTRY_COLUMNS} FROM decisions {clause}"
        return [Entry(*row) for row in self._fetch(sql, params)]

    def iter_all(self, batch: int = 1000) -> Iterator[Record]:
        """Every record in chain order, fetched in batches."""
        for stored in self.iter_stored(batch):
            yield stored.record(self.path)

    def iter_stored(self, batch: int = 1000) -> Iterator[Stored]:
        """Every record as stored, in chain order (for the chain walk): rows are fetched in
        batches, and each body is decompressed only when its record is reached, so a walk
        that stops at a bad record reads nothing after it."""
        last = 0
        while True:
            rows = self._rows("WHERE seq > ? ORDER BY seq LIMIT ?", (last, batch))
            if not rows:
                return
            for row in rows:
                stored = self._from_row(row)
                last = stored.seq
                yield stored

    def count(self) -> int:
        """How many records the store holds."""
        if not self._version:  # a new, empty file opened by a reader
            return 0
        return int(self._query_one("SELECT count(*) FROM decisions")[0])

    def _select(self, clause: str, params: tuple[Any, ...]) -> list[Record]:
        return [stored.record(self.path) for stored in self._stored(clause, params)]

    def _stored(self, clause: str, params: tuple[Any, ...]) -> list[Stored]:
        return [self._from_row(row) for row in self._rows(clause, params)]

    def _rows(self, clause: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """The rows of the records the clause selects, bodies still compressed."""
        if not self._version:
            return []
        if self._version < 3:  # read, not migrated: answers and result are text columns
            # A schema-1 store has plain records only.
            how = ", hash_kind, key_id" if self._version >= 2 else f", '{PLAIN}', NULL"
            return self._fetch(f"SELECT {schema.LEGACY_COLUMNS}{how} FROM decisions {clause}",
                               params)
        return self._fetch(f"SELECT {_COLUMNS}, dictionary, body FROM decisions {clause}",
                           params)

    def _from_row(self, row: tuple[Any, ...]) -> Stored:
        """One record as stored: its columns and its bytes (schema 3: decompressed now)."""
        if self._version < 3:  # rows of a schema-1/2 store, with the bytes those schemas hashed
            columns, content = schema.legacy_row(row)
            return Stored(**columns, content=content)
        columns = dict(zip(_COLUMNS.split(", "), row[:-2], strict=True))
        try:
            return Stored(**columns, content=self._codec.unpack(row[-1], row[-2]))
        except BodyError as exc:
            return Stored(**columns, content=None, unreadable=str(exc))

    def _fetch(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise AuditError(f"{self.path}: cannot read the audit store ({exc})") from None



def utc_time(text: str, field: str) -> str:
    """An ISO date or date/time (UTC unless it names an offset) written as the records'
    ``created_at`` column writes times, so that the two compare as text; anything else is an
    :class:`InputError` (exit 2), never compared as it stands."""
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"{printable(text[:40])!r} is not an ISO date or date/time (e.g. "
                         "2026-11-01 or 2026-11-01T14:30)", field=field) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    try:
        return when.astimezone(dt.UTC).isoformat(timespec="milliseconds")
    except OverflowError:  # an offset that moves it past year 1 or 9999
        raise InputError(f"{printable(text[:40])!r} is out of range", field=field) from None


def _filters(since: str | None, until: str | None, choice: tuple[str, str] | None,
             rule: str | None, limit: int | None) -> tuple[str, tuple[Any, ...]]:
    """The WHERE/ORDER/LIMIT clause and its parameters for ``audit list``'s filters."""
    where: list[str] = []
    params: list[Any] = []
    if since:
        where.append("created_at >= ?")
        params.append(since)
    if until:
        where.append("created_at < ?")
        params.append(until)
    if choice:
        where.append("json_extract(choices, ?) = ?")
        params += [f"$.{choice[0]}", choice[1]]
    if rule:
        where.append("EXISTS (SELECT 1 FROM json_each(rules_fired) WHERE value = ?)")
        params.append(rule)
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    clause += " ORDER BY seq"
    if limit is not None:
        clause += f" LIMIT {int(limit)}"
    return clause, tuple(params)
