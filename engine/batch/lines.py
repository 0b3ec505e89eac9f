"""Batch evaluation: numbered JSON lines of answers in, one JSON line of result out per input.

:func:`evaluate_lines` is a pure map over a partition of the input: the same ``(line number,
text)`` pairs always give the same output strings, byte for byte, whichever process, worker
count or cluster computes them. ``gpu-advisor batch`` (local processes) and
:mod:`engine.batch.distributed` (Dask) both call it on chunks of lines, so their outputs agree.

Each output string is one compact JSON object (no trailing newline), in one of two shapes,
keys in this order::

    {"line":7,"decision":{...}}      # the Decision JSON contract, decision_id "batch-000000007"
    {"line":7,"error":"..."}         # a one-line reason this line was not evaluated

Every failure on a line, of any kind (invalid JSON, nesting, a line over the policy's
``batch_line_max_bytes``, a bad answer, an engine failure, even a ``RecursionError`` or
``MemoryError``), is that line's error record; the other lines are unaffected. A line too
long to be read is passed as :class:`Oversized` (its length only, see
:func:`engine.batch.files.read_lines`). Blank input lines are skipped (no output record). The
decision id is derived from the line number, never random, so identical input gives
identical output. Nothing is written to the audit store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from engine.answers.check import AnswerOrigin
from engine.answers.model import validate_answers
from engine.catalog.load import Catalog
from engine.catalog.prices import PriceInput
from engine.decide.engine import Engine, load_engine
from engine.errors import EngineError
from engine.files.jsonio import strict_loads, too_deep
from engine.files.jsonout import compact
from engine.files.yamlio import MAX_DEPTH

DEFAULT_CHUNK_SIZE = 200
"""Lines per unit of work sent to a worker: large enough to amortise IPC and scheduling."""
CHUNK_MAX_CHARS = 4_000_000
"""A chunk also ends at this much text, so long lines do not make a chunk's memory unbounded."""
MAX_QUOTE_CHARS = 80
"""A quoted input value (any run of non-space characters) is cut to this in an error record."""
MAX_MESSAGE_CHARS = 300
"""An error message longer than this keeps its start and end, with " … " between."""


class Oversized(NamedTuple):
    """Stands for an input line longer than the limit; its text was never held in memory."""

    size_bytes: int


Line = tuple[int, str | Oversized]
"""``(line number, text)``: the text without its line break, or :class:`Oversized`."""


class _LineRefused(EngineError):
    """Why a line is not evaluated (raised inside :func:`evaluate_line` only)."""


def decision_id_for(line: int) -> str:
    """The deterministic decision id of input line ``line`` (1-based)."""
    return f"batch-{line:09d}"


def line_limit(catalog: Catalog) -> int:
    """The policy's longest batch line, in bytes (UTF-8, without the line break)."""
    return max(0, int(catalog.policy.batch_line_max_bytes.value))


def evaluate_lines(lines: Iterable[Line], rules: Path | None = None,
                   catalog: Path | None = None, prices: Path | PriceInput | None = None,
                   allow_model_files: bool = False) -> list[str]:
    """Evaluate numbered lines of answers JSON; one output JSON string per non-blank line.

    Pure: the output depends only on the input pairs and the policy files. A line that fails
    in any way becomes an error record for that line; the other lines are unaffected. Only an
    unusable policy (rules/catalog/prices) raises, as :class:`~engine.errors.EngineError`.
    A line's model named by a path or Hub id is read only with ``allow_model_files`` (a
    line never makes the batch look at a file otherwise; its shape may be given instead).
    """
    engine = load_engine(rules, catalog, prices)
    out: list[str] = []
    for number, text in lines:
        if isinstance(text, str) and not text.strip():
            continue
        out.append(evaluate_line(engine, number, text, allow_model_files=allow_model_files))
    return out


def evaluate_line(engine: Engine, number: int, text: str | Oversized, *,
                  allow_model_files: bool = False) -> str:
    """One output record for one input line (see the module docstring); never raises."""
    try:
        return _evaluate(engine, number, text, allow_model_files)
    except EngineError as exc:
        return error_record(number, str(exc))
    except Exception as exc:  # any failure is this line's, not the batch's
        return error_record(number, _failure(exc))


def _evaluate(engine: Engine, number: int, text: str | Oversized,
              allow_model_files: bool) -> str:
    data = _parse(text, line_limit(engine.catalog))
    # a line names its model like any answers (an empty one is refused, not defaulted)
    answers = validate_answers(data, engine.catalog, origin=AnswerOrigin(None, data),
                               require_model=True, read_model_files=allow_model_files)
    decision = engine.recommend(answers, decision_id=decision_id_for(number))
    # the record's bytes are _compact({"line": number, "decision": <decision data>})'s
    return f'{{"line":{number:d},"decision":{compact(decision)}}}'


def _parse(text: str | Oversized, limit: int) -> dict[str, Any]:
    """The answers object of a line: size first (before any parsing), then JSON, then shape."""
    size = text.size_bytes if isinstance(text, Oversized) else _utf8_size(text)
    if isinstance(text, Oversized) or size > limit:
        raise _LineRefused(f"line is {size:,} bytes; the limit is {limit:,}")
    try:
        data = strict_loads(text)
    except ValueError as exc:
        raise _LineRefused(f"invalid JSON: {_json_reason(exc)}") from None
    except RecursionError:  # the C decoder recurses per level: [[[[... 100,000 deep
        raise _LineRefused(f"nesting deeper than {MAX_DEPTH} levels") from None
    if not isinstance(data, dict):
        raise _LineRefused(f"expected a JSON object of answers, got {_kind(data)}")
    if too_deep(data):
        raise _LineRefused(f"nesting deeper than {MAX_DEPTH} levels")
    return data


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _failure(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply to evaluate"
    if isinstance(exc, MemoryError):
        return "out of memory evaluating this line"
    return f"internal error: {type(exc).__name__}: {exc}"


def error_record(number: int, message: str) -> str:
    """``{"line":N,"error":"..."}``: the message on one line, printable and of bounded length."""
    return _compact({"line": number, "error": shorten(message)})


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def shorten(message: str) -> str:
    """The message folded onto one line, control characters escaped, quoted input capped.

    Any run of non-space characters longer than :data:`MAX_QUOTE_CHARS` (a value quoted from
    the input) is cut with "…", and the whole keeps at most :data:`MAX_MESSAGE_CHARS`, so a
    record never echoes a huge or terminal-controlling input.
    """
    words = [word if len(word) <= MAX_QUOTE_CHARS else f"{word[:MAX_QUOTE_CHARS - 1]}…"
             for word in message.split()]
    text = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", " ".join(words))
    if len(text) > MAX_MESSAGE_CHARS:
        tail = MAX_MESSAGE_CHARS // 3
        text = f"{text[:MAX_MESSAGE_CHARS - tail - 3]} … {text[-tail:]}"
    return text


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


def chunked(pairs: Iterable[Line], size: int = DEFAULT_CHUNK_SIZE,
            max_chars: int = CHUNK_MAX_CHARS) -> Iterator[list[Line]]:
    """Lists of at most ``size`` pairs (and about ``max_chars`` of text), in order, lazily."""
    chunk: list[Line] = []
    chars = 0
    for pair in pairs:
        chunk.append(pair)
        chars += len(pair[1]) if isinstance(pair[1], str) else 0
        if len(chunk) >= size or chars >= max_chars:
            yield chunk
            chunk, chars = [], 0
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


__all__ = ["DEFAULT_CHUNK_SIZE", "Line", "Oversized", "chunked", "decision_id_for",
           "error_record", "evaluate_line", "evaluate_lines", "line_limit", "record_error",
           "record_line", "shorten"]
