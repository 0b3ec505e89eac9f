"""The questionnaire, independent of any prompt library.

Questions come from ``catalog/questions.yaml`` in order; each one is asked only when its
``when`` conditions hold for the answers so far, when it was not pre-filled (``--answers``,
``--set``) and, for ``advanced`` ones, only on request (their defaults apply otherwise).
A :class:`Prompter` turns one question into one answer; the terminal one lives in
``engine.answers.prompt``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from engine.answers.check import AnswerOrigin, check_answer, describe, parse_text
from engine.catalog.load import Catalog
from engine.catalog.models import Question, When
from engine.errors import AnswerError

Validator = Callable[[str], str | None]
"""Returns an error message for a bad textual answer, or None when it is acceptable."""


class Prompter(Protocol):
    """Asks one question and returns the typed answer (raises KeyboardInterrupt on Ctrl-C)."""

    def ask(self, question: Question, default: Any, validate: Validator,
            choices: list[str] | None) -> Any: ...


class Unanswered(AnswerError):
    """Questions remain and there is nobody to ask."""


def condition_holds(when: When, answers: Mapping[str, Any]) -> bool:
    """Whether one ``when`` condition holds for the answers so far."""
    value = answers.get(when.field)
    if when.exists is not None:
        return (value is not None) == when.exists
    if when.in_ is not None:
        return value in when.in_
    if when.not_in is not None:
        return value not in when.not_in
    return bool(value == when.equals)


class Questionnaire:
    """Walks the questions in order, deciding which to ask and checking each answer."""

    def __init__(self, catalog: Catalog, prefilled: Mapping[str, Any], *,
                 advanced: bool = False) -> None:
        self.catalog = catalog
        self.answers: dict[str, Any] = dict(prefilled)
        self.prefilled = frozenset(prefilled)
        self.advanced = advanced

    def relevant(self, question: Question) -> bool:
        """Its ``when`` conditions hold for the answers so far (defaults included)."""
        known = {**self._defaults(), **self.answers}
        return all(condition_holds(w, known) for w in question.when)

    def _defaults(self) -> dict[str, Any]:
        return {q.id: q.default for q in self.catalog.questions}

    def pending(self) -> list[Question]:
        """Questions that would still be asked, in order (given the answers so far)."""
        return [q for q in self.catalog.questions if self._askable(q)]

    def _askable(self, question: Question) -> bool:
        if question.id in self.answers:
            return False
        if question.advanced and not self.advanced:
            return False
        return self.relevant(question)

    def next(self) -> Question | None:
        """The next question to ask, or None when done."""
        for question in self.catalog.questions:
            if self._askable(question):
                return question
        return None

    def default(self, question: Question) -> Any:
        """The default offered for a question."""
        if question.id == "model" and self.answers.get("model_params_b") is not None:
            return None
        return question.default

    def validator(self, question: Question) -> Validator:
        """A check for textual answers: the error message, with the accepted range."""
        def check(text: str) -> str | None:
            try:
                self.parse(question, text)
            except AnswerError as exc:
                return exc.message
            return None
        return check

    def parse(self, question: Question, text: str) -> Any:
        """Typed value of a textual answer, range-checked."""
        value = parse_text(question, text.strip(), field=question.id)
        return check_answer(question, value, self.catalog, AnswerOrigin(), from_set=True)

    def record(self, question: Question, value: Any) -> None:
        """Store an answer (already typed and checked)."""
        self.answers[question.id] = value

    def choices(self, question: Question) -> list[str] | None:
        """The values offered in a list: choices, or catalog ids for model/GPU questions."""
        if question.type in ("choice", "list"):
            return list(question.choices or [])
        if question.type == "model":
            return sorted(self.catalog.models)
        if question.type == "gpu":
            return sorted(self.catalog.gpus)
        return None

    def run(self, prompter: Prompter) -> dict[str, Any]:
        """Ask every pending question through ``prompter``; the answers (prefills included)."""
        while (question := self.next()) is not None:
            value = prompter.ask(question, self.default(question), self.validator(question),
                                 self.choices(question))
            self.record(question, value)
        return self.answers

    def fill_defaults(self) -> dict[str, Any]:
        """Answer every remaining relevant question with its default."""
        while (question := self.next()) is not None:
            self.record(question, self.default(question))
        return self.answers


def prompt_text(question: Question) -> str:
    """The prompt line, with the accepted range and unit for numbers."""
    if question.type in ("int", "float"):
        return f"{question.prompt} [{describe(question)}]"
    return question.prompt
