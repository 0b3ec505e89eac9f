"""``gpu-advisor import axolotl|llama-factory|trl FILE``: a training config as answers."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from engine.answers.importers import TOOLS, import_config
from engine.answers.training_config import answers_text
from engine.catalog.load import load_catalog
from engine.cli.options import catalog_options, model_reference_option
from engine.errors import InputError

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput


@click.command("import")
@click.argument("tool", type=click.Choice(TOOLS))
@click.argument("config_path", metavar="FILE", type=click.Path(path_type=Path))
@click.option("--out", "out_path", type=click.Path(path_type=Path), default=None,
              metavar="FILE", help="Write the answers file here (default: print it).")
@click.option("--force", is_flag=True, help="Replace an existing --out file.")
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
    _write(target, text, shown=out_path)
    click.echo(f"wrote {out_path}; next: gpu-advisor recommend --answers {out_path}", err=True)


def _target(out_path: Path, config_path: Path, *, force: bool) -> Path:
    """Where ``--out`` writes (links resolved), refused before anything is read when it is
    the config itself, not a regular file, or exists without ``--force``."""
    target = Path(os.path.realpath(out_path))
    try:
        found = target.stat()
    except FileNotFoundError:
        if not target.parent.is_dir():
            raise InputError(f"folder {out_path.parent} does not exist", path=str(out_path),
                             field="--out") from None
        return target
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", path=str(out_path),
                         field="--out") from None
    with contextlib.suppress(OSError):
        if target.samefile(config_path):
            raise InputError("is the config being imported; choose another file",
                             path=str(out_path), field="--out")
    if not stat.S_ISREG(found.st_mode):
        raise InputError("is not a regular file", path=str(out_path), field="--out")
    if not force:
        raise InputError("already exists; give --force to replace it", path=str(out_path),
                         field="--out")
    return target


def _write(target: Path, text: str, *, shown: Path) -> None:
    """Write ``text`` to a new file beside ``target`` and rename it over ``target``: an
    existing file is replaced whole or left as it was."""
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                    dir=target.parent)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", path=str(shown),
                         field="--out") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(temp).chmod(0o666 & ~_umask())
        Path(temp).replace(target)
    except OSError as exc:
        Path(temp).unlink(missing_ok=True)
        raise InputError(f"cannot write ({exc.strerror or exc})", path=str(shown),
                         field="--out") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
