"""A cache of the loaded and validated policy (catalog and rulebook), keyed by content, that
can only speed things up.

Parsing, validating and cross-checking ~20 YAML files dominates a cold start (~190 ms); the
cache stores the result as JSON, keyed by a hash of every file's bytes, the engine version,
the engine's own modules (names, sizes, modification times) and the versions of Python and of
the libraries that shape what is stored, so any edit or upgrade invalidates it. Reading an
entry is pydantic validating JSON into the same objects (the durable_rules rulesets are
compiled again, ~5 ms): it runs no code from the entry, so entries need no signature. An entry
is written only when it reads back equal to the policy it holds.

Entries are opened without following symbolic links and checked on the open file (a regular
file of the current user, not writable by others); the directory must be the user's and not
group- or world-writable unless ``GPU_ADVISOR_CACHE_SHARED=1``. Anything refused or unreadable
is rebuilt, with one ``note:`` line (logger ``engine.decide.policy_cache``, WARNING) the first
time in a process. ``GPU_ADVISOR_NO_CACHE=1`` disables the cache; ``GPU_ADVISOR_CACHE_DIR``
moves it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import os
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.catalog.load import Catalog
from engine.files.private import (
    SUPPORTED,
    Refused,
    check_file,
    open_dir,
    open_no_follow,
    read_all,
    write_atomically,
)
from engine.rules.compile import Compiled
from engine.rules.load import Rulebook
from engine.version import __version__

Policy = tuple[Catalog, Rulebook, Compiled]

KEEP = 16
"""Entries kept: one per policy in use, and what-if and replay runs write one per variant."""
SHARED_ENV = "GPU_ADVISOR_CACHE_SHARED"
"""Set to 1 to use a cache directory that is not the user's own or that others can write to."""
ENTRIES = "policy-*.json"
"""The names of entries (``policy-UID-HASH.json``)."""

_log = logging.getLogger(__name__)
_noticed = False
_notice_lock = threading.Lock()


def cache_dir() -> Path:
    """Where cache entries live."""
    env = os.environ.get("GPU_ADVISOR_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("gpu-advisor"))


# --------------------------------------------------------------------------------------------
# The key


def content_key(*paths: Path | None) -> str:
    """sha256 over the engine version, modules and dependencies and the bytes of every file
    under the given paths."""
    digest = hashlib.sha256(__version__.encode())
    digest.update(_code_fingerprint())
    digest.update(_dependency_fingerprint())
    for path in paths:
        digest.update(b"\x01" + str(path).encode())
        if path is None:
            continue
        if not path.is_dir():  # a file named directly (a link to it is followed)
            if path.is_file():
                digest.update(path.name.encode() + b"\x00" + _fingerprint(path) + b"\x00")
            continue
        for entry in sorted(path.iterdir()):
            # links and special files inside a folder are refused by the loaders: they count
            # by kind, so adding one misses the cache and the loader says no
            kind = stat.S_IFMT(entry.lstat().st_mode)
            mark = _fingerprint(entry) if kind == stat.S_IFREG else f"kind:{kind}".encode()
            digest.update(entry.name.encode() + b"\x00" + mark + b"\x00")
    return digest.hexdigest()


@functools.cache
def _code_fingerprint() -> bytes:
    """Path, size and modification time of every module of this package (~0.4 ms)."""
    found: list[str] = []
    folders: list[str | Path] = [Path(__file__).resolve().parent.parent]  # engine/
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    found.append(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}")
                elif entry.name != "__pycache__" and entry.is_dir():
                    folders.append(entry.path)
    return "\n".join(sorted(found)).encode()


@functools.cache
def _dependency_fingerprint() -> bytes:
    """Python and the libraries that shape what is stored, validated or compiled.

    Version attributes where they exist (0.1 ms; importlib.metadata costs 20-40 ms);
    durable_rules has none, so its Python module and C core stand for it by path, size and
    modification time (any reinstall changes them).
    """
    import durable.engine
    import durable_rules_engine
    import pydantic
    import pydantic_core
    import yaml

    stamps = [_stamp(module.__file__) for module in (durable.engine, durable_rules_engine)]
    return "\0".join([sys.implementation.name, sys.version, pydantic.VERSION,
                      pydantic_core.__version__, yaml.__version__, *stamps]).encode()


def _stamp(path: str) -> str:
    info = Path(path).stat()
    return f"{path}:{info.st_size}:{info.st_mtime_ns}"


def _fingerprint(path: Path) -> bytes:
    """A file's bytes, or only its size and mtime when it is over the loader's size limit.

    The loader refuses such a file anyway (nothing gets cached), so there is no point in
    reading a 50 MB or 5 GB file into memory just to hash it.
    """
    from engine.files.yamlio import MAX_FILE_BYTES

    try:
        info = path.stat()
        if info.st_size > MAX_FILE_BYTES:
            return f"oversized:{info.st_size}:{info.st_mtime_ns}".encode()
        with path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:  # unreadable: the loader reports it as one clear line
        return f"unreadable:{exc.errno}".encode()


# --------------------------------------------------------------------------------------------
# The cache


def cached_policy(key: str, build: Callable[[], Policy],
                  compile_book: Callable[[Rulebook], Compiled]) -> Policy:
    """The policy stored under ``key`` if a usable entry holds it (its rulebook compiled
    with ``compile_book``), else ``build()`` (then stored)."""
    if os.environ.get("GPU_ADVISOR_NO_CACHE") or not SUPPORTED:
        return build()
    path = cache_dir()
    dir_fd = _open_checked(path)
    if dir_fd is None:
        return build()
    try:
        name = entry_name(key)
        try:
            found = _read(dir_fd, name, key)
        except Refused as exc:
            _notice(f"ignored an untrusted policy cache entry {path / name} ({exc}); "
                    "rebuilt it")
            found = None
        if found is not None:
            return found.policy(compile_book)
        value = build()
        _store(dir_fd, name, key, value, compile_book)
        return value
    finally:
        os.close(dir_fd)


@dataclasses.dataclass(frozen=True)
class Entry:
    """What an entry holds: the policy as validated data, and what it was written for. The
    rulesets are compiled again when it is read: their definitions are data, the verdict
    signatures (``Signer``) are not."""

    key: str
    catalog: Catalog
    rulebook: Rulebook
    built: bool
    """The rulesets passed the trial build (``engine.rules.trial``): not tried again."""

    def policy(self, compile_book: Callable[[Rulebook], Compiled]) -> Policy:
        """The catalog, the rulebook and its rulesets."""
        compiled = compile_book(self.rulebook)
        if self.built and not compiled.built:
            compiled = dataclasses.replace(compiled, built=True)
        return self.catalog, self.rulebook, compiled


@functools.cache
def _entries() -> Any:
    """The pydantic TypeAdapter of :class:`Entry` (~17 ms to build: once, when needed)."""
    from pydantic import TypeAdapter

    return TypeAdapter(Entry)


def entry_name(key: str) -> str:
    """The file name of ``key``'s entry: the user's id in it, so users sharing a directory
    (``GPU_ADVISOR_CACHE_SHARED=1``) keep apart."""
    return f"policy-{os.getuid()}-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def encode(key: str, value: Policy) -> bytes:
    """An entry holding ``value``, written for ``key``."""
    catalog, rulebook, compiled = value
    return bytes(_entries().dump_json(Entry(key, catalog, rulebook, compiled.built),
                                      by_alias=True, exclude_unset=True))


def decode(data: bytes, key: str) -> Entry:
    """The entry ``data`` holds; Refused if it is not one, or not one for ``key``."""
    from pydantic import ValidationError

    try:
        entry: Entry = _entries().validate_json(data)
    except (ValidationError, ValueError, TypeError):
        raise Refused("corrupt") from None
    if entry.key != key:
        raise Refused("written for another policy")
    return entry


def _read(dir_fd: int, name: str, key: str) -> Entry | None:
    """The entry; None when there is none; Refused when it fails a check."""
    try:
        fd = open_no_follow(name, dir_fd)
    except FileNotFoundError:
        return None
    try:
        check_file(os.fstat(fd))
        entry = decode(read_all(fd), key)
        with contextlib.suppress(OSError):
            os.utime(fd)  # recently used: the last to be pruned
        return entry
    except OSError as exc:
        raise Refused(f"unreadable: {exc.strerror}") from None
    finally:
        os.close(fd)


def _store(dir_fd: int, name: str, key: str, value: Policy,
           compile_book: Callable[[Rulebook], Compiled]) -> None:
    """Write the entry if it reads back as ``value`` (a value JSON cannot hold, such as a
    date where the catalog allows anything, is not cached); then prune. Best effort."""
    try:
        data = encode(key, value)  # pydantic's serialisation errors are ValueErrors
        if decode(data, key).policy(compile_book) != value:
            return
    except (ValueError, Refused):
        return
    with contextlib.suppress(OSError):
        write_atomically(dir_fd, name, data)
        _prune(dir_fd)


def _prune(dir_fd: int) -> None:
    """Delete all but the ``KEEP`` most recently used of our entries, and our pickles of
    earlier versions (best effort); another user's files in a shared directory are left
    alone."""
    entries: list[tuple[int, str]] = []
    pickles: list[str] = []
    with os.scandir(dir_fd) as found:
        for item in found:
            if item.name.startswith("policy-") and item.name.endswith((".json", ".pickle")):
                with contextlib.suppress(OSError):
                    info = item.stat(follow_symlinks=False)
                    if info.st_uid != os.getuid():
                        continue
                    if item.name.endswith(".pickle"):
                        pickles.append(item.name)
                    else:
                        entries.append((info.st_mtime_ns, item.name))
    for stale in pickles + [name for _, name in sorted(entries, reverse=True)[KEEP:]]:
        with contextlib.suppress(OSError):
            os.unlink(stale, dir_fd=dir_fd)


def _open_checked(path: Path) -> int | None:
    """The cache directory, opened and checked; None (the run goes on without the cache)
    when it cannot be used."""
    try:
        dir_fd = open_dir(path)
    except OSError:
        return None  # cannot be created or opened (read-only, not a directory)
    try:
        problem = _directory_problem(os.fstat(dir_fd))
    except OSError:
        problem = ""  # cannot be looked at: no cache, quietly
    if problem is None:
        return dir_fd
    if problem:
        _notice(f"not using the policy cache directory {path} ({problem}; "
                f"set {SHARED_ENV}=1 to use it anyway)")
    os.close(dir_fd)
    return None


def _directory_problem(info: os.stat_result) -> str | None:
    """Why others could place or replace entries in this directory (None: they cannot)."""
    if os.environ.get(SHARED_ENV) == "1":
        return None
    if info.st_uid != os.getuid():
        return f"owned by uid {info.st_uid}"
    if info.st_mode & stat.S_IWOTH:
        return "world-writable"
    if info.st_mode & stat.S_IWGRP:
        return "group-writable"
    return None


def _notice(message: str) -> None:
    """``note: message`` as a warning, only the first time in this process."""
    global _noticed
    with _notice_lock:
        if _noticed:
            return
        _noticed = True
    _log.warning("note: %s", message)
