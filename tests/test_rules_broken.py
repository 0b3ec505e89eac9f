"""Every broken rule file in tests/rules_broken/ fails at load with one exact, located line.

Each case copies the bundled rules to a temporary directory, adds one broken file, loads it
with the real loader and compares ``str(RuleError)`` (``path:line: rule-id: message``), the
line computed from the file we wrote.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.catalog.load import Catalog
from engine.errors import RuleError
from engine.resources import bundled_dir
from engine.rules.load import load_rulebook

BROKEN = Path(__file__).parent / "rules_broken"
REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "startup-7b-continuous.yaml"
TEMPLATE_NOT_A_NAME = (
    "is not a fact name: only {fact} or {fact:,.0f} are allowed "
    "(no attributes, indexes or expressions)"
)


def rules_with(tmp_path: Path, broken: str) -> Path:
    """A copy of the bundled rules plus ``tests/rules_broken/<broken>`` (loaded last)."""
    target = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), target)
    shutil.copy(BROKEN / broken, target / f"zz-{broken}")
    return target


def line_of(path: Path, marker: str) -> int:
    """The 1-based line of the first line of ``path`` containing ``marker``."""
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if marker in text:
            return number
    raise AssertionError(f"{marker!r} not in {path}")


def load_error(tmp_path: Path, broken: str, catalog: Catalog) -> tuple[Path, RuleError]:
    """Load the rules with ``broken`` added; the written file's path and the RuleError."""
    directory = rules_with(tmp_path, broken)
    with pytest.raises(RuleError) as info:
        load_rulebook(directory, catalog)
    return directory / f"zz-{broken}", info.value


@dataclass(frozen=True)
class Case:
    file: str
    marker: str
    """Text on the line the error must point at."""
    rule_id: str
    message: str


CASES = [
    Case("unknown-fact.yaml", "hours_per_yaer", "broken.unknown-fact",
         "unknown fact 'hours_per_yaer'; did you mean 'hours_per_year'?"),
    Case("unknown-option.yaml", "clould", "broken.unknown-option",
         "unknown option 'clould' for deployment; did you mean 'cloud'?; "
         "expected one of cloud, local, hybrid"),
    Case("unknown-decision.yaml", "deploymnet", "broken.unknown-decision",
         "unknown decision 'deploymnet'; did you mean 'deployment'?; expected one of "
         "approach, method, deployment, cloud_kind, pricing, sharing"),
    Case("unknown-operator.yaml", "gte_", "broken.unknown-operator",
         "unknown operator 'gte_'; did you mean 'gte'?"),
    Case("dollar-ne-operator.yaml", "$ne", "broken.dollar-ne",
         "unknown operator '$ne'; did you mean 'ne'?"),
    Case("wrong-type.yaml", '"lots"', "broken.wrong-type",
         "'hours_per_year' is a number; 'lots' is not"),
    Case("lt-on-bool.yaml", "lt: true", "broken.lt-on-bool",
         "'lt' needs a number fact; 'upfront_capex' is a bool"),
    Case("enum-misspelt.yaml", "on-premise}", "broken.enum-misspelt",
         "'on-premise' is not a value of 'data_residency'; did you mean 'on-premises'?; "
         "expected one of none, region, on-premises"),
    Case("unknown-source.yaml", "decide.locl", "broken.unknown-source",
         "unknown source 'decide.locl'; did you mean 'decide.local'?"),
    Case("unknown-warn.yaml", "pitfall.bandwith", "broken.unknown-warn",
         "unknown warning 'pitfall.bandwith'; did you mean 'pitfall.bandwidth'?; "
         "use a source id or declare it in decisions.yaml"),
    Case("duplicate-id.yaml", "- id: usage.continuous-favours-local",
         "usage.continuous-favours-local",
         "duplicate rule id (first defined at usage.yaml:{usage_line})"),
    Case("set-cycle.yaml", "- id: broken.cycle-a", "broken.cycle-a",
         "set cycle: broken.cycle-a → broken.cycle-b → broken.cycle-a"),
    Case("template-unknown-fact.yaml", "because:", "broken.template-unknown-fact",
         "because: unknown fact '{hours_per_yr}'; did you mean 'hours_per_year'?"),
    Case("template-dunder-class.yaml", "because:", "broken.template-dunder-class",
         f"because: '{{__class__}}' {TEMPLATE_NOT_A_NAME}"),
    Case("template-positional-globals.yaml", "because:", "broken.template-positional-globals",
         f"because: '{{0.__globals__}}' {TEMPLATE_NOT_A_NAME}"),
    Case("template-attribute-dict.yaml", "because:", "broken.template-attribute-dict",
         f"because: '{{answers.__dict__}}' {TEMPLATE_NOT_A_NAME}"),
    Case("template-index.yaml", "because:", "broken.template-index",
         f"because: '{{hours_per_year[0]}}' {TEMPLATE_NOT_A_NAME}"),
    Case("template-conversion.yaml", "because:", "broken.template-conversion",
         "because: conversion '!r' is not allowed in {hours_per_year}"),
    Case("template-nested-spec.yaml", "because:", "broken.template-nested-spec",
         "because: format '{x}' is not allowed in {hours_per_year}; use e.g. :,.0f or :.1%"),
    Case("exponent-float.yaml", "1.0e-05", "broken.exponent-float",
         "1e-05 would be written in exponent form, which durable_rules cannot parse; "
         "use a value between 0.0001 and 10^15"),
    Case("exponent-bare.yaml", "gte: 1e-05", "broken.exponent-bare",
         "'activation_share' is a number; '1e-05' is not"),
    Case("set-answer-fact.yaml", "- set:", "broken.set-answer-fact",
         "set: 'hours_per_year' is an answer or derived fact; choose a new name"),
    Case("candidate-decision.yaml", "- prefer:", "broken.candidate-decision",
         "in a candidate rule, prefer/avoid/exclude apply to the candidate: leave out "
         "decision and option"),
    # Schema errors (pydantic) name the dotted field, the rule's id in brackets.
    Case("empty-then.yaml", "then: []", "rules[broken.empty-then].then",
         "list should have at least 1 item after validation, not 0"),
    Case("extra-key.yaml", "descripton:", "rules[broken.extra-key].descripton",
         "unknown key; did you mean 'description'?"),
    # durable_rules' limits that a file shows by itself (engine/rules/limits.py)
    Case("in-list-too-long.yaml", "in: [", "broken.in-list-too-long",
         "'in' lists 512 values; at most 500 (durable_rules 2.0.28 hangs on 512 alternatives "
         "of one fact)"),
    Case("string-too-long.yaml", "eq: \"xxx", "broken.string-too-long",
         "a string of 5,000 bytes; at most 4,096 (durable_rules 2.0.28 compares long strings "
         "wrongly)"),
]

# Rules that load but cannot be compiled within durable_rules' limits, even split: refused by
# the compiler (before durable_rules sees them), located at the rule's condition.
COMPILE_CASES = [
    Case("negation-too-wide.yaml", "not:", "broken.negation-too-wide",
         "compiles to 21 nested all/any groups (each negated comparison makes one); at most 14 "
         "(from 16, durable_rules 2.0.28 fails with error 113); split into 16 parts it still "
         "does not fit: simplify the rule"),
]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.file.removesuffix(".yaml") for c in CASES])
def test_broken_rule_file_exact_error(tmp_path: Path, catalog: Catalog, case: Case) -> None:
    path, error = load_error(tmp_path, case.file, catalog)
    usage_line = line_of(bundled_dir("rules") / "usage.yaml",
                         "- id: usage.continuous-favours-local")
    line = line_of(path, case.marker)
    message = case.message.replace("{usage_line}", str(usage_line))
    assert str(error) == f"{path}:{line}: {case.rule_id}: {message}"
    assert (error.path, error.line, error.rule_id) == (str(path), line, case.rule_id)
    assert "\n" not in str(error)


# YAML-level problems: no rule id yet; PyYAML's own wording is only checked up to its problem.
YAML_CASES = [
    # PyYAML notices the unclosed ``{`` where the next key starts.
    ("yaml-syntax.yaml", "    then:", "YAML error: did not find expected "),
    ("python-tag.yaml", "!!python/object", "YAML error: unsupported YAML tag or value ("),
    ("yaml-alias.yaml", "&continuous", "YAML anchors and aliases are not allowed"),
]


@pytest.mark.parametrize(("file", "marker", "prefix"), YAML_CASES,
                         ids=[c[0].removesuffix(".yaml") for c in YAML_CASES])
def test_broken_yaml_is_a_located_rule_error(tmp_path: Path, catalog: Catalog, file: str,
                                             marker: str, prefix: str) -> None:
    path, error = load_error(tmp_path, file, catalog)
    line = line_of(path, marker)
    assert str(error).startswith(f"{path}:{line}: {prefix}")
    assert error.line == line
    assert error.rule_id is None
    assert "\n" not in str(error)


def test_python_tag_names_the_tag_and_runs_nothing(tmp_path: Path, catalog: Catalog) -> None:
    _, error = load_error(tmp_path, "python-tag.yaml", catalog)
    assert "python/object/apply:os.system" in str(error)


@pytest.mark.parametrize("case", COMPILE_CASES,
                         ids=[c.file.removesuffix(".yaml") for c in COMPILE_CASES])
def test_rule_beyond_durable_limits_is_refused_by_the_compiler(
        tmp_path: Path, catalog: Catalog, case: Case) -> None:
    from engine.decide.engine import compile_policy

    directory = rules_with(tmp_path, case.file)
    book = load_rulebook(directory, catalog)
    with pytest.raises(RuleError) as info:
        compile_policy(book)
    path = directory / f"zz-{case.file}"
    assert str(info.value) == f"{path}:{line_of(path, case.marker)}: {case.rule_id}: {case.message}"


def test_every_broken_file_has_a_case() -> None:
    covered = {c.file for c in (*CASES, *COMPILE_CASES)} | {c[0] for c in YAML_CASES}
    assert covered == {p.name for p in BROKEN.glob("*.yaml")}


def test_bundled_rules_copy_loads(tmp_path: Path, catalog: Catalog) -> None:
    """The helper's baseline: without a broken file the copy loads (so errors come from it)."""
    target = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), target)
    assert len(load_rulebook(target, catalog).rules) > 50


@pytest.mark.slow
@pytest.mark.parametrize("broken", ["unknown-fact.yaml", "yaml-syntax.yaml", "extra-key.yaml",
                                    "in-list-too-long.yaml", "negation-too-wide.yaml"])
def test_cli_broken_rules_exit_2_one_line(tmp_path: Path, broken: str) -> None:
    directory = rules_with(tmp_path, broken)
    result = subprocess.run(
        [sys.executable, "-m", "engine", "recommend", "--rules", str(directory),
         "--answers", str(EXAMPLE), "--no-audit"],
        capture_output=True, text=True, timeout=60, cwd=REPO, check=False,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {directory / f'zz-{broken}'}:")
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
