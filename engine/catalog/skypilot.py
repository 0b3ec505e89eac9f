"""Fresh cloud prices from a public price catalog: SkyPilot's ``vms.csv`` files.

SkyPilot (github.com/skypilot-org/skypilot-catalog) publishes one CSV per cloud
(``catalogs/v8/aws/vms.csv``…), one row per instance type and zone, with the accelerator name
and count and the on-demand and spot price per instance-hour; columns differ in order between
clouds, so they are read by name. A file given as ``--prices FILE.csv`` replaces the catalog's
offers of that provider: rows are grouped per instance type and region, accelerators mapped to
catalog GPU ids (``clouds.yaml`` → ``skypilot``), prices divided by the GPU count.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from engine.catalog.models import Location, Offer, Policy, SkyPilotMap, Source
from engine.catalog.prices import PriceInput
from engine.errors import CatalogError

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
POLICY = "catalog/policy.yaml"


@dataclass(frozen=True)
class Limits:
    """What a price file may hold (``catalog/policy.yaml``, each a house assumption)."""

    rows: int
    offers: int
    gpus_per_instance: int
    min_usd_per_gpu_hour: float
    max_usd_per_gpu_hour: float


def limits_of(policy: Policy) -> Limits:
    """The price-file limits a policy names."""
    return Limits(rows=int(policy.price_file_rows_max.value),
                  offers=int(policy.price_file_offers_max.value),
                  gpus_per_instance=int(policy.gpus_per_instance_max.value),
                  min_usd_per_gpu_hour=policy.price_per_gpu_hour_min_usd.value,
                  max_usd_per_gpu_hour=policy.price_per_gpu_hour_max_usd.value)


@dataclass(frozen=True)
class Imported:
    """Offers read from a price file, the source they cite, and what was skipped."""

    offers: tuple[Offer, ...]
    source: Source
    skipped: str | None
    """One line naming the accelerators the catalog lacks, with row counts."""
    rows: int = 0
    """Rows the file held (0 where not counted)."""
    skipped_rows: int = 0
    """Rows left out (no catalog GPU or region, a fraction of a GPU, spot only…)."""


@dataclass
class _Row:
    """The fields of one row an offer is made of, and where it was."""

    gpu: str
    count: int
    price: float
    spot: float | None
    like: Offer | None
    line: int
    instance: str
    location: Location | None = None
    """The catalog's location of the row's region code, if it has one."""


def read_skypilot(prices: PriceInput, known_gpus: Iterable[str], mapping: SkyPilotMap,
                  regions: Iterable[str], current: Iterable[Offer], limits: Limits,
                  locations: Mapping[str, Location] | None = None,
                  rows: RowSource | None = None) -> Imported:
    """Offers of the file's provider from its CSV text.

    ``current`` are the catalog's offers of that provider: an instance type they name keeps
    its network and multi-node facts; a GPU-only row (no instance type, as GCP lists attached
    GPUs) takes the VM price of the catalog's GPU-only offer of that GPU, and is skipped when
    there is none (a GPU without a VM cannot train). Rows are read one at a time, at most
    ``limits.rows`` of them, each price and count checked against the policy's bounds.
    ``locations`` are the catalog's locations of that provider by region code: an offer whose
    cheapest row is in one of them is located there; otherwise it lists none (the provider's
    locations apply), as does its access.
    """
    provider = str(prices.provider)
    names = {**mapping.accelerators, **mapping.providers.get(provider, {})}
    as_of = prices.as_of or dt.date.today()
    layout, kind = (("gpuhunt catalog", "a gpuhunt catalog CSV") if rows is not None
                    else ("SkyPilot catalog", "a SkyPilot vms.csv"))
    source = Source(id=f"prices-{provider}", kind="price-list",
                    title=f"{provider} prices from {prices.name} ({layout} layout)",
                    publisher="the user's price file", date=as_of.isoformat(),
                    note=f"Offers read from {kind}; dated by {prices.dated_by}.")
    source_rows = rows or RowSource(_skypilot_rows(prices, limits))
    reading = _Reading(prices, names, set(known_gpus), set(regions), mapping, current, limits,
                       locations or {}, source_rows.columns)
    for number, cell in source_rows.rows:
        reading.row(number, cell)
    reading.skipped.update(source_rows.skipped)
    offers = reading.offers(as_of, source.id)
    return Imported(offers, source, _skipped(reading.skipped), source_rows.count,
                    sum(reading.skipped.values()))


@dataclass
class RowSource:
    """Rows in SkyPilot's columns (``cell("Price")``…) with their line numbers; for another
    layout, which of its columns each stands for (what errors name) and what it skipped."""

    rows: Iterable[tuple[int, Cells]]
    columns: Mapping[str, str] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    count: int = 0
    """Rows read (set once ``rows`` is exhausted)."""


def _skypilot_rows(prices: PriceInput, limits: Limits) -> Iterator[tuple[int, Cells]]:
    for number, cell in enumerate(_reader(prices), start=2):
        if number - 1 > limits.rows:
            raise CatalogError(f"more than {limits.rows:,} rows (price_file_rows_max in "
                               f"{POLICY})", path=prices.shown, line=number)
        yield number, cell


Cells = Callable[[str], str]
"""One row's cell by column name ("" when the row is short)."""


def _reader(prices: PriceInput) -> Iterator[Cells]:
    """The rows, read lazily, once the header has every column needed (a BOM is ignored)."""
    rows = csv.reader(io.StringIO(prices.text.removeprefix("\ufeff")))
    header = next(rows, [])
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise CatalogError(f"not a SkyPilot vms.csv: no {', '.join(missing)} column "
                           f"(expected {', '.join(REQUIRED)}, SpotPrice)", path=prices.shown,
                           line=1)
    at = {name: i for i, name in reversed(list(enumerate(header)))}  # the first of a name
    return (_cells(fields, at) for fields in rows)


def _cells(fields: list[str], at: Mapping[str, int]) -> Cells:
    def cell(column: str) -> str:
        i = at.get(column)
        return fields[i] if i is not None and i < len(fields) else ""
    return cell


class _Reading:
    """One pass over the rows: the cheapest row per instance type and region."""

    def __init__(self, prices: PriceInput, names: Mapping[str, str], gpus: set[str],
                 regions: set[str], mapping: SkyPilotMap, current: Iterable[Offer],
                 limits: Limits, locations: Mapping[str, Location],
                 columns: Mapping[str, str] | None = None) -> None:
        self.prices, self.names, self.gpus, self.regions = prices, names, gpus, regions
        self.columns = columns or {}
        self.locations = locations
        self.region, self.limits = _regions(mapping), limits
        current = list(current)
        self.by_instance = {o.instance: o for o in current if o.instance}
        self.gpu_only = {o.gpu: o for o in current if not o.price_includes_vm}
        self.best: dict[tuple[str, str], _Row] = {}
        self.skipped: Counter[str] = Counter()

    def error(self, message: str, number: int, column: str) -> CatalogError:
        return CatalogError(message, path=self.prices.shown, line=number,
                            field=self.columns.get(column, column))

    def row(self, number: int, cell: Cells) -> None:
        accelerator = cell("AcceleratorName").strip()
        if not accelerator:
            return  # a CPU-only machine, or a VM price without its GPU
        gpu = self.names.get(accelerator)
        if gpu is None or gpu not in self.gpus:
            self.skipped[accelerator] += 1
            return
        price = _number(cell, "Price", self.prices.shown, number)
        count = _number(cell, "AcceleratorCount", self.prices.shown, number)
        if price is None or count is None or price <= 0:
            return
        if count < 1:  # a fraction of a GPU (shared-GPU VMs): no training configuration
            self.skipped[f"{accelerator} (a fraction of a GPU)"] += 1
            return
        region = self.region(cell("Region"))
        if region is None or region not in self.regions:
            self.skipped[f"{accelerator} (region {cell('Region')})"] += 1
            return
        instance = cell("InstanceType").strip()
        vm_of = self.gpu_only.get(gpu) if not instance else None
        if not instance and vm_of is None:
            self.skipped[f"{accelerator} (a GPU-only price, no VM price known)"] += 1
            return
        whole = self._count(count, number)
        spot = _number(cell, "SpotPrice", self.prices.shown, number)
        entry = _Row(gpu, whole, self._per_gpu(price, whole, number, "Price"),
                     self._per_gpu(spot, whole, number, "SpotPrice")
                     if spot and 0 < spot < price else None,
                     self.by_instance.get(instance) if instance else vm_of, number,
                     instance or f"{accelerator} x{whole}",
                     self.locations.get(cell("Region").strip()))
        key = (entry.instance, region)
        if key not in self.best and len(self.best) >= self.limits.offers:
            raise self.error(f"more than {self.limits.offers:,} offers (instance types × "
                             f"regions; price_file_offers_max in {POLICY})", number,
                             "InstanceType")
        if key not in self.best or entry.price < self.best[key].price:
            self.best[key] = entry

    def _count(self, count: float, number: int) -> int:
        most = self.limits.gpus_per_instance
        if not count.is_integer() or count > most:
            raise self.error(f"expected a whole number of GPUs from 1 to {most} per instance "
                             f"(gpus_per_instance_max in {POLICY}), got {count:g}", number,
                             "AcceleratorCount")
        return int(count)

    def _per_gpu(self, price: float, count: int, number: int, column: str) -> float:
        low, high = self.limits.min_usd_per_gpu_hour, self.limits.max_usd_per_gpu_hour
        per_gpu = price / count
        if not low <= per_gpu <= high:
            bound = "price_per_gpu_hour_min_usd" if per_gpu < low else (
                "price_per_gpu_hour_max_usd")
            raise self.error(f"${per_gpu:.6g} per GPU-hour ({price:g} for {count} GPU"
                             f"{'s' if count > 1 else ''}) is not a plausible price: expected "
                             f"${low:g} to ${high:g} ({bound} in {POLICY})", number, column)
        return per_gpu

    def offers(self, as_of: dt.date, source: str) -> tuple[Offer, ...]:
        """One offer per instance type and region, ids checked to be distinct."""
        provider = str(self.prices.provider)
        offers: dict[str, tuple[Offer, _Row]] = {}
        for (_, region), entry in sorted(self.best.items()):
            offer = _offer(provider, region, entry, as_of, source)
            if offer.id in offers:
                raise self._collision(offers[offer.id][1], entry, offer.id)
            offers[offer.id] = (offer, entry)
        return tuple(offer for offer, _ in offers.values())

    def _collision(self, first: _Row, second: _Row, offer_id: str) -> CatalogError:
        later, other = (first, second) if first.line > second.line else (second, first)
        how = "only by case" if first.instance.lower() == second.instance.lower() else (
            "only in characters an offer id drops")
        return self.error(f"'{later.instance}' differs from '{other.instance}' (line "
                          f"{other.line}) {how}: both would be offer {offer_id}; rename one",
                          later.line, "InstanceType")


def _number(cell: Cells, column: str, path: str, number: int) -> float | None:
    raw = cell(column).strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise CatalogError(f"expected a number, got {raw[:40]!r}", path=path, line=number,
                           field=column) from None
    if not math.isfinite(value) or value < 0 or value > 1e6:
        raise CatalogError(f"expected a finite price or count, got {raw[:40]!r}", path=path,
                           line=number, field=column)
    return value


def _regions(mapping: SkyPilotMap) -> Callable[[str], str | None]:
    """Our region id for a provider's region name (longest matching prefix), remembered
    per name (a file repeats a few dozen region names in every row)."""
    prefixes = sorted(mapping.regions, key=len, reverse=True)

    @functools.lru_cache(maxsize=4096)
    def region(name: str) -> str | None:
        low = name.strip().lower()
        return next((mapping.regions[p] for p in prefixes if low.startswith(p)), None)

    return region


def _offer(provider: str, region: str, entry: _Row, as_of: dt.date, source: str) -> Offer:
    instance = entry.instance
    slug = re.sub(r"[^a-z0-9.]+", "-", instance.lower()).strip("-")
    like = entry.like
    gpu_only = like is not None and not like.price_includes_vm
    return Offer(
        id=f"{provider}-{slug}-{region}"[:60], provider=provider, gpu=entry.gpu,
        instance=instance, gpus_per_instance=entry.count, regions=[region],
        multi_node=like.multi_node if like is not None else False,
        network=like.network if like is not None else "ethernet",
        locations=[entry.location] if entry.location is not None else [],
        on_demand_usd_per_gpu_hour=round(entry.price, 6),
        spot_usd_per_gpu_hour=None if entry.spot is None else round(entry.spot, 6),
        price_includes_vm=not gpu_only,
        vm_usd_per_instance_hour=like.vm_usd_per_instance_hour if gpu_only and like else None,
        as_of=as_of, sources=[source],
        note="Read from a SkyPilot vms.csv: the cheapest zone of this region, per GPU"
             + (f"; network and multi-node as the catalog's {like.id}" if like else "")
             + (f"; the VM price of {like.id} added" if gpu_only and like else "") + ".")


def _skipped(counts: Counter[str]) -> str | None:
    if not counts:
        return None
    total = sum(counts.values())
    parts = ", ".join(f"{name} ×{n}" for name, n in counts.most_common(6))
    more = f", and {len(counts) - 6} more" if len(counts) > 6 else ""
    return f"skipped {total} row(s) the catalog has no GPU or region for: {parts}{more}"
