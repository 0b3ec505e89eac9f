"""Ids for the facts of one durable_rules session that the C core can never take as repeats.

durable_rules 2.0.28 drops a fact as "already observed" (``assert_facts`` result 2) when the
32-bit FNV-1a hash of its id equals that of a fact already in the session: the message index
compares the hashes only, not the ids (``storeMessage`` in ``state.c``). A fact without an
``id`` gets one made from a 64-bit hash of its properties, so two different facts of one
session collide with a chance of about n²/2³³ — for a session of 2,000 facts, about one in
2,000 sessions (upstream jruizgit/rules#376). Every fact the engine asserts therefore carries
an id from :func:`fact_ids`, whose 32-bit hashes are all different (plain counting would
do up to 797,185 facts: "797186" has the hash of "40189"). A refused session is worse than an
error: the C core may abort the process when it later frees that ruleset.
"""

from __future__ import annotations

import threading

_ids: list[str] = []
_hashes: set[int] = set()
_lock = threading.Lock()


def fnv1a_32(text: str) -> int:
    """The hash durable_rules indexes a fact's id by (``fnv1Hash32``; ASCII ids)."""
    value = 0x811C9DC5
    for byte in text.encode("ascii"):
        value = ((value ^ byte) * 16777619) & 0xFFFFFFFF
    return value


def fact_ids(count: int) -> list[str]:
    """``count`` ids with pairwise different 32-bit hashes, the same ones on every call."""
    if len(_ids) < count:
        with _lock:
            candidate = int(_ids[-1]) + 1 if _ids else 0
            while len(_ids) < count:
                text = str(candidate)
                value = fnv1a_32(text)
                if value not in _hashes:
                    _hashes.add(value)
                    _ids.append(text)
                candidate += 1
    return _ids[:count]
