"""The hardware table of the text output read back as rows (what an operator sees)."""

from __future__ import annotations

import re

from engine.decide.engine import Decision
from engine.output.hardware_rows import (
    cells,
    data_stays_in_region,
    table_rows,
    usd_short,
    with_days,
)
from engine.output.summary import usd

_COUNT = re.compile(r"^[\d,]+×")
"""How a configuration cell begins (``16× H100 SXM``); a wrapped one continues otherwise."""


def printed_rows(text: str) -> list[str]:
    """Each row of the hardware table as one string: a row's wrapped lines joined (a line
    whose configuration column is blank, or does not begin with a count, continues the row
    above)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("─")) + 1
    rows: list[str] = []
    for line in lines[start:]:
        if line.startswith("$ per GPU-h:"):
            break
        if rows and (not line[:4].strip() or not _COUNT.match(line[3:])):
            rows[-1] += " " + line.strip()
        else:
            rows.append(line.rstrip())
    return rows


def missing_cells(decision: Decision, text: str) -> list[str]:
    """What the printed table leaves out: the pick's marker, or any word of a row's cells
    (a sum in full or shortened)."""
    expected = table_rows(decision)
    if not expected:
        return []
    printed = printed_rows(text)
    bad = [] if len(printed) == len(expected) else [
        f"{len(printed)} rows printed, {len(expected)} in the decision"]
    days, at = with_days(decision), data_stays_in_region(decision)
    for (mark, cand), row in zip(expected, printed, strict=False):
        if not row.startswith(mark):
            bad.append(f"row without its mark {mark!r}: {row}")
        words = row.split()
        full = cells(cand, days, compact=True, money=usd, rented_at=at)
        short = cells(cand, days, compact=True, money=usd_short, rented_at=at)  # too wide
        for forms in zip(full, short, strict=True):
            if not any(all(word in words for word in form.split()) for form in forms):
                bad.append(f"row without {forms[0]!r}: {row}")
    return bad
