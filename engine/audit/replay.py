"""Replay recorded decisions: on their own stored policy (must match byte for byte) or on
today's policy (which decisions changed, and which rules made the difference)."""

from __future__ import annotations

import difflib
import json
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.answers.model import Answers, validate_answers
from engine.audit.store import AuditError, AuditStore, Record
from engine.catalog.load import Catalog
from engine.catalog.prices import PriceInput, is_price_text
from engine.decide.engine import Decision, Engine, Evaluation, load_engine
from engine.errors import AnswerError, InputError
from engine.files.safe_write import write_file
from engine.version import __version__

_ENGINES: dict[tuple[str, str], Engine] = {}
_LOCK = threading.Lock()


class NotReplayable(AuditError):
    """A record this engine cannot re-run: its stored policy does not load here, or this
    engine refuses its recorded answers (both made by an earlier engine). Exit 1, as for a
    replay that does not reproduce its record."""

    exit_code = 1

    def __init__(self, record: Record, what: str, why: str) -> None:
        super().__init__(f"record {record.id} (engine {record.engine_version}, "
                         f"{record.created_at}) cannot be replayed by engine {__version__}: "
                         f"{what} ({why}); `audit verify` checks it is untampered and "
                         "`audit show --format json` prints it as recorded")


def _materialise(texts: Mapping[str, str], root: Path) -> None:
    """Write a stored policy's texts under ``root`` (a fresh temporary folder): each to the
    file its name says, never outside ``rules/`` and ``catalog/`` (a price file is not a
    file: it is rebuilt from the texts, :meth:`PriceInput.from_texts`)."""
    for name, text in texts.items():
        if is_price_text(name):
            continue  # a price file is rebuilt from the record's texts, not from a file
        write_file(_stored_file(name, root), text.encode("utf-8"), force=False)


def _stored_file(name: object, root: Path) -> Path:
    """Where the stored policy text ``name`` goes under ``root``; a ValueError for a name that
    is not one file in ``rules/`` or ``catalog/`` (``../…`` included)."""
    folder, _, file = name.partition("/") if isinstance(name, str) else ("", "", "")
    if folder not in ("rules", "catalog") or file in ("", ".", "..") or any(
            c in file for c in "/\\\0"):
        raise ValueError(f"it names a file {name!r} outside the policy")
    return root / folder / file


def stored_engine(store: AuditStore, record: Record) -> Engine:
    """The engine for the exact policy a record was made with (cached per policy pair).

    The stored policy is checked against its hash first, every time (even when cached): one
    that no longer matches raises :class:`engine.audit.store.PolicyMismatch` (exit 1). It is
    unpacked into a temporary folder that is removed once the engine is loaded.
    """
    rules, catalog = store.policy(record.rules_hash), store.policy(record.catalog_hash)
    key = (record.rules_hash, record.catalog_hash)
    with _LOCK:
        if key not in _ENGINES:
            with tempfile.TemporaryDirectory(prefix="gpu-advisor-replay-") as folder:
                _ENGINES[key] = _unpacked_engine(store, record, rules, catalog, Path(folder))
        return _ENGINES[key]


def _unpacked_engine(store: AuditStore, record: Record, rules: Mapping[str, str],
                     catalog: Mapping[str, str], root: Path) -> Engine:
    (root / "rules").mkdir()
    (root / "catalog").mkdir()
    for digest, texts in ((record.rules_hash, rules), (record.catalog_hash, catalog)):
        try:
            _materialise(texts, root)
        except (ValueError, TypeError, AttributeError) as exc:
            raise AuditError(f"{store.path}: the stored policy {digest[:12]} cannot be "
                             f"unpacked ({exc}); the store was altered") from None
    try:
        return load_engine(root / "rules", root / "catalog", PriceInput.from_texts(catalog))
    except InputError as exc:  # a policy this engine's files no longer accept
        raise NotReplayable(record, "its stored policy does not load here",
                            str(exc).replace(f"{root}/", "")) from None


def answers_of(record: Record, catalog: Catalog) -> Answers:
    """The recorded answers, checked against ``catalog``'s questionnaire."""
    answers = record.answers_data
    if not isinstance(answers, dict):
        raise AuditError(f"record {record.id} cannot be read: its answers are not a JSON "
                         "object; run `gpu-advisor audit verify`")
    try:
        return validate_answers(answers, catalog)
    except AnswerError as exc:
        raise NotReplayable(record, "this engine refuses its recorded answers",
                            str(exc)) from None


def recorded_decision(record: Record) -> Decision:
    """The decision a record holds (an :class:`AuditError` naming it if it holds none)."""
    try:
        return Decision.model_validate_json(record.result)
    except ValidationError as exc:
        raise AuditError(f"record {record.id} (engine {record.engine_version}, "
                         f"{record.created_at}) holds a decision this engine cannot read "
                         f"({exc.error_count()} error(s)): an earlier engine's, or an altered "
                         "record (`gpu-advisor audit verify` tells which); `audit show "
                         "--format json` prints it as recorded") from None


@dataclass(frozen=True)
class Replay:
    """Result of replaying a record on its stored policy."""

    identical: bool
    diff: list[str]


def replay_stored(store: AuditStore, record: Record) -> Replay:
    """Re-run a record on its stored policy; identical means byte for byte."""
    engine = stored_engine(store, record)
    answers = answers_of(record, engine.catalog)
    again = engine.recommend(answers, decision_id=record.id).to_json()
    if again == record.result:
        return Replay(True, [])
    diff = list(difflib.unified_diff(record.result.splitlines(), again.splitlines(),
                                     "recorded", "replayed", lineterm="", n=1))
    return Replay(False, diff)


@dataclass(frozen=True)
class TracedReplay:
    """A record replayed on its stored policy with every trace (``audit show --trace``)."""

    engine: Engine
    evaluation: Evaluation
    identical: bool
    """Whether the replay, without its traces, is the record byte for byte."""


def traced_replay(store: AuditStore, record: Record) -> TracedReplay:
    """Re-run a record on its stored policy with ``trace``: the record keeps the lean
    decision only, and this rebuilds the traces it was made with."""
    engine = stored_engine(store, record)
    answers = answers_of(record, engine.catalog)
    evaluation = engine.evaluate(answers, decision_id=record.id, trace=True)
    again = engine.untraced(evaluation.decision).to_json()
    return TracedReplay(engine, evaluation, again == record.result)


@dataclass
class AxisChange:
    """One decision axis whose choice differs under today's policy."""

    axis: str
    before: str | None
    after: str | None
    rules: list[str] = field(default_factory=list)


@dataclass
class CurrentReplay:
    """Result of replaying a record on today's policy."""

    changes: list[AxisChange]
    hardware_before: str | None
    hardware_after: str | None
    rules_added: list[str]
    rules_removed: list[str]
    rules_edited: list[str]
    result: dict[str, Any]


def replay_current(store: AuditStore, record: Record, engine: Engine) -> CurrentReplay:
    """Re-run a record on ``engine`` (today's policy) and explain what changed."""
    old_engine = stored_engine(store, record)
    answers = answers_of(record, engine.catalog)
    new = json.loads(engine.recommend(answers, decision_id=record.id).to_json())
    old = record.result_data
    old_rules = {r.id: r.model.model_dump(mode="json") for r in old_engine.rulebook.rules}
    new_rules = {r.id: r.model.model_dump(mode="json") for r in engine.rulebook.rules}
    added = sorted(set(new_rules) - set(old_rules))
    removed = sorted(set(old_rules) - set(new_rules))
    edited = sorted(k for k in set(old_rules) & set(new_rules) if old_rules[k] != new_rules[k])
    changes = []
    for axis, decision in new["decisions"].items():
        before = old["decisions"].get(axis, {}).get("choice")
        if before != decision["choice"]:
            touched = _axis_reason_rules(old, axis) ^ _axis_reason_rules(new, axis)
            touched |= (_axis_reason_rules(old, axis) | _axis_reason_rules(new, axis)) & set(
                edited)
            changes.append(AxisChange(axis, before, decision["choice"], sorted(touched)))
    return CurrentReplay(changes, _hw(old), _hw(new), added, removed, edited, new)


def _axis_reason_rules(result: Mapping[str, Any], axis: str) -> set[str]:
    ranking = result["decisions"].get(axis, {}).get("ranking", [])
    return {reason["rule"] for option in ranking for reason in option["reasons"]}


def _hw(result: Mapping[str, Any]) -> str | None:
    choice = result["hardware"]["choice"]
    return None if choice is None else str(choice["id"])
