"""Batch input and output files: lines read within a bound, results written atomically.

Reading (:func:`open_input`, :func:`read_lines`): the input must be a regular file (a FIFO or
device is refused before it could block), and no line costs more memory than the policy's
limit: a longer line is skipped in bounded pieces and stands as
:class:`~engine.batch.lines.Oversized` (its length only), which
:func:`engine.batch.lines.evaluate_line` turns into that line's error record.

Writing (:func:`output_target`, :class:`AtomicOutput`): ``--out`` may not be the input (same
device and inode: directly, through a symlink or a hardlink), and is checked as every written
file is (:mod:`engine.files.safe_write`: a regular file, replaced only with ``--force``).
Records go to a temporary file beside the target (symlinks resolved), which replaces the target
only when the run completes; any failure removes it and leaves an existing target untouched,
byte for byte. An interrupted run (``KeyboardInterrupt``: Ctrl-C, or SIGTERM in the CLI) also
leaves the target untouched and keeps the complete records written so far, in input order, in
``TARGET.partial`` (replacing an older one).
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from engine.batch.lines import Line, Oversized
from engine.errors import InputError
from engine.files.safe_write import AtomicFile, Target, check_target, kind_of

PIECE_BYTES = 1 << 20
"""How much of an over-long line is read at a time while skipping it."""
_BOM = b"\xef\xbb\xbf"


# ------------------------------------------------------------------------------------ input
def open_input(path: Path) -> BinaryIO:
    """The input file opened for reading in binary; refused unless it is a regular file."""
    try:  # O_NONBLOCK: opening a FIFO with no writer must not hang before it is refused
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError("no such input file", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"is {kind_of(mode)}, not a regular file; expected a file of "
                             "JSON lines", path=str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=1 << 16)
    except BaseException:
        os.close(fd)
        raise


def read_lines(stream: BinaryIO, max_bytes: int) -> Iterator[Line]:
    """``(line number, text)`` for each line of a binary stream, numbered from 1.

    The text is decoded as UTF-8 (invalid bytes replaced), without its line break ("\\n" or
    "\\r\\n") and without a byte-order mark at the start of the stream. A line longer than
    ``max_bytes`` is never held: it is skipped in pieces of :data:`PIECE_BYTES` and given as
    ``Oversized(length)``.
    """
    max_bytes = max(0, max_bytes)
    for number in itertools.count(1):
        budget = max_bytes + 2 + (len(_BOM) if number == 1 else 0)  # room for "\r\n" (and a BOM)
        raw = stream.readline(budget)
        if not raw:
            return
        complete = raw.endswith(b"\n") or len(raw) < budget
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM):]
        if not complete:
            yield number, Oversized(_skip_rest_of_line(stream, raw))
            continue
        content = _without_line_break(raw)
        if len(content) > max_bytes:
            yield number, Oversized(len(content))
        else:
            yield number, content.decode("utf-8", "replace")


def _without_line_break(raw: bytes) -> bytes:
    raw = raw[:-1] if raw.endswith(b"\n") else raw
    return raw[:-1] if raw.endswith(b"\r") else raw


def _skip_rest_of_line(stream: BinaryIO, head: bytes) -> int:
    """Read past the rest of a line that starts with ``head``; its length, without the break."""
    size, last = len(head), head[-1:]
    while piece := stream.readline(PIECE_BYTES):
        ended = piece.endswith(b"\n")
        body = piece[:-1] if ended else piece
        size, last = size + len(body), body[-1:] or last
        if ended:
            break
    return size - (last == b"\r")


def count_lines(stream: BinaryIO) -> int:
    """The number of line breaks in the rest of the stream, which is then rewound."""
    start = stream.tell()
    total = sum(block.count(b"\n") for block in iter(lambda: stream.read(PIECE_BYTES), b""))
    stream.seek(start)
    return total


# ----------------------------------------------------------------------------------- output
def partial_path(target: Path) -> Path:
    """Where an interrupted run keeps the records it wrote: ``TARGET.partial``."""
    return target.with_name(f"{target.name}.partial")


def output_target(out_path: Path, source: BinaryIO, in_path: Path, *,
                  force: bool = False) -> Target:
    """The file ``out_path`` names, checked before anything is written.

    Refused (exit 2) when it, or its partial file, is the input (same device and inode), and
    as every written file is (:mod:`engine.files.safe_write`): not a regular file, existing
    without ``force``, in a folder that cannot be written.
    """
    opened = os.fstat(source.fileno())
    _is_input(out_path, opened, in_path, out_path)
    target = check_target(out_path, force=force, field="--out")
    partial = partial_path(target.path)
    _is_input(partial, opened, in_path, out_path)
    try:
        found = partial.lstat()
    except OSError:
        return target
    if not stat.S_ISREG(found.st_mode) and not stat.S_ISLNK(found.st_mode):
        raise target.refused(f"its partial file {partial} is {kind_of(found.st_mode)}, not a "
                             "regular file")
    return target


def _is_input(path: Path, opened: os.stat_result, in_path: Path, out_path: Path) -> None:
    """Refuse ``path`` when it is the input file (directly, through a link, a hardlink)."""
    try:
        found = path.stat()
    except OSError:
        return
    if (found.st_dev, found.st_ino) == (opened.st_dev, opened.st_ino):
        what = "is" if path == out_path else f"has the partial file {path}, which is"
        raise InputError(f"{what} the input file {in_path}; choose another output file",
                         path=str(out_path), field="--out")


class AtomicOutput:
    """Output records written to a temporary file beside the target, which :meth:`commit`
    renames over it. Leaving the block without a commit removes the temporary file, except
    on ``KeyboardInterrupt``, where the complete records so far become ``TARGET.partial``.
    """

    def __init__(self, target: Target) -> None:
        self.target = target
        self.records = 0
        self.committed = False
        self.partial: Path | None = None
        self._file = AtomicFile(target)
        self._size = 0
        self._pending = (0, 0)

    def __enter__(self) -> AtomicOutput:
        self._file.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if self._file.committed or self.committed:
                self.committed = True
            elif exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
                self._keep_partial()
        finally:
            self._file.__exit__(exc_type, exc, tb)

    def write(self, records: Sequence[str]) -> None:
        """Append records, one per line (a lone surrogate is written as its JSON escape)."""
        data = "".join(f"{record}\n" for record in records).encode("utf-8", "backslashreplace")
        self._pending = (self._size + len(data), self.records + len(records))
        self._file.write(data)
        self._size, self.records = self._pending

    def commit(self) -> None:
        """Make the records the target's content, in one rename."""
        self._file.commit()
        self.committed = True

    def _keep_partial(self) -> None:
        """Trim anything after the last complete write, then rename to ``TARGET.partial``."""
        size, records = self._pending
        if self._file.size == size:
            self.records = records
        else:  # interrupted inside a write: drop its incomplete part
            self._file.truncate(self._size)
        self.partial = self._file.keep_as(partial_path(self.target.path).name)


__all__ = ["AtomicOutput", "count_lines", "open_input", "output_target", "partial_path",
           "read_lines"]
