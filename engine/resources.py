"""Where the bundled policy (rules/, catalog/) lives, in a wheel or a source checkout."""

from __future__ import annotations

from pathlib import Path


def bundled_dir(name: str) -> Path:
    """The shipped ``rules`` or ``catalog`` directory.

    In an installed wheel they are package data under ``engine/_data/``; in an editable
    install or a source checkout they are the top-level directories of the repository.
    (The package is always a directory on disk: ``importlib.resources`` is not needed, and
    not imported, to find them.)
    """
    here = Path(__file__).resolve().parent
    packaged = here / "_data" / name
    if packaged.is_dir():
        return packaged
    source = here.parent / name
    if source.is_dir():
        return source
    raise FileNotFoundError(f"bundled {name}/ directory not found in the installed package")
