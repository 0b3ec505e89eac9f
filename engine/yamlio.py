"""Safe, bounded YAML/JSON loading that remembers the line of every key.

Rule and catalog files are data from many hands: we only ever use ``yaml.safe_load``
semantics, refuse anchors/aliases (billion-laughs), cap size and nesting depth, and keep
line numbers so that a validation error can say ``file:line``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from engine.errors import InputError

MAX_FILE_BYTES = 2_000_000
MAX_DEPTH = 40

try:  # the C parser is ~10x faster; the constructor (where we hook) is Python either way
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _BaseLoader = yaml.SafeLoader


class LineDict(dict[str, Any]):
    """A mapping that remembers the 1-based line of itself and of each of its keys."""

    line: int = 0
    key_lines: dict[Any, int]


class LineList(list[Any]):
    """A sequence that remembers the 1-based line of itself and of each of its items."""

    line: int = 0
    item_lines: list[int]


class _DuplicateKeyError(yaml.MarkedYAMLError):
    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem=problem, problem_mark=mark)


class _LineLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        mapping = LineDict(super().construct_mapping(node, deep=True))
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = {}
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            # YAML requires unique keys; PyYAML silently keeps the last one, which would let a
            # second `when:` or `hours_per_year:` quietly override the first.
            if key in seen:
                raise _DuplicateKeyError(f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
            if isinstance(key, (str, int, float, bool)) or key is None:
                mapping.key_lines[key] = key_node.start_mark.line + 1
        return mapping

    def construct_sequence(self, node: Any, deep: bool = False) -> Any:
        seq = LineList(super().construct_sequence(node, deep=True))
        seq.line = node.start_mark.line + 1
        seq.item_lines = [child.start_mark.line + 1 for child in node.value]
        return seq


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_sequence)


def read_text(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Read a UTF-8 text file, refusing oversized or undecodable content with a clear error."""
    name = str(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(f"file is {size:,} bytes; the limit is {max_bytes:,}", path=name)
        # Never read more than the limit: a device or pipe (/dev/zero, <(cmd)) reports size 0.
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
        if len(raw) > max_bytes:
            raise InputError(f"file is larger than the limit of {max_bytes:,} bytes", path=name)
    except FileNotFoundError:
        raise InputError("file not found", path=name) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", path=name) from None
    except PermissionError:
        raise InputError("permission denied", path=name) from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", path=name) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte {exc.start})", path=name) from None


def parse_yaml(text: str, *, path: str) -> Any:
    """Parse YAML text with safe semantics, line tracking, and no aliases; return plain data."""
    if len(text) > MAX_FILE_BYTES:
        raise InputError(f"document exceeds {MAX_FILE_BYTES:,} characters", path=path)
    try:
        _scan_events(text, path)
        loader = _LineLoader(text)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        problem = exc.problem or "invalid YAML"
        if isinstance(exc, yaml.constructor.ConstructorError):
            problem = f"unsupported YAML tag or value ({problem})"
        raise InputError(f"YAML error: {problem}", path=path, line=line) from None
    except yaml.reader.ReaderError as exc:  # a control character, e.g. a NUL byte
        line = text.count("\n", 0, exc.position) + 1 if exc.position is not None else None
        code = exc.character if isinstance(exc.character, int) else ord(exc.character or "?")
        raise InputError(f"YAML error: character U+{code:04X} is not allowed ({exc.reason})",
                         path=path, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"YAML error: {' '.join(str(exc).split())}", path=path) from None
    except RecursionError:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path=path) from None
    return data


def _scan_events(text: str, path: str) -> None:
    """Refuse anchors/aliases (no billion laughs) and deep nesting before constructing anything."""
    depth = 0
    for event in yaml.parse(text, Loader=_BaseLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            line = _line(event)
            raise InputError("YAML anchors and aliases are not allowed", path=path, line=line)
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                line = _line(event)
                raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path=path, line=line)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _line(event: Any) -> int | None:
    mark = getattr(event, "start_mark", None)
    return None if mark is None else int(mark.line) + 1


def load_yaml_file(path: Path) -> Any:
    """Read and parse one YAML file (see :func:`parse_yaml`)."""
    return parse_yaml(read_text(path), path=str(path))


def load_data_file(path: Path) -> Any:
    """Load a ``.json`` file with :mod:`json`, anything else as YAML."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text, parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            raise InputError(f"JSON error: {exc.msg}", path=str(path), line=exc.lineno) from None
        except ValueError as exc:
            raise InputError(str(exc), path=str(path)) from None
        except RecursionError:  # the C decoder recurses per level: [[[[... a million deep
            raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path=str(path)) from None
        _check_depth(data, str(path))
        return data
    return parse_yaml(text, path=str(path))


def _check_depth(data: Any, path: str) -> None:
    """The YAML nesting limit, for JSON documents (checked without recursion)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(
            node, list) else None
        if children is None:
            continue
        if depth > MAX_DEPTH:
            raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path=path)
        stack.extend((child, depth + 1) for child in children)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number this tool accepts")


def type_name(value: Any) -> str:
    """The plain type name of parsed data (``list``, not the line-tracking ``LineList``)."""
    return next(t.__name__ for t in type(value).__mro__ if t.__module__ == "builtins")


def line_of(data: Any, loc: Sequence[Any]) -> int | None:
    """The line of the deepest element of ``data`` reached by following ``loc`` (a pydantic loc)."""
    line: int | None = getattr(data, "line", None)
    node = data
    for part in loc:
        if isinstance(node, LineDict) and part in node:
            line = node.key_lines.get(part, line)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_lines[part]
            node = node[part]
        else:
            break
    return line
