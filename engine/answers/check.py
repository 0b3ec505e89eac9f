"""One answer against its question: typed from text, checked, and described in messages.

Shared by answers files, ``--set``, batch lines and the questionnaire, so that each refuses a
value with the same words: what the question accepts (``describe``), located by an
:class:`AnswerOrigin`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from engine.answers.hf_config import is_config_reference
from engine.catalog.load import Catalog
from engine.catalog.models import Question
from engine.errors import AnswerError
from engine.files.validation import did_you_mean
from engine.files.yamlio import CONTROL_CHARACTERS, MAX_NUMBER_CHARS, line_of

Fail = Callable[[str], AnswerError]
"""Makes the located error of one answer from a message."""


class AnswerOrigin:
    """Where answers came from (a file and its parsed data, or nowhere), for error messages."""

    def __init__(self, path: str | None = None, data: Any = None) -> None:
        self.path = path
        self.data = data
        self.flags: dict[str, str] = {}
        """Answers given by a flag of their own (``model`` by ``--model``): errors name it."""

    def error(self, key: str, message: str, *, from_set: bool = False) -> AnswerError:
        """The error of answer ``key``: at its flag (``--model``), at ``--set``, or at its
        line in the file."""
        if from_set and key in self.flags:
            return AnswerError(message, path=self.flags[key])
        if from_set:
            return AnswerError(message, path="--set", field=key)
        line = line_of(self.data, (key,)) if self.data is not None else None
        return AnswerError(message, path=self.path, line=line, field=key)


def check_answer(question: Question, value: Any, catalog: Catalog, origin: AnswerOrigin,
                 *, from_set: bool) -> Any:
    """The value, type-checked and range-checked, or an AnswerError naming what is accepted."""
    def fail(message: str) -> AnswerError:
        return origin.error(question.id, message, from_set=from_set)

    if value is None:
        if question.nullable:
            return None
        raise fail(f"must not be empty; expected {describe(question)}")
    kind = question.type
    if kind in ("int", "float"):
        return _check_number(question, value, fail)
    if kind == "bool":
        if not isinstance(value, bool):
            raise fail(f"expected true or false, got {_quoted_bool(value)}")
        return value
    if kind == "tristate":
        if value == "auto" or isinstance(value, bool):
            return value
        raise fail(f"expected auto, true or false, got {_quoted_bool(value)}")
    if kind == "choice":
        if value not in (question.choices or []):
            raise fail(f"expected one of {', '.join(question.choices or [])}, got {value!r}")
        return value
    if kind == "list":
        return _check_list(question, value, fail)
    if kind in ("gpu", "model", "text"):
        return _check_text(question, value, catalog, fail)
    raise fail(f"unsupported question type {kind}")  # pragma: no cover - schema forbids it


def _quoted_bool(value: Any) -> str:
    """``value`` as a refusal shows it; a quoted true or false is named as text, since YAML
    and JSON read ``"false"`` as text, not the boolean."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return f"the text {value!r} (write {value.strip().lower()} without quotes)"
    return repr(value)


def _check_list(question: Question, value: Any, fail: Fail) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):  # tuples: already checked
        raise fail(f"expected a list of {', '.join(question.choices or [])}")
    for item in items:
        if item not in (question.choices or []):
            hint = did_you_mean(str(item), question.choices or [])
            raise fail(f"unknown value {item!r}{hint}; expected any of "
                       f"{', '.join(question.choices or [])}")
    return tuple(dict.fromkeys(items))


def _check_text(question: Question, value: Any, catalog: Catalog, fail: Fail) -> str:
    kind = question.type
    if not isinstance(value, str):
        raise fail(f"expected {describe(question)}, got {value!r}")
    if found := CONTROL_CHARACTERS.search(value):  # from --set, a prompt or a batch line
        raise fail(f"control character U+{ord(found[0]):04X} is not allowed")
    index: Mapping[str, Any] = {"gpu": catalog.gpus, "model": catalog.models}.get(kind, {})
    if kind == "model" and value not in index and is_config_reference(value):
        return value  # its config is read where answers come in (answers.model)
    if kind != "text" and value not in index:
        raise fail(f"unknown {kind} '{value}'{did_you_mean(value, index)}; see "
                   f"`gpu-advisor catalog list {kind}s`")
    return value


def _check_number(question: Question, value: Any, fail: Fail) -> float | int:
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


# -- text (--set, prompts) -------------------------------------------------------------------
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
