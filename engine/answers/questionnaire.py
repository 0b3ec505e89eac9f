"""The questionnaire, independent of any prompt library.

Questions come from ``catalog/questions.yaml`` in order; each one is asked only when its
``when`` conditions hold for the answers so far, when it was not pre-filled (``--answers``,
``--set``) and, for ``advanced`` ones, only on request (their defaults apply otherwise).
Every answer is checked when it is given, against its question and against the answers it
depends on (``engine.answers.cross``); ``back`` returns to the previous question with its
answer as the default. A :class:`Prompter` turns one question into one reply; the terminal
one lives in ``engine.answers.prompt``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from engine.answers.check import AnswerOrigin, check_answer, describe, parse_text
from engine.answers.cross import first_problem
from engine.answers.hf_config import is_config_reference, shape_of_config
from engine.answers.model_shape import SHAPE_FIELD, ModelShape
from engine.catalog.load import Catalog
from engine.catalog.models import Question, When
from engine.errors import AnswerError, InputError

Validator = Callable[[str], str | None]
"""Returns an error message for a bad textual answer, or None when it is acceptable."""


class Back:
    """A prompter's reply that means: return to the previous question."""

    def __repr__(self) -> str:
        return "BACK"


BACK: Final = Back()
BACK_WORDS = frozenset({"<", "back"})
HELP_WORDS = frozenset({"?", "help"})


@dataclass(frozen=True)
class Offer:
    """What a prompter needs to ask one question: the default, the values offered, and
    ``read``, which turns typed text into the checked answer (Enter alone is the default)."""

    default: Any
    choices: list[str] | None
    read: Callable[[str], Any]

    def validate(self, text: str) -> str | None:
        """The error message for typed text, or None (help and back words pass)."""
        if text.strip().lower() in HELP_WORDS | BACK_WORDS:
            return None
        try:
            self.read(text)
        except AnswerError as exc:
            return exc.message
        return None


class Prompter(Protocol):
    """Asks one question and returns the typed answer, or :data:`BACK` (raises
    KeyboardInterrupt on Ctrl-C); ``say`` prints one line under the prompt."""

    def ask(self, question: Question, offer: Offer) -> Any: ...

    def say(self, text: str) -> None: ...


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
                 advanced: bool = False, fixed: Collection[str] = ()) -> None:
        """``fixed``: pre-filled answers ``back`` never returns to (``--set``)."""
        self.catalog = catalog
        self.answers: dict[str, Any] = dict(prefilled)
        self.prefilled = frozenset(prefilled)
        # the shape of a model named by its config goes with that answer
        self.fixed = frozenset(fixed) | ({SHAPE_FIELD} if "model" in fixed else set())
        self.advanced = advanced
        self.remembered: dict[str, Any] = {}
        """Answers undone by ``back``: offered as the defaults when asked again."""
        self._order = {q.id: i for i, q in enumerate(catalog.questions)}
        self._order.setdefault(SHAPE_FIELD, self._order.get("model", 0))
        self._shapes: dict[str, ModelShape] = {}
        """The shape read for each config a model answer named (read when it is given)."""

    def relevant(self, question: Question, answers: Mapping[str, Any] | None = None) -> bool:
        """Its ``when`` conditions hold for the answers so far (defaults included)."""
        known = {**self._defaults(), **(self.answers if answers is None else answers)}
        return all(condition_holds(w, known) for w in question.when)

    def _defaults(self) -> dict[str, Any]:
        return {q.id: q.default for q in self.catalog.questions}

    def pending(self) -> list[Question]:
        """Questions that would still be asked, in order (given the answers so far)."""
        return [q for q in self.catalog.questions if self._askable(q, self.answers)]

    def _askable(self, question: Question, answers: Mapping[str, Any]) -> bool:
        if question.id in answers:
            return False
        if question.advanced and not self.advanced:
            return False
        return self.relevant(question, answers)

    def next(self) -> Question | None:
        """The next question to ask, or None when done."""
        for question in self.catalog.questions:
            if self._askable(question, self.answers):
                return question
        return None

    def default(self, question: Question) -> Any:
        """The default offered: the answer given before ``back``, else the question's."""
        if question.id in self.remembered:
            return self.remembered[question.id]
        if question.id == "model" and self.answers.get("model_params_b") is not None:
            return None
        return question.default

    # -- checking one answer ------------------------------------------------------------------
    def check(self, question: Question, value: Any) -> Any:
        """The answer, checked against its question and the answers it depends on."""
        value = check_answer(question, value, self.catalog, AnswerOrigin(), from_set=True)
        if question.type == "model" and isinstance(value, str) and (
                value not in self.catalog.models and is_config_reference(value)):
            self._read_shape(question, value)
        trial = {**self.answers, question.id: value}
        known = {**{q.id: _default(q) for q in self.catalog.questions}, **trial}
        settled = set(trial) | {q.id for q in self.catalog.questions
                                if not self._askable(q, trial)}
        problem = first_problem(known, settled=settled, involving=question.id)
        if problem is not None:
            raise AnswerError(self._explain(question, *problem), field=question.id)
        return value

    def _read_shape(self, question: Question, reference: str) -> None:
        """Read the config a model answer names, once, where it is given (the edge)."""
        if reference not in self._shapes:
            try:
                self._shapes[reference] = shape_of_config(reference)
            except InputError as exc:
                raise AnswerError(str(exc), field=question.id) from None

    def _explain(self, question: Question, blamed: str, message: str) -> str:
        if blamed == question.id or question.type not in ("int", "float"):
            return message
        return f"{message}; expected {describe(question)}"

    def parse(self, question: Question, text: str) -> Any:
        """Typed and checked value of a textual answer."""
        return self.check(question, parse_text(question, text.strip(), field=question.id))

    def read(self, question: Question, text: str) -> Any:
        """A typed reply: Enter alone takes the default (when there is one), else parsed."""
        default = self.default(question)
        if not text.strip() and default is not None:
            return self.check(question, default)
        return self.parse(question, text)

    def validator(self, question: Question) -> Validator:
        """A check for textual answers: the error message, with the accepted range."""
        return self.offer(question).validate

    def offer(self, question: Question) -> Offer:
        """What the prompter needs to ask ``question``."""
        return Offer(self.default(question), self.choices(question),
                     lambda text: self.read(question, text))

    def record(self, question: Question, value: Any) -> None:
        """Store an answer (already typed and checked); a model named by its config brings
        its shape."""
        self.answers[question.id] = value
        self.remembered.pop(question.id, None)
        if question.id == "model":
            shape = self._shapes.get(value) if isinstance(value, str) else None
            if shape is not None:
                self.answers[SHAPE_FIELD] = shape
            else:
                self.answers.pop(SHAPE_FIELD, None)

    def choices(self, question: Question) -> list[str] | None:
        """The values offered in a list: choices, or catalog ids for model/GPU questions."""
        if question.type in ("choice", "list"):
            return list(question.choices or [])
        if question.type == "model":
            return sorted(self.catalog.models)
        if question.type == "gpu":
            return sorted(self.catalog.gpus)
        return None

    # -- going back ---------------------------------------------------------------------------
    def back(self, current: Question) -> Question | None:
        """Undo the answer to the question before ``current`` and every later one (each
        kept as the default when asked again); that question, or None at the first."""
        here = self._order[current.id]
        earlier = [k for k in self.answers if k not in self.fixed and k != SHAPE_FIELD
                   and self._order[k] < here]
        if not earlier:
            return None
        target = max(earlier, key=self._order.__getitem__)
        for key in [k for k in self.answers
                    if k not in self.fixed and self._order[k] >= self._order[target]]:
            self.remembered[key] = self.answers.pop(key)
        return self.catalog.question(target)

    # -- the whole session --------------------------------------------------------------------
    def run(self, prompter: Prompter,
            saved: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Ask every pending question through ``prompter``; the answers (prefills included).

        ``saved`` is called with the answers after each one is given.
        """
        while (question := self.next()) is not None:
            reply = prompter.ask(question, self.offer(question))
            if reply is BACK:
                target = self.back(question)
                prompter.say("  (this is the first question)" if target is None
                             else f"  back to: {target.id}")
                continue
            try:
                value = self.check(question, reply)
            except AnswerError as exc:
                prompter.say(f"  {exc.message}")
                continue
            self.record(question, value)
            if saved is not None:
                saved(self.answers)
            prompter.say(f"  {question.id}: {show(value)}")
        return self.answers

    def fill_defaults(self) -> dict[str, Any]:
        """Answer every remaining relevant question with its default."""
        while (question := self.next()) is not None:
            self.record(question, self.default(question))
        return self.answers


def _default(question: Question) -> Any:
    return list(question.default or []) if question.type == "list" else question.default


def show(value: Any) -> str:
    """An answer as people read it: ``none``, ``yes``, ``5000``, ``us, eu``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    return str(value)


def prompt_text(question: Question) -> str:
    """The prompt line, with the accepted range and unit for numbers."""
    if question.type in ("int", "float"):
        return f"{question.prompt} [{describe(question)}]"
    return question.prompt
