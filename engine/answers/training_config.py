"""What an import found: typed access to a training config's keys (each refusal names the
file, line and key), the answers read with where each came from, and the answers file text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from engine.answers.hf_config import is_config_reference, is_local, shape_of_config
from engine.answers.model import check_values, validate_answers
from engine.answers.model_shape import SHAPE_FIELD, ModelShape
from engine.answers.quoted import shown
from engine.catalog.load import Catalog
from engine.errors import AnswerError, InputError
from engine.files.yamlio import line_of, printable, type_name


class Settings:
    """The keys of one training config, read with their types checked."""

    def __init__(self, data: Mapping[str, Any], path: str) -> None:
        self.data = data
        self.path = path
        self.consulted: set[str] = set()

    def error(self, key: str, message: str) -> InputError:
        """A refusal of ``key``, located at its line."""
        return InputError(message, path=self.path, line=line_of(self.data, (key,)), field=key)

    def get(self, key: str) -> Any:
        """The value of ``key`` (None when absent or null)."""
        self.consulted.add(key)
        return self.data.get(key)

    def text(self, key: str) -> str | None:
        """A string (None when absent)."""
        value = self.get(key)
        if value is not None and not isinstance(value, str):
            raise self.error(key, f"expected text, got {type_name(value)} {shown(value)}")
        return value

    def flag(self, key: str) -> bool | None:
        """True or false (None when absent)."""
        value = self.get(key)
        if value is not None and not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {shown(value)}")
        return value

    def number(self, key: str) -> float | int | None:
        """A finite number (None when absent)."""
        value = self.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise self.error(key, f"expected a number, got {shown(value)}")
        try:
            finite = math.isfinite(value)  # an int too large for a float raises
        except OverflowError:
            finite = False
        if not finite:
            size = f"a {len(str(abs(value)))}-digit number" if isinstance(value, int) else (
                shown(value))
            raise self.error(key, f"expected a finite number, got {size}")
        return value

    def whole(self, key: str) -> int | None:
        """A whole number (None when absent)."""
        value = self.number(key)
        if isinstance(value, float):
            if not value.is_integer():
                raise self.error(key, f"expected a whole number, got {shown(value)}")
            return int(value)
        return value


@dataclass
class Imported:
    """The answers a training config gives, and what could not be read from it."""

    tool: str
    path: str
    answers: dict[str, Any] = field(default_factory=dict)
    read: list[tuple[str, str]] = field(default_factory=list)
    """(answer, where it came from), in the order read."""
    unread: list[tuple[str, str]] = field(default_factory=list)
    """(answer or key, why it was not read)."""
    ignored: list[str] = field(default_factory=list)
    """Keys of the config that do not change the hardware."""
    model_shape: ModelShape | None = None
    """The shape of a model named by its config (read once, to check the answers)."""

    def report(self) -> list[str]:
        """One line per answer read, per answer not read, and one for the keys ignored."""
        lines = [f"read {name}: {_value(self.answers[name])} ({why})"
                 for name, why in self.read]
        lines += [f"not read {name}: {why}" for name, why in self.unread]
        if self.ignored:
            lines.append(f"ignored {len(self.ignored)} other key(s) that do not change the "
                         f"hardware: {shown(', '.join(self.ignored))}")
        return lines


def _value(value: Any) -> str:
    return shown(yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("\n..."))


class Answering:
    """Collects answers for one import, each checked as the questionnaire checks it."""

    def __init__(self, settings: Settings, imported: Imported, catalog: Catalog) -> None:
        self.settings = settings
        self.imported = imported
        self.catalog = catalog

    def put(self, name: str, value: Any, why: str, *, key: str | None = None) -> None:
        """Answer ``name`` with ``value`` read from ``key`` (refused there when out of range)."""
        try:
            checked = check_values({name: value}, self.catalog)[name]
        except AnswerError as exc:
            if key is None:
                raise
            raise self.settings.error(key, exc.message) from None
        self.imported.answers[name] = checked
        self.imported.read.append((name, why))

    def miss(self, name: str, why: str) -> None:
        """Say why ``name`` could not be read."""
        self.imported.unread.append((name, why))


# ---------------------------------------------------------------- the model
_VARIANT = re.compile(r"(-(instruct|chat|it|hf|base))+$")
_FIRST_RELEASE = "-v0.1"
"""Mistral's first releases carry it; the catalog's unversioned presets are those."""


def catalog_model_named(name: str, catalog: Catalog) -> str | None:
    """The catalog preset a Hub repository name denotes (``NousResearch/Meta-Llama-3-8B`` →
    ``llama-3-8b``), ignoring the owner, a ``Meta-`` prefix, instruct/chat variants (same
    weights shape) and a first-release ``-v0.1``; None when no preset has that name."""
    base = name.rsplit("/", 1)[-1].lower().removeprefix("meta-")
    for candidate in (base, _VARIANT.sub("", base.removesuffix(_FIRST_RELEASE)),
                      _VARIANT.sub("", base).removesuffix(_FIRST_RELEASE)):
        if candidate in catalog.models:
            return candidate
    return None


def put_model(answering: Answering, key: str, override: str | None) -> None:
    """The model: ``--model`` if given, else the config's ``key`` as a catalog id, the
    catalog preset its Hub name denotes, a local config.json, or a Hub id."""
    if override is not None:
        try:
            answering.put("model", override, "--model")
            _read_shape(answering, override)
        except InputError as exc:
            raise InputError(exc.message if isinstance(exc, AnswerError) else str(exc),
                             field="--model") from None
        return
    name = answering.settings.text(key)
    if name is None:
        raise answering.settings.error(key, "required key is missing (the model to train); "
                                            "or give --model")
    way_out = "; or give --model with a catalog id or a config.json"
    try:
        local = is_config_reference(name) and is_local(name)
    except InputError as exc:
        raise answering.settings.error(key, f"{exc}{way_out}") from None
    found = name if name in answering.catalog.models else None if local else (
        catalog_model_named(name, answering.catalog))
    if found is not None:
        why = f"{key} {shown(name)}" + ("" if found == name else
                                         ", the catalog preset of that name")
        answering.put("model", found, why, key=key)
        return
    if not local:
        why = f"{key} {shown(name)}, no catalog preset: its config.json from the Hub"
    else:
        why = f"{key} {shown(name)}: its config.json"
    try:
        answering.put("model", name, why, key=key)
    except InputError as exc:
        raise InputError(exc.message + way_out, path=exc.path, line=exc.line,
                         field=exc.field) from None
    try:
        _read_shape(answering, name)
    except InputError as exc:
        raise answering.settings.error(key, f"{exc}{way_out}") from None


def _read_shape(answering: Answering, reference: str) -> None:
    """The shape of the config a model answer names, read once (the import is where these
    answers come in)."""
    if reference not in answering.catalog.models and is_config_reference(reference):
        answering.imported.model_shape = shape_of_config(reference)


# ---------------------------------------------------------------- the answers file
def answers_text(imported: Imported, catalog: Catalog) -> str:
    """The answers as a YAML answers file, each with a comment saying where it came from.

    The text is parsed back and validated before it is returned: what is written is exactly
    what ``recommend --answers`` will accept.
    """
    why = dict(imported.read)
    lines = [f"# gpu-advisor answers imported from the {imported.tool} config "
             f"{_comment(imported.path)}",
             "# (gpu-advisor import); every answer not listed takes its default."]
    for name, value in imported.answers.items():
        scalar = yaml.safe_dump({name: value}, default_flow_style=True, width=1_000_000)
        lines.append(f"{scalar.strip()[1:-1]}  # {_comment(why[name])}")
    lines += [f"# not read: {_comment(f'{name}: {text}')}" for name, text in imported.unread]
    text = "\n".join(lines) + "\n"
    _check_round_trip(text, imported, catalog)
    return text


_LINE_BREAKS = {"\r": "\\r", "\n": "\\n", "\u2028": "\\u2028", "\u2029": "\\u2029"}
"""What YAML reads as the end of a line (U+0085, NEL, is a control code, escaped anyway)."""


def _comment(text: str) -> str:
    """Text safe inside a YAML comment: one line (no line break YAML knows), control codes
    escaped."""
    for brk, escaped in _LINE_BREAKS.items():
        text = text.replace(brk, escaped)
    return printable(text)


def _check_round_trip(text: str, imported: Imported, catalog: Catalog) -> None:
    data = yaml.safe_load(text)
    if data != imported.answers:  # pragma: no cover - guards the rendering above
        raise AssertionError(f"answers file does not read back: {data!r}")
    shape = {SHAPE_FIELD: imported.model_shape} if imported.model_shape else {}
    validate_answers({**data, **shape}, catalog, require_model=True)
