"""Opening the audit store's SQLite file: created private (0600), never over a foreign or
corrupt file, and readable on a read-only mount (or a read-only file and folder) too."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path
from urllib.parse import quote

from engine.errors import EngineError
from engine.files.safe_write import kind_of

BUSY_TIMEOUT_MS = 60_000
MEMORY = Path(":memory:")


class AuditError(EngineError):
    """The audit store cannot be used (corrupt, foreign, newer schema, read-only, full)."""


class Conflict(AuditError):
    """A write lost a race the database detected (serialisation failure, deadlock): the
    transaction was rolled back whole and may be tried again."""


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """A connection for writing (creating the file with mode 0600 when ``create``)."""
    _check_path(path, create=create)
    try:
        return _configured(sqlite3.connect(str(path.absolute()),
                                           timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None))
    except sqlite3.DatabaseError as exc:
        raise storage_error(path, exc) from None


def connect_reader(path: Path) -> sqlite3.Connection:
    """A connection that only reads, even where SQLite cannot create the WAL index (``-shm``).

    Tried in turn: a normal connection (it tidies ``-wal``/``-shm`` away on close), a
    read-only one (it needs ``-shm`` to exist or be creatable), and an immutable one, which
    needs no ``-shm`` but ignores a ``-wal`` file: only used when there is none to ignore.
    """
    _check_path(path, create=False)
    location = "file:" + quote(str(path.absolute()))
    for uri in (None, f"{location}?mode=ro"):
        conn = _try_open(path, uri)
        if conn is not None:
            return conn
    if _wal_size(path):
        raise AuditError(f"{path}: cannot read the store's write-ahead log here (its folder is "
                         "read-only and the -shm index is missing); copy the store with its "
                         "-wal file to a writable folder and read the copy")
    conn = _try_open(path, f"{location}?mode=ro&immutable=1")
    if conn is None:
        raise AuditError(f"{path}: cannot open the audit store (unable to open database file)")
    return conn


def _try_open(path: Path, uri: str | None) -> sqlite3.Connection | None:
    """An open connection that has read the schema, or None if SQLite cannot open it so."""
    try:
        conn = sqlite3.connect(uri or str(path.absolute()), uri=uri is not None,
                               timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise storage_error(path, exc) from None
    try:
        _configured(conn).execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        conn.close()
        if _cannot_open_here(exc):
            return None
        raise storage_error(path, exc) from None
    return conn


def _cannot_open_here(exc: sqlite3.Error) -> bool:
    """SQLite cannot open the file this way where it may not create files: SQLITE_CANTOPEN
    on a read-only mount, SQLITE_READONLY_DIRECTORY (and kin) in a read-only folder."""
    name = getattr(exc, "sqlite_errorname", "")
    return name == "SQLITE_CANTOPEN" or name.startswith("SQLITE_READONLY_")


def _configured(conn: sqlite3.Connection) -> sqlite3.Connection:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA synchronous = FULL")
    return conn


def _wal_size(path: Path) -> int:
    try:
        return Path(f"{path}-wal").stat().st_size
    except OSError:
        return 0


def store_exists(path: Path) -> bool:
    """Whether there is a file at ``path``; what cannot be an audit store file is refused
    before SQLite opens anything (a FIFO would block it for ever): not a regular file, or a
    ``-wal``/``-shm``/``-journal`` file beside it that is not one."""
    if path == MEMORY:  # SQLite's name for a database that vanishes on close
        raise AuditError("':memory:' is not an audit store (SQLite would keep the records in "
                         "memory and lose them); give a file path, or use --no-audit")
    try:
        found = path.stat()  # a link the user named is followed
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise AuditError(f"{path}: cannot open the audit store ({exc.strerror or exc})") from None
    if not stat.S_ISREG(found.st_mode):
        raise AuditError(f"{path}: is {kind_of(found.st_mode)}, expected an audit store file")
    for suffix in _SIDE_FILES:
        _check_side_file(path, suffix)
    return True


_SIDE_FILES = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database (WAL, its index, the rollback journal)."""


def _check_side_file(path: Path, suffix: str) -> None:
    try:
        found = Path(f"{path}{suffix}").stat()  # SQLite follows a link there
    except OSError:  # none (or a link to nothing: SQLite cannot use it either)
        return
    if not stat.S_ISREG(found.st_mode):
        raise AuditError(f"{path}: its {suffix[1:]} file {path}{suffix} is "
                         f"{kind_of(found.st_mode)}, not a regular file; refusing to open "
                         "the audit store")


def _check_path(path: Path, *, create: bool) -> None:
    """Refuse what is not (and must not become) an audit store file; create a new one 0600."""
    if not store_exists(path):
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


def _check_header(path: Path) -> None:
    """Refuse files that are not SQLite databases (an empty file is a new store); the file
    is opened without blocking and checked again on the open descriptor."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise AuditError(f"{path}: cannot read the audit store ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise AuditError(f"{path}: is {kind_of(mode)}, expected an audit store file")
        header = handle.read(16)
    if header and header != b"SQLite format 3\x00":
        raise AuditError(f"{path}: not an SQLite database; refusing to overwrite it")


def enable_wal(conn: sqlite3.Connection, path: Path) -> None:
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
                raise storage_error(path, exc) from None
            time.sleep(0.01)
        except sqlite3.DatabaseError as exc:
            raise storage_error(path, exc) from None
    if mode and str(mode[0]).lower() != "wal" and os.access(path, os.W_OK):
        raise AuditError(f"{path}: cannot switch the audit store to WAL mode")


def storage_error(path: Path, exc: sqlite3.Error) -> AuditError:
    """One line for an SQLite failure, saying whether anything was recorded."""
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return AuditError(f"{path}: the audit store is read-only; nothing was recorded")
    if "full" in text:
        return AuditError(f"{path}: disk full; nothing was recorded")
    if "disk I/O error" in text:  # e.g. EFBIG past a file-size limit, or EIO
        return AuditError(f"{path}: cannot write the audit store (disk I/O error: disk full or "
                          "file size limit?); nothing was recorded")
    if getattr(exc, "sqlite_errorname", "") == "SQLITE_CANTOPEN":
        return AuditError(f"{path}: cannot open the audit store to write (a read-only folder "
                          "or mount?); nothing was recorded")
    if "not a database" in text or "malformed" in text:
        return AuditError(f"{path}: the audit store is corrupt ({text}); it was not modified")
    return AuditError(f"{path}: audit store error: {text}")
