"""The ``gpu-advisor`` command line: parse flags, call the library, render. Nothing else."""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from typing import Any

import click

# pydantic scans every installed distribution's entry points for plugins on its first
# validation (~50 ms in a full virtualenv); the command line uses none. An explicit setting wins.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from engine.errors import EngineError
from engine.plugin_scan import skip_plugin_loader
from engine.version import __version__

# ...and the loader would still import importlib.metadata (~15 ms) to not use it
skip_plugin_loader()

# Subcommands are imported only when used, so that `gpu-advisor recommend` never pays for
# the questionnaire, plotting or audit modules, and `gpu-advisor --help` imports none of them:
# name → ("module:attribute", the one-line help --help lists; tests keep it the command's own).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "ask": ("engine.cli.ask_cmd:ask",
            "Answer a few questions (arrow keys on a terminal), get the recommendation."),
    "recommend": ("engine.cli.recommend_cmd:recommend",
                  "Recommend GPUs for a team's answers: choices, hardware, warnings, "
                  "strategies."),
    "whatif": ("engine.cli.whatif_cmd:whatif",
               "For each decision, the smallest single answer change that would flip it."),
    "estimate": ("engine.cli.estimate:estimate",
                 "The calculators alone: memory and training compute/cost."),
    "catalog": ("engine.cli.catalog_cmd:catalog",
                "Browse the catalog: GPUs, cloud offers, models."),
    "rules": ("engine.cli.rules_cmd:rules",
              "Check, test, diff and explain the rules (for rule authors)."),
    "audit": ("engine.cli.audit_cmd:audit",
              "Inspect, replay and verify recorded recommendations."),
    "batch": ("engine.cli.batch_cmd:batch",
              "Evaluate many answers (one JSON object per line) into OUT.jsonl, order "
              "preserved."),
    "import": ("engine.cli.import_cmd:import_",
               "Turn an axolotl, LLaMA-Factory or TRL training config into an answers file."),
    "paths": ("engine.cli.paths_cmd:paths",
              "List the files gpu-advisor keeps between runs and whether each exists."),
}
COMMANDS = {name: target for name, (target, _summary) in SUBCOMMANDS.items()}
"""Each subcommand's ``module:attribute``."""


class AdvisorGroup(click.Group):
    """Lazily loaded subcommands; every :class:`EngineError` becomes one line on stderr."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._available(name)]

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """Click's, with a did-you-mean for a misspelt command (``recomend``)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            from engine.files.validation import did_you_mean

            hint = did_you_mean(name, self.list_commands(ctx))
            ctx.fail(f"No such command '{name}'{hint or '.'}")
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None or not self._available(cmd_name):
            return None
        from engine.gc_pause import collector_paused

        module_name, attribute = target.split(":")
        with collector_paused():  # importing makes classes, not garbage (engine.gc_pause)
            module = importlib.import_module(module_name)
        command: click.Command = getattr(module, attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their one-line help, as click lists them, from
        :data:`SUBCOMMANDS` (no subcommand module is imported)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, click.Command(name, help=SUBCOMMANDS[name][1]).get_short_help_str(limit))
                for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    @staticmethod
    def _available(name: str) -> bool:
        return importlib.util.find_spec(COMMANDS[name].split(":")[0]) is not None

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        """Like click's, but a usage error is one line on stderr (exit 2), like every other."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            hint = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
            click.echo(f"error: {_one_line(exc.format_message())}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"error: {_one_line(exc.format_message())}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:  # Ctrl-C: click turns KeyboardInterrupt into Abort
            click.echo("Interrupted.", err=True)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EngineError as exc:
            # Always exactly one line, even when a message quotes input with a line break
            # (e.g. an unknown key "a\nb" in an answers file).
            click.echo(f"error: {_one_line(str(exc))}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:  # one line, not click's blank line and "Aborted!"
            click.echo("Interrupted.", err=True)
            ctx.exit(130)


class _HelpFormatter(click.HelpFormatter):
    """Click's help, never broken inside a hyphenated word (``gpu-advisor-answers.yaml``,
    ``meta-llama/…``), at most 80 columns."""

    def __init__(self, indent_increment: int = 2, width: int | None = None,
                 max_width: int | None = None) -> None:
        super().__init__(indent_increment, width, max_width or 80)

    def write_text(self, text: str) -> None:
        with _whole_words():
            super().write_text(text)

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        with _whole_words():
            super().write_dl(rows, col_max, col_spacing)


@contextlib.contextmanager
def _whole_words() -> Iterator[None]:
    """While help is laid out, click's text wrapper keeps hyphenated words whole."""
    from click import _textwrap

    original = _textwrap.TextWrapper.__init__

    def init(wrapper: Any, *args: Any, **kwargs: Any) -> None:
        original(wrapper, *args, **{**kwargs, "break_on_hyphens": False})

    _textwrap.TextWrapper.__init__ = init  # type: ignore[assignment,method-assign]
    try:
        yield
    finally:
        _textwrap.TextWrapper.__init__ = original  # type: ignore[method-assign]


click.Context.formatter_class = _HelpFormatter


def _one_line(message: str) -> str:
    """Line breaks and other control characters quoted from input are shown escaped, so an
    error is always one line and never drives the terminal (the loaders refuse them too)."""
    from engine.files.printable import printable

    return printable(message)


@click.group(cls=AdvisorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gpu-advisor")
def cli() -> None:
    """Explained advice on which GPUs to buy or rent for training and fine-tuning LLMs.

    \b
    Examples:
      gpu-advisor ask
      gpu-advisor recommend --answers examples/startup-7b-continuous.yaml
      gpu-advisor estimate memory --model llama-3.1-8b --method qlora
    """


ONE_SHOT = frozenset({"recommend", "whatif", "estimate", "catalog", "import", "paths"})
"""Commands that do bounded work once, in a process that ends with them: the cyclic garbage
collector stays paused throughout (``engine.gc_pause``); reference counting frees what they
drop, and the process's end the rest. Batch, audit, rules and the questionnaire keep it."""


def main() -> None:
    """Console-script entry point."""
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    try:
        with _paused_for(command):
            try:
                cli.main(prog_name="gpu-advisor")
            finally:
                # The process ends here: what it built (catalog, rulesets, decisions) need
                # not be walked by the collector once more on the way out (~40 ms of a
                # one-shot command), nor when a pause ends.
                gc.freeze()
    except KeyboardInterrupt:  # pragma: no cover - click turns it into Abort first
        sys.exit(130)


def _paused_for(command: str | None) -> contextlib.AbstractContextManager[None]:
    if command not in ONE_SHOT:
        return contextlib.nullcontext()
    from engine.gc_pause import collector_paused

    return collector_paused()
