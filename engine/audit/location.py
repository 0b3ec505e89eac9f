"""Where the audit store is: a SQLite file, or a PostgreSQL database named by URL.

A ``--audit-db`` (or ``GPU_ADVISOR_AUDIT_DB``) that looks like a URL is never taken for a
file path: ``postgresql://`` and ``postgres://`` name a server, any other scheme is refused.
A URL prints with its password masked, so no message, record or listing shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, urlsplit, urlunsplit

from engine.errors import InputError

SCHEMES = ("postgresql", "postgres")
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass(frozen=True)
class DatabaseUrl:
    """A PostgreSQL connection URL; ``str()`` masks its password."""

    url: str

    def __str__(self) -> str:
        return masked(self.url)


Location = Path | DatabaseUrl
"""An audit store: a SQLite file or a PostgreSQL database."""


def parse_location(text: str, field: str = "--audit-db") -> Location:
    """A path, or a database URL; a URL of a scheme not supported is an
    :class:`InputError`, never a file name."""
    found = _URL.match(text)
    if found is None:
        return Path(text)
    scheme = found.group(1).lower()
    if scheme not in SCHEMES:
        raise InputError(f"unsupported audit store URL scheme '{scheme}://' in {masked(text)}; "
                         "use a SQLite file path or postgresql://USER@HOST/DATABASE",
                         field=field)
    return DatabaseUrl(text)


def masked(url: str) -> str:
    """``url`` with any password (and any ``password=`` query value) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"(//[^:/@]*:)[^@/]*@", r"\1***@", url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{host}"
    query = re.sub(r"(?i)(^|&)(password=)[^&]*", r"\1\2***", parts.query)
    return urlunsplit(SplitResult(parts.scheme, netloc, parts.path, query, parts.fragment))
