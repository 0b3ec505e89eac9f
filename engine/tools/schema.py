"""JSON Schemas (draft 2020-12) of every file a user writes: rules, catalog, answers, scenarios,
and of what ``recommend --format json`` prints (``decision``).

They are generated from the pydantic models with ``model_json_schema()``: the answers file
from the model the questionnaire (``catalog/questions.yaml``) generates, a rule's ``when``
from the condition models of :mod:`engine.rules.conditions`. Only "exactly one key" for an
effect is patched in by hand.

Editors use them through a first line ``# yaml-language-server: $schema=...`` in each file;
``gpu-advisor rules schema --out schemas --force`` regenerates the committed copies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.answers.model import answers_model
from engine.catalog.load import Catalog, PriceFile, load_catalog
from engine.catalog.models import (
    CloudFile,
    GpuFile,
    ModelFile,
    PlatformFile,
    PolicyFile,
    QuestionFile,
    RegionFile,
    SourceFile,
)
from engine.decide.engine import Decision
from engine.files.safe_write import check_in_folder, write_checked
from engine.rules.model import DeclarationFile, RuleFile
from engine.tools.scenarios import CaseFile, Scenario

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
    "regions": ("gpu-advisor catalog countries and region groups (catalog/regions.yaml)",
                RegionFile),
    "models": ("gpu-advisor catalog model presets (catalog/models.yaml)", ModelFile),
    "policy": ("gpu-advisor catalog policy constants (catalog/policy.yaml)", PolicyFile),
    "questions": ("gpu-advisor questionnaire (catalog/questions.yaml)", QuestionFile),
    "prices": ("gpu-advisor price override file (--prices)", PriceFile),
    "scenario": ("gpu-advisor scenario (tests/scenarios/*.yaml)", Scenario),
    "cases": ("gpu-advisor rule cases beside the rules (rules/*_test.yaml)", CaseFile),
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
                  names: tuple[str, ...] | None = None, *, force: bool = False) -> list[Path]:
    """Write ``directory/<name>.schema.json`` for each schema (all by default). Every file is
    checked before any is written: an existing one needs ``force``, and a symbolic link or
    anything but a regular file there is refused (:mod:`engine.files.safe_write`)."""
    chosen = {name: schema for name, schema in schemas(catalog).items()
              if names is None or name in names}
    targets = check_in_folder(directory, [f"{name}.schema.json" for name in chosen],
                              force=force, field="--out")
    for target, schema in zip(targets, chosen.values(), strict=True):
        write_checked(target, dump(schema).encode("utf-8"))
    return [target.shown for target in targets]


def _header(name: str, title: str, body: Schema) -> Schema:
    """``$schema``, ``$id`` and ``title`` first, then the body (its own title replaced)."""
    body = {k: v for k, v in body.items() if k != "title"}
    return {"$schema": DRAFT, "$id": schema_id(name), "title": title, **body}


# ---------------------------------------------------------------- rules
def _patch_rules(schema: Schema) -> None:
    """An effect has exactly one kind, and a kind given is never null."""
    defs = schema["$defs"]
    effect = defs["Effect"]
    for prop in effect["properties"].values():  # a given effect kind is never null
        prop["anyOf"] = [s for s in prop["anyOf"] if s != {"type": "null"}]
        prop.pop("default", None)
        if len(prop["anyOf"]) == 1:
            prop.update(prop.pop("anyOf")[0])
    effect["minProperties"] = 1
    effect["maxProperties"] = 1


def _patch_scenario(schema: Schema) -> None:
    schema["properties"]["answers"] = {
        "$ref": "answers.schema.json",
        "description": "Answers as in an answers file; unanswered questions take their "
                       "defaults.",
    }


# ---------------------------------------------------------------- answers
def answers_schema(catalog: Catalog) -> Schema:
    """The answers file: the schema of the :class:`Answers` model the questionnaire generates
    (one optional property per question, typed, bounded and defaulted by it)."""
    description = ("A team's answers (YAML or JSON); every field is optional and takes the "
                   "questionnaire's default. See catalog/questions.yaml.")
    body = {"description": description, **answers_model(catalog).model_json_schema()}
    return _header("answers", "gpu-advisor answers file", body)
