"""The questionnaire's answers file: written after every answer, atomically (a complete
temporary file renamed over the old one), so a session killed at any moment leaves the
answers given so far in a file that ``ask --answers FILE`` resumes and ``recommend --answers
FILE`` reads once it is complete. The header's first line marks a file as the
questionnaire's own: one that starts with it is resumed and replaced in place, any other
existing file only with ``--force`` (written by :mod:`engine.files.safe_write`)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from engine.catalog.load import Catalog
from engine.errors import AnswerError
from engine.files.safe_write import check_target, write_file

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
    header): only those are resumed in place and replaced without ``--force``; another file
    is read, never rewritten. A FIFO or device is never opened (it is not ours)."""
    if path.suffix.lower() == ".json":
        return False
    marker = HEADER.splitlines(keepends=True)[0].encode()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    with os.fdopen(fd, "rb") as handle:
        return stat.S_ISREG(os.fstat(fd).st_mode) and handle.read(len(marker)) == marker


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


def check_writable(path: Path, *, force: bool = False) -> None:
    """Refuse, before any question, a file the answers could not be saved to: not a regular
    file, in a missing or unwritable folder, or an existing file that is not ours (without
    ``force``)."""
    check_target(path, force=force, ours=written_by_ask)


def write_answers(path: Path, data: Mapping[str, Any], *, force: bool = False) -> None:
    """Replace ``path`` (through a symbolic link, if it is one) with the answers."""
    write_file(path, render(data, path).encode("utf-8"), force=force, ours=written_by_ask)
