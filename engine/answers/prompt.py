"""The terminal prompter: arrow-key lists and validated input, via questionary.

In every prompt the key ``?`` shows the question's help and ``<`` goes back (in a typed
answer, as its first character; ``help`` or ``back`` and Enter work too). Prompts
are wrapped at word boundaries to the terminal's width (at most 80 columns), and each
accepted answer is printed on a line of its own, so the scrollback shows what was chosen.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from typing import Any

from engine.answers.questionnaire import BACK, BACK_WORDS, HELP_WORDS, Offer, prompt_text, show
from engine.catalog.models import Question

MAX_WIDTH = 80
INPUT_ROOM = 24
"""Columns left free on a prompt's last line for the answer typed or shown there."""


class _Help:
    """A prompt's reply meaning: show the help, then ask again."""


HELP = _Help()


def width() -> int:
    """The terminal's width, at most 80 columns."""
    return min(shutil.get_terminal_size((MAX_WIDTH, 24)).columns, MAX_WIDTH)


def wrap_prompt(text: str, hint: str, columns: int) -> str:
    """The prompt wrapped at word boundaries (at most 80 columns) for a line that starts
    with questionary's ``? ``, later lines indented to match; the hint, never split, ends
    the last line or has a line of its own (leaving room for the answer after it)."""
    room = max(min(columns, MAX_WIDTH) - 3, 20)
    lines = textwrap.wrap(text, room, break_long_words=False, break_on_hyphens=False)
    if len(lines[-1]) + 1 + len(hint) <= room - INPUT_ROOM:
        lines[-1] += f" {hint}"
    else:
        lines.append(hint)
    return "\n  ".join(lines)


def wrap_note(text: str, columns: int) -> str:
    """A help or error note, indented two spaces, wrapped at word boundaries."""
    return textwrap.fill(text, max(min(columns, MAX_WIDTH), 20), initial_indent="  ",
                         subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False)


def hint_for(question: Question, offer: Offer) -> str:
    """What the keys do in this prompt."""
    if question.type == "choice":
        return "(↑/↓ Enter; ? help, < back)"
    if question.type == "list":
        return "(space picks, Enter; ? help, < back)"
    if question.type == "bool":
        return f"(y/n, Enter for {show(offer.default)}; ? help, < back)"
    if offer.default is not None:
        return f"(Enter for {show(offer.default)}; ? help, < back)"
    if offer.validate("") is None:
        return "(Enter for none; ? help, < back)"
    return "(? help, < back)"


class TerminalPrompter:
    """Maps each question type to a questionary prompt, with ``?`` and ``<`` in each."""

    def __init__(self, columns: int | None = None) -> None:
        self.columns = columns

    def ask(self, question: Question, offer: Offer) -> Any:
        """The answer, or BACK; on ``?`` the help is shown under the prompt, once (a second
        ``?`` asks again without printing it again), and the question asked again."""
        helped = False
        while True:
            columns = self.columns or width()
            message = wrap_prompt(prompt_text(question), hint_for(question, offer), columns)
            reply = self._ask_once(question, offer, message)
            if reply is not HELP:
                return reply
            if not helped:
                self.say(wrap_note(question.help, columns))
                helped = True

    def say(self, text: str) -> None:
        """One note under the prompt (on the terminal, also when stdout is a file)."""
        import questionary

        if sys.stdout.isatty():
            questionary.print(text)
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def _ask_once(self, question: Question, offer: Offer, message: str) -> Any:
        import questionary

        out = _terminal()
        if question.type == "choice" and offer.choices:
            default = offer.default if offer.default in offer.choices else None
            return _with_keys(questionary.select(message, choices=offer.choices,
                                                 default=default, instruction=" ", **out))
        if question.type == "bool":
            return _with_keys(questionary.confirm(message, default=bool(offer.default),
                                                  instruction=" ", **out))
        if question.type == "list" and offer.choices:
            picked = _with_keys(questionary.checkbox(
                message, instruction=" ",
                choices=[questionary.Choice(c, checked=c in (offer.default or []))
                         for c in offer.choices],
                validate=lambda items: bool(items) or "pick at least one", **out))
            return picked if picked in (BACK, HELP) else list(picked)
        return self._text(question, offer, message)

    def _text(self, question: Question, offer: Offer, message: str) -> Any:
        """A typed answer; one that fails its check is refused with the reason (kept in
        the scrollback, wrapped) and asked for again."""
        import questionary
        from prompt_toolkit.completion import WordCompleter

        completer = (WordCompleter([*offer.choices, "none"]) if offer.choices else None)
        while True:
            text = _with_keys(questionary.text(message, completer=completer, **_terminal()))
            if text in (HELP, BACK):
                return text
            word = text.strip().lower()
            if word in HELP_WORDS:
                return HELP
            if word in BACK_WORDS:
                return BACK
            refused = offer.validate(text)
            if refused is None:
                return offer.read(text)
            self.say(wrap_note(refused, self.columns or width()))


def _terminal() -> dict[str, Any]:
    """Where prompts draw: the standard output, or, when it is redirected to a file
    (``ask > rec.json``), the terminal's standard error, so the file gets only the result."""
    if sys.stdout.isatty():
        return {}
    from prompt_toolkit.output import create_output

    return {"output": create_output(stdout=sys.stderr)}


def _with_keys(question: Any) -> Any:
    """Run a questionary prompt with ``?`` (help) and ``<`` (back) bound; in a typed answer
    they act only as its first character."""
    from prompt_toolkit.key_binding import KeyBindings, merge_key_bindings

    keys = KeyBindings()

    def _key(char: str, reply: Any) -> None:
        @keys.add(char, eager=True)
        def _pressed(event: Any) -> None:
            if event.current_buffer.text:
                event.current_buffer.insert_text(char)
            else:
                event.app.exit(result=reply)

    _key("?", HELP)
    _key("<", BACK)

    app = question.application
    app.key_bindings = merge_key_bindings([app.key_bindings, keys])
    return question.unsafe_ask()
