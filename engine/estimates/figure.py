"""Figures that carry their own explanation: value, unit, formula, inputs and sources."""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

Scalar = float | int | str | bool | None


class Figure(BaseModel):
    """A derived number with the formula and inputs that produced it and the sources behind it."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    value: float
    unit: str
    formula: str
    inputs: dict[str, Scalar]
    sources: tuple[str, ...]


def figure(
    value: float,
    unit: str,
    formula: str,
    sources: Iterable[str],
    **inputs: Scalar,
) -> Figure:
    """Build a :class:`Figure`, rounding the value so it never serialises in exponent form."""
    return Figure(
        value=tidy(value),
        unit=unit,
        formula=formula,
        inputs={k: tidy(v) if isinstance(v, float) else v for k, v in inputs.items()},
        sources=tuple(dict.fromkeys(sources)),
    )


def tidy(value: float, digits: int = 4) -> float:
    """Round to ``digits`` significant decimals after the point; tiny values become 0."""
    return 0.0 if -1e-4 < value < 1e-4 else round(value, digits)


def said_in_cents(value: float) -> bool:
    """Whether a sum of dollars is said to the cent: above 0 and under $10 once rounded to
    the cent (``$0.48``, ``$9.99``; ``$10``, never ``$10.00``)."""
    return 0 < value < 9.995


def dollars(value: float) -> float:
    """A sum to the cent under $10 (a small job's year would round to $0), else to the
    dollar."""
    return tidy(value, 2) if abs(value) < 10 else tidy(value, 0)


GIB = 2**30
"""Bytes in a GiB, the one memory unit every output uses: GPU memory is sold in binary units
(a "24 GB" card holds 24 GiB), so estimates are compared with what the card really holds."""


def plain(value: float, digits: int = 4) -> str:
    """``15,000``, ``0.2``, ``62.5``: ``digits`` significant digits, thousands grouped, never
    in exponent form."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{round(value, decimals):,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
