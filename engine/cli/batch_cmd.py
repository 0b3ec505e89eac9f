"""``gpu-advisor batch``: many teams' answers (JSON lines) in, one result line each out."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, BinaryIO

import click

from engine.batch.files import AtomicOutput, count_lines, open_input, output_target, read_lines
from engine.batch.lines import (
    DEFAULT_CHUNK_SIZE,
    chunked,
    line_limit,
    record_error,
    record_line,
)
from engine.batch.pool import Policy, results
from engine.batch.pool import chunk_size as default_chunk_size
from engine.cli.options import catalog_options, force_option, rules_option
from engine.decide.engine import load_engine

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput

Reporter = tuple[Callable[[str], None], Callable[[int], None]]


class _Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM during a batch run (a KeyboardInterrupt, so output keeps a partial)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@click.command()
@click.argument("in_path", type=click.Path(path_type=Path), metavar="IN.jsonl")
@click.option("--out", "out_path", type=click.Path(path_type=Path), required=True,
              metavar="OUT.jsonl",
              help="Where to write the results (JSON lines); replaced only when the run "
                   "completes, never the input file.")
@force_option("Replace an existing OUT.jsonl.")
@click.option("--workers", type=click.IntRange(1, 1024), default=1, show_default=True,
              metavar="N", help="Worker processes (each loads the policy once).")
@click.option("--chunk-size", type=click.IntRange(1, 1_000_000), default=None, metavar="LINES",
              help=f"Lines per unit of work sent to a worker [default: {DEFAULT_CHUNK_SIZE}, "
                   "less for small inputs so every worker gets some].")
@click.option("--allow-model-files", is_flag=True,
              help="Read the config.json (file, folder or Hub id) a line's model names; "
                   "without it such a line is refused unless it gives model_shape.")
@rules_option
@catalog_options
def batch(in_path: Path, out_path: Path, force: bool, workers: int, chunk_size: int | None,
          allow_model_files: bool, rules_dir: Path | None, catalog_dir: Path | None,
          prices: PriceInput | None) -> None:
    """Evaluate many answers (one JSON object per line) into OUT.jsonl, order preserved.

    Each output line is {"line": N, "decision": {...}} or, for a line that could not be
    evaluated (invalid JSON, a bad answer, a line longer than the policy's
    batch_line_max_bytes, any failure), {"line": N, "error": "..."} (also reported on
    stderr); the other lines go on. Blank lines are skipped. decision_id is derived from the
    line number (batch-000000042), so the same input always gives the same output, whatever
    --workers is.

    Results go to a temporary file beside OUT.jsonl that replaces it only when the run
    completes: a run that fails leaves an existing OUT.jsonl untouched (replacing an existing
    one needs --force). An interrupted run
    (Ctrl-C, SIGTERM) leaves it untouched too and keeps the results written so far (complete
    lines, in input order) in OUT.jsonl.partial. OUT.jsonl may not be the input file.

    Batch results are NOT recorded in the audit store.

    Exit status: 0 if every line was evaluated, 1 if any line failed, 2 on a bad input or
    output file or an unusable policy, 130 if interrupted (143 on SIGTERM).

    \b
    Example:
      gpu-advisor batch teams.jsonl --out decisions.jsonl --workers 4
    """
    output: AtomicOutput | None = None
    try:
        with _signals_interrupt(), open_input(in_path) as source:
            target = output_target(out_path, source, in_path, force=force)
            engine = load_engine(rules_dir, catalog_dir, prices)  # a bad policy touches no file
            output = AtomicOutput(target)
            done, failed = _run(source, output, in_path, workers, chunk_size,
                                line_limit(engine.catalog),
                                (rules_dir, catalog_dir, prices, allow_model_files))
    except _Interrupted as exc:
        click.echo(_interrupted_message(exc.signum, output, out_path), err=True)
        sys.exit(128 + exc.signum)
    click.echo(f"batch: {done} result(s) written to {out_path}, {failed} failed", err=True)
    if failed:
        sys.exit(1)


def _run(source: BinaryIO, output: AtomicOutput, in_path: Path, workers: int,
         chunk_size: int | None, limit: int, policy: Policy) -> tuple[int, int]:
    """Evaluate every line into ``output`` and commit it; (results, failed lines)."""
    tty = sys.stderr.isatty()
    total = count_lines(source) if tty or (workers > 1 and chunk_size is None) else None
    chunks = chunked(read_lines(source, limit), chunk_size or default_chunk_size(total, workers))
    failed = done = 0
    # closing: an interrupt while writing stops the workers now, not when the frame is freed
    with _Progress(tty, total) as (report, advance), output, \
            contextlib.closing(results(chunks, workers, policy)) as produced:
        for records in produced:
            output.write(records)
            for record in records:
                error = record_error(record)
                if error is not None:
                    failed += 1
                    report(f"error: {in_path}:{record_line(record)}: {error}")
            done += len(records)
            advance(len(records))
        output.commit()
    return done, failed


def _interrupted_message(signum: int, output: AtomicOutput | None, out_path: Path) -> str:
    """The one line an interrupted run ends with."""
    what = "Interrupted" if signum == signal.SIGINT else "Terminated"
    if output is not None and output.committed:
        return f"{what}: all {output.records} result(s) were written to {out_path}."
    if output is not None and output.partial is not None:
        return (f"{what}: {out_path} was not changed; the {output.records} result(s) written "
                f"so far are in {output.partial}.")
    return f"{what}."


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`_Interrupted` (once: cleanup runs undisturbed)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signums = (signal.SIGINT, signal.SIGTERM)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        for each in signums:
            signal.signal(each, signal.SIG_IGN)
        raise _Interrupted(signum)

    # a signal ignored from the start (e.g. SIGINT of a background job) stays ignored
    previous = {signum: signal.signal(signum, interrupt) for signum in signums
                if signal.getsignal(signum) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class _Progress:
    """A rich progress bar on stderr when it is a terminal; plain stderr lines otherwise."""

    def __init__(self, enabled: bool, total: int | None) -> None:
        self._enabled = enabled
        self._total = total
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Reporter:
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
