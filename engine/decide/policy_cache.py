"""A cache of the loaded, validated and compiled policy (catalog, rulebook, durable_rules
rulesets), keyed by content, that can only speed things up.

Parsing and validating ~20 YAML files dominates a cold start; the cache stores the result
keyed by a hash of every file's bytes, the engine version, the engine's own modules (names,
sizes, modification times) and the versions of Python and of the libraries whose objects are
stored, so any edit or upgrade invalidates it.

An entry is a pickle, and unpickling runs code, so an entry is only unpickled after its
HMAC-SHA256 (a per-user secret kept outside the cache directory, in ``key_file()``) is
verified; the MAC covers the key the entry was written for and the policy hashes it claims,
which must be the hashes of the texts it holds. Entries are opened without following
symbolic links and checked on the open file (a regular file of the current user, not
writable by others); the directory must be the user's and not group- or world-writable unless
``GPU_ADVISOR_CACHE_SHARED=1``. Anything refused is rebuilt, with one ``note:`` line (logger
``engine.decide.policy_cache``, WARNING) the first time in a process.
``GPU_ADVISOR_NO_CACHE=1`` disables the cache; ``GPU_ADVISOR_CACHE_DIR`` and
``GPU_ADVISOR_CACHE_KEY_FILE`` move it and its key.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import logging
import os
import pickle
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from engine.catalog.load import Catalog, content_hash
from engine.files.private import (
    SUPPORTED,
    Refused,
    check_file,
    load_secret,
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
SECRET_BYTES = 32

_MAGIC = b"gpu-advisor-policy-cache-2\n"
_MAC_BYTES = 32
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


def key_file() -> Path:
    """The per-user secret that signs cache entries (outside the cache directory)."""
    env = os.environ.get("GPU_ADVISOR_CACHE_KEY_FILE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("gpu-advisor")) / "policy-cache.key"


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
    """Python and the libraries whose objects are pickled or that shape what is compiled.

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


def cached_policy(key: str, build: Callable[[], Policy]) -> Policy:
    """The policy stored under ``key`` if a trusted entry holds it, else ``build()`` (then
    stored)."""
    if os.environ.get("GPU_ADVISOR_NO_CACHE") or not SUPPORTED:
        return build()
    if os.environ.get("GPU_ADVISOR_CACHE_FORMAT") == "json":  # PROTOTYPE (issue 28 A/B)
        return _json_policy(key, build)
    store = _open_store()
    if store is None:
        return build()
    with store:
        return store.fetch(key, build)


def _json_policy(key: str, build: Callable[[], Policy]) -> Policy:
    from engine.decide import policy_json

    path = cache_dir()
    dir_fd = open_dir(path)
    try:
        check = _directory_problem(os.fstat(dir_fd))
        assert check is None
        name = f"policy-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"
        try:
            fd = open_no_follow(name, dir_fd)
        except FileNotFoundError:
            value = build()
            write_atomically(dir_fd, name, policy_json.encode(key, value))
            return value
        try:
            check_file(os.fstat(fd), private=False)
            return policy_json.decode(read_all(fd), key)
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)


class _Store:
    """An open, checked cache directory and the secret that signs its entries."""

    def __init__(self, path: Path, dir_fd: int, secret: bytes) -> None:
        self.path, self.dir_fd, self.secret = path, dir_fd, secret

    def __enter__(self) -> _Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        os.close(self.dir_fd)

    def fetch(self, key: str, build: Callable[[], Policy]) -> Policy:
        """The entry's policy, or a rebuilt one (stored, best effort)."""
        name = entry_name(key, self.secret)
        try:
            value = self._read(name, key)
        except Refused as exc:
            _notice(f"ignored an untrusted policy cache entry {self.path / name} ({exc}); "
                    "rebuilt it")
            value = None
        if value is None:
            value = build()
            with contextlib.suppress(OSError, pickle.PicklingError):
                write_atomically(self.dir_fd, name, encode(key, value, self.secret))
                self._prune()
        return value

    def _read(self, name: str, key: str) -> Policy | None:
        """The entry's policy; None when there is none; Refused when it fails a check."""
        try:
            fd = open_no_follow(name, self.dir_fd)
        except FileNotFoundError:
            return None
        try:
            check_file(os.fstat(fd), private=False)
            value = decode(read_all(fd), key, self.secret)
            with contextlib.suppress(OSError):
                os.utime(fd)  # recently used: the last to be pruned
            return value
        except OSError as exc:
            raise Refused(f"unreadable: {exc.strerror}") from None
        finally:
            os.close(fd)

    def _prune(self) -> None:
        """Delete all but the ``KEEP`` most recently used of our entries (best effort);
        another user's entries in a shared directory are left alone."""
        ours: list[tuple[int, str]] = []
        with os.scandir(self.dir_fd) as found:
            for entry in found:
                if entry.name.startswith("policy-") and entry.name.endswith(".pickle"):
                    with contextlib.suppress(OSError):
                        info = entry.stat(follow_symlinks=False)
                        if info.st_uid == os.getuid():
                            ours.append((info.st_mtime_ns, entry.name))
        for _, stale in sorted(ours, reverse=True)[KEEP:]:
            with contextlib.suppress(OSError):
                os.unlink(stale, dir_fd=self.dir_fd)


def entry_name(key: str, secret: bytes) -> str:
    """The file name of ``key``'s entry: keyed, so each user's entries have their own names."""
    return f"policy-{hmac.new(secret, key.encode(), 'sha256').hexdigest()[:32]}.pickle"


def _open_store() -> _Store | None:
    """The cache directory, checked, with the secret; None (the run goes on without the
    cache) when it cannot be used."""
    path = cache_dir()
    try:
        dir_fd = open_dir(path)
    except OSError:
        return None  # cannot be created or opened (read-only, not a directory)
    try:
        problem = _directory_problem(os.fstat(dir_fd))
        if problem:
            _notice(f"not using the policy cache directory {path} ({problem}; "
                    f"set {SHARED_ENV}=1 to use it anyway)")
        else:
            return _Store(path, dir_fd, load_secret(key_file(), SECRET_BYTES, outside=dir_fd))
    except Refused as exc:
        _notice(f"not using the policy cache: its key file {key_file()} is {exc}")
    except OSError:
        pass  # the key cannot be created or read: no cache
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


# --------------------------------------------------------------------------------------------
# Entries: magic, MAC, a header line of claims, the pickle


def encode(key: str, value: Policy, secret: bytes) -> bytes:
    """An entry: what it was written for (the key and the policy hashes) and the pickled
    policy, signed together."""
    catalog, rulebook, _ = value
    claims = {"key": key, "catalog": catalog.hash, "rulebook": rulebook.hash}
    signed = (json.dumps(claims, sort_keys=True).encode() + b"\n"
              + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    return _MAGIC + _mac(secret, signed) + signed


def decode(data: bytes, key: str, secret: bytes) -> Policy:
    """The policy an entry holds, unpickled only once its MAC, its key and then its content
    check out; Refused otherwise."""
    if not data.startswith(_MAGIC):
        raise Refused("not a policy cache entry")
    mac, signed = data[len(_MAGIC):len(_MAGIC) + _MAC_BYTES], data[len(_MAGIC) + _MAC_BYTES:]
    if not hmac.compare_digest(mac, _mac(secret, signed)):
        raise Refused("bad signature")
    header, _, payload = signed.partition(b"\n")
    claims = _claims(header)
    if claims.get("key") != key:
        raise Refused("written for another policy")
    try:
        value = pickle.loads(payload)  # signed with this user's secret: written by us
    except Exception:
        raise Refused("corrupt") from None
    return _checked(value, claims)


def _mac(secret: bytes, signed: bytes) -> bytes:
    return hmac.new(secret, _MAGIC + signed, hashlib.sha256).digest()


def _claims(header: bytes) -> dict[str, Any]:
    try:
        claims = json.loads(header)
    except ValueError:
        raise Refused("corrupt") from None
    if not isinstance(claims, dict):
        raise Refused("corrupt")
    return claims


def _checked(value: Any, claims: dict[str, Any]) -> Policy:
    """The value, if it is a policy whose hashes are those claimed and those of its texts."""
    if not (isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], Catalog)
            and isinstance(value[1], Rulebook) and isinstance(value[2], Compiled)):
        raise Refused("not a policy")
    for part, held in (("catalog", value[0]), ("rulebook", value[1])):
        if not claims.get(part) == held.hash == content_hash(held.texts):
            raise Refused(f"its {part} does not match its hash")
    return value


def _notice(message: str) -> None:
    """``note: message`` as a warning, only the first time in this process."""
    global _noticed
    with _notice_lock:
        if _noticed:
            return
        _noticed = True
    _log.warning("note: %s", message)
