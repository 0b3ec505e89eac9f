"""``gpu-advisor recommend``: the scripted recommendation."""

from __future__ import annotations

import json
from pathlib import Path

import click

from engine.answers.model import load_answers
from engine.cli.notices import say_notices
from engine.cli.options import (
    answers_options,
    audit_options,
    catalog_options,
    chart_option,
    format_option,
    rules_option,
)
from engine.decide.engine import Decision, Engine, load_engine


def record_decision(engine: Engine, decision: Decision, audit_db: Path | None) -> None:
    """Append the decision to the audit store (default location unless given)."""
    from engine.audit.store import AuditStore, default_path

    with AuditStore(audit_db or default_path()) as store:
        store.append(decision, engine.rulebook.texts, engine.catalog.texts)


@click.command()
@answers_options()
@rules_option
@catalog_options
@audit_options
@chart_option
@click.option("--trace", "show_trace", is_flag=True,
              help="Also list every rule: fired, or the first condition that failed.")
@format_option("text", "json", "markdown")
def recommend(answers_path: Path | None, overrides: tuple[str, ...], rules_dir: Path | None,
              catalog_dir: Path | None, prices: Path | None, audit_db: Path | None,
              no_audit: bool, chart_path: Path | None, show_trace: bool, fmt: str) -> None:
    """Recommend GPUs for a team's answers: choices, hardware, warnings, strategies.

    \b
    Example:
      gpu-advisor recommend --answers examples/startup-7b-continuous.yaml
      gpu-advisor recommend --answers examples/startup-7b-continuous.yaml \\
          --set hours_per_year=800 --format json
    """
    if chart_path is not None:
        from engine.output.chart import check_chart_path

        check_chart_path(chart_path)
    engine = load_engine(rules_dir, catalog_dir, prices)
    say_notices(engine.catalog)
    answers = load_answers(answers_path, overrides, engine.catalog)
    evaluation = engine.evaluate(answers)
    decision = evaluation.decision
    if not no_audit:
        record_decision(engine, decision, audit_db)
    if show_trace and fmt == "json":
        from engine.files.jsonout import dumps
        from engine.tools.rule_trace import trace

        data = json.loads(decision.to_json())
        data["trace"] = [line.as_json() for line in trace(engine, evaluation)]
        click.echo(dumps(data), nl=False)
        return
    emit(decision, engine, fmt, chart_path)
    if show_trace:
        from engine.tools.rule_trace import trace

        click.echo("\nTrace (every rule):")
        for line in trace(engine, evaluation):
            click.echo(f"  {'✓' if line.fired else '·'} {line.rule}: {line.detail}")


def emit(decision: Decision, engine: Engine, fmt: str, chart_path: Path | None) -> None:
    """Print the decision in ``fmt`` and write the chart file if asked."""
    if fmt == "json":
        click.echo(decision.to_json(), nl=False)
    elif fmt == "markdown":
        from engine.output.markdown import render_markdown

        click.echo(render_markdown(decision, engine.rulebook), nl=False)
    else:
        from engine.output.text import render_text

        render_text(decision, engine.rulebook)
    if chart_path is not None:
        from engine.output.chart import curves_from, write_chart

        curves = curves_from(decision.estimates)
        if curves is None:
            click.echo("No chart: owning never costs less than renting for this job.", err=True)
            return
        write_chart(curves, chart_path)
        click.echo(f"Chart written to {chart_path}", err=True)
