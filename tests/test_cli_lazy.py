"""`gpu-advisor --help` lists every command without importing any of them."""

from __future__ import annotations

import re
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from engine.cli import COMMANDS, SUBCOMMANDS, cli


def _imported_by(*args: str) -> set[str]:
    """The modules a fresh ``python -m engine ARGS`` imports (from ``-X importtime``)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "engine", *args],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == (0 if args else 2), proc.stderr  # no arguments: help, exit 2
    assert "Commands:" in proc.stdout + proc.stderr  # no arguments: the help on stderr
    return {match[1] for match in re.finditer(r"^import time:.*\|\s*(\S+)$", proc.stderr,
                                               re.MULTILINE)}


@pytest.mark.parametrize("args", [["--help"], ["-h"], []])
def test_help_in_a_fresh_process_imports_no_command(args: list[str]) -> None:
    modules = _imported_by(*args)
    assert "engine.cli" in modules  # the parse saw the imports
    commands = {target.split(":")[0] for target in COMMANDS.values()}
    assert sorted(modules & commands) == []
    assert sorted(m for m in modules if m.startswith("engine.") and m not in
                  {"engine.cli", "engine.errors", "engine.plugin_scan",
                       "engine.version"}) == []
    assert sorted(m for m in modules if m.split(".")[0] in
                  {"durable", "durable_rules", "pydantic", "yaml"}) == []


def test_the_lazy_list_is_the_list_the_commands_give(runner: CliRunner) -> None:
    """The declared one-line help is each command's own: the listing is the eager one."""
    ctx = click.Context(cli, info_name="gpu-advisor")
    for width in (50, 80, 120):
        lazy, eager = click.HelpFormatter(width=width), click.HelpFormatter(width=width)
        cli.format_commands(ctx, lazy)
        click.Group.format_commands(cli, ctx, eager)  # imports every command
        assert lazy.getvalue() == eager.getvalue()
        assert lazy.getvalue().count("\n") >= len(COMMANDS) + 1


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_each_declared_summary_is_the_commands_first_line(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    assert SUBCOMMANDS[name][1] == command.get_short_help_str(limit=1000)


def test_help_lists_every_command(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["--help"])
    assert result.exit_code == 0
    listed = re.findall(r"^  (\S+)\s", result.stdout.split("Commands:")[1], re.MULTILINE)
    assert listed == list(COMMANDS)
