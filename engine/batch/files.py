"""Batch input and output files: lines read within a bound, results written atomically.

Reading (:func:`open_input`, :func:`read_lines`): the input must be a regular file (a FIFO or
device is refused before it could block), and no line costs more memory than the policy's
limit: a longer line is skipped in bounded pieces and stands as
:class:`~engine.batch.lines.Oversized` (its length only), which
:func:`engine.batch.lines.evaluate_line` turns into that line's error record.

Writing (:func:`output_target`, :class:`AtomicOutput`): ``--out`` may not be the input (same
device and inode: directly, through a symlink or a hardlink) nor anything but a regular file.
Records go to a temporary file beside the target (symlinks resolved), which replaces the target
only when the run completes; any failure removes it and leaves an existing target untouched,
byte for byte. An interrupted run (``KeyboardInterrupt``: Ctrl-C, or SIGTERM in the CLI) also
leaves the target untouched and keeps the complete records written so far, in input order, in
``TARGET.partial`` (replacing an older one).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from engine.batch.lines import Line, Oversized
from engine.errors import InputError

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
            raise InputError(f"not a regular file ({_kind(mode)}); expected a file of JSON "
                             "lines", path=str(path))
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


def output_target(out_path: Path, source: BinaryIO, in_path: Path) -> Path:
    """The file ``out_path`` names (symlinks resolved), checked before anything is written.

    Refused (exit 2) when it, or its partial file, is the input (same device and inode) or
    exists and is not a regular file (a directory, FIFO, device, socket).
    """
    target = Path(os.path.realpath(out_path))
    opened = os.fstat(source.fileno())
    for path in (target, partial_path(target)):
        try:
            found = path.stat()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=str(path)) from None
        what = "--out" if path == target else f"the partial file {path} of --out"
        if not stat.S_ISREG(found.st_mode):
            raise InputError(f"{what} is a {_kind(found.st_mode)}, not a regular file",
                             path=str(out_path))
        if (found.st_dev, found.st_ino) == (opened.st_dev, opened.st_ino):
            raise InputError(f"{what} is the input file {in_path}; choose another output "
                             "file", path=str(out_path))
    return target


class AtomicOutput:
    """Output records written to a temporary file beside ``target``, which :meth:`commit`
    renames over it. Leaving the block without a commit removes the temporary file, except
    on ``KeyboardInterrupt``, where the complete records so far become ``TARGET.partial``.
    """

    def __init__(self, target: Path, shown: Path | None = None) -> None:
        self.target = target
        self.shown = str(shown if shown is not None else target)
        self.records = 0
        self.committed = False
        self.partial: Path | None = None
        self._fd = -1
        self._temp: Path | None = None
        self._size = 0
        self._pending = (0, 0)

    def __enter__(self) -> AtomicOutput:
        self._fd, self._temp = self._create_temp()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.committed or self._temp is None:
            return
        if not self._temp.exists():  # interrupted between the rename and its bookkeeping
            self.committed = True
        elif exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
            self._keep_partial()
        else:
            self._discard()

    def write(self, records: Sequence[str]) -> None:
        """Append records, one per line (a lone surrogate is written as its JSON escape)."""
        data = "".join(f"{record}\n" for record in records).encode("utf-8", "backslashreplace")
        self._pending = (self._size + len(data), self.records + len(records))
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=self.shown) from None
        self._size, self.records = self._pending

    def commit(self) -> None:
        """Make the records the target's content, in one rename."""
        assert self._temp is not None
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=self.shown) from None
        os.close(self._fd)
        self._fd = -1
        self._temp.replace(self.target)
        self.committed = True

    def _create_temp(self) -> tuple[int, Path]:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        while True:
            temp = self.target.with_name(f"{self.target.name}.{secrets.token_hex(4)}.tmp")
            try:
                fd = os.open(temp, flags, 0o666)  # the umask applies, as for any new file
            except FileExistsError:
                continue
            except OSError as exc:
                raise InputError(f"cannot write: {exc.strerror or exc}",
                                 path=self.shown) from None
            with contextlib.suppress(FileNotFoundError):  # an existing target keeps its mode
                os.fchmod(fd, stat.S_IMODE(self.target.stat().st_mode))
            return fd, temp

    def _keep_partial(self) -> None:
        """Trim anything after the last complete write, then rename to ``TARGET.partial``."""
        assert self._temp is not None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        size, records = self._pending
        if self._temp.stat().st_size == size:
            self.records = records
        else:  # interrupted inside a write: drop its incomplete part
            os.truncate(self._temp, self._size)
        partial = partial_path(self.target)
        self._temp.replace(partial)
        self.partial = partial

    def _discard(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._temp is not None:
            with contextlib.suppress(FileNotFoundError):
                self._temp.unlink()


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "device"),
             (stat.S_ISBLK, "device"), (stat.S_ISSOCK, "socket"))
    return next((name for test, name in kinds if test(mode)), "special file")


__all__ = ["AtomicOutput", "count_lines", "open_input", "output_target", "partial_path",
           "read_lines"]
