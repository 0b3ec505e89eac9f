"""A cache of the loaded, validated and compiled policy (catalog, rulebook, durable_rules
rulesets), keyed by content.

Parsing and validating ~20 YAML files dominates a cold start; the cache stores the result
keyed by a hash of every file's bytes, the engine version and the engine's own modules
(names, sizes, modification times: an edited engine never reads what other code pickled),
so any edit invalidates it. It lives in the user cache directory (mode 0700/0600) and keeps
the ``KEEP`` most recently used entries; a corrupt, foreign or unreadable cache entry is
ignored and rebuilt, never trusted. ``GPU_ADVISOR_NO_CACHE=1`` disables it;
``GPU_ADVISOR_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine import __version__

_MAGIC = b"gpu-advisor-policy-cache-1\n"
KEEP = 16
"""Entries kept: one per policy in use, and what-if and replay runs write one per variant."""


def cache_dir() -> Path:
    """Where cache entries live."""
    env = os.environ.get("GPU_ADVISOR_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("gpu-advisor"))


def content_key(*paths: Path | None) -> str:
    """sha256 over the engine version and modules and the bytes of every file under the
    given paths."""
    digest = hashlib.sha256(__version__.encode())
    digest.update(_code_fingerprint())
    for path in paths:
        digest.update(b"\x01" + str(path).encode())
        if path is None:
            continue
        entries = sorted(path.iterdir()) if path.is_dir() else [path]
        for entry in entries:
            if entry.is_file():
                digest.update(entry.name.encode() + b"\x00" + _fingerprint(entry) + b"\x00")
    return digest.hexdigest()


@functools.cache
def _code_fingerprint() -> bytes:
    """Path, size and modification time of every module of this package (~0.4 ms)."""
    found: list[str] = []
    folders: list[str | Path] = [Path(__file__).resolve().parent]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    found.append(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}")
                elif entry.name != "__pycache__" and entry.is_dir():
                    folders.append(entry.path)
    return "\n".join(sorted(found)).encode()


def _fingerprint(path: Path) -> bytes:
    """A file's bytes, or only its size and mtime when it is over the loader's size limit.

    The loader refuses such a file anyway (nothing gets cached), so there is no point in
    reading a 50 MB or 5 GB file into memory just to hash it.
    """
    from engine.yamlio import MAX_FILE_BYTES

    try:
        info = path.stat()
        if info.st_size > MAX_FILE_BYTES:
            return f"oversized:{info.st_size}:{info.st_mtime_ns}".encode()
        with path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:  # unreadable: the loader reports it as one clear line
        return f"unreadable:{exc.errno}".encode()


def cached(key: str, build: Callable[[], Any], check: Callable[[Any], bool]) -> Any:
    """The cached value for ``key`` if present and sane, else ``build()`` (then stored)."""
    if os.environ.get("GPU_ADVISOR_NO_CACHE"):
        return build()
    path = cache_dir() / f"policy-{key[:32]}.pickle"
    value = _read(path)
    if value is not None and check(value):
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: the last to be pruned
        return value
    value = build()
    with contextlib.suppress(OSError, pickle.PicklingError):
        _write(path, value)
        _prune(path.parent)
    return value


def _read(path: Path) -> Any:
    try:
        stat = path.stat()
        if stat.st_uid != os.getuid() or stat.st_mode & 0o022:
            return None  # not ours, or writable by others: never unpickle it
        data = path.read_bytes()
        if not data.startswith(_MAGIC):
            return None
        return pickle.loads(data[len(_MAGIC):])
    except Exception:
        return None


def _prune(folder: Path) -> None:
    """Delete all but the ``KEEP`` most recently used of our entries (best effort); another
    user's entries in a shared directory are left alone."""
    entries = []
    for entry in folder.glob("policy-*.pickle"):
        with contextlib.suppress(OSError):
            info = entry.stat()
            if info.st_uid == os.getuid():
                entries.append((info.st_mtime_ns, entry.name, entry))
    for _, _, stale in sorted(entries, reverse=True)[KEEP:]:
        with contextlib.suppress(OSError):
            stale.unlink()


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".policy-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(_MAGIC + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        Path(tmp).chmod(0o600)
        Path(tmp).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise
