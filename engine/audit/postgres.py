"""The audit store on PostgreSQL: the tables of schema 3, and a connection that speaks the
store's SQL.

The chain, the record format, hashing and compression are the SQLite store's own code
(:mod:`engine.audit.store`, :mod:`engine.audit.record`, :mod:`engine.audit.codec`); this
module holds what differs: the tables' DDL, how the schema version is kept (a one-row table,
not ``PRAGMA user_version``), parameters (``%s`` for ``?`` and ``%(name)s`` for ``:name``),
and how appends are serialised: each append is one transaction that first takes a
transaction-scoped advisory lock, so "read the head, write the record" is atomic across every
writer on every machine, and a writer killed mid-append leaves nothing (the server rolls its
transaction back and releases the lock).

The driver is psycopg 3, an optional extra (``pip install 'gpu-advisor[postgres]'``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from engine.audit.location import DatabaseUrl, Location
from engine.audit.schema import VERSION, decisions_table
from engine.audit.sqlite import AuditError, Conflict

LOCK_KEY = 0x67707561_64766973  # "gpuadvis": the advisory lock every append takes
META = "gpu_advisor_meta"
TABLES = ("policies", "dictionaries", "decisions", META)
CONNECT_TIMEOUT_S = 10

PG_TYPES = {"serial": "BIGSERIAL PRIMARY KEY", "integer": "BIGINT", "blob": "BYTEA"}

SCHEMA = f"""
CREATE TABLE policies (
    hash    TEXT PRIMARY KEY,
    kind    TEXT NOT NULL CHECK (kind IN ('rules', 'catalog')),
    content TEXT NOT NULL
);
CREATE TABLE dictionaries (
    id      BIGSERIAL PRIMARY KEY,
    scope   TEXT NOT NULL UNIQUE,
    content BYTEA NOT NULL
);
{decisions_table("decisions", PG_TYPES)};
CREATE INDEX decisions_created ON decisions (created_at);
CREATE TABLE {META} (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
)"""


def driver() -> Any:
    """The psycopg module, or an :class:`AuditError` saying how to install it."""
    try:
        import psycopg
    except ImportError:
        raise AuditError("a postgresql:// audit store needs the PostgreSQL driver: pip install "
                         "'gpu-advisor[postgres]' (psycopg 3)") from None
    return psycopg


class PgConnection:
    """A psycopg connection (autocommit: transactions are the store's explicit ``BEGIN``)
    that takes the store's ``?`` and ``:name`` parameters."""

    dialect = "postgresql"

    def __init__(self, url: DatabaseUrl, *, writing: bool = True) -> None:
        psycopg = driver()
        self.url = url
        self.errors: tuple[type[BaseException], ...] = (psycopg.Error,)
        try:
            self._conn = psycopg.connect(url.url, autocommit=True,
                                         connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as exc:
            outcome = "; nothing was recorded" if writing else ""
            raise AuditError(f"{url}: cannot reach the audit database ({reason(exc, url)})"
                             f"{outcome}") from None

    def execute(self, sql: str, params: Any = ()) -> Any:
        """Run one statement; returns its cursor."""
        cursor = self._conn.cursor()
        cursor.execute(translate(sql), params if params else None)
        return cursor

    def executemany(self, sql: str, rows: list[Any]) -> None:
        """Run one statement for each row of parameters."""
        self._conn.cursor().executemany(translate(sql), rows)

    def close(self) -> None:
        """Close the connection (an open transaction is rolled back by the server)."""
        self._conn.close()


_NAMED = re.compile(r"(?<![:\w]):([a-z_]+)\b")


def translate(sql: str) -> str:
    """The store's SQL with psycopg's parameters: ``?`` → ``%s``, ``:name`` → ``%(name)s``
    (a literal ``%`` doubled)."""
    sql = sql.replace("%", "%%").replace("?", "%s")
    return _NAMED.sub(r"%(\1)s", sql)


def reason(exc: BaseException, url: DatabaseUrl) -> str:
    """The first line of a driver error, without the URL's password should it appear."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    password = _password(url.url)
    return text.replace(password, "***") if password else text


def _password(url: str) -> str | None:
    from urllib.parse import unquote, urlsplit

    try:
        found = urlsplit(url).password
    except ValueError:
        return None
    return unquote(found) if found else None


def schema_version(conn: PgConnection) -> int:
    """The store's schema version: 0 where its tables are not made yet."""
    # The catalog read as a table (an MVCC scan), not through to_regclass: a name looked up
    # before the append lock was taken may be cached as missing after another writer made
    # the tables, and to_regclass would still say so.
    row = conn.execute("SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
                       " AND tablename = ?", (META,)).fetchone()
    if row is None:
        return 0
    found = conn.execute(f"SELECT value FROM {META} WHERE name = 'schema_version'").fetchone()
    return int(found[0]) if found else 0


def foreign_tables(conn: PgConnection) -> bool:
    """Whether the database's current schema holds tables that are not the store's."""
    rows = conn.execute("SELECT table_name FROM information_schema.tables"
                        " WHERE table_schema = current_schema()").fetchall()
    return any(str(r[0]) not in TABLES for r in rows)


def create(conn: PgConnection, version: int) -> None:
    """Make the tables of ``version`` (inside the caller's transaction, under its lock)."""
    for statement in (s.strip() for s in SCHEMA.split(";")):
        if statement:
            conn.execute(statement)
    conn.execute(f"INSERT INTO {META} (name, value) VALUES ('schema_version', ?)", (version,))


def lock(conn: PgConnection) -> None:
    """Take the store's append lock for the current transaction."""
    conn.execute("SELECT pg_advisory_xact_lock(?)", (LOCK_KEY,))


def storage_error(url: DatabaseUrl, exc: BaseException) -> AuditError:
    """One line for a server failure, saying that nothing was recorded."""
    sqlstate = getattr(exc, "sqlstate", None) or ""
    if sqlstate == "42501":
        return AuditError(f"{url}: this role may not write the audit store ({reason(exc, url)}); "
                          "nothing was recorded")
    if sqlstate.startswith("08") or type(exc).__name__ in ("OperationalError",
                                                             "InterfaceError"):
        return AuditError(f"{url}: the audit database went away ({reason(exc, url)}); "
                          "nothing was recorded")
    return AuditError(f"{url}: audit store error: {reason(exc, url)}")


class PostgresBackend:
    """A PostgreSQL database shared by many writers: each write is one transaction that
    first takes the store's advisory lock."""

    choice_sql = "(choices::jsonb ->> ?) = ?"
    rule_sql = ("EXISTS (SELECT 1 FROM jsonb_array_elements_text(rules_fired::jsonb) AS f(v)"
                " WHERE f.v = ?)")

    def __init__(self, url: DatabaseUrl, *, create: bool = True) -> None:
        self.location: Location = url
        self.url = url
        self.conn = PgConnection(url, writing=create)
        self.errors = self.conn.errors

    def version(self) -> tuple[int, bool]:
        """The version in the store's meta table (0 where there is none yet), and whether
        the connection's schema holds tables that are not the store's (the store's own
        never count, so tables being made elsewhere cannot be taken for them)."""
        try:
            version = schema_version(self.conn)
            return version, version == 0 and foreign_tables(self.conn)
        except self.errors as exc:
            raise self.error(exc) from None

    current_version = version

    def prepare(self) -> None:
        """Nothing: the server keeps its own log."""

    @contextlib.contextmanager
    def write(self) -> Iterator[None]:
        """``BEGIN`` and the advisory lock: "read the head, write the record" is atomic
        across every writer; the lock goes with the transaction, however it ends."""
        try:
            self.conn.execute("BEGIN")
            lock(self.conn)
        except self.errors as exc:
            with contextlib.suppress(*self.errors):
                self.conn.execute("ROLLBACK")
            raise self.error(exc) from None
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(*self.errors):
                self.conn.execute("ROLLBACK")
            if isinstance(exc, self.errors):
                raise self.error(exc) from None
            raise

    def create_tables(self, version: int) -> None:
        """Make the tables (a PostgreSQL store starts at the current schema)."""
        if version == 0:
            create(self.conn, VERSION)

    def error(self, exc: BaseException) -> AuditError:
        """The server's error in one line, password masked."""
        sqlstate = getattr(exc, "sqlstate", None) or ""
        if sqlstate in _RETRYABLE:
            return Conflict(f"{self.url}: write conflict ({reason(exc, self.url)})")
        return storage_error(self.url, exc)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()


_RETRYABLE = ("40001", "40P01")
"""Serialisation failure and deadlock: the transaction was rolled back and may be retried."""
