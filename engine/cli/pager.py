"""Output longer than the screen goes through a pager on a terminal, as git does: never when
piped, never with ``--no-pager`` or ``NO_PAGER``; ``GPU_ADVISOR_PAGER``, else ``PAGER``,
else ``less`` (``-FRX``: quit if one screen, keep colours, leave the text on screen)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

DEFAULT = "less"
LESS_FLAGS = "FRX"


def show(text: str, *, allowed: bool = True) -> None:
    """Write ``text`` to stdout, through the pager where it runs over a terminal screen."""
    command = _pager() if allowed else None
    if command is None or text.count("\n") < shutil.get_terminal_size().lines:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    env = {**os.environ, "LESS": os.environ.get("LESS", LESS_FLAGS)}
    try:
        subprocess.run(command, input=text.encode("utf-8"), env=env, check=False)
    except OSError:  # no such pager: the text is what matters
        sys.stdout.write(text)
        sys.stdout.flush()


def _pager() -> list[str] | None:
    """The pager to run, or None (not a terminal, or turned off)."""
    if not (sys.stdout.isatty() and sys.stdin.isatty()) or os.environ.get("NO_PAGER"):
        return None
    chosen = os.environ.get("GPU_ADVISOR_PAGER", os.environ.get("PAGER", DEFAULT)).strip()
    if chosen in ("", "cat"):
        return None
    try:
        return shlex.split(chosen)
    except ValueError:
        return None
