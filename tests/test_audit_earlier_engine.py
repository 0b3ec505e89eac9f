"""Records an earlier engine made, which this one can no longer re-run: their answers are
refused here, or their stored policy lacks what this engine's files require. The auditor
gets one line naming the record, exit 1 as for a replay that differs, and the record still
shows and verifies."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.fast_audit_writer import AppendedResult

from engine.audit.chain import verify
from engine.audit.store import AuditStore, policy_hash
from engine.decide.engine import Engine, load_engine

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"


@pytest.fixture(autouse=True)
def no_audit_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GPU_ADVISOR_AUDIT_KEY", "GPU_ADVISOR_AUDIT_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", "audit", *args, "--audit-db",
                           str(db)], capture_output=True, text=True, check=False, timeout=600)


def _earlier(db: Path, engine: Engine, *, answers: dict[str, Any] | None = None,
             catalog: dict[str, str] | None = None) -> str:
    """Record, as an earlier engine would have, the example's decision with these answers
    or this stored catalog; its id."""
    data = json.loads(engine.recommend(yaml.safe_load(EXAMPLE.read_text())).to_json())
    data["decision_id"] = "earlier0000000001"
    if answers is not None:
        data["answers"] = {**data["answers"], **answers}
    texts = dict(engine.catalog.texts if catalog is None else catalog)
    data["catalog"]["hash"] = policy_hash(texts)
    with AuditStore(db) as store:
        store.append(AppendedResult(data), engine.rulebook.texts, texts)
    return str(data["decision_id"])


def _without_policy_key(engine: Engine, key: str) -> dict[str, str]:
    """The bundled catalog texts with one required policy constant removed."""
    texts = dict(engine.catalog.texts)
    policy = yaml.safe_load(texts["catalog/policy.yaml"])
    del policy["policy"][key]
    texts["catalog/policy.yaml"] = yaml.safe_dump(policy, sort_keys=False)
    return texts


def test_answers_refused_here_are_said_in_one_line(tmp_path: Path) -> None:
    engine = load_engine()
    db = tmp_path / "audit.sqlite3"
    record = _earlier(db, engine, answers={"owned_gpu_count": 4})
    replay = _cli(db, "replay", record)
    assert replay.returncode == 1, replay.stderr
    [line] = replay.stderr.strip().splitlines()
    assert line.startswith(f"error: record {record} (engine ")
    assert "refuses its recorded answers (owned_gpu_count: only applies with owned_gpu" in line
    assert "Traceback" not in replay.stderr
    shown = _cli(db, "show", record)
    assert shown.returncode == 0 and "\nrecorded " in shown.stdout  # shown from the record
    with AuditStore(db) as store:
        assert verify(store).ok


def test_a_stored_policy_this_engine_cannot_load_is_said_and_the_record_shown(
        tmp_path: Path) -> None:
    engine = load_engine()
    db = tmp_path / "audit.sqlite3"
    record = _earlier(db, engine, catalog=_without_policy_key(engine, "evaluation_share"))
    replay = _cli(db, "replay", record)
    assert replay.returncode == 1, replay.stderr
    [line] = replay.stderr.strip().splitlines()
    assert "its stored policy does not load here (catalog/policy.yaml:" in line
    assert "evaluation_share" in line and "/tmp" not in line  # the stored file, not a path
    traced = _cli(db, "show", record, "--trace")
    assert traced.returncode == 1 and "cannot be replayed" in traced.stderr
    shown = _cli(db, "show", record)
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"note: record \S+ .*shown with today's rule texts", shown.stderr)
    assert "\nrecorded " in shown.stdout and shown.stdout.startswith("Buy")


def test_a_policy_recorded_before_the_labelled_share_replays_as_it_was(
        tmp_path: Path) -> None:
    """An optional constant a stored policy does not name keeps the behaviour it was
    recorded with: every token of a fine-tune's dataset at the rate."""
    engine = load_engine()
    texts = _without_policy_key(engine, "fine_tune_labelled_m_tokens_max")
    root = tmp_path / "policy"
    for name, text in texts.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    earlier = load_engine(catalog=root / "catalog")
    answers = {"model": "llama-3.1-8b", "training_tokens_b": 1, "runs_per_year": 4}
    parts = {p["part"]: p for p in earlier.recommend(answers).estimates["programme"]["parts"]}
    rate = engine.catalog.policy.data_prep_usd_per_m_tokens["fine-tune"].expected
    assert parts["data"]["usd_per_year"] == pytest.approx(1000 * rate)
