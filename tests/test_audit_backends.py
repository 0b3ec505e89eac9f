"""The audit store on both backends, a SQLite file and a real PostgreSQL server: the same
commands, the same chain, many writer processes at once, kill -9 mid-append, edits,
truncation and re-chaining found by ``verify``, and ``audit copy`` from one to the other.

The server is a throwaway cluster (tests/helpers/postgres.py), one per test process, a fresh
database per test. Without a server or the driver the PostgreSQL cases skip, saying why,
unless GPU_ADVISOR_REQUIRE_POSTGRES=1 (as in .ci/run), where they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import postgres
from helpers.fast_audit_writer import spawn

from engine.audit.chain import Head, verify
from engine.audit.location import DatabaseUrl, parse_location
from engine.audit.store import AuditStore

ROOT = Path(__file__).resolve().parents[1]
WRITERS, EACH = 8, 50


@pytest.fixture(scope="session")
def pg_server() -> Iterator[postgres.Server]:
    """One throwaway PostgreSQL server for this test process."""
    why = postgres.unavailable()
    if why:
        if os.environ.get(postgres.REQUIRED_ENV):
            pytest.fail(f"PostgreSQL is required ({postgres.REQUIRED_ENV}=1) but {why}")
        pytest.skip(why)
    server = postgres.start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty audit store on each backend: a file path, or a database URL."""
    if request.param == "sqlite":
        return str(tmp_path / "audit.sqlite3")
    server: postgres.Server = request.getfixturevalue("pg_server")
    return server.new_database()


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI as a subprocess."""
    return subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GPU_ADVISOR_NO_CACHE": "1", **(env or {})})


def fill(store: str, writer_template: Path, count: int, worker: int = 900) -> None:
    proc = spawn(store, writer_template, worker, count)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()


def open_store(store: str) -> AuditStore:
    return AuditStore(parse_location(store))


def verified(store: str, since: Head | None = None) -> Any:
    with open_store(store) as opened:
        return verify(opened, since=since)


def count_of(store: str) -> int:
    with open_store(store) as opened:
        return opened.count()


def raw_sql(store: str, statement: str, params: tuple[Any, ...] = ()) -> None:
    """Change the database behind the store's back (as someone with access could)."""
    if store.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store, autocommit=True) as conn:
            conn.execute(statement.replace("?", "%s"), params)  # type: ignore[arg-type]
        return
    conn = sqlite3.connect(store)
    with conn:
        conn.execute(statement, params)
    conn.close()


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout[:300], done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


# -- every audit command, the same on both ---------------------------------------------------
def test_every_audit_command_works_on_both_backends(store_at: str) -> None:
    examples = sorted((ROOT / "examples").glob("*.yaml"))[:2]
    for example in examples:
        done = cli("recommend", "--answers", str(example), "--audit-db", store_at,
                   "--format", "json")
        assert done.returncode == 0, done.stderr
    listed = json.loads(cli("audit", "list", "--audit-db", store_at, "--format", "json").stdout)
    assert len(listed) == len(examples)
    first = listed[0]
    axis, option = "deployment", first["choices"]["deployment"]
    chosen = json.loads(cli("audit", "list", "--audit-db", store_at, "--format", "json",
                            "--choice", f"{axis}={option}").stdout)
    assert first["id"] in {r["id"] for r in chosen}
    assert all(r["choices"][axis] == option for r in chosen)
    shown = json.loads(cli("audit", "show", first["id"][:10], "--audit-db", store_at,
                           "--format", "json").stdout)
    assert shown["decision_id"] == first["id"]
    rule = sorted(shown["fired"])[0]
    by_rule = json.loads(cli("audit", "list", "--audit-db", store_at, "--format", "json",
                             "--rule", rule).stdout)
    assert first["id"] in {r["id"] for r in by_rule}
    assert json.loads(cli("audit", "list", "--audit-db", store_at, "--format", "json",
                          "--rule", "no.such-rule").stdout) == []
    replayed = cli("audit", "replay", first["id"], "--audit-db", store_at)
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout
    checked = cli("audit", "verify", "--audit-db", store_at)
    assert checked.returncode == 0 and checked.stdout.startswith(f"ok: {len(examples)} record")
    head = checked.stdout.rsplit("head ", 1)[1].strip()
    assert cli("audit", "verify", "--audit-db", store_at, "--since", head).returncode == 0
    lines = cli("audit", "export", "--audit-db", store_at).stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r["id"] for r in listed]
    assert len(cli("audit", "export", "--audit-db", store_at, "--format", "csv"
                   ).stdout.splitlines()) == len(examples) + 1


def test_the_environment_names_a_database_as_the_flag_does(store_at: str) -> None:
    done = cli("recommend", "--answers", str(ROOT / "examples" / "startup-7b-continuous.yaml"),
               env={"GPU_ADVISOR_AUDIT_DB": store_at})
    assert done.returncode == 0, done.stderr
    assert count_of(store_at) == 1


def test_keyed_records_verify_with_the_key_only(store_at: str, writer_template: Path,
                                                tmp_path: Path) -> None:
    key = tmp_path / "audit.key"
    key.write_text("k" * 64)
    key.chmod(0o600)
    env = {"GPU_ADVISOR_AUDIT_KEY_FILE": str(key)}
    done = cli("recommend", "--answers", str(ROOT / "examples" / "startup-7b-continuous.yaml"),
               "--audit-db", store_at, env=env)
    assert done.returncode == 0, done.stderr
    assert "keyed MAC(s) checked" in cli("audit", "verify", "--audit-db", store_at,
                                         env=env).stdout
    unkeyed = cli("audit", "verify", "--audit-db", store_at)
    assert "not checked" in unkeyed.stdout + unkeyed.stderr


# -- many writers, kill -9 -------------------------------------------------------------------
@pytest.mark.slow
def test_writers_in_separate_processes_make_one_chain(
        store_at: str, writer_template: Path, processes: list[subprocess.Popen[bytes]]) -> None:
    # not made beforehand: the writers race to make the tables too
    for worker in range(WRITERS):
        processes.append(spawn(store_at, writer_template, worker, EACH))
    verifications = []
    while any(proc.poll() is None for proc in processes):  # a verifier alongside
        verifications.append(verified(store_at))
    for proc in processes:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()
    assert all(v.ok for v in verifications), [v.line() for v in verifications if not v.ok]
    result = verified(store_at)
    assert result.ok and result.count == WRITERS * EACH, result.line()
    with open_store(store_at) as opened:
        ids = [r.id for r in opened.entries()]
    assert sorted(ids) == sorted(f"w{w:03d}-{i:08d}" for w in range(WRITERS)
                                 for i in range(EACH))
    for worker in range(WRITERS):  # each writer's own records in its order
        mine = [i for i in ids if i.startswith(f"w{worker:03d}-")]
        assert mine == sorted(mine)


@pytest.mark.slow
def test_a_writer_killed_mid_append_leaves_the_chain_as_it_was(
        store_at: str, writer_template: Path, processes: list[subprocess.Popen[bytes]]) -> None:
    fill(store_at, writer_template, 5)
    early = verified(store_at).head
    for round_ in range(4):
        proc = spawn(store_at, writer_template, round_, 0)  # appends until killed
        processes.append(proc)
        target = count_of(store_at) + 2
        deadline = time.monotonic() + 120
        while count_of(store_at) < target:  # poll for progress
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "no progress"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        result = verified(store_at, since=early)
        assert result.ok and result.count >= target, result.line()
    before = count_of(store_at)
    fill(store_at, writer_template, 1, worker=902)  # the store still takes records after the kills
    assert verified(store_at, since=early).count == before + 1


# -- what verify finds -----------------------------------------------------------------------
def test_an_edited_record_is_named_by_verify(store_at: str, writer_template: Path) -> None:
    fill(store_at, writer_template, 6)
    with open_store(store_at) as opened:
        victim = opened.entries()[3].id
    raw_sql(store_at, "UPDATE decisions SET choices = ? WHERE id = ?",
            ('{"deployment": "local"}', victim))
    done = cli("audit", "verify", "--audit-db", store_at)
    assert done.returncode == 1
    assert f"BROKEN at record {victim}" in done.stdout + done.stderr


def test_truncation_and_rechaining_are_found_against_a_head(store_at: str,
                                                            writer_template: Path) -> None:
    fill(store_at, writer_template, 6)
    head = verified(store_at).head
    raw_sql(store_at, "DELETE FROM decisions WHERE seq = (SELECT max(seq) FROM decisions)")
    cut = cli("audit", "verify", "--audit-db", store_at, "--since", str(head))
    assert cut.returncode == 1 and "TRUNCATED" in cut.stdout + cut.stderr
    fill(store_at, writer_template, 2, worker=901)  # new records chained onto the cut store
    assert verified(store_at).ok  # self-consistent again...
    rewritten = cli("audit", "verify", "--audit-db", store_at, "--since", str(head))
    assert rewritten.returncode == 1 and "REWRITTEN" in rewritten.stdout + rewritten.stderr


# -- audit copy ------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_store_of_300_records_copies_verifiably_and_once(store_at: str, writer_template: Path,
                                                           tmp_path: Path) -> None:
    source = str(tmp_path / "person.sqlite3")
    fill(source, writer_template, 300)
    head = verified(source).head
    done = cli("audit", "copy", "--from", source, "--to", store_at)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("copied 300 record(s)"), done.stdout
    assert cli("audit", "verify", "--audit-db", store_at, "--since", str(head)).returncode == 0
    again = cli("audit", "copy", "--from", source, "--to", store_at)
    assert again.returncode == 0 and again.stdout.startswith("copied 0 record(s)")
    assert count_of(store_at) == 300
    with open_store(source) as a, open_store(store_at) as b:
        assert [r.result for r in a.iter_all()] == [r.result for r in b.iter_all()]


def test_copy_into_another_chain_is_refused_unless_appended(store_at: str, writer_template: Path,
                                                            tmp_path: Path) -> None:
    source = str(tmp_path / "person.sqlite3")
    fill(source, writer_template, 3, worker=1)
    fill(store_at, writer_template, 2, worker=2)
    refused = cli("audit", "copy", "--from", source, "--to", store_at)
    assert "another chain" in one_error_line(refused)
    assert count_of(store_at) == 2
    done = cli("audit", "copy", "--from", source, "--to", store_at, "--append")
    assert done.returncode == 0, done.stderr
    assert verified(store_at).count == 5
    assert cli("audit", "copy", "--from", source, "--to", store_at, "--append"
               ).stdout.startswith("copied 0 record(s)")
    assert verified(store_at).count == 5


def test_a_source_that_does_not_verify_is_not_copied(store_at: str, writer_template: Path,
                                                     tmp_path: Path) -> None:
    source = str(tmp_path / "person.sqlite3")
    fill(source, writer_template, 3)
    raw_sql(source, "UPDATE decisions SET created_at = '2020-01-01' WHERE seq = 2")
    refused = cli("audit", "copy", "--from", source, "--to", store_at)
    assert "does not verify" in one_error_line(refused)
    assert count_of(store_at) == 0


# -- URLs, credentials, servers that are not there -------------------------------------------
@pytest.mark.parametrize("url", ["mysql://user:s3cret@db/audit", "sqlite:///tmp/a.db",
                                 "https://example.com/audit"])
def test_an_unsupported_url_is_refused_never_a_file(url: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "engine", "recommend", "--answers",
                           str(ROOT / "examples" / "startup-7b-continuous.yaml"),
                           "--audit-db", url], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    line = one_error_line(done)
    assert "unsupported audit store URL scheme" in line
    assert "s3cret" not in line
    assert list(tmp_path.iterdir()) == []  # no folder named "mysql:" made


def test_an_unreachable_server_is_one_line_and_says_nothing_was_recorded() -> None:
    url = "postgresql://auditor:hunter2@127.0.0.1:9/audit?connect_timeout=5"
    done = cli("recommend", "--answers", str(ROOT / "examples" / "startup-7b-continuous.yaml"),
               "--audit-db", url)
    line = one_error_line(done)
    assert "the decision was not recorded" in line
    assert "hunter2" not in done.stdout + done.stderr
    listed = cli("audit", "list", "--audit-db", url)
    assert "hunter2" not in one_error_line(listed)


def test_paths_masks_a_password() -> None:
    url = "postgresql://auditor:hunter2@db.example/audit?password=other"
    for done in (cli("paths", "--audit-db", url),
                 cli("paths", "--format", "json", env={"GPU_ADVISOR_AUDIT_DB": url})):
        assert done.returncode == 0, done.stderr
        assert "hunter2" not in done.stdout and "other" not in done.stdout
        assert "auditor:***@db.example" in done.stdout


def test_a_password_is_never_recorded_or_printed(pg_server: postgres.Server) -> None:
    database = postgres.database_of(pg_server.new_database())
    pg_server.sql("ALTER ROLE gpu PASSWORD 'hunter2'")
    url = pg_server.url(database, password="hunter2")
    done = cli("recommend", "--answers", str(ROOT / "examples" / "startup-7b-continuous.yaml"),
               "--audit-db", url)
    assert done.returncode == 0, done.stderr
    assert "hunter2" not in done.stdout + done.stderr
    exported = cli("audit", "export", "--audit-db", url)
    assert exported.returncode == 0 and "hunter2" not in exported.stdout


def test_locations_parse_as_expected() -> None:
    assert isinstance(parse_location("postgres://u@h/db"), DatabaseUrl)
    assert parse_location("team/audit.sqlite3") == Path("team/audit.sqlite3")
    assert str(parse_location("postgresql://u:p%40ss@h:5432/db")) == "postgresql://u:***@h:5432/db"


def test_a_role_that_may_only_read_cannot_append(pg_server: postgres.Server,
                                                 writer_template: Path) -> None:
    url = pg_server.new_database()
    fill(url, writer_template, 1)
    database = postgres.database_of(url)
    with contextlib.suppress(Exception):
        pg_server.sql("CREATE ROLE reader LOGIN")
    pg_server.sql("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader", database)
    reader = url.replace("postgresql://gpu@", "postgresql://reader@")
    assert cli("audit", "verify", "--audit-db", reader).returncode == 0
    done = cli("recommend", "--answers", str(ROOT / "examples" / "startup-7b-continuous.yaml"),
               "--audit-db", reader)
    line = one_error_line(done)
    assert "may not write" in line and "not recorded" in line



def test_the_roles_docs_audit_md_sets_up_work(pg_server: postgres.Server,
                                              writer_template: Path) -> None:
    """The SQL of docs/audit.md, run as written: the owner makes the tables, a writer
    appends but cannot delete, an auditor reads and verifies but cannot record."""
    text = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```sql\n")[1:]]
    suffix = os.urandom(4).hex()
    names = {"gpu_audit": f"gpu_audit_{suffix}", "audit_owner": f"audit_owner_{suffix}",
             "gpu_writer": f"gpu_writer_{suffix}", "gpu_auditor": f"gpu_auditor_{suffix}"}

    def run(block: str, database: str) -> None:
        block = re.sub(r"\b(" + "|".join(names) + r")\b", lambda m: names[m[1]], block)
        code = "\n".join(line.split("--")[0] for line in block.splitlines())
        for statement in code.split(";"):
            if statement.strip():
                pg_server.sql(statement.strip(), database)

    run(blocks[0], "postgres")
    database = names["gpu_audit"]
    owner = pg_server.url(database).replace(f"{postgres.USER}@", f"{names['audit_owner']}@")
    fill(owner, writer_template, 1, worker=10)
    run(blocks[1], database)
    writer = owner.replace(names["audit_owner"], names["gpu_writer"])
    auditor = owner.replace(names["audit_owner"], names["gpu_auditor"])
    fill(writer, writer_template, 3, worker=11)
    assert cli("audit", "verify", "--audit-db", auditor).stdout.startswith("ok: 4 record(s)")
    refused = cli("recommend", "--answers", str(ROOT / "examples" / "startup-7b-continuous.yaml"),
                  "--audit-db", auditor)
    assert "may not write" in one_error_line(refused)
    import psycopg

    with psycopg.connect(writer, autocommit=True) as conn, pytest.raises(
            psycopg.errors.InsufficientPrivilege):
        conn.execute("DELETE FROM decisions")
