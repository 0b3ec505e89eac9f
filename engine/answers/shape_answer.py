"""The ``model_shape`` answer checked against the answers beside it: kept when given, read
from the config the model names where answers come in, refused everywhere else (a replay, a
batch line), and refused beside a catalog model or a bare size, which have shapes of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from engine.answers.check import AnswerOrigin
from engine.answers.hf_config import is_config_reference, shape_of_config
from engine.answers.model_shape import SHAPE_FIELD, ModelShape
from engine.catalog.load import Catalog
from engine.errors import AnswerError, InputError
from engine.files.yamlio import line_of, type_name


def checked_shape(value: Any, origin: AnswerOrigin, *, from_set: bool) -> ModelShape | None:
    """A ``model_shape`` answer: null, a shape, or a mapping that makes one."""
    if value is None or isinstance(value, ModelShape):
        return value
    if from_set:
        raise origin.error(SHAPE_FIELD, "is read from the config --model names (or written in "
                                        "an answers file), not given with --set", from_set=True)
    if not isinstance(value, Mapping):
        raise origin.error(SHAPE_FIELD, f"expected a mapping of the model's figures, got "
                                        f"{type_name(value)}")
    try:
        return ModelShape.model_validate(value)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown key"
        elif error["type"] == "missing":
            message = "required key is missing"
        field = f"{SHAPE_FIELD}.{where}" if where else SHAPE_FIELD
        line = line_of(origin.data, (SHAPE_FIELD, *error["loc"][:1])) if origin.data else None
        raise AnswerError(message[:1].lower() + message[1:], path=origin.path, line=line,
                          field=field) from None


def with_model_shape(values: dict[str, Any], catalog: Catalog, origin: AnswerOrigin,
                     set_keys: set[str], *, read_model_files: bool) -> None:
    """``model_shape`` for a model named by its config: kept when given, read from the
    config with ``read_model_files``, refused otherwise; refused beside a catalog model or a
    bare size, which have shapes of their own."""
    model, shape = values.get("model"), values.get(SHAPE_FIELD)
    named_by_config = isinstance(model, str) and model not in catalog.models and (
        is_config_reference(model))
    if shape is not None and not named_by_config:
        raise origin.error(SHAPE_FIELD, "describes a model named by its config (a path or Hub "
                                        "id as model:); a catalog model or a bare size has a "
                                        "shape of its own")
    if shape is not None or not named_by_config:
        return
    from_set = "model" in set_keys
    if not read_model_files:
        raise origin.error("model", "names a model's config, which is read only where answers "
                                    "come in (recommend, whatif, ask, import; batch with "
                                    "--allow-model-files); give its shape as model_shape",
                           from_set=from_set)
    try:
        values[SHAPE_FIELD] = shape_of_config(str(model))
    except InputError as exc:
        raise origin.error("model", str(exc), from_set=from_set) from None
