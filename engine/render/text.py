"""Terminal rendering with rich: headline, choices with reasons, hardware, warnings, chart.

On a terminal it uses colour and the terminal's width; piped or with ``NO_COLOR`` it is
plain text wrapped at 80 columns, with hanging indents so reasons stay readable.
"""

from __future__ import annotations

import sys
from typing import Any

from engine.recommend import Decision
from engine.render.chart import ascii_chart, curves_from
from engine.render.summary import (
    AXIS_TITLES,
    applies,
    config_name,
    headline,
    memory_line,
    runner_up,
    top_reasons,
    usd,
)
from engine.render.table import console
from engine.rulebook import Rulebook

_SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def _grid() -> Any:
    from rich.table import Table

    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=2, no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


def render_text(decision: Decision, book: Rulebook) -> None:
    """Print the decision for a person at a terminal (plain text when piped)."""
    out = console()
    with out.capture() as captured:
        _render(out, decision)
    lines = [line.rstrip() for line in captured.get().splitlines()]
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def _render(out: Any, decision: Decision) -> None:
    from rich.markup import escape

    out.print(f"[bold]{escape(headline(decision))}[/bold]")
    out.print(escape(memory_line(decision)))
    out.print()
    for axis, title in AXIS_TITLES.items():
        result = decision.decisions[axis]
        if not applies(decision, axis):
            continue
        other = runner_up(result)
        tail = f"  [dim](next: {escape(other)})[/dim]" if other else ""
        out.print(f"[bold]{title}: {escape(result.choice or '—')}[/bold]{tail}")
        grid = _grid()
        for sign, text, sources, rule in top_reasons(result):
            grid.add_row(f" {sign}", f"{escape(text)} [dim]\\[{rule}; "
                                     f"{escape(', '.join(sources))}][/dim]")
        out.print(grid)
    _hardware(out, decision)
    if decision.warnings:
        out.print("[bold]Warnings[/bold]")
        grid = _grid()
        for w in decision.warnings:
            style = _SEVERITY_STYLE.get(w.severity or "info", "")
            mark = {"critical": "!!", "warning": " !", "info": " i"}[w.severity or "info"]
            grid.add_row(f"[{style}]{mark}[/{style}]",
                         f"{escape(w.text)} [dim]\\[{w.id}; {w.rule}][/dim]")
        out.print(grid)
    if decision.strategies:
        out.print("[bold]Strategies[/bold]")
        grid = _grid()
        for s in decision.strategies:
            grid.add_row(" •", f"{escape(s.text)} [dim]\\[{s.id}][/dim]")
        out.print(grid)
    curves = curves_from(decision.facts, decision.estimates["traces"])
    if curves is not None:
        out.print("[bold]Owning vs renting[/bold] (cost over three years by busy hours a year)")
        for line in ascii_chart(curves, width=min(60, max(30, out.width - 12))):
            out.print(escape(line), highlight=False)
    out.print(f"[dim]decision {decision.decision_id} · rules {decision.ruleset['hash'][:12]} · "
              f"catalog {decision.catalog['hash'][:12]}[/dim]")


def _hardware(out: Any, decision: Decision) -> None:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    hw = decision.hardware
    if hw.choice is None:
        return
    table = Table(title="Hardware", box=box.SIMPLE_HEAD, title_justify="left",
                  title_style="bold")
    for col, right in (("", False), ("configuration", False), ("where", False),
                       ("GB/GPU need/has", True), ("up front", True), ("per year", True)):
        table.add_column(col, justify="right" if right else "left", overflow="fold")
    for mark, cand in [("→", hw.choice), *(("", c) for c in hw.alternatives)]:
        where = cand.where if cand.where == "local" else f"{cand.provider} {cand.pricing}"
        table.add_row(mark, escape(config_name(cand)), escape(where),
                      f"{cand.vram_needed_gb:.1f}/{cand.vram_total_gb / cand.count:g}",
                      usd(cand.cost.upfront_usd), usd(cand.cost.per_year_usd))
    out.print(table)
    if hw.excluded:
        reason = next((r.text for r in hw.excluded[0].reasons if r.effect == "exclude"), "")
        out.print(f"[dim]{len(hw.excluded)} of {hw.considered} configurations excluded, "
                  f"e.g. {escape(reason)}[/dim]")
