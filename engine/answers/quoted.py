"""Values from a team's file quoted in messages: short, one line, no control codes."""

from __future__ import annotations

import json
from typing import Any

from engine.files.printable import printable

SHOWN_CHARS = 60
"""Values quoted from the config are cut to this length in the report."""


def shown(value: Any) -> str:
    """A value from the config as the report quotes it: short, one line, no control codes."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           default=str)
    return printable(text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…")
