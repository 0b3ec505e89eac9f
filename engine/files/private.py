"""Files only the current user could have written: opened relative to a checked directory,
without following symbolic links, checked on the open descriptor (``fstat``), and created
privately and atomically (by :mod:`engine.files.safe_write`, the one writer). The policy
cache keeps its entries this way.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from engine.files.safe_write import replace_in

SUPPORTED = (all(hasattr(os, name) for name in ("O_NOFOLLOW", "O_DIRECTORY", "getuid"))
             and os.open in os.supports_dir_fd)
"""Whether these checks can be made here (not on Windows)."""

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))  # O_NONBLOCK: a FIFO cannot block the open


class Refused(Exception):
    """A file failed a check; the message says which."""


def open_dir(path: Path) -> int:
    """An open descriptor of the directory (created 0700 when missing). Files are then opened
    relative to it, so the directory checked is the directory used."""
    try:
        return os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        _created.add(path)
        return os.open(path, _DIR_FLAGS)


_created: set[Path] = set()


def created_here(path: Path) -> bool:
    """Whether :func:`open_dir` created this directory in this process (asked once: later
    calls say False), so that the command line can say where it is the first time."""
    if path in _created:
        _created.discard(path)
        return True
    return False


def open_no_follow(name: str, dir_fd: int) -> int:
    """Open for reading without following a symbolic link; FileNotFoundError if there is
    nothing, Refused if it is a link or cannot be opened."""
    try:
        return os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if _is_link(name, dir_fd):
            raise Refused("a symbolic link") from None
        raise Refused(f"unreadable: {exc.strerror}") from None


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def check_file(info: os.stat_result) -> None:
    """A regular file of the current user that others cannot write."""
    if not stat.S_ISREG(info.st_mode):
        raise Refused("not a regular file")
    if info.st_uid != os.getuid():
        raise Refused(f"owned by uid {info.st_uid}")
    if info.st_mode & 0o022:
        raise Refused("writable by others")


def read_all(fd: int) -> bytes:
    """Everything from an open file (the descriptor stays open)."""
    with os.fdopen(fd, "rb", closefd=False) as handle:
        return handle.read()


def write_atomically(dir_fd: int, name: str, data: bytes) -> None:
    """Write ``name`` (mode 0600): a new temporary file renamed over it."""
    replace_in(dir_fd, name, data, 0o600)
