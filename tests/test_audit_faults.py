"""Faults around the audit store: kill -9 mid-transaction (many rounds), a full disk, a
read-only store, and concurrent writers (threads and processes).

Running as root changes what can be simulated: permissions do not stop root, so a read-only
store is made with a read-only bind mount or ``chattr +i`` (each skipped when unavailable),
and a full disk with ``RLIMIT_FSIZE`` (always) and a tiny tmpfs (when ``mount`` works).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner
from helpers.fast_audit_writer import AppendedResult, spawn

from engine.answers.model import validate_answers
from engine.audit.chain import verify
from engine.audit.store import AuditError, AuditStore
from engine.cli import cli
from engine.decide.engine import Engine, load_engine

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"
KILL_ROUNDS = int(os.environ.get("AUDIT_KILL_ROUNDS", "50"))


@pytest.fixture(autouse=True)
def no_audit_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain records, whatever the environment running the tests says."""
    for name in ("GPU_ADVISOR_AUDIT_KEY", "GPU_ADVISOR_AUDIT_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


def count_of(path: Path) -> int:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM decisions").fetchone()[0])
    finally:
        conn.close()


def verified(path: Path) -> int:
    with AuditStore(path) as store:
        result = verify(store)
    assert result.ok, result
    return result.count


def fill(path: Path, engine: Engine, n: int) -> None:
    with AuditStore(path) as store:
        for i in range(n):
            answers = validate_answers({"hours_per_year": 2000 + i}, engine.catalog)
            store.append(engine.recommend(answers), engine.rulebook.texts, engine.catalog.texts)


def one_error_line(exit_code: int, stdout: str, stderr: str) -> str:
    assert exit_code == 2, (exit_code, stdout[:200], stderr)
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


# -- kill -9 mid-transaction ---------------------------------------------------------------------
@pytest.mark.slow
def test_kill_9_mid_transaction_many_rounds(tmp_path: Path, writer_template: Path,
                                            processes: list[subprocess.Popen[bytes]]) -> None:
    db = tmp_path / "audit.sqlite3"
    total = 0
    for round_ in range(KILL_ROUNDS):
        proc = spawn(db, writer_template, round_, 0)
        processes.append(proc)
        target = total + 1 + round_ % 3
        deadline = time.monotonic() + 30
        while True:  # poll for progress, no fixed sleeps
            assert proc.poll() is None, proc.communicate()[1]
            with contextlib.suppress(sqlite3.Error):
                if count_of(db) >= target:
                    break
            assert time.monotonic() < deadline, f"round {round_}: no progress"
            time.sleep(0.002)
        os.kill(proc.pid, signal.SIGKILL)  # the writer loops on append: mid-transaction
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        count = verified(db)
        assert count >= target, (round_, count, target)
        total = count
    with AuditStore(db) as store:  # still takes new records after all that
        spec = json.loads(writer_template.read_text())
        store.append(AppendedResult({**spec["result"], "decision_id": "after-kills"}),
                     spec["rules"], spec["catalog"])
    assert verified(db) == total + 1


# -- a full disk ---------------------------------------------------------------------------------
def _recommend_env(db: Path) -> dict[str, str]:
    return {**os.environ, "GPU_ADVISOR_AUDIT_DB": str(db), "GPU_ADVISOR_NO_CACHE": "1"}


def _fsize_limit(limit: int) -> Any:
    def apply() -> None:  # in the child: writes past `limit` bytes fail with EFBIG
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def _assert_full_disk_refused(db: Path, before: int, done: subprocess.CompletedProcess[str],
                              ) -> None:
    line = one_error_line(done.returncode, done.stdout, done.stderr)
    assert str(db) in line and "nothing was recorded" in line, line
    assert "disk full" in line, line
    assert count_of(db) == before
    assert verified(db) == before


@pytest.mark.slow
def test_full_disk_by_file_size_limit(tmp_path: Path, engine: Engine) -> None:
    db = tmp_path / "audit.sqlite3"
    fill(db, engine, 2)
    before = count_of(db)
    # A result is ~55 kB: the WAL cannot take the next record within 16 kB.
    done = subprocess.run([sys.executable, "-m", "engine", "recommend", "--answers",
                           str(EXAMPLE), "--format", "json"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env=_recommend_env(db),
                          preexec_fn=_fsize_limit(16 * 1024), check=False)
    _assert_full_disk_refused(db, before, done)


@contextlib.contextmanager
def mounted(*args: str) -> Iterator[None]:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here ({done.stderr.strip()})")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", args[-1]], capture_output=True, check=False)


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="needs root mount")
def test_full_disk_on_a_tiny_tmpfs(tmp_path: Path, engine: Engine) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    with mounted("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)):
        db = disk / "audit.sqlite3"
        fill(db, engine, 2)
        before = count_of(db)
        filler = disk / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            with contextlib.suppress(OSError):
                while True:  # fill the rest of the disk
                    os.write(fd, b"\0" * 4096)
        finally:
            os.close(fd)
        done = subprocess.run([sys.executable, "-m", "engine", "recommend", "--answers",
                               str(EXAMPLE), "--format", "json"], cwd=ROOT, capture_output=True,
                              text=True, timeout=60, env=_recommend_env(db), check=False)
        line = one_error_line(done.returncode, done.stdout, done.stderr)
        assert str(db) in line and "disk full" in line and "nothing was recorded" in line
        filler.unlink()  # (even a reader needs a little space for the WAL index)
        assert count_of(db) == before and verified(db) == before
        fill(db, engine, 1)  # space again: the store carries on
        assert verified(db) == before + 1


# -- a read-only store ---------------------------------------------------------------------------
def _assert_read_only_refused(runner: CliRunner, db: Path, before: bytes) -> None:
    result = runner.invoke(cli, ["recommend", "--answers", str(EXAMPLE), "--audit-db", str(db),
                                 "--format", "json"])
    line = one_error_line(result.exit_code, result.stdout, result.stderr)
    assert str(db) in line, line
    assert "read-only" in line or "cannot" in line or "unable to open" in line, line
    assert db.read_bytes() == before


def _closed_store(tmp_path: Path, engine: Engine) -> tuple[Path, bytes]:
    db = tmp_path / "ro" / "audit.sqlite3"
    db.parent.mkdir()
    fill(db, engine, 2)
    assert not Path(f"{db}-wal").exists()  # checkpointed on close
    return db, db.read_bytes()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="needs root mount")
def test_read_only_bind_mount(runner: CliRunner, tmp_path: Path, engine: Engine) -> None:
    db, before = _closed_store(tmp_path, engine)
    view = tmp_path / "view"
    view.mkdir()
    with mounted("--bind", "-o", "ro", str(db.parent), str(view)):
        try:
            (view / "probe").touch()
        except OSError:
            pass
        else:  # pragma: no cover - old mount(8) ignores ro on the first bind
            (view / "probe").unlink()
            pytest.skip("bind mount is not read-only here")
        _assert_read_only_refused(runner, view / db.name, before)
        _assert_readable(runner, view / db.name, 2)
        answers = validate_answers({"work_unknown": True}, engine.catalog)
        with pytest.raises(AuditError), AuditStore(view / db.name) as store:
            store.append(engine.recommend(answers), engine.rulebook.texts, engine.catalog.texts)


@pytest.mark.skipif(not shutil.which("chattr"), reason="no chattr")
def test_immutable_file(runner: CliRunner, tmp_path: Path, engine: Engine) -> None:
    db, before = _closed_store(tmp_path, engine)
    done = subprocess.run(["chattr", "+i", str(db)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i not supported here ({done.stderr.strip()})")
    try:
        _assert_read_only_refused(runner, db, before)
        _assert_readable(runner, db, 2)
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=False)
    assert verified(db) == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_permissions_0444_0555(runner: CliRunner, tmp_path: Path,
                               engine: Engine) -> None:  # pragma: no cover - non-root only
    db, before = _closed_store(tmp_path, engine)
    db.chmod(0o444)
    db.parent.chmod(0o555)
    try:
        _assert_read_only_refused(runner, db, before)
        _assert_readable(runner, db, 2)
        assert sorted(p.name for p in db.parent.iterdir()) == [db.name]
    finally:
        db.parent.chmod(0o755)
        db.chmod(0o600)


_AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
_READ_AS_NOBODY = """
import sqlite3, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from engine.audit.store import AuditStore
db = Path(sys.argv[2])
try:
    sqlite3.connect(db).execute("SELECT count(*) FROM decisions")
except sqlite3.Error as exc:
    print("plain connection:", exc)
with AuditStore(db, create=False) as store:
    links = [r.prev_hash for r in store.iter_all()]
    print(store.count(), len(set(links)))
"""


def _python_for_nobody() -> str | None:
    """A Python 3.11+ the user 'nobody' can run (the test's own may be in root's home)."""
    for python in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        done = subprocess.run([*_AS_NOBODY, python, "-c", "import sqlite3, sys; "
                               "sys.exit(sys.version_info < (3, 11))"], capture_output=True,
                              check=False)
        if done.returncode == 0:
            return python
    return None


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root, to read as another user")
def test_permissions_0444_0555_read_by_another_user(tmp_path: Path, engine: Engine) -> None:
    """Root ignores permissions, so 'nobody' reads the read-only file in the read-only
    folder, with the store modules alone (the engine's dependencies may be out of its
    reach). SQLite says SQLITE_READONLY_DIRECTORY there, not SQLITE_CANTOPEN as on a mount."""
    python = _python_for_nobody()
    if python is None:
        pytest.skip("no Python 3.11+ that the user 'nobody' can run")
    base = Path(tempfile.mkdtemp(prefix="gpu-advisor-readonly-"))
    store = base / "store"
    try:
        base.chmod(0o755)
        package = base / "src" / "engine"
        (package / "audit").mkdir(parents=True)
        (package / "files").mkdir()  # the store's helpers: escaping, the file checks
        for name in ("__init__.py", "errors.py", "version.py",
                     *(f"{folder}/{m.name}" for folder in ("audit", "files")
                       for m in (ROOT / "engine" / folder).glob("*.py"))):
            shutil.copyfile(ROOT / "engine" / name, package / name)
        # the store reads compressed records: its one dependency goes along
        shutil.copytree(Path(zstandard.__file__).parent, base / "src" / "zstandard",
                        ignore=shutil.ignore_patterns("__pycache__"))
        for path in (base / "src", *(base / "src").rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        db = store / "audit.sqlite3"
        store.mkdir()
        fill(db, engine, 2)
        db.chmod(0o444)
        store.chmod(0o555)
        done = subprocess.run([*_AS_NOBODY, python, "-c", _READ_AS_NOBODY, str(base / "src"),
                               str(db)], capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "plain connection: attempt to write a readonly database\n2 2\n"
        assert sorted(p.name for p in store.iterdir()) == [db.name]
    finally:
        if store.exists():
            store.chmod(0o755)
        shutil.rmtree(base)


def _open_store_copy(tmp_path: Path, engine: Engine, *, shm: bool) -> Path:
    """A copy of a store taken while its writer still has records only in the -wal file
    (and, with ``shm``, its -shm index): what a killed writer leaves."""
    source = tmp_path / "live" / "audit.sqlite3"
    source.parent.mkdir()
    copy = tmp_path / "ro" / "audit.sqlite3"
    copy.parent.mkdir()
    fill(source, engine, 1)
    with AuditStore(source) as store:
        answers = validate_answers({"hours_per_year": 3210}, engine.catalog)
        store.append(engine.recommend(answers), engine.rulebook.texts, engine.catalog.texts)
        for suffix in ("", "-wal", *(("-shm",) if shm else ())):
            shutil.copyfile(f"{source}{suffix}", f"{copy}{suffix}")
    assert Path(f"{copy}-wal").stat().st_size > 0
    return copy


def _no_wal_index(db: Path) -> None:
    """Make SQLite unable to create the store's -shm index, as in a read-only folder, even
    for root: a dangling symbolic link in its place."""
    Path(f"{db}-shm").unlink(missing_ok=True)
    Path(f"{db}-shm").symlink_to(db.parent / "missing" / "shm")


def test_read_only_folder_without_a_wal_index_is_still_readable(runner: CliRunner,
                                                                tmp_path: Path,
                                                                engine: Engine) -> None:
    db, _ = _closed_store(tmp_path, engine)
    _no_wal_index(db)
    conn = sqlite3.connect(db)  # what a plain connection (the code before) made of it
    try:
        with pytest.raises(sqlite3.OperationalError, match="unable to open database file"):
            conn.execute("SELECT count(*) FROM decisions")
    finally:
        conn.close()
    _assert_readable(runner, db, 2)


def test_unreadable_wal_is_refused_not_ignored(runner: CliRunner, tmp_path: Path,
                                               engine: Engine) -> None:
    """Without the -shm index SQLite could read the file only by ignoring the -wal file's
    records (the last one here): say so instead of verifying a shorter chain."""
    db = _open_store_copy(tmp_path, engine, shm=False)
    _no_wal_index(db)
    result = runner.invoke(cli, ["audit", "verify", "--audit-db", str(db)])
    line = one_error_line(result.exit_code, result.stdout, result.stderr)
    assert line == (f"error: {db}: cannot read the store's write-ahead log here (its folder is "
                    "read-only and the -shm index is missing); copy the store with its -wal "
                    "file to a writable folder and read the copy")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="needs root mount")
def test_read_only_mount_with_wal_and_index_reads_the_wal(runner: CliRunner, tmp_path: Path,
                                                          engine: Engine) -> None:
    db = _open_store_copy(tmp_path, engine, shm=True)
    view = tmp_path / "view"
    view.mkdir()
    with mounted("--bind", "-o", "ro", str(db.parent), str(view)):
        _assert_readable(runner, view / db.name, 2)


def _assert_readable(runner: CliRunner, db: Path, count: int) -> None:
    """verify, list, show and replay work on a store that cannot be written to."""
    result = runner.invoke(cli, ["audit", "verify", "--audit-db", str(db)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"ok: {count} record(s), chain intact; head {count}:")
    result = runner.invoke(cli, ["audit", "list", "--audit-db", str(db), "--format", "json"])
    assert result.exit_code == 0, result.output
    ids = [item["id"] for item in json.loads(result.stdout)]
    assert len(ids) == count
    result = runner.invoke(cli, ["audit", "show", ids[-1], "--audit-db", str(db), "--format",
                                 "json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["decision_id"] == ids[-1]
    result = runner.invoke(cli, ["audit", "replay", ids[0], "--audit-db", str(db)])
    assert result.exit_code == 0 and result.stdout.endswith(": identical\n"), result.output


# -- concurrent writers --------------------------------------------------------------------------
@pytest.mark.slow
def test_eight_threads_25_appends_each_on_their_own_connections(tmp_path: Path,
                                                                engine: Engine) -> None:
    db = tmp_path / "audit.sqlite3"
    threads, each = 8, 25
    answers = validate_answers({"hours_per_year": 4321}, engine.catalog)
    one = engine.recommend(answers)
    decisions = [[one.model_copy(update={"decision_id": f"t{t}-{i:03d}"}) for i in range(each)]
                 for t in range(threads)]
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def work(t: int) -> None:
        try:
            start.wait()
            with AuditStore(db) as store:
                for decision in decisions[t]:
                    store.append(decision, engine.rulebook.texts, engine.catalog.texts)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not errors, errors
    assert verified(db) == threads * each
    with AuditStore(db) as store:
        ids = [r.id for r in store.iter_all()]
    assert sorted(ids) == sorted(f"t{t}-{i:03d}" for t in range(threads) for i in range(each))
    for t in range(threads):  # each thread's own records stay in its order
        mine = [i for i in ids if i.startswith(f"t{t}-")]
        assert mine == sorted(mine)


@pytest.mark.slow
def test_four_processes_25_appends_each(tmp_path: Path, writer_template: Path,
                                        processes: list[subprocess.Popen[bytes]]) -> None:
    db = tmp_path / "audit.sqlite3"
    processes += [spawn(db, writer_template, k, 25) for k in range(4)]
    for proc in processes:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert verified(db) == 100
