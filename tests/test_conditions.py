"""Rule conditions (``when:``): read by the pydantic models of engine.rules.when, and every
malformed condition refused at load with one exact line ``file:line: rule-id: message``, the
line that of the condition (or list item) at fault."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.catalog.load import Catalog
from engine.cli import cli
from engine.errors import RuleError
from engine.rules.conditions import All, AnyOf, FactRef, Leaf, Not
from engine.rules.load import Rulebook, load_rulebook
from engine.rules.operators import OPERATORS
from engine.rules.when import LeafCondition

REPO = Path(__file__).parent.parent
RULE = """\
rules:
  - id: {rule_id}
    description: a condition under test
{when}
    then:
      - prefer: {{decision: deployment, option: cloud}}
    because: test
    sources: [decide.cloud]
"""
LEAF_SHAPE = ("a leaf has 'fact' and exactly one operator of eq, ne, lt, lte, gt, gte, in, "
              "not_in, is, exists")
NOT_A_MAPPING = "a condition is a mapping (all/any/not or fact), got "
POLICY_ONLY = "takes {policy: NAME} only with eq, ne, lt, lte, gt or gte and a constant's name"
VALUE_SHAPE = "a value is a literal, {fact: NAME} or {policy: NAME}"


def rule_text(when: str, rule_id: str = "t.cond") -> str:
    """A rule file of one rule with this ``when`` block (lines indented by four spaces)."""
    return RULE.format(rule_id=rule_id, when=when.rstrip("\n"))


def line_of(text: str, marker: str) -> int:
    """The 1-based line of the first line of ``text`` containing ``marker`` (the whole line,
    for a marker ending in a line feed)."""
    whole = marker.removesuffix("\n") if marker.endswith("\n") else None
    return next(n for n, line in enumerate(text.splitlines(), 1)
                if line == whole or (whole is None and marker in line))


def load(tmp_path: Path, text: str, catalog: Catalog) -> Rulebook:
    """Load a rule folder of this one file (the bundled decisions.yaml declares the axes)."""
    (tmp_path / "rules").mkdir(exist_ok=True)
    (tmp_path / "rules" / "mine.yaml").write_text(text, encoding="utf-8")
    return load_rulebook(tmp_path / "rules", catalog)


# (when block, marker on the line the error names, message)
CASES = [
    ("    when: 5", "when: 5", NOT_A_MAPPING + "int"),
    ("    when: [{fact: hours_per_year, gt: 1}]", "when: [", NOT_A_MAPPING + "list"),
    ("    when: {all: 5}", "when:", "'all' takes a list of conditions"),
    ("    when: {any: {fact: hours_per_year, gt: 1}}", "when:", "'any' takes a list of conditions"),
    ("    when: {all: [], any: []}", "when:",
     "unknown condition keys ['all', 'any']; expected all, any, not or fact"),
    ("    when: {}", "when:", "unknown condition keys []; expected all, any, not or fact"),
    ("    when: {not: {fact: hours_per_year, gt: 1}, extra: 1}", "when:",
     "unknown condition keys ['extra', 'not']; expected all, any, not or fact"),
    ("    when: {1: x}", "when:", "unknown condition keys ['1']; expected all, any, not or fact"),
    ("    when:\n      all:\n        - {fact: hours_per_year, gt: 1}\n        - any:\n"
     "            - {fact: budget_usd, gt: 1}\n            - {fact: budget_usd, gte_: 1}\n",
     "gte_", "unknown operator 'gte_'; did you mean 'gte'?"),
    ("    when:\n      all:\n        - {fact: hours_per_year, gt: 1}\n        - 7\n", "- 7",
     NOT_A_MAPPING + "int"),
    ("    when:\n      any:\n        - {fact: hours_per_year, gt: 1}\n        -\n"
     "        - {fact: budget_usd, gt: 1}\n", "        -\n", NOT_A_MAPPING + "NoneType"),
    ("    when: {not: null}", "when:", NOT_A_MAPPING + "NoneType"),
    ("    when:\n      not:\n        fact: hours_per_year\n        gtx: 1\n",
     "fact: hours_per_year", "unknown operator 'gtx'; did you mean 'gt'?"),
    ("    when:\n      not:\n        all: {fact: hours_per_year, gt: 1}\n", "all:",
     "'all' takes a list of conditions"),
    ("    when: {fact: hours_per_year}", "when:", LEAF_SHAPE),
    ("    when: {fact: hours_per_year, gt: 1, lt: 5}", "when:", LEAF_SHAPE),
    ("    when: {fact: hours_per_year, all: []}", "when:", "unknown operator 'all'"),
    ("    when: {fact: 5, eq: 1}", "when:", "'fact' must be a fact name"),
    ("    when: {fact: [a], eq: 1}", "when:", "'fact' must be a fact name"),
    ("    when: {fact: usage_pattern, in: {policy: lora_rank}}", "when:", f"'in' {POLICY_ONLY}"),
    ("    when: {fact: planned_gpu, exists: {policy: lora_rank}}", "when:",
     f"'exists' {POLICY_ONLY}"),
    ("    when: {fact: hours_per_year, gt: {policy: 5}}", "when:", f"'gt' {POLICY_ONLY}"),
    ("    when: {fact: hours_per_year, gt: {fact: budget_usd, y: 1}}", "when:", VALUE_SHAPE),
    ("    when: {fact: hours_per_year, gt: {fact: 5}}", "when:", VALUE_SHAPE),
    ("    when: {fact: hours_per_year, gt: {}}", "when:", VALUE_SHAPE),
    ("    when: {fact: usage_pattern, in: {fact: x, y: 1}}", "when:", VALUE_SHAPE),
    ("    when: {fact: upfront_capex, is: {fact: x}}", "when:",
     "'is' takes a literal, not {fact: ...}"),
    ("    when: {fact: usage_pattern, in: {fact: x}}", "when:",
     "'in' takes a literal, not {fact: ...}"),
    ("    when: {fact: usage_pattern, in: []}", "when:", "'in' takes a non-empty list"),
    ("    when: {fact: usage_pattern, not_in: continuous}", "when:",
     "'not_in' takes a non-empty list"),
    ("    when: {fact: planned_gpu, exists: maybe}", "when:", "'exists' takes true or false"),
    ("    when: {fact: planned_gpu, exists: null}", "when:", "'exists' takes true or false"),
    ("    when: {fact: upfront_capex, is: 5}", "when:", "'is' takes true, false or null"),
    ("    when: {fact: hours_per_year, gt: .nan}", "when:", "NaN and Infinity are not allowed"),
    ("    when: {fact: hours_per_year, gt: -.inf}", "when:", "NaN and Infinity are not allowed"),
    ("    when: {fact: hours_per_year, gt: 1.0e+20}", "when:",
     "1e+20 would be written in exponent form, which durable_rules cannot parse; use a value "
     "between 0.0001 and 10^15"),
    ("    when: {fact: hours_per_year, gt: 1000000000000000}", "when:",
     "1000000000000000 is too large (limit 10^15)"),
    ("    when: {fact: hours_per_year, eq: [1, 2]}", "when:",
     "expected a string, number, boolean or null, got [1, 2]"),
    ("    when: {fact: usage_pattern, in: [continuous, [x]]}", "when:",
     "expected a string, number, boolean or null, got ['x']"),
    ("    when: {fact: hours_per_year, gte: {policy: lora_rnak}}", "when:",
     "unknown policy constant 'lora_rnak'; did you mean 'lora_rank'?"),
    ("    when: {fact: hours_per_year, gte: {policy: weight_bytes_16bit}, lt: 1}", "when:",
     LEAF_SHAPE),
    # names are checked after the structure: the first problem of the rule is reported
    ("    when:\n      all:\n        - {fact: hours_per_yer, gt: 1}\n"
     "        - {fact: budget_usd, gt: {fact: budget}}\n", "hours_per_yer",
     "unknown fact 'hours_per_yer'; did you mean 'hours_per_year'?"),
    ("    when:\n      any:\n        - {fact: budget_usd, gt: 1}\n"
     "        - {fact: budget_usd, gt: {fact: budgt_usd}}\n", "budgt_usd",
     "unknown fact 'budgt_usd'; did you mean 'budget_usd'?"),
]


@pytest.mark.parametrize(("when", "marker", "message"), CASES,
                         ids=[str(i) for i in range(len(CASES))])
def test_malformed_condition_exact_error(tmp_path: Path, catalog: Catalog, when: str,
                                         marker: str, message: str) -> None:
    text = rule_text(when)
    with pytest.raises(RuleError) as info:
        load(tmp_path, text, catalog)
    path = tmp_path / "rules" / "mine.yaml"
    assert str(info.value) == f"{path}:{line_of(text, marker)}: t.cond: {message}"


def test_condition_values_keep_their_types(tmp_path: Path, catalog: Catalog) -> None:
    when = ("    when:\n      all:\n        - {fact: hours_per_year, gt: 1}\n"
            "        - {fact: hours_per_year, lt: 1.5}\n"
            "        - {fact: usage_pattern, in: [continuous, bursty]}\n"
            "        - not: {fact: upfront_capex, is: true}\n"
            "        - {fact: planned_gpu, is: null}\n"
            "        - {fact: hours_per_year, gte: {fact: budget_usd}}\n"
            "        - {fact: hours_per_year, gte: {policy: lora_rank}}\n"
            "        - any: [{fact: planned_gpu, exists: false}, {fact: model, eq: '7'}]\n")
    text = rule_text(when)
    (rule,) = load(tmp_path, text, catalog).rules
    assert rule.condition == All((
        Leaf("hours_per_year", "gt", 1, 6), Leaf("hours_per_year", "lt", 1.5, 7),
        Leaf("usage_pattern", "in", ("continuous", "bursty"), 8),
        Not(Leaf("upfront_capex", "is", True, 9), 9), Leaf("planned_gpu", "is", None, 10),
        Leaf("hours_per_year", "gte", FactRef("budget_usd"), 11),
        Leaf("hours_per_year", "gte", 16.0, 12),
        AnyOf((Leaf("planned_gpu", "exists", False, 13), Leaf("model", "eq", "7", 13)), 13),
    ), 5)
    values = [leaf.value for leaf in rule.condition.children[:2]]  # type: ignore[union-attr]
    assert [type(v) for v in values] == [int, float]
    assert type(rule.condition.children[3].child.value) is bool  # type: ignore[union-attr]


@pytest.mark.parametrize("when", ["", "    when: null", "    when:", "    when: {all: []}"])
def test_no_condition_always_holds(tmp_path: Path, catalog: Catalog, when: str) -> None:
    (rule,) = load(tmp_path, rule_text(when), catalog).rules
    assert isinstance(rule.condition, All) and rule.condition.children == ()


def test_schema_problem_of_a_later_rule_is_reported_before_a_condition(
        tmp_path: Path, catalog: Catalog) -> None:
    """A file's schema problems come first (as before conditions were models)."""
    text = rule_text("    when: {fact: hours_per_year, gtx: 1}") + rule_text(
        "    when: {fact: hours_per_year, gt: 1}", "t.other").replace("rules:\n", "").replace(
        "description:", "descripton:")
    with pytest.raises(RuleError) as info:
        load(tmp_path, text, catalog)
    path = tmp_path / "rules" / "mine.yaml"
    assert str(info.value) == (f"{path}:{line_of(text, 'descripton')}: "
                               "rules[t.other].descripton: unknown key; did you mean "
                               "'description'?")


def test_duplicate_id_is_reported_before_the_condition(tmp_path: Path,
                                                       catalog: Catalog) -> None:
    text = rule_text("    when: {fact: hours_per_year, gt: 1}") + rule_text(
        "    when: {fact: hours_per_year, gtx: 1}").replace("rules:\n", "")
    with pytest.raises(RuleError) as info:
        load(tmp_path, text, catalog)
    path = tmp_path / "rules" / "mine.yaml"
    first, second = (n for n, line in enumerate(text.splitlines(), 1) if "id: t.cond" in line)
    assert str(info.value) == (f"{path}:{second}: t.cond: duplicate rule id (first defined at "
                               f"mine.yaml:{first})")


def test_rules_check_reports_each_broken_condition(tmp_path: Path) -> None:
    """`rules check` lists one line per broken rule and still checks the file's other rules."""
    text = (rule_text("    when: {fact: hours_per_year, gtx: 1}", "t.one")
            + rule_text("    when: {fact: hours_per_year, gt: 1}", "t.ok").replace("rules:\n", "")
            + rule_text("    when: {all: 5}", "t.two").replace("rules:\n", "")
            + rule_text("    when: {fact: hours_per_yer, gt: 1}", "t.three").replace(
                "rules:\n", ""))
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["rules", "check", "--rules", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stdout.splitlines() == [
        f"{path}:{line_of(text, 'gtx')}: t.one: unknown operator 'gtx'; did you mean 'gt'?",
        f"{path}:{line_of(text, 'all: 5')}: t.two: 'all' takes a list of conditions",
        f"{path}:{line_of(text, 'hours_per_yer')}: t.three: unknown fact 'hours_per_yer'; "
        "did you mean 'hours_per_year'?",
    ]
    assert result.stderr.splitlines() == ["1 rules: 3 error(s), 0 warning(s)"]


def test_cli_malformed_condition_exit_2_one_line(tmp_path: Path) -> None:
    text = rule_text("    when: {fact: usage_pattern, in: []}")
    (tmp_path / "rules").mkdir()
    path = tmp_path / "rules" / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "engine", "recommend", "--rules", str(tmp_path / "rules"),
         "--answers", str(REPO / "examples" / "startup-7b-continuous.yaml"), "--no-audit"],
        capture_output=True, text=True, timeout=60, cwd=REPO, check=False)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"error: {path}:4: t.cond: 'in' takes a non-empty list\n"


def test_operators_are_the_leaf_models_fields() -> None:
    assert OPERATORS == ("eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "is", "exists")
    schema = LeafCondition.model_json_schema()
    assert list(schema["properties"]) == ["fact", *OPERATORS]
    assert (schema["minProperties"], schema["maxProperties"]) == (2, 2)
