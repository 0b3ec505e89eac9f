"""A model named by its Hugging Face ``config.json``: a local file, a folder holding one, or a
Hub id (``meta-llama/Llama-3.1-8B``, fetched with ``huggingface_hub`` and kept in its cache).

Anything with a slash or ending in ``.json`` is such a reference: catalog ids have neither.
A path that exists is read from disk; a name like ``org/model`` that is no path here is a Hub
id. Reading is bounded like every other input file (size, nesting, regular files only).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import re
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.catalog.models import ModelPreset
from engine.errors import InputError
from engine.files.jsonio import parse_json
from engine.files.yamlio import read_text

CONFIG_NAME = "config.json"
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
"""``owner/name`` as the Hub spells repository ids."""
HUB_INSTALL = "pip install huggingface_hub"


CONFIG_REFERENCE = r"[/\\]|\.[Jj][Ss][Oo][Nn]$"
"""A model answer that names a config: it has a slash or ends in ``.json`` (a regular
expression JSON Schema can use too)."""


def is_config_reference(text: str) -> bool:
    """Whether a model answer names a config rather than a catalog id."""
    return re.search(CONFIG_REFERENCE, text) is not None


def load_model_config(reference: str) -> ModelPreset:
    """The preset a config describes, named by ``reference`` (the text the user gave)."""
    from engine.answers.hf_shape import preset_from_config  # only when a config is named

    path = locate_config(reference)
    # errors name the file as the user wrote it (``./x.json``, not ``x.json``)
    shown = reference if path == Path(reference).expanduser() else str(path)
    try:
        text = read_text(path)
    except InputError as exc:
        raise InputError(exc.message, path=shown) from None
    return preset_from_config(parse_json(text, path=shown), path=shown, name=reference)


def config_problem(reference: str) -> str | None:
    """Why ``reference`` names no readable model config (None when it does)."""
    try:
        load_model_config(reference)
    except InputError as exc:
        return str(exc)
    return None


def locate_config(reference: str) -> Path:
    """The config file a reference names: the file, ``config.json`` in the folder, or the
    Hub's copy (downloaded once into the Hugging Face cache)."""
    path = Path(reference).expanduser()
    kind = _kind(path, reference)
    if kind == "folder":
        found = path / CONFIG_NAME
        if _kind(found, reference) is None:
            raise InputError(f"the folder holds no {CONFIG_NAME}", path=reference)
        return found
    if kind is not None or not HUB_ID.fullmatch(reference) or reference.endswith(".json"):
        return path  # read_text refuses what is no regular file, or says "file not found"
    return hub_config(reference)


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


def hub_config(repo_id: str) -> Path:
    """``config.json`` of a Hub model, from the Hugging Face cache or downloaded into it."""
    hub = _hub_module(repo_id)
    try:
        with _quiet_hub():
            return Path(hub.hf_hub_download(repo_id=repo_id, filename=CONFIG_NAME))
    except Exception as exc:  # offline, gated, missing, HTTP errors: each is one line
        raise InputError(f"not a local file or folder, and its {CONFIG_NAME} could not be "
                         f"fetched from the Hugging Face Hub ({_reason(exc)}); download it "
                         "and give its path", path=repo_id) from None


@contextlib.contextmanager
def _quiet_hub() -> Iterator[None]:
    """No retry notices or warnings from huggingface_hub: a failure is our one line."""
    logger = logging.getLogger("huggingface_hub")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def _hub_module(repo_id: str) -> Any:
    try:
        return importlib.import_module("huggingface_hub")
    except ImportError:
        raise InputError("not a local file or folder; reading a Hub id needs huggingface_hub "
                         f"({HUB_INSTALL}) and a network, or give the path of the model's "
                         f"{CONFIG_NAME}", path=repo_id) from None


def _reason(exc: Exception) -> str:
    """The first line of an exception, short, with its class name (``OfflineModeIsEnabled``)."""
    first = (str(exc).strip().splitlines() or [""])[0]
    first = first if len(first) <= 120 else first[:119] + "…"
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
