"""``gpu-advisor rules schema [NAME] [--out DIR]``: the JSON Schemas of rule, catalog, answers
and scenario files, for editors (yaml-language-server) and CI."""

from __future__ import annotations

from pathlib import Path

import click

from engine.catalog.load import load_catalog
from engine.cli.options import catalog_option, force_option
from engine.tools.schema import NAMES, dump, schemas, write_schemas


@click.command("schema", epilog=f"NAME is one of: {', '.join(NAMES)}.")
@click.argument("name", required=False, type=click.Choice(NAMES), metavar="[NAME]")
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              default=None, metavar="DIR",
              help="Write DIR/<name>.schema.json for every schema (or only NAME) instead of "
                   "printing.")
@force_option("Replace existing schema files in --out DIR.")
@catalog_option
def schema(name: str | None, out_dir: Path | None, force: bool,
           catalog_dir: Path | None) -> None:
    """Print the JSON Schema NAME, or write them all with --out.

    \b
    Example:
      gpu-advisor rules schema rules
      gpu-advisor rules schema --out schemas --force
    """
    if name is None and out_dir is None:
        raise click.UsageError(f"give a schema NAME ({', '.join(NAMES)}) or --out DIR")
    catalog = load_catalog(catalog_dir)
    if out_dir is not None:
        for path in write_schemas(out_dir, catalog, names=(name,) if name else None,
                                  force=force):
            click.echo(f"wrote {path}")
        return
    assert name is not None
    click.echo(dump(schemas(catalog)[name]), nl=False)
