"""Owning vs renting: cost a year by the year's work, the break-even and the team's work marked.

The two lines are the pick and the best configuration on the other side, written as fixed cost
a year + cost per unit of work (the ``break_even_work`` trace, in the team's own unit: runs a
year, or GPU-hours on its GPU), so the picture and the number always agree: the lines cross
exactly at the break-even.
"""

from __future__ import annotations

import importlib.util
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from engine.errors import InputError
from engine.estimates.cost import CostLine, break_even_lines
from engine.files.safe_write import Target, check_target, write_checked

CHART_SUFFIXES = (".svg", ".png")


@dataclass(frozen=True)
class CostCurves:
    """Owning's and renting's cost a year by the year's work, as the decision holds them."""

    own_line: CostLine
    rent_line: CostLine
    break_even: float
    planned: float
    unit: str
    own_label: str
    rent_label: str

    def own(self, x: float) -> float:
        """Owning's cost a year at ``x`` units of work."""
        return self.own_line.at(x)

    def rent(self, x: float) -> float:
        """Renting's cost a year for the same work."""
        return self.rent_line.at(x)

    @property
    def max_x(self) -> float:
        """A horizon that shows the crossing and the team's work."""
        return max(self.break_even * 2, self.planned * 1.2, 1.0)


def curves_from(estimates: Mapping[str, Any]) -> CostCurves | None:
    """The curves of a decision's estimates (None when owning never catches up)."""
    trace = estimates["traces"].get("break_even_work")
    if not trace:
        return None
    i = trace["inputs"]
    own, rent = break_even_lines(i)
    return CostCurves(
        own_line=own, rent_line=rent, break_even=trace["value"],
        planned=float(estimates["work"]["units"]),
        unit=trace["unit"], own_label=f"own {i['own']}", rent_label=f"rent {i['rent']}",
    )


def ascii_chart(curves: CostCurves, width: int = 60, height: int = 12) -> list[str]:
    """A plain-text chart: 'o' owning, 'r' renting, '*' where they cross, '|' your work."""
    top = max(curves.own(curves.max_x), curves.rent(curves.max_x), 1.0)
    grid = [[" "] * width for _ in range(height)]

    def row(cost: float) -> int:
        return height - 1 - min(height - 1, max(0, round(cost / top * (height - 1))))

    you = round(curves.planned / curves.max_x * (width - 1))
    for col in range(width):
        x = curves.max_x * col / (width - 1)
        if col == you:
            for r in range(height):
                grid[r][col] = "|"
        grid[row(curves.rent(x))][col] = "r"
        grid[row(curves.own(x))][col] = "o"
    be_col = round(curves.break_even / curves.max_x * (width - 1))
    grid[row(curves.own(curves.break_even))][min(be_col, width - 1)] = "*"
    label_width = len(f"${top:,.0f}")
    lines = []
    for r, cells in enumerate(grid):
        label = f"${top:,.0f}" if r == 0 else ("$0" if r == height - 1 else "")
        lines.append(f"{label:>{label_width}} ┤{''.join(cells)}")
    lines += [f"{'':>{label_width}} └{'─' * width}",
              f"{'':>{label_width}}  0{f'{curves.max_x:,.0f}':>{width - 1}}",
              f"x: {curves.unit}; y: cost a year",
              f"o {curves.own_label}",
              f"r {curves.rent_label}, for the same work",
              f"* break-even at {curves.break_even:,.0f}   | your {curves.planned:,.0f}"]
    return lines


def check_chart_path(path: Path, *, force: bool = False) -> Target:
    """Refuse a chart target before any work is done: its name, for PNG the plotting
    library, then what every written file is checked for (:mod:`engine.files.safe_write`)."""
    suffix = path.suffix.lower()
    if suffix not in CHART_SUFFIXES:
        raise InputError("expected a .svg or .png file name", path=str(path), field="--chart")
    if suffix == ".png" and importlib.util.find_spec("matplotlib") is None:
        raise InputError("needs matplotlib: pip install 'gpu-advisor[chart]'", path=str(path),
                         field="--chart")
    return check_target(path, force=force, field="--chart")


def write_chart(curves: CostCurves, path: Path, *, force: bool = False) -> None:
    """Save the chart as SVG (no plotting library needed) or PNG (matplotlib)."""
    target = check_chart_path(path, force=force)
    svg = path.suffix.lower() == ".svg"
    write_checked(target, svg_chart(curves).encode("utf-8") if svg else _png(curves))


def svg_chart(curves: CostCurves, width: int = 720, height: int = 420) -> str:
    """The chart as a standalone SVG document (no plotting library needed)."""
    left, right, top_pad, bottom = 80, 20, 40, 110
    w, h = width - left - right, height - top_pad - bottom
    top = max(curves.own(curves.max_x), curves.rent(curves.max_x), 1.0)

    def px(x: float) -> float:
        return left + x / curves.max_x * w

    def py(cost: float) -> float:
        return top_pad + h - cost / top * h

    def line(f: Any, colour: str) -> str:
        points = " ".join(f"{px(x):.1f},{py(f(x)):.1f}"
                          for x in (curves.max_x * i / 100 for i in range(101)))
        return f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>'

    be_x, be_y = px(curves.break_even), py(curves.own(curves.break_even))
    you = px(curves.planned)
    text = [
        f'<text x="{left}" y="24" font-size="16" font-weight="bold">Owning vs renting</text>',
        f'<line x1="{left}" y1="{top_pad + h}" x2="{left + w}" y2="{top_pad + h}" '
        'stroke="black"/>',
        f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + h}" stroke="black"/>',
        f'<text x="{left - 6}" y="{top_pad + 4}" text-anchor="end" font-size="11">'
        f'${top:,.0f}</text>',
        f'<text x="{left - 6}" y="{top_pad + h}" text-anchor="end" font-size="11">$0</text>',
        f'<text x="{left + w}" y="{top_pad + h + 16}" text-anchor="end" font-size="11">'
        f'{curves.max_x:,.0f}</text>',
        f'<text x="{left}" y="{top_pad + h + 16}" font-size="11">0</text>',
        f'<text x="{left + w / 2}" y="{top_pad + h + 32}" text-anchor="middle" font-size="12">'
        f'{escape(curves.unit)}</text>',
        line(curves.own, "#1f77b4"), line(curves.rent, "#d62728"),
        f'<line x1="{you:.1f}" y1="{top_pad}" x2="{you:.1f}" y2="{top_pad + h}" stroke="grey" '
        'stroke-dasharray="4 3"/>',
        f'<circle cx="{be_x:.1f}" cy="{be_y:.1f}" r="4" fill="black"/>',
        f'<text x="{be_x + 6:.1f}" y="{be_y - 6:.1f}" font-size="11">break-even '
        f'{curves.break_even:,.0f}</text>',
    ]
    legend = [("#1f77b4", curves.own_label), ("#d62728", f"{curves.rent_label}, same work"),
              ("grey", f"your work: {curves.planned:,.0f}")]
    for n, (colour, label) in enumerate(legend):
        y = top_pad + h + 52 + n * 18
        text.append(f'<rect x="{left}" y="{y - 9}" width="14" height="4" fill="{colour}"/>'
                    f'<text x="{left + 20}" y="{y - 4}" font-size="12">{escape(label)}</text>')
    body = "\n".join(text)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n{body}\n</svg>\n')


def _png(curves: CostCurves) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [curves.max_x * i / 200 for i in range(201)]
    fig, ax = plt.subplots(figsize=(7, 4))
    try:
        ax.plot(xs, [curves.own(x) for x in xs], label=curves.own_label)
        ax.plot(xs, [curves.rent(x) for x in xs], label=f"{curves.rent_label} (same work)")
        ax.axvline(curves.planned, linestyle=":", color="grey",
                   label=f"your work: {curves.planned:,.0f}")
        ax.plot([curves.break_even], [curves.own(curves.break_even)], "o", color="black")
        ax.set_xlabel(curves.unit)
        ax.set_ylabel("cost a year (USD)")
        ax.set_title("Owning vs renting")
        ax.legend(loc="upper left", fontsize="small")
        fig.tight_layout()
        image = io.BytesIO()
        fig.savefig(image, format="png")
        return image.getvalue()
    finally:
        plt.close(fig)
