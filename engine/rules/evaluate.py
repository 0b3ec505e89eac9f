"""Run compiled rulesets on durable_rules, one isolated session per evaluation.

Follows docs/durable-rules.md: no timer threads (``_run`` disabled), a lock around each
evaluation, ``delete_state`` afterwards (1,024-session cap), a catch-all rule so no fact is
"unhandled", actions with exactly one parameter that only record, and the session's stored
exception turned into an error instead of vanishing.

Verdicts are reused: each ruleset's :class:`~engine.rules.signature.Signer` classes a fact by what
its rules can tell apart, each rule's verdict is remembered by the classes of the fields it
reads, and durable_rules decides only facts holding a class some rule has not seen. Later
facts of known classes get the same rules, without a session. The memos are per Evaluator
(one compiled policy) and rule, bounded like every memo (``engine.memo``).

durable_rules' C core cannot be interrupted (it holds the GIL and ignores SIGINT), so a
policy is first built in a child process under a time bound (``engine.rules.trial``); only a
policy built there is built in-process.
"""

from __future__ import annotations

import contextlib
import math
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from durable.engine import MessageNotHandledException, MessageObservedException

from engine.errors import EngineError, EvaluationError
from engine.memo import Memo
from engine.rules.compile import Compiled, CompiledRuleset
from engine.rules.fact_ids import fact_ids
from engine.rules.host import QuietHost, describe_error, host_definitions, interrupts_held
from engine.rules.limits import MAX_PROPERTIES, durable_fact
from engine.rules.trial import verified

Firing = tuple[str, str]
"""(rule id, id of the fact it fired on)."""


@dataclass(frozen=True)
class SharedFacts:
    """Facts that share most of their values: the i-th is ``common`` (durable values, the
    fact kind included) with the durable values of the fields ``own`` of ``raws[i]``
    (``durable_fact``) and the fact id ``ids[i]``."""

    common: Mapping[str, Any]
    own: tuple[str, ...]
    raws: Sequence[Mapping[str, Any]]
    ids: Sequence[str]

    def fact(self, index: int) -> dict[str, Any]:
        """The ``index``-th fact, as durable_rules sees it."""
        return {**self.common, **durable_fact(self.raws[index], self.own),
                "fact_id": self.ids[index]}


class Evaluator:
    """Owns one durable_rules Host for a compiled rulebook; thread-safe, reusable."""

    def __init__(self, compiled: Compiled, *, memo: bool = True) -> None:
        self._compiled = compiled
        self._memo = memo
        # per rule, its verdict by the classes of the fields it reads (see ``_reuse``)
        self._rule_verdicts: dict[str, list[tuple[str, Callable[[Any], Any],
                                                  Memo[Any, bool]]]] = {
            ruleset.name: [(rule_id, itemgetter(*positions), Memo())
                           for rule_id, positions in _rule_positions(ruleset)]
            for ruleset in compiled.rulesets if ruleset.signer is not None}
        self._fired: dict[str, list[Firing]] = {}
        self._lock = threading.Lock()
        if not compiled.built:
            verified(compiled)
        definitions = {ruleset.name: host_definitions(ruleset, self._action_for(ruleset))
                       for ruleset in compiled.rulesets}
        try:
            self._host = QuietHost(definitions)
        except Exception as exc:  # the C core raises plain Exceptions with error codes
            raise EngineError(f"durable_rules could not build the rules: {describe_error(exc)}"
                              ) from None

    def _action_for(self, ruleset: CompiledRuleset) -> Callable[[str], Callable[[Any], None]]:
        """Definition name → the action recording its rule's firings."""
        return lambda name: self._recorder(ruleset.rule_id(name))

    def _recorder(self, rule_id: str) -> Callable[[Any], None]:
        fired = self._fired

        def act(c: Any) -> None:
            matches = c.m if isinstance(c.m, list) else [c.m]
            fired[c.s.sid].extend((rule_id, m.fact_id) for m in matches)

        return act

    def run(self, ruleset: CompiledRuleset, facts: Iterable[Mapping[str, Any]], *,
            checked: bool = False) -> list[Firing]:
        """The rules of ``ruleset`` that hold on each of ``facts`` (order not significant).

        Facts of a signature seen before get the remembered verdict; the others are asserted
        together into one fresh durable_rules session (see :meth:`run_session`).
        ``checked`` skips the per-value check for facts built by
        ``engine.facts.build.durable_fact``.
        """
        facts = list(facts)
        if not self._memo or ruleset.signer is None:
            return self.run_session(ruleset, facts, checked=checked)
        if not checked:
            for fact in facts:
                _check_fact(fact)
        sign = ruleset.signer.sign
        return self._reuse(ruleset, [sign(fact) for fact in facts], facts.__getitem__,
                           [fact["fact_id"] for fact in facts])

    def run_shared(self, ruleset: CompiledRuleset, facts: SharedFacts) -> list[Firing]:
        """:meth:`run` on the facts ``facts`` stands for, each built only where durable_rules
        must see it (a signature no verdict is remembered for)."""
        if not self._memo or ruleset.signer is None:
            return self.run_session(ruleset, [facts.fact(i) for i in range(len(facts.ids))],
                                    checked=True)
        sign = ruleset.signer.bind(facts.common, facts.own)
        return self._reuse(ruleset, [sign(raw) for raw in facts.raws], facts.fact, facts.ids)

    def _reuse(self, ruleset: CompiledRuleset, keys: list[tuple[Any, ...]],
               fact_at: Callable[[int], Mapping[str, Any]],
               ids: Sequence[str]) -> list[Firing]:
        """The firings on the facts signed ``keys`` (``fact_at(i)`` the i-th, ``ids[i]`` its
        id): remembered verdicts where every rule's is known. durable_rules decides the facts
        that hold a class of some rule no fact before them holds, and the others follow from
        theirs, rule by rule."""
        rules = self._rule_verdicts[ruleset.name]
        # each rule's verdict from the classes of its own fields (exact: a rule cannot tell
        # apart facts equal on those), read once per class: another thread may evict entries
        known: list[dict[Any, bool]] = [{} for _ in rules]
        asked: list[set[Any]] = [set() for _ in rules]  # classes the facts sent will decide
        verdicts: dict[tuple[Any, ...], tuple[str, ...]] = {}
        new: dict[tuple[Any, ...], int] = {}
        waiting: dict[tuple[Any, ...], None] = {}
        for index, key in enumerate(keys):
            if key in verdicts or key in new or key in waiting:
                continue
            held: list[str] = []
            for rule_id, project, seen in rules:  # the usual case: every verdict remembered
                holds = seen.get(project(key))
                if holds is None:
                    break
                if holds:
                    held.append(rule_id)
            else:
                verdicts[key] = tuple(held)
                continue
            unknown: list[tuple[int, Any]] = []
            for position, (_, project, seen) in enumerate(rules):
                cls = project(key)
                if cls not in known[position]:
                    holds = seen.get(cls)
                    if holds is None:
                        unknown.append((position, cls))
                    else:
                        known[position][cls] = holds
            if all(cls in asked[position] for position, cls in unknown):
                waiting[key] = None  # decided through the facts sent before it
            else:  # durable_rules sees this fact
                new[key] = index
                for position, cls in unknown:
                    asked[position].add(cls)
        if new:
            decided = self._decide(ruleset, {key: fact_at(index) for key, index in new.items()})
            for key, verdict in decided.items():
                verdicts[key] = verdict
                for position, (rule_id, project, seen) in enumerate(rules):
                    cls = project(key)
                    known[position][cls] = seen.put(cls, rule_id in verdict)
        for key in waiting:
            verdicts[key] = tuple(rule_id for position, (rule_id, project, _)
                                  in enumerate(rules) if known[position][project(key)])
        return [(rule_id, ids[index]) for index, key in enumerate(keys)
                for rule_id in verdicts[key]]

    def _decide(self, ruleset: CompiledRuleset, new: Mapping[tuple[Any, ...], Mapping[str, Any]]
                ) -> dict[tuple[Any, ...], tuple[str, ...]]:
        """durable_rules' verdict on one fact per unseen signature, in one session."""
        unseen = list(new)
        fired = self.run_session(ruleset, [
            {**new[key], "fact_id": str(index)} for index, key in enumerate(unseen)],
            checked=True)
        on: dict[str, set[str]] = {}
        for rule_id, fact_id in fired:
            on.setdefault(fact_id, set()).add(rule_id)
        order = ruleset.rule_ids
        return {key: tuple(sorted(on.get(str(position), ()), key=order.index))
                for position, key in enumerate(unseen)}

    def run_session(self, ruleset: CompiledRuleset, facts: Iterable[Mapping[str, Any]], *,
                    checked: bool = False) -> list[Firing]:
        """Assert ``facts`` into a fresh session of ``ruleset``; the firings, in engine order.

        No memo: durable_rules decides every fact, through its public ``Host`` API.
        ``checked`` as in :meth:`run`.
        """
        sid = uuid.uuid4().hex
        batch = [dict(fact, sid=sid) for fact in facts]
        if not checked:
            for fact in batch:
                _check_fact(fact)
        if not batch:  # no session would exist: get_state fails with error 309
            return []
        # an id replaces the one durable_rules would make, so no property count changes
        for fact, fact_id in zip(batch, fact_ids(len(batch)), strict=True):
            fact["id"] = fact_id
        with self._lock, interrupts_held():
            self._fired[sid] = []
            try:
                self._host.assert_facts(ruleset.name, batch)
                state = self._host.get_state(ruleset.name, sid)
                if "exception" in state:
                    raise EvaluationError(f"rule action failed in {ruleset.name}: "
                                          f"{state['exception']}")
                return self._fired[sid]
            except EvaluationError:
                raise
            except (MessageNotHandledException, MessageObservedException) as exc:
                code = 1 if isinstance(exc, MessageNotHandledException) else 2  # its result
                raise EvaluationError(f"durable_rules refused the facts of {ruleset.name}"
                                      f" (result {code})") from None
            except Exception as exc:  # the C core raises plain Exceptions with error codes
                raise _failed(ruleset, exc) from None
            finally:
                self._fired.pop(sid, None)
                with contextlib.suppress(Exception):
                    self._host.delete_state(ruleset.name, sid)


def _rule_positions(ruleset: CompiledRuleset) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Per rule, the signature positions its verdict depends on: as compiled, or every
    position for a ruleset made without them (the whole signature: still exact)."""
    if len(ruleset.rule_positions) == len(ruleset.rule_ids):
        return ruleset.rule_positions
    assert ruleset.signer is not None
    every = tuple(range(ruleset.signer.width))
    return tuple((rule_id, every) for rule_id in ruleset.rule_ids)


def _failed(ruleset: CompiledRuleset, exc: BaseException) -> EvaluationError:
    ids = ", ".join(ruleset.rule_ids[:5]) + (", …" if len(ruleset.rule_ids) > 5 else "")
    return EvaluationError(f"durable_rules failed on the rules {ids}: {describe_error(exc)}")


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _check_fact(fact: Mapping[str, Any]) -> None:
    """Refuse values durable_rules would misread (exponent floats, non-scalars, too many keys)."""
    if len(fact) > MAX_PROPERTIES:
        raise EvaluationError(f"fact has {len(fact)} properties; at most {MAX_PROPERTIES} "
                              "(durable_rules 2.0.28 crashes from 254)")
    for key, value in fact.items():
        kind = type(value)
        if kind is float and (
            not math.isfinite(value) or (value != 0 and not 1e-4 <= abs(value) < 1e15)
        ):
            raise EvaluationError(f"fact '{key}' = {value!r} would serialise in exponent form")
        if kind not in _SCALARS and not isinstance(value, (str, int, float, bool)):
            raise EvaluationError(f"fact '{key}' is not a scalar: {kind.__name__}")
