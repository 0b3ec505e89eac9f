"""The documentation is executed: the worked example of docs/rule-authoring.md runs, and the
README names every command."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from engine.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```(\w+)([^\n]*)\n(.*?)```", re.S)


def _blocks(path: Path) -> list[tuple[str, dict[str, str], str]]:
    out = []
    for lang, info, body in BLOCK.findall(path.read_text(encoding="utf-8")):
        attrs = dict(part.split("=", 1) for part in info.split() if "=" in part)
        out.append((lang, attrs, body))
    return out


@pytest.mark.slow
def test_rule_authoring_worked_example_runs(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("rules", "catalog", "examples"):
        shutil.copytree(ROOT / name, tmp_path / name)
    # `rules diff` decides every scenario on both policies: a sixth of them, and those the
    # example's cheaper power could move, show it runs (the diff's content is not asserted)
    shipped = sorted((ROOT / "tests" / "scenarios").glob("*.yaml"))
    (tmp_path / "tests" / "scenarios").mkdir(parents=True)
    for i, path in enumerate(shipped):
        if i % 6 == 0 or "electricity" in path.read_text(encoding="utf-8"):
            shutil.copy(path, tmp_path / "tests" / "scenarios" / path.name)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    ran = 0
    for lang, attrs, body in _blocks(ROOT / "docs" / "rule-authoring.md"):
        if "file" in attrs:
            target = tmp_path / attrs["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            if attrs.get("mode") == "append":
                target.write_text(target.read_text(encoding="utf-8") + body, encoding="utf-8")
            else:
                target.write_text(body, encoding="utf-8")
        elif lang == "console":
            for line in body.splitlines():
                if not line.startswith("$ "):
                    continue
                argv = shlex.split(line[2:])
                if argv[0] == "cp":
                    shutil.copytree(tmp_path / argv[2], tmp_path / argv[3])
                    continue
                assert argv[0] == "gpu-advisor", line
                result = runner.invoke(cli, argv[1:], catch_exceptions=False)
                assert result.exit_code == 0, f"{line}\n{result.output}\n{result.stderr}"
                ran += 1
    assert ran >= 4


def test_readme_names_every_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [name for name in COMMANDS if f"gpu-advisor {name}" not in readme]
    assert missing == []


def _leaf_commands() -> list[list[str]]:
    out: list[list[str]] = []
    context = click.Context(cli)
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        if isinstance(command, click.Group):
            out += [[name, sub] for sub in command.list_commands(context)]
        else:
            out.append([name])
    return out


@pytest.mark.parametrize("argv", _leaf_commands(), ids=" ".join)
def test_every_command_has_help_with_an_example(argv: list[str]) -> None:
    result = CliRunner().invoke(cli, [*argv, "--help"])
    assert result.exit_code == 0
    assert "Example" in result.output


def _console_examples(path: Path) -> list[tuple[str, list[str]]]:
    """(command, shown output lines) for each README console block with a single command."""
    examples = []
    for lang, _, body in _blocks(path):
        lines = body.splitlines()
        commands = [line for line in lines if line.startswith("$ ")]
        if lang != "console" or len(commands) != 1 or lines[0] != commands[0]:
            continue
        examples.append((commands[0][2:], lines[1:]))
    return examples


README_EXAMPLES = _console_examples(ROOT / "README.md")


@pytest.mark.slow
@pytest.mark.parametrize("command,shown", README_EXAMPLES, ids=[c for c, _ in README_EXAMPLES])
def test_readme_output_is_real(command: str, shown: list[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Every output line the README shows is what the program prints, in that order."""
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)
    assert argv[0] == "gpu-advisor"
    result = CliRunner().invoke(cli, argv[1:], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    actual = [line.rstrip() for line in result.stdout.splitlines()]
    position = 0
    for line in shown:
        if line.strip() in ("...", ""):
            continue
        assert line.rstrip() in actual[position:], f"README shows {line!r}, not printed"
        position = actual.index(line.rstrip(), position) + 1
