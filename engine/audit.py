"""The audit store: every recommendation, hash-chained, with the exact policy that made it.

SQLite (WAL, file mode 0600). Each record holds the answers, the full result (facts and
traces included), the engine version and the rule-set and catalog hashes; the rules and
catalog texts are stored once per hash, so any record can be replayed on its own policy.
``prev_hash``/``hash`` chain the records: editing one breaks the chain at that record.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import EngineError, InputError

SCHEMA_VERSION = 1
GENESIS = "0" * 64
BUSY_TIMEOUT_MS = 60_000
ENV_VAR = "GPU_ADVISOR_AUDIT_DB"

_MIGRATIONS: dict[int, str] = {
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
}


class AuditError(EngineError):
    """The audit store cannot be used (corrupt, foreign, newer schema, read-only, full)."""


@dataclass(frozen=True)
class Record:
    """One recorded decision."""

    seq: int
    id: str
    created_at: str
    engine_version: str
    rules_hash: str
    catalog_hash: str
    answers: str
    result: str
    choices: str
    rules_fired: str
    prev_hash: str
    hash: str

    @property
    def result_data(self) -> dict[str, Any]:
        """The stored result as data."""
        return json.loads(self.result)  # type: ignore[no-any-return]

    def summary(self) -> dict[str, Any]:
        """What ``audit list`` shows."""
        return {"id": self.id, "created_at": self.created_at,
                "engine_version": self.engine_version, "choices": json.loads(self.choices),
                "rules_hash": self.rules_hash, "catalog_hash": self.catalog_hash}


def default_path() -> Path:
    """``$GPU_ADVISOR_AUDIT_DB`` or ``audit.sqlite3`` in the user data directory."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("gpu-advisor")) / "audit.sqlite3"


def record_hash(fields: Mapping[str, Any]) -> str:
    """sha256 over the canonical JSON of a record's content and its link."""
    keys = ("id", "created_at", "engine_version", "rules_hash", "catalog_hash", "answers",
            "result", "prev_hash")
    canonical = json.dumps({k: fields[k] for k in keys}, sort_keys=True, ensure_ascii=False,
                           separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def policy_hash(texts: Mapping[str, str]) -> str:
    """The content hash rules and catalogs are stored under (same as the engine's)."""
    from engine.catalog.load import content_hash

    return content_hash(texts)


class AuditStore:
    """An open audit store. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        self.path = path
        self._conn = _connect(path, create=create)
        try:
            self._check_schema()
            _enable_wal(self._conn, path)
            self._migrate()
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
    def _check_schema(self) -> None:
        """Refuse a newer or foreign database before anything is written to it (read only,
        one snapshot, so a concurrent first migration is not mistaken for foreign tables)."""
        try:
            self._conn.execute("BEGIN")
        except sqlite3.DatabaseError as exc:
            raise _storage_error(self.path, exc) from None
        try:
            self._schema_version()
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

    def _migrate(self) -> None:
        if int(self._query_one("PRAGMA user_version")[0]) == SCHEMA_VERSION:
            return
        with self._write():
            # Re-read under the write lock: another process may have migrated meanwhile.
            version = self._schema_version()
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _statements(_MIGRATIONS[target]):
                    self._conn.execute(statement)
                self._conn.execute(f"PRAGMA user_version = {target}")

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
            raise _storage_error(self.path, exc) from None
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise _storage_error(self.path, exc) from None
            raise

    # -- writing ---------------------------------------------------------------------------
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
            **_index_columns(data),
        }
        with self._write():
            self._store_policy(fields["rules_hash"], "rules", rules_texts)
            self._store_policy(fields["catalog_hash"], "catalog", catalog_texts)
            last = self._conn.execute(
                "SELECT hash FROM decisions ORDER BY seq DESC LIMIT 1").fetchone()
            fields["prev_hash"] = last[0] if last else GENESIS
            fields["hash"] = record_hash(fields)
            cursor = self._conn.execute(
                "INSERT INTO decisions (id, created_at, engine_version, rules_hash, catalog_hash,"
                " answers, result, choices, rules_fired, prev_hash, hash) VALUES (:id,"
                " :created_at, :engine_version, :rules_hash, :catalog_hash, :answers, :result,"
                " :choices, :rules_fired, :prev_hash, :hash)", fields)
            seq = int(cursor.lastrowid or 0)
        return Record(seq=seq, **fields)

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
        rows = self._select("WHERE id LIKE ? ORDER BY seq LIMIT 2",
                            (decision_id.replace("%", "").replace("_", "") + "%",))
        if not rows:
            raise InputError(f"no decision '{decision_id}' in {self.path}", field="ID")
        if len(rows) > 1 and rows[0].id != decision_id:
            raise InputError(f"'{decision_id}' matches several decisions; give more of the id",
                             field="ID")
        return rows[0]

    def policy(self, digest: str) -> dict[str, str]:
        """The exact texts stored under a policy hash."""
        row = self._query_one("SELECT content FROM policies WHERE hash = ?", (digest,))
        if row is None:
            raise AuditError(f"policy {digest[:12]} is missing from {self.path}")
        return json.loads(row[0])  # type: ignore[no-any-return]

    def records(self, *, since: str | None = None, until: str | None = None,
                choice: tuple[str, str] | None = None, rule: str | None = None,
                limit: int | None = None) -> list[Record]:
        """Records in chain order, filtered."""
        where, params = [], []
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
        return self._select(clause, tuple(params))

    def iter_all(self, batch: int = 1000) -> Iterator[Record]:
        """Every record in chain order, fetched in batches."""
        last = 0
        while True:
            rows = self._select("WHERE seq > ? ORDER BY seq LIMIT ?", (last, batch))
            if not rows:
                return
            yield from rows
            last = rows[-1].seq

    def count(self) -> int:
        """How many records the store holds."""
        return int(self._query_one("SELECT count(*) FROM decisions")[0])

    def _select(self, clause: str, params: tuple[Any, ...]) -> list[Record]:
        sql = ("SELECT seq, id, created_at, engine_version, rules_hash, catalog_hash, answers,"
               f" result, choices, rules_fired, prev_hash, hash FROM decisions {clause}")
        try:
            return [Record(*row) for row in self._conn.execute(sql, params).fetchall()]
        except sqlite3.DatabaseError as exc:
            raise AuditError(f"{self.path}: cannot read the audit store ({exc})") from None


@dataclass(frozen=True)
class Verification:
    """The result of walking the chain."""

    count: int
    broken_id: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """The whole chain is intact."""
        return self.broken_id is None


def verify(store: AuditStore) -> Verification:
    """Walk the chain: each record's content matches its hash and links to the one before."""
    previous = GENESIS
    count = 0
    checked_policies: dict[str, bool] = {}
    for record in store.iter_all():
        fields = record.__dict__
        if record.prev_hash != previous:
            return Verification(count, record.id, "its link to the previous record is broken")
        if record_hash(fields) != record.hash:
            return Verification(count, record.id, "its content does not match its hash")
        try:
            derived = _index_columns(json.loads(record.result))
        except (ValueError, KeyError, TypeError, AttributeError):
            derived = {}
        if derived != {"choices": record.choices, "rules_fired": record.rules_fired}:
            return Verification(count, record.id,
                                "its choices/rules_fired columns do not match its result")
        for digest in (record.rules_hash, record.catalog_hash):
            if digest not in checked_policies:
                try:
                    checked_policies[digest] = policy_hash(store.policy(digest)) == digest
                except AuditError:
                    checked_policies[digest] = False
            if not checked_policies[digest]:
                return Verification(count, record.id,
                                    f"its stored policy {digest[:12]} is missing or altered")
        previous = record.hash
        count += 1
    return Verification(count)


def _index_columns(data: Mapping[str, Any]) -> dict[str, str]:
    """The columns ``audit list`` filters on, derived from the result (not hashed on their
    own, so :func:`verify` re-derives them)."""
    return {"choices": json.dumps({a: d["choice"] for a, d in data["decisions"].items()},
                                  sort_keys=True),
            "rules_fired": json.dumps(sorted({f["rule"] for f in data["fired"]}))}


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def _connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """Open (creating with mode 0600) without ever overwriting a foreign or corrupt file."""
    if path.is_dir():
        raise AuditError(f"{path}: is a directory, expected an audit store file")
    if not path.exists():
        if not create:
            raise AuditError(f"{path}: no audit store here")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            pass
        except OSError as exc:
            raise AuditError(f"{path}: cannot create the audit store ({exc.strerror})") from None
    _check_header(path)
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous = FULL")
    except sqlite3.DatabaseError as exc:
        raise _storage_error(path, exc) from None
    return conn


def _enable_wal(conn: sqlite3.Connection, path: Path) -> None:
    """Switch to WAL (it rewrites the header, so only once the file is known to be ours).

    SQLite may answer "database is locked" here without calling the busy handler when
    several processes open a new store at once, so retry until the busy timeout.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise _storage_error(path, exc) from None
            time.sleep(0.01)
        except sqlite3.DatabaseError as exc:
            raise _storage_error(path, exc) from None
    if mode and str(mode[0]).lower() != "wal" and os.access(path, os.W_OK):
        raise AuditError(f"{path}: cannot switch the audit store to WAL mode")


def _check_header(path: Path) -> None:
    """Refuse files that are not SQLite databases (an empty file is a new store)."""
    try:
        with path.open("rb") as handle:
            header = handle.read(16)
    except OSError as exc:
        raise AuditError(f"{path}: cannot read the audit store ({exc.strerror})") from None
    if header and header != b"SQLite format 3\x00":
        raise AuditError(f"{path}: not an SQLite database; refusing to overwrite it")


def _storage_error(path: Path, exc: sqlite3.Error) -> AuditError:
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return AuditError(f"{path}: the audit store is read-only; nothing was recorded")
    if "full" in text:
        return AuditError(f"{path}: disk full; nothing was recorded")
    if "disk I/O error" in text:  # e.g. EFBIG past a file-size limit, or EIO
        return AuditError(f"{path}: cannot write the audit store (disk I/O error: disk full or "
                          "file size limit?); nothing was recorded")
    if "not a database" in text or "malformed" in text:
        return AuditError(f"{path}: the audit store is corrupt ({text}); it was not modified")
    return AuditError(f"{path}: audit store error: {text}")
