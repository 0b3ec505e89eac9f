"""Markdown rendering: the same content as text, shareable in a ticket or wiki."""

from __future__ import annotations

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
from engine.rulebook import Rulebook


def render_markdown(decision: Decision, book: Rulebook) -> str:
    """The decision as a Markdown document."""
    lines = [f"# {headline(decision)}", ""]
    lines.append(memory_line(decision))
    lines += ["", "## Decisions", ""]
    for axis, title in AXIS_TITLES.items():
        result = decision.decisions[axis]
        if not applies(decision, axis):
            continue
        other = runner_up(result)
        lines.append(f"### {title}: {result.choice or '—'}" + (f" (next: {other})" if other
                                                                else ""))
        lines.append("")
        for sign, text, sources, rule in top_reasons(result):
            lines.append(f"- {sign} {text} *[{rule}; {', '.join(sources)}]*")
        lines.append("")
    hw = decision.hardware
    if hw.choice is not None:
        lines += ["## Hardware", "", "| | configuration | where | GB/GPU need/has | up front | "
                  "per year |", "|---|---|---|---:|---:|---:|"]
        for mark, cand in [("→", hw.choice), *(("", c) for c in hw.alternatives)]:
            where = cand.where if cand.where == "local" else f"{cand.provider} {cand.pricing}"
            lines.append(f"| {mark} | {config_name(cand)} | {where} | "
                         f"{cand.vram_needed_gb:.1f}/{cand.vram_total_gb / cand.count:g} | "
                         f"{usd(cand.cost.upfront_usd)} | {usd(cand.cost.per_year_usd)} |")
        lines.append("")
    if decision.warnings:
        lines += ["## Warnings", ""]
        lines += [f"- **{w.severity}** {w.text} *[{w.id}; {w.rule}]*" for w in decision.warnings]
        lines.append("")
    if decision.strategies:
        lines += ["## Strategies", ""]
        lines += [f"- {s.text} *[{s.id}]*" for s in decision.strategies]
        lines.append("")
    curves = curves_from(decision.facts, decision.estimates["traces"])
    if curves is not None:
        lines += ["## Owning vs renting", "", "```", *ascii_chart(curves), "```", ""]
    lines.append(f"*decision {decision.decision_id} · rules {decision.ruleset['hash'][:12]} · "
                 f"catalog {decision.catalog['hash'][:12]}*")
    return "\n".join(lines) + "\n"
