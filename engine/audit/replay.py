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

from engine.answers.model import Answers, validate_answers
from engine.audit.store import AuditStore, Record
from engine.catalog.load import Catalog
from engine.decide.engine import Engine, load_engine

_ENGINES: dict[tuple[str, str], Engine] = {}
_LOCK = threading.Lock()


def _materialise(texts: Mapping[str, str], root: Path) -> None:
    for name, text in texts.items():
        target = root / ("prices.yaml" if name == "prices" else name)
        allowed = {(root / d).resolve() for d in ("rules", "catalog", ".")}
        if target.resolve().parent not in allowed:
            raise ValueError(f"refusing to write stored policy file outside the policy: {name}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def stored_engine(store: AuditStore, record: Record) -> Engine:
    """The engine for the exact policy a record was made with (cached per policy pair).

    The stored policy is checked against its hash first, every time (even when cached): one
    that no longer matches raises :class:`engine.audit.store.PolicyMismatch` (exit 1).
    """
    rules, catalog = store.policy(record.rules_hash), store.policy(record.catalog_hash)
    key = (record.rules_hash, record.catalog_hash)
    with _LOCK:
        if key not in _ENGINES:
            root = Path(tempfile.mkdtemp(prefix="gpu-advisor-replay-"))
            (root / "rules").mkdir()
            (root / "catalog").mkdir()
            _materialise(rules, root)
            _materialise(catalog, root)
            prices = root / "prices.yaml" if "prices" in catalog else None
            _ENGINES[key] = load_engine(root / "rules", root / "catalog", prices)
        return _ENGINES[key]


def answers_of(record: Record, catalog: Catalog) -> Answers:
    """The recorded answers, checked against ``catalog``'s questionnaire."""
    return validate_answers(json.loads(record.answers), catalog)


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
