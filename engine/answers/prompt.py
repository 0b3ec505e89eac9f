"""The terminal prompter: arrow-key lists and validated input, via questionary."""

from __future__ import annotations

from typing import Any

from engine.answers.questionnaire import Validator, prompt_text
from engine.catalog.models import Question

NONE_CHOICE = "none"
HELP_CHOICE = "? what does this mean"


class TerminalPrompter:
    """Maps each question type to a questionary prompt; help on demand ('?' in text prompts,
    a help entry in choice lists; yes/no questions show it beside the prompt)."""

    def ask(self, question: Question, default: Any, validate: Validator,
            choices: list[str] | None) -> Any:
        import questionary

        message = prompt_text(question)
        if question.type == "choice" and choices:
            while True:
                picked = questionary.select(
                    message, choices=[*choices, HELP_CHOICE],
                    default=default if default in choices else None,
                    instruction="(↑/↓ and Enter)",
                ).unsafe_ask()
                if picked != HELP_CHOICE:
                    return picked
                questionary.print(f"  {question.help}", style="italic")
        if question.type == "bool":
            return questionary.confirm(message, default=bool(default),
                                       instruction=f"(y/n; {question.help}) ").unsafe_ask()
        if question.type == "list" and choices:
            picked = questionary.checkbox(
                message, choices=[questionary.Choice(c, checked=c in (default or []))
                                  for c in choices],
                instruction=f"(space to pick, Enter to confirm; {question.help})",
                validate=lambda items: bool(items) or "pick at least one",
            ).unsafe_ask()
            return list(picked)
        return self._text(question, default, validate, choices)

    def _text(self, question: Question, default: Any, validate: Validator,
              choices: list[str] | None) -> Any:
        import questionary
        from prompt_toolkit.completion import WordCompleter

        if default is not None:
            hint = f" (Enter for {_show(default)}; '?' for help)"
        elif question.nullable:
            hint = " (Enter for none; '?' for help)"
        else:
            hint = " ('?' for help)"
        completer = WordCompleter([*(choices or []), NONE_CHOICE]) if choices else None

        def check(text: str) -> bool | str:
            if text.strip() == "?" or (not text.strip() and default is not None):
                return True
            return validate(text) or True

        while True:
            text = questionary.text(prompt_text(question) + hint, validate=check,
                                    completer=completer).unsafe_ask()
            if text.strip() == "?":
                questionary.print(f"  {question.help}", style="italic")
                continue
            if not text.strip() and default is not None:
                return default
            return _typed(question, text)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _typed(question: Question, text: str) -> Any:
    from engine.answers.check import parse_text

    return parse_text(question, text.strip(), field=question.id)
