"""Bounded JSON loading under the same rules as YAML (see :mod:`engine.files.yamlio`).

The C decoder is fast but cannot be stopped part-way, so the node count is taken from the
text's structure first; duplicate keys, NaN/Infinity, over-long integers and control
characters are refused as in YAML, and a leading UTF-8 BOM is skipped as in YAML.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from engine.errors import InputError
from engine.files.yamlio import (
    CONTROL_CHARACTERS,
    MAX_DEPTH,
    MAX_NODES,
    MAX_NUMBER_CHARS,
    TOO_MANY_NODES,
    check_strings,
    long_integer,
    parse_yaml,
    read_text,
)


def load_data_file(path: Path) -> Any:
    """Load a ``.json`` file with :func:`parse_json`, anything else as YAML."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        return parse_json(text, path=str(path))
    return parse_yaml(text, path=str(path))


class DuplicateKey(ValueError):
    """A JSON object names the same key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def strict_loads(text: str) -> Any:
    """``json.loads`` that refuses duplicate keys, NaN/Infinity and over-long integers
    (each a ValueError); no size or node limits, which callers check first."""
    return json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int,
                      object_pairs_hook=_unique_pairs)


def parse_json(text: str, *, path: str) -> Any:
    """Parse JSON under the YAML rules: a leading BOM is skipped; node count, nesting,
    integer length, duplicate keys, NaN/Infinity and control characters are refused."""
    text = text.removeprefix("\ufeff")
    bare = _json_structure(text)
    if _json_nodes(bare) > MAX_NODES:
        raise InputError(TOO_MANY_NODES, path=path)
    try:
        data = strict_loads(text)
    except DuplicateKey as exc:
        raise InputError(f"JSON error: duplicate key {exc.key!r}", path=path,
                         line=_json_duplicate_line(text, exc.key)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"JSON error: {exc.msg}", path=path, line=exc.lineno) from None
    except ValueError as exc:
        raise InputError(str(exc), path=path, line=_json_long_int_line(bare)) from None
    except RecursionError:  # the C decoder recurses per level: [[[[... a million deep
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path=path) from None
    _check_depth(data, path)
    try:
        check_strings(data, path)
    except InputError as exc:
        raise InputError(exc.message, path=path, line=_json_control_line(text),
                         field=exc.field) from None
    return data


_JSON_ESCAPE = re.compile(r"\\.", re.DOTALL)
_JSON_STRING = re.compile(r'"[^"]*"')
_JSON_EMPTY = re.compile(r"\[\s*\]|\{\s*\}")


def _json_structure(text: str) -> str:
    """The text with escapes dropped and every string replaced by ``0`` (linear time, no
    backtracking); line breaks stay where they were in valid JSON."""
    return _JSON_STRING.sub("0", _JSON_ESCAPE.sub("", text))


def _json_nodes(bare: str) -> int:
    """Values, keys and containers of a JSON text given by its structure (exact when valid):
    each one but the first follows a ``[``, ``{``, ``,`` or ``:``."""
    bare = _JSON_EMPTY.sub("0", bare)
    return 1 + sum(bare.count(char) for char in ",:[{")


def _json_long_int_line(bare: str) -> int | None:
    found = re.search(f"[0-9]{{{MAX_NUMBER_CHARS + 1}}}", bare)
    return None if found is None else bare.count("\n", 0, found.start()) + 1


_JSON_TOKEN = re.compile(r'(?P<string>"[^"\\]*(?:\\.[^"\\]*)*")(?P<key>\s*:)?|[{}\[\]]')


def _json_duplicate_line(text: str, key: str) -> int | None:
    """The line of the first repeated ``key`` in one object (``text`` is valid JSON)."""
    objects: list[set[str] | None] = []
    for token in _JSON_TOKEN.finditer(text):
        if token["string"] is None:
            if token[0] in "[{":
                objects.append(set() if token[0] == "{" else None)
            else:
                objects.pop()
        elif token["key"] and objects and objects[-1] is not None:
            name = json.loads(token["string"])
            if name == key and name in objects[-1]:
                return text.count("\n", 0, token.start()) + 1
            objects[-1].add(name)
    return None


def _json_control_line(text: str) -> int | None:
    """The line of the first key or string holding a control character (valid JSON)."""
    for token in _JSON_TOKEN.finditer(text):
        if token["string"] is not None and CONTROL_CHARACTERS.search(json.loads(token["string"])):
            return text.count("\n", 0, token.start()) + 1
    return None


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return data


def _bounded_int(digits: str) -> int:
    if len(digits) > MAX_NUMBER_CHARS:
        raise ValueError(long_integer(len(digits.lstrip("-"))))
    return int(digits)


def too_deep(data: Any) -> bool:
    """Whether parsed JSON nests deeper than answers files may (checked without recursion)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(
            node, list) else None
        if children is None:
            continue
        if depth > MAX_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _check_depth(data: Any, path: str) -> None:
    """The YAML nesting limit, for JSON documents."""
    if too_deep(data):
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path=path)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number this tool accepts")
