"""What differs between the audit store's two databases, behind one interface.

:class:`engine.audit.store.AuditStore` holds the chain, hashing, record format and
compression once; a backend holds only what each database does its own way: opening,
how the schema version is kept, how a write transaction is taken (and serialised across
writers), two JSON filters, and the wording of its errors. :class:`SqliteBackend` is a
file on one machine; :class:`engine.audit.postgres.PostgresBackend` is a server many
machines share.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from engine.audit import schema
from engine.audit.location import DatabaseUrl, Location
from engine.audit.sqlite import (
    AuditError,
    Conflict,
    connect,
    connect_reader,
    enable_wal,
    storage_error,
)

__all__ = ["Backend", "Conflict", "SqliteBackend", "open_backend"]


class Backend(Protocol):
    """One open audit database."""

    location: Location
    conn: Any
    """Takes the store's SQL (``?`` and ``:name`` parameters): ``.execute(sql, params)``."""
    errors: tuple[type[BaseException], ...]
    choice_sql: str
    """A WHERE term true when the ``choices`` JSON holds key ``?`` with value ``?``."""
    rule_sql: str
    """A WHERE term true when the ``rules_fired`` JSON array holds ``?``."""

    def version(self) -> tuple[int, bool]:
        """The store's schema version (0: no tables yet) and whether the database holds
        tables that are not the store's, seen in one read-only snapshot (so that a first
        creation of the tables elsewhere is not taken for foreign tables)."""

    def current_version(self) -> tuple[int, bool]:
        """The same, as it is now (inside :meth:`write`)."""

    def prepare(self) -> None:
        """What a writer does once the database is known to be a store (or empty)."""

    def write(self) -> contextlib.AbstractContextManager[None]:
        """One write transaction, serialised with every other writer's; all or nothing."""

    def create_tables(self, version: int) -> None:
        """Make the current schema's tables where ``version`` is 0 (inside :meth:`write`)."""

    def error(self, exc: BaseException) -> AuditError:
        """One line for a database failure."""

    def close(self) -> None:
        """Close the connection."""


def open_backend(location: Location, *, create: bool) -> Backend:
    """The backend for ``location``: a writer (``create``) or a reader."""
    if isinstance(location, DatabaseUrl):
        from engine.audit.postgres import PostgresBackend

        backend: Backend = PostgresBackend(location, create=create)
        return backend
    return SqliteBackend(location, create=create)


class SqliteBackend:
    """A SQLite file (WAL, mode 0600); writers serialised by ``BEGIN IMMEDIATE``."""

    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
    choice_sql = "json_extract(choices, '$.' || ?) = ?"
    rule_sql = "EXISTS (SELECT 1 FROM json_each(rules_fired) WHERE value = ?)"

    def __init__(self, path: Path, *, create: bool) -> None:
        self.location: Location = path
        self.path = path
        self.conn: Any = connect(path, create=True) if create else connect_reader(path)

    def version(self) -> tuple[int, bool]:
        """``PRAGMA user_version`` and the tables, read in one snapshot (tables being made
        elsewhere are then seen whole or not at all)."""
        try:
            self.conn.execute("BEGIN")
        except sqlite3.DatabaseError as exc:
            raise storage_error(self.path, exc) from None
        try:
            return self.current_version()
        finally:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("COMMIT")

    def current_version(self) -> tuple[int, bool]:
        """The version and the tables as they are now (inside a transaction): in an
        unversioned store, any table SQLite did not make itself is foreign."""
        version = int(self._one("PRAGMA user_version")[0])
        return version, version == 0 and self._one(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND name NOT LIKE 'sqlite_%'") is not None

    def prepare(self) -> None:
        """Switch the file to WAL."""
        enable_wal(self.conn, self.path)

    @contextlib.contextmanager
    def write(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE``: one writer at a time, waiting up to the busy timeout."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise storage_error(self.path, exc) from None
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise storage_error(self.path, exc) from None
            raise

    def create_tables(self, version: int) -> None:
        """Make the tables of a new store (a store starts at the current schema)."""
        if version == 0:
            schema.create(self.conn)

    def error(self, exc: BaseException) -> AuditError:
        """SQLite's error in one line, saying whether anything was recorded."""
        if isinstance(exc, sqlite3.Error):
            return storage_error(self.path, exc)
        return AuditError(f"{self.path}: audit store error: {exc}")

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def _one(self, sql: str) -> Any:
        try:
            return self.conn.execute(sql).fetchone()
        except sqlite3.DatabaseError as exc:
            raise AuditError(f"{self.path}: not a usable audit store ({exc})") from None
