"""``gpu-advisor recommend``: the scripted recommendation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from engine.answers.model import load_answers
from engine.audit.location import Location
from engine.cli.emit import emit, emit_traced, record_decision
from engine.cli.notices import say_notices
from engine.cli.options import (
    answers_options,
    audit_options,
    catalog_options,
    chart_option,
    explain_options,
    force_option,
    format_option,
    html_option,
    rules_option,
    trace_option,
)
from engine.decide.engine import load_engine

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput


@click.command()
@answers_options(model=True)
@rules_option
@catalog_options
@audit_options
@chart_option
@force_option("Replace an existing --chart file.")
@trace_option("Also give every formula trace, each configuration's own notes, the "
              "candidates each rule fired on, and every rule: fired, or the first condition "
              "that failed (the audit record stays lean).")
@html_option
@format_option("text", "json", "markdown", "html")
@explain_options
def recommend(answers_path: Path | None, overrides: tuple[str, ...],
              model_reference: str | None, rules_dir: Path | None, catalog_dir: Path | None,
              prices: PriceInput | None, audit_db: Location | None, no_audit: bool,
              chart_path: Path | None, force: bool, show_trace: bool, html_path: Path | None,
              fmt: str, explain: bool, no_pager: bool) -> None:
    """Recommend GPUs for a team's answers: choices, hardware, warnings, strategies.

    \b
    Example:
      gpu-advisor recommend --answers examples/startup-7b-continuous.yaml
      gpu-advisor recommend --answers examples/startup-7b-continuous.yaml \\
          --set hours_per_year=800 --format json
    """
    engine = load_engine(rules_dir, catalog_dir, prices)
    say_notices(engine.catalog)
    answers = load_answers(answers_path, overrides, engine.catalog, model=model_reference)
    evaluation = engine.evaluate(answers, trace=show_trace)
    decision = evaluation.decision
    if not no_audit:
        record_decision(engine, engine.untraced(decision) if show_trace else decision, audit_db)
    if show_trace:
        emit_traced(evaluation, engine, fmt, chart_path, recorded=not no_audit, force=force,
                    pager=not no_pager)
    else:
        emit(decision, engine, fmt, chart_path, recorded=not no_audit, force=force,
             explain=explain, pager=not no_pager, html_path=html_path, answers=answers)
