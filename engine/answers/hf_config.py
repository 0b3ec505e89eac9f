"""A model named by its Hugging Face ``config.json``: a local file, a folder holding one, or a
Hub id (``meta-llama/Llama-3.1-8B``), read into the ``model_shape`` answer where answers come
in (see :mod:`engine.answers.model_shape`); nothing after that reads the file again.

Anything with a slash or ending in ``.json`` is such a reference: catalog ids have neither.
A path that exists is read from disk; a name like ``org/model`` that is no path here is a Hub
id. Reading is bounded like every other input file (size, nesting, regular files only); a Hub
download is bounded too (:mod:`engine.answers.hub`: a timeout, and the size limit checked
before and while downloading).
"""

from __future__ import annotations

import hashlib
import re
import stat
from collections.abc import Collection
from pathlib import Path

from engine.answers.model_shape import ModelShape, shape_of_preset
from engine.catalog.models import ModelPreset
from engine.errors import InputError
from engine.files.jsonio import parse_json
from engine.files.yamlio import read_text

CONFIG_NAME = "config.json"
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
"""``owner/name`` as the Hub spells repository ids."""

CONFIG_REFERENCE = r"[/\\]|\.[Jj][Ss][Oo][Nn]$"
"""A model answer that names a config: it has a slash or ends in ``.json`` (a regular
expression JSON Schema can use too)."""


def is_config_reference(text: str) -> bool:
    """Whether a model answer names a config rather than a catalog id."""
    return re.search(CONFIG_REFERENCE, text) is not None


def shape_of_config(reference: str) -> ModelShape:
    """The ``model_shape`` answer for the config ``reference`` names (the text the user
    gave), its source the name and sha256 of the bytes read."""
    text, shown, name = _config_text(reference)
    preset = _preset(text, shown, reference)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return shape_of_preset(preset, f"{name} sha256:{digest}")


def named_shape(reference: str | None, catalog_models: Collection[str],
                flag: str = "--model") -> ModelShape | None:
    """The shape of the config a model reference (``flag``'s value) names, or None for a
    catalog id or no reference; a refusal names ``flag``."""
    if reference is None or reference in catalog_models or not is_config_reference(reference):
        return None
    try:
        return shape_of_config(reference)
    except InputError as exc:
        raise InputError(str(exc), field=flag) from None


def load_model_config(reference: str) -> ModelPreset:
    """The preset a config describes, named by ``reference`` (the text the user gave)."""
    text, shown, _ = _config_text(reference)
    return _preset(text, shown, reference)


def _preset(text: str, shown: str, reference: str) -> ModelPreset:
    from engine.answers.hf_shape import preset_from_config  # only when a config is named

    return preset_from_config(parse_json(text, path=shown), path=shown, name=reference)


def _config_text(reference: str) -> tuple[str, str, str]:
    """The config's text, how errors name it, and its file name."""
    path = locate_config(reference)
    if path is None:
        from engine.answers.hub import hub_config_text

        return hub_config_text(reference, CONFIG_NAME), reference, CONFIG_NAME
    # errors name the file as the user wrote it (``./x.json``, not ``x.json``)
    shown = reference if path == model_path(reference) else str(path)
    try:
        return read_text(path), shown, path.name
    except InputError as exc:
        raise InputError(exc.message, path=shown) from None


def config_problem(reference: str) -> str | None:
    """Why ``reference`` names no readable model config (None when it does)."""
    try:
        shape_of_config(reference)
    except InputError as exc:
        return str(exc)
    return None


def model_path(reference: str) -> Path:
    """The path a reference names, ``~`` and ``~user`` expanded (an unknown user is an
    InputError naming the reference, not a RuntimeError)."""
    try:
        return Path(reference).expanduser()
    except RuntimeError:
        user = reference[1:].split("/", 1)[0]
        raise InputError(f"cannot expand ~{user}: no such user's home folder",
                         path=reference) from None


def is_local(reference: str) -> bool:
    """Whether a config reference names something on this machine (False for a Hub id);
    a path that cannot even be looked at is an InputError naming it."""
    return _kind(model_path(reference), reference) is not None


def locate_config(reference: str) -> Path | None:
    """The config file a reference names: the file, ``config.json`` in the folder, or None
    for a Hub id (no such path here)."""
    path = model_path(reference)
    kind = _kind(path, reference)
    if kind == "folder":
        found = path / CONFIG_NAME
        if _kind(found, reference) is None:
            raise InputError(f"the folder holds no {CONFIG_NAME}", path=reference)
        return found
    if kind is not None or not HUB_ID.fullmatch(reference) or reference.endswith(".json"):
        return path  # read_text refuses what is no regular file, or says "file not found"
    return None


def _kind(path: Path, reference: str) -> str | None:
    """``folder``, ``other`` (a file, or something read_text will refuse) or None (absent)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # too long a name, a NUL byte, no permission
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read ({reason})", path=reference) from None
    return "folder" if stat.S_ISDIR(info.st_mode) else "other"
