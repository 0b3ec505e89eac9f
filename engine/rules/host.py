"""The durable_rules Host as this project builds it, shared by the in-process evaluator
(:mod:`engine.rules.evaluate`) and the time-bounded trial build (:mod:`engine.rules.trial`):
no timer threads, batched actions, a catch-all rule, and its errors in words."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
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
