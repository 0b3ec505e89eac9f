"""``gpu-advisor whatif``: which single answer change would flip each decision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from engine.answers.model import load_answers
from engine.cli.notices import say_notices
from engine.cli.options import (
    answers_options,
    catalog_options,
    format_option,
    rules_option,
)
from engine.decide.engine import load_engine

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput


def _value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return json.dumps(value) if not isinstance(value, str) else value


@click.command()
@answers_options(required=True, model=True)
@rules_option
@catalog_options
@format_option("text", "json")
def whatif(answers_path: Path, overrides: tuple[str, ...], model_reference: str | None,
           rules_dir: Path | None, catalog_dir: Path | None, prices: PriceInput | None,
           fmt: str) -> None:
    """For each decision, the smallest single answer change that would flip it.

    Numeric answers are probed at every threshold the rules compare them with; choices and
    yes/no answers are tried at every value.

    \b
    Example:
      gpu-advisor whatif --answers examples/research-70b-intermittent.yaml
    """
    from engine.tools.whatif import what_if

    engine = load_engine(rules_dir, catalog_dir, prices)
    say_notices(engine.catalog)
    answers = load_answers(answers_path, overrides, engine.catalog, model=model_reference)
    base, flips = what_if(engine, answers)
    if fmt == "json":
        click.echo(json.dumps([f.as_json() for f in flips], indent=2))
        return
    flipped = {f.axis for f in flips}
    for flip in flips:
        if isinstance(flip.value, (int, float)) and not isinstance(flip.value, bool):
            way = "≥" if flip.value > (flip.current or 0) else "≤"
            change = f"{flip.answer} {way} {_value(flip.value)} (now {_value(flip.current)})"
        else:
            change = f"{flip.answer} = {_value(flip.value)} (now {_value(flip.current)})"
        click.echo(f"{flip.axis}: {flip.before} → {flip.after} if {change}")
    for axis, decision in base.decisions.items():
        if axis not in flipped:
            click.echo(f"{axis}: {decision.choice} (no single answer change flips it)")
