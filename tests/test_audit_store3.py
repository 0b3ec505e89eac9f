"""Audit store schema 3 on real SQLite files: stores of the unreleased schemas 1 and 2
(tests/helpers/schema2_writer.py) are refused in one line and left alone; tampering
with a compressed body, a record's header or a dictionary names the first broken record;
verify hashes the stored bytes; and what a new user sees of the store (first-run notes,
an empty list, unrecorded decisions, short ids)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
import zstandard
from click.testing import CliRunner, Result
from helpers import raw_audit
from helpers.schema2_writer import Schema2Store

from engine.answers.model import validate_answers
from engine.audit.chain import verify
from engine.audit.key import AuditKey
from engine.audit.record import digest
from engine.audit.store import AuditStore
from engine.cli import cli
from engine.decide.engine import Engine, load_engine, new_decision_id

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"
SECRET = "k3y-for-tests-0123456789abcdef"


@pytest.fixture(autouse=True)
def no_audit_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GPU_ADVISOR_AUDIT_KEY", "GPU_ADVISOR_AUDIT_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


@pytest.fixture(scope="module")
def results(engine: Engine) -> list[str]:
    """Five distinct real decisions (the examples, two with other hours), as JSON texts."""
    answer_sets = [yaml.safe_load(p.read_text()) for p in EXAMPLES]
    answer_sets += [{**answer_sets[0], "hours_per_year": h} for h in (800, 6000)]
    return [engine.recommend(validate_answers(a, engine.catalog)).to_json()
            for a in answer_sets]


class _Result:
    def __init__(self, text: str) -> None:
        self.text = text

    def to_json(self) -> str:
        return self.text


def run(runner: CliRunner, *args: str) -> Result:
    result = runner.invoke(cli, list(args), prog_name="gpu-advisor")
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False,
                          env={**os.environ, **(env or {})})


def user_version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def columns(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[1] for row in conn.execute("PRAGMA table_info(decisions)")]
    finally:
        conn.close()


# -- stores of the unreleased schemas 1 and 2 are refused, untouched ----------------------------
@pytest.mark.parametrize("schema", [1, 2])
@pytest.mark.parametrize("command", [
    ("audit", "verify"), ("audit", "list"),
    ("recommend", "--answers", str(EXAMPLE), "--format", "json")])
def test_a_store_of_schema_1_or_2_is_refused_in_one_line_and_left_alone(
        engine: Engine, results: list[str], tmp_path: Path, schema: int,
        command: tuple[str, ...]) -> None:
    db = tmp_path / "old.sqlite3"
    old = Schema2Store(db, schema=schema)
    old.append(results[0], engine.rulebook.texts, engine.catalog.texts)
    old.close()
    before = db.read_bytes()
    done = process(*command, "--audit-db", str(db))
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"error: {db}: audit store of schema {schema}, written by a development version of "
        "gpu-advisor; this version reads schema 3 only — export it with that version or "
        "start a new store\n")
    assert db.read_bytes() == before and user_version(db) == schema
    assert "result" in columns(db)


# -- verify hashes what is stored ----------------------------------------------------------------
@pytest.fixture
def db(engine: Engine, results: list[str], tmp_path: Path) -> Path:
    path = tmp_path / "audit.sqlite3"
    with AuditStore(path) as store:
        for text in results:
            store.append(_Result(text), engine.rulebook.texts, engine.catalog.texts)
    return path


def ids(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [str(r[0]) for r in conn.execute("SELECT id FROM decisions ORDER BY seq")]
    finally:
        conn.close()


def test_verify_neither_serialises_nor_parses_a_result(db: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Only each record's header line is read; the result is hashed as stored."""
    parsed: list[int] = []
    serialised: list[int] = []
    real_loads, real_dumps = json.loads, json.dumps

    def loads(text: str | bytes, **kwargs: Any) -> Any:
        parsed.append(len(text))
        return real_loads(text, **kwargs)

    def dumps(value: Any, **kwargs: Any) -> str:
        text = real_dumps(value, **kwargs)
        serialised.append(len(text))
        return text

    with AuditStore(db, create=False) as store:
        monkeypatch.setattr(json, "loads", loads)
        monkeypatch.setattr(json, "dumps", dumps)
        result = verify(store)
    assert result.ok and result.count == 5
    # header lines and the index columns they hold, never a ~100 kB result; the two stored
    # policies (rules, catalog) are read once each
    assert len([n for n in parsed if n > 4096]) == 2 and max(serialised) < 4096


def verify_line(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["audit", "verify", "--audit-db", str(path)])
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr.strip()


def broken(record_id: str, good: int, reason: str) -> tuple[int, str]:
    return 1, f"BROKEN at record {record_id} (after {good} good record(s)): {reason}"


def edit_row(path: Path, statement: str, *params: Any) -> None:
    conn = sqlite3.connect(path)
    conn.execute(statement, params)
    conn.commit()
    conn.close()


# -- tampering with a compressed body ------------------------------------------------------------
def test_a_flipped_byte_in_a_compressed_body_is_the_first_broken_record(db: Path) -> None:
    target = ids(db)[2]
    conn = sqlite3.connect(db)
    body = bytearray(conn.execute("SELECT body FROM decisions WHERE id = ?", (target,))
                     .fetchone()[0])
    conn.close()
    body[len(body) // 2] ^= 0xFF
    edit_row(db, "UPDATE decisions SET body = ? WHERE id = ?", bytes(body), target)
    code, line = verify_line(db)
    assert code == 1 and line.startswith(f"BROKEN at record {target} (after 2 good record(s)): ")
    assert line.endswith(("its content does not match its hash", ")"))


@pytest.mark.parametrize(("value", "reason"), [
    ("text, not a blob", "its stored body is not a blob"),
    (b"not zstd at all", "its stored body is not valid zstd (error when determining content "
                         "size)"),
    (zstandard.ZstdCompressor().compress(b"{}"), "its content is not a record"),
])
def test_a_replaced_body_is_the_first_broken_record(db: Path, value: Any, reason: str) -> None:
    target = ids(db)[1]
    edit_row(db, "UPDATE decisions SET body = ?, dictionary = NULL WHERE id = ?", value, target)
    code, line = verify_line(db)
    if reason == "its content is not a record":
        reason = "its content does not match its hash"  # the hash is checked first
    assert (code, line) == broken(target, 1, reason)


def test_an_unreadable_body_is_one_error_line_for_show_and_replay(runner: CliRunner,
                                                                  db: Path) -> None:
    target = ids(db)[1]
    edit_row(db, "UPDATE decisions SET body = x'00' WHERE id = ?", target)
    expected = (f"error: {db}: record {target} cannot be read (its stored body is not valid "
                "zstd (error when determining content size)); run `gpu-advisor audit verify`")
    for command in ("show", "replay"):
        result = run(runner, "audit", command, target, "--audit-db", str(db))
        assert (result.exit_code, result.stdout, result.stderr.strip()) == (2, "", expected)
    listed = run(runner, "audit", "list", "--audit-db", str(db))  # columns only: still listed
    assert listed.exit_code == 0 and target in listed.stdout


# -- tampering with a record's header --------------------------------------------------------------
def _reframe(path: Path, position: int, rehash: bool, **header: Any) -> str:
    conn = sqlite3.connect(path)
    row = raw_audit.rows(conn)[position - 1]
    data = raw_audit.reframed(raw_audit.content(conn, row), **header)
    new_hash = digest(data, "sha256") if rehash else row["hash"]
    conn.execute("UPDATE decisions SET body = ?, hash = ? WHERE seq = ?",
                 (raw_audit.packed(conn, row, data), new_hash, row["seq"]))
    conn.commit()
    conn.close()
    return str(row["id"])


def test_an_edited_header_is_the_first_broken_record(db: Path) -> None:
    target = _reframe(db, 3, rehash=False, created_at="2020-01-01T00:00:00.000+00:00")
    assert verify_line(db) == broken(target, 2, "its content does not match its hash")


def test_a_rehashed_header_edit_breaks_the_next_link(db: Path) -> None:
    _reframe(db, 3, rehash=True, choices={"deployment": "cloud"})
    assert verify_line(db) == broken(
        ids(db)[2], 2, "its choices/rules_fired columns do not match its result")


def test_a_header_whose_columns_disagree_is_the_first_broken_record(db: Path) -> None:
    """Rehashed, a header that names another engine version than its column."""
    target = _reframe(db, 2, rehash=True, engine_version="0.0.1")
    edit_row(db, "UPDATE decisions SET prev_hash = (SELECT hash FROM decisions WHERE seq = 2)"
                 " WHERE seq = 3")
    assert verify_line(db) == broken(target, 1, "its engine_version column does not match "
                                                "its content")


# -- tampering with a dictionary ------------------------------------------------------------------
@pytest.mark.parametrize(("statement", "reason"), [
    ("DELETE FROM dictionaries", "its dictionary 1 is missing"),
    ("DROP TABLE dictionaries", "its dictionary 1 cannot be read (no such table: dictionaries)"),
    ("UPDATE dictionaries SET content = x'00'",
     "its stored dictionary is not valid zstd (error when determining content size)"),
    ("UPDATE dictionaries SET content = 'text'", "its stored dictionary is not a blob"),
])
def test_a_broken_or_absent_dictionary_names_the_first_record(runner: CliRunner, db: Path,
                                                              statement: str,
                                                              reason: str) -> None:
    first = ids(db)[0]
    edit_row(db, statement)
    assert verify_line(db) == broken(first, 0, reason)
    shown = run(runner, "audit", "show", first, "--audit-db", str(db))
    assert (shown.exit_code, shown.stderr.strip()) == (
        2, f"error: {db}: record {first} cannot be read ({reason}); run `gpu-advisor audit "
           "verify`")


def test_a_swapped_dictionary_is_caught_by_the_hash(engine: Engine, db: Path) -> None:
    """Valid zstd of other bytes: every record it decompresses no longer matches its hash."""
    other = zstandard.ZstdCompressor().compress(b'{"answers": "something else"}' * 100)
    edit_row(db, "UPDATE dictionaries SET content = ?", other)
    assert verify_line(db)[1].startswith(f"BROKEN at record {ids(db)[0]} (after 0 good")
    done = process("audit", "verify", "--audit-db", str(db))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"BROKEN at record {ids(db)[0]} (after 0 good record(s)): ")
    assert len(done.stderr.splitlines()) == 1


# -- what a new user sees ------------------------------------------------------------------
NOTE_STORE = ("note: created the audit store {}; every recommendation is recorded there "
              "(--no-audit to skip, --audit-db or GPU_ADVISOR_AUDIT_DB to move it)")


def test_the_run_that_creates_the_store_says_where_once(runner: CliRunner,
                                                        tmp_path: Path) -> None:
    store = tmp_path / "new" / "audit.sqlite3"
    first = run(runner, "recommend", "--answers", str(EXAMPLE), "--audit-db", str(store))
    assert first.exit_code == 0
    assert first.stderr.splitlines() == [NOTE_STORE.format(store)]
    again = run(runner, "recommend", "--answers", str(EXAMPLE), "--audit-db", str(store))
    assert again.exit_code == 0 and again.stderr == ""


def test_the_run_that_creates_the_cache_says_where_once(tmp_path: Path) -> None:
    cache, store = tmp_path / "cache", tmp_path / "audit.sqlite3"
    env = {"GPU_ADVISOR_CACHE_DIR": str(cache), "GPU_ADVISOR_AUDIT_DB": str(store)}
    env.pop("GPU_ADVISOR_NO_CACHE", None)
    first = process("recommend", "--answers", str(EXAMPLE), "--format", "json", env=env)
    assert first.returncode == 0, first.stderr
    assert first.stderr.splitlines() == [
        f"note: created the policy cache {cache} (safe to delete; GPU_ADVISOR_NO_CACHE=1 "
        "turns it off, GPU_ADVISOR_CACHE_DIR moves it)", NOTE_STORE.format(store)]
    again = process("recommend", "--answers", str(EXAMPLE), "--format", "json", env=env)
    assert again.returncode == 0 and again.stderr == ""


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("state", ["missing", "empty"])
def test_audit_list_on_a_missing_or_empty_store(runner: CliRunner, tmp_path: Path, fmt: str,
                                                state: str) -> None:
    store = tmp_path / "audit.sqlite3"
    if state == "empty":
        AuditStore(store).close()
    result = run(runner, "audit", "list", "--audit-db", str(store), "--format", fmt)
    assert result.exit_code == 0 and result.stderr == ""
    expected = "[]\n" if fmt == "json" else f"no decisions recorded yet (store: {store})\n"
    assert result.stdout == expected
    assert store.exists() == (state == "empty")  # listing creates nothing


def test_audit_list_on_the_default_store_before_any_run(tmp_path: Path) -> None:
    store = tmp_path / "data" / "audit.sqlite3"
    done = process("audit", "list", env={"GPU_ADVISOR_AUDIT_DB": str(store)})
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"no decisions recorded yet (store: {store})\n", "")


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_no_audit_prints_no_decision_id(runner: CliRunner, isolated_audit_store: Path,
                                        fmt: str) -> None:
    result = run(runner, "recommend", "--answers", str(EXAMPLE), "--no-audit", "--format", fmt)
    assert result.exit_code == 0 and result.stderr == ""
    assert "decision not recorded (--no-audit) · rules " in result.stdout
    assert not re.search(r"decision [0-9a-f]{16}", result.stdout)
    assert not isolated_audit_store.exists()


def test_recorded_ids_are_short_and_a_few_digits_name_one(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    store = tmp_path / "audit.sqlite3"
    result = run(runner, "recommend", "--answers", str(EXAMPLE), "--audit-db", str(store))
    found = re.search(r"decision ([0-9a-f]+) · rules", result.stdout)
    assert found and len(found[1]) == 16
    shown = run(runner, "audit", "show", found[1][:6], "--audit-db", str(store),
                "--format", "json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["decision_id"] == found[1]


def test_ids_differ_from_their_first_digits() -> None:
    made = [new_decision_id() for _ in range(200)]
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in made)
    assert len({i[:4] for i in made}) > 150  # a time prefix would give one or two


@pytest.fixture
def mixed_ids(engine: Engine, results: list[str], tmp_path: Path) -> Path:
    """Records under old (time-first) ids and new ones."""
    path = tmp_path / "audit.sqlite3"
    names = ["01a22df3aa0000000001", "01a22df3bb0000000002", "3f9c2a0000000001",
             "3f9d000000000002", "a_b%c"]
    with AuditStore(path) as store:
        for name, text in zip(names, results, strict=True):
            data = {**json.loads(text), "decision_id": name}
            store.append(_Result(json.dumps(data)), engine.rulebook.texts,
                         engine.catalog.texts)
    return path


@pytest.mark.parametrize(("given", "found"), [
    ("01a22df3aa0000000001", "01a22df3aa0000000001"), ("01a22df3b", "01a22df3bb0000000002"),
    ("3f9c", "3f9c2a0000000001"), ("3F9D", "3f9d000000000002"), ("a_b%c", "a_b%c")])
def test_unique_prefixes_and_old_ids_resolve(runner: CliRunner, mixed_ids: Path, given: str,
                                             found: str) -> None:
    result = run(runner, "audit", "show", given, "--audit-db", str(mixed_ids), "--format",
                 "json")
    assert result.exit_code == 0 and json.loads(result.stdout)["decision_id"] == found


@pytest.mark.parametrize(("given", "line"), [
    ("01a22df3", "error: ID: '01a22df3' matches several decisions (01a22df3aa0000000001, "
                 "01a22df3bb0000000002); give more of the id"),
    ("3f9", "error: ID: '3f9' matches several decisions (3f9c2a0000000001, 3f9d000000000002); "
            "give more of the id"),
    ("a%", "error: ID: no decision 'a%' in {db}"),
    ("_", "error: ID: no decision '_' in {db}"),
])
def test_an_ambiguous_or_unknown_prefix_is_one_line(runner: CliRunner, mixed_ids: Path,
                                                    given: str, line: str) -> None:
    result = run(runner, "audit", "show", given, "--audit-db", str(mixed_ids))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.strip() == line.format(db=mixed_ids)


def test_keyed_compressed_records_verify_with_their_key(engine: Engine, results: list[str],
                                                        tmp_path: Path) -> None:
    path = tmp_path / "keyed.sqlite3"
    key = AuditKey(SECRET.encode(), "test")
    with AuditStore(path, key=key) as store:
        for text in results:
            store.append(_Result(text), engine.rulebook.texts, engine.catalog.texts)
    with AuditStore(path, create=False) as store:
        result = verify(store, key=key)
    assert result.ok and result.keyed == len(results)
