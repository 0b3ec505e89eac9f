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
import io
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.catalog.models import Offer, SkyPilotMap, Source
from engine.errors import CatalogError

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")


@dataclass(frozen=True)
class Imported:
    """Offers read from a price file, the source they cite, and what was skipped."""

    offers: tuple[Offer, ...]
    source: Source
    skipped: str | None
    """One line naming the accelerators the catalog lacks, with row counts."""


def read_skypilot(path: Path, text: str, provider: str, known_gpus: Iterable[str],
                  mapping: SkyPilotMap, regions: Iterable[str],
                  current: Iterable[Offer] = ()) -> Imported:
    """Offers of ``provider`` from the CSV ``text`` of ``path``.

    ``current`` are the catalog's offers of that provider: an instance type they name keeps
    its network and multi-node facts; a GPU-only row (no instance type, as GCP lists attached
    GPUs) takes the VM price of the catalog's GPU-only offer of that GPU, and is skipped when
    there is none (a GPU without a VM cannot train).
    """
    rows = list(csv.DictReader(io.StringIO(text)))
    missing = [c for c in REQUIRED if c not in (rows[0] if rows else _header(text))]
    if missing:
        raise CatalogError(f"not a SkyPilot vms.csv: no {', '.join(missing)} column "
                           f"(expected {', '.join(REQUIRED)}, SpotPrice)", path=str(path),
                           line=1)
    names = {**mapping.accelerators, **mapping.providers.get(provider, {})}
    gpus = set(known_gpus)
    allowed = set(regions)
    as_of = dt.date.fromtimestamp(path.stat().st_mtime)
    source = Source(id=f"prices-{provider}", kind="price-list",
                    title=f"{provider} prices from {path.name} (SkyPilot catalog layout)",
                    publisher="the user's price file", date=as_of.isoformat(),
                    note="Offers read from a SkyPilot vms.csv; dated by the file's mtime.")
    by_instance = {o.instance: o for o in current if o.instance}
    gpu_only = {o.gpu: o for o in current if not o.price_includes_vm}
    best: dict[tuple[str, str], dict[str, Any]] = {}
    skipped: Counter[str] = Counter()
    for number, row in enumerate(rows, start=2):
        accelerator = (row.get("AcceleratorName") or "").strip()
        if not accelerator:
            continue  # a CPU-only machine, or a VM price without its GPU
        gpu = names.get(accelerator)
        if gpu is None or gpu not in gpus:
            skipped[accelerator] += 1
            continue
        price = _number(row, "Price", path, number)
        count = _number(row, "AcceleratorCount", path, number)
        if price is None or count is None or price <= 0 or count < 1:
            continue
        region = _region(row.get("Region") or "", mapping)
        if region is None or region not in allowed:
            skipped[f"{accelerator} (region {row.get('Region')})"] += 1
            continue
        instance = (row.get("InstanceType") or "").strip()
        vm_of = gpu_only.get(gpu) if not instance else None
        if not instance and vm_of is None:
            skipped[f"{accelerator} (a GPU-only price, no VM price known)"] += 1
            continue
        spot = _number(row, "SpotPrice", path, number)
        key = (instance or f"{accelerator} x{int(count)}", region)
        entry = {"gpu": gpu, "count": int(count), "price": price / count,
                 "spot": spot / count if spot and 0 < spot < price else None,
                 "like": by_instance.get(instance) if instance else vm_of}
        if key not in best or entry["price"] < best[key]["price"]:
            best[key] = entry
    offers = tuple(_offer(provider, instance, region, entry, as_of, source.id)
                   for (instance, region), entry in sorted(best.items()))
    return Imported(offers, source, _skipped(skipped))


def _header(text: str) -> list[str]:
    return next(csv.reader(io.StringIO(text)), [])


def _number(row: Mapping[str, str | None], column: str, path: Path,
            number: int) -> float | None:
    raw = (row.get(column) or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise CatalogError(f"{column}: expected a number, got {raw[:40]!r}", path=str(path),
                           line=number) from None
    if not math.isfinite(value) or value < 0 or value > 1e6:
        raise CatalogError(f"{column}: expected a finite price or count, got {raw[:40]!r}",
                           path=str(path), line=number)
    return value


def _region(name: str, mapping: SkyPilotMap) -> str | None:
    """Our region id for a provider's region name (longest matching prefix)."""
    low = name.strip().lower()
    for prefix in sorted(mapping.regions, key=len, reverse=True):
        if low.startswith(prefix):
            return mapping.regions[prefix]
    return None


def _offer(provider: str, instance: str, region: str, entry: Mapping[str, Any],
           as_of: dt.date, source: str) -> Offer:
    slug = re.sub(r"[^a-z0-9.]+", "-", instance.lower()).strip("-")
    like: Offer | None = entry["like"]
    gpu_only = like is not None and not like.price_includes_vm
    return Offer(
        id=f"{provider}-{slug}-{region}"[:60], provider=provider, gpu=entry["gpu"],
        instance=instance, gpus_per_instance=entry["count"], regions=[region],
        multi_node=like.multi_node if like is not None else False,
        network=like.network if like is not None else "ethernet",
        on_demand_usd_per_gpu_hour=round(entry["price"], 6),
        spot_usd_per_gpu_hour=None if entry["spot"] is None else round(entry["spot"], 6),
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
