"""Attacks on the audit chain that a walk alone cannot see, on real SQLite files: deleting
the tail (one record, 100, all), editing a record and re-chaining the rest, forging records,
swapping a policy with a full rewrite. Each is caught by ``audit verify --since`` with the
head printed before it, or (for rewrites by someone without it) by the audit key."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import raw_audit
from helpers.fast_audit_writer import AppendedResult

from engine.answers.model import validate_answers
from engine.audit.chain import Head, Verification, verify
from engine.audit.key import AuditKey
from engine.audit.record import digest
from engine.audit.store import (
    GENESIS,
    KEYED,
    PLAIN,
    AuditStore,
    PolicyMismatch,
    policy_hash,
)
from engine.cli import cli
from engine.decide.engine import Engine, load_engine

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"
RECORDS = 120
KEY = "k3y-for-tests-0123456789abcdef"
OTHER_KEY = "an0ther-key-0123456789abcdef"
BAD_HEAD = ("error: Invalid value for '--since': expected a head as `audit verify` prints it, "
            "COUNT:HASH with 16 to 64 hex digits (e.g. 1234:9f86d081884c7d65), got {!r} "
            "(see gpu-advisor audit verify --help)")
NO_KEY = ("error: {db}: {keyed} of {count} record(s) are keyed (HMAC-SHA256) and no key was "
          "given, so their MACs were not checked (links intact); set GPU_ADVISOR_AUDIT_KEY or "
          "GPU_ADVISOR_AUDIT_KEY_FILE, or pass --key-file")


@pytest.fixture(autouse=True)
def no_key_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GPU_ADVISOR_AUDIT_KEY", "GPU_ADVISOR_AUDIT_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


def write(path: Path, engine: Engine, count: int, key: AuditKey | None = None,
          start: int = 0) -> None:
    """Append ``count`` copies of one real decision, each under its own id."""
    answers = validate_answers({"hours_per_year": 4321}, engine.catalog)
    data = json.loads(engine.recommend(answers).to_json())
    with AuditStore(path, key=key) as store:
        for i in range(start, start + count):
            store.append(AppendedResult({**data, "decision_id": f"r{i:05d}"}),
                         engine.rulebook.texts, engine.catalog.texts)


@pytest.fixture(scope="module")
def plain_store(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plain") / "audit.sqlite3"
    write(path, engine, RECORDS)
    return path


@pytest.fixture(scope="module")
def keyed_store(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("keyed") / "audit.sqlite3"
    write(path, engine, 10, key=AuditKey(KEY.encode(), "test"))
    return path


@pytest.fixture
def db(plain_store: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(plain_store, tmp_path / "audit.sqlite3"))


@pytest.fixture
def keyed_db(keyed_store: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(keyed_store, tmp_path / "keyed.sqlite3"))


def run(runner: CliRunner, *args: str) -> Result:
    result = runner.invoke(cli, list(args), prog_name="gpu-advisor")
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def head_of(runner: CliRunner, db: Path, *extra: str) -> str:
    """The head `audit verify` prints (its last word), after checking the whole line."""
    result = run(runner, "audit", "verify", "--audit-db", str(db), *extra)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ok: ") and result.stderr == ""
    return result.stdout.split()[-1]


def failed(result: Result | subprocess.CompletedProcess[str], code: int = 1) -> str:
    """The one line a failed verify printed on stderr (nothing on stdout)."""
    exit_code = result.exit_code if isinstance(result, Result) else result.returncode
    assert exit_code == code, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- the attacker: plain sqlite3 and zstd on the file, and the public record recipe --------------
class Attacker:
    """Edits a store the way anyone with write access to the file can."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("BEGIN IMMEDIATE")

    def __enter__(self) -> Attacker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.conn.execute("COMMIT")
        self.conn.close()

    def rows(self) -> list[dict[str, Any]]:
        return raw_audit.rows(self.conn)

    def delete_last(self, count: int) -> None:
        self.conn.execute("DELETE FROM decisions WHERE seq > (SELECT max(seq) FROM decisions)"
                          " - ?", (count,))

    def edit(self, position: int, old: str, new: str) -> None:
        row = self.rows()[position - 1]
        data = raw_audit.content(self.conn, row)
        assert old.encode() in data
        self._set_body(row, data.replace(old.encode(), new.encode()))

    def _set_body(self, row: dict[str, Any], data: bytes) -> None:
        self.conn.execute("UPDATE decisions SET body = ? WHERE seq = ?",
                          (raw_audit.packed(self.conn, row, data), row["seq"]))

    def rechain(self, position: int, key: AuditKey | None = None,
                keep_kind: bool = False) -> None:
        """Recompute every link and hash from ``position`` on: plain sha256 (the attacker
        has no key), or under ``key`` (another key), or, with ``keep_kind``, claiming the
        original key without having it."""
        rows = self.rows()
        previous = rows[position - 2]["hash"] if position > 1 else GENESIS
        for row in rows[position - 1:]:
            row["prev_hash"] = previous
            if key is not None:
                row.update(hash_kind=KEYED, key_id=key.id)
            elif not keep_kind:
                row.update(hash_kind=PLAIN, key_id=None)
            data = raw_audit.reframed(raw_audit.content(self.conn, row),
                                      prev_hash=previous, hash_kind=row["hash_kind"],
                                      key_id=row["key_id"])
            row["hash"] = digest(data, row["hash_kind"],
                                 AuditKey(b"x" * 32, "attacker") if keep_kind else key)
            self.conn.execute("UPDATE decisions SET prev_hash = ?, hash = ?, hash_kind = ?,"
                              " key_id = ?, body = ? WHERE seq = ?",
                              (row["prev_hash"], row["hash"], row["hash_kind"], row["key_id"],
                               raw_audit.packed(self.conn, row, data), row["seq"]))
            previous = row["hash"]

    def forge_append(self, key: AuditKey | None = None) -> None:
        """A new last record copied from the current one, linked and hashed like a real one."""
        row = self.rows()[-1]
        row.pop("seq")
        row.update(id="forged-" + row["id"], prev_hash=row["hash"])
        if key is not None:
            row.update(hash_kind=KEYED, key_id=key.id)
        data = raw_audit.reframed(raw_audit.content(self.conn, row), id=row["id"],
                                  prev_hash=row["prev_hash"], hash_kind=row["hash_kind"],
                                  key_id=row["key_id"])
        row["body"] = raw_audit.packed(self.conn, row, data)
        if key is None and row["hash_kind"] == KEYED:  # no key: a keyed one with junk
            row["hash"] = "f" * 64
        else:
            row["hash"] = digest(data, row["hash_kind"], key)
        self._insert(row)

    def _insert(self, row: dict[str, Any]) -> None:
        names = ", ".join(row)
        self.conn.execute(f"INSERT INTO decisions ({names}) VALUES "
                          f"({', '.join('?' * len(row))})", list(row.values()))

    def swap_policy(self, old: str, new: str) -> None:
        """Edit the stored rules, store them under their new hash, point every record (and
        its result) at it, drop the original, and re-chain everything."""
        original, content = self.conn.execute(
            "SELECT hash, content FROM policies WHERE kind = 'rules'").fetchone()
        texts = {name: text.replace(old, new) for name, text in json.loads(content).items()}
        swapped = policy_hash(texts)
        assert swapped != original
        self.conn.execute("INSERT INTO policies VALUES (?, 'rules', ?)",
                          (swapped, json.dumps(texts, sort_keys=True)))
        for row in self.rows():
            data = raw_audit.content(self.conn, row)
            self._set_body(row, data.replace(original.encode(), swapped.encode()))
        self.conn.execute("UPDATE decisions SET rules_hash = ?", (swapped,))
        self.conn.execute("DELETE FROM policies WHERE hash = ?", (original,))
        self.rechain(1)


def attack(path: Path, act: Callable[[Attacker], None]) -> None:
    with Attacker(path) as attacker:
        act(attacker)


def hash_at(path: Path, position: int) -> tuple[str, str]:
    """(id, hash) of the record at a chain position, read directly."""
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT id, hash FROM decisions ORDER BY seq LIMIT 1 OFFSET ?",
                           (position - 1,)).fetchone()
    finally:
        conn.close()
    return str(row[0]), str(row[1])


# -- the head -------------------------------------------------------------------------------------
def test_verify_prints_the_head(runner: CliRunner, db: Path) -> None:
    _, last = hash_at(db, RECORDS)
    result = run(runner, "audit", "verify", "--audit-db", str(db))
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == f"ok: {RECORDS} record(s), chain intact; head {RECORDS}:{last}\n"
    head = Head.parse(result.stdout.split()[-1])
    assert head == Head(RECORDS, last)


def test_head_line_groups_thousands_and_an_empty_chain_has_the_genesis_head() -> None:
    head = Head(1234, "9f86d081884c7d65" * 4)
    assert Verification(1234, head).line() == (
        f"ok: 1,234 record(s), chain intact; head 1234:{'9f86d081884c7d65' * 4}")
    assert Verification(0, Head(0, GENESIS)).line() == (
        f"ok: 0 record(s), chain intact; head 0:{GENESIS}")


@pytest.mark.slow
def test_an_intact_head_is_still_in_the_chain(runner: CliRunner, db: Path,
                                              engine: Engine) -> None:
    head = head_of(runner, db)
    write(db, engine, 2, start=RECORDS)  # the store grows: the old head stays valid
    _, last = hash_at(db, RECORDS + 2)
    for given in (head, head[:len(str(RECORDS)) + 17], head.upper()):  # 16-digit prefix, case
        result = run(runner, "audit", "verify", "--audit-db", str(db), "--since", given)
        assert result.exit_code == 0, result.output
        assert result.stdout == (f"ok: {RECORDS + 2} record(s), chain intact, head "
                                 f"{given.lower()} still in the chain; head "
                                 f"{RECORDS + 2}:{last}\n")
    empty = run(runner, "audit", "verify", "--audit-db", str(db), "--since", f"0:{GENESIS}")
    assert empty.exit_code == 0 and f"head 0:{GENESIS} still in the chain" in empty.stdout


@pytest.mark.parametrize("given", ["nope", "120", "120:", ":abcdef0123456789", "120:abc",
                                   "120:xyz0123456789abcdef", "-1:0123456789abcdef",
                                   "1,234:0123456789abcdef", "0:0123456789abcdef",
                                   "120:" + "a" * 65, "120:0123456789abcdef\x1b[2J"])
def test_a_malformed_head_is_a_usage_error(runner: CliRunner, db: Path, given: str) -> None:
    result = run(runner, "audit", "verify", "--audit-db", str(db), "--since", given)
    assert failed(result, 2) == BAD_HEAD.format(given)


# -- each attack, first as the unchanged code saw it (verify ok), then with the head -------------
ATTACKS: dict[str, Callable[[Attacker], None]] = {
    "delete the last record": lambda a: a.delete_last(1),
    "delete the last 100": lambda a: a.delete_last(100),
    "delete all": lambda a: a.delete_last(RECORDS),
    "edit one and re-chain the tail": lambda a: (a.edit(51, "4321", "9999"), a.rechain(51)),
    "replace the last by a forgery": lambda a: (a.delete_last(1), a.forge_append()),
    "swap the policy, full rewrite": lambda a: a.swap_policy("weight: 4}", "weight: 9}"),
}


def expected_line(name: str, head: str, db: Path) -> str:
    kept = Head.parse(head)
    if name.startswith("delete"):
        left = {"delete the last record": 119, "delete the last 100": 20, "delete all": 0}[name]
        where = f"the store ends at record {left}" if left else "the store is empty"
        return f"TRUNCATED: {where}; head {head} is gone: {RECORDS - left} record(s) deleted"
    record_id, now = hash_at(db, RECORDS)
    return (f"REWRITTEN: record {RECORDS} ({record_id}) now has hash {now[:16]}…, not "
            f"{kept.hash[:16]}…: the chain at or before it was rewritten")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_passes_a_bare_verify_but_fails_since_the_head(runner: CliRunner, db: Path,
                                                              name: str) -> None:
    head = head_of(runner, db)
    attack(db, ATTACKS[name])
    # What a walk alone can see: nothing (this is what the unchanged code said, "ok").
    assert run(runner, "audit", "verify", "--audit-db", str(db)).exit_code == 0
    result = run(runner, "audit", "verify", "--audit-db", str(db), "--since", head)
    assert failed(result) == expected_line(name, head, db)


@pytest.mark.slow
def test_a_truncated_store_fails_since_in_a_real_process(runner: CliRunner, db: Path) -> None:
    head = head_of(runner, db)
    attack(db, ATTACKS["delete the last 100"])
    done = subprocess.run([sys.executable, "-m", "engine", "audit", "verify", "--audit-db",
                           str(db), "--since", head], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, check=False)
    assert failed(done) == expected_line("delete the last 100", head, db)


@pytest.mark.slow
def test_a_rewrite_before_an_older_head_is_found_at_that_head(runner: CliRunner, db: Path,
                                                              engine: Engine) -> None:
    """A head kept at record 60 catches an edit at 51 re-chained, even after new records."""
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM decisions WHERE seq > 60")
    conn.commit()
    conn.close()
    head = head_of(runner, db)
    write(db, engine, 5, start=RECORDS)
    attack(db, lambda a: (a.edit(51, "4321", "9999"), a.rechain(51)))
    record_id, now = hash_at(db, 60)
    result = run(runner, "audit", "verify", "--audit-db", str(db), "--since", head)
    assert failed(result) == (f"REWRITTEN: record 60 ({record_id}) now has hash {now[:16]}…, "
                              f"not {head.split(':')[1][:16]}…: the chain at or before it was "
                              "rewritten")


@pytest.mark.slow
def test_an_edit_before_the_head_is_broken_at_that_record(runner: CliRunner, db: Path) -> None:
    kept = head_of(runner, db)
    attack(db, lambda a: a.edit(113, "4321", "9999"))
    broken_id, _ = hash_at(db, 113)
    result = run(runner, "audit", "verify", "--audit-db", str(db), "--since", kept)
    assert failed(result) == (f"BROKEN at record {broken_id} (after 112 good record(s)): its "
                              "content does not match its hash")


@pytest.mark.slow
def test_an_unlinked_record_after_the_head_is_broken_with_the_head_intact(
        runner: CliRunner, db: Path) -> None:
    kept = head_of(runner, db)
    attack(db, lambda a: a.forge_append())
    attack(db, lambda a: a.edit(RECORDS + 1, "4321", "9999"))
    forged_id, _ = hash_at(db, RECORDS + 1)
    result = run(runner, "audit", "verify", "--audit-db", str(db), "--since", kept)
    assert failed(result) == (f"BROKEN at record {forged_id} (after {RECORDS} good record(s)): "
                              f"its content does not match its hash (head {kept} still in the "
                              "chain before it)")


@pytest.mark.slow
def test_an_appended_forgery_is_not_seen_by_a_head_alone(runner: CliRunner, db: Path) -> None:
    """The documented limit: records appended after the head are as good as real ones
    without a key (see the keyed tests below)."""
    head = head_of(runner, db)
    attack(db, lambda a: a.forge_append())
    result = run(runner, "audit", "verify", "--audit-db", str(db), "--since", head)
    assert result.exit_code == 0 and f"head {head} still in the chain" in result.stdout


def test_existing_tamper_checks_still_name_the_first_broken_record(db: Path) -> None:
    attack(db, lambda a: a.edit(7, "4321", "9999"))
    with AuditStore(db, create=False) as store:
        result = verify(store, since=Head(RECORDS, hash_at(db, RECORDS)[1]))
    assert result.problem == "BROKEN" and result.broken_id == hash_at(db, 7)[0]
    assert result.count == 6 and result.reason == "its content does not match its hash"


# -- with a key ----------------------------------------------------------------------------------
def key_env(monkeypatch: pytest.MonkeyPatch, key: str = KEY) -> None:
    monkeypatch.setenv("GPU_ADVISOR_AUDIT_KEY", key)


def test_keyed_store_verifies_with_the_key(runner: CliRunner, keyed_db: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _, last = hash_at(keyed_db, 10)
    key_env(monkeypatch)
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db))
    assert result.stdout == (f"ok: 10 record(s), chain intact, 10 keyed MAC(s) checked; "
                             f"head 10:{last}\n")
    with AuditStore(keyed_db, create=False) as store:
        assert {r.hash_kind for r in store.iter_all()} == {KEYED}


def test_keyed_store_without_the_key_cannot_be_called_ok(runner: CliRunner,
                                                         keyed_db: Path) -> None:
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db))
    assert failed(result, 2) == NO_KEY.format(db=keyed_db, keyed=10, count=10)


KEYED_ATTACKS: dict[str, tuple[Callable[[Attacker], None], str]] = {
    "edit and re-chain as plain records": (
        lambda a: (a.edit(4, "4321", "9999"), a.rechain(4)),
        "it is a plain sha256 record after keyed ones (a writer with the key never writes "
        "one): written without the key"),
    "edit and re-chain claiming the key": (
        lambda a: (a.edit(4, "4321", "9999"), a.rechain(4, keep_kind=True)),
        "its MAC does not match its content: rewritten without the key"),
    "edit and re-chain with another key": (
        lambda a: (a.edit(4, "4321", "9999"),
                   a.rechain(4, key=AuditKey(OTHER_KEY.encode(), "other"))),
        f"it is keyed with key {AuditKey(OTHER_KEY.encode(), '').id}, not with the key given "
        f"({AuditKey(KEY.encode(), '').id})"),
    "append a keyed forgery": (lambda a: a.forge_append(), "its MAC does not match its content:"
                               " rewritten without the key"),
}


@pytest.mark.parametrize("name", list(KEYED_ATTACKS))
def test_a_rewrite_without_the_key_fails_plain_verify(runner: CliRunner, keyed_db: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      name: str) -> None:
    act, reason = KEYED_ATTACKS[name]
    attack(keyed_db, act)
    first = 11 if name.startswith("append") else 4
    broken_id, _ = hash_at(keyed_db, first)
    key_env(monkeypatch)
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db))
    assert failed(result) == (f"BROKEN at record {broken_id} (after {first - 1} good "
                              f"record(s)): {reason}")


def test_a_plain_forgery_after_keyed_records_fails_even_without_the_key(
        runner: CliRunner, keyed_db: Path) -> None:
    attack(keyed_db, lambda a: (a.edit(4, "4321", "9999"), a.rechain(4)))
    broken_id, _ = hash_at(keyed_db, 4)
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db))
    assert failed(result) == (f"BROKEN at record {broken_id} (after 3 good record(s)): "
                              f"{KEYED_ATTACKS['edit and re-chain as plain records'][1]}")


def test_a_full_rewrite_as_plain_records_fails_with_the_key(runner: CliRunner, keyed_db: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            ) -> None:
    attack(keyed_db, lambda a: a.swap_policy("weight: 4}", "weight: 9}"))
    assert run(runner, "audit", "verify", "--audit-db", str(keyed_db)).exit_code == 0
    key_env(monkeypatch)
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db))
    assert failed(result) == ("UNKEYED: none of the 10 record(s) is keyed, though a key was "
                              "given: written before the key was set up, or rewritten without it")


def test_deleting_the_keyed_tail_needs_the_head(runner: CliRunner, keyed_db: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    key_env(monkeypatch)
    head = head_of(runner, keyed_db)
    attack(keyed_db, lambda a: a.delete_last(3))
    assert run(runner, "audit", "verify", "--audit-db", str(keyed_db)).exit_code == 0
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db), "--since", head)
    assert failed(result) == (f"TRUNCATED: the store ends at record 7; head {head} is gone: "
                              "3 record(s) deleted")


@pytest.mark.slow
def test_recommend_records_keyed_and_keeps_the_store_keyed(runner: CliRunner, db: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    """A plain store from before the key takes keyed records; after that, a writer without
    the key (or with another) is refused before anything is printed or recorded."""
    head = head_of(runner, db)
    key_file = tmp_path / "audit.key"
    key_file.write_text(KEY + "\n")
    key_file.chmod(0o600)
    monkeypatch.setenv("GPU_ADVISOR_AUDIT_KEY_FILE", str(key_file))
    assert run(runner, "recommend", "--answers", str(EXAMPLE), "--audit-db", str(db)
               ).exit_code == 0
    _, last = hash_at(db, RECORDS + 1)
    result = run(runner, "audit", "verify", "--audit-db", str(db), "--since", head)
    assert result.stdout == (f"ok: {RECORDS + 1} record(s), chain intact, 1 keyed MAC(s) "
                             f"checked after {RECORDS} plain record(s) from before the key, "
                             f"head {head} still in the chain; head {RECORDS + 1}:{last}\n")

    monkeypatch.delenv("GPU_ADVISOR_AUDIT_KEY_FILE")
    result = run(runner, "recommend", "--answers", str(EXAMPLE), "--audit-db", str(db))
    assert failed(result, 2) == (f"error: {db}: this audit store is keyed; set "
                                 "GPU_ADVISOR_AUDIT_KEY or GPU_ADVISOR_AUDIT_KEY_FILE to record "
                                 "into it; nothing was recorded")
    key_env(monkeypatch, OTHER_KEY)
    result = run(runner, "recommend", "--answers", str(EXAMPLE), "--audit-db", str(db))
    ours, theirs = AuditKey(KEY.encode(), "").id, AuditKey(OTHER_KEY.encode(), "").id
    assert failed(result, 2) == (f"error: {db}: this audit store is keyed with key {ours}, not "
                                 f"with the key from GPU_ADVISOR_AUDIT_KEY ({theirs}); nothing "
                                 "was recorded")
    assert hash_at(db, RECORDS + 1)[1] == last
    with AuditStore(db, create=False) as store:
        assert store.count() == RECORDS + 1


@pytest.mark.slow
def test_keyed_recording_and_verify_in_a_real_process(keyed_db: Path, tmp_path: Path) -> None:
    key_file = tmp_path / "audit.key"
    key_file.write_text(KEY)
    key_file.chmod(0o600)
    env = {**os.environ, "GPU_ADVISOR_AUDIT_KEY_FILE": str(key_file),
           "GPU_ADVISOR_NO_CACHE": "1"}
    done = subprocess.run([sys.executable, "-m", "engine", "recommend", "--answers",
                           str(EXAMPLE), "--audit-db", str(keyed_db), "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    env.pop("GPU_ADVISOR_AUDIT_KEY_FILE")
    done = subprocess.run([sys.executable, "-m", "engine", "audit", "verify", "--audit-db",
                           str(keyed_db), "--key-file", str(key_file)], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: 11 record(s), chain intact, 11 keyed MAC(s) checked; ")


# -- the key's sources ----------------------------------------------------------------------------
def test_key_file_option_wins_and_bad_keys_are_one_line(runner: CliRunner, keyed_db: Path,
                                                        tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        ) -> None:
    good = tmp_path / "good.key"
    good.write_text(f"  {KEY}\n")
    good.chmod(0o600)
    key_env(monkeypatch, "wrong-but-long-enough-key")
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db), "--key-file", str(good))
    assert result.exit_code == 0, result.output

    monkeypatch.setenv("GPU_ADVISOR_AUDIT_KEY_FILE", str(good))
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db))
    assert failed(result, 2) == ("error: GPU_ADVISOR_AUDIT_KEY: both GPU_ADVISOR_AUDIT_KEY and "
                                 "GPU_ADVISOR_AUDIT_KEY_FILE are set; set only one")
    monkeypatch.delenv("GPU_ADVISOR_AUDIT_KEY_FILE")
    key_env(monkeypatch, "short")
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db))
    assert failed(result, 2) == ("error: GPU_ADVISOR_AUDIT_KEY: the audit key is 5 byte(s); at "
                                 "least 16 are needed (e.g. `openssl rand -hex 32`)")


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo", "huge", "blank",
                                  "group-readable", "world-writable"])
def test_a_bad_key_file_is_one_line_and_never_waits(runner: CliRunner, keyed_db: Path,
                                                    tmp_path: Path, kind: str) -> None:
    path = tmp_path / "audit.key"
    expected = {
        "missing": f"error: {path}: cannot read the audit key file (No such file or directory)",
        "directory": f"error: {path}: the audit key file is not a regular file",
        "fifo": f"error: {path}: the audit key file is not a regular file",
        "huge": f"error: {path}: the audit key file is 5,000 bytes; a key is at most 4,096",
        "blank": f"error: {path}: the audit key is 0 byte(s); at least 16 are needed (e.g. "
                 "`openssl rand -hex 32`)",
        "group-readable": f"error: {path}: the audit key file is readable or writable by "
                          f"others (mode 0640); run chmod 600 {path}",
        "world-writable": f"error: {path}: the audit key file is readable or writable by "
                          f"others (mode 0602); run chmod 600 {path}",
    }[kind]
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # no writer: a blocking open would hang
    elif kind == "huge":
        path.write_text("k" * 5000)
    elif kind == "blank":
        path.write_text(" \n\n")
        path.chmod(0o600)
    elif kind in ("group-readable", "world-writable"):
        path.write_text(KEY)
        path.chmod(0o640 if kind == "group-readable" else 0o602)
    result = run(runner, "audit", "verify", "--audit-db", str(keyed_db), "--key-file", str(path))
    assert failed(result, 2) == expected


# -- replay checks the stored policy first --------------------------------------------------------
@pytest.mark.slow
def test_replay_of_an_edited_stored_policy_names_the_hash_mismatch(runner: CliRunner,
                                                                   tmp_path: Path,
                                                                   engine: Engine) -> None:
    db = tmp_path / "replay.sqlite3"
    assert run(runner, "recommend", "--answers", str(EXAMPLE), "--audit-db", str(db)
               ).exit_code == 0
    record_id, _ = hash_at(db, 1)
    replayed = run(runner, "audit", "replay", record_id, "--audit-db", str(db))
    assert replayed.exit_code == 0  # the engine for this policy is now cached in-process
    conn = sqlite3.connect(db)
    conn.execute("UPDATE policies SET content = replace(content, 'weight: 4}', 'weight: 9}')"
                 " WHERE kind = 'rules'")
    conn.commit()
    conn.close()
    rules = engine.rulebook.hash
    with AuditStore(db, create=False) as store, pytest.raises(PolicyMismatch) as caught:
        store.policy(rules)
    texts_hash = str(caught.value).split("hash to ")[1][:12]
    line = (f"error: {db}: the stored rules policy {rules[:12]} no longer matches its hash "
            f"(its texts hash to {texts_hash}): the store was altered")
    for fmt in ("text", "json"):
        result = run(runner, "audit", "replay", record_id, "--audit-db", str(db), "--format", fmt)
        assert failed(result) == line
    done = subprocess.run([sys.executable, "-m", "engine", "audit", "replay", record_id,
                           "--audit-db", str(db)], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, check=False)
    assert failed(done) == line and "DIFFERS" not in done.stdout


# -- ':memory:' -----------------------------------------------------------------------------------
MEMORY = ("error: ':memory:' is not an audit store (SQLite would keep the records in memory and "
          "lose them); give a file path, or use --no-audit")


@pytest.mark.parametrize("how", ["option", "option ./", "env"])
def test_memory_is_refused_and_leaves_no_file(runner: CliRunner, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    monkeypatch.chdir(tmp_path)
    name = "./:memory:" if how == "option ./" else ":memory:"
    args = ["--audit-db", name] if how.startswith("option") else []
    if how == "env":
        monkeypatch.setenv("GPU_ADVISOR_AUDIT_DB", name)
    result = run(runner, "recommend", "--answers", str(EXAMPLE), *args)
    assert failed(result, 2) == MEMORY  # before anything is printed
    for command in (["verify"], ["list"], ["show", "0123"]):
        assert failed(run(runner, "audit", *command, *args), 2) == MEMORY
    assert list(tmp_path.iterdir()) == []  # no file named ':memory:' (or anything else)
