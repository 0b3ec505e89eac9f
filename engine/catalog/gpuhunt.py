"""Fresh cloud prices from dstack's gpuhunt catalog: one CSV per provider (``aws.csv``,
``lambdalabs.csv``, ``runpod.csv``…), one row per instance, location and kind of price.

Its columns are ``instance_name, location, price, cpu, memory, gpu_count, gpu_name,
gpu_memory, spot, disk_size, gpu_vendor`` (and ``flags`` in its second version); ``price``
is for the whole instance an hour, and an instance's spot price is a row of its own
(``spot`` True). The rows of one instance and location are joined into one, on-demand and
spot, and handed to the SkyPilot reader (:mod:`engine.catalog.skypilot`), which maps GPU
names, regions and instance types onto the catalog's the same way for both layouts. A GPU
name is looked up with its memory first (``A100`` with 80 GB is ``A100-80GB``), then alone.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from engine.catalog.prices import PriceInput
from engine.catalog.skypilot import POLICY, Cells, Limits, RowSource
from engine.errors import CatalogError

REQUIRED = ("instance_name", "location", "price", "gpu_count", "gpu_name", "gpu_memory", "spot")
COLUMNS = {"InstanceType": "instance_name", "AcceleratorName": "gpu_name",
           "AcceleratorCount": "gpu_count", "Price": "price", "SpotPrice": "price",
           "Region": "location"}
"""Which gpuhunt column each SkyPilot column the reader asks for stands for."""


@dataclass
class _Instance:
    """An instance type in one location: its GPU, and its prices an instance-hour."""

    line: int
    gpu: str
    count: float
    on_demand: float | None = None
    spot: float | None = None


def gpuhunt_rows(prices: PriceInput, names: Mapping[str, str], limits: Limits) -> RowSource:
    """The file's rows as the SkyPilot reader reads them, each instance and location once."""
    source = RowSource((), COLUMNS)
    instances = _instances(prices, names, limits, source)
    source.rows = _cells(instances, source)
    return source


def _instances(prices: PriceInput, names: Mapping[str, str], limits: Limits,
               source: RowSource) -> dict[tuple[str, str], _Instance]:
    rows = csv.reader(io.StringIO(prices.text.removeprefix("\ufeff")))
    header = [h.strip() for h in next(rows, [])]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise CatalogError(f"not a gpuhunt catalog CSV: no {', '.join(missing)} column "
                           f"(expected {', '.join(REQUIRED)})", path=prices.shown, line=1)
    at = {name: i for i, name in reversed(list(enumerate(header)))}
    found: dict[tuple[str, str], _Instance] = {}
    for number, fields in enumerate(rows, start=2):
        if number - 1 > limits.rows:
            raise CatalogError(f"more than {limits.rows:,} rows (price_file_rows_max in "
                               f"{POLICY})", path=prices.shown, line=number)
        source.count += 1
        _read_row(prices, number, _row(fields, at), names, found)
    return found


def _row(fields: list[str], at: Mapping[str, int]) -> Mapping[str, str]:
    return {name: fields[i].strip() if i < len(fields) else "" for name, i in at.items()}


def _read_row(prices: PriceInput, number: int, row: Mapping[str, str],
              names: Mapping[str, str], found: dict[tuple[str, str], _Instance]) -> None:
    gpu_name = row["gpu_name"]
    if not gpu_name:
        return  # a CPU-only instance
    spot = _flag(prices, number, row["spot"])
    price = _number(prices, number, row, "price")
    count = _number(prices, number, row, "gpu_count")
    memory = _number(prices, number, row, "gpu_memory") if row["gpu_memory"] else 0.0
    name = _accelerator(gpu_name, memory, names)
    key = (row["instance_name"], row["location"])
    entry = found.setdefault(key, _Instance(number, name, count))
    if spot:
        entry.spot = price if entry.spot is None else min(entry.spot, price)
    else:
        entry.on_demand = price if entry.on_demand is None else min(entry.on_demand, price)
        entry.line = number


def _accelerator(gpu_name: str, memory_gb: float, names: Mapping[str, str]) -> str:
    """The mapping's name for a GPU: with its memory where the mapping has that (A100-80GB),
    else the name alone."""
    sized = f"{gpu_name}-{memory_gb:.0f}GB"
    return sized if sized in names else gpu_name


def _flag(prices: PriceInput, number: int, raw: str) -> bool:
    low = raw.lower()
    if low not in ("true", "false"):
        raise CatalogError(f"expected True or False, got {raw[:40]!r}", path=prices.shown,
                           line=number, field="spot")
    return low == "true"


def _number(prices: PriceInput, number: int, row: Mapping[str, str], column: str) -> float:
    raw = row[column]
    try:
        value = float(raw)
    except ValueError:
        raise CatalogError(f"expected a number, got {raw[:40]!r}", path=prices.shown,
                           line=number, field=column) from None
    if not math.isfinite(value) or value < 0 or value > 1e6:
        raise CatalogError(f"expected a finite price or count, got {raw[:40]!r}",
                           path=prices.shown, line=number, field=column)
    return value


def _cells(instances: Mapping[tuple[str, str], _Instance],
           source: RowSource) -> Iterator[tuple[int, Cells]]:
    for (instance, location), entry in instances.items():
        if entry.on_demand is None:
            source.skipped[f"{entry.gpu} (spot only)"] += 1
            continue
        values = {"InstanceType": instance, "AcceleratorName": entry.gpu,
                  "AcceleratorCount": f"{entry.count:g}", "Price": f"{entry.on_demand!r}",
                  "SpotPrice": "" if entry.spot is None else f"{entry.spot!r}",
                  "Region": location}
        yield entry.line, _cell(values)


def _cell(values: Mapping[str, str]) -> Cells:
    def cell(column: str) -> str:
        return values.get(column, "")
    return cell
