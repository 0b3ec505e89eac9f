"""Bounded memos: exact results remembered by key, all forgotten at once when too many."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
_MISSING: Any = object()


class Memo(Generic[K, V]):
    """At most ``limit`` remembered results; when full, every one is forgotten.

    Every entry must be exact (a pure function of its key), so forgetting only costs the time
    to redo it, and a hit needs no bookkeeping. Safe to share between threads: each step is
    one dict operation, and a race at worst forgets once too often or redoes a result.
    """

    __slots__ = ("_entries", "get", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: dict[K, V] = {}
        self.get: Callable[[K], V | None] = self._entries.get
        """The remembered result for a key, or None (bound ``dict.get``: a hit is one call)."""

    def put(self, key: K, value: V) -> V:
        """Remember ``value`` under ``key`` (forgetting everything first when full)."""
        entries = self._entries
        if len(entries) >= self.limit:
            entries.clear()
        entries[key] = value
        return value

    def remember(self, key: K, compute: Callable[..., V], *args: Any) -> V:
        """The result remembered under ``key`` (None included), or ``compute(*args)``,
        remembered."""
        found: V = self._entries.get(key, _MISSING)
        if found is _MISSING:
            return self.put(key, compute(*args))
        return found

    def __len__(self) -> int:
        return len(self._entries)


__all__ = ["Memo"]
