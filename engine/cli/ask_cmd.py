"""``gpu-advisor ask``: the guided questionnaire, then the recommendation."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import yaml

from engine.answers.model import answers_to_data, load_partial, validate_answers
from engine.answers.questionnaire import Questionnaire
from engine.cli.emit import emit, record_decision
from engine.cli.notices import say_notices
from engine.cli.options import (
    answers_options,
    audit_options,
    catalog_options,
    chart_option,
    format_option,
    rules_option,
)
from engine.decide.engine import load_engine
from engine.errors import AnswerError


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


@click.command()
@answers_options(answers_help="Pre-fill answers from a file; those questions are skipped.",
                 set_help="Pre-fill one answer (repeatable); wins over the file.")
@click.option("--defaults", is_flag=True, help="Answer every remaining question with its default.")
@click.option("--advanced", is_flag=True,
              help="Also ask the advanced questions (sequence length, batch, electricity…).")
@click.option("--save-answers", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Save the answers to FILE so the run can be repeated with --answers.")
@chart_option
@rules_option
@catalog_options
@audit_options
@format_option("text", "json", "markdown")
def ask(answers_path: Path | None, overrides: tuple[str, ...], defaults: bool, advanced: bool,
        save_answers: Path | None, chart_path: Path | None, rules_dir: Path | None,
        catalog_dir: Path | None, prices: Path | None, audit_db: Path | None, no_audit: bool,
        fmt: str) -> None:
    """Answer a few questions (arrow keys on a terminal), get the recommendation.

    Irrelevant questions are skipped (no regions unless residency is 'region', …).
    Ctrl-C leaves without a trace (exit 130).

    \b
    Example:
      gpu-advisor ask
      gpu-advisor ask --answers examples/startup-7b-continuous.yaml --set budget_usd=9000
      gpu-advisor ask --defaults --set model=mistral-7b --format json
    """
    engine = load_engine(rules_dir, catalog_dir, prices)
    say_notices(engine.catalog)
    questionnaire = Questionnaire(engine.catalog, load_partial(answers_path, overrides,
                                                               engine.catalog),
                                  advanced=advanced)
    asked = False
    try:
        if defaults:
            questionnaire.fill_defaults()
        elif questionnaire.next() is not None:
            if not _interactive():
                missing = ", ".join(q.id for q in questionnaire.pending())
                raise AnswerError(
                    f"no terminal to ask on and questions are unanswered ({missing}); give "
                    "them with --answers FILE or --set KEY=VALUE, or accept defaults with "
                    "--defaults", field="ask")
            from engine.answers.prompt import TerminalPrompter

            questionnaire.run(TerminalPrompter())
            asked = True
        answers = validate_answers(questionnaire.answers, engine.catalog)
        decision = engine.recommend(answers)
        if not no_audit:
            record_decision(engine, decision, audit_db)
        emit(decision, engine, fmt, chart_path)
        _save(answers_to_data(answers), save_answers, offer=asked and save_answers is None)
    except KeyboardInterrupt:
        click.echo("\nCancelled; nothing was recorded.", err=True)
        sys.exit(130)


def _save(data: dict[str, Any], path: Path | None, *, offer: bool) -> None:
    if offer:
        import questionary

        if not questionary.confirm("Save these answers to a file to repeat the run?",
                                   default=True).unsafe_ask():
            return
        path = Path(questionary.text("File:", default="gpu-advisor-answers.yaml").unsafe_ask())
    if path is None:
        return
    header = "# gpu-advisor answers; repeat with: gpu-advisor recommend --answers THIS_FILE\n"
    try:
        path.write_text(header + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    except OSError as exc:
        raise AnswerError(f"cannot write ({exc.strerror})", path=str(path)) from None
    click.echo(f"Saved answers to {path}", err=True)
