"""A team's answers: load a YAML/JSON file plus ``--set key=value`` overrides, validated
against the questionnaire (``catalog/questions.yaml``) and the catalog."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from engine.answers.hf_config import config_problem, is_config_reference
from engine.catalog.load import Catalog
from engine.catalog.models import Question
from engine.errors import AnswerError, InputError
from engine.files.jsonio import load_data_file
from engine.files.validation import did_you_mean
from engine.files.yamlio import CONTROL_CHARACTERS, MAX_NUMBER_CHARS, line_of, type_name

Tristate = bool | Literal["auto"]


class Answers(BaseModel):
    """The validated answers of one team (the public answers-file contract of DESIGN.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    workload: Literal["fine-tune", "pretrain"]
    model: str | None
    model_params_b: float | None
    method: Literal["auto", "full", "lora", "qlora"]
    seq_len: int
    micro_batch: int
    gradient_checkpointing: Tristate
    training_tokens_b: float | None
    runs_per_year: float | None
    hours_per_year: float | None
    hours_gpu: str | None
    max_days_per_run: float | None
    usage_pattern: Literal["continuous", "intermittent", "bursty"]
    budget_usd: float
    upfront_capex: bool
    data_residency: Literal["none", "region", "on-premises"]
    allowed_regions: tuple[str, ...]
    cloud_ecosystem: Literal["none", "aws", "azure", "gcp"]
    needs_latest_hardware: bool
    electricity_usd_per_kwh: float
    shared_small_workloads: bool
    planned_gpu: str | None
    planned_gpu_count: int
    profiled_utilisation_pct: float | None
    api_tokens_per_month_m: float | None
    proprietary_data: bool
    specialised_domain: bool
    competitive_moat: bool
    regulated_control: bool


class _Where:
    """Where an answer came from, for error messages."""

    def __init__(self, path: str | None, data: Any) -> None:
        self.path = path
        self.data = data

    def error(self, key: str, message: str, *, from_set: bool = False) -> AnswerError:
        if from_set:
            return AnswerError(message, path="--set", field=key)
        line = line_of(self.data, (key,)) if self.data is not None else None
        return AnswerError(message, path=self.path, line=line, field=key)


def load_answers(
    path: Path | None,
    overrides: Sequence[str],
    catalog: Catalog,
    *,
    fill_defaults: bool = True,
) -> Answers:
    """Answers from a file (optional) with ``key=value`` overrides applied on top.

    The file or the overrides must name the model (``model`` or ``model_params_b``): every
    other answer has a default, but a recommendation for a model nobody named is no answer.
    """
    merged, where, set_keys = _merged(path, overrides, catalog)
    return validate_answers(merged, catalog, where=where, set_keys=set_keys,
                            fill_defaults=fill_defaults, require_model=True)


def load_partial(path: Path | None, overrides: Sequence[str], catalog: Catalog) -> dict[str, Any]:
    """The answers given so far (file and ``--set``), each checked, no defaults filled.

    What the questionnaire starts from: every key is known and in range, but answers may be
    missing and cross-answer rules are checked only once all are in.
    """
    merged, where, set_keys = _merged(path, overrides, catalog)
    return check_values(merged, catalog, where=where, set_keys=set_keys)


def _merged(path: Path | None, overrides: Sequence[str],
            catalog: Catalog) -> tuple[dict[str, Any], _Where, set[str]]:
    try:
        data: Any = load_data_file(path) if path is not None else {}
    except AnswerError:
        raise
    except InputError as exc:  # unreadable or unparsable: still an answers-file error
        raise AnswerError(exc.message, path=exc.path, line=exc.line, field=exc.field) from None
    if data is None:
        data = {}
    where = _Where(str(path) if path else None, data)
    if not isinstance(data, Mapping):
        raise AnswerError(f"expected a mapping of answers, got {type_name(data)}",
                          path=where.path)
    merged = dict(data)
    set_keys = set()
    for item in overrides:
        key, value = parse_override(item, catalog)
        merged[key] = value
        set_keys.add(key)
    return merged, where, set_keys


def _require_model(merged: Mapping[str, Any], where: _Where) -> None:
    if "model" in merged or "model_params_b" in merged:
        return
    if where.path is None:
        raise AnswerError("the answers name no model: give --set model=ID or "
                          "--set model_params_b=N, or --answers FILE")
    raise AnswerError("names no model: give model or model_params_b", path=where.path)


def parse_override(item: str, catalog: Catalog) -> tuple[str, Any]:
    """``key=value`` → (key, typed value), typed by the question's type."""
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise AnswerError(f"expected key=value, got '{item}'", path="--set")
    question = _question(catalog, key, _Where("--set", None), from_set=True)
    return key, parse_text(question, text.strip(), field=key)


def parse_text(question: Question, text: str, *, field: str) -> Any:
    """Typed value of a textual answer (from ``--set`` or a prompt)."""
    low = text.lower()
    if low in ("", "null", "none", "~") and (question.nullable or question.type == "list"):
        return [] if question.type == "list" else None
    if question.type in ("bool", "tristate"):
        if low in ("true", "yes", "y", "1", "on"):
            return True
        if low in ("false", "no", "n", "0", "off"):
            return False
        if question.type == "tristate" and low == "auto":
            return "auto"
        return text
    if question.type in ("int", "float"):
        return parse_number(text, question, field=field)
    if question.type == "list":
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


_DIGITS = r"[0-9]+(?:_[0-9]+)*"
_NUMBER = re.compile(rf"[+-]?(?:(?P<int>[0-9]{{1,3}}(?:,[0-9]{{3}})+|{_DIGITS})"
                     rf"(?P<frac>\.(?:{_DIGITS})?)?|\.{_DIGITS})(?P<exp>[eE][+-]?[0-9]+)?")
_NOT_FINITE = ("nan", "inf", "infinity")


def parse_number(text: str, question: Question, *, field: str) -> Any:
    """A typed number, written one way everywhere: ``1500``, ``1_500``, ``1,500``, ``2.5``,
    ``1e3``. A comma only separates thousands (``2,5`` is refused, not read as 25); text
    that is no number at all is returned as is, for the type check to name what is expected.
    """
    match = _NUMBER.fullmatch(text)
    if match is None:
        if text.lower().lstrip("+-") in _NOT_FINITE:
            return float(text)  # refused by the range check, which names it
        if "," in text and _NUMBER.fullmatch(text.replace(",", "")):
            raise AnswerError(f"'{text}' is not a number: a comma only separates thousands "
                              "(2,500); write decimals with a dot (2.5)",
                              path="--set", field=field)
        return text
    plain = text.replace(",", "").replace("_", "")
    if len(plain.lstrip("+-")) > MAX_NUMBER_CHARS:
        raise AnswerError(f"a number of {len(plain):,} characters is too long", path="--set",
                          field=field)
    if match["frac"] is None and match["exp"] is None and match["int"] is not None:
        return int(plain)
    number = float(plain)
    return int(number) if question.type == "int" and number.is_integer() else number


def validate_answers(
    raw: Mapping[str, Any],
    catalog: Catalog,
    *,
    where: _Where | None = None,
    set_keys: set[str] | None = None,
    fill_defaults: bool = True,
    require_model: bool = False,
) -> Answers:
    """Check every answer against its question, fill defaults, and build :class:`Answers`.

    With ``require_model``, answers that name neither ``model`` nor ``model_params_b`` are
    refused rather than given the default model.
    """
    where = where or _Where(None, None)
    set_keys = set_keys or set()
    values = check_values(raw, catalog, where=where, set_keys=set_keys)
    if require_model:
        _require_model(values, where)
    if values.get("model_params_b") is not None and "model" not in values:
        values["model"] = None
    if fill_defaults:
        for question in catalog.questions:
            values.setdefault(question.id, _default(question))
    _cross_check(values, where, set_keys)
    return Answers.model_validate(values)


def check_values(raw: Mapping[str, Any], catalog: Catalog, *, where: _Where | None = None,
                 set_keys: set[str] | None = None) -> dict[str, Any]:
    """Each given answer checked against its question (unknown keys, types, ranges)."""
    where = where or _Where(None, None)
    set_keys = set_keys or set()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        question = _question(catalog, str(key), where, from_set=key in set_keys)
        values[key] = _check(question, value, catalog, where, from_set=key in set_keys)
    return values


def _question(catalog: Catalog, key: str, where: _Where, *, from_set: bool) -> Question:
    for question in catalog.questions:
        if question.id == key:
            return question
    hint = did_you_mean(key, [q.id for q in catalog.questions])
    raise where.error(key, f"unknown answer{hint}", from_set=from_set)


def _default(question: Question) -> Any:
    if question.type == "list":
        return list(question.default or [])
    return question.default


def _check(question: Question, value: Any, catalog: Catalog, where: _Where,
           *, from_set: bool) -> Any:
    """The value, type-checked and range-checked, or an AnswerError naming what is accepted."""
    key = question.id

    def fail(message: str) -> AnswerError:
        return where.error(key, message, from_set=from_set)

    if value is None:
        if question.nullable:
            return None
        raise fail(f"must not be empty; expected {describe(question)}")
    kind = question.type
    if kind in ("int", "float"):
        return _check_number(question, value, fail)
    if kind == "bool":
        if not isinstance(value, bool):
            raise fail(f"expected true or false, got {value!r}")
        return value
    if kind == "tristate":
        if value == "auto" or isinstance(value, bool):
            return value
        raise fail(f"expected auto, true or false, got {value!r}")
    if kind == "choice":
        if value not in (question.choices or []):
            raise fail(f"expected one of {', '.join(question.choices or [])}, got {value!r}")
        return value
    if kind == "list":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)):  # tuples: already checked
            raise fail(f"expected a list of {', '.join(question.choices or [])}")
        for item in items:
            if item not in (question.choices or []):
                hint = did_you_mean(str(item), question.choices or [])
                raise fail(f"unknown value {item!r}{hint}; expected any of "
                           f"{', '.join(question.choices or [])}")
        return tuple(dict.fromkeys(items))
    if kind in ("gpu", "model", "text"):
        if not isinstance(value, str):
            raise fail(f"expected {describe(question)}, got {value!r}")
        if found := CONTROL_CHARACTERS.search(value):  # from --set, a prompt or a batch line
            raise fail(f"control character U+{ord(found[0]):04X} is not allowed")
        index: Mapping[str, Any] = {"gpu": catalog.gpus, "model": catalog.models}.get(kind, {})
        if kind == "model" and value not in index and is_config_reference(value):
            if (problem := config_problem(value)) is not None:
                raise fail(problem)
            return value
        if kind != "text" and value not in index:
            raise fail(f"unknown {kind} '{value}'{did_you_mean(value, index)}; see "
                       f"`gpu-advisor catalog list {kind}s`")
        return value
    raise fail(f"unsupported question type {kind}")  # pragma: no cover - schema forbids it


def _check_number(question: Question, value: Any, fail: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail(f"expected {describe(question)}, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise fail(f"expected a finite number, got {value!r}")
    if question.type == "int" and isinstance(value, float):
        if not value.is_integer():
            raise fail(f"expected a whole number, got {value!r}")
        value = int(value)
    low, high = question.min, question.max
    if (low is not None and value < low) or (high is not None and value > high):
        raise fail(f"{_num(value)} is out of range; expected {describe(question)}")
    if question.type == "int":
        return int(value)
    try:
        return float(value)
    except OverflowError:  # a huge integer and a question without a maximum
        raise fail(f"{_num(value)} is too large; expected {describe(question)}") from None


def describe(question: Question) -> str:
    """What a question accepts, e.g. ``a number from 0 to 8,760 GPU-hours/year``."""
    kind = question.type
    if kind in ("int", "float"):
        noun = "a whole number" if kind == "int" else "a number"
        unit = f" {question.unit}" if question.unit else ""
        if question.min is not None and question.max is not None:
            return f"{noun} from {_num(question.min)} to {_num(question.max)}{unit}"
        return noun + unit
    if kind in ("choice", "list"):
        return ("one of " if kind == "choice" else "any of ") + ", ".join(question.choices or [])
    return {"bool": "true or false", "tristate": "auto, true or false",
            "gpu": "a catalog GPU id", "model": "a catalog model id"}.get(kind, "text")


def _num(value: float) -> str:
    """``10,000,000`` or ``0.000001``: a bound as people write it, never in exponent form
    (an absurd value, 10^21 or more, is named by its number of digits)."""
    if abs(value) >= 10**21:
        return f"a {len(str(int(abs(value))))}-digit number"
    if isinstance(value, int) or value.is_integer():
        return f"{int(value):,}"
    return f"{value:,.12f}".rstrip("0").rstrip(".")


def _cross_check(values: dict[str, Any], where: _Where, set_keys: set[str]) -> None:
    """Rules that span two answers."""
    def fail(key: str, message: str) -> AnswerError:
        return where.error(key, message, from_set=key in set_keys)

    if values.get("model") is not None and values.get("model_params_b") is not None:
        raise fail("model_params_b", "give either model or model_params_b, not both")
    if values.get("model") is None and values.get("model_params_b") is None:
        raise fail("model", "a catalog model id or model_params_b is required")
    if values.get("training_tokens_b") is not None and values.get("hours_per_year") is not None:
        raise fail("hours_per_year", "give the work as training_tokens_b (with runs_per_year) "
                                     "or as hours_per_year (with hours_gpu), not both")
    if values.get("runs_per_year") is not None and values.get("training_tokens_b") is None:
        raise fail("runs_per_year", "only applies with training_tokens_b (tokens per run)")
    if values.get("hours_gpu") is not None and values.get("hours_per_year") is None:
        raise fail("hours_gpu", "only applies with hours_per_year")
    regions = values.get("allowed_regions") or ()
    residency = values.get("data_residency")
    if residency == "region" and not regions:
        raise fail("allowed_regions", "data_residency is region: list at least one region")
    if regions and residency != "region":
        raise fail("allowed_regions",
                   f"only applies when data_residency is region (it is {residency!r})")


def answers_to_data(answers: Answers) -> dict[str, Any]:
    """Plain JSON/YAML-ready data, the exact form an answers file takes."""
    return answers.model_dump(mode="json")
