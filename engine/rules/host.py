"""The durable_rules Host as this project builds it, shared by the in-process evaluator
(:mod:`engine.rules.evaluate`) and the time-bounded trial build (:mod:`engine.rules.trial`):
no timer threads, batched actions, a catch-all rule, and its errors in words."""

from __future__ import annotations

import contextlib
import copy
import re
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from durable.engine import Host

from engine.rules.compile import CompiledRuleset

BATCH_CAP = 100_000
"""``cap``: one action call per rule with all its matches (not one per match): far fewer
Python round-trips through durable_rules' state machinery."""


class QuietHost(Host):  # type: ignore[misc]
    """A Host without the background dispatcher (no timer threads, actions run inline)."""

    def _run(self) -> None:
        return None



_HELD = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """SIGINT and SIGTERM held while durable_rules runs, then delivered again.

    durable_rules catches every exception an action raises, KeyboardInterrupt included, and
    keeps it as text in the session's state: Ctrl-C arriving in an action would become a
    failed evaluation (and a batch, which ignores further signals once interrupted, would
    run to its end). A signal that comes meanwhile is recorded and raised again as soon as
    the block ends, to the handler that was there before. Python runs signal handlers in the
    main thread only, so other threads need nothing; an ignored signal stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)

    previous: dict[signal.Signals, Any] = {}
    for signum in _HELD:
        handler = signal.getsignal(signum)
        if handler is not None and handler is not signal.SIG_IGN:
            previous[signum] = signal.signal(signum, hold)
    try:
        yield
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)
        for number in dict.fromkeys(caught):
            signal.raise_signal(number)


def ignore(c: Any) -> None:
    """An action that does nothing (the catch-all rule's)."""
    return None


def host_definitions(ruleset: CompiledRuleset, action: Callable[[str], Callable[[Any], None]]
                      ) -> dict[str, Any]:
    """The ruleset as a Host takes it: each definition with ``action(name)`` as its action,
    batched, and a catch-all rule (so no fact is "unhandled")."""
    defs = copy.deepcopy(ruleset.definitions)
    for name, rule in defs.items():
        rule["run"] = action(name)
        rule["cap"] = BATCH_CAP
    defs["_observe"] = {"all": [{"m": {"$ex": {"kind": 1}}}], "run": ignore, "cap": BATCH_CAP}
    return defs



_MEANING = {
    "101": "out of memory",
    "106": "too many rules or alternatives",
    "107": "too many absence tests or any-groups under one condition",
    "108": "too many rules ending on one condition",
    "113": "too many all/any groups in one rule",
    "202": "a value it cannot parse",
    "204": "a number it cannot parse",
    "302": "a fact with too many properties",
    "303": "more than 64 comparisons matched one fact",
}


def describe_error(exc: BaseException) -> str:
    """One line for a durable_rules error: its text, and what its code means."""
    text = " ".join(str(exc).split())
    code = re.search(r"error code: (\d+)", text)
    meaning = _MEANING.get(code.group(1)) if code else None
    return f"{text} ({meaning})" if meaning else text
