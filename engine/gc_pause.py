"""The cyclic garbage collector paused while a recommendation is made.

A recommendation allocates tens of thousands of short-lived objects (trials, facts,
configurations) and makes almost no reference cycles: reference counting frees them. The
cyclic collector, triggered every 700 allocations, would meanwhile walk the young objects
and, every so often, the catalog's memos: ~11 % of a warm recommendation's CPU
(``benchmarks/ab.py``, docs/performance.md). Paused for the call and resumed after it, it
collects what cycles a recommendation left at its next run.

Process-wide, as the collector is: nested and concurrent pauses count, and the collector is
resumed when the last one ends, only if it was running when the first began (a host that
disabled it keeps it disabled).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the ``with`` block (see the module)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()


__all__ = ["collector_paused"]
