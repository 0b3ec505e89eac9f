"""What ``recommend`` and ``ask`` do with a decision: record it, print it, chart it."""

from __future__ import annotations

from pathlib import Path

import click

from engine.answers.model import Answers
from engine.audit.location import Location
from engine.cli.notices import say_new_store
from engine.decide.engine import Decision, Engine, Evaluation
from engine.files.printable import json_printable


def record_decision(engine: Engine, decision: Decision, audit_db: Location | None) -> None:
    """Append the decision to the audit store (default location unless given)."""
    from engine.audit.store import AuditError, AuditStore, default_path

    location = audit_db or default_path()
    try:
        with AuditStore(location) as store:
            store.append(decision, engine.rulebook.texts, engine.catalog.texts)
    except AuditError as exc:  # a server: say what became of the decision
        if isinstance(location, Path) or "nothing was recorded" not in str(exc):
            raise
        raise AuditError(str(exc).replace("nothing was recorded",
                                          "the decision was not recorded")) from None
    if store.created:
        say_new_store(store.path)


NOT_RECORDED = "not recorded (--no-audit)"
"""What text and Markdown show in place of the id of a decision that was not recorded."""


def emit(decision: Decision, engine: Engine, fmt: str, chart_path: Path | None,
         recorded: bool = True, force: bool = False, *, explain: bool = False,
         pager: bool = True, html_path: Path | None = None,
         answers: Answers | None = None) -> None:
    """Print the decision in ``fmt`` and write the chart file if asked. A decision that was
    not ``recorded`` shows no id a person could look for in the audit store (JSON keeps its
    ``decision_id``: the contract's field)."""
    if not recorded and fmt != "json":
        decision = decision.model_copy(update={"decision_id": NOT_RECORDED})
    if fmt == "json":  # the same JSON value; no character a terminal acts on is left raw
        click.echo(json_printable(decision.to_json()), nl=False)
    elif fmt == "html":
        click.echo(html_page(decision, engine, answers), nl=False)
    elif fmt == "markdown":
        from engine.output.markdown import render_markdown

        click.echo(render_markdown(decision, engine.rulebook, platform_names(engine)),
                   nl=False)
    else:
        from engine.cli.pager import show
        from engine.output.text import render_brief, render_text

        show(render_text(decision, engine.rulebook, platform_names(engine)) if explain
             else render_brief(decision, engine.rulebook), allowed=pager)
    if html_path is not None:
        from engine.files.safe_write import check_target, write_checked

        target = check_target(html_path, force=force, field="--html")
        write_checked(target, html_page(decision, engine, answers).encode("utf-8"))
        click.echo(f"Page written to {html_path}", err=True)
    if chart_path is not None:
        from engine.output.chart import curves_from, write_chart

        curves = curves_from(decision.estimates)
        if curves is None:
            click.echo("No chart: owning never costs less than renting for this job.", err=True)
            return
        write_chart(curves, chart_path, force=force)
        click.echo(f"Chart written to {chart_path}", err=True)


def html_page(decision: Decision, engine: Engine, answers: Answers | None) -> str:
    """The decision's HTML page, with what-if where the answers are at hand."""
    from engine.output.html import render_html

    lines: list[str] = []
    if answers is not None:
        from engine.tools.whatif import outcomes, what_if
        from engine.tools.whatif_text import whatif_lines

        base, flips = what_if(engine, answers)
        lines = whatif_lines(base, outcomes(engine, answers, base, flips))
    return render_html(decision, engine.rulebook, platform_names(engine), lines)


def platform_names(engine: Engine) -> dict[str, str]:
    """Platform id → name, so that an owned pick's purchase names what holds the cards."""
    return {p.id: p.name for p in engine.catalog.platforms}


def emit_traced(evaluation: Evaluation, engine: Engine, fmt: str,
                chart_path: Path | None = None, recorded: bool = True,
                force: bool = False, *, pager: bool = True) -> None:
    """Print a decision made with ``trace`` and every rule's outcome: under ``"trace"`` in
    JSON, after the decision otherwise."""
    from engine.tools.rule_trace import trace

    lines = trace(engine, evaluation)
    if fmt == "json":
        import json

        from engine.files.jsonout import dumps

        data = json.loads(evaluation.decision.to_json())
        data["trace"] = [line.as_json() for line in lines]
        click.echo(json_printable(dumps(data)), nl=False)
        return
    emit(evaluation.decision, engine, fmt, chart_path, recorded, force, explain=True,
         pager=pager)
    click.echo("\nTrace (every rule):")
    for line in lines:
        click.echo(f"  {'✓' if line.fired else '·'} {line.rule}: {line.detail}")
