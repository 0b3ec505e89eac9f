"""Owning vs renting: cost over the hardware's life by busy hours a year, break-even marked.

The curves come straight from the ``break_even_hours`` trace (purchase, upkeep, running
cost and like-for-like rent per hour, amortisation years), so the picture and the number
always agree: the lines cross exactly at ``break_even_hours``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import InputError


@dataclass(frozen=True)
class CostCurves:
    """Cost over ``years`` at h busy hours a year: own = fixed + running·h·years, rent =
    rent·h·years."""

    fixed_usd: float
    years: float
    running_usd_per_hour: float
    rent_usd_per_hour: float
    break_even_hours: float
    planned_hours_per_year: float
    local_label: str
    cloud_label: str

    def own(self, hours: float) -> float:
        """Cost of owning over the hardware's life at ``hours`` busy hours a year."""
        return self.fixed_usd + self.running_usd_per_hour * hours * self.years

    def rent(self, hours: float) -> float:
        """Cost of renting the same work over the same years."""
        return self.rent_usd_per_hour * hours * self.years

    @property
    def max_hours(self) -> float:
        """A horizon that shows the crossing and the team's yearly hours."""
        return max(self.break_even_hours * 2, self.planned_hours_per_year * 1.2, 100.0)


def curves_from(facts: Mapping[str, Any], traces: Mapping[str, Any]) -> CostCurves | None:
    """The curves of a decision (None when owning never breaks even)."""
    trace = traces.get("break_even_hours")
    if not trace or facts.get("break_even_hours") is None:
        return None
    inputs = trace["inputs"]
    fixed = inputs["purchase_usd"] * (1 + inputs["maintenance"] * inputs["years"])
    return CostCurves(
        fixed_usd=fixed,
        years=inputs["years"],
        running_usd_per_hour=inputs["running_usd_per_hour"],
        rent_usd_per_hour=inputs["equivalent_rent_usd_per_hour"],
        break_even_hours=float(facts["break_even_hours"]),
        planned_hours_per_year=float(facts.get("hours_per_year") or 0),
        local_label=(f"own {facts.get('local_gpu_count')}× {facts.get('local_gpu_name')} "
                     "(cheapest that fits)"),
        cloud_label=f"rent {facts.get('cloud_offer')} (cheapest offer)",
    )


def ascii_chart(curves: CostCurves, width: int = 60, height: int = 12) -> list[str]:
    """A plain-text chart: 'o' owning, 'r' renting, '*' where they cross, '|' your year."""
    top = max(curves.own(curves.max_hours), curves.rent(curves.max_hours))
    grid = [[" "] * width for _ in range(height)]

    def row(cost: float) -> int:
        return height - 1 - min(height - 1, round(cost / top * (height - 1)))

    year_col = round(curves.planned_hours_per_year / curves.max_hours * (width - 1))
    for col in range(width):
        hours = curves.max_hours * col / (width - 1)
        if col == year_col:
            for r in range(height):
                grid[r][col] = "|"
        grid[row(curves.rent(hours))][col] = "r"
        grid[row(curves.own(hours))][col] = "o"
    be_col = round(curves.break_even_hours / curves.max_hours * (width - 1))
    grid[row(curves.own(curves.break_even_hours))][min(be_col, width - 1)] = "*"
    label_width = len(f"${top:,.0f}")
    lines = []
    for r, cells in enumerate(grid):
        label = f"${top:,.0f}" if r == 0 else ("$0" if r == height - 1 else "")
        lines.append(f"{label:>{label_width}} ┤{''.join(cells)}")
    axis = f"{'':>{label_width}} └{'─' * width}"
    ticks = f"{'':>{label_width}}  0 h/yr{f'{curves.max_hours:,.0f} h/yr':>{width - 6}}"
    lines += [axis, ticks,
              f"o {curves.local_label}",
              f"r {curves.cloud_label}, for the same work",
              f"* break-even at {curves.break_even_hours:,.0f} h/year   | your "
              f"{curves.planned_hours_per_year:,.0f} h/year"]
    return lines


def write_chart(curves: CostCurves, path: Path) -> None:
    """Save the chart as SVG or PNG (by extension) with matplotlib, imported only here."""
    if path.suffix.lower() not in (".svg", ".png"):
        raise InputError("expected a .svg or .png file name", path=str(path), field="--chart")
    try:
        import matplotlib
    except ImportError:
        raise InputError("needs matplotlib: pip install 'gpu-advisor[chart]'",
                         field="--chart") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hours = [curves.max_hours * i / 200 for i in range(201)]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(hours, [curves.own(h) for h in hours], label=curves.local_label)
    ax.plot(hours, [curves.rent(h) for h in hours], label=f"{curves.cloud_label} (same work)")
    ax.axvline(curves.planned_hours_per_year, linestyle=":", color="grey",
               label=f"your {curves.planned_hours_per_year:,.0f} h/year")
    ax.plot([curves.break_even_hours], [curves.own(curves.break_even_hours)], "o", color="black")
    ax.annotate(f"break-even {curves.break_even_hours:,.0f} h/year",
                (curves.break_even_hours, curves.own(curves.break_even_hours)),
                textcoords="offset points", xytext=(8, -14))
    ax.set_xlabel("busy hours a year")
    ax.set_ylabel(f"cost over {curves.years:g} years (USD)")
    ax.set_title("Owning vs renting")
    ax.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    try:
        fig.savefig(path, metadata={"Date": None} if path.suffix.lower() == ".svg" else None)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror})", path=str(path),
                         field="--chart") from None
    finally:
        plt.close(fig)
