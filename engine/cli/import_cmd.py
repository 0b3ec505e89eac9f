"""``gpu-advisor import axolotl|llama-factory|trl FILE``: a training config as answers."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import click

from engine.answers.importers import TOOLS, import_config
from engine.answers.training_config import answers_text
from engine.catalog.load import load_catalog
from engine.cli.options import catalog_options, force_option, model_reference_option
from engine.errors import InputError
from engine.files.safe_write import Target, check_target, write_checked

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput


@click.command("import")
@click.argument("tool", type=click.Choice(TOOLS))
@click.argument("config_path", metavar="FILE", type=click.Path(path_type=Path))
@click.option("--out", "out_path", type=click.Path(path_type=Path), default=None,
              metavar="FILE", help="Write the answers file here (default: print it).")
@force_option("Replace an existing --out file.")
@model_reference_option("model", more_help=" Replaces the config's model.")
@catalog_options
def import_(tool: str, config_path: Path, out_path: Path | None, force: bool,
            model: str | None, catalog_dir: Path | None, prices: PriceInput | None) -> None:
    """Turn an axolotl, LLaMA-Factory or TRL training config into an answers file.

    Each answer read is reported on stderr with the key it came from, and each answer that
    could not be read with the reason; the answers go to stdout or --out.

    \b
    Example:
      gpu-advisor import axolotl qlora.yml --out answers.yaml
      gpu-advisor recommend --answers answers.yaml
    """
    target = None if out_path is None else _target(out_path, config_path, force=force)
    catalog = load_catalog(catalog_dir, prices=prices)
    imported = import_config(tool, config_path, catalog, model=model)
    text = answers_text(imported, catalog)
    for line in imported.report():
        click.echo(line, err=True)
    if target is None or out_path is None:
        click.echo(text, nl=False)
        return
    write_checked(target, text.encode("utf-8"))
    click.echo(f"wrote {out_path}; next: gpu-advisor recommend --answers {out_path}", err=True)


def _target(out_path: Path, config_path: Path, *, force: bool) -> Target:
    """Where ``--out`` writes, refused before anything is read when it is the config itself
    (through a link too) or cannot be written (:mod:`engine.files.safe_write`)."""
    with contextlib.suppress(OSError):
        if out_path.samefile(config_path):
            raise InputError("is the config being imported; choose another file",
                             path=str(out_path), field="--out")
    return check_target(out_path, force=force, field="--out")
