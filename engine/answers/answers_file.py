"""The questionnaire's answers file: written after every answer, atomically (a complete
temporary file renamed over the old one), so a session killed at any moment leaves the
answers given so far in a file that ``ask --answers FILE`` resumes and ``recommend --answers
FILE`` reads once it is complete."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from engine.catalog.load import Catalog
from engine.errors import AnswerError

DEFAULT_NAME = "gpu-advisor-answers"
HEADER = ("# gpu-advisor answers, saved as they are given.\n"
          "# Resume: gpu-advisor ask --answers THIS_FILE\n"
          "# Repeat: gpu-advisor recommend --answers THIS_FILE\n")


def fresh_path(directory: Path) -> Path:
    """``gpu-advisor-answers.yaml`` in ``directory``, or ``-2``, ``-3``… when taken: a
    new session never overwrites an earlier one's answers."""
    for number in range(1, 10_000):
        suffix = "" if number == 1 else f"-{number}"
        path = directory / f"{DEFAULT_NAME}{suffix}.yaml"
        if not path.exists() and not path.is_symlink():
            return path
    raise AnswerError("no free name for an answers file here; give one with --answers FILE",
                      path=str(directory))


def written_by_ask(path: Path) -> bool:
    """Whether ``path`` is one of our answers files (a YAML file that starts with our
    header): only those are resumed in place; another file is read, never rewritten."""
    if path.suffix.lower() == ".json":
        return False
    try:
        with path.open(encoding="utf-8") as handle:
            return handle.readline() == HEADER.splitlines(keepends=True)[0]
    except (OSError, UnicodeDecodeError):
        return False


def answers_data(answers: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    """The answers in questionnaire order, as an answers file holds them (lists, not tuples)."""
    order = [q.id for q in catalog.questions if q.id in answers]
    return {key: list(answers[key]) if isinstance(answers[key], tuple) else answers[key]
            for key in order}


def render(data: Mapping[str, Any], path: Path) -> str:
    """The file's text: JSON for a ``.json`` path, else YAML with a header."""
    if path.suffix.lower() == ".json":
        return json.dumps(data, indent=2) + "\n"
    return HEADER + (yaml.safe_dump(dict(data), sort_keys=False) if data else "")


def check_writable(path: Path) -> None:
    """Refuse, before any question, a file the answers could not be saved to."""
    target = path.resolve()
    if target.exists() and not target.is_file():
        raise AnswerError("not a regular file; the answers cannot be saved there",
                          path=str(path))
    _write(target, b"", probe=True, shown=path)


def write_answers(path: Path, data: Mapping[str, Any]) -> None:
    """Replace ``path`` (through a symbolic link, if it is one) with the answers."""
    _write(path.resolve(), render(data, path).encode("utf-8"), probe=False, shown=path)


def _write(target: Path, content: bytes, *, probe: bool, shown: Path) -> None:
    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-",
                                    suffix=".tmp")
    except OSError as exc:
        raise AnswerError(f"cannot write ({exc.strerror})", path=str(shown)) from None
    temporary = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        if not probe:
            temporary.chmod(_mode_of(target))
            temporary.replace(target)
    except OSError as exc:
        raise AnswerError(f"cannot write ({exc.strerror})", path=str(shown)) from None
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _mode_of(target: Path) -> int:
    """The existing file's permissions, or ``rw-r--r--`` for a new one."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o644
