"""JSON Schemas: every shipped file validates, the committed schemas are current, and they catch
the mistakes they are meant to catch in an editor."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from engine.catalog.load import Catalog
from engine.cli.rules_schema import schema as schema_cmd
from engine.tools.schema import NAMES, dump, schema_id, schemas

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schemas"
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")


def schema_name(path: Path) -> str:
    """Which schema a shipped YAML file follows."""
    parent = path.parent.name
    if parent == "rules":
        if path.stem.endswith("_test"):
            return "cases"
        return "decisions" if path.name == "decisions.yaml" else "rules"
    if parent == "catalog":
        return path.stem
    if parent == "examples":
        return "answers"
    if parent == "scenarios":
        return "scenario"
    raise AssertionError(f"no schema for {path}")  # pragma: no cover


SHIPPED = sorted(
    p for pattern in ("rules/*.yaml", "catalog/*.yaml", "examples/*.yaml",
                      "tests/scenarios/*.yaml")
    for p in ROOT.glob(pattern)
)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> dict[str, dict[str, Any]]:
    return schemas(catalog)


@pytest.fixture(scope="module")
def registry(generated: dict[str, dict[str, Any]]) -> Registry[Any]:
    return Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in generated.values())


def validator(generated: dict[str, dict[str, Any]], registry: Registry[Any],
              name: str) -> Draft202012Validator:
    return Draft202012Validator(generated[name], registry=registry)


def as_json(data: Any) -> Any:
    """YAML data as an editor sees it: dates (a YAML 1.1 type) are plain strings."""
    def default(value: Any) -> str:
        if isinstance(value, dt.date):
            return value.isoformat()
        raise TypeError(repr(value))  # pragma: no cover
    return json.loads(json.dumps(data, default=default))


def errors(validator: Draft202012Validator, data: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(as_json(data))]


# ------------------------------------------------------------------ the schemas themselves
@pytest.mark.slow
def test_all_schemas_are_named_and_valid(generated: dict[str, dict[str, Any]]) -> None:
    assert set(generated) == set(NAMES)
    for name, schema in generated.items():
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == schema_id(name) == \
            f"https://gpu-advisor.dev/schemas/{name}.schema.json"
        assert schema["title"]


def test_committed_schemas_are_current(generated: dict[str, dict[str, Any]]) -> None:
    """schemas/ equals what `gpu-advisor rules schema --out schemas --force` writes now."""
    stale = [name for name, schema in generated.items()
             if not (SCHEMA_DIR / f"{name}.schema.json").is_file()
             or (SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8") != dump(schema)]
    extra = sorted(p.name for p in SCHEMA_DIR.glob("*.schema.json")
                   if p.name.removesuffix(".schema.json") not in generated)
    assert not stale and not extra, (
        f"stale {stale}, unexpected {extra}: run `gpu-advisor rules schema --out schemas --force`")


# ------------------------------------------------------------------ shipped files
def test_there_are_shipped_files() -> None:
    kinds = {schema_name(p) for p in SHIPPED}
    assert {"rules", "decisions", "answers", "scenario", "gpus", "questions"} <= kinds


@pytest.mark.slow
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_file_validates(path: Path, generated: dict[str, dict[str, Any]],
                                registry: Registry[Any]) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert errors(validator(generated, registry, schema_name(path)), data) == []


@pytest.mark.parametrize("path", sorted(ROOT.glob("examples/*.json")), ids=lambda p: p.name)
def test_json_example_validates(path: Path, generated: dict[str, dict[str, Any]],
                                registry: Registry[Any]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert errors(validator(generated, registry, "answers"), data) == []


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_file_names_its_schema(path: Path) -> None:
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    match = MODELINE.match(first)
    assert match, f"{path.name}: first line is not a yaml-language-server modeline: {first!r}"
    target = (path.parent / match.group(1)).resolve()
    assert target == SCHEMA_DIR / f"{schema_name(path)}.schema.json"
    assert target.is_file()


# ------------------------------------------------------------------ rules
GOOD_RULE: dict[str, Any] = {
    "id": "test.good",
    "description": "A valid rule.",
    "when": {"all": [
        {"fact": "params_b", "gte": 70},
        {"not": {"fact": "fits_consumer_gpu", "is": True}},
        {"any": [{"fact": "usage_pattern", "in": ["continuous", "bursty"]},
                 {"fact": "hours_per_year", "gt": {"fact": "break_even_hours"}}]},
        {"fact": "planned_gpu", "exists": False},
    ]},
    "then": [{"prefer": {"decision": "deployment", "option": "cloud", "weight": 2}},
             {"warn": {"id": "nothing-fits", "severity": "critical"}}],
    "because": "Because.",
    "sources": ["decide.cloud"],
}


def rule_errors(generated: dict[str, dict[str, Any]], registry: Registry[Any],
                **changes: Any) -> list[str]:
    return errors(validator(generated, registry, "rules"), {"rules": [{**GOOD_RULE, **changes}]})


def test_good_rule_validates(generated: dict[str, dict[str, Any]],
                             registry: Registry[Any]) -> None:
    assert rule_errors(generated, registry) == []
    assert rule_errors(generated, registry, when=None) == []


@pytest.mark.parametrize("changes", [
    pytest.param({"severity": "high"}, id="unknown-rule-key"),
    pytest.param({"when": {"fact": "params_b", "gte": 70, "lt": 100}}, id="leaf-two-operators"),
    pytest.param({"when": {"fact": "params_b"}}, id="leaf-no-operator"),
    pytest.param({"when": {"fact": "params_b", "$ne": 70}}, id="unknown-operator"),
    pytest.param({"when": {"all": [{"fact": "x", "in": []}]}}, id="empty-in"),
    pytest.param({"when": {"fact": "x", "exists": "yes"}}, id="exists-not-bool"),
    pytest.param({"when": {"all": [], "any": []}}, id="all-and-any"),
    pytest.param({"when": {"fact": "x", "eq": {"fact": "y", "z": 1}}}, id="bad-fact-ref"),
    pytest.param({"when": {"any": [{"fact": "x", "eq": 1}, None]}}, id="null-item"),
    pytest.param({"when": {"not": None}}, id="not-null"),
    pytest.param({"when": {}}, id="empty-mapping"),
    pytest.param({"when": {"fact": "x", "in": list(range(501))}}, id="in-too-long"),
    pytest.param({"when": {"fact": "x", "exists": None}}, id="exists-null"),
    pytest.param({"then": [{"prefer": {"decision": "deployment", "option": "cloud"},
                            "avoid": {"decision": "deployment", "option": "local"}}]},
                 id="effect-two-keys"),
    pytest.param({"then": [{}]}, id="effect-no-key"),
    pytest.param({"then": [{"prefer": None}]}, id="effect-null"),
    pytest.param({"then": []}, id="no-effects"),
])
def test_broken_rule_fails(changes: dict[str, Any], generated: dict[str, dict[str, Any]],
                           registry: Registry[Any]) -> None:
    assert rule_errors(generated, registry, **changes)


# ------------------------------------------------------------------ answers
@pytest.mark.parametrize("answers", [
    {"budget": 5000},
    {"seq_len": 32},
    {"seq_len": 2048.5},
    {"workload": "train"},
    {"upfront_capex": "yes"},
    {"planned_gpu": "rtx-9999"},
    {"allowed_regions": ["mars"]},
    {"gradient_checkpointing": "sometimes"},
    {"runs_per_year": 0},
    {"cloud_ecosystem": "oracle"},
    {"hours_gpu": "h900"},
])
def test_bad_answers_fail(answers: dict[str, Any], generated: dict[str, dict[str, Any]],
                          registry: Registry[Any]) -> None:
    assert errors(validator(generated, registry, "answers"), answers)


def test_answers_schema_follows_questions(catalog: Catalog,
                                          generated: dict[str, dict[str, Any]],
                                          registry: Registry[Any]) -> None:
    schema = generated["answers"]
    assert schema["additionalProperties"] is False and "required" not in schema
    # one property per question, and model_shape, which --model fills (no question asks it)
    assert list(schema["properties"]) == ["model_shape", *(q.id for q in catalog.questions)]
    ok = {"model": None, "model_params_b": 13, "gradient_checkpointing": True,
          "allowed_regions": "eu", "seq_len": 4096.0, "planned_gpu": "rtx-4090"}
    assert errors(validator(generated, registry, "answers"), ok) == []
    shaped = {"model": "acme/acme-13b", "model_shape": {
        "params_b": 13, "layers": 40, "hidden": 5120, "intermediate": 13824, "heads": 40,
        "kv_heads": 40, "vocab": 32000, "source": "the model card"}}
    assert errors(validator(generated, registry, "answers"), shaped) == []
    assert errors(validator(generated, registry, "answers"),
                  {"model_shape": {**shaped["model_shape"], "lyers": 40}}) != []


# ------------------------------------------------------------------ the command
@pytest.fixture
def rules_group() -> click.Group:
    """`rules schema` as the main CLI registers it."""
    group = click.Group("rules")
    group.add_command(schema_cmd)
    return group


def test_command_prints_rules_schema(runner: CliRunner, rules_group: click.Group,
                                     generated: dict[str, dict[str, Any]]) -> None:
    result = runner.invoke(rules_group, ["schema", "rules"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == generated["rules"]


@pytest.mark.slow
def test_command_writes_all(runner: CliRunner, rules_group: click.Group,
                            tmp_path: Path) -> None:
    result = runner.invoke(rules_group, ["schema", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == sorted(f"{n}.schema.json" for n in NAMES)
    for name in written:
        assert (tmp_path / "out" / name).read_text() == (SCHEMA_DIR / name).read_text()


def test_command_needs_name_or_out(runner: CliRunner, rules_group: click.Group) -> None:
    result = runner.invoke(rules_group, ["schema"])
    assert result.exit_code == 2 and "--out" in result.output
    result = runner.invoke(rules_group, ["schema", "nope"])
    assert result.exit_code == 2
