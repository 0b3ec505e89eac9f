"""`gpu-advisor rules check` on partial rule sets: one file or a directory without its own
decisions.yaml is checked against the bundled decision axes; findings are one line each."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import cli

CONTRADICTION = """\
rules:
  - id: my.contradiction
    description: never fires
    when:
      all:
        - {fact: hours_per_year, gt: 5000}
        - {fact: hours_per_year, lt: 1000}
    then:
      - prefer: {decision: deployment, option: local, weight: 1}
    because: never
    sources: [decide.local]
"""

BROKEN = """\
rules:
  - id: my.misspelt-option
    description: a typo in an option
    when: {all: [{fact: hours_per_year, gt: 1}]}
    then:
      - prefer: {decision: deployment, option: clould}
    because: typo
    sources: [decide.local]
"""


LITERAL = "is compared with the number"


def _check(runner: CliRunner, target: Path, *extra: str,
           literals: bool = False) -> tuple[int, list[str]]:
    """Exit code and findings (those of numbers written in conditions only if asked)."""
    result = runner.invoke(cli, ["rules", "check", "--rules", str(target), *extra])
    assert "Traceback" not in result.output
    return result.exit_code, [line for line in result.stdout.splitlines()
                              if literals or LITERAL not in line]


@pytest.mark.slow
def test_single_file_contradiction_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(CONTRADICTION)
    code, lines = _check(CliRunner(), path)
    assert code == 0
    assert lines == [f"{path}:2: my.contradiction: warning: can never fire: its conditions "
                     "contradict each other"]
    code, _ = _check(CliRunner(), path, "--strict")
    assert code == 1


def test_directory_without_decisions_uses_bundled_axes(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BROKEN)
    code, lines = _check(CliRunner(), tmp_path)
    assert code == 2
    assert lines == [f"{tmp_path / 'bad.yaml'}:6: my.misspelt-option: unknown option 'clould' "
                     "for deployment; did you mean 'cloud'?; expected one of cloud, local, "
                     "hybrid"]


@pytest.mark.slow
def test_bundled_rules_are_clean() -> None:
    result = CliRunner().invoke(cli, ["rules", "check", "--strict"])
    assert result.exit_code == 0, result.output
    assert "0 error(s), 0 warning(s)" in result.stderr


def _negation(rule_id: str, group: str, n: int) -> str:
    leaves = "\n".join(f"          - {{fact: hours_per_year, gt: {100 * (i + 1)}}}"
                       for i in range(n))
    return (f"  - id: {rule_id}\n    description: a negation\n    when:\n      not:\n"
            f"        {group}:\n{leaves}\n    then:\n"
            "      - prefer: {decision: deployment, option: cloud, weight: 1}\n"
            "    because: wide\n    sources: [decide.cloud]\n")


def test_every_rule_beyond_durable_limits_is_a_located_finding(tmp_path: Path) -> None:
    """Checked before anything is built: each rule that cannot fit durable_rules, even
    split, is one `file:line: rule-id: error: message` line; a legitimate wide negation is
    not (it compiles to one any-group)."""
    path = tmp_path / "wide.yaml"
    text = "rules:\n" + _negation("my.fine", "all", 30) + _negation("my.too-wide", "any", 20) \
        + _negation("my.too-wide-too", "any", 25)
    path.write_text(text)
    code, lines = _check(CliRunner(), path)
    assert code == 2
    starts = [i for i, line in enumerate(text.splitlines(), start=1) if line == "      not:"]
    groups = "nested all/any groups (each negated comparison makes one); at most 14 (from 16, " \
             "durable_rules 2.0.28 fails with error 113); split into 16 parts it still does " \
             "not fit: simplify the rule"
    assert lines == [f"{path}:{starts[1]}: my.too-wide: error: compiles to 21 {groups}",
                     f"{path}:{starts[2]}: my.too-wide-too: error: compiles to 26 {groups}"]


REPEATS = """\
rules:
  - id: my.repeats-its-threshold
    description: says its threshold twice
    when:
      all:
        - {fact: hours_per_year, gte: 3500}
    then:
      - prefer: {decision: deployment, option: local, weight: 1}
    because: Above 3,500 GPU-hours a year owning pays.
    sources: [decide.local]
  - id: my.names-it-once
    description: names the fact and the policy constant
    when:
      all:
        - {fact: hours_per_year, gte: 3500}
        - {fact: budget_usd, gte: {policy: infiniband_per_node_usd}}
    then:
      - prefer: {decision: deployment, option: local, weight: 1}
    because: >-
      You train {hours_per_year} GPU-hours a year; the budget covers InfiniBand
      ({policy.infiniband_per_node_usd:,.0f} USD a node); and 35 is not the threshold.
    sources: [decide.local]
"""


def test_a_because_that_repeats_its_own_threshold_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(REPEATS)
    code, lines = _check(CliRunner(), path)
    assert code == 0
    assert lines == [f"{path}:6: my.repeats-its-threshold: warning: because repeats 3,500, the "
                     "threshold of hours_per_year in its condition: write {hours_per_year} or a "
                     "{policy.NAME} so it is said once"]


def test_a_number_written_in_a_condition_is_a_warning_naming_the_policy(
        tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(CONTRADICTION)
    code, lines = _check(CliRunner(), path, literals=True)
    assert code == 0
    assert [line for line in lines if LITERAL in line] == [
        f"{path}:6: my.contradiction: warning: hours_per_year {LITERAL} 5,000: name it under "
        "thresholds: in catalog/policy.yaml (with its source) and write {policy: NAME}",
        f"{path}:7: my.contradiction: warning: hours_per_year {LITERAL} 1,000: name it under "
        "thresholds: in catalog/policy.yaml (with its source) and write {policy: NAME}"]


def test_every_problem_of_one_rule_is_reported_at_once(tmp_path: Path) -> None:
    path = tmp_path / "typos.yaml"
    path.write_text(BROKEN.replace("{fact: hours_per_year, gt: 1}",
                                   "{fact: hours_per_yeer, gt: 1}").replace(
        "sources: [decide.local]", "sources: [decide.locall]"))
    code, lines = _check(CliRunner(), path)
    assert code == 2
    assert lines == [
        f"{path}:4: my.misspelt-option: unknown fact 'hours_per_yeer'; did you mean "
        "'hours_per_year'?",
        f"{path}:6: my.misspelt-option: unknown option 'clould' for deployment; did you mean "
        "'cloud'?; expected one of cloud, local, hybrid",
        f"{path}:8: my.misspelt-option: unknown source 'decide.locall'; did you mean "
        "'decide.local'?"]
