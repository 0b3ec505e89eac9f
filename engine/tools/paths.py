"""The files gpu-advisor keeps between runs, where each is and whether it exists.

The locations come from the modules that use them (the audit store's and the policy cache's
own path functions), so this list cannot drift from what a run writes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.audit.location import DatabaseUrl
from engine.audit.store import ENV_VAR as AUDIT_ENV
from engine.audit.store import default_path as audit_default_path
from engine.decide.policy_cache import ENTRIES, cache_dir

ANSWERS_FILE = "gpu-advisor-answers.yaml"
"""The file ``gpu-advisor ask`` offers to save answers to, in the current folder."""


@dataclass(frozen=True)
class UserFile:
    """One file or folder gpu-advisor writes: what it is, where, and its state now."""

    name: str
    path: Path | DatabaseUrl
    state: str
    """``exists``, ``not created yet``, or why it cannot be looked at."""
    purpose: str
    moved_by: str
    """The flag or environment variable that puts it elsewhere."""

    @property
    def exists(self) -> bool:
        """Whether it is there now."""
        return self.state.startswith("exists")

    def as_json(self) -> dict[str, Any]:
        """The JSON form ``paths --format json`` prints."""
        return {"name": self.name, "path": str(self.path), "exists": self.exists,
                "state": self.state, "purpose": self.purpose, "moved_by": self.moved_by}


def user_files(audit_db: Path | DatabaseUrl | None = None,
               cwd: Path | None = None) -> list[UserFile]:
    """The audit store (``audit_db`` or the default), the policy cache folder and the
    answers file ``ask`` saves by default (in ``cwd``)."""
    audit = audit_db if audit_db is not None else audit_default_path()
    cache = cache_dir()
    answers = (cwd or Path.cwd()) / ANSWERS_FILE
    return [
        UserFile("audit store", audit, _store_state(audit),
                 "every recommendation is recorded here, unless --no-audit",
                 f"--audit-db or {AUDIT_ENV}"),
        UserFile("policy cache", cache, _cache_state(cache),
                 "the loaded rules and catalog, as JSON; safe to delete "
                 "(GPU_ADVISOR_NO_CACHE=1 turns it off)", "GPU_ADVISOR_CACHE_DIR"),
        UserFile("answers file", answers, _state(answers),
                 "where `gpu-advisor ask` offers to save the answers", "ask --answers FILE"),
    ]


def _store_state(location: Path | DatabaseUrl) -> str:
    """A file's state; a database on a server is not connected to only to list it."""
    if isinstance(location, DatabaseUrl):
        return "a PostgreSQL database (not connected to here; `gpu-advisor audit verify` does)"
    return _state(location)


def _state(path: Path) -> str:
    try:
        path.lstat()
    except FileNotFoundError:
        return "not created yet"
    except OSError as exc:  # a folder on the way is no folder, no permission, too long
        return f"cannot be checked ({exc.strerror or exc})"
    return "exists"


def _cache_state(path: Path) -> str:
    state = _state(path)
    if os.environ.get("GPU_ADVISOR_NO_CACHE"):
        state += ", turned off by GPU_ADVISOR_NO_CACHE"
    if state.startswith("exists") and path.is_dir():
        entries = sum(1 for _ in path.glob(ENTRIES))
        state = state.replace("exists", f"exists, {entries} entr{'y' if entries == 1 else 'ies'}",
                              1)
    return state
