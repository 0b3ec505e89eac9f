"""One error root for everything the engine refuses, each carrying where the problem is."""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the engine raises on purpose; the CLI prints it as one line."""

    exit_code = 2


class InputError(EngineError):
    """Bad input: a file, a field or a flag, located as precisely as we can.

    Renders as ``path:line: field: message`` with the parts that are known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = self.path if self.line is None else f"{self.path}:{self.line}"
        parts = [p for p in (where, self.field) if p]
        return ": ".join([*parts, self.message])


class CatalogError(InputError):
    """A catalog file (gpus, clouds, models, policy, questions, sources, prices) is invalid."""


class AnswerError(InputError):
    """An answers file or a ``--set`` override is invalid."""


class RuleError(InputError):
    """A rule file is invalid; ``rule_id`` names the rule when it is known."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        rule_id: str | None = None,
    ) -> None:
        self.rule_id = rule_id
        super().__init__(message, path=path, line=line, field=rule_id)


class EvaluationError(EngineError):
    """The rule engine failed while evaluating a request (a bug, not bad input)."""

    exit_code = 1
