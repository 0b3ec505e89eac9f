"""The audit store on real SQLite files: recording, the hash chain, replay, the commands,
several writer processes at once, kill -9 mid-write, and files that are not ours."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from helpers.raw_audit import replace_in_record

from engine.answers.model import validate_answers
from engine.audit.chain import verify
from engine.audit.store import SCHEMA_VERSION, AuditError, AuditStore, Record, default_path
from engine.cli import cli
from engine.decide.engine import Engine, load_engine
from engine.resources import bundled_dir
from engine.tools.scenarios import load_scenario, scenario_paths

ROOT = Path(__file__).resolve().parent.parent
WRITER = Path(__file__).parent / "helpers" / "audit_writer.py"
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"
SCENARIOS = scenario_paths([Path(__file__).parent / "scenarios"])
SQLITE3_CLI = shutil.which("sqlite3")
RULE = "usage.continuous-favours-local"


# -- helpers ---------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def no_audit_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain records, whatever the environment running the tests says."""
    for name in ("GPU_ADVISOR_AUDIT_KEY", "GPU_ADVISOR_AUDIT_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "audit.sqlite3"


def example_answers(**changes: Any) -> dict[str, Any]:
    return {**yaml.safe_load(EXAMPLE.read_text()), **changes}


def record(store: AuditStore, engine: Engine, answers: dict[str, Any]) -> Record:
    decision = engine.recommend(validate_answers(answers, engine.catalog))
    return store.append(decision, engine.rulebook.texts, engine.catalog.texts)


def fill(path: Path, engine: Engine, answer_sets: list[dict[str, Any]]) -> list[Record]:
    with AuditStore(path) as store:
        return [record(store, engine, answers) for answers in answer_sets]


def run(runner: CliRunner, *args: str) -> Result:
    result = runner.invoke(cli, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def engine_process(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A real ``python -m engine`` process."""
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=timeout, check=False)


def one_error_line(result: Result | subprocess.CompletedProcess[str]) -> str:
    code = result.exit_code if isinstance(result, Result) else result.returncode
    assert code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def sql(path: Path, statement: str) -> None:
    """Edit a store from outside the engine: the sqlite3 shell if installed, else a python
    process using only the sqlite3 module."""
    if SQLITE3_CLI:
        cmd = [SQLITE3_CLI, str(path), statement]
    else:  # pragma: no cover - depends on the machine
        cmd = [sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
               " c.executescript(sys.argv[2]); c.commit(); c.close()", str(path), statement]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr


def read_count(path: Path) -> int:
    """Records in a store, through a separate connection that only reads."""
    conn = sqlite3.connect(path, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM decisions").fetchone()[0])
    finally:
        conn.close()


def snapshot(path: Path) -> tuple[bytes, int, int]:
    info = path.stat()
    return path.read_bytes(), info.st_mtime_ns, stat.S_IMODE(info.st_mode)


def siblings(path: Path) -> list[Path]:
    return [p for p in (Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal"))
            if p.exists()]


def wait_for(condition: Any, what: str, deadline_s: float = 30) -> None:
    deadline = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


# -- the store itself ------------------------------------------------------------------------
def test_new_store_is_private_wal_and_versioned(engine: Engine, db: Path) -> None:
    with AuditStore(db) as store:
        record(store, engine, example_answers())
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
        for extra in siblings(db):  # -wal/-shm while open: same private mode
            assert stat.S_IMODE(extra.stat().st_mode) == 0o600
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        conn.close()


def test_record_holds_everything_and_policy_is_stored_once(engine: Engine, db: Path) -> None:
    records = fill(db, engine, [example_answers(hours_per_year=h) for h in (6000, 6100, 3000)])
    first = records[0]
    assert [r.seq for r in records] == [1, 2, 3]  # chain order is the store's, not the ids'
    assert records[1].prev_hash == records[0].hash and records[2].prev_hash == records[1].hash
    assert first.prev_hash == "0" * 64
    assert first.created_at.endswith("+00:00")  # UTC
    result = first.result_data
    assert result["decision_id"] == first.id
    assert result["engine_version"] == first.engine_version
    assert result["facts"] and result["estimates"]["traces"]  # facts with traces
    assert json.loads(first.answers) == result["answers"]
    assert first.rules_hash == engine.rulebook.hash == result["ruleset"]["hash"]
    assert first.catalog_hash == engine.catalog.hash == result["catalog"]["hash"]
    conn = sqlite3.connect(db)
    try:
        kinds = conn.execute("SELECT kind, hash FROM policies ORDER BY kind").fetchall()
    finally:
        conn.close()
    assert kinds == [("catalog", engine.catalog.hash), ("rules", engine.rulebook.hash)]
    with AuditStore(db) as store:
        assert store.policy(first.rules_hash) == dict(engine.rulebook.texts)
        assert store.policy(first.catalog_hash) == dict(engine.catalog.texts)
        assert store.get(first.id[:16]) == first  # a unique prefix is enough
        assert verify(store).ok and verify(store).count == 3


def test_reopening_an_existing_store_keeps_it(engine: Engine, db: Path) -> None:
    fill(db, engine, [example_answers()])
    fill(db, engine, [example_answers(hours_per_year=5000)])
    with AuditStore(db) as store:
        assert store.count() == 2
        assert verify(store).ok


def test_readers_do_not_create_a_store(runner: CliRunner, db: Path) -> None:
    line = one_error_line(run(runner, "audit", "verify", "--audit-db", str(db)))
    assert "no audit store" in line
    assert not db.exists()


# -- recording from `recommend` ---------------------------------------------------------------
def test_recommend_records_into_the_given_store(runner: CliRunner, db: Path) -> None:
    result = run(runner, "recommend", "--answers", str(EXAMPLE), "--audit-db", str(db),
                 "--format", "json")
    assert result.exit_code == 0, result.output
    with AuditStore(db) as store:
        [only] = store.records()
    assert only.result == result.stdout  # the full result, byte for byte
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def test_recommend_records_into_the_env_store(runner: CliRunner,
                                              isolated_audit_store: Path) -> None:
    assert default_path() == isolated_audit_store
    assert run(runner, "recommend", "--answers", str(EXAMPLE)).exit_code == 0
    with AuditStore(isolated_audit_store) as store:
        assert store.count() == 1


def test_default_store_is_in_the_user_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv("GPU_ADVISOR_AUDIT_DB")
    assert default_path() == Path(platformdirs.user_data_dir("gpu-advisor")) / "audit.sqlite3"


def test_no_audit_writes_nothing(runner: CliRunner, db: Path,
                                 isolated_audit_store: Path) -> None:
    result = run(runner, "recommend", "--answers", str(EXAMPLE), "--audit-db", str(db),
                 "--no-audit")
    assert result.exit_code == 0, result.output
    assert run(runner, "recommend", "--answers", str(EXAMPLE), "--no-audit").exit_code == 0
    assert not db.exists() and not siblings(db)
    assert not isolated_audit_store.exists()


def test_bad_answers_write_nothing(runner: CliRunner, engine: Engine, db: Path,
                                   tmp_path: Path) -> None:
    fill(db, engine, [example_answers()])
    before = snapshot(db)
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(example_answers(hours_per_year=-5)))
    one_error_line(run(runner, "recommend", "--answers", str(bad), "--audit-db", str(db)))
    one_error_line(run(runner, "recommend", "--answers", str(EXAMPLE), "--set",
                       "hours_per_year=lots", "--audit-db", str(db)))
    one_error_line(run(runner, "recommend", "--answers", str(tmp_path / "missing.yaml"),
                       "--audit-db", str(db)))
    assert snapshot(db) == before
    assert read_count(db) == 1
    # and a bad answers file never creates a store either
    fresh = tmp_path / "fresh.sqlite3"
    one_error_line(run(runner, "recommend", "--answers", str(bad), "--audit-db", str(fresh)))
    assert not fresh.exists()


# -- verify and tampering --------------------------------------------------------------------
def test_verify_counts_an_intact_chain(runner: CliRunner, engine: Engine, db: Path) -> None:
    fill(db, engine, [example_answers(hours_per_year=h) for h in (4000, 5000, 6000)])
    result = run(runner, "audit", "verify", "--audit-db", str(db))
    assert result.exit_code == 0, result.output
    assert "3 record(s)" in result.stdout
    empty = db.with_name("empty.sqlite3")
    AuditStore(empty).close()
    result = run(runner, "audit", "verify", "--audit-db", str(empty))
    assert result.exit_code == 0 and "0 record(s)" in result.stdout


@pytest.mark.slow
def test_editing_answers_in_a_compressed_record_breaks_verify_at_that_record(
        runner: CliRunner, engine: Engine, db: Path) -> None:
    """Decompressed, edited and compressed again from outside the engine (sqlite3, zstd)."""
    records = fill(db, engine, [example_answers(hours_per_year=4000 + i) for i in range(5)])
    target = records[2]
    assert '"hours_per_year": 4002' in target.answers
    replace_in_record(db, target.id, '"hours_per_year": 4002', '"hours_per_year": 9002')
    with AuditStore(db) as store:
        assert '"hours_per_year": 9002' in store.get(target.id).answers

    done = engine_process("audit", "verify", "--audit-db", str(db))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stderr == (f"BROKEN at record {target.id} (after 2 good record(s)): its "
                           "content does not match its hash\n")

    result = run(runner, "audit", "verify", "--audit-db", str(db))
    assert result.exit_code == 1
    assert target.id in result.stderr and "content does not match" in result.stderr


def test_rechained_edit_is_still_caught_at_the_next_record(engine: Engine, db: Path) -> None:
    """Recomputing the edited record's own hash moves the break to the next link."""
    records = fill(db, engine, [example_answers(hours_per_year=4000 + i) for i in range(3)])
    target = records[1]
    replace_in_record(db, target.id, '"hours_per_year": 4001', '"hours_per_year": 9001',
                      rehash=True)
    with AuditStore(db) as store:
        result = verify(store)
    assert not result.ok and result.broken_id == records[2].id
    assert result.count == 2 and "link" in (result.reason or "")


@pytest.mark.parametrize(("column", "value"), [
    ("created_at", "2020-01-01T00:00:00.000+00:00"), ("engine_version", "9.9.9"),
    ("id", "01a22a485fa0ffffffff")])
def test_editing_a_column_the_record_repeats_breaks_verify(engine: Engine, db: Path,
                                                           column: str, value: str) -> None:
    """The columns beside the compressed bytes are checked against them."""
    records = fill(db, engine, [example_answers(hours_per_year=4000 + i) for i in range(3)])
    sql(db, f"UPDATE decisions SET {column} = '{value}' WHERE id = '{records[1].id}'")
    with AuditStore(db) as store:
        result = verify(store)
    assert result.problem == "BROKEN" and result.count == 1
    assert result.broken_id == (value if column == "id" else records[1].id)
    assert result.reason == f"its {column} column does not match its content"


@pytest.mark.slow
@pytest.mark.parametrize(("column", "old", "new"), [
    ("choices", '"deployment": "local"', '"deployment": "cloud"'),
    ("rules_fired", '"usage.cheaper-to-own", ', ""),
])
def test_editing_the_list_columns_breaks_verify(runner: CliRunner, engine: Engine, db: Path,
                                                column: str, old: str, new: str) -> None:
    """choices/rules_fired feed `audit list` filters: an edit there must not go unnoticed."""
    records = fill(db, engine, [example_answers(hours_per_year=5000 + i) for i in range(3)])
    target = records[1]
    assert old in getattr(target, column)
    sql(db, f"UPDATE decisions SET {column} = replace({column}, '{old}', '{new}')"
            f" WHERE id = '{target.id}'")
    result = run(runner, "audit", "verify", "--audit-db", str(db))
    assert result.exit_code == 1
    assert f"BROKEN at record {target.id}" in result.stderr and column in result.stderr


def test_deleting_a_record_breaks_the_chain(engine: Engine, db: Path) -> None:
    records = fill(db, engine, [example_answers(hours_per_year=4000 + i) for i in range(3)])
    sql(db, f"DELETE FROM decisions WHERE id = '{records[1].id}'")
    with AuditStore(db) as store:
        result = verify(store)
    assert result.broken_id == records[2].id


def test_altered_stored_policy_breaks_verify(engine: Engine, db: Path) -> None:
    records = fill(db, engine, [example_answers()])
    sql(db, "UPDATE policies SET content = replace(content, 'weight: 4', 'weight: 9') "
            "WHERE kind = 'rules'")
    with AuditStore(db) as store:
        result = verify(store)
    assert result.broken_id == records[0].id and "policy" in (result.reason or "")


# -- replay -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_scenarios_replay_identically(runner: CliRunner, engine: Engine, db: Path) -> None:
    """Every sixth scenario (a replay is the recommendation again on the stored policy: that
    a decision is the same every time is test_recommend's, on every scenario; that every
    kind of input survives the record is test_replay_inputs')."""
    assert len(SCENARIOS) >= 15
    sample = SCENARIOS[::6]
    records = fill(db, engine, [load_scenario(p).answers for p in sample])
    for path, rec in zip(sample, records, strict=True):
        result = run(runner, "audit", "replay", rec.id, "--audit-db", str(db))
        assert result.exit_code == 0, (path.name, result.output)
        assert result.stdout.strip().endswith("identical"), (path.name, result.stdout)
    result = run(runner, "audit", "replay", records[0].id, "--audit-db", str(db),
                 "--format", "json")
    assert json.loads(result.stdout) == {"id": records[0].id, "identical": True, "diff": []}


@pytest.mark.slow
def test_replay_in_a_fresh_process_is_identical(engine: Engine, db: Path) -> None:
    [rec] = fill(db, engine, [load_scenario(SCENARIOS[-1]).answers])
    done = engine_process("audit", "replay", rec.id, "--audit-db", str(db))
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "identical" in done.stdout


@pytest.mark.slow
def test_tampered_result_fails_replay_with_a_diff(runner: CliRunner, engine: Engine,
                                                  db: Path) -> None:
    [rec] = fill(db, engine, [example_answers()])
    assert '"choice": "local"' in rec.result
    replace_in_record(db, rec.id, '"choice": "local"', '"choice": "cloud"')
    result = run(runner, "audit", "replay", rec.id, "--audit-db", str(db))
    assert result.exit_code == 1
    assert "DIFFERS" in result.stdout
    assert '-      "choice": "cloud"' in result.stdout
    assert '+      "choice": "local"' in result.stdout
    result = run(runner, "audit", "replay", rec.id, "--audit-db", str(db), "--format", "json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["identical"] is False


@pytest.mark.slow
def test_rule_change_replays_on_stored_policy_and_current_names_the_rule(
        runner: CliRunner, tmp_path: Path, db: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), rules)
    result = run(runner, "recommend", "--rules", str(rules), "--answers", str(EXAMPLE),
                 "--audit-db", str(db), "--format", "json")
    assert result.exit_code == 0, result.output
    recorded = json.loads(result.stdout)
    decision_id = recorded["decision_id"]
    assert RULE in recorded["fired"]

    usage = rules / "usage.yaml"
    text = usage.read_text()
    old = "{decision: deployment, option: local, weight: 2}"  # the rule's only preference
    at = text.index(old, text.index(f"id: {RULE}"))
    usage.write_text(text[:at] + "{decision: deployment, option: cloud, weight: 6}"
                     + text[at + len(old):])

    # On its stored policy the record still reproduces exactly (with or without --rules).
    for extra in ([], ["--rules", str(rules)]):
        result = run(runner, "audit", "replay", decision_id, "--audit-db", str(db), *extra)
        assert result.exit_code == 0, result.output
        assert "identical" in result.stdout
    done = engine_process("audit", "replay", decision_id, "--audit-db", str(db))
    assert done.returncode == 0 and "identical" in done.stdout, (done.stdout, done.stderr)

    # On today's policy: a fresh process (no in-process engine cache) names the edited rule.
    done = engine_process("audit", "replay", decision_id, "--current", "--rules", str(rules),
                          "--audit-db", str(db))
    assert done.returncode == 0, done.stderr
    assert f"rules edited since the record: {RULE}" in done.stdout

    # The same through the in-process runner, as JSON. load_engine caches per file mtime;
    # make sure the edit is visible even if it landed in the same clock tick as the copy.
    os.utime(usage, ns=(usage.stat().st_atime_ns, usage.stat().st_mtime_ns + 10**9))
    result = run(runner, "audit", "replay", decision_id, "--current", "--rules", str(rules),
                 "--audit-db", str(db), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["rules_edited"] == [RULE]
    assert data["rules_added"] == [] and data["rules_removed"] == []
    for change in data["changes"]:  # any axis that flipped is blamed on the edited rule
        assert RULE in change["rules"], change

    # The bundled (unchanged) policy gives the same decisions.
    result = run(runner, "audit", "replay", decision_id, "--current", "--audit-db", str(db))
    assert result.exit_code == 0
    assert "same decisions" in result.stdout and "edited" not in result.stdout


@pytest.mark.slow
def test_current_replay_names_the_rule_behind_a_flipped_axis(runner: CliRunner,
                                                             tmp_path: Path) -> None:
    """Turn the rule around (prefer cloud, strongly): deployment flips and is blamed on it."""
    db = tmp_path / "flip.sqlite3"
    rules = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), rules)
    result = run(runner, "recommend", "--rules", str(rules), "--answers", str(EXAMPLE),
                 "--audit-db", str(db), "--format", "json")
    recorded = json.loads(result.stdout)
    assert recorded["decisions"]["deployment"]["choice"] == "local"
    usage = rules / "usage.yaml"
    text = usage.read_text()
    effect = "prefer: {decision: deployment, option: local, weight: 2}"
    at = text.index(effect, text.index(f"id: {RULE}"))
    usage.write_text(text[:at] + "prefer: {decision: deployment, option: cloud, weight: 20}"
                     + text[at + len(effect):])
    os.utime(usage, ns=(usage.stat().st_atime_ns, usage.stat().st_mtime_ns + 10**9))

    result = run(runner, "audit", "replay", recorded["decision_id"], "--audit-db", str(db))
    assert result.exit_code == 0 and "identical" in result.stdout
    result = run(runner, "audit", "replay", recorded["decision_id"], "--current", "--rules",
                 str(rules), "--audit-db", str(db), "--format", "json")
    data = json.loads(result.stdout)
    assert data["rules_edited"] == [RULE]
    [deployment] = [c for c in data["changes"] if c["axis"] == "deployment"]
    assert (deployment["before"], deployment["after"]) == ("local", "cloud")
    assert RULE in deployment["rules"]
    assert data["hardware"]["before"] != data["hardware"]["after"]
    result = run(runner, "audit", "replay", recorded["decision_id"], "--current", "--rules",
                 str(rules), "--audit-db", str(db))
    assert "deployment: local → cloud" in result.stdout and RULE in result.stdout


def test_replay_unknown_id_is_one_error(runner: CliRunner, engine: Engine, db: Path) -> None:
    fill(db, engine, [example_answers()])
    line = one_error_line(run(runner, "audit", "replay", "ffffffffffff", "--audit-db", str(db)))
    assert "no decision 'ffffffffffff'" in line


# -- list, show, export ----------------------------------------------------------------------
@pytest.fixture
def varied(engine: Engine, db: Path) -> list[Record]:
    """Decisions with different choices and rules: the first scenarios, then a few more."""
    return fill(db, engine, [load_scenario(p).answers for p in SCENARIOS[:6]])


def choices_of(rec: Record) -> dict[str, str]:
    return json.loads(rec.choices)  # type: ignore[no-any-return]


def list_json(runner: CliRunner, db: Path, *args: str) -> list[str]:
    result = run(runner, "audit", "list", "--audit-db", str(db), "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return [item["id"] for item in json.loads(result.stdout)]


def test_list_all_and_limit(runner: CliRunner, db: Path, varied: list[Record]) -> None:
    ids = [r.id for r in varied]
    assert list_json(runner, db) == ids
    assert list_json(runner, db, "--limit", "2") == ids[:2]
    result = run(runner, "audit", "list", "--audit-db", str(db), "--format", "json")
    first = json.loads(result.stdout)[0]
    assert {k: v for k, v in first.items() if k not in ("pick", "per_year_usd")} == (
        varied[0].summary())
    assert first["pick"] and first["per_year_usd"] > 0  # the pick and its cost, read
    assert run(runner, "audit", "list", "--audit-db", str(db), "--limit", "0").exit_code == 2


def test_list_since_until(runner: CliRunner, db: Path, varied: list[Record]) -> None:
    ids = [r.id for r in varied]
    pivot = varied[3].created_at
    assert list_json(runner, db, "--since", pivot) == [r.id for r in varied
                                                       if r.created_at >= pivot]
    assert list_json(runner, db, "--until", pivot) == [r.id for r in varied
                                                       if r.created_at < pivot]
    assert varied[3].id in list_json(runner, db, "--since", pivot)
    assert varied[3].id not in list_json(runner, db, "--until", pivot)
    assert list_json(runner, db, "--since", "2000-01-01") == ids
    assert list_json(runner, db, "--until", "2000-01-01") == []
    assert list_json(runner, db, "--since", "2999-01-01") == []
    assert list_json(runner, db, "--since", "2000-01-01", "--until", "2999-01-01") == ids
    day = varied[0].created_at[:10]
    assert list_json(runner, db, "--since", day, "--until", "2999-01-01") == ids


def test_list_choice_and_rule(runner: CliRunner, db: Path, varied: list[Record]) -> None:
    local = [r.id for r in varied if choices_of(r).get("deployment") == "local"]
    cloud = [r.id for r in varied if choices_of(r).get("deployment") == "cloud"]
    assert local and cloud  # the fixture really varies
    assert list_json(runner, db, "--choice", "deployment=local") == local
    assert list_json(runner, db, "--choice", "deployment=cloud") == cloud
    assert list_json(runner, db, "--choice", "deployment=nowhere") == []

    fired = [r.id for r in varied if RULE in json.loads(r.rules_fired)]
    assert fired and len(fired) < len(varied)
    assert list_json(runner, db, "--rule", RULE) == fired
    assert list_json(runner, db, "--rule", "no.such-rule") == []
    both = [i for i in fired if i in local]
    assert list_json(runner, db, "--rule", RULE, "--choice", "deployment=local") == both
    assert list_json(runner, db, "--rule", RULE, "--limit", "1") == fired[:1]

    result = run(runner, "audit", "list", "--audit-db", str(db), "--choice", "deployment")
    assert result.exit_code == 2 and "AXIS=OPTION" in result.output


def test_list_text(runner: CliRunner, db: Path, varied: list[Record]) -> None:
    result = run(runner, "audit", "list", "--audit-db", str(db))
    assert result.exit_code == 0, result.output
    assert f"{len(varied)} decision(s)" in result.stdout
    for rec in varied:
        assert rec.id in result.stdout
    assert "deployment=local" in result.stdout
    result = run(runner, "audit", "list", "--audit-db", str(db), "--choice", "deployment=cloud")
    assert "deployment=local" not in result.stdout


def test_show_json_text_markdown(runner: CliRunner, db: Path, varied: list[Record]) -> None:
    rec = varied[0]
    result = run(runner, "audit", "show", rec.id, "--audit-db", str(db), "--format", "json")
    assert result.exit_code == 0
    assert result.stdout == rec.result
    result = run(runner, "audit", "show", rec.id[:14], "--audit-db", str(db))
    assert result.exit_code == 0, result.output
    assert f"rules {rec.rules_hash}" in result.stdout
    assert f"catalog {rec.catalog_hash}" in result.stdout and f"hash {rec.hash}" in result.stdout
    assert rec.created_at in result.stdout
    result = run(runner, "audit", "show", rec.id, "--audit-db", str(db), "--format", "markdown")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"<!-- recorded {rec.created_at} UTC")
    assert rec.hash in result.stdout.splitlines()[0]
    one_error_line(run(runner, "audit", "show", "0000", "--audit-db", str(db)))


def test_export_jsonl_and_csv(runner: CliRunner, db: Path, varied: list[Record]) -> None:
    result = run(runner, "audit", "export", "--audit-db", str(db))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == len(varied)
    for line, rec in zip(lines, varied, strict=True):
        item = json.loads(line)
        assert item["id"] == rec.id and item["hash"] == rec.hash
        assert item["prev_hash"] == rec.prev_hash and item["seq"] == rec.seq
        assert item["result"] == rec.result_data
        assert item["answers"] == json.loads(rec.answers)
        assert item["choices"] == choices_of(rec)

    result = run(runner, "audit", "export", "--audit-db", str(db), "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.reader(io.StringIO(result.stdout)))
    header, body = rows[0], rows[1:]
    assert header[:3] == ["seq", "id", "created_at"] and "hash" in header
    assert len(body) == len(varied)
    col = header.index("deployment")
    for row, rec in zip(body, varied, strict=True):
        assert row[1] == rec.id
        assert row[col] == choices_of(rec).get("deployment", "")


# -- files that are not (usable) audit stores --------------------------------------------------
REFUSING = (("audit", "verify"), ("audit", "list"), ("audit", "export"),
            ("recommend", "--answers", str(EXAMPLE)))


def assert_refused_untouched(runner: CliRunner, path: Path, expect: str) -> None:
    before = snapshot(path)
    for args in REFUSING:
        line = one_error_line(run(runner, *args, "--audit-db", str(path)))
        assert str(path) in line and expect in line, line
        assert snapshot(path) == before, args
    with pytest.raises(AuditError, match=expect or None):
        AuditStore(path)
    assert snapshot(path) == before


def test_newer_schema_is_refused_untouched(runner: CliRunner, engine: Engine, db: Path) -> None:
    fill(db, engine, [example_answers()])
    sql(db, "PRAGMA user_version = 99")
    assert not siblings(db)
    assert_refused_untouched(runner, db, "schema version 99 is newer")
    done = engine_process("audit", "verify", "--audit-db", str(db))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "upgrade gpu-advisor" in done.stderr


def test_newer_schema_in_rollback_mode_is_not_switched_to_wal(runner: CliRunner,
                                                              db: Path) -> None:
    sql(db, "CREATE TABLE decisions (x); PRAGMA user_version = 7")
    assert_refused_untouched(runner, db, "schema version 7 is newer")


def test_text_file_is_refused_untouched(runner: CliRunner, db: Path) -> None:
    db.write_text("these are my notes, not a database\n")
    assert_refused_untouched(runner, db, "not an SQLite database")


def test_foreign_sqlite_database_is_refused_untouched(runner: CliRunner, db: Path) -> None:
    sql(db, "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL);"
            " INSERT INTO invoices (total) VALUES (12.5)")
    assert_refused_untouched(runner, db, "not a gpu-advisor audit store")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("SELECT total FROM invoices").fetchall() == [(12.5,)]
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["truncated-half", "truncated-header", "garbage-page-1"])
def test_corrupt_store_is_refused_untouched(runner: CliRunner, engine: Engine, db: Path,
                                            damage: str) -> None:
    fill(db, engine, [example_answers(hours_per_year=4000 + i) for i in range(3)])
    assert not siblings(db)
    data = db.read_bytes()
    assert len(data) > 8192
    damaged = {"truncated-half": data[:len(data) // 2],
               "truncated-header": data[:60],
               "garbage-page-1": data[:100] + b"\xff" * 3996 + data[4096:]}[damage]
    db.write_bytes(damaged)
    assert_refused_untouched(runner, db, "")
    line = one_error_line(run(runner, "audit", "verify", "--audit-db", str(db)))
    assert "corrupt" in line or "not a usable" in line


def test_directory_is_refused(runner: CliRunner, tmp_path: Path) -> None:
    line = one_error_line(run(runner, "audit", "verify", "--audit-db", str(tmp_path)))
    assert "is a directory" in line


# -- several processes, and kill -9 ------------------------------------------------------------
def writer(db: Path, worker: int, count: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WRITER), str(db), str(worker), str(count),
                             *extra], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_eight_processes_twenty_each_one_valid_chain(runner: CliRunner, tmp_path: Path,
                                                    db: Path,
                                                    processes: list[subprocess.Popen[str]],
                                                    ) -> None:
    workers, each = 8, 20
    go = tmp_path / "go"
    ready = [tmp_path / f"ready-{k}" for k in range(workers)]
    # The store does not exist yet: all eight create/migrate it at the same moment.
    processes += [writer(db, k, each, "--go", str(go), "--ready", str(ready[k]))
                  for k in range(workers)]
    wait_for(lambda: all(r.exists() for r in ready) or any(
        p.poll() is not None for p in processes), "writers to load the engine", 60)
    go.touch()
    for proc in processes:
        _, err = proc.communicate(timeout=600)  # catches a hang only
        assert proc.returncode == 0, err

    result = run(runner, "audit", "verify", "--audit-db", str(db))
    assert result.exit_code == 0, result.output
    assert f"{workers * each} record(s)" in result.stdout
    with AuditStore(db) as store:
        records = list(store.iter_all())
    assert len(records) == workers * each
    assert len({r.id for r in records}) == len({r.hash for r in records}) == workers * each
    links = [r.prev_hash for r in records]
    assert links == ["0" * 64] + [r.hash for r in records[:-1]]
    hours = sorted(json.loads(r.answers)["hours_per_year"] for r in records)
    assert hours == sorted(1000 + k * 100 + i for k in range(workers) for i in range(each))
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT count(*) FROM policies").fetchone()[0] == 2
    finally:
        conn.close()
    done = engine_process("audit", "verify", "--audit-db", str(db))
    assert done.returncode == 0 and f"{workers * each} record(s)" in done.stdout, done.stderr


@pytest.mark.slow
def test_kill_9_mid_write_leaves_a_store_that_opens_and_verifies(
        runner: CliRunner, db: Path, processes: list[subprocess.Popen[str]]) -> None:
    total = 0
    for round_ in range(3):  # many more rounds, of a lighter writer: test_audit_faults
        proc = writer(db, round_, 0)
        processes.append(proc)
        target = total + 3 + round_ % 4

        def enough(proc: subprocess.Popen[str] = proc, target: int = target) -> bool:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                return read_count(db) >= target
            except sqlite3.Error:  # not created/migrated yet
                return False

        wait_for(enough, f"round {round_} to write {target} records")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL

        with AuditStore(db) as store:
            result = verify(store)
            assert result.ok, (round_, result)
            assert result.count >= target
            total = result.count
    result = run(runner, "audit", "verify", "--audit-db", str(db))
    assert result.exit_code == 0 and f"{total} record(s)" in result.stdout
    with AuditStore(db) as store:  # a killed store still takes new records
        record(store, load_engine(), example_answers())
        assert verify(store).count == total + 1
