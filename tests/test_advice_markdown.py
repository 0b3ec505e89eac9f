"""``--format markdown`` parsed by a Markdown library (markdown-it-py, CommonMark + tables):
clean lists (no ``- + …`` bullets), one table with a cell per column, the headline lines one
paragraph, and reasons, warnings and strategies as flat lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from markdown_it import MarkdownIt
from markdown_it.token import Token

from engine.cli import cli

EXAMPLES = Path(__file__).parent.parent / "examples"
ALL = sorted(EXAMPLES.iterdir())


def run(answers: Path, fmt: str) -> str:
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(answers),
                                      "--format", fmt])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def parse(text: str) -> list[Token]:
    return MarkdownIt("commonmark").enable("table").parse(text)


def sections(tokens: list[Token]) -> dict[str, list[Token]]:
    """The tokens under each level-2 heading (and ``""`` for what comes before the first)."""
    out: dict[str, list[Token]] = {"": []}
    name = ""
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            name = tokens[i + 1].content
            out[name] = []
        elif not (i and tokens[i - 1].type == "heading_open" and tokens[i - 1].tag == "h2"):
            out[name].append(token)
    return out


def list_items(tokens: list[Token]) -> list[str]:
    """The text of every list item (a paragraph inside ``list_item``)."""
    return [tokens[i + 1].content for i, t in enumerate(tokens)
            if t.type == "paragraph_open" and tokens[i - 1].type == "list_item_open"]


@pytest.mark.parametrize("answers", ALL, ids=lambda p: p.name)
def test_lists_are_flat_and_clean(answers: Path) -> None:
    tokens = parse(run(answers, "markdown"))
    depth = 0
    for token in tokens:
        if token.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
            assert depth == 1, "a list nested in a list item"
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
    items = list_items(tokens)
    assert items
    assert not [i for i in items if i[:2] in ("+ ", "- ", "* ", "− ")]
    assert not [t for t in tokens if t.type == "ordered_list_open"]


@pytest.mark.parametrize("answers", ALL, ids=lambda p: p.name)
def test_the_hardware_table_parses_with_a_cell_per_column(answers: Path) -> None:
    text = run(answers, "markdown")
    decision: dict[str, Any] = json.loads(run(answers, "json"))
    hardware = sections(parse(text))["Hardware"]
    assert [t.type for t in hardware].count("table_open") == 1
    heads = [hardware[i + 1].content for i, t in enumerate(hardware) if t.type == "th_open"]
    assert heads[:5] == ["", "configuration", "offer", "region", "$/GPU-hour"]
    assert heads[-2:] == ["up front", "cost a year"]
    rows: list[list[str]] = []
    for i, t in enumerate(hardware):
        if t.type == "tr_open" and hardware[i + 1].type == "td_open":
            rows.append([])
        elif t.type == "td_open":
            rows[-1].append(hardware[i + 1].content)
    hw = decision["hardware"]
    assert len(rows) == 1 + len(hw["alternatives"])
    assert all(len(row) == len(heads) for row in rows)
    assert [row[0] for row in rows].count("→") == 1
    pick = next(row for row in rows if row[0] == "→")
    assert pick[1] == f"{hw['choice']['count']}× {hw['choice']['gpu_label']}"
    assert pick[-1] == f"${hw['choice']['cost']['per_year_usd']:,.0f}"


def test_the_headline_lines_are_paragraphs_of_their_own() -> None:
    """Each line under the title is a paragraph of its own: rendered, the work, the memory
    and the break-even do not run together."""
    tokens = parse(run(EXAMPLES / "startup-7b-continuous.yaml", "markdown"))
    assert tokens[0].tag == "h1" and tokens[1].content.startswith("Buy: 1× RTX 5090")
    paragraphs = []
    i = 3
    while tokens[i].type in ("paragraph_open", "bullet_list_open"):
        if tokens[i].type == "bullet_list_open":  # the programme's parts
            i = next(j for j in range(i, len(tokens)) if tokens[j].type == "bullet_list_close")
            i += 1
            continue
        paragraphs.append(tokens[i + 1].content)
        i += 3
    assert [p.split(" ", 1)[0] for p in paragraphs] == ["$5,280", "$2,005", "Work:", "Your",
                                                        "Model", "Owning", "A", "A"]
    assert paragraphs[0] == ("$5,280 up front = 1× RTX 5090 $3,300 + desktop for 1-2 GeForce "
                             "cards $1,980.")
    assert all("\n" not in p for p in paragraphs)
    assert tokens[i].type == "heading_open"


def test_each_decision_has_its_standing_and_reasons() -> None:
    tokens = parse(run(EXAMPLES / "enterprise-aws.json", "markdown"))
    decisions = sections(tokens)["Decisions"]
    titles = [decisions[i + 1].content for i, t in enumerate(decisions)
              if t.type == "heading_open" and t.tag == "h3"]
    assert titles == ["Approach: fine-tune", "Method: lora", "Deployment: cloud",
                      "Cloud kind: hyperscaler", "Pricing: on-demand", "Sharing: dedicated"]
    html = MarkdownIt("commonmark").render(run(EXAMPLES / "enterprise-aws.json", "markdown"))
    assert "<p><em>Score 2, ahead of hybrid at -3.</em></p>" in html
    assert ("<li>(excluded) local: You cannot spend capital up front, which buying hardware "
            "requires: rent, and the cost is spread over the year. <em>[tier.no-capex; "
            "decide.local, decide.cloud]</em></li>") in html
    why = list_items(sections(tokens)["Hardware"])
    assert why[0].startswith("2× RTX 4090, RunPod CC on-demand ($189 a year, $279 less): "
                             "cloud kind is hyperscaler:")


def test_prose_that_looks_like_markup_stays_text() -> None:
    from engine.output.markdown import _text

    md = MarkdownIt("commonmark")
    for raw in ("- not a bullet", "+ 3 GiB", "# no heading", "1. not a list",
                "a *b* c_d_e [x](y) <b>", "x | y"):
        html = md.render(_text(raw))
        assert html.startswith("<p>") and "<em>" not in html and "<a " not in html, html
        assert "<b>" not in html


def test_a_refusal_lists_what_shut_out_the_configurations(tmp_path: Path) -> None:
    """No configuration is eligible (data in a country no offer is priced in, no capital):
    the Hardware section lists the excluding rules, most first, and the limits that alone
    keep configurations out."""
    scenario = Path(__file__).parent / "scenarios" / "48-country-no-offer-serves.yaml"
    answers = tmp_path / "answers.yaml"
    answers.write_text(yaml.safe_dump(yaml.safe_load(scenario.read_text())["answers"]))
    hardware = sections(parse(run(answers, "markdown")))["Hardware"]
    paragraphs = [tokens.content for tokens in hardware if tokens.type == "inline"]
    assert paragraphs[0].startswith("All ") and paragraphs[0].endswith(
        " configurations are excluded:")
    rules = [item.split(" by ", 1)[1].split(",", 1)[0] for item in list_items(hardware)]
    assert rules[0] == "residency.region-excludes-offers" and len(rules) == 4
    assert paragraphs[-1].startswith("Kept out by one limit only: ")
    assert "by tier.no-capex-candidates" in paragraphs[-1]
