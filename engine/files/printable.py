"""What is shown is escaped: every string that reaches a terminal from a store, a catalog, a
price file, a config or an error message goes through :func:`printable`, so no data can move
the cursor, erase a line, set a title, reorder text (bidirectional controls) or break a line
(U+2028/U+2029): an auditor reads what the data says, never what it draws.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters (Unicode category Cc) except tab and line feed: refused in input files."""

UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069\ud800-\udfff]")
"""What :func:`printable` escapes: every C0 and C1 control (ESC, and the CSI and OSC
introducers U+009B and U+009D, start every terminal sequence; CR and BS overwrite), the
bidirectional marks, embeddings, overrides and isolates, the line and paragraph separators,
and lone surrogates (which no terminal encoding can write)."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match[0]
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` on one line with nothing a terminal acts on: controls as ``\\x1b``, ``\\n``,
    ``\\r``, ``\\t``; bidirectional and separator characters as ``\\u202e``."""
    return UNSHOWN.sub(_escape, text)


def printable_data(data: Any) -> Any:
    """The same data with every string (keys too) made :func:`printable`: for rendering a
    stored or loaded structure as text."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, Mapping):
        return {printable_data(key): printable_data(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [printable_data(item) for item in data]
    return data


def json_printable(text: str) -> str:
    """JSON text with every character :func:`printable` escapes written as a JSON ``\\uXXXX``
    escape instead (the same JSON value; only line feeds and tabs between tokens are kept)."""
    return UNSHOWN.sub(lambda m: m[0] if m[0] in "\n\t" else f"\\u{ord(m[0]):04x}", text)


SPREADSHEET_FORMULA = ("=", "+", "-", "@")
"""How a spreadsheet cell starts that the spreadsheet would run as a formula (OWASP)."""


def csv_cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text: printable, and a leading ``= + - @`` quoted
    with ``'`` (OWASP's advice against formula injection)."""
    text = printable("" if value is None else str(value))
    return f"'{text}" if text.startswith(SPREADSHEET_FORMULA) else text
