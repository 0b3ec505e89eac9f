"""Readable text tables on a terminal (colour) or a pipe (plain), 80 columns wide."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any


def console() -> Any:
    """A rich Console on stdout: colour only on a terminal without NO_COLOR."""
    from rich.console import Console

    tty = sys.stdout.isatty()
    return Console(
        file=sys.stdout,
        width=None if tty else 80,
        no_color=bool(os.environ.get("NO_COLOR")) or not tty,
        highlight=False,
        soft_wrap=False,
        emoji=False,
    )


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]],
                *, right: Sequence[int] = (), caption: str | None = None) -> None:
    """Print one table; columns whose index is in ``right`` are right-aligned (numbers).

    The title and caption are paragraphs of their own, wrapped at 80 columns between words
    (a rich title would wrap at the width of a narrow table). Every cell, the title and the
    caption are shown :func:`~engine.files.printable.printable` (rows come from catalogs,
    price files and audit stores).
    """
    import textwrap

    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from engine.files.printable import printable

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1, 0, 0))
    for i, header in enumerate(headers):
        table.add_column(escape(printable(header)), justify="right" if i in right else "left",
                         overflow="fold", no_wrap=i in right)
    for row in rows:
        table.add_row(*(escape(printable(str(cell))) for cell in row))
    sys.stdout.write(textwrap.fill(printable(title), 80, break_long_words=False,
                                   break_on_hyphens=False) + "\n")
    print_clean(table)
    if caption:
        sys.stdout.write(textwrap.fill(printable(caption), 80, break_long_words=False,
                                       break_on_hyphens=False) + "\n")


def print_clean(*renderables: Any) -> None:
    """Print through rich, then strip the padding rich leaves at the end of each line."""
    out = console()
    with out.capture() as captured:
        for renderable in renderables:
            out.print(renderable)
    lines = [line.rstrip() for line in captured.get().splitlines()]
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def fmt_gib(value: float) -> str:
    """``1,139.0 GiB``: computed memory, one decimal, thousands grouped."""
    return f"{value:,.1f} GiB"


def fmt_gib_range(low: float, high: float) -> str:
    """``1,059.3–1,218.7 GiB``: both ends like :func:`fmt_gib`, the unit once."""
    return f"{low:,.1f}–{high:,.1f} GiB"


def fmt_usd(value: float) -> str:
    """``$1,234`` (no cents from $100 up), ``$4.37`` below."""
    return f"${value:,.0f}" if abs(value) >= 100 else f"${value:,.2f}"


def fmt_count(value: float) -> str:
    """``2,048``, ``0.4``: whole numbers grouped, a decimal only below ten."""
    return f"{value:,.0f}" if abs(value) >= 10 or value == int(value) else f"{value:.1f}"


def words(text: str) -> str:
    """``optimizer step`` from ``optimizer_step``: an identifier as a person reads it."""
    return text.replace("_", " ")
