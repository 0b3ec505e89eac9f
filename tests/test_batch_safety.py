"""``gpu-advisor batch`` under attack: it never destroys a file and no line kills the batch.

- ``--out`` that is the input (directly, through a symlink or a hardlink), a directory, a FIFO
  or a device is refused with one line and exit 2, before anything is opened for writing.
- Output is atomic: a failed run (a bad policy, a failure half-way) leaves an existing
  ``--out`` byte for byte; an interrupted one (SIGINT, SIGTERM, with 1 or 2 workers) leaves it
  too and keeps the complete records so far in ``OUT.partial``, with one line on stderr.
- Every failing line is that line's error record (tests/bad_inputs/batch/: deep nesting,
  surrogates, escape sequences, huge values…; over-long lines), the same with 1 worker,
  2 workers and Dask; a 200 MB line costs little memory (a real process under RLIMIT_AS).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.measured import run_engine

from engine.batch.files import read_lines
from engine.batch.lines import Oversized, evaluate_lines
from engine.cli import cli

HERE = Path(__file__).parent
ROOT = HERE.parent
CORPUS = HERE / "bad_inputs" / "batch"
LIMIT = 100_000  # catalog/policy.yaml: batch_line_max_bytes
GOOD = [json.dumps({"model": "llama-3.1-8b", "hours_per_year": 400, "budget_usd": 3000}),
        json.dumps({"model": "mistral-7b", "hours_per_year": 1500, "usage_pattern": "bursty"})]

# every corpus file is: a good line, the bad line 2, a good line
CORPUS_ERRORS = {
    "deep-array.jsonl": "nesting deeper than 40 levels",
    "deep-object.jsonl": "nesting deeper than 40 levels",
    "deep-41-levels.jsonl": "nesting deeper than 40 levels",
    "invalid-json.jsonl":
        "invalid JSON: Expecting property name enclosed in double quotes at column 26",
    "not-an-object.jsonl": "expected a JSON object of answers, got an array",
    "lone-surrogate.jsonl":
        "model: unknown model '\\ud800'; see `gpu-advisor catalog list models`",
    "escape-sequence-key.jsonl": "\\u001b[2J\\u001b]0;pwned\\u0007: unknown answer",
    "huge-quoted-value.jsonl":
        f"model: unknown model '{'x' * 78}… see `gpu-advisor catalog list models`",
    "huge-integer.jsonl": "invalid JSON: integer of 5,000 digits is too long (at most 400)",
    "huge-float.jsonl": "budget_usd: expected a finite number, got inf",
    "nan.jsonl": "invalid JSON: NaN is not a number this tool accepts",
    "duplicate-key.jsonl": "invalid JSON: duplicate key 'budget_usd'",
    "invalid-utf8.jsonl": "model: unknown model 'caf\ufffd'; see `gpu-advisor catalog list "
                          "models`",
    # a line that names no model is not recommended on the default model
    "no-model.jsonl": "names no model: give model or model_params_b",
    # a line's model path is not looked at (no existence probe, no model_type quoted back)
    "model-file-probe.jsonl": "model: names a model's config, which is read only where "
                              "answers come in (recommend, whatif, ask, import; batch with "
                              "--allow-model-files); give its shape as model_shape",
    "model-home-of-unknown-user.jsonl": "model: names a model's config, which is read only "
                                        "where answers come in (recommend, whatif, ask, "
                                        "import; batch with --allow-model-files); give its "
                                        "shape as model_shape",
}


def run_batch(runner: CliRunner, source: Path, out: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(cli, ["batch", str(source), "--out", str(out), *args])
    return result.exit_code, result.stderr


def records_of(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def leftovers(folder: Path) -> list[str]:
    """Temporary files a run left behind."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def over_long_line(size: int) -> str:
    """A JSON line of exactly ``size`` bytes (a long model name)."""
    return '{"model": "' + "a" * (size - 13) + '"}'


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(f"{line}\n" for line in GOOD), encoding="utf-8")
    return path


# --------------------------------------------------------------------- --out is the input
@pytest.mark.parametrize("how", ["same path", "symlink", "hardlink", "relative path"])
def test_out_that_is_the_input_is_refused_and_the_input_kept(
        how: str, runner: CliRunner, source: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = source.read_bytes()
    out = {"same path": source, "symlink": tmp_path / "link.jsonl",
           "hardlink": tmp_path / "hard.jsonl", "relative path": Path("./in.jsonl")}[how]
    if how == "symlink":
        out.symlink_to(source)
    elif how == "hardlink":
        out.hardlink_to(source)
    monkeypatch.chdir(tmp_path)
    code, stderr = run_batch(runner, source, out)
    assert (code, stderr) == (
        2, f"error: {out}: --out: is the input file {source}; choose another output file\n")
    assert source.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_out_whose_partial_file_is_the_input_is_refused(
        runner: CliRunner, tmp_path: Path) -> None:
    source = tmp_path / "out.jsonl.partial"
    source.write_text(f"{GOOD[0]}\n", encoding="utf-8")
    code, stderr = run_batch(runner, source, tmp_path / "out.jsonl")
    assert code == 2
    assert stderr == (f"error: {tmp_path / 'out.jsonl'}: --out: has the partial file {source}, "
                      f"which is the input file {source}; choose another output file\n")
    assert source.read_text(encoding="utf-8") == f"{GOOD[0]}\n"


@pytest.mark.slow
def test_out_that_is_the_input_is_refused_in_a_real_process(source: Path,
                                                            tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    before = source.read_bytes()
    done = subprocess.run([sys.executable, "-m", "engine", "batch", str(source), "--out",
                           str(link)], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"error: {link}: --out: is the input file {source}; choose another "
                           "output file\n")
    assert source.read_bytes() == before


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_out_that_is_not_a_regular_file_is_refused_without_blocking(
        kind: str, source: Path, tmp_path: Path) -> None:
    out = {"directory": tmp_path, "fifo": tmp_path / "fifo", "device": Path("/dev/null")}[kind]
    if kind == "fifo":
        os.mkfifo(out)
    if not out.exists():  # pragma: no cover - depends on the OS
        pytest.skip(f"no {out}")
    done = subprocess.run([sys.executable, "-m", "engine", "batch", str(source), "--out",
                           str(out)], capture_output=True, text=True, timeout=120, check=False)
    name = {"directory": "a directory", "fifo": "a FIFO (named pipe)",
            "device": "a character device"}[kind]
    assert (done.returncode, done.stderr) == (
        2, f"error: {out}: --out: is {name}, not a regular file\n")


@pytest.mark.slow
def test_input_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "out.jsonl"
    done = subprocess.run([sys.executable, "-m", "engine", "batch", str(fifo), "--out",
                           str(out)], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (
        2, f"error: {fifo}: is a FIFO (named pipe), not a regular file; expected a file of "
           "JSON lines\n")
    assert not out.exists()


# ------------------------------------------------------------------------ atomic output
@pytest.mark.slow
def test_a_bad_policy_leaves_an_existing_out_untouched(
        runner: CliRunner, source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"previous results\n")
    for workers in ("1", "2"):
        code, stderr = run_batch(runner, source, out, "--rules", "/nonexistent",
                                 "--workers", workers, "--force")
        assert (code, stderr) == (2, "error: /nonexistent: no such rule file or directory\n")
        assert out.read_bytes() == b"previous results\n"
    assert leftovers(tmp_path) == []


def test_a_failure_half_way_leaves_an_existing_out_untouched(
        runner: CliRunner, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.batch import pool
    from engine.errors import EngineError

    calls: list[int] = []

    def fail_on_second_chunk(*args: object) -> list[str]:
        calls.append(1)
        if len(calls) == 2:
            raise EngineError("the policy went away")
        return evaluate_lines(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(pool, "evaluate_lines", fail_on_second_chunk)
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"previous results\n")
    code, stderr = run_batch(runner, source, out, "--chunk-size", "1", "--force")
    assert (code, stderr) == (2, "error: the policy went away\n")
    assert out.read_bytes() == b"previous results\n"
    assert leftovers(tmp_path) == []


def test_a_completed_run_replaces_out_and_keeps_its_mode(
        runner: CliRunner, source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"previous results\n")
    out.chmod(0o640)
    code, stderr = run_batch(runner, source, out)
    assert (code, stderr) == (2, f"error: {out}: --out: already exists; give --force to "
                                 "replace it\n")
    assert out.read_bytes() == b"previous results\n"
    code, _ = run_batch(runner, source, out, "--force")
    assert code == 0
    assert [r["line"] for r in records_of(out)] == [1, 2]
    assert out.stat().st_mode & 0o777 == 0o640
    assert leftovers(tmp_path) == []


def test_through_a_symlink_the_target_is_replaced_and_the_link_kept(
        runner: CliRunner, source: Path, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "results.jsonl"
    target.write_bytes(b"old\n")
    link = tmp_path / "results.jsonl"
    link.symlink_to(target)
    code, _ = run_batch(runner, source, link, "--force")
    assert code == 0
    assert link.is_symlink()
    assert [r["line"] for r in records_of(target)] == [1, 2]


def test_an_unwritable_out_folder_is_refused_before_the_run(
        runner: CliRunner, source: Path, tmp_path: Path) -> None:
    out = tmp_path / "missing" / "out.jsonl"
    code, stderr = run_batch(runner, source, out)
    assert (code, stderr) == (2, f"error: {out}: --out: folder {out.parent} does not exist\n")


# ------------------------------------------------------------------- one line, one record
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CORPUS_ERRORS))
def test_each_bad_line_is_its_own_error_record(name: str, runner: CliRunner,
                                               tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    code, stderr = run_batch(runner, CORPUS / name, out)
    assert code == 1
    records = records_of(out)
    assert [r["line"] for r in records] == [1, 2, 3]
    assert records[1] == {"line": 2, "error": CORPUS_ERRORS[name]}
    assert "decision" in records[0] and "decision" in records[2]
    assert stderr.splitlines() == [f"error: {CORPUS / name}:2: {CORPUS_ERRORS[name]}",
                                   f"batch: 3 result(s) written to {out}, 1 failed"]


def test_the_corpus_has_an_expectation_for_every_file() -> None:
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(CORPUS_ERRORS)


def test_lines_at_and_over_the_limit(runner: CliRunner, tmp_path: Path) -> None:
    """At the limit (spaces padding a good line, CRLF not counted) a line is evaluated."""
    at_limit = GOOD[0][:-1] + " " * (LIMIT - len(GOOD[0])) + "}"
    source = tmp_path / "in.jsonl"
    source.write_bytes(f"{at_limit}\r\n{over_long_line(LIMIT + 1)}\r\n{GOOD[1]}".encode())
    out = tmp_path / "out.jsonl"
    code, _ = run_batch(runner, source, out)
    assert code == 1
    records = records_of(out)
    assert "decision" in records[0] and "decision" in records[2]
    assert records[1] == {"line": 2, "error": "line is 100,001 bytes; the limit is 100,000"}


@pytest.mark.slow
def test_the_limit_is_the_policys(runner: CliRunner, source: Path, tmp_path: Path,
                                  catalog_copy: Path) -> None:
    policy = catalog_copy / "policy.yaml"
    text = policy.read_text(encoding="utf-8")
    policy.write_text(text.replace("    value: 100000\n", "    value: 50\n"), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code, _ = run_batch(runner, source, out, "--catalog", str(catalog_copy))
    assert code == 1
    assert records_of(out) == [
        {"line": 1, "error": f"line is {len(GOOD[0])} bytes; the limit is 50"},
        {"line": 2, "error": f"line is {len(GOOD[1])} bytes; the limit is 50"}]


@pytest.mark.parametrize(("data", "limit", "expected"), [
    (b"abc\ndefgh\r\n\nij", 4, [(1, "abc"), (2, Oversized(5)), (3, ""), (4, "ij")]),
    (b"\xef\xbb\xbfabcd\r\n", 4, [(1, "abcd")]),
    (b"abcde\r\n", 4, [(1, Oversized(5))]),
    (b"x" * 5000 + b"\nok", 10, [(1, Oversized(5000)), (2, "ok")]),
    (b"x" * 5000, 10, [(1, Oversized(5000))]),
    (b"caf\xe9\n", 10, [(1, "caf\ufffd")]),
])
def test_read_lines_bounds_every_line(data: bytes, limit: int,
                                      expected: list[tuple[int, object]]) -> None:
    assert list(read_lines(io.BytesIO(data), limit)) == expected


def test_read_lines_skips_an_over_long_line_in_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.batch.files

    class Recording(io.BytesIO):
        largest = 0

        def readline(self, size: int | None = -1) -> bytes:
            line = super().readline(size)
            Recording.largest = max(Recording.largest, len(line))
            return line

    monkeypatch.setattr(engine.batch.files, "PIECE_BYTES", 1000)
    stream = Recording(b"{" + b" " * 1_000_000 + b"}\n" + GOOD[0].encode())
    assert list(read_lines(stream, 100)) == [(1, Oversized(1_000_002)), (2, GOOD[0])]
    assert Recording.largest == 1000


# ------------------------------------------------------------ same records, every path
@pytest.fixture(scope="module")
def mixed_input(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every corpus bad line and two over-long lines among good ones."""
    lines: list[bytes] = []
    for name in sorted(CORPUS_ERRORS):
        lines.append((CORPUS / name).read_bytes().splitlines()[1])
        lines.append(GOOD[len(lines) % 2].encode())
    lines[3:3] = [over_long_line(LIMIT + 1).encode(), b"", over_long_line(300_000).encode()]
    path = tmp_path_factory.mktemp("mixed") / "in.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture(scope="module")
def mixed_one_worker(mixed_input: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("one") / "out.jsonl"
    code, _ = run_batch(CliRunner(), mixed_input, out)
    assert code == 1
    return out.read_bytes()


def test_mixed_bad_lines_one_record_each_with_one_worker(mixed_one_worker: bytes) -> None:
    records = [json.loads(line) for line in mixed_one_worker.decode().splitlines()]
    errors = {r["line"]: r["error"] for r in records if "error" in r}
    assert len(records) == 2 * len(CORPUS_ERRORS) + 2  # the blank line has no record
    assert sorted(errors.values()) == sorted([
        *CORPUS_ERRORS.values(), "line is 100,001 bytes; the limit is 100,000",
        "line is 300,000 bytes; the limit is 100,000"])
    assert len(records) - len(errors) == len(CORPUS_ERRORS)


@pytest.mark.slow
def test_mixed_bad_lines_two_workers_write_the_same_bytes(
        runner: CliRunner, mixed_input: Path, mixed_one_worker: bytes, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    code, _ = run_batch(runner, mixed_input, out, "--workers", "2", "--chunk-size", "3")
    assert code == 1
    assert out.read_bytes() == mixed_one_worker


@pytest.fixture(scope="module")
def dask_client() -> Iterator[object]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.mark.slow
def test_mixed_bad_lines_dask_writes_the_same_bytes(
        dask_client: object, mixed_input: Path, mixed_one_worker: bytes,
        tmp_path: Path) -> None:
    from engine.batch.distributed import run_on_dask

    out = tmp_path / "dask.jsonl"
    failed = run_on_dask(mixed_input, out, client=dask_client, npartitions=3)
    assert failed == len(CORPUS_ERRORS) + 2
    assert out.read_bytes() == mixed_one_worker


@pytest.mark.slow
def test_dask_refuses_the_input_as_output_and_keeps_out_on_a_bad_policy(
        dask_client: object, source: Path, tmp_path: Path) -> None:
    from engine.batch.distributed import run_on_dask
    from engine.errors import InputError

    before = source.read_bytes()
    with pytest.raises(InputError, match="--out: is the input file"):
        run_on_dask(source, source, client=dask_client)
    assert source.read_bytes() == before
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"previous results\n")
    with pytest.raises(Exception, match="no such rule file or directory"):
        run_on_dask(source, out, client=dask_client, rules=Path("/nonexistent"), force=True)
    assert out.read_bytes() == b"previous results\n"
    assert leftovers(tmp_path) == []


def test_a_recursion_error_anywhere_is_the_lines_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.batch.lines

    def recurse(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    pairs = [(1, GOOD[0]), (2, GOOD[1])]
    monkeypatch.setattr(engine.batch.lines, "validate_answers", recurse)
    assert evaluate_lines(pairs) == [
        '{"line":1,"error":"nested too deeply to evaluate"}',
        '{"line":2,"error":"nested too deeply to evaluate"}']
    monkeypatch.setattr(engine.batch.lines, "validate_answers", no_memory)
    assert evaluate_lines(pairs[:1]) == ['{"line":1,"error":"out of memory evaluating this line"}']


# --------------------------------------------------------- real processes: memory, signals
AS_LIMIT = 1024 * 1024 * 1024
RSS_LIMIT_KB = 200 * 1024


@pytest.fixture(scope="module")
def child_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("child")
    return {**os.environ, "GPU_ADVISOR_AUDIT_DB": str(base / "audit.sqlite3"),
            "GPU_ADVISOR_CACHE_DIR": str(base / "cache")}


@pytest.mark.slow
def test_a_200_mb_line_is_one_error_record_at_little_memory(
        tmp_path: Path, child_env: dict[str, str]) -> None:
    """Under RLIMIT_AS (1 GB); peak RSS of this child alone (os.wait4); nothing echoed."""
    size = 200 * 1024 * 1024
    source = tmp_path / "in.jsonl"
    with source.open("wb") as handle:
        handle.write(f'{GOOD[0]}\n{{"model": "'.encode())
        block = b"a" * (1 << 20)
        for _ in range(size // len(block)):
            handle.write(block)
        handle.write(f'"}}\n{GOOD[1]}\n'.encode())
    out, errors = tmp_path / "out.jsonl", tmp_path / "stderr.txt"
    with errors.open("wb") as stderr:
        measure, _ = run_engine(["batch", str(source), "--out", str(out)], tmp_path / "rss",
                                env=child_env, timeout=120, stderr=stderr)
    message = f"line is {size + 13:,} bytes; the limit is 100,000"
    assert errors.read_text(encoding="utf-8", errors="replace").splitlines() == [
        f"error: {source}:2: {message}", f"batch: 3 result(s) written to {out}, 1 failed"]
    assert measure.returncode == 1
    assert 0 < measure.max_rss_kb < RSS_LIMIT_KB, measure.max_rss_kb
    records = records_of(out)
    assert [r["line"] for r in records] == [1, 2, 3]
    assert records[1] == {"line": 2, "error": message}


def _scenarios(count: int) -> list[str]:
    models = ["llama-3.1-8b", "mistral-7b", "qwen2.5-14b", "gemma-2-2b"]
    return [json.dumps({"model": models[i % 4], "hours_per_year": 100 + i % 5000,
                        "budget_usd": 1000 + 10 * i}) for i in range(count)]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Running:
    """A real ``gpu-advisor batch`` in its own process group, stderr read as it comes, with
    Ctrl-C as a terminal gives it (when the tests run as a background job, SIGINT would be
    inherited ignored, and batch keeps an ignored SIGINT ignored)."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "engine", "batch", *args], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True,
                                     preexec_fn=_default_sigint)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def wait_for_output(self, folder: Path, timeout: float = 120) -> None:
        """Until the temporary output file holds some records (no fixed sleep)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(_size(p) > 0 for p in folder.glob(".out.jsonl.*.tmp")):
                return
            assert self.proc.poll() is None, "batch ended before writing anything"
            time.sleep(0.01)
        raise AssertionError("no output within the timeout")

    def stderr_lines(self, timeout: float = 120) -> list[str]:
        self.proc.wait(timeout=timeout)
        lines = []
        while (line := self.lines.get(timeout=timeout)) is not None:
            lines.append(line)
        return lines


def _size(path: Path) -> int:
    """Bytes in ``path``; 0 when it went between the listing and the look (a renamed file)."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.parametrize(("workers", "signum"), [("1", signal.SIGINT), ("2", signal.SIGINT),
                                                 ("1", signal.SIGTERM)])
def test_an_interrupted_run_keeps_out_and_a_complete_prefix(
        workers: str, signum: int, tmp_path: Path, child_env: dict[str, str]) -> None:
    lines = _scenarios(4000)
    source = tmp_path / "in.jsonl"
    source.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"previous results\n")
    run = _Running([str(source), "--out", str(out), "--force", "--workers", workers,
                    "--chunk-size", "10"], child_env)
    try:
        run.wait_for_output(tmp_path)
        os.killpg(run.proc.pid, signum)  # the whole group, as Ctrl-C in a terminal does
        stderr = run.stderr_lines()
    finally:
        if run.proc.poll() is None:  # pragma: no cover - only when the test fails
            os.killpg(run.proc.pid, signal.SIGKILL)
    partial = tmp_path / "out.jsonl.partial"
    kept = partial.read_text(encoding="utf-8").splitlines()
    what = "Interrupted" if signum == signal.SIGINT else "Terminated"
    assert stderr == [f"{what}: {out} was not changed; the {len(kept)} result(s) written so far "
                      f"are in {partial}."]
    assert run.proc.returncode == 128 + signum
    assert out.read_bytes() == b"previous results\n"
    assert 10 <= len(kept) < len(lines)
    assert kept == evaluate_lines(list(enumerate(lines[:len(kept)], 1)))
    assert leftovers(tmp_path) == []


def _workers_of(pid: int) -> list[int]:
    """The multiprocessing worker processes among ``pid``'s children (Linux /proc)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(child) for child in children if _is_worker(int(child))]


def _is_worker(pid: int) -> bool:
    """Whether ``pid`` is a live multiprocessing worker (a zombie's cmdline is empty)."""
    with contextlib.suppress(OSError):
        return b"--multiprocessing-fork" in Path(f"/proc/{pid}/cmdline").read_bytes()
    return False


@pytest.mark.slow
@pytest.mark.skipif(not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists(),
                    reason="needs /proc/PID/task/PID/children")
def test_ctrl_c_while_workers_start_prints_one_line_and_stops_them(
        tmp_path: Path, child_env: dict[str, str]) -> None:
    """Ctrl-C as soon as the workers exist (still importing): no worker traceback."""
    source = tmp_path / "in.jsonl"
    source.write_text("".join(f"{line}\n" for line in _scenarios(2000)), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    run = _Running([str(source), "--out", str(out), "--workers", "2"], child_env)
    try:
        deadline = time.monotonic() + 120
        while len(workers := _workers_of(run.proc.pid)) < 2:
            assert run.proc.poll() is None and time.monotonic() < deadline, "no workers"
            time.sleep(0.005)
        os.killpg(run.proc.pid, signal.SIGINT)
        stderr = run.stderr_lines()
    finally:
        if run.proc.poll() is None:  # pragma: no cover - only when the test fails
            os.killpg(run.proc.pid, signal.SIGKILL)
    assert run.proc.returncode == 130
    assert len(stderr) == 1, stderr
    assert re.fullmatch(rf"Interrupted: {re.escape(str(out))} was not changed; the \d+ "
                        r"result\(s\) written so far are in .*out\.jsonl\.partial\.", stderr[0])
    assert not out.exists()
    deadline = time.monotonic() + 60
    while any(_is_worker(pid) for pid in workers):
        assert time.monotonic() < deadline, "workers still running"
        time.sleep(0.01)
