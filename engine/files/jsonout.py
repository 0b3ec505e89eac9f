"""Deterministic JSON: the same data always serialises to the same bytes.

The bytes are those of Python's :func:`json.dumps` over :func:`to_data` (the format every
recorded decision in an audit store has, and replay compares byte for byte). An output
model (``ser_json_inf_nan="constants"`` in its config and in every model inside it, as the
decision models have) is serialised by pydantic's compiled serializer instead, 2–5× faster,
whenever that gives the same bytes, which is always except for a float that Python writes
in exponent form with a negative exponent of one digit (``1e-05`` against ``0.00001``,
``1e-07`` against ``1e-7``) or a non-finite float (which Python refuses).
:func:`_python_would_differ` recognises both in the compiled output, and the Python path
then writes (or refuses) the text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

# a bare JSON number (after ':', ',', '[' or whitespace) with a one-digit negative exponent;
# "g6e-4" inside a string is not one
_ONE_DIGIT_NEGATIVE_EXPONENT = re.compile(r"(?<![\w.\-])-?\d+(?:\.\d+)?e-\d(?!\d)")


def to_data(obj: Any) -> Any:
    """Plain JSON-ready data from pydantic models, dataclasses-free dicts, lists and scalars."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {str(k): to_data(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_data(v) for v in obj]
    return obj


def dumps(obj: Any) -> str:
    """Indented, key-order-preserving, UTF-8 JSON text with a trailing newline."""
    fast = _compiled(obj, indent=2)
    if fast is not None:
        return fast + "\n"
    return json.dumps(to_data(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def compact(obj: Any) -> str:
    """One-line JSON text (no spaces, no trailing newline), same data and order as dumps."""
    fast = _compiled(obj, indent=None)
    if fast is not None:
        return fast
    return json.dumps(to_data(obj), ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _compiled(obj: Any, *, indent: int | None) -> str | None:
    """pydantic's serialisation of an output model, or None when it might not be Python's."""
    if not isinstance(obj, BaseModel) or obj.model_config.get("ser_json_inf_nan") != "constants":
        return None
    text = obj.model_dump_json(indent=indent)
    return None if _python_would_differ(text) else text


def _python_would_differ(text: str) -> bool:
    """Whether ``text`` (pydantic's JSON) may hold a float Python writes differently.

    pydantic writes 1e-05…9.99e-05 as ``0.0000…`` and a one-digit negative exponent
    unpadded (``1e-7``; Python ``1e-07``); every other finite float it writes as ``repr``
    does. Non-finite floats come out as ``NaN``/``Infinity`` under the "constants" setting.
    A string that merely looks like these sends the text the slow, exact way: harmless.
    """
    if "0.0000" in text or "NaN" in text or "Infinity" in text:
        return True
    return _ONE_DIGIT_NEGATIVE_EXPONENT.search(text) is not None
