"""Batch evaluation: numbered JSON lines of answers in, one JSON line of result out per input.

:func:`evaluate_lines` is a pure map over a partition of the input: the same ``(line number,
text)`` pairs always give the same output strings, byte for byte, whichever process, worker
count or cluster computes them. ``gpu-advisor batch`` (local processes) and
:mod:`engine.distributed` (Dask) both call it on chunks of lines, so their outputs agree.

Each output string is one compact JSON object (no trailing newline), in one of two shapes,
keys in this order::

    {"line":7,"decision":{...}}      # the Decision JSON contract, decision_id "batch-000000007"
    {"line":7,"error":"..."}         # a one-line reason this line was not evaluated

Blank input lines are skipped (no output record). The decision id is derived from the line
number, never random, so identical input gives identical output. Nothing is written to the
audit store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from engine.answers import validate_answers
from engine.errors import EngineError
from engine.recommend import Engine, load_engine
from engine.render.jsonout import compact

DEFAULT_CHUNK_SIZE = 200
"""Lines per unit of work sent to a worker: large enough to amortise IPC and scheduling."""

Line = tuple[int, str]


def decision_id_for(line: int) -> str:
    """The deterministic decision id of input line ``line`` (1-based)."""
    return f"batch-{line:09d}"


def evaluate_lines(lines: Iterable[Line], rules: Path | None = None,
                   catalog: Path | None = None, prices: Path | None = None) -> list[str]:
    """Evaluate numbered lines of answers JSON; one output JSON string per non-blank line.

    Pure: the output depends only on the input pairs and the policy files. A bad line (invalid
    JSON, not an object, an unknown answer, a value out of range, an engine failure) becomes an
    error record for that line; the other lines are unaffected. Only an unusable policy
    (rules/catalog/prices) raises, as :class:`~engine.errors.EngineError`.
    """
    engine = load_engine(rules, catalog, prices)
    out: list[str] = []
    for number, text in lines:
        if not text.strip():
            continue
        out.append(evaluate_line(engine, number, text))
    return out


def evaluate_line(engine: Engine, number: int, text: str) -> str:
    """One output record for one input line (see the module docstring)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return error_record(number, f"invalid JSON: {_json_reason(exc)}")
    if not isinstance(data, dict):
        return error_record(number, f"expected a JSON object of answers, got {_kind(data)}")
    try:
        answers = validate_answers(data, engine.catalog)
        decision = engine.recommend(answers, decision_id=decision_id_for(number))
        # the record's bytes are _compact({"line": number, "decision": <decision data>})'s
        payload = f'{{"line":{number:d},"decision":{compact(decision)}}}'
    except EngineError as exc:
        return error_record(number, str(exc))
    except Exception as exc:  # a bug on one line must not stop the other lines
        return error_record(number, f"internal error: {type(exc).__name__}: {exc}")
    return payload


def error_record(number: int, message: str) -> str:
    """``{"line":N,"error":"..."}`` with the message folded onto one line."""
    return _compact({"line": number, "error": " ".join(message.split())})


def record_error(record: str) -> str | None:
    """The error message of an output record, or None for a decision (cheap: no full parse)."""
    comma = record.find(",")
    if comma < 0 or not record.startswith('"error":', comma + 1):
        return None
    message = json.loads(record)["error"]
    return str(message)


def record_line(record: str) -> int:
    """The input line number of an output record."""
    return int(record[len('{"line":'):record.index(",")])


def numbered(lines: Iterable[str], start: int = 1) -> Iterator[Line]:
    """``(line number, text)`` pairs of a text stream, newline stripped."""
    for number, text in enumerate(lines, start):
        yield number, text.rstrip("\r\n")


def chunked(pairs: Iterable[Line], size: int = DEFAULT_CHUNK_SIZE) -> Iterator[list[Line]]:
    """Lists of at most ``size`` pairs, in order, reading the input lazily."""
    chunk: list[Line] = []
    for pair in pairs:
        chunk.append(pair)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _compact(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _json_reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return str(exc)


def _kind(data: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(data), type(data).__name__)


__all__ = ["DEFAULT_CHUNK_SIZE", "decision_id_for", "error_record", "evaluate_line",
           "evaluate_lines", "record_error", "record_line"]
