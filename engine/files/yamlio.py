"""Safe, bounded YAML/JSON loading that remembers the line of every key.

Rule and catalog files are data from many hands: we only ever use ``yaml.safe_load``
semantics, refuse anchors/aliases (billion-laughs), cap size, node count and nesting depth,
refuse control characters in every string, and keep line numbers so that a validation error
can say ``file:line``.
"""

from __future__ import annotations

import errno
import os
import pickle
import re
import stat
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from engine.errors import InputError
from engine.files.printable import CONTROL_CHARACTERS as CONTROL_CHARACTERS
from engine.files.printable import printable as printable  # its home; re-exported

MAX_FILE_BYTES = 2_000_000
MAX_DEPTH = 40
MAX_NODES = 50_000
"""Values, keys and collections per document (the largest bundled file has ~1,500)."""
TOO_MANY_NODES = f"more than {MAX_NODES:,} values, keys, lists and mappings"
MAX_NUMBER_CHARS = 400
"""Longer number literals are refused before conversion: far beyond any float, and
converting them costs quadratic time (decimal integers, sexagesimal ``1:2:3…``)."""


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
        if len(node.value) > MAX_NUMBER_CHARS:
            raise _MarkedError(long_integer(len(node.value)), node.start_mark)
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node: Any) -> Any:
        # 1:2:3:….5 (sexagesimal) multiplies by 60 per part: long forms overflow or crawl
        if len(node.value) > MAX_NUMBER_CHARS:
            raise _MarkedError(f"number of {len(node.value):,} characters is too long (at most "
                               f"{MAX_NUMBER_CHARS})", node.start_mark)
        try:
            return super().construct_yaml_float(node)
        except OverflowError:
            raise _MarkedError("number is too large", node.start_mark) from None

    def construct_yaml_binary(self, node: Any) -> Any:
        raise _MarkedError("binary values (!!binary) are not accepted", node.start_mark)


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_mapping)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _LineLoader.construct_sequence)
_LineLoader.add_constructor("tag:yaml.org,2002:int", _LineLoader.construct_yaml_int)
_LineLoader.add_constructor("tag:yaml.org,2002:float", _LineLoader.construct_yaml_float)
_LineLoader.add_constructor("tag:yaml.org,2002:binary", _LineLoader.construct_yaml_binary)


def long_integer(digits: int) -> str:
    """The refusal of an integer literal of ``digits`` digits (YAML and JSON alike)."""
    return f"integer of {digits:,} digits is too long (at most {MAX_NUMBER_CHARS})"


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
_PARSED: OrderedDict[str, bytes] = OrderedDict()
"""Texts parsed in this process that passed every check, newest last, each with its data
pickled (in memory only, never written): the same catalog or rule file read again (by
another ``--catalog`` or ``--rules`` folder, what-if, batch or a test) is not parsed again.
Bounded in entries and in size."""
_PARSED_ENTRIES = 64
_PARSED_MAX_TEXT = 512 * 1024


def parse_yaml(text: str, *, path: str) -> Any:
    """Parse YAML text with safe semantics, line tracking, and no aliases; return plain data
    (a fresh copy each time: callers may change it)."""
    if len(text) > MAX_FILE_BYTES:
        raise InputError(f"document exceeds {MAX_FILE_BYTES:,} characters", path=path)
    seen = _PARSED.get(text)
    if seen is not None:
        _PARSED.move_to_end(text)
        return pickle.loads(seen)
    data = _parse(text, path)
    if len(text) <= _PARSED_MAX_TEXT:
        _PARSED[text] = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
        while len(_PARSED) > _PARSED_ENTRIES:
            _PARSED.popitem(last=False)
    return data


def _parse(text: str, path: str) -> Any:
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
                raise InputError(TOO_MANY_NODES, path=path, line=_line(event))
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
            if CONTROL_CHARACTERS.search(node):
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
                if isinstance(key, str) and (found := CONTROL_CHARACTERS.search(key)):
                    raise _control(found, path, data, loc, key)
                stack.append((value, (*loc, key)))
        elif isinstance(node, (list, tuple, set, frozenset)):
            stack.extend((item, (*loc, i)) for i, item in enumerate(node))
        elif isinstance(node, str) and (found := CONTROL_CHARACTERS.search(node)):
            raise _control(found, path, data, loc)
    raise InputError("a control character is not allowed", path=path)  # pragma: no cover


def _control(found: re.Match[str], path: str, data: Any, loc: tuple[Any, ...],
             key: str | None = None) -> InputError:
    where = dotted(loc, data)
    if key is not None:
        where = f"{where}.{printable(key)}" if where else printable(key)
    message = (f"control character U+{ord(found[0]):04X} is not allowed in a "
               f"{'key' if key is not None else 'string'} (tab and line feed are)")
    line = line_of(data, (*loc, key) if key is not None else loc)
    return InputError(message, path=path, line=line, field=where or None)


# -- helpers for the validators --------------------------------------------------------------
def dotted(loc: Sequence[Any], data: Any = None) -> str:
    """``gpus[3].vram_gb`` from a pydantic loc; list items are named by their ``id`` if any."""
    out = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            item = node[part] if isinstance(node, list) and part < len(node) else None
            ident = item.get("id") if isinstance(item, dict) else None
            out += f"[{ident}]" if isinstance(ident, str) else f"[{part}]"
            node = item
        else:
            out += f".{part}" if out else str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return out


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
