"""A team's answers: the :class:`Answers` model, generated from the questionnaire
(``catalog/questions.yaml``), and loading answers files plus ``--set key=value`` overrides
into it, each answer checked against its question and the catalog."""

from __future__ import annotations

import functools
import threading
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Literal,
    NamedTuple,
    Protocol,
    get_type_hints,
)

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    create_model,
    model_serializer,
)

from engine.answers.check import AnswerOrigin, check_answer, parse_text
from engine.answers.cross import first_problem
from engine.answers.hf_config import CONFIG_REFERENCE
from engine.answers.model_shape import SHAPE_FIELD, SHAPE_OF, ModelShape
from engine.answers.shape_answer import checked_shape, with_model_shape
from engine.catalog.load import Catalog
from engine.catalog.models import Question
from engine.errors import AnswerError, CatalogError, InputError
from engine.files.jsonio import load_data_file
from engine.files.validation import did_you_mean
from engine.files.yamlio import type_name

QUESTIONS_FILE = "catalog/questions.yaml"


class QuestionSpec(NamedTuple):
    """What a question makes of its answer's field (hashable: one model per questionnaire)."""

    id: str
    type: str
    values: tuple[Any, ...] | None
    """The choices, or the catalog's ids for a GPU or model answer."""
    min: float | None
    max: float | None
    nullable: bool
    default: Hashable
    title: str
    description: str


class AnswerFields(Protocol):
    """The answers the engine's Python reads, and the types it reads them as.

    Choices, bounds and defaults are written once, in ``catalog/questions.yaml``;
    :func:`answers_model` refuses a questionnaire that lacks one of these answers or gives it
    another type (a catalog may add questions: rules read them as facts).
    """

    workload: str
    model: str | None
    model_params_b: float | None
    method: str
    seq_len: int
    micro_batch: int
    gradient_checkpointing: bool | str
    precision: str
    training_tokens_b: float | None
    runs_per_year: float | None
    hours_per_year: float | None
    work_unknown: bool
    hours_gpu: str | None
    hours_per_run: float | None
    max_days_per_run: float | None
    usage_pattern: str
    budget_usd: float
    budget_covers: str
    upfront_capex: bool
    data_residency: str
    allowed_regions: tuple[str, ...]
    cloud_ecosystem: str
    gpu_vendors: tuple[str, ...]
    frequent_checkpoints: bool
    needs_latest_hardware: bool
    electricity_usd_per_kwh: float
    shared_small_workloads: bool
    concurrent_jobs: int
    planned_gpu: str | None
    planned_gpu_count: int
    owned_gpu: str | None
    owned_gpu_count: int
    profiled_utilisation_pct: float | None
    api_tokens_per_month_m: float | None
    proprietary_data: bool
    specialised_domain: bool
    competitive_moat: bool
    regulated_control: bool
    needs_frontier_capability: bool
    weeks_to_first_model: float | None
    ml_engineers_fte: float | None
    team_region: str
    dataset_prep_usd: float | None
    rework_share: float | None


if TYPE_CHECKING:
    _Typed = AnswerFields
else:
    _Typed = object


class Answers(BaseModel, _Typed):
    """The validated answers of one team (the public answers-file contract:
    catalog/questions.yaml, schemas/answers.schema.json).

    The base of the models :func:`answers_model` generates, one field per question; type
    checkers see the fields through :class:`AnswerFields`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    __questions__: ClassVar[tuple[QuestionSpec, ...]] = ()

    model_shape: ModelShape | None = Field(
        default=None, title="The shape of a model given by its config",
        description="Filled by --model (or a model answer naming a config.json, a folder or a "
                    "Hub id) from the file read where the answers came in; may be written by "
                    "hand. The decision is made from it, never from the file.")

    @model_serializer(mode="wrap")
    def _shape_after_model(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``model_shape`` right after ``model``, and only when there is one (answers without
        it read and write as they always did)."""
        data: dict[str, Any] = handler(self)
        shape = data.pop(SHAPE_FIELD, None)
        if shape is None:
            return data
        out: dict[str, Any] = {}
        for key, value in data.items():
            out[key] = value
            if key == "model":
                out[SHAPE_FIELD] = shape
        out.setdefault(SHAPE_FIELD, shape)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with what rebuilds its generated class in another process."""
        return _unpickle, (type(self).__questions__, self.model_dump())


def _unpickle(questions: tuple[QuestionSpec, ...], data: dict[str, Any]) -> Answers:
    return _generated(questions).model_validate(data)


# -- the model generated from the questions ----------------------------------------------------
_READ_AS: dict[str, Any] = {"choice": str, "gpu": str, "model": str, "text": str, "int": int,
                            "float": float, "bool": bool, "tristate": bool | str,
                            "list": tuple[str, ...]}
"""The Python type of a question type's answer, as :class:`AnswerFields` declares it."""


def answers_model(catalog: Catalog) -> type[Answers]:
    """The :class:`Answers` model of a catalog's questionnaire: one field per question, typed,
    bounded and defaulted by it (GPU and model answers by the catalog's ids)."""
    model: type[Answers] = catalog.derived(("answers_model",), _model_of, catalog)
    return model


def _model_of(catalog: Catalog) -> type[Answers]:
    return _generated(tuple(_spec(q, catalog) for q in catalog.questions))


def _spec(question: Question, catalog: Catalog) -> QuestionSpec:
    ids = {"gpu": catalog.gpus, "model": catalog.models}.get(question.type)
    values = tuple(sorted(ids)) if ids is not None else (
        tuple(question.choices) if question.choices else None)
    unit = f" Unit: {question.unit}." if question.unit else ""
    return QuestionSpec(question.id, question.type, values, question.min, question.max,
                        question.nullable, _checked_default(question, catalog),
                        question.prompt, question.help + unit)


def _checked_default(question: Question, catalog: Catalog) -> Hashable:
    """The question's default, which must be one of its answers (a list as a tuple)."""
    default = _default(question)
    if default is not None:
        try:
            check_answer(question, default, catalog, AnswerOrigin(), from_set=False)
        except AnswerError as exc:
            raise CatalogError(f"default: {exc.message}", path=QUESTIONS_FILE,
                               field=question.id) from None
    return tuple(default) if isinstance(default, list) else default


_GENERATING = threading.Lock()


def _generated(questions: tuple[QuestionSpec, ...]) -> type[Answers]:
    """One class per questionnaire, so that equal answers compare equal across catalogs."""
    with _GENERATING:
        return _generate(questions)


@functools.lru_cache(maxsize=32)
def _generate(questions: tuple[QuestionSpec, ...]) -> type[Answers]:
    _check_contract(questions)
    fields: dict[str, Any] = {q.id: (_annotation(q), _field_info(q)) for q in questions}
    model = create_model("Answers", __base__=Answers, __module__=__name__, **fields)
    model.__questions__ = questions
    return model


def _annotation(question: QuestionSpec) -> Any:
    """The field type: choices as a Literal, numbers bounded, ``| None`` when nullable."""
    kind, values = question.type, question.values
    annotation: Any
    if kind in ("choice", "gpu", "model") and values:
        annotation = Literal[values]
        if kind == "model":  # or a Hugging Face config.json, a folder holding one, a Hub id
            annotation = annotation | Annotated[str, Field(pattern=CONFIG_REFERENCE)]
    elif kind == "tristate":
        annotation = Literal["auto", True, False]
    elif kind == "list":
        item: Any = Literal[values] if values else str
        annotation = Annotated[tuple[item, ...], BeforeValidator(
            _as_items, json_schema_input_type=list[item] | item)]
    elif kind in ("int", "float"):
        annotation = Annotated[int if kind == "int" else float,
                               Field(ge=_bound(question.min), le=_bound(question.max),
                                     allow_inf_nan=False)]
    else:
        annotation = bool if kind == "bool" else str
    return annotation | None if question.nullable else annotation


def _field_info(question: QuestionSpec) -> Any:
    return Field(default=question.default, title=question.title,
                 description=question.description)


def _as_items(value: Any) -> Any:
    """A list answer may be a single value; repeats count once."""
    items = [value] if isinstance(value, str) else value
    return tuple(dict.fromkeys(items)) if isinstance(items, (list, tuple)) else items


def _bound(value: float | None) -> int | float | None:
    """Whole bounds as integers (``64``, not ``64.0``)."""
    return int(value) if value is not None and float(value).is_integer() else value


def _check_contract(questions: tuple[QuestionSpec, ...]) -> None:
    """Every answer :class:`AnswerFields` declares is a question of that type."""
    given = {q.id: q for q in questions}
    for name, expected in get_type_hints(AnswerFields).items():
        question = given.get(name)
        if question is None:
            raise CatalogError(f"the engine reads the answer '{name}' ({_text(expected)}); "
                               "it must stay a question", path=QUESTIONS_FILE, field=name)
        read_as = _READ_AS[question.type]
        actual = read_as | None if question.nullable else read_as
        if actual != expected:
            raise CatalogError(f"the engine reads this answer as {_text(expected)}; a "
                               f"{'nullable ' if question.nullable else ''}{question.type} "
                               f"question gives {_text(actual)}", path=QUESTIONS_FILE,
                               field=name)
    for name in given:
        if name in dir(BaseModel) or name == SHAPE_FIELD:
            raise CatalogError("this id is reserved (a name of the answers model); choose "
                               "another", path=QUESTIONS_FILE, field=name)


def _text(annotation: Any) -> str:
    return str(getattr(annotation, "__name__", annotation))


# -- loading and checking answers ------------------------------------------------------------
def load_answers(
    path: Path | str | None,
    overrides: Sequence[str],
    catalog: Catalog,
    *,
    model: str | None = None,
    fill_defaults: bool = True,
) -> Answers:
    """Answers from a file (optional; a path or its string) with ``key=value`` overrides
    applied on top, and
    ``model`` (``--model``) naming the model in place of the file's.

    The file or the overrides must name the model (``model`` or ``model_params_b``): every
    other answer has a default, but a recommendation for a model nobody named is no answer.
    This is where answers come in: a model named by its config is read here, into
    ``model_shape``.
    """
    merged, origin, set_keys = _merged(None if path is None else Path(path), overrides,
                                       catalog, model)
    return validate_answers(merged, catalog, origin=origin, set_keys=set_keys,
                            fill_defaults=fill_defaults, require_model=True,
                            read_model_files=True)


def load_partial(path: Path | None, overrides: Sequence[str], catalog: Catalog) -> dict[str, Any]:
    """The answers given so far (file and ``--set``), each checked, no defaults filled.

    What the questionnaire starts from: every key is known and in range, but answers may be
    missing and cross-answer rules are checked only once all are in.
    """
    merged, origin, set_keys = _merged(path, overrides, catalog)
    values = check_values(merged, catalog, origin=origin, set_keys=set_keys)
    with_model_shape(values, catalog, origin, set_keys, read_model_files=True)
    return values


MODEL_FLAG = "--model"


def _merged(path: Path | None, overrides: Sequence[str], catalog: Catalog,
            model: str | None = None) -> tuple[dict[str, Any], AnswerOrigin, set[str]]:
    try:
        data: Any = load_data_file(path) if path is not None else {}
    except AnswerError:
        raise
    except InputError as exc:  # unreadable or unparsable: still an answers-file error
        raise AnswerError(exc.message, path=exc.path, line=exc.line, field=exc.field) from None
    if data is None:
        data = {}
    origin = AnswerOrigin(str(path), data) if path else AnswerOrigin()  # no file: no lines
    if not isinstance(data, Mapping):
        raise AnswerError(f"expected a mapping of answers, got {type_name(data)}",
                          path=origin.path)
    merged = dict(data)
    set_keys = set()
    for item in overrides:
        key, value = parse_override(item, catalog)
        merged[key] = value
        set_keys.add(key)
    if model is not None:
        merged.update(model=model, model_params_b=None)
        set_keys.update(SHAPE_OF)
        origin.flags.update(dict.fromkeys(SHAPE_OF, MODEL_FLAG))
    if set_keys & set(SHAPE_OF) and SHAPE_FIELD not in set_keys:
        merged.pop(SHAPE_FIELD, None)  # the file's shape was of the file's model
    return merged, origin, set_keys


def _require_model(merged: Mapping[str, Any], origin: AnswerOrigin) -> None:
    if "model" in merged or "model_params_b" in merged:
        return
    if origin.path is None and origin.data is not None:  # a batch line, a mapping
        raise AnswerError("names no model: give model or model_params_b")
    if origin.path is None:
        raise AnswerError("the answers name no model: give --set model=ID or "
                          "--set model_params_b=N, or --answers FILE")
    raise AnswerError("names no model: give model or model_params_b", path=origin.path)


def parse_override(item: str, catalog: Catalog) -> tuple[str, Any]:
    """``key=value`` → (key, typed value), typed by the question's type."""
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise AnswerError(f"expected key=value, got '{item}'", path="--set")
    if key == SHAPE_FIELD:  # a mapping of figures: read from a config, or written in a file
        checked_shape(text, AnswerOrigin(), from_set=True)
    question = _question(catalog, key, AnswerOrigin("--set"), from_set=True)
    return key, parse_text(question, text.strip(), field=key)


def validate_answers(
    raw: Mapping[str, Any],
    catalog: Catalog,
    *,
    origin: AnswerOrigin | None = None,
    set_keys: set[str] | None = None,
    fill_defaults: bool = True,
    require_model: bool = False,
    read_model_files: bool = False,
) -> Answers:
    """Check every answer against its question, fill defaults, and build :class:`Answers`.

    With ``require_model``, answers that name neither ``model`` nor ``model_params_b`` are
    refused rather than given the default model. A model named by its config must come with
    its ``model_shape``; with ``read_model_files`` (where answers come in, not where they are
    replayed or arrive by the batch) the config is read into it.
    """
    origin = origin or AnswerOrigin()
    set_keys = set_keys or set()
    values = check_values(raw, catalog, origin=origin, set_keys=set_keys)
    if require_model:
        _require_model(values, origin)
    if values.get("model_params_b") is not None and "model" not in values:
        values["model"] = None
    with_model_shape(values, catalog, origin, set_keys, read_model_files=read_model_files)
    if fill_defaults:
        for question in catalog.questions:
            values.setdefault(question.id, _default(question))
    _cross_check(values, origin, set_keys)
    model = answers_model(catalog)
    try:
        return model.model_validate(values)
    except ValidationError as exc:  # a default questions.yaml gives that its question refuses
        error = exc.errors(include_url=False)[0]
        key = str(error["loc"][0]) if error["loc"] else "answers"
        message = str(error["msg"])
        raise origin.error(key, message[:1].lower() + message[1:],
                           from_set=key in set_keys) from None


def check_values(raw: Mapping[str, Any], catalog: Catalog, *, origin: AnswerOrigin | None = None,
                 set_keys: set[str] | None = None) -> dict[str, Any]:
    """Each given answer checked against its question (unknown keys, types, ranges)."""
    origin = origin or AnswerOrigin()
    set_keys = set_keys or set()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key == SHAPE_FIELD:
            values[key] = checked_shape(value, origin, from_set=key in set_keys)
            continue
        question = _question(catalog, str(key), origin, from_set=key in set_keys)
        values[key] = check_answer(question, value, catalog, origin, from_set=key in set_keys)
    return values


def _question(catalog: Catalog, key: str, origin: AnswerOrigin, *, from_set: bool) -> Question:
    for question in catalog.questions:
        if question.id == key:
            return question
    hint = did_you_mean(key, [q.id for q in catalog.questions])
    raise origin.error(key, f"unknown answer{hint}", from_set=from_set)


def _default(question: Question) -> Any:
    if question.type == "list":
        return list(question.default or [])
    return question.default


def _cross_check(values: dict[str, Any], origin: AnswerOrigin, set_keys: set[str]) -> None:
    """Rules that span two answers (``engine.answers.cross``)."""
    if (problem := first_problem(values)) is not None:
        key, message = problem
        raise origin.error(key, message, from_set=key in set_keys)


def answers_to_data(answers: Answers) -> dict[str, Any]:
    """Plain JSON/YAML-ready data, the exact form an answers file takes."""
    return answers.model_dump(mode="json")
