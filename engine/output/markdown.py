"""Markdown rendering: the same content as text, shareable in a ticket or wiki."""

from __future__ import annotations

from engine.decide.engine import Decision
from engine.output.chart import ascii_chart, curves_from
from engine.output.summary import (
    SCORE_LEGEND,
    break_even_line,
    cells,
    cheaper_line,
    excluded_line,
    headers,
    headline,
    memory_line,
    purchase_line,
    revision_note,
    runner_up,
    shown_axes,
    table_rows,
    top_reasons,
    with_days,
    work_line,
)
from engine.rules.load import Rulebook

_SIGN_WORD = {"+": "for", "−": "against", "✗": "excluded"}


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|")


def render_markdown(decision: Decision, book: Rulebook) -> str:
    """The decision as a Markdown document."""
    lines = [f"# {headline(decision)}", ""]
    lines += [t for t in (purchase_line(decision), work_line(decision), memory_line(decision),
                          break_even_line(decision)) if t]
    lines += ["", "## Decisions", ""]
    for title, result in shown_axes(decision):
        other = runner_up(result)
        lines += [f"### {title}: {result.choice or '—'}" + (f" (next: {other})" if other
                                                             else ""), ""]
        revised = revision_note(result)
        if revised:
            lines.append(f"- **{revised}**")
        for sign, text, sources, rule in top_reasons(result):
            lines.append(f"- ({_SIGN_WORD[sign]}) {text} *[{rule}; {', '.join(sources)}]*")
        lines.append("")
    rows = table_rows(decision)
    if rows:
        days = with_days(decision)
        titles = headers(days)
        lines += ["## Hardware", "", "Cost for your year's work; → marks the pick.", "",
                  "| | " + " | ".join(titles) + " |",
                  "|---|---|---|" + "---:|" * (len(titles) - 2)]
        for mark, cand in rows:
            lines.append(f"| {mark} | " + " | ".join(_cell(c) for c in cells(cand, days)) + " |")
        lines.append("")
        lines += [f"{t}" for t in (cheaper_line(decision), excluded_line(decision)) if t]
        lines.append("")
    if decision.warnings:
        lines += ["## Warnings", ""]
        lines += [f"- **{w.severity}**: {w.text} *[{w.id}; {w.rule}]*" for w in decision.warnings]
        lines.append("")
    if decision.strategies:
        lines += ["## Strategies", ""]
        lines += [f"- {s.text} *[{s.id}]*" for s in decision.strategies]
        lines.append("")
    curves = curves_from(decision.estimates)
    if curves is not None:
        lines += ["## Owning vs renting", "", "```", *ascii_chart(curves), "```", ""]
    lines += [f"*{SCORE_LEGEND}*", "",
              f"*decision {decision.decision_id} · rules {decision.ruleset['hash'][:12]} · "
              f"catalog {decision.catalog['hash'][:12]}*"]
    return "\n".join(lines) + "\n"
