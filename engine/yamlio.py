"""Safe, bounded YAML/JSON loading that remembers the line of every key.

Rule and catalog files are data from many hands: we only ever use ``yaml.safe_load``
semantics, refuse anchors/aliases (billion-laughs), cap size, node count and nesting depth,
refuse control characters in every string, and keep line numbers so that a validation error
can say ``file:line``.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from engine.errors import InputError

MAX_FILE_BYTES = 2_000_000
MAX_DEPTH = 40
MAX_NODES = 50_000
"""Values, keys and collections per document (the largest bundled file has ~1,500)."""
MAX_INT_DIGITS = 400
"""Longer integer literals are refused before conversion (beyond any float, and Python's
int parser is quadratic on them)."""

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters (Unicode category Cc) except tab and line feed."""

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


class _MarkedError(yaml.MarkedYAMLError):
    """A refusal found while constructing, located at a node."""

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
                raise _MarkedError(f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
            if isinstance(key, (str, int, float, bool)) or key is None:
                mapping.key_lines[key] = key_node.start_mark.line + 1
        return mapping

    def construct_sequence(self, node: Any, deep: bool = False) -> Any:
        seq = LineList(super().construct_sequence(node, deep=True))
        seq.line = node.start_mark.line + 1
        seq.item_lines = [child.start_mark.line + 1 for child in node.value]
        return seq

    def construct_yaml_int(self, node: Any) -> Any:
        # int() of 4,301+ digits raises, and sexagesimal 1:2:3:… grows quadratically
        if len(node.value) > MAX_INT_DIGITS:
            raise _MarkedError(_long_int(len(node.value)), node.start_mark)
        return super().construct_yaml_int(node)

    def construct_yaml_binary(self, node: Any) -> Any:
        raise _MarkedError("binary values (!!binary) are not accepted", node.start_mark)


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_sequence)
_LineLoader.add_constructor("tag:yaml.org,2002:int", _LineLoader.construct_yaml_int)
_LineLoader.add_constructor("tag:yaml.org,2002:binary", _LineLoader.construct_yaml_binary)


def _long_int(digits: int) -> str:
    return f"integer of {digits:,} digits is too long (at most {MAX_INT_DIGITS})"


# -- reading ---------------------------------------------------------------------------------
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link"))


def read_text(path: Path, *, max_bytes: int = MAX_FILE_BYTES,
              follow_symlinks: bool = True) -> str:
    """Read a UTF-8 text file, refusing oversized or undecodable content with a clear error.

    Only a regular file is opened (a FIFO, device, socket or directory is refused before
    anything can block), and never more than ``max_bytes`` is read. With
    ``follow_symlinks=False`` (the files listed from a rule or catalog folder) a symbolic
    link is refused too.
    """
    name = str(path)
    try:
        raw = _read_regular(path, max_bytes, follow_symlinks)
    except FileNotFoundError:
        raise InputError("file not found", path=name) from None
    except PermissionError:
        raise InputError("permission denied", path=name) from None
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", path=name) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte {exc.start})", path=name) from None


def _read_regular(path: Path, max_bytes: int, follow_symlinks: bool) -> bytes:
    """The bytes of a regular file (checked by stat, then again on the open descriptor)."""
    _check_regular(path.stat(follow_symlinks=follow_symlinks), path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:  # replaced by a link between the lstat and the open
        if exc.errno == errno.ELOOP and not follow_symlinks:
            _check_regular(path.lstat(), path)
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        _check_regular(info, path)
        if info.st_size > max_bytes:
            raise InputError(f"file is {info.st_size:,} bytes; the limit is {max_bytes:,}",
                             path=str(path))
        raw = handle.read(max_bytes + 1)
    if len(raw) > max_bytes:  # grew after the fstat
        raise InputError(f"file is larger than the limit of {max_bytes:,} bytes", path=str(path))
    return raw


def _check_regular(info: os.stat_result, path: Path) -> None:
    if stat.S_ISREG(info.st_mode):
        return
    kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
    if kind == "a directory":
        raise InputError("is a directory, expected a file", path=str(path))
    if kind == "a symbolic link":
        raise InputError("is a symbolic link; links inside a rule or catalog folder are not "
                         "followed", path=str(path))
    raise InputError(f"is {kind}, expected a regular file", path=str(path))


# -- YAML ------------------------------------------------------------------------------------
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
        raise InputError(f"YAML error: {printable(' '.join(str(exc).split()))}",
                         path=path) from None
    except RecursionError:
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path=path) from None
    check_strings(data, path)
    return data


_NODE_EVENTS = (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)


def _scan_events(text: str, path: str) -> None:
    """Refuse anchors/aliases (no billion laughs), deep nesting and too many nodes before
    constructing anything; stops at the first problem, so a refusal costs little."""
    depth = nodes = 0
    for event in yaml.parse(text, Loader=_BaseLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            line = _line(event)
            raise InputError("YAML anchors and aliases are not allowed", path=path, line=line)
        if isinstance(event, _NODE_EVENTS):
            nodes += 1
            if nodes > MAX_NODES:
                raise InputError(_too_many_nodes(), path=path, line=_line(event))
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                line = _line(event)
                raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path=path, line=line)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _too_many_nodes() -> str:
    return f"more than {MAX_NODES:,} values, keys, lists and mappings"


def _line(event: Any) -> int | None:
    mark = getattr(event, "start_mark", None)
    return None if mark is None else int(mark.line) + 1


def load_yaml_file(path: Path) -> Any:
    """Read and parse one YAML file (see :func:`parse_yaml`)."""
    return parse_yaml(read_text(path), path=str(path))


# -- JSON ------------------------------------------------------------------------------------
def load_data_file(path: Path) -> Any:
    """Load a ``.json`` file with :func:`parse_json`, anything else as YAML."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        return parse_json(text, path=str(path))
    return parse_yaml(text, path=str(path))


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def parse_json(text: str, *, path: str) -> Any:
    """Parse JSON under the YAML rules: a leading BOM is skipped; node count, nesting,
    integer length, duplicate keys, NaN/Infinity and control characters are refused."""
    text = text.removeprefix("\ufeff")
    bare = _json_structure(text)
    if _json_nodes(bare) > MAX_NODES:
        raise InputError(_too_many_nodes(), path=path)
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_int=_bounded_int,
                          object_pairs_hook=_unique_pairs)
    except _DuplicateKey as exc:
        raise InputError(f"JSON error: duplicate key {exc.key!r}", path=path,
                         line=_json_duplicate_line(text, exc.key)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"JSON error: {exc.msg}", path=path, line=exc.lineno) from None
    except ValueError as exc:
        raise InputError(str(exc), path=path, line=_json_long_int_line(bare)) from None
    except RecursionError:  # the C decoder recurses per level: [[[[... a million deep
        raise InputError(f"nesting deeper than {MAX_DEPTH} levels", path=path) from None
    _check_depth(data, path)
    check_strings(data, path)
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
    found = re.search(f"[0-9]{{{MAX_INT_DIGITS + 1}}}", bare)
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


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return data


def _bounded_int(digits: str) -> int:
    if len(digits) > MAX_INT_DIGITS:
        raise ValueError(_long_int(len(digits.lstrip("-"))))
    return int(digits)


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


# -- strings ---------------------------------------------------------------------------------
def check_strings(data: Any, path: str) -> None:
    """Refuse a control character (other than tab and line feed) in any key or string,
    after escapes were decoded (``"\\e"``, ``"\\u001b"``): it could drive the terminal."""
    if _has_control(data):
        _locate_control(data, path)


def _has_control(data: Any) -> bool:
    """Whether any key or string holds a control character (a quick pass, no locations)."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _CONTROL.search(node):
                return True
        elif isinstance(node, dict):
            stack.extend(node)
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set, frozenset)):
            stack.extend(node)
    return False


def _locate_control(data: Any, path: str) -> None:
    """Raise the error for the first control character, with its field and line."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        node, loc = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and (found := _CONTROL.search(key)):
                    raise _control(found, path, data, loc, key)
                stack.append((value, (*loc, key)))
        elif isinstance(node, (list, tuple, set, frozenset)):
            stack.extend((item, (*loc, i)) for i, item in enumerate(node))
        elif isinstance(node, str) and (found := _CONTROL.search(node)):
            raise _control(found, path, data, loc)
    raise InputError("a control character is not allowed", path=path)  # pragma: no cover


def _control(found: re.Match[str], path: str, data: Any, loc: tuple[Any, ...],
             key: str | None = None) -> InputError:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    if key is not None:
        where = f"{where}.{printable(key)}" if where else printable(key)
    message = (f"control character U+{ord(found[0]):04X} is not allowed in a "
               f"{'key' if key is not None else 'string'} (tab and line feed are)")
    line = line_of(data, (*loc, key) if key is not None else loc)
    return InputError(message, path=path, line=line, field=where or None)


def printable(text: str) -> str:
    """``text`` with every control character but tab and line feed written as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


# -- helpers for the validators --------------------------------------------------------------
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
