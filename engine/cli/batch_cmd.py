"""``gpu-advisor batch``: many teams' answers (JSON lines) in, one result line each out."""

from __future__ import annotations

import collections
import multiprocessing
import sys
from collections.abc import Callable, Iterator
from multiprocessing.pool import AsyncResult
from pathlib import Path
from typing import IO, Any

import click

from engine.batch import (
    DEFAULT_CHUNK_SIZE,
    Line,
    chunked,
    evaluate_lines,
    numbered,
    record_error,
    record_line,
)
from engine.cli.options import catalog_options, rules_option
from engine.errors import EngineError, InputError

IN_FLIGHT_PER_WORKER = 4
"""Chunks queued per worker: keeps every worker busy while bounding memory (no read-ahead of
the whole input, unlike ``Pool.imap``, whose feeder thread drains the input iterator)."""


class _WorkerFailed(EngineError):
    """A worker could not load the policy; carries the worker's message and exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@click.command()
@click.argument("in_path", type=click.Path(path_type=Path), metavar="IN.jsonl")
@click.option("--out", "out_path", type=click.Path(path_type=Path, dir_okay=False),
              required=True, metavar="OUT.jsonl", help="Where to write the results (JSON lines).")
@click.option("--workers", type=click.IntRange(1, 1024), default=1, show_default=True,
              metavar="N", help="Worker processes (each loads the policy once).")
@click.option("--chunk-size", type=click.IntRange(1, 1_000_000), default=None, metavar="LINES",
              help=f"Lines per unit of work sent to a worker [default: {DEFAULT_CHUNK_SIZE}, "
                   "less for small inputs so every worker gets some].")
@rules_option
@catalog_options
def batch(in_path: Path, out_path: Path, workers: int, chunk_size: int | None,
          rules_dir: Path | None, catalog_dir: Path | None, prices: Path | None) -> None:
    """Evaluate many answers (one JSON object per line) into OUT.jsonl, order preserved.

    Each output line is {"line": N, "decision": {...}} or, for a line that could not be
    evaluated, {"line": N, "error": "..."} (also reported on stderr); the other lines go on.
    Blank lines are skipped. decision_id is derived from the line number (batch-000000042),
    so the same input always gives the same output, whatever --workers is.

    Batch results are NOT recorded in the audit store.

    Exit status: 0 if every line was evaluated, 1 if any line failed, 2 on a missing input
    file or an unusable policy.

    \b
    Example:
      gpu-advisor batch teams.jsonl --out decisions.jsonl --workers 4
    """
    if not in_path.is_file():
        raise InputError("no such input file", path=str(in_path))
    tty = sys.stderr.isatty()
    total = _count_lines(in_path) if tty or (workers > 1 and chunk_size is None) else None
    if chunk_size is None:
        chunk_size = _chunk_size(total, workers)
    failed = done = 0
    with _Progress(tty, total) as (report, advance), \
            in_path.open(encoding="utf-8-sig", errors="replace", newline="") as source, \
            _open_out(out_path) as out:
        chunks = chunked(numbered(source), chunk_size)
        for records in _results(chunks, workers, rules_dir, catalog_dir, prices):
            for record in records:
                out.write(record)
                out.write("\n")
                error = record_error(record)
                if error is not None:
                    failed += 1
                    report(f"error: {in_path}:{record_line(record)}: {error}")
            done += len(records)
            advance(len(records))
    click.echo(f"batch: {done} result(s) written to {out_path}, {failed} failed", err=True)
    if failed:
        sys.exit(1)


def _results(chunks: Iterator[list[Line]], workers: int, rules: Path | None,
             catalog: Path | None, prices: Path | None) -> Iterator[list[str]]:
    """Each chunk's output records, in input order."""
    if workers == 1:
        for chunk in chunks:
            yield evaluate_lines(chunk, rules, catalog, prices)
        return
    # spawn: a fresh interpreter per worker, which builds its own durable_rules engine (an
    # engine must never cross a fork). Each worker loads the policy once, in _init_worker.
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, initializer=_init_worker, initargs=(rules, catalog, prices)) as pool:
        pending: collections.deque[AsyncResult[tuple[int, list[str] | str]]] = collections.deque()
        for chunk in chunks:
            pending.append(pool.apply_async(_work, (chunk, rules, catalog, prices)))
            if len(pending) >= workers * IN_FLIGHT_PER_WORKER:
                yield _unpack(pending.popleft().get())
        while pending:
            yield _unpack(pending.popleft().get())


_WORKER_ERROR: tuple[int, str] | None = None


def _init_worker(rules: Path | None, catalog: Path | None, prices: Path | None) -> None:
    """Load (and compile) the policy once per worker process."""
    global _WORKER_ERROR
    try:
        evaluate_lines([], rules, catalog, prices)
    except EngineError as exc:  # raising here would make the pool respawn workers forever
        _WORKER_ERROR = (exc.exit_code, str(exc))


def _work(chunk: list[Line], rules: Path | None, catalog: Path | None,
          prices: Path | None) -> tuple[int, list[str] | str]:
    if _WORKER_ERROR is not None:
        return _WORKER_ERROR
    try:
        return 0, evaluate_lines(chunk, rules, catalog, prices)
    except EngineError as exc:
        return exc.exit_code, str(exc)


def _unpack(result: tuple[int, list[str] | str]) -> list[str]:
    code, payload = result
    if isinstance(payload, str):
        raise _WorkerFailed(payload, code)
    return payload


def _chunk_size(total: int | None, workers: int) -> int:
    """The default chunk size, smaller when the input is too short to keep all workers busy."""
    if total is None or workers == 1:
        return DEFAULT_CHUNK_SIZE
    return max(1, min(DEFAULT_CHUNK_SIZE, -(-total // (workers * IN_FLIGHT_PER_WORKER))))


def _count_lines(path: Path) -> int | None:
    """Lines in the file, for the progress bar's total (only computed on a terminal)."""
    try:
        with path.open("rb") as handle:
            return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))
    except OSError:
        return None


class _Progress:
    """A rich progress bar on stderr when it is a terminal; plain stderr lines otherwise."""

    def __init__(self, enabled: bool, total: int | None) -> None:
        self._enabled = enabled
        self._total = total
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> tuple[Callable[[str], None], Callable[[int], None]]:
        if self._enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(TextColumn("batch"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("batch", total=self._total)
        return self._report, self._advance

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def _report(self, message: str) -> None:
        if self._bar is not None:
            self._bar.console.print(message, markup=False, highlight=False, soft_wrap=True)
        else:
            click.echo(message, err=True)

    def _advance(self, count: int) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, count)


def _open_out(path: Path) -> IO[str]:
    try:
        return path.open("w", encoding="utf-8", newline="\n")
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", path=str(path)) from None
