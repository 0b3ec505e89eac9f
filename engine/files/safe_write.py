"""The one writer of every file the program writes (answers files, ``--out``, schemas, charts,
batch results, cache entries and keys): it refuses what it should not replace, as git
refuses to clobber an untracked file.

- **Regular files only.** The target is looked at with ``lstat`` before anything is opened:
  a FIFO, socket, device or directory is refused, so nothing blocks and nothing special is
  replaced (a rename over ``/dev/null`` would replace the device).
- **No planted links.** A symbolic link the user named is followed, to a regular file only;
  a link inside a folder the program was told to write into is refused, never followed.
- **No overwrite without ``--force``,** except of a file the program itself wrote and keeps
  (``ours``: an answers file that starts with the questionnaire's header line).
- **Atomic, mode kept.** The data goes to a new temporary file in the same folder (opened
  ``O_EXCL | O_NOFOLLOW``), flushed to disk, then renamed over the target: the target is
  replaced whole or left as it was, and keeps its permissions; a new file gets the usual
  ``0666`` less the umask. Every failure removes the temporary file.
- **Checked first.** :func:`check_target` runs before a command computes or prints anything
  (it creates and removes a temporary file to prove the folder writable, which also works
  as root); :func:`write_checked` checks again just before the rename.

Every refusal is an :class:`~engine.errors.InputError`: one line naming the path and why.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from engine.errors import InputError

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_CREATE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0))
_KINDS = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link"))
_NAME_KEPT = 200
"""How much of a file's name its temporary file repeats (a name is at most 255 bytes)."""

Ours = Callable[[Path], bool]
"""Whether an existing regular file is one the program wrote and may replace unasked."""


def kind_of(mode: int) -> str:
    """``a FIFO (named pipe)``, ``a socket``…: what a non-regular file is, for messages."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


@dataclass(frozen=True)
class Target:
    """A checked place to write: the ``folder`` (links resolved) and the file ``name`` in it.

    ``shown`` is the path as the user gave it (messages name it), ``field`` the flag that
    gave it; ``mode`` is the existing file's permissions (None: a new file).
    """

    shown: Path
    folder: Path
    name: str
    mode: int | None
    field: str | None = None
    force: bool = False

    @property
    def path(self) -> Path:
        """Where the data lands."""
        return self.folder / self.name

    def refused(self, why: str) -> InputError:
        """One line naming the path and why."""
        return InputError(why, path=str(self.shown), field=self.field)


def check_target(path: Path, *, force: bool, field: str | None = None,
                 ours: Ours | None = None) -> Target:
    """Where ``path`` may be written, or an InputError saying why not (nothing written).

    A link ``path`` itself is followed (the user named it), to a regular file only.
    """
    shown = Target(path, path.parent, path.name, None, field, force)
    found = _lstat(path, shown)
    real = path
    if found is not None and stat.S_ISLNK(found.st_mode):
        real = Path(os.path.realpath(path))
        found = _lstat(real, shown)
        if found is None:
            raise shown.refused("is a symbolic link to a missing file; name the file itself")
    return _checked(shown, real.parent, real.name, found, ours)


def check_in_folder(folder: Path, names: Iterable[str], *, force: bool,
                    field: str | None = None) -> list[Target]:
    """The files ``names`` in ``folder`` (made when missing), each checked: a symbolic link
    planted there is refused, not followed. All are checked before any is written."""
    place = Target(folder, folder.parent, folder.name, None, field, force)
    found = _lstat(folder, place)
    if found is not None and stat.S_ISLNK(found.st_mode):  # a link the user named: followed
        found = _lstat(Path(os.path.realpath(folder)), place)
        if found is None:
            raise place.refused("is a symbolic link to a missing folder")
    if found is not None and not stat.S_ISDIR(found.st_mode):
        raise place.refused(f"is not a folder ({kind_of(found.st_mode)})")
    if found is None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise place.refused(f"cannot make the folder ({exc.strerror or exc})") from None
    targets = []
    for name in names:
        shown = Target(folder / name, folder, name, None, field, force)
        info = _lstat(folder / name, shown)
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise shown.refused(f"is a symbolic link inside {folder}; links there are not "
                                "followed")
        targets.append(_checked(shown, folder, name, info, None))
    return targets


def _checked(shown: Target, folder: Path, name: str, found: os.stat_result | None,
             ours: Ours | None) -> Target:
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise shown.refused(f"is {kind_of(found.st_mode)}, not a regular file")
    if found is not None and not shown.force and not (ours and ours(folder / name)):
        raise shown.refused("already exists; give --force to replace it")
    target = Target(shown.shown, folder, name, None if found is None else
                    stat.S_IMODE(found.st_mode), shown.field, shown.force)
    _probe(target)
    return target


def _lstat(path: Path, shown: Target) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise shown.refused(f"folder {path.parent} is not a folder") from None
    except OSError as exc:
        raise shown.refused(f"cannot write ({exc.strerror or exc})") from None


@dataclass(frozen=True)
class _Folder:
    """A folder written into: open, its files named relative to its descriptor (so the
    folder checked is the folder written) where the system allows it, else by path."""

    fd: int | None
    path: Path

    def at(self, name: str) -> str:
        """How to name ``name`` in the folder, with ``dir_fd=self.fd``."""
        return name if self.fd is not None else os.fspath(self.path / name)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)


_RELATIVE = all(f in os.supports_dir_fd for f in (os.open, os.stat, os.unlink, os.replace))
"""Whether files can be named relative to an open folder here (not on Windows)."""


def _open_folder(target: Target) -> _Folder:
    try:
        if not _RELATIVE:
            if not target.folder.is_dir():
                raise NotADirectoryError if target.folder.exists() else FileNotFoundError
            return _Folder(None, target.folder)
        return _Folder(os.open(target.folder, _DIR_FLAGS), target.folder)
    except FileNotFoundError:
        raise target.refused(f"folder {target.folder} does not exist") from None
    except NotADirectoryError:
        raise target.refused(f"folder {target.folder} is not a folder") from None
    except OSError as exc:
        raise target.refused(f"cannot write in folder {target.folder} "
                             f"({exc.strerror or exc})") from None


def _probe(target: Target) -> None:
    """Prove the folder writable: make a temporary file there and remove it."""
    folder = _open_folder(target)
    try:
        fd, temporary = _create(target, folder, 0o600)
        os.close(fd)
        os.unlink(folder.at(temporary), dir_fd=folder.fd)
    finally:
        folder.close()


def _create(target: Target, folder: _Folder, mode: int) -> tuple[int, str]:
    try:
        return _temporary(folder, target.name, mode)
    except OSError as exc:
        raise target.refused(f"cannot write in folder {target.folder} "
                             f"({exc.strerror or exc})") from None


def _temporary(folder: _Folder, name: str, mode: int) -> tuple[int, str]:
    while True:
        temporary = f".{name[:_NAME_KEPT]}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(folder.at(temporary), _CREATE_FLAGS, mode, dir_fd=folder.fd), temporary
        except FileExistsError:
            continue


def open_temporary(dir_fd: int, name: str, mode: int = 0o600) -> tuple[int, str]:
    """A new empty file beside ``name`` in the open folder (never an existing file, never
    through a link): its descriptor and name."""
    return _temporary(_Folder(dir_fd, Path()), name, mode)


def write_all(fd: int, data: bytes) -> None:
    """Every byte of ``data`` to ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def replace_in(dir_fd: int, name: str, data: bytes, mode: int = 0o600) -> None:
    """Make ``data`` the content of ``name`` in an open folder, atomically: a temporary
    file of this ``mode`` renamed over it (removed again on any failure). For folders the
    program keeps itself (the policy cache); user-named targets go through :func:`write_file`.
    """
    fd, temporary = open_temporary(dir_fd, name, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=dir_fd)
        raise


class AtomicFile:
    """A checked target written as a stream: bytes go to a temporary file beside it, which
    :meth:`commit` renames over it. Leaving the block uncommitted removes the temporary file
    (unless :meth:`keep_as` gave it another name)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.committed = False
        self._folder: _Folder | None = None
        self._fd = -1
        self._temporary: str | None = None

    def __enter__(self) -> AtomicFile:
        self._folder = _open_folder(self.target)
        try:
            # an existing file's mode is set before any byte is written; a new file's is
            # the usual 0666 less the umask
            mode = 0o600 if self.target.mode is not None else 0o666
            self._fd, self._temporary = _create(self.target, self._folder, mode)
            if self.target.mode is not None:
                os.fchmod(self._fd, self.target.mode)
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._close()

    @property
    def size(self) -> int:
        """How many bytes the temporary file holds."""
        return os.fstat(self._fd).st_size if self._fd >= 0 else 0

    def write(self, data: bytes) -> None:
        """Append ``data`` (an InputError naming the target if the disk refuses it)."""
        try:
            write_all(self._fd, data)
        except OSError as exc:
            raise self.target.refused(f"cannot write ({exc.strerror or exc})") from None

    def truncate(self, size: int) -> None:
        """Keep only the first ``size`` bytes written."""
        os.ftruncate(self._fd, size)

    def commit(self) -> None:
        """Flush to disk, check the target once more and rename the temporary file over it."""
        try:
            os.fsync(self._fd)
        except OSError as exc:
            raise self.target.refused(f"cannot write ({exc.strerror or exc})") from None
        self._recheck()
        self._move(self.target.name)
        self.committed = True

    def keep_as(self, name: str) -> Path:
        """Rename what was written so far to ``name`` in the same folder (an interrupted
        batch keeps its results as ``OUT.partial``); the target is left as it was."""
        self._move(name)
        return self.target.folder / name

    def _recheck(self) -> None:
        """Refuse what appeared at the target since it was checked (a FIFO, a link...)."""
        assert self._folder is not None
        try:
            found = os.stat(self._folder.at(self.target.name), dir_fd=self._folder.fd,
                            follow_symlinks=False)
        except FileNotFoundError:
            return
        if not stat.S_ISREG(found.st_mode):
            raise self.target.refused(f"is {kind_of(found.st_mode)}, not a regular file")
        if self.target.mode is None and not self.target.force:
            raise self.target.refused("appeared while it was being written; give --force "
                                      "to replace it")

    def _move(self, name: str) -> None:
        assert self._temporary is not None and self._folder is not None
        folder = self._folder
        try:
            os.replace(folder.at(self._temporary), folder.at(name), src_dir_fd=folder.fd,
                       dst_dir_fd=folder.fd)
        except OSError as exc:
            raise self.target.refused(f"cannot write ({exc.strerror or exc})") from None
        self._temporary = None

    def _close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._temporary is not None and self._folder is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._folder.at(self._temporary), dir_fd=self._folder.fd)
            self._temporary = None
        if self._folder is not None:
            self._folder.close()
            self._folder = None


def write_checked(target: Target, data: bytes) -> None:
    """Write ``data`` to a checked target, atomically."""
    with AtomicFile(target) as out:
        out.write(data)
        out.commit()


def write_file(path: Path, data: bytes, *, force: bool, field: str | None = None,
               ours: Ours | None = None) -> None:
    """Check ``path`` (:func:`check_target`) and write ``data`` to it."""
    write_checked(check_target(path, force=force, field=field, ours=ours), data)
