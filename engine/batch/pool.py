"""Batch evaluation on local worker processes: chunks of lines in, their records out in input
order, each worker loading the policy once (the local counterpart of
:mod:`engine.batch.distributed`, both mapping :func:`engine.batch.lines.evaluate_lines`)."""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import signal
from collections.abc import Generator, Iterator
from multiprocessing import resource_tracker
from multiprocessing.pool import AsyncResult
from pathlib import Path
from typing import TYPE_CHECKING

from engine.batch.lines import DEFAULT_CHUNK_SIZE, Line, evaluate_lines
from engine.errors import EngineError

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput

IN_FLIGHT_PER_WORKER = 4
"""Chunks queued per worker: keeps every worker busy while bounding memory (no read-ahead of
the whole input, unlike ``Pool.imap``, whose feeder thread drains the input iterator)."""

Policy = tuple[Path | None, Path | None, "PriceInput | None", bool]
"""The ``--rules`` and ``--catalog`` paths, the ``--prices`` file read (None: bundled) and
``--allow-model-files``."""


class WorkerFailed(EngineError):
    """A worker could not load the policy; carries the worker's message and exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code



def results(chunks: Iterator[list[Line]], workers: int,
             policy: Policy) -> Generator[list[str], None, None]:
    """Each chunk's output records, in input order."""
    if workers == 1:
        for chunk in chunks:
            yield evaluate_lines(chunk, *policy)
        return
    # spawn: a fresh interpreter per worker, which builds its own durable_rules engine (an
    # engine must never cross a fork). Each worker loads the policy once, in _init_worker.
    context = multiprocessing.get_context("spawn")
    with contextlib.ExitStack() as stack:
        with _sigint_blocked():
            pool = stack.enter_context(
                context.Pool(workers, initializer=_init_worker, initargs=policy))
        pending: collections.deque[AsyncResult[tuple[int, list[str] | str]]] = collections.deque()
        for chunk in chunks:
            pending.append(pool.apply_async(_work, (chunk, *policy)))
            if len(pending) >= workers * IN_FLIGHT_PER_WORKER:
                yield _unpack(pending.popleft().get())
        while pending:
            yield _unpack(pending.popleft().get())


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread meanwhile; processes started now inherit the block, so a
    Ctrl-C reaches only this process (which stops the workers) and is not lost here."""
    resource_tracker.ensure_running()  # starting it later would unblock SIGINT
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


_WORKER_ERROR: tuple[int, str] | None = None


def _init_worker(rules: Path | None, catalog: Path | None, prices: PriceInput | None,
                 allow_model_files: bool) -> None:
    """Ignore Ctrl-C (the parent stops the pool) and load the policy once per worker."""
    global _WORKER_ERROR
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # see _sigint_blocked
    try:
        evaluate_lines([], rules, catalog, prices)
    except EngineError as exc:  # raising here would make the pool respawn workers forever
        _WORKER_ERROR = (exc.exit_code, str(exc))


def _work(chunk: list[Line], rules: Path | None, catalog: Path | None,
          prices: PriceInput | None, allow_model_files: bool) -> tuple[int, list[str] | str]:
    if _WORKER_ERROR is not None:
        return _WORKER_ERROR
    try:
        return 0, evaluate_lines(chunk, rules, catalog, prices, allow_model_files)
    except EngineError as exc:
        return exc.exit_code, str(exc)


def _unpack(result: tuple[int, list[str] | str]) -> list[str]:
    code, payload = result
    if isinstance(payload, str):
        raise WorkerFailed(payload, code)
    return payload


def chunk_size(total: int | None, workers: int) -> int:
    """The default chunk size, smaller when the input is too short to keep all workers busy."""
    if total is None or workers == 1:
        return DEFAULT_CHUNK_SIZE
    return max(1, min(DEFAULT_CHUNK_SIZE, -(-total // (workers * IN_FLIGHT_PER_WORKER))))
