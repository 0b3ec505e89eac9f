"""`gpu-advisor rules check` on partial rule sets: one file or a directory without its own
decisions.yaml is checked against the bundled decision axes; findings are one line each."""

from __future__ import annotations

from pathlib import Path

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


def _check(runner: CliRunner, target: Path, *extra: str) -> tuple[int, list[str]]:
    result = runner.invoke(cli, ["rules", "check", "--rules", str(target), *extra])
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout.splitlines()


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


def test_bundled_rules_are_clean() -> None:
    result = CliRunner().invoke(cli, ["rules", "check", "--strict"])
    assert result.exit_code == 0, result.output
    assert "0 error(s), 0 warning(s)" in result.stderr
