"""One self-contained HTML page of a decision: readable offline, printable, fetching nothing.

The one-screen answer at the top (decision, cost, why, next step), then everything the full
text output has: the decisions with their reasons and sources, the hardware table, why not
the others, the owning-vs-renting chart (inline SVG, the same drawing as ``--chart``),
what-if where it was worked out, warnings, strategies, and what an auditor looks the
decision up by. Every text is escaped; the only links are the offer's page and the catalog's
sources, which a reader follows, the page never loads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from engine.decide.engine import Decision
from engine.output.brief import brief_items, identity_line
from engine.output.chart import curves_from, svg_chart
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
    bare_note,
    break_even_line,
    close_call_lines,
    headline,
    memory_line,
    owned_line,
    peaks_line,
    plan_line,
    printable_decision,
    programme_line,
    programme_part_lines,
    purchase_line,
    revision_note,
    running_line,
    shown_axes,
    standing,
    top_reasons,
)
from engine.rules.load import Rulebook

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1b1b;margin:0;
background:#fafafa}
main{max-width:62rem;margin:0 auto;padding:1.5rem 2rem 3rem;background:#fff}
h1{font-size:1.5rem;margin:.2rem 0 .8rem}h2{font-size:1.15rem;margin:2rem 0 .5rem;
border-bottom:1px solid #ddd;padding-bottom:.2rem}h3{font-size:1rem;margin:1.2rem 0 .3rem}
.brief{background:#f3f6fa;border-left:4px solid #1f77b4;padding:.6rem 1rem;margin:0 0 1rem}
.brief p{margin:.25rem 0}.muted{color:#666;font-size:.85rem}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{padding:.25rem .5rem;
border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}td.n,th.n{text-align:right}
tr.pick{background:#eef6ee;font-weight:600}ul{padding-left:1.3rem}li{margin:.2rem 0}
.sign{display:inline-block;width:1.2rem;font-weight:700}.src{color:#666;font-size:.8rem}
.sev-critical{color:#b00020;font-weight:700}.sev-warning{color:#a25b00;font-weight:700}
.sev-info{color:#1f5f8b}figure{margin:1rem 0}svg{max-width:100%;height:auto}
@media print{body{background:#fff}main{padding:0}.brief{break-inside:avoid}
h2{break-after:avoid}}
"""


def render_html(decision: Decision, book: Rulebook, platforms: Mapping[str, str] | None = None,
                whatif: Sequence[str] = ()) -> str:
    """The decision as one HTML document (``platforms``: platform id → name; ``whatif``:
    the what-if lines, where they were worked out)."""
    decision, platforms = printable_decision(decision, platforms)
    title = headline(decision)
    parts = [f"<h1>{escape(title)}</h1>", _brief(decision, book)]
    parts += _details(decision, platforms)
    parts += _decisions(decision)
    parts += _hardware(decision, book)
    parts += _chart(decision)
    if whatif:
        parts += ["<h2>What would change the answer</h2>", _list(whatif)]
    parts += _notes(decision)
    parts.append(f'<p class="muted">{escape(identity_line(decision))} · engine '
                 f'{escape(decision.engine_version)} · rules '
                 f'{escape(decision.ruleset["hash"])} · catalog '
                 f'{escape(decision.catalog["hash"])}</p>')
    body = "\n".join(parts)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'; img-src data:\">\n"
            f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
            f"{body}\n</main>\n</body>\n</html>\n")


def _brief(decision: Decision, book: Rulebook) -> str:
    """The one-screen answer, whole sentences, the offer's page a link."""
    link = decision.hardware.choice.link if decision.hardware.choice else None
    out: list[str] = []
    listed: list[str] = []
    for kind, text in brief_items(decision, book=book):
        if kind in ("headline", "identity", "more"):
            continue  # the page below has everything --explain would add
        if kind in ("reason", "ruled-out", "alternative"):
            sign = "✗ " if kind == "ruled-out" else ""
            listed.append(f"<li>{escape(sign + text)}</li>")
            continue
        if listed:
            out.append("<ul>" + "".join(listed) + "</ul>")
            listed = []
        html = escape(text)
        if link and escape(link) in html:
            html = html.replace(escape(link), f'<a href="{escape(link)}">{escape(link)}</a>')
        tag = "strong" if kind in ("why", "alternatives") else "span"
        out.append(f'<p class="{kind}"><{tag}>{html}</{tag}></p>')
    if listed:
        out.append("<ul>" + "".join(listed) + "</ul>")
    return '<section class="brief">' + "".join(out) + "</section>"


def _details(decision: Decision, platforms: Mapping[str, str] | None) -> list[str]:
    texts = [purchase_line(decision, platforms), running_line(decision),
             programme_line(decision), *programme_part_lines(decision), memory_line(decision),
             break_even_line(decision), against_break_even_line(decision), plan_line(decision),
             owned_line(decision), peaks_line(decision), *close_call_lines(decision)]
    shown = [t for t in texts if t]
    title = "The pick in detail" if decision.hardware.choice else "The job"
    return [f"<h2>{title}</h2>", *(f"<p>{escape(t)}</p>" for t in shown)]


def _decisions(decision: Decision) -> list[str]:
    out = ["<h2>Decisions</h2>", f'<p class="muted">{escape(SCORE_LEGEND)}</p>']
    for title, result in shown_axes(decision):
        out.append(f"<h3>{escape(title)}: {escape(result.choice or 'none')} "
                   f'<span class="muted">({escape(standing(result))})</span></h3>')
        items = []
        revised = revision_note(result)
        if revised:
            items.append(f'<li><span class="sign">!</span>{escape(revised)}</li>')
        for sign, text, sources, rule in top_reasons(result):
            items.append(f'<li><span class="sign">{escape(sign)}</span>{escape(text)} '
                         f'<span class="src">[{escape(rule)}; {escape(", ".join(sources))}]'
                         "</span></li>")
        bare = None if items else bare_note(result)
        if bare:
            items.append(f"<li>{escape(bare)}</li>")
        if items:
            out.append("<ul>" + "".join(items) + "</ul>")
    return out


def _hardware(decision: Decision, book: Rulebook) -> list[str]:
    rows = table_rows(decision)
    if not rows:
        found = refusal(decision)
        if found is None:
            return []
        return ["<h2>Hardware</h2>", f"<p>{escape(found.head)}</p>", _list(found.rules),
                *(f"<p>{escape(line)}</p>" for line in (found.memory, found.alone) if line)]
    days, at = with_days(decision), data_stays_in_region(decision)
    titles = headers(days)
    numeric = set(range(4, len(titles) + 1))  # after the mark, configuration, offer, region
    head = "".join(f'<th{" class=n" if i in numeric else ""}>{escape(t)}</th>'
                   for i, t in enumerate(["", *titles]))
    body = []
    split = beside_own(decision, decision.hardware.choice) is not None
    for mark, cand in rows:
        tds = "".join(f'<td{" class=n" if i in numeric else ""}>{escape(c)}</td>'
                      for i, c in enumerate(["→" if mark.strip() else "",
                                             *cells(cand, days,
                                                    beside_own=beside_own(decision, cand),
                                                    rented_at=at)]))
        body.append(f'<tr{" class=pick" if mark.strip() else ""}>{tds}</tr>')
    out = ["<h2>Hardware</h2>",
           '<p class="muted">→ marks the pick; the others by rule score, then cost for your '
           "year's work.</p>",
           f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>",
           f'<p class="muted">{escape(table_legend(days, compact=False, split=split))}</p>']
    why = [*passed_over(decision, book), *filter(None, [cheaper_line(decision)])]
    if why:
        out += ["<h3>Why not the others</h3>", _list(why)]
    excluded = excluded_line(decision)
    if excluded:
        out.append(f'<p class="muted">{escape(excluded)}</p>')
    return out


def _chart(decision: Decision) -> list[str]:
    curves = curves_from(decision.estimates)
    if curves is None:
        return []
    return ["<h2>Owning vs renting</h2>", f"<figure>{svg_chart(curves)}</figure>"]


def _notes(decision: Decision) -> list[str]:
    out = []
    if decision.warnings:
        items = "".join(
            f'<li><span class="sev-{escape(w.severity or "info")}">{escape(w.severity or "info")}'
            f"</span> {escape(w.text)} "
            f'<span class="src">[{escape(w.id)}; {escape(w.rule)}]</span></li>'
            for w in decision.warnings)
        out += ["<h2>Warnings</h2>", f"<ul>{items}</ul>"]
    if decision.strategies:
        items = "".join(f'<li>{escape(s.text)} <span class="src">[{escape(s.id)}]</span></li>'
                        for s in decision.strategies)
        out += ["<h2>Ways to cut the bill</h2>", f"<ul>{items}</ul>"]
    return out


def _list(texts: Sequence[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(t)}</li>" for t in texts) + "</ul>"
