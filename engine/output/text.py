"""Terminal rendering with rich: headline, choices with reasons, hardware, warnings, chart.

On a terminal it uses colour and the terminal's width; piped or with ``NO_COLOR`` it is
plain text wrapped at 80 columns, with hanging indents so reasons stay readable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.decide.engine import Decision
from engine.output.brief import identity_line
from engine.output.chart import ascii_chart, curves_from
from engine.output.hardware_rows import (
    beside_own,
    cells,
    cheaper_line,
    data_stays_in_region,
    excluded_line,
    headers,
    passed_over,
    refusal,
    table_legend,
    table_rows,
    usd_short,
    with_days,
)
from engine.output.summary import (
    SCORE_LEGEND,
    against_break_even_line,
    assumed_work_line,
    bare_note,
    break_even_line,
    close_call_lines,
    headline,
    memory_line,
    owned_line,
    peaks_line,
    plan_line,
    price_lines,
    printable_decision,
    programme_line,
    programme_part_lines,
    purchase_line,
    revision_note,
    running_line,
    shown_axes,
    standing,
    top_reasons,
    usd,
    work_line,
)
from engine.output.table import console
from engine.rules.load import Rulebook

_SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def _grid() -> Any:
    from rich.table import Table

    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=2, no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


def render_text(decision: Decision, book: Rulebook,
                platforms: Mapping[str, str] | None = None) -> str:
    """The full decision for a person at a terminal (colour there, plain when piped);
    ``platforms`` (platform id → name, from the catalog) names what holds an owned pick's
    cards."""
    decision, platforms = printable_decision(decision, platforms)
    out = console()
    with out.capture() as captured:
        _render(out, decision, book, platforms)
    return "\n".join(line.rstrip() for line in captured.get().splitlines()) + "\n"


def render_brief(decision: Decision, book: Rulebook | None = None) -> str:
    """The one-screen answer (:mod:`engine.output.brief`), its headline bold on a
    terminal; ``book``, the rules it was made by, says which decision a cheaper
    alternative goes against."""
    from rich.markup import escape

    from engine.output.brief import brief_lines

    decision, _ = printable_decision(decision, None)
    lines = brief_lines(decision, book)
    out = console()
    with out.capture() as captured:
        for i, line in enumerate(lines):
            bold = i == 0 or line.startswith(("Why:", "Alternatives", "If you train"))
            out.print(f"[bold]{escape(line)}[/bold]" if bold else escape(line), soft_wrap=True)
    return "\n".join(line.rstrip() for line in captured.get().splitlines()) + "\n"


def _line(out: Any, text: str | None, style: str = "") -> None:
    from rich.markup import escape

    if text:
        out.print(f"[{style}]{escape(text)}[/{style}]" if style else escape(text))


def _render(out: Any, decision: Decision, book: Rulebook,
            platforms: Mapping[str, str] | None) -> None:
    _line(out, headline(decision), "bold")
    for text in (*price_lines(decision), assumed_work_line(decision),
                 purchase_line(decision, platforms),
                 running_line(decision), work_line(decision), programme_line(decision),
                 *(f"  {line}" for line in programme_part_lines(decision)),
                 memory_line(decision), break_even_line(decision),
                 against_break_even_line(decision), plan_line(decision),
                 owned_line(decision), peaks_line(decision),
                 *close_call_lines(decision)):
        _line(out, text)
    out.print()
    _line(out, SCORE_LEGEND, "dim")
    _decisions(out, decision)
    _hardware(out, decision, book)
    _notes(out, decision)
    curves = curves_from(decision.estimates)
    if curves is not None:
        out.print("[bold]Owning vs renting[/bold] (cost a year by the year's work)")
        for line in ascii_chart(curves, width=min(60, max(30, out.width - 12))):
            _line(out, line)
    _line(out, identity_line(decision), "dim")


def _decisions(out: Any, decision: Decision) -> None:
    from rich.markup import escape

    for title, result in shown_axes(decision):
        out.print(f"[bold]{title}: {escape(result.choice or 'none')}[/bold]  "
                  f"[dim]({escape(standing(result))})[/dim]")
        grid = _grid()
        revised = revision_note(result)
        if revised:
            grid.add_row(" !", escape(revised))
        reasons = top_reasons(result)
        prefix = f"{result.revised_from}: " if revised else ""
        for sign, text, sources, rule in reasons:
            grid.add_row(f" {sign}", f"{escape(prefix + text)} [dim]\\[{rule}; "
                                     f"{escape(', '.join(sources))}][/dim]")
        bare = None if reasons or revised else bare_note(result)
        if bare:
            grid.add_row(" ·", bare)
        out.print(grid)


def _hardware(out: Any, decision: Decision, book: Rulebook) -> None:
    from rich.markup import escape

    rows = table_rows(decision)
    if not rows:
        found = refusal(decision)
        if found:
            out.print("[bold]Hardware[/bold]")
            _line(out, found.head, "")
            grid = _grid()
            for text in found.rules:
                grid.add_row(" ✗", escape(text))
            out.print(grid)
            _line(out, found.memory, "")
            _line(out, found.alone, "")
        return
    days, at = with_days(decision), data_stays_in_region(decision)
    titles = ["", *headers(days, compact=True)]
    # too wide for the terminal: shorter sums ($65.8k, $5.32M), then the region wrapped too,
    # then the configuration (a plan of 100,000 GPUs)
    for money, wrapped in ((usd, {2}), (usd_short, {2}), (usd_short, {2, 3}),
                           (usd_short, {1, 2, 3})):
        printed = [[mark, *cells(cand, days, compact=True, money=money,
                                 beside_own=beside_own(decision, cand), rented_at=at)]
                   for mark, cand in rows]
        least = _column_widths(titles, printed, wrapped)
        if sum(least) + 2 * (len(least) - 1) <= out.width:  # a space of padding, one of rule
            break
    out.print(_hardware_table(titles, printed, least, out.width))
    split = beside_own(decision, decision.hardware.choice) is not None
    _line(out, table_legend(days, split=split), "dim")
    why = [*passed_over(decision, book), *filter(None, [cheaper_line(decision)])]
    if why:
        out.print("[bold]Why not the others[/bold]")
        grid = _grid()
        for text in why:
            grid.add_row(" ·", escape(text))
        out.print(grid)
    _line(out, excluded_line(decision), "dim")


def _column_widths(titles: list[str], printed: list[list[str]],
                   wrapped: set[int]) -> list[int]:
    """Each column's least width: the columns ``wrapped`` as wide as their longest word,
    the others as their widest cell."""
    widths = []
    for i, title in enumerate(titles):
        texts = [row[i] for row in printed]
        words = [w for text in texts for w in text.split()] if i in wrapped else texts
        widths.append(max(len(t) for t in [*title.split("\n"), *words]))
    return widths


def _hardware_table(titles: list[str], printed: list[list[str]], least: list[int],
                    width: int) -> Any:
    """The hardware table of the ``printed`` rows in ``width`` columns, each column at least
    ``least`` wide: only the configuration, the offer and the region may wrap, between
    words, never inside one, the region only where the offer cannot, the configuration only
    where neither can."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="Hardware (→ the pick, then by rule score and cost for your year's "
                        "work)",
                  box=box.SIMPLE_HEAD, title_justify="left", title_style="bold",
                  pad_edge=False, show_edge=False, padding=(0, 1, 0, 0))
    full = _column_widths(titles, printed, set())
    others = width - 2 * (len(full) - 1) - sum(
        w for i, w in enumerate(full) if i not in (1, 2, 3))
    # the configuration keeps its width unless the offer and region at their least leave
    # too little (``least`` is its longest word only where it may wrap)
    config = min(full[1], max(least[1], others - least[2] - least[3]))
    room = others - config
    # the offer takes what the region leaves it; the region wraps only if the offer cannot
    offer = min(full[2], max(least[2], room - full[3]))
    fixed = {1: config, 2: offer, 3: max(least[3], min(full[3], room - offer))}
    for i, title in enumerate(titles):
        table.add_column(title, justify="left" if i < 4 else "right", no_wrap=i not in fixed,
                         width=fixed.get(i))
    for row in printed:
        table.add_row(*(escape(c) for c in row))
    return table


def _notes(out: Any, decision: Decision) -> None:
    from rich.markup import escape

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
