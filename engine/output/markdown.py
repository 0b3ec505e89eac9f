"""Markdown rendering: the same content as text, shareable in a ticket or wiki."""

from __future__ import annotations

import re
from collections.abc import Mapping

from engine.decide.engine import Decision
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
    work_line,
)
from engine.rules.load import Rulebook

_SIGN_WORD = {"+": "for", "−": "against", "✗": "excluded"}


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|")


def render_markdown(decision: Decision, book: Rulebook,
                    platforms: Mapping[str, str] | None = None) -> str:
    """The decision as a Markdown document (``platforms``: platform id → name)."""
    decision, platforms = printable_decision(decision, platforms)
    lines = [f"# {_text(headline(decision))}", ""]
    # a paragraph each: the work, the memory, the break-even… stay apart when rendered
    for text in (*price_lines(decision), assumed_work_line(decision),
                 purchase_line(decision, platforms), running_line(decision),
                 work_line(decision), programme_line(decision), memory_line(decision),
                 break_even_line(decision),
                 against_break_even_line(decision), plan_line(decision), owned_line(decision),
                 peaks_line(decision), *close_call_lines(decision)):
        if text:
            lines += [_text(text), ""]
        if text and text == programme_line(decision):
            lines += [*(f"- {_text(part)}" for part in programme_part_lines(decision)), ""]
    lines += ["", "## Decisions", "", _text(SCORE_LEGEND), ""]
    for title, result in shown_axes(decision):
        lines += [f"### {title}: {result.choice or 'none'}", "",
                  f"*{_text(standing(result)).capitalize()}.*", ""]
        revised = revision_note(result)
        if revised:
            lines.append(f"- **{_text(revised)}**")
        reasons = top_reasons(result)
        for sign, text, sources, rule in reasons:
            lines.append(f"- ({_SIGN_WORD[sign]}) {_text(text)} "
                         f"*\\[{rule}; {', '.join(sources)}\\]*")
        bare = None if reasons or revised else bare_note(result)
        if bare:
            lines.append(f"- {bare}")
        lines.append("")
    lines += _hardware(decision, book)
    if decision.warnings:
        lines += ["## Warnings", ""]
        lines += [f"- **{w.severity}**: {_text(w.text)} *\\[{w.id}; {w.rule}\\]*"
                  for w in decision.warnings]
        lines.append("")
    if decision.strategies:
        lines += ["## Strategies", ""]
        lines += [f"- {_text(s.text)} *\\[{s.id}\\]*" for s in decision.strategies]
        lines.append("")
    curves = curves_from(decision.estimates)
    if curves is not None:
        lines += ["## Owning vs renting", "", "```", *ascii_chart(curves), "```", ""]
    lines += [f"*decision {decision.decision_id} · rules {decision.ruleset['hash'][:12]} · "
              f"catalog {decision.catalog['hash'][:12]}*"]
    return "\n".join(lines) + "\n"


def _hardware(decision: Decision, book: Rulebook) -> list[str]:
    """The hardware table in rank order, its legend, and why the others were not taken."""
    rows = table_rows(decision)
    if not rows:
        return _refused(decision)
    days, at = with_days(decision), data_stays_in_region(decision)
    titles = headers(days)
    lines = ["## Hardware", "",
             "→ marks the pick; the others by rule score, then cost for your year's work.",
             "", "| | " + " | ".join(titles) + " |",
             "|---|---|---|---|" + "---:|" * (len(titles) - 3)]
    for mark, cand in rows:
        lines.append(f"| {mark} | " + " | ".join(
            _cell(c) for c in cells(cand, days, beside_own=beside_own(decision, cand),
                                    rented_at=at)) + " |")
    split = beside_own(decision, decision.hardware.choice) is not None
    lines += ["", _text(table_legend(days, compact=False, split=split)), ""]
    why = [*passed_over(decision, book), *filter(None, [cheaper_line(decision)])]
    if why:
        lines += ["Why not the others:", "", *(f"- {_text(t)}" for t in why), ""]
    excluded = excluded_line(decision)
    if excluded:
        lines += [_text(excluded), ""]
    return lines


def _refused(decision: Decision) -> list[str]:
    """Where no configuration is eligible: the rules that shut them out, and the limits
    that alone keep some out."""
    found = refusal(decision)
    if found is None:
        return []
    return ["## Hardware", "", _text(found.head), "", *(f"- {_text(t)}" for t in found.rules),
            "", *(item for line in (found.memory, found.alone) if line
                  for item in (_text(line), ""))]


def _text(text: str) -> str:
    """Prose as Markdown shows it literally: ``*``, ``_``, brackets and the like escaped, and
    a line that would start a list, heading or quote kept a paragraph."""
    escaped = re.sub(r"([\\`*_\[\]<>|])", r"\\\1", text)
    return re.sub(r"^([-+#>]|\d+[.)])", r"\\\1", escaped)
