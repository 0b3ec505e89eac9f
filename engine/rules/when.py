"""A rule's ``when``: the pydantic models a condition is read with, and the tree made of it.

:data:`ConditionSpec` (:class:`AllCondition`, :class:`AnyCondition`, :class:`NotCondition`,
:class:`LeafCondition`) is the condition as a rule file writes it; it validates ``when`` and
makes the condition part of the rules schema. :func:`condition_tree` turns a validated one
into the tree of :mod:`engine.rules.conditions`, each node with its line, and
:func:`resolve_policy` puts the value of each ``{policy: NAME}`` in it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError
from typing_extensions import TypeAliasType

from engine.files.validation import did_you_mean
from engine.files.yamlio import type_name
from engine.rules.conditions import (
    All,
    AnyOf,
    Condition,
    FactRef,
    Leaf,
    Not,
    PolicyRef,
    Value,
)
from engine.rules.limits import MAX_LIST_VALUES, MAX_STRING_BYTES
from engine.rules.operators import COMPARISONS, OPERATORS

Scalar = TypeAliasType("Scalar", str | bool | int | float | None)
"""A literal of a condition."""


class _Syntax(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class FactOperand(_Syntax):
    """Compare with another fact instead of a literal."""

    fact: str


class PolicyOperand(_Syntax):
    """Compare with a constant of catalog/policy.yaml (written once there)."""

    policy: str


class AllCondition(_Syntax):
    """Every condition holds (an empty list always holds)."""

    all: list[ConditionSpec]


class AnyCondition(_Syntax):
    """At least one condition holds."""

    any: list[ConditionSpec]


class NotCondition(_Syntax):
    """The condition does not hold."""

    not_: ConditionSpec = Field(alias="not")


def _compared(op: str) -> Any:
    return Field(None, description=f"fact {op} a literal, another fact ({{fact: NAME}}) or a "
                                   "policy constant ({policy: NAME})")


Compared = Scalar | FactOperand | PolicyOperand
Members = Annotated[list[Scalar], Field(min_length=1, max_length=MAX_LIST_VALUES)]


def _leaf_schema(schema: dict[str, Any]) -> None:
    for prop in schema["properties"].values():  # an operator given is never its default
        prop.pop("default", None)
    schema.update(minProperties=2, maxProperties=2)


class LeafCondition(_Syntax):
    """{fact: NAME, OP: VALUE} with exactly one operator."""

    model_config = ConfigDict(json_schema_extra=_leaf_schema)

    fact: str = Field(description="a fact name")
    eq: Compared = _compared("eq")
    ne: Compared = _compared("ne")
    lt: Compared = _compared("lt")
    lte: Compared = _compared("lte")
    gt: Compared = _compared("gt")
    gte: Compared = _compared("gte")
    in_: Members | SkipJsonSchema[None] = Field(None, alias="in",
                                                description="fact is one of these values")
    not_in: Members | SkipJsonSchema[None] = Field(None,
                                                   description="fact is none of these values")
    is_: bool | None = Field(None, alias="is", description="fact is true, false, or null "
                                                          "(unknown)")
    exists: bool | SkipJsonSchema[None] = Field(None, description="fact is known (true) or "
                                                                  "unknown (false)")

    @model_validator(mode="before")
    @classmethod
    def _one_operator(cls, data: Any) -> Any:
        ops = [key for key in data if key != "fact"]
        if len(ops) != 1:
            raise _refused(f"a leaf has 'fact' and exactly one operator of {', '.join(OPERATORS)}")
        if str(ops[0]) not in OPERATORS:
            raise _refused(f"unknown operator '{ops[0]}'{did_you_mean(str(ops[0]), OPERATORS)}")
        if not isinstance(data["fact"], str):
            raise _refused("'fact' must be a fact name")
        return data

    @field_validator("eq", "ne", "lt", "lte", "gt", "gte", "in_", "not_in", "is_", "exists",
                     mode="before")
    @classmethod
    def _operand(cls, raw: Any, info: Any) -> Any:
        _check_operand(_OPERATOR_OF[info.field_name], raw)
        return raw

    @property
    def op(self) -> str:
        """The operator given."""
        return next(_OPERATOR_OF[name] for name in self.model_fields_set if name != "fact")

    @property
    def operand(self) -> Value | PolicyRef:
        """The value compared with, as the condition tree holds it."""
        value = getattr(self, _FIELD_OF[self.op])
        if isinstance(value, FactOperand):
            return FactRef(value.fact)
        if isinstance(value, PolicyOperand):
            return PolicyRef(value.policy)
        return tuple(value) if isinstance(value, list) else value


_OPERATOR_OF = {name: field.alias or name for name, field in LeafCondition.model_fields.items()}
_FIELD_OF = {op: name for name, op in _OPERATOR_OF.items()}
assert set(_FIELD_OF) - {"fact"} == set(OPERATORS), "LeafCondition and OPERATORS disagree"
_LITERAL_ONLY = tuple(op for op in OPERATORS if op not in COMPARISONS)


def _refused(message: str) -> PydanticCustomError:
    return PydanticCustomError("condition", "{message}", {"message": message})


def _check_operand(op: str, raw: Any) -> None:
    """Refuse what ``op`` cannot take, with the message a rule author reads."""
    if isinstance(raw, Mapping) and set(raw) == {"policy"}:
        if not isinstance(raw["policy"], str) or op in _LITERAL_ONLY:
            raise _refused(f"'{op}' takes {{policy: NAME}} only with eq, ne, lt, lte, gt or gte "
                           "and a constant's name")
        return
    if isinstance(raw, Mapping):
        if set(raw) != {"fact"} or not isinstance(raw["fact"], str):
            raise _refused("a value is a literal, {fact: NAME} or {policy: NAME}")
        if op in _LITERAL_ONLY:
            raise _refused(f"'{op}' takes a literal, not {{fact: ...}}")
        return
    if op in ("in", "not_in"):
        if not isinstance(raw, list) or not raw:
            raise _refused(f"'{op}' takes a non-empty list")
        if len(raw) > MAX_LIST_VALUES:
            raise _refused(f"'{op}' lists {len(raw):,} values; at most {MAX_LIST_VALUES} "
                           "(durable_rules 2.0.28 hangs on 512 alternatives of one fact)")
        for value in raw:
            _check_scalar(value)
        return
    if op == "exists" and not isinstance(raw, bool):
        raise _refused("'exists' takes true or false")
    if op == "is" and raw is not None and not isinstance(raw, bool):
        raise _refused("'is' takes true, false or null")
    _check_scalar(raw)


def _check_scalar(raw: Any) -> None:
    """A literal durable_rules compares as written: finite, no exponent form, bounded."""
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise _refused("NaN and Infinity are not allowed")
        if raw != 0 and not 1e-4 <= abs(raw) < 1e15:
            raise _refused(f"{raw!r} would be written in exponent form, which durable_rules "
                           "cannot parse; use a value between 0.0001 and 10^15")
    if isinstance(raw, int) and not isinstance(raw, bool) and abs(raw) >= 10**15:
        raise _refused(f"{raw} is too large (limit 10^15)")
    if isinstance(raw, str) and len(raw) * 4 > MAX_STRING_BYTES and (
            len(raw.encode("utf-8", "surrogatepass")) > MAX_STRING_BYTES):
        raise _refused(f"a string of {len(raw.encode('utf-8', 'surrogatepass')):,} bytes; at "
                       f"most {MAX_STRING_BYTES:,} (durable_rules 2.0.28 compares long strings "
                       "wrongly)")
    if raw is not None and not isinstance(raw, (str, bool, int, float)):
        raise _refused(f"expected a string, number, boolean or null, got {raw!r}")


def _condition_shape(data: Any) -> Any:
    """Which kind of condition the data is, refused with a message when none."""
    if isinstance(data, _Syntax):
        return data
    if not isinstance(data, Mapping):
        raise _refused(f"a condition is a mapping (all/any/not or fact), got {type_name(data)}")
    keys = set(data)
    if keys in ({"all"}, {"any"}):
        key = next(iter(keys))
        if not isinstance(data[key], list):
            raise _refused(f"'{key}' takes a list of conditions")
    elif keys != {"not"} and "fact" not in keys:
        raise _refused(f"unknown condition keys {sorted(map(str, keys))}; expected all, any, "
                       "not or fact")
    return data


def _kind(data: Any) -> str:
    if isinstance(data, _Syntax):
        return _KIND_OF[type(data)]
    keys = set(data)
    return str(next(iter(keys))) if keys in ({"all"}, {"any"}, {"not"}) else "leaf"


_KIND_OF: dict[type[_Syntax], str] = {AllCondition: "all", AnyCondition: "any",
                                      NotCondition: "not", LeafCondition: "leaf"}

ConditionSpec = TypeAliasType("ConditionSpec", Annotated[
    Annotated[AllCondition, Tag("all")] | Annotated[AnyCondition, Tag("any")]
    | Annotated[NotCondition, Tag("not")] | Annotated[LeafCondition, Tag("leaf")],
    Discriminator(_kind), BeforeValidator(_condition_shape),
    Field(description="all/any of a list of conditions, not of one, or a leaf {fact: NAME, "
                      "OP: VALUE}.")])
"""A condition as written in a rule file."""


@functools.cache
def _when() -> TypeAdapter[ConditionSpec | None]:
    """Built on first use (loading rules), not on import (a cached policy needs none)."""
    return TypeAdapter(ConditionSpec | None)


class ConditionSyntaxError(ValueError):
    """A malformed condition; ``line`` locates it in the file when known."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def validate_condition(data: Any, line: int | None = None) -> ConditionSpec | None:
    """A rule's ``when`` data as a :data:`ConditionSpec` (None when there is none), or a
    :class:`ConditionSyntaxError` at the line of the condition at fault (``line``: that of
    ``when:``, for data without lines of its own)."""
    try:
        return _when().validate_python(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        message = str(error["ctx"]["message"] if error["type"] == "condition" else error["msg"])
        raise ConditionSyntaxError(message, _line_at(data, tuple(error["loc"]), line)) from None


def _line_at(data: Any, loc: tuple[Any, ...], line: int | None) -> int | None:
    """The line of the condition (list item, or the ``not`` inside) that ``loc`` points into;
    a leaf's own line for its values."""
    line = getattr(data, "line", None) or line
    key = loc[0] if loc else None
    if key in ("all", "any") and loc[1:2] == (key,) and len(loc) > 2 and isinstance(loc[2], int):
        items = data[key]
        lines = getattr(items, "item_lines", None)
        return _line_at(items[loc[2]], loc[3:], lines[loc[2]] if lines else line)
    if key == "not" and loc[1:2] == ("not",):
        return _line_at(data["not"], loc[2:], line)
    return line


def condition_tree(spec: ConditionSpec | None, data: Any,
                   line: int | None = None) -> Condition:
    """The tree of a validated condition, each node with its line in ``data`` (what ``spec``
    was validated from); no condition always holds."""
    line = getattr(data, "line", None) or line
    if spec is None:
        return All((), line)
    if isinstance(spec, AllCondition):
        return All(_children(spec.all, data["all"], line), line)
    if isinstance(spec, AnyCondition):
        return AnyOf(_children(spec.any, data["any"], line), line)
    if isinstance(spec, NotCondition):
        return Not(condition_tree(spec.not_, data["not"], line), line)
    return Leaf(spec.fact, spec.op, spec.operand, line)  # type: ignore[arg-type]


def _children(specs: list[ConditionSpec], items: Any, line: int | None
              ) -> tuple[Condition, ...]:
    lines = getattr(items, "item_lines", [line] * len(items))
    return tuple(condition_tree(spec, raw, at)
                 for spec, raw, at in zip(specs, items, lines, strict=True))


def resolve_policy(cond: Condition, lookup: Callable[[str, int | None], Any]) -> Condition:
    """The condition with every ``{policy: NAME}`` replaced by ``lookup(NAME, line)``."""
    if isinstance(cond, Leaf):
        if isinstance(cond.value, PolicyRef):
            return replace(cond, value=_literal(lookup(cond.value.name, cond.line), cond.line))
        return cond
    if isinstance(cond, Not):
        return replace(cond, child=resolve_policy(cond.child, lookup))
    return replace(cond, children=tuple(resolve_policy(c, lookup) for c in cond.children))


def _literal(value: Any, line: int | None) -> Any:
    """A policy constant's value, held to the rules of a literal."""
    try:
        _check_scalar(value)
    except PydanticCustomError as exc:
        raise ConditionSyntaxError(exc.message(), line) from None
    return value
