"""Run batch evaluation on a Dask cluster (optional: ``pip install 'gpu-advisor[dask]'``).

The work is the same pure map as ``gpu-advisor batch``: :func:`engine.batch.lines.evaluate_lines`
over partitions of ``(line number, text)`` pairs, so a cluster's output is byte-identical to a
local run's. Every worker process loads (and compiles) the policy once and reuses it; the
durable_rules engine is created inside the worker, never shipped. See docs/distributed.md.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.batch.files import AtomicOutput, open_input, output_target, read_lines
from engine.batch.lines import (
    DEFAULT_CHUNK_SIZE,
    Line,
    Oversized,
    evaluate_lines,
    line_limit,
    record_error,
)
from engine.catalog.prices import PriceInput
from engine.decide.engine import load_engine

if TYPE_CHECKING:
    import dask.bag

IN_FLIGHT_PER_WORKER = 4


def recommend_bag(bag_of_lines: dask.bag.Bag, rules: Path | None = None,
                  catalog: Path | None = None,
                  prices: Path | PriceInput | None = None) -> dask.bag.Bag:
    """A bag of output records (JSON strings) from a bag of ``(line number, text)`` pairs.

    Lazy: nothing runs until the result is computed. Partitions keep their order, so
    concatenating the computed partitions gives the same lines as ``gpu-advisor batch``.
    ``rules``/``catalog`` must be paths the workers can read (None: the bundled policy of the
    gpu-advisor installed on the workers); ``prices`` a path they can read, or the price
    file already read (:func:`engine.catalog.prices.read_prices`). Lines read no model file.
    """
    return bag_of_lines.map_partitions(_evaluate_partition, rules, catalog, prices)


def _evaluate_partition(partition: Any, rules: Path | None, catalog: Path | None,
                        prices: Path | PriceInput | None) -> list[str]:
    return evaluate_lines(((int(n), t if isinstance(t, Oversized) else str(t))
                           for n, t in partition), rules, catalog, prices)


def _line_limit(rules: Path | None, catalog: Path | None, prices: Path | PriceInput | None) -> int:
    """The policy's batch line limit, as a worker loads the policy."""
    return line_limit(load_engine(rules, catalog, prices).catalog)


def run_on_dask(in_path: Path, out_path: Path, scheduler_address: str | None = None,
                npartitions: int | None = None, *, partition_size: int = DEFAULT_CHUNK_SIZE,
                rules: Path | None = None, catalog: Path | None = None,
                prices: Path | PriceInput | None = None, client: Any = None,
                force: bool = False) -> int:
    """Evaluate the JSON lines of ``in_path`` on a cluster into ``out_path``; the failed lines.

    Connects to ``scheduler_address`` (e.g. ``"tcp://scheduler:8786"``), or starts a
    LocalCluster when it is None (closed again afterwards), unless an existing ``client`` is
    given. The input is read on this machine; ``npartitions`` (if given) or ``partition_size``
    lines decide the partitions. Results are written in input order as partitions finish,
    with at most a few partitions per worker in flight.
    """
    from dask import bag as db
    from distributed import Client, LocalCluster

    with open_input(Path(in_path)) as source:
        target = output_target(Path(out_path), source, Path(in_path), force=force)
        owned: list[Any] = []
        if client is None:
            if scheduler_address is None:
                cluster = LocalCluster(processes=True)
                owned.append(cluster)
                client = Client(cluster)
            else:
                client = Client(scheduler_address)
            owned.insert(0, client)
        try:
            # the workers' policy decides the line limit (and a bad policy fails here)
            limit = client.submit(_line_limit, rules, catalog, prices, pure=False).result()
            pairs = list(read_lines(source, limit))
            if npartitions is not None:
                bag = db.from_sequence(pairs, npartitions=max(1, npartitions))
            else:
                bag = db.from_sequence(pairs, partition_size=max(1, partition_size))
            results = recommend_bag(bag, rules, catalog, prices)
            return _write(client, results, AtomicOutput(target))
        finally:
            for resource in owned:
                resource.close()


def _write(client: Any, results: dask.bag.Bag, output: AtomicOutput) -> int:
    """The records of ``results`` written in order into ``output``; the failed lines."""
    failed = 0
    with output:
        for records in _ordered(client, results.to_delayed()):
            output.write(records)
            failed += sum(record_error(record) is not None for record in records)
        output.commit()
    return failed


def _ordered(client: Any, parts: list[Any]) -> Iterator[list[str]]:
    """Each partition's records in order, with a bounded window of partitions in flight."""
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    window = workers * IN_FLIGHT_PER_WORKER
    pending: collections.deque[Any] = collections.deque()
    for part in parts:
        pending.append(client.compute(part))
        if len(pending) >= window:
            future = pending.popleft()
            yield future.result()
            future.release()
    while pending:
        future = pending.popleft()
        yield future.result()
        future.release()


__all__ = ["Line", "recommend_bag", "run_on_dask"]
