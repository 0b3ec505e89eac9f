"""The optional audit key: with it, each new audit record's hash is an HMAC-SHA256 under the
key, so nobody without the key can rewrite the chain and have ``audit verify`` pass.

The key is ``$GPU_ADVISOR_AUDIT_KEY`` (the key itself) or the content of
``$GPU_ADVISOR_AUDIT_KEY_FILE`` (or ``audit verify --key-file``), a file only its owner may
read or write (``chmod 600``); never stored in the audit store.
Surrounding whitespace is dropped, so ``openssl rand -hex 32 > key`` works as is.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import InputError

ENV_KEY = "GPU_ADVISOR_AUDIT_KEY"
ENV_KEY_FILE = "GPU_ADVISOR_AUDIT_KEY_FILE"
MIN_KEY_BYTES = 16
MAX_KEY_FILE_BYTES = 4096
_KEY_ID_LABEL = b"gpu-advisor audit key id"


@dataclass(frozen=True)
class AuditKey:
    """A secret for keyed record hashes, and where it came from (for messages)."""

    secret: bytes = field(repr=False)
    source: str

    @property
    def id(self) -> str:
        """A short public name of the key (stored in keyed records; reveals nothing of it)."""
        return hmac.new(self.secret, _KEY_ID_LABEL, hashlib.sha256).hexdigest()[:16]

    def mac(self, data: bytes) -> str:
        """HMAC-SHA256 of ``data`` under this key, as hex."""
        return hmac.new(self.secret, data, hashlib.sha256).hexdigest()


def load_key(key_file: Path | None = None,
             environ: Mapping[str, str] | None = None) -> AuditKey | None:
    """The key from ``key_file``, else from the environment, else None (no key)."""
    env = os.environ if environ is None else environ
    if key_file is not None:
        return _checked(_read_key_file(key_file), str(key_file))
    text, path = env.get(ENV_KEY), env.get(ENV_KEY_FILE)
    if text and path:
        raise InputError(f"both {ENV_KEY} and {ENV_KEY_FILE} are set; set only one",
                         field=ENV_KEY)
    if text:
        return _checked(text.encode(), ENV_KEY)
    if path:
        return _checked(_read_key_file(Path(path)), path)
    return None


def _checked(secret: bytes, source: str) -> AuditKey:
    secret = secret.strip()
    if len(secret) < MIN_KEY_BYTES:
        raise InputError(f"the audit key is {len(secret)} byte(s); at least {MIN_KEY_BYTES} are "
                         "needed (e.g. `openssl rand -hex 32`)", field=source)
    return AuditKey(secret, source)


def _read_key_file(path: Path) -> bytes:
    """The bytes of a small regular file (a FIFO or a device is refused, never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InputError(f"cannot read the audit key file ({exc.strerror})",
                         path=str(path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError("the audit key file is not a regular file", path=str(path))
        if info.st_size > MAX_KEY_FILE_BYTES:
            raise InputError(f"the audit key file is {info.st_size:,} bytes; a key is at most "
                             f"{MAX_KEY_FILE_BYTES:,}", path=str(path))
        if info.st_mode & 0o077:  # a secret only its owner reads
            raise InputError(f"the audit key file is readable or writable by others (mode "
                             f"{stat.S_IMODE(info.st_mode):04o}); run chmod 600 {path}",
                             path=str(path))
        data = os.read(fd, MAX_KEY_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_KEY_FILE_BYTES:  # it grew since fstat
        raise InputError(f"the audit key file is over {MAX_KEY_FILE_BYTES:,} bytes",
                         path=str(path))
    return data
