"""Terminal rendering with rich: headline, choices with reasons, hardware, warnings."""

from __future__ import annotations

from engine.recommend import Decision
from engine.render.summary import (
    AXIS_TITLES,
    applies,
    config_name,
    headline,
    runner_up,
    top_reasons,
    usd,
)
from engine.render.table import console
from engine.rulebook import Rulebook

_SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def render_text(decision: Decision, book: Rulebook) -> None:
    """Print the decision for a person at a terminal (plain text when piped)."""
    from rich import box
    from rich.table import Table

    out = console()
    out.print(f"[bold]{headline(decision)}[/bold]")
    mem = decision.estimates["memory"]
    out.print(f"Model {decision.facts['model_name']} ({decision.facts['params_b']:g}B), "
              f"{mem['method']}: ~{mem['total_gb']:.1f} GB peak per GPU "
              f"({mem['range_gb']['low']:.1f}–{mem['range_gb']['high']:.1f}).")
    be = decision.facts.get("break_even_hours")
    if be:
        out.print(f"Owning beats renting after {be:,.0f} busy hours; you plan "
                  f"{decision.facts['hours_per_year']:,.0f} a year.")
    out.print()
    for axis, title in AXIS_TITLES.items():
        result = decision.decisions[axis]
        if not applies(decision, axis):
            continue
        other = runner_up(result)
        tail = f"  [dim](next: {other})[/dim]" if other else ""
        out.print(f"[bold]{title}:[/bold] {result.choice or '—'}{tail}")
        for sign, text, sources, rule in top_reasons(result):
            out.print(f"  {sign} {text} [dim]\\[{rule}; {', '.join(sources)}][/dim]")
    hw = decision.hardware
    if hw.choice is not None:
        table = Table(title="Hardware", box=box.SIMPLE_HEAD, title_justify="left")
        for col, right in (("", False), ("configuration", False), ("where", False),
                           ("GB need/total", True), ("up front", True), ("per year", True)):
            table.add_column(col, justify="right" if right else "left", overflow="fold")
        for mark, cand in [("→", hw.choice), *(("", c) for c in hw.alternatives)]:
            where = cand.where if cand.where == "local" else f"{cand.provider} {cand.pricing}"
            table.add_row(mark, config_name(cand), where,
                          f"{cand.vram_needed_gb:.1f}/{cand.vram_total_gb:g}",
                          usd(cand.cost.upfront_usd), usd(cand.cost.per_year_usd))
        out.print(table)
        if hw.excluded:
            out.print(f"[dim]{len(hw.excluded)} of {hw.considered} configurations excluded "
                      f"(e.g. {hw.excluded[0].reasons[-1].text if hw.excluded[0].reasons else ''}"
                      ")[/dim]")
    if decision.warnings:
        out.print("[bold]Warnings[/bold]")
        for w in decision.warnings:
            style = _SEVERITY_STYLE.get(w.severity or "info", "")
            out.print(f"  [{style}]{w.severity}[/{style}] {w.text} "
                      f"[dim]\\[{w.id}; {w.rule}][/dim]")
    if decision.strategies:
        out.print("[bold]Strategies[/bold]")
        for s in decision.strategies:
            out.print(f"  • {s.text} [dim]\\[{s.id}][/dim]")
    out.print(f"[dim]decision {decision.decision_id} · rules {decision.ruleset['hash'][:12]} · "
              f"catalog {decision.catalog['hash'][:12]}[/dim]")
