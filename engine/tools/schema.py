"""JSON Schemas (draft 2020-12) of every file a user writes: rules, catalog, answers, scenarios,
and of what ``recommend --format json`` prints (``decision``).

They are generated from the pydantic models with ``model_json_schema()``; only what pydantic
cannot express is patched in by hand: the condition tree of a rule's ``when`` (parsed by
:mod:`engine.rules.conditions`), "exactly one key" for an effect, and the answers file, whose fields
are defined by the questionnaire (``catalog/questions.yaml``) rather than by a model.

Editors use them through a first line ``# yaml-language-server: $schema=...`` in each file;
``gpu-advisor rules schema --out schemas`` regenerates the committed copies.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.answers.hf_config import CONFIG_REFERENCE
from engine.catalog.load import Catalog, _PriceFile, load_catalog
from engine.catalog.models import (
    CloudFile,
    GpuFile,
    ModelFile,
    PlatformFile,
    PolicyFile,
    Question,
    QuestionFile,
    SourceFile,
)
from engine.decide.engine import Decision
from engine.rules.model import OPERATORS, DeclarationFile, RuleFile
from engine.tools.scenarios import Scenario

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_URL = "https://gpu-advisor.dev/schemas/"

Schema = dict[str, Any]

# name → (title, model); "answers" is built from the questionnaire instead.
_MODELS: dict[str, tuple[str, type[BaseModel]]] = {
    "rules": ("gpu-advisor rule file (rules/*.yaml)", RuleFile),
    "decisions": ("gpu-advisor decision axes and declared ids (rules/decisions.yaml)",
                  DeclarationFile),
    "sources": ("gpu-advisor catalog sources (catalog/sources.yaml)", SourceFile),
    "gpus": ("gpu-advisor catalog GPUs (catalog/gpus.yaml)", GpuFile),
    "platforms": ("gpu-advisor catalog platforms for owned GPUs (catalog/platforms.yaml)",
                  PlatformFile),
    "clouds": ("gpu-advisor catalog cloud providers and offers (catalog/clouds.yaml)", CloudFile),
    "models": ("gpu-advisor catalog model presets (catalog/models.yaml)", ModelFile),
    "policy": ("gpu-advisor catalog policy constants (catalog/policy.yaml)", PolicyFile),
    "questions": ("gpu-advisor questionnaire (catalog/questions.yaml)", QuestionFile),
    "prices": ("gpu-advisor price override file (--prices)", _PriceFile),
    "scenario": ("gpu-advisor scenario (tests/scenarios/*.yaml)", Scenario),
    "decision": ("gpu-advisor recommendation (recommend --format json)", Decision),
}
_DESCRIPTIONS = {
    "prices": "Your own price quotes: offers (and the sources they cite) that replace catalog "
              "offers with the same id or add new ones.",
}

NAMES: tuple[str, ...] = (*_MODELS, "answers")


def schema_id(name: str) -> str:
    """The ``$id`` of a schema, e.g. ``https://gpu-advisor.dev/schemas/rules.schema.json``."""
    return f"{BASE_URL}{name}.schema.json"


def schemas(catalog: Catalog | None = None) -> dict[str, Schema]:
    """Every schema by name; the answers schema follows ``catalog`` (the bundled one by default).
    """
    catalog = catalog or load_catalog()
    out: dict[str, Schema] = {}
    for name, (title, model) in _MODELS.items():
        body = model.model_json_schema()
        if name in _DESCRIPTIONS:
            body["description"] = _DESCRIPTIONS[name]
        out[name] = _header(name, title, body)
    _patch_rules(out["rules"])
    _patch_scenario(out["scenario"])
    out["answers"] = answers_schema(catalog)
    return out


def dump(schema: Schema) -> str:
    """The schema as written to ``schemas/<name>.schema.json`` (and printed)."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path, catalog: Catalog | None = None,
                  names: tuple[str, ...] | None = None) -> list[Path]:
    """Write ``directory/<name>.schema.json`` for each schema (all by default)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in schemas(catalog).items():
        if names is not None and name not in names:
            continue
        path = directory / f"{name}.schema.json"
        path.write_text(dump(schema), encoding="utf-8", newline="\n")
        written.append(path)
    return written


def _header(name: str, title: str, body: Schema) -> Schema:
    """``$schema``, ``$id`` and ``title`` first, then the body (its own title replaced)."""
    body = {k: v for k, v in body.items() if k != "title"}
    return {"$schema": DRAFT, "$id": schema_id(name), "title": title, **body}


# ---------------------------------------------------------------- rules
def _condition_defs() -> dict[str, Schema]:
    """``$defs`` for the recursive condition tree of :mod:`engine.rules.conditions`."""
    compare = {"anyOf": [{"$ref": "#/$defs/Scalar"}, {"$ref": "#/$defs/FactRef"},
                         {"$ref": "#/$defs/PolicyRef"}]}
    members = {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/Scalar"}}
    op_schemas: dict[str, Schema] = {
        **{op: {**compare, "description": f"fact {op} a literal, another fact ({{fact: NAME}}) "
                                          "or a policy constant ({policy: NAME})"}
           for op in ("eq", "ne", "lt", "lte", "gt", "gte")},
        "in": {**members, "description": "fact is one of these values"},
        "not_in": {**members, "description": "fact is none of these values"},
        "is": {"type": ["boolean", "null"],
               "description": "fact is true, false, or null (unknown)"},
        "exists": {"type": "boolean", "description": "fact is known (true) or unknown (false)"},
    }
    assert tuple(op_schemas) == OPERATORS, "keep the leaf schema in step with OPERATORS"
    return {
        "Condition": {
            "description": "all/any of a list of conditions, not of one, or a leaf "
                           "{fact: NAME, OP: VALUE}.",
            "oneOf": [{"$ref": "#/$defs/AllCondition"}, {"$ref": "#/$defs/AnyCondition"},
                      {"$ref": "#/$defs/NotCondition"}, {"$ref": "#/$defs/LeafCondition"}],
        },
        "AllCondition": {
            "description": "Every condition holds (an empty list always holds).",
            "type": "object",
            "properties": {"all": {"type": "array", "items": {"$ref": "#/$defs/Condition"}}},
            "required": ["all"],
            "additionalProperties": False,
        },
        "AnyCondition": {
            "description": "At least one condition holds.",
            "type": "object",
            "properties": {"any": {"type": "array", "items": {"$ref": "#/$defs/Condition"}}},
            "required": ["any"],
            "additionalProperties": False,
        },
        "NotCondition": {
            "description": "The condition does not hold.",
            "type": "object",
            "properties": {"not": {"$ref": "#/$defs/Condition"}},
            "required": ["not"],
            "additionalProperties": False,
        },
        "LeafCondition": {
            "description": "{fact: NAME, OP: VALUE} with exactly one operator of "
                           + ", ".join(OPERATORS) + ".",
            "type": "object",
            "properties": {"fact": {"type": "string", "description": "a fact name"},
                           **op_schemas},
            "required": ["fact"],
            "minProperties": 2,
            "maxProperties": 2,
            "additionalProperties": False,
        },
        "FactRef": {
            "description": "Compare with another fact instead of a literal.",
            "type": "object",
            "properties": {"fact": {"type": "string"}},
            "required": ["fact"],
            "additionalProperties": False,
        },
        "PolicyRef": {
            "description": "Compare with a constant of catalog/policy.yaml (written once there).",
            "type": "object",
            "properties": {"policy": {"type": "string"}},
            "required": ["policy"],
            "additionalProperties": False,
        },
        "Scalar": {"type": ["string", "number", "boolean", "null"]},
    }


def _patch_rules(schema: Schema) -> None:
    defs = schema["$defs"]
    defs["RuleModel"]["properties"]["when"] = {
        "description": "The condition; empty or null always holds.",
        "anyOf": [{"$ref": "#/$defs/Condition"}, {"type": "null"}],
        "default": None,
    }
    effect = defs["Effect"]
    for prop in effect["properties"].values():  # a given effect kind is never null
        prop["anyOf"] = [s for s in prop["anyOf"] if s != {"type": "null"}]
        prop.pop("default", None)
        if len(prop["anyOf"]) == 1:
            prop.update(prop.pop("anyOf")[0])
    effect["minProperties"] = 1
    effect["maxProperties"] = 1
    defs.update(_condition_defs())
    schema["$defs"] = dict(sorted(defs.items()))


def _patch_scenario(schema: Schema) -> None:
    schema["properties"]["answers"] = {
        "$ref": "answers.schema.json",
        "description": "Answers as in an answers file; unanswered questions take their "
                       "defaults.",
    }


# ---------------------------------------------------------------- answers
def answers_schema(catalog: Catalog) -> Schema:
    """The answers file: one optional property per question, typed and bounded by it."""
    return {
        "$schema": DRAFT,
        "$id": schema_id("answers"),
        "title": "gpu-advisor answers file",
        "description": "A team's answers (YAML or JSON); every field is optional and takes the "
                       "questionnaire's default. See catalog/questions.yaml.",
        "type": "object",
        "properties": {q.id: _answer(q, catalog) for q in catalog.questions},
        "additionalProperties": False,
    }


def _answer(question: Question, catalog: Catalog) -> Schema:
    """The schema of one answer, as :func:`engine.answers.model._check` accepts it."""
    kind = question.type
    schema: Schema
    if kind in ("int", "float"):
        schema = {"type": "integer" if kind == "int" else "number"}
        if question.min is not None:
            schema["minimum"] = _bound(question.min)
        if question.max is not None:
            schema["maximum"] = _bound(question.max)
    elif kind == "bool":
        schema = {"type": "boolean"}
    elif kind == "tristate":
        schema = {"enum": ["auto", True, False]}
    elif kind == "choice":
        schema = {"enum": list(question.choices or [])}
    elif kind == "list":
        choice = {"enum": list(question.choices or [])}
        schema = {"anyOf": [{"type": "array", "items": choice}, choice]}
    elif kind in ("gpu", "model"):
        ids = catalog.gpus if kind == "gpu" else catalog.models
        schema = {"type": "string", "enum": sorted(ids)}
        if kind == "model":  # or a Hugging Face config.json, a folder holding one, a Hub id
            schema = {"type": "string",
                      "anyOf": [{"enum": sorted(ids)}, {"pattern": CONFIG_REFERENCE}]}
    else:
        schema = {"type": "string"}
    if question.nullable:
        schema = _nullable(schema)
    unit = f" Unit: {question.unit}." if question.unit else ""
    return {
        "title": question.prompt,
        "description": f"{question.help}{unit}",
        **schema,
        "default": copy.deepcopy(question.default if kind != "list" else
                                 list(question.default or [])),
    }


def _nullable(schema: Schema) -> Schema:
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None],
                **({"type": [schema["type"], "null"]} if "type" in schema else {})}
    if isinstance(schema.get("type"), str):
        return {**schema, "type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _bound(value: float) -> int | float:
    """Whole bounds as integers (``64``, not ``64.0``)."""
    return int(value) if float(value).is_integer() else value
