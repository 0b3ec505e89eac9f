"""Bounded memos: exact results remembered by key, all forgotten at once when too many.

One rule for every cache of computed values in the engine: a :class:`Memo` holds at most
:data:`LIMIT` entries and, when a new one would pass that, forgets them all. Each memo belongs
to the object its values are derived from and goes with it:

- ``Catalog.derived``: figures that depend on the catalog and the key alone (the GPU counts
  that hold a job, memory peaks and their traces, a configuration's prices, and the
  catalog's ``MemoryModel``, whose own memo holds each job's memory components and split);
- ``Evaluator``: durable_rules' verdict per fact signature, one memo per ruleset of a
  compiled policy (``engine.rules.evaluate``).

A memo stays only where an alternating A/B (``benchmarks/ab.py``) shows that it pays; so
does this eviction rule (forgetting the least recently used instead measured no faster).
Every entry must be exact (a pure function of its key), so forgetting only costs the time to
redo it. A memo pickles empty. Not a memo: ``load_engine``'s registry keeps each policy
loaded in a process for good, because durable_rules cannot free a ruleset (it has no
``delete_ruleset``), so forgetting an engine would leak its rulesets and build them again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
MISSING: Any = object()
"""What :attr:`Memo.lookup` gives for a key it does not hold (None is a result a memo keeps)."""

LIMIT = 20_000
"""Entries per memo (a few hundred bytes to a few KB each)."""


class Memo(Generic[K, V]):
    """At most ``limit`` (default :data:`LIMIT`) remembered results; when full, every one is
    forgotten.

    A hit is one dict lookup with no bookkeeping. Safe to share between threads: an
    insertion (after a miss, which costs far more) takes a lock, so the bound is exact; a
    race at worst redoes a result.
    """

    __slots__ = ("_entries", "_lock", "get", "limit", "lookup")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = LIMIT if limit is None else limit
        self._entries: dict[K, V] = {}
        self._lock = threading.Lock()
        self.get: Callable[[K], V | None] = self._entries.get
        """The remembered result for a key, or None (bound ``dict.get``: a hit is one call)."""
        self.lookup: Callable[[K, Any], Any] = self._entries.get
        """``lookup(key, MISSING)``: the remembered result, or :data:`MISSING` (the same bound
        ``dict.get``), for callers on the hottest paths that inline :meth:`remember`."""

    def put(self, key: K, value: V) -> V:
        """Remember ``value`` under ``key`` (forgetting everything first when full)."""
        entries = self._entries
        with self._lock:
            if len(entries) >= self.limit and key not in entries:
                entries.clear()
            entries[key] = value
        return value

    def remember(self, key: K, compute: Callable[..., V], *args: Any) -> V:
        """The result remembered under ``key`` (None included), or ``compute(*args)``,
        remembered."""
        found: V = self._entries.get(key, MISSING)
        if found is MISSING:
            return self.put(key, compute(*args))
        return found

    def __len__(self) -> int:
        return len(self._entries)

    def __reduce__(self) -> tuple[type[Memo[K, V]], tuple[int]]:
        """Pickled empty: what was derived in one process is not carried to another."""
        return type(self), (self.limit,)


__all__ = ["LIMIT", "MISSING", "Memo"]
