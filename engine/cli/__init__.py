"""The ``gpu-advisor`` command line: parse flags, call the library, render. Nothing else."""

from __future__ import annotations

import sys
from typing import Any

import click

from engine import __version__
from engine.errors import EngineError


class AdvisorGroup(click.Group):
    """A group that turns every :class:`EngineError` into one line on stderr and its exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EngineError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=AdvisorGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gpu-advisor")
def cli() -> None:
    """Explained advice on which GPUs to buy or rent for training and fine-tuning LLMs.

    \b
    Example:
      gpu-advisor estimate memory --model llama-3.1-8b --method qlora
    """


def _register() -> None:
    from engine.cli import (
        ask_cmd,
        audit_cmd,
        catalog_cmd,
        estimate,
        recommend_cmd,
        rules_cmd,
        whatif_cmd,
    )

    cli.add_command(ask_cmd.ask)
    cli.add_command(recommend_cmd.recommend)
    cli.add_command(whatif_cmd.whatif)
    cli.add_command(estimate.estimate)
    cli.add_command(catalog_cmd.catalog)
    cli.add_command(rules_cmd.rules)
    cli.add_command(audit_cmd.audit)


_register()


def main() -> None:
    """Console-script entry point."""
    try:
        cli.main(prog_name="gpu-advisor")
    except KeyboardInterrupt:  # pragma: no cover - click turns it into Abort first
        sys.exit(130)
