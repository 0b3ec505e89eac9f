"""Pydantic models of rule files: the schema rule authors write (``rules/*.yaml``)."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from engine.facts.spec import CANDIDATE
from engine.files.validation import did_you_mean
from engine.rules.when import ConditionSpec

RuleId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.\-]*$", max_length=80)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


class OptionEffect(_Strict):
    """``prefer``/``avoid``: add or subtract ``weight`` to an option (or, in a candidate rule,
    to the candidate's score when decision/option are left out)."""

    decision: str | None = None
    option: str | None = None
    weight: float = Field(default=1, gt=0, le=100)


class ExcludeEffect(_Strict):
    """``exclude``: a hard constraint removing an option (or, in a candidate rule, the
    candidate)."""

    decision: str | None = None
    option: str | None = None


class SetEffect(_Strict):
    """``set``: derive a fact for rules evaluated after this one (forward chaining)."""

    fact: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    value: str | bool | int | float


class WarnEffect(_Strict):
    """``warn``: a pitfall or note; ``id`` is a source id or a declared warning."""

    id: str
    severity: Literal["info", "warning", "critical"]


class SuggestEffect(_Strict):
    """``suggest``: an optimisation strategy; ``id`` is a source id or a declared strategy."""

    id: str


class Effect(_Strict):
    """Exactly one of the effect kinds."""

    prefer: OptionEffect | None = None
    avoid: OptionEffect | None = None
    exclude: ExcludeEffect | None = None
    set: SetEffect | None = None
    warn: WarnEffect | None = None
    suggest: SuggestEffect | None = None

    @model_validator(mode="after")
    def _one(self) -> Effect:
        given = [k for k in type(self).model_fields if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("an effect has exactly one of prefer, avoid, exclude, set, warn, "
                             f"suggest (got {', '.join(given) or 'none'})")
        return self

    @cached_property
    def kind(self) -> str:
        """Which effect this is."""
        return next(k for k in type(self).model_fields if getattr(self, k) is not None)

    @cached_property
    def body(self) -> Any:
        """The effect's payload."""
        return getattr(self, self.kind)


class RuleModel(_Strict):
    """One rule as written in YAML (its condition becomes a tree when the rules load)."""

    id: RuleId
    description: str = Field(min_length=1)
    match: Literal["request", "candidate"] = "request"
    priority: int = Field(default=0, ge=-100, le=100)
    when: ConditionSpec | None = Field(default=None,
                                       description="The condition; none (null) always holds.")
    then: list[Effect] = Field(min_length=1)
    because: str = Field(min_length=1, max_length=600)
    sources: list[str] = Field(min_length=1)


class RuleFile(_Strict):
    """A file of rules."""

    rules: list[RuleModel]


_CONSTRAINABLE = tuple(s.name for s in CANDIDATE if s.type == "string")
"""The configuration facts an axis can constrain: the string ones."""


class AxisSpec(_Strict):
    """A decision axis as ``decisions.yaml`` declares it: its options, in tie-break order."""

    description: str
    options: list[str] = Field(min_length=2)
    applies_when: dict[str, list[str]] = Field(
        default_factory=dict, description="the axis matters only when these other axes chose "
        "one of these options (pricing: only when renting)")
    phase: Literal[1, 2, 3] = Field(
        3, description="when it is decided: 1 before the job is sized (its rules read request "
        "facts only; candidate rules can read its choice), 2 from the scored candidates, before "
        "owning and renting are compared, 3 with that comparison")
    field: str | None = Field(
        default=None, description="the configuration (candidate) fact this axis constrains, "
        "declared here only: every step that matches a configuration to the decision (the "
        "cloud side, the option summaries, why a rival is not the pick) reads it")
    chosen_by: Literal["rules", "pick"] = Field(
        "rules", description="rules: the option the rules score highest; pick: the picked "
        "configuration's value of `field` (the rules exclude options and weigh "
        "configurations instead)")

    @field_validator("field")
    @classmethod
    def _a_configuration_fact(cls, name: str | None) -> str | None:
        if name is None or name in _CONSTRAINABLE:
            return name
        kind = next((s.type for s in CANDIDATE if s.name == name), None)
        message = (f"'{name}' is a {kind} fact; an axis constrains a string one" if kind else
                   f"unknown configuration fact '{name}'{did_you_mean(name, _CONSTRAINABLE)}")
        raise PydanticCustomError("field", "{message}", {"message": message})

    @model_validator(mode="after")
    def _pick_needs_field(self) -> AxisSpec:
        if self.chosen_by == "pick" and self.field is None:
            raise ValueError("an axis chosen_by: pick needs the field it follows")
        return self


class Declared(_Strict):
    """An extra warning or strategy id (beyond source ids), with its title and sources."""

    id: RuleId
    title: str
    sources: list[str] = Field(min_length=1)
    brief: bool = Field(default=False, description="a warning the one-screen answer shows "
                        "under the pick (it changes what the team would do), not only "
                        "--explain")


class DeclarationFile(_Strict):
    """``rules/decisions.yaml``: the decision axes, extra warning and strategy ids."""

    decisions: dict[str, AxisSpec]
    warnings: list[Declared] = Field(default_factory=list)
    strategies: list[Declared] = Field(default_factory=list)
