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

import datetime as dt
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from engine.audit import schema
from engine.audit.backend import Backend, Conflict, open_backend
from engine.audit.codec import BodyError, Codec
from engine.audit.key import ENV_KEY, ENV_KEY_FILE, AuditKey, load_key
from engine.audit.location import Location, parse_location
from engine.audit.record import (
    KEYED,
    OLD_FORM,
    PLAIN,
    Entry,
    Record,
    Stored,
    framed_content,
    index_columns,
    is_old_form,
)
from engine.audit.record import digest as record_digest
from engine.audit.sqlite import AuditError
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
_ATTEMPTS = 5
"""How many times an append that lost a race the database detected is tried."""
_SHOWN_MATCHES = 3
"""How many of the decisions an ambiguous id prefix matches are named."""


class OtherChain(AuditError):
    """A copy's destination holds records that are not the start of the source's chain."""

    def __init__(self, location: object, count: int) -> None:
        super().__init__(f"{location} holds {count:,} record(s) of another chain, so the "
                         "copy cannot keep the source's links and hashes; copy into an empty "
                         "store, or pass --append to add the records at the end of its chain "
                         "with new links")
        self.count = count


class PolicyMismatch(AuditError):
    """A stored policy's texts no longer hash to the hash it is stored (and recorded) under."""

    exit_code = 1


def default_path() -> Location:
    """``$GPU_ADVISOR_AUDIT_DB`` (a path or a database URL) or ``audit.sqlite3`` in the user
    data directory."""
    env = os.environ.get(ENV_VAR)
    if env:
        return parse_location(env, ENV_VAR)
    import platformdirs

    return Path(platformdirs.user_data_dir("gpu-advisor")) / "audit.sqlite3"


def policy_hash(texts: Mapping[str, str]) -> str:
    """The content hash rules and catalogs are stored under (same as the engine's)."""
    from engine.catalog.load import content_hash

    return content_hash(texts)


class AuditStore:
    """An open audit store. Use as a context manager or call :meth:`close`.

    A writer (``create=True``) creates the store's tables if need be and records with ``key``
    (by default the audit key from the environment, if any); a reader (``create=False``)
    never writes, not even the tables, so it also reads a store it cannot write to.
    """

    def __init__(self, location: Location, *, create: bool = True,
                 key: AuditKey | Literal["environment"] | None = FROM_ENVIRONMENT) -> None:
        self.path = location
        """Where the store is: a file, or a database URL (its password masked in print)."""
        self._key = key
        self._db: Backend = open_backend(location, create=create)
        self._conn = self._db.conn
        self._errors = self._db.errors
        self._codec = Codec(self._conn)
        try:
            self._version = self._check_schema(*self._db.version())
            # this writer makes the store: it had no tables when opened
            self.created = create and self._version == 0
            if create:
                self._db.prepare()
                self._version = self._create()
        except BaseException:
            self._db.close()
            raise

    def __enter__(self) -> AuditStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    # -- schema --------------------------------------------------------------------------
    def _check_schema(self, version: int, foreign: bool) -> int:
        """Refuse a newer, unreleased (schema 1 and 2) or foreign database before anything is
        read from or written to it."""
        if version > SCHEMA_VERSION:
            raise AuditError(f"{self.path}: audit store schema version {version} is newer than "
                             f"this gpu-advisor supports ({SCHEMA_VERSION}); upgrade gpu-advisor")
        if 0 < version < SCHEMA_VERSION:
            raise AuditError(f"{self.path}: audit store of schema {version}, written by a "
                             "development version of gpu-advisor; this version reads schema "
                             f"{SCHEMA_VERSION} only — export it with that version or start "
                             "a new store")
        if version == 0 and foreign:
            raise AuditError(f"{self.path}: not a gpu-advisor audit store (it has other tables); "
                             "refusing to touch it")
        return version

    def _create(self) -> int:
        if self._version == SCHEMA_VERSION:
            return SCHEMA_VERSION
        with self._db.write():
            # Re-read under the write lock: another process may have made the tables meanwhile.
            version = self._check_schema(*self._db.current_version())
            self._db.create_tables(version)
        return SCHEMA_VERSION

    def _query_one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        try:
            return self._conn.execute(sql, params).fetchone()
        except self._errors as exc:
            raise AuditError(f"{self.path}: not a usable audit store "
                             f"({_first_line(exc)})") from None

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
        return self._append_fields(fields, rules_texts, catalog_texts)

    def _append_fields(self, fields: dict[str, Any], rules_texts: Mapping[str, str],
                       catalog_texts: Mapping[str, str]) -> Record:
        key = self.key
        for attempt in range(_ATTEMPTS):
            try:
                return self._append(fields, key, rules_texts, catalog_texts)
            except Conflict:
                if attempt == _ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def _append(self, fields: dict[str, Any], key: AuditKey | None,
                rules_texts: Mapping[str, str], catalog_texts: Mapping[str, str]) -> Record:
        """One try at "read the head, write the record", in one serialised transaction."""
        fields = dict(fields)
        with self._db.write():
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
            seq = int(self._conn.execute(
                "INSERT INTO decisions (id, created_at, engine_version, rules_hash, catalog_hash,"
                " choices, rules_fired, prev_hash, hash, hash_kind, key_id, dictionary, body)"
                " VALUES (:id, :created_at, :engine_version, :rules_hash, :catalog_hash,"
                " :choices, :rules_fired, :prev_hash, :hash, :hash_kind, :key_id, :dictionary,"
                " :body) RETURNING seq", fields).fetchone()[0])
        del fields["body"], fields["dictionary"]
        return Record(seq=seq, **fields)

    def adopt(self, source: Iterable[Stored],
              policies: Callable[[str], Mapping[str, str]]) -> int:
        """Copy a chain record for record as it is (ids, times, links, hashes and keys
        kept, so every head of the source holds here too), in one transaction: all or
        nothing. This store must be empty or hold the start of that same chain (a copy run
        before): only the records after it are written; their number is returned. Anything
        else is an :class:`AuditError` naming what this store holds."""
        with self._db.write():
            count = int(self._conn.execute("SELECT count(*) FROM decisions").fetchone()[0])
            last = self._conn.execute("SELECT hash FROM decisions ORDER BY seq DESC LIMIT 1"
                                      ).fetchone()
            written = position = 0
            for stored in source:
                position += 1
                if position == count and stored.hash != last[0]:
                    raise OtherChain(self.path, count)
                if position > count:
                    self._insert_stored(stored, policies)
                    written += 1
            if position < count:
                raise OtherChain(self.path, count)
        return written

    def _insert_stored(self, stored: Stored,
                       policies: Callable[[str], Mapping[str, str]]) -> None:
        if stored.content is None:
            raise AuditError(f"record {stored.id} cannot be read ({stored.unreadable}); "
                             "nothing was copied")
        for digest, kind in ((stored.rules_hash, "rules"), (stored.catalog_hash, "catalog")):
            self._store_policy(digest, kind, policies(digest))
        if is_old_form(stored.content):
            raise AuditError(f"record {stored.id} cannot be copied ({OLD_FORM}); nothing was "
                             "copied")
        try:
            body, dictionary = self._codec.pack(stored.content, schema.scope(
                "framed", stored.engine_version, stored.rules_hash, stored.catalog_hash))
        except BodyError as exc:
            raise AuditError(f"{self.path}: record {stored.id}: {exc}; nothing was copied"
                             ) from None
        self._conn.execute(
            "INSERT INTO decisions (id, created_at, engine_version, rules_hash, catalog_hash,"
            " choices, rules_fired, prev_hash, hash, hash_kind, key_id, dictionary, body)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (stored.id, stored.created_at, stored.engine_version, stored.rules_hash,
             stored.catalog_hash, stored.choices, stored.rules_fired, stored.prev_hash,
             stored.hash, stored.hash_kind, stored.key_id, dictionary, body))

    def append_record(self, record: Record, rules_texts: Mapping[str, str],
                      catalog_texts: Mapping[str, str]) -> Record | None:
        """Add another store's record at the end of this chain, with a new link and hash
        (its id, time, answers, result and policy kept); None where this store holds it
        already. A record with its id but other content is an :class:`AuditError`."""
        fields: dict[str, Any] = {
            "id": record.id, "created_at": record.created_at,
            "engine_version": record.engine_version, "rules_hash": record.rules_hash,
            "catalog_hash": record.catalog_hash, "answers": record.answers,
            "result": record.result, "choices": record.choices,
            "rules_fired": record.rules_fired}
        found = self._select("WHERE id = ?", (record.id,)) if self._version else []
        if found:
            held = found[0]
            if (held.answers, held.result, held.created_at) != (
                    record.answers, record.result, record.created_at):
                raise AuditError(f"{self.path} holds another decision with id {record.id}; "
                                 "refusing to copy over it")
            return None
        return self._append_fields(fields, rules_texts, catalog_texts)

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
        self._conn.execute("INSERT INTO policies (hash, kind, content) VALUES (?, ?, ?)"
                           " ON CONFLICT DO NOTHING",
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
        return self._select(*self._filters(since, until, choice, rule, limit))

    def entries(self, *, since: str | None = None, until: str | None = None,
                choice: tuple[str, str] | None = None, rule: str | None = None,
                limit: int | None = None) -> list[Entry]:
        """What ``audit list`` shows of the records, filtered, in chain order (their bodies
        are not read)."""
        clause, params = self._filters(since, until, choice, rule, limit)
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
        return self._fetch(f"SELECT {_COLUMNS}, dictionary, body FROM decisions {clause}",
                           params)

    def _from_row(self, row: tuple[Any, ...]) -> Stored:
        """One record as stored: its columns and its bytes, decompressed now."""
        columns = dict(zip(_COLUMNS.split(", "), row[:-2], strict=True))
        try:
            return Stored(**columns, content=self._codec.unpack(row[-1], row[-2]))
        except BodyError as exc:
            return Stored(**columns, content=None, unreadable=str(exc))

    def _fetch(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            rows: list[tuple[Any, ...]] = self._conn.execute(sql, params).fetchall()
            return rows
        except self._errors as exc:
            raise AuditError(f"{self.path}: cannot read the audit store "
                             f"({_first_line(exc)})") from None

    def _filters(self, since: str | None, until: str | None,
                 choice: tuple[str, str] | None, rule: str | None,
                 limit: int | None) -> tuple[str, tuple[Any, ...]]:
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
            where.append(self._db.choice_sql)
            params += [choice[0], choice[1]]
        if rule:
            where.append(self._db.rule_sql)
            params.append(rule)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        clause += " ORDER BY seq"
        if limit is not None:
            clause += f" LIMIT {int(limit)}"
        return clause, tuple(params)



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


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
