"""Catalog entries as a person reads them: every figure with its unit, numbers one way.

Field names carry their unit (``vram_gb``, ``bandwidth_gbps``, ``tdp_w``,
``on_demand_usd_per_gpu_hour``…); :func:`field_rows` turns an entry into (label, text) rows
from those names, so a new field is formatted the moment it follows the convention.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

# suffix → (label suffix to drop, how the value reads); the longest suffix wins
_UNITS: tuple[tuple[str, str], ...] = (
    ("_usd_per_gpu_hour", "${:,.2f}/GPU-hour"),
    ("_usd_per_instance_hour", "${:,.2f}/instance-hour"),
    ("_usd_per_kwh", "${:,.3f}/kWh"),
    ("_usd", "${:,.0f}"),
    ("_gbps", "{:,.0f} GB/s"),
    ("_tflops", "{:,.1f} TFLOPS"),
    ("_w", "{:,.0f} W"),
    ("_b", "{:,.2f} billion"),
    ("_pct", "{:,.0f} %"),
    ("_months", "{:,g} months"),
    ("_years", "{:,.1f} years"),
    ("_days", "{:,g} days"),
)


def field_rows(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, formatted value) for every field that has a value, in the entry's order."""
    rows = []
    for key, value in data.items():
        if value is None or value == [] or key == "vram_unit":
            continue
        if key == "vram_gb":
            rows.append(("vram", f"{value:,g} {data.get('vram_unit', 'GB')}"))
            continue
        rows.append(_labelled(key, value))
    return rows


def _labelled(key: str, value: Any) -> tuple[str, str]:
    for suffix, pattern in _UNITS:
        if (key.endswith(suffix) or key == suffix[1:]) and isinstance(
                value, (int, float)) and not isinstance(value, bool):
            label = key.removesuffix(suffix).replace("_", " ") if key != suffix[1:] else "price"
            if suffix == "_gbps" and label != "bandwidth":
                label += " bandwidth"
            return label, pattern.format(value)
    if key == "watts" and isinstance(value, (int, float)):
        return "power draw", f"{value:,.0f} W"
    if key.endswith("year") and isinstance(value, int):
        return key.replace("_", " "), str(value)        # a year, not a quantity: 2022
    return key.replace("_", " "), value_text(value)


def value_text(value: Any) -> str:
    """One value as text: yes/no, grouped digits, nested entries as ``label value`` lists."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.10g}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, Mapping):
        if {"low_usd", "high_usd"} <= set(value):
            return _price_range(value)
        if {"name", "memory_gb", "instances"} <= set(value):  # a MIG profile
            return f"{value['name']} ×{value['instances']}"
        return "; ".join(f"{label} {text}" for label, text in field_rows(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(value_text(v) for v in value)
    return str(value)


def _price_range(value: Mapping[str, Any]) -> str:
    low, high = value["low_usd"], value["high_usd"]
    text = f"${low:,.0f}" if low == high else f"${low:,.0f}–{high:,.0f}"
    extra = [str(value[k]) for k in ("condition",) if value.get(k)]
    if value.get("as_of"):
        extra.append(f"as of {value['as_of']}")
    if value.get("sources"):
        extra.append(", ".join(value["sources"]))
    return text + (f" ({'; '.join(extra)})" if extra else "")


def citation_lines(source_id: str, title: str, publisher: str, date: object,
                   url: str | None, width: int = 80) -> list[str]:
    """A cited source as lines of at most ``width`` columns, broken between words (a URL
    longer than a line stands alone on its line, unbroken), shown printable."""
    import textwrap

    from engine.files.printable import printable

    text = printable(f"[{source_id}] {title} ({publisher}, {date})" + (f" <{url}>" if url else ""))
    return textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="    ",
                         break_long_words=False, break_on_hyphens=False)
