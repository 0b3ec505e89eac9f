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
from engine.estimates.cost import CostLine, break_even_lines, owning_lines
from engine.files.safe_write import Target, check_target, write_checked

CHART_SUFFIXES = (".svg", ".png")


@dataclass(frozen=True)
class CostCurves:
    """Owning's and renting's cost a year by the year's work, as the decision holds them."""

    own_lines: tuple[CostLine, ...]
    """Owning's lines: one purchase, or the pick and a smaller one that crosses renting
    first (owning costs the cheaper of them)."""
    rent_line: CostLine
    break_even: float
    planned: float
    unit: str
    own_label: str
    rent_label: str

    def own(self, x: float) -> float:
        """Owning's cost a year at ``x`` units of work."""
        return min(line.at(x) for line in self.own_lines)

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
    return CostCurves(
        own_lines=owning_lines(i), rent_line=break_even_lines(i)[1], break_even=trace["value"],
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


OWN_COLOUR, RENT_COLOUR, YOU_COLOUR = "#1f77b4", "#d62728", "#555555"
"""One palette for every chart: SVG, PNG and the HTML page."""


def nice_ticks(top: float, most: int = 6) -> list[float]:
    """Round tick values from 0 to at least ``top`` (1, 2 or 5 × a power of ten apart)."""
    import math

    if top <= 0:
        return [0.0, 1.0]
    raw = top / max(1, most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    count = math.ceil(top / step - 1e-9)
    return [i * step for i in range(count + 1)]


def tick_label(value: float, money: bool) -> str:
    """``$20k``, ``$1.5M``, ``2,000``: short enough for an axis."""
    sign = "$" if money else ""
    if money and value >= 1_000_000:
        return f"{sign}{value / 1_000_000:g}M"
    if money and value >= 1_000:
        return f"{sign}{value / 1_000:g}k"
    return f"{sign}{value:,.0f}" if value >= 10 or value == int(value) else f"{sign}{value:g}"


@dataclass(frozen=True)
class ChartSpec:
    """What every rendering of the chart draws: ranges, round ticks, titles, labels."""

    curves: CostCurves
    x_ticks: list[float]
    y_ticks: list[float]

    @property
    def x_max(self) -> float:
        """The last x tick: the axis ends on a round number."""
        return self.x_ticks[-1]

    @property
    def y_max(self) -> float:
        """The last y tick."""
        return self.y_ticks[-1]

    @property
    def x_title(self) -> str:
        """The x axis: the team's own unit of work."""
        return f"your work: {self.curves.unit}"

    y_title = "cost a year (USD)"

    def legend(self) -> list[tuple[str, str]]:
        """(colour, label) of the two configurations and the team's work."""
        c = self.curves
        return [(OWN_COLOUR, c.own_label), (RENT_COLOUR, f"{c.rent_label}, same work"),
                (YOU_COLOUR, f"your work, {c.planned:,.0f}: own ${c.own(c.planned):,.0f}, "
                             f"rent ${c.rent(c.planned):,.0f} a year")]

    def break_even_label(self) -> str:
        """What the crossing is, in words."""
        c = self.curves
        return f"break-even {c.break_even:,.0f} (${c.own(c.break_even):,.0f} a year)"


def chart_spec(curves: CostCurves) -> ChartSpec:
    """The ranges and ticks of ``curves``: the crossing and the team's work in view."""
    x_ticks = nice_ticks(curves.max_x)
    end = x_ticks[-1]
    y_ticks = nice_ticks(max(curves.own(end), curves.rent(end), 1.0))
    return ChartSpec(curves, x_ticks, y_ticks)


def svg_chart(curves: CostCurves, width: int = 720, height: int = 460) -> str:
    """The chart as a standalone SVG document (no plotting library needed)."""
    spec = chart_spec(curves)
    left, right, top_pad, bottom = 90, 30, 50, 140
    w, h = width - left - right, height - top_pad - bottom

    def px(x: float) -> float:
        return left + x / spec.x_max * w

    def py(cost: float) -> float:
        return top_pad + h - cost / spec.y_max * h

    def line(f: Any, colour: str) -> str:
        points = " ".join(f"{px(x):.1f},{py(f(x)):.1f}"
                          for x in (spec.x_max * i / 100 for i in range(101)))
        return f'<polyline fill="none" stroke="{colour}" stroke-width="2.5" points="{points}"/>'

    parts = [f'<text x="{left}" y="26" font-size="17" font-weight="bold">Owning vs renting '
             'the same work</text>']
    for t in spec.y_ticks:
        parts.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + w}" y2="{py(t):.1f}" '
                     'stroke="#e6e6e6"/>'
                     f'<text x="{left - 8}" y="{py(t) + 4:.1f}" text-anchor="end" '
                     f'font-size="12">{tick_label(t, True)}</text>')
    for t in spec.x_ticks:
        parts.append(f'<line x1="{px(t):.1f}" y1="{top_pad + h}" x2="{px(t):.1f}" '
                     f'y2="{top_pad + h + 5}" stroke="black"/>'
                     f'<text x="{px(t):.1f}" y="{top_pad + h + 20}" text-anchor="middle" '
                     f'font-size="12">{tick_label(t, False)}</text>')
    parts += [
        f'<line x1="{left}" y1="{top_pad + h}" x2="{left + w}" y2="{top_pad + h}" '
        'stroke="black"/>',
        f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + h}" stroke="black"/>',
        f'<text x="{left + w / 2}" y="{top_pad + h + 40}" text-anchor="middle" '
        f'font-size="13">{escape(spec.x_title)}</text>',
        f'<text transform="translate(22 {top_pad + h / 2}) rotate(-90)" text-anchor="middle" '
        f'font-size="13">{spec.y_title}</text>',
        line(curves.own, OWN_COLOUR), line(curves.rent, RENT_COLOUR),
    ]
    you = px(min(curves.planned, spec.x_max))
    parts.append(f'<line x1="{you:.1f}" y1="{top_pad}" x2="{you:.1f}" y2="{top_pad + h}" '
                 f'stroke="{YOU_COLOUR}" stroke-dasharray="5 4"/>')
    be_x, be_y = px(curves.break_even), py(curves.own(curves.break_even))
    label = escape(spec.break_even_label())
    box_w = 7.2 * len(spec.break_even_label()) + 12
    box_x = min(max(left + 4, be_x - box_w / 2), left + w - box_w)
    parts.append(f'<line x1="{be_x:.1f}" y1="{be_y:.1f}" x2="{be_x:.1f}" y2="{top_pad + 22}" '
                 'stroke="black" stroke-dasharray="2 2"/>'
                 f'<rect x="{box_x:.1f}" y="{top_pad + 4}" width="{box_w:.1f}" height="20" '
                 'fill="white" stroke="black" rx="3"/>'
                 f'<text x="{box_x + 6:.1f}" y="{top_pad + 18}" font-size="12">{label}</text>'
                 f'<circle cx="{be_x:.1f}" cy="{be_y:.1f}" r="5" fill="black"/>')
    for n, (colour, text) in enumerate(spec.legend()):
        y = top_pad + h + 64 + n * 20
        dash = ' stroke-dasharray="5 4"' if colour == YOU_COLOUR else ""
        parts.append(f'<line x1="{left}" y1="{y - 4}" x2="{left + 22}" y2="{y - 4}" '
                     f'stroke="{colour}" stroke-width="2.5"{dash}/>'
                     f'<text x="{left + 30}" y="{y}" font-size="12">{escape(text)}</text>')
    body = "\n".join(parts)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" role="img" '
            f'aria-label="Owning vs renting: {label}">\n'
            f'<rect width="100%" height="100%" fill="white"/>\n{body}\n</svg>\n')


def _png(curves: CostCurves) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    spec = chart_spec(curves)
    xs = [spec.x_max * i / 200 for i in range(201)]
    legend = [(colour, _plain(text)) for colour, text in spec.legend()]
    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    try:
        ax.plot(xs, [curves.own(x) for x in xs], color=OWN_COLOUR, linewidth=2.5,
                label=legend[0][1])
        ax.plot(xs, [curves.rent(x) for x in xs], color=RENT_COLOUR, linewidth=2.5,
                label=legend[1][1])
        ax.axvline(min(curves.planned, spec.x_max), linestyle="--", color=YOU_COLOUR,
                   label=legend[2][1])
        be_y = curves.own(curves.break_even)
        ax.plot([curves.break_even], [be_y], "o", color="black")
        ax.annotate(_plain(spec.break_even_label()), (curves.break_even, be_y),
                    xytext=(0.5, 0.97), textcoords="axes fraction", ha="center", va="top",
                    bbox={"boxstyle": "round", "fc": "white", "ec": "black"},
                    arrowprops={"arrowstyle": "-", "linestyle": ":"})
        ax.set_xticks(spec.x_ticks)
        ax.set_yticks(spec.y_ticks)
        ax.set_xlim(0, spec.x_max)
        ax.set_ylim(0, spec.y_max)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: tick_label(v, False)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _plain(tick_label(v, True))))
        ax.grid(axis="y", color="#e6e6e6")
        ax.set_xlabel(spec.x_title)
        ax.set_ylabel(spec.y_title)
        ax.set_title("Owning vs renting the same work", loc="left", fontweight="bold")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), fontsize="small",
                  frameon=False)
        fig.tight_layout()
        image = io.BytesIO()
        fig.savefig(image, format="png")
        return image.getvalue()
    finally:
        plt.close(fig)


def _plain(text: str) -> str:
    """``text`` as matplotlib draws it literally (a ``$`` would start maths)."""
    return text.replace("$", r"\$")
