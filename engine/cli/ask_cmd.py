"""``gpu-advisor ask``: the guided questionnaire, then the recommendation."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from engine.answers.answers_file import (
    answers_data,
    check_writable,
    fresh_path,
    write_answers,
    written_by_ask,
)
from engine.answers.model import load_partial, validate_answers
from engine.answers.questionnaire import Questionnaire
from engine.audit.location import Location
from engine.catalog.load import Catalog
from engine.cli.emit import emit, record_decision
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
)
from engine.decide.engine import load_engine
from engine.errors import AnswerError

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput


def _interactive() -> bool:
    """A person can answer: the keyboard is a terminal and so is the screen the prompts
    draw on (stdout, or stderr where stdout goes to a file: ``ask > rec.json``)."""
    return sys.stdin.isatty() and (sys.stdout.isatty() or sys.stderr.isatty())


class Session:
    """One ``ask``: where the answers come from and go, what was asked, what was recorded."""

    def __init__(self, catalog: Catalog, answers_path: Path | None, overrides: tuple[str, ...],
                 *, advanced: bool, interactive: bool, save_path: Path | None,
                 force: bool = False) -> None:
        self.catalog = catalog
        self.interactive = interactive
        self.force = force
        new_file = answers_path is not None and not answers_path.exists()
        self.new_file = new_file
        """--answers named a file that does not exist yet: it is started (help says so)."""
        self.resumed = answers_path if answers_path is not None and not new_file else None
        prefilled = load_partial(self.resumed, overrides, catalog)
        fixed = {item.partition("=")[0].strip() for item in overrides}
        self.questionnaire = Questionnaire(catalog, prefilled, advanced=advanced, fixed=fixed)
        self.explicit_save = save_path is not None
        self.save_path = save_path
        if save_path is None and answers_path is not None and (
                new_file or written_by_ask(answers_path)):
            self.save_path = answers_path
        self.saved_any = False
        self.recorded: tuple[str, object] | None = None
        """The decision id and audit store, once the decision is recorded."""

    def ask_pending(self) -> None:
        """Ask what is missing on the terminal, saving each answer as it is given."""
        if self.questionnaire.next() is None:
            return
        if not self.interactive:
            missing = ", ".join(q.id for q in self.questionnaire.pending())
            raise AnswerError(
                f"no terminal to ask on and questions are unanswered ({missing}); give "
                "them with --answers FILE or --set KEY=VALUE, or accept defaults with "
                "--defaults", field="ask")
        if self.save_path is None:
            self.save_path = fresh_path(Path())
        check_writable(self.save_path, force=self.force)
        self._announce(self.save_path)
        from engine.answers.prompt import TerminalPrompter

        self.questionnaire.run(TerminalPrompter(), saved=self._save)

    def _announce(self, path: Path) -> None:
        given = len(self.questionnaire.answers)
        if self.resumed is not None and self.resumed == path:
            _say(f"Resuming {path} ({given} answers there); asking only what is missing. "
                 "New answers are saved to it as you give them.")
        elif self.resumed is not None:
            why = "" if self.explicit_save else (
                " (not changed: it was not written by gpu-advisor ask)")
            _say(f"Starting from {self.resumed}{why}. Your answers, its own included, are "
                 f"saved to {path} as you give them; if you stop, resume with: gpu-advisor "
                 f"ask --answers {path}")
        else:
            _say(f"Your answers are saved to {path} as you give them; if you stop, resume "
                 f"with: gpu-advisor ask --answers {path}")
        _say("In every question, ? shows help and < goes back; Ctrl-C stops.")

    def _save(self, answers: dict[str, Any]) -> None:
        assert self.save_path is not None
        # once this session has written the file, it is the session's to replace
        write_answers(self.save_path, answers_data(answers, self.catalog),
                      force=self.force or self.saved_any)
        self.saved_any = True

    def save_final(self) -> None:
        """Write the checked answers where they go: the session's file, or --save-answers."""
        if self.save_path is not None and (self.saved_any or self.explicit_save
                                           or self.new_file):
            self._save(self.questionnaire.answers)

    def say_saved(self) -> None:
        """Where the answers are, and how to repeat the run."""
        if self.save_path is not None and self.saved_any:
            _say(f"Saved answers to {self.save_path}; repeat with: gpu-advisor recommend "
                 f"--answers {self.save_path}")

    def cancelled(self) -> str:
        """What a Ctrl-C leaves behind, said exactly."""
        if self.recorded is not None:
            decision_id, store = self.recorded
            said = (f"Cancelled after the recommendation: decision {decision_id} is recorded "
                    f"in {store}.")
        else:
            said = "Cancelled; nothing was recorded."
        if self.saved_any and self.recorded is not None:
            said += f" Your answers are saved in {self.save_path}."
        elif self.saved_any:
            said += (f" Your answers so far are saved in {self.save_path}; resume with: "
                     f"gpu-advisor ask --answers {self.save_path}")
        return textwrap.fill(said, 80, break_long_words=False, break_on_hyphens=False)


def _say(text: str) -> None:
    click.echo(textwrap.fill(text, 80, break_long_words=False, break_on_hyphens=False),
               err=True)


@click.command()
@answers_options(answers_help="Resume from FILE: its questions are skipped and new answers "
                              "are saved to it (a missing FILE is started).",
                 set_help="Pre-fill one answer (repeatable); wins over the file.")
@click.option("--defaults", is_flag=True, help="Answer every remaining question with its default.")
@click.option("--advanced", is_flag=True,
              help="Also ask the advanced questions (sequence length, batch, planned GPU, "
                   "API use, electricity…).")
@click.option("--save-answers", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Save the answers to FILE instead (default: the --answers FILE, or a new "
                   "gpu-advisor-answers.yaml here).")
@chart_option
@force_option("Replace an existing --save-answers or --chart file (an answers file that ask "
              "wrote is its own: resumed and replaced without --force).")
@rules_option
@catalog_options
@audit_options
@html_option
@format_option("text", "json", "markdown", "html")
@explain_options
def ask(answers_path: Path | None, overrides: tuple[str, ...], defaults: bool, advanced: bool,
        save_answers: Path | None, chart_path: Path | None, force: bool,
        rules_dir: Path | None, catalog_dir: Path | None, prices: PriceInput | None,
        audit_db: Location | None, no_audit: bool, html_path: Path | None, fmt: str, explain: bool,
        no_pager: bool) -> None:
    """Answer a few questions (arrow keys on a terminal), get the recommendation.

    Irrelevant questions are skipped (no regions unless residency is 'region', …). Each
    answer is checked when given and saved at once to an answers file (announced at the
    start; --answers FILE resumes it, asking only what is missing). In every prompt '?'
    shows help and '<' goes back. Ctrl-C before the recommendation records nothing (exit
    130).

    \b
    Example:
      gpu-advisor ask
      gpu-advisor ask --answers my-answers.yaml    # resume, or start that file
      gpu-advisor ask --answers team.yaml --set budget_usd=9000
      gpu-advisor ask --defaults --set model=mistral-7b --format json
    """
    if save_answers is not None:  # refused before anything is loaded, asked or printed
        check_writable(save_answers, force=force)
    engine = load_engine(rules_dir, catalog_dir, prices)
    say_notices(engine.catalog)
    session = Session(engine.catalog, answers_path, overrides, advanced=advanced,
                      interactive=_interactive() and not defaults, save_path=save_answers,
                      force=force)
    try:
        if defaults:
            session.questionnaire.fill_defaults()
        else:
            session.ask_pending()
        answers = validate_answers(session.questionnaire.answers, engine.catalog)
        session.save_final()
        decision = engine.recommend(answers)
        if not no_audit:
            from engine.audit.store import default_path

            record_decision(engine, decision, audit_db)
            session.recorded = (decision.decision_id, audit_db or default_path())
        emit(decision, engine, fmt, chart_path, recorded=not no_audit, force=force,
             explain=explain, pager=not no_pager, html_path=html_path, answers=answers)
        session.say_saved()
    except KeyboardInterrupt:
        click.echo(f"\n{session.cancelled()}", err=True)
        sys.exit(130)
