"""Turn pydantic validation errors into one precise line: ``file:line: field: message``."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from engine.errors import InputError
from engine.files.yamlio import dotted, line_of, type_name

M = TypeVar("M", bound=BaseModel)


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """A ``; did you mean 'x'?`` suffix when a close match exists, else an empty string: a
    name the word begins (``h100`` → ``h100-sxm``, the shortest of them) before a merely
    similar one (``h200``)."""
    names = list(candidates)
    started = sorted((n for n in names if word and n.startswith(word) and n != word),
                     key=lambda n: (len(n), n))
    matches = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    if len(started) > 1 and not (matches and matches[0] in started):
        shown = ", ".join(f"'{n}'" for n in started[:3])
        return f"; did you mean one of {shown}{', …' if len(started) > 3 else ''}?"
    if started:
        best = matches[0] if matches and matches[0] in started else started[0]
        return f"; did you mean '{best}'?"
    return f"; did you mean '{matches[0]}'?" if matches else ""


def build(
    model: type[M],
    data: Any,
    *,
    path: str,
    error: type[InputError] = InputError,
) -> M:
    """Validate ``data`` into ``model`` or raise ``error`` located at the first problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise located(exc, model, data, path=path, error=error) from None


def located(
    exc: ValidationError,
    model: type[BaseModel],
    data: Any,
    *,
    path: str,
    error: type[InputError] = InputError,
) -> InputError:
    """The first error of ``exc`` (an unknown key first) as ``error`` with file, line and field."""
    errors = exc.errors(include_url=False)
    # A misspelt key shows up as both "missing" and "extra"; the extra one can say did-you-mean.
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(first["loc"])
    message = _message(first, model, loc)
    if first["type"] in ("model_type", "dict_type") and not loc:
        message = f"expected a mapping at the top level, got {type_name(data)}"
    return error(message, path=path, line=line_of(data, loc), field=dotted(loc, data) or None)


def _message(err: Any, model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        known = _fields_at(model, loc[:-1])
        return f"unknown key{did_you_mean(str(loc[-1]), known)}"
    if kind == "missing":
        return "required key is missing"
    msg = str(err["msg"])
    if kind.startswith("finite_number") or "finite" in msg:  # not float_parsing: "seven"
        return "expected a finite number (NaN and Infinity are not allowed)"
    value = err.get("input")
    if kind == "float_type" and isinstance(value, int) and not isinstance(value, bool):
        return f"expected a finite number; a {len(str(abs(value)))}-digit integer is too large"
    return msg[0].lower() + msg[1:] if msg else kind


def _fields_at(model: type[BaseModel], loc: Sequence[Any]) -> list[str]:
    """Best-effort: the field names of the nested model that ``loc`` points into."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        current = _inner_model(field.annotation)
    return list(getattr(current, "model_fields", {}))


def _inner_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _inner_model(arg)
        if found is not None:
            return found
    return None
