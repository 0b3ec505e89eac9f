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


@click.command()
@answers_options(required=True, model=True)
@rules_option
@catalog_options
@format_option("text", "json", "markdown")
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
    from engine.tools.whatif import WORK_ANSWERS, outcomes, what_if, work_outcome
    from engine.tools.whatif_text import whatif_lines

    engine = load_engine(rules_dir, catalog_dir, prices)
    say_notices(engine.catalog)
    answers = load_answers(answers_path, overrides, engine.catalog, model=model_reference)
    base, flips = what_if(engine, answers)
    found = outcomes(engine, answers, base, flips)
    at_work = work_outcome(engine, answers, base)
    work_answers = {a for names in WORK_ANSWERS.values() for a in names}
    if at_work is not None and not any(o.flip.axis == "deployment"
                                       and o.flip.answer in work_answers for o in found):
        found = [at_work, *found]
    if fmt == "json":
        click.echo(json.dumps([{**o.flip.as_json(), "pick": o.pick,
                                "per_year_usd": o.per_year_usd} for o in found], indent=2))
        return
    lines = whatif_lines(base, found)
    if fmt == "markdown":
        click.echo("\n".join(f"- {line}" for line in lines))
        return
    for line in lines:
        click.echo(line)
