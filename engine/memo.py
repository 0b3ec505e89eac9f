"""Bounded memos: exact results remembered by key; the least recently used forgotten first.

One rule for every cache of computed values in the engine: a :class:`Memo` holds at most
:data:`LIMIT` entries and, when a new one would pass that, forgets the entry used least
recently. Each memo belongs to the object its values are derived from and goes with it:

- ``Catalog.derived``: figures that depend on the catalog and the key alone (the GPU counts
  that hold a job, memory peaks and their traces, a configuration's prices);
- ``Evaluator``: durable_rules' verdict per fact signature, one memo per ruleset of a
  compiled policy (``engine.rules.evaluate``);
- ``Rulebook.memo``: the output objects and texts its rules give (reasons, notes, firing
  records, ``because`` texts filled with values), shared because most recur across requests.

A memo stays only where an alternating A/B (``benchmarks/ab.py``) shows that it pays. Every
entry must be exact (a pure function of its key), so forgetting only costs the time to redo
it. Not a memo: ``load_engine``'s registry keeps each policy loaded in a process for good,
because durable_rules cannot free a ruleset (it has no ``delete_ruleset``), so forgetting an
engine would leak its rulesets and build them again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
_MISSING: Any = object()

LIMIT = 20_000
"""Entries per memo (a few hundred bytes to a few KB each)."""


class Memo(Generic[K, V]):
    """At most ``limit`` (default :data:`LIMIT`) remembered results, least recently used out.

    Safe to share between threads: reads are single dict operations, and every change (a
    hit moved to the recent end, an insertion, an eviction) is made under a lock.
    """

    __slots__ = ("_entries", "_lock", "limit")

    def __init__(self, limit: int | None = None) -> None:
        self.limit = LIMIT if limit is None else limit
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The remembered result for a key (now the most recently used), or None."""
        found: V | None = self._entries.get(key)
        if found is not None:
            self._touch(key)
        return found

    def put(self, key: K, value: V) -> V:
        """Remember ``value`` under ``key``, forgetting the least recently used if full."""
        entries = self._entries
        with self._lock:
            entries[key] = value
            entries.move_to_end(key)
            while len(entries) > self.limit:
                entries.popitem(last=False)
        return value

    def remember(self, key: K, compute: Callable[..., V], *args: Any) -> V:
        """The result remembered under ``key`` (None included), or ``compute(*args)``,
        remembered."""
        found: V = self._entries.get(key, _MISSING)
        if found is _MISSING:
            return self.put(key, compute(*args))
        self._touch(key)
        return found

    def _touch(self, key: K) -> None:
        with self._lock:
            if key in self._entries:  # another thread may have evicted it meanwhile
                self._entries.move_to_end(key)

    def __len__(self) -> int:
        return len(self._entries)


__all__ = ["LIMIT", "Memo"]
