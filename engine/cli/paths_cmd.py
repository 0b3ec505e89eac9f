"""``gpu-advisor paths``: where the audit store, the policy cache and its key are kept."""

from __future__ import annotations

import json

import click

from engine.audit.location import Location
from engine.cli.options import audit_db_option, format_option


@click.command()
@audit_db_option
@format_option("text", "json")
def paths(audit_db: Location | None, fmt: str) -> None:
    """List the files gpu-advisor keeps between runs and whether each exists.

    \b
    Example:
      gpu-advisor paths
      GPU_ADVISOR_AUDIT_DB=team.sqlite3 gpu-advisor paths --format json
    """
    from engine.tools.paths import user_files

    found = user_files(audit_db)
    if fmt == "json":
        click.echo(json.dumps([item.as_json() for item in found], indent=2))
        return
    for item in found:
        click.echo(f"{item.name}: {item.state}")
        click.echo(f"  {_one_line(str(item.path))}")
        click.echo(click.wrap_text(f"{item.purpose[:1].upper()}{item.purpose[1:]}; moved by "
                                   f"{item.moved_by}.", width=80, initial_indent="  ",
                                   subsequent_indent="  "))


def _one_line(text: str) -> str:
    """A path from the environment shown on one line, control characters escaped."""
    from engine.files.printable import printable

    return printable(text)
