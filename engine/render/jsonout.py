"""Deterministic JSON: the same data always serialises to the same bytes."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel


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
    return json.dumps(to_data(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
