"""Text output that reads like advice (issue 18.2): the hardware table in rank order with the
pick marked, offer, region, $/GPU-hour, days a run or busy hours, and cost for the work; why
the others were not taken; every axis with a reason; scores in words with a legend; the
purchase broken into cards and platform; and a chart target refused before anything runs."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from helpers.axes import made_axis, why

from engine.cli import cli
from engine.decide.decision import AxisDecision, OptionScore
from engine.decide.engine import Decision, load_engine
from engine.output.hardware_rows import rank_key
from engine.output.summary import NO_RULE, SCORE_LEGEND, standing, top_reasons
from engine.output.text import render_text

REPO = Path(__file__).parent.parent
EXAMPLES = REPO / "examples"
SCENARIOS = REPO / "tests" / "scenarios"
LOCAL = EXAMPLES / "startup-7b-continuous.yaml"       # buys one RTX 5090
CLOUD = EXAMPLES / "research-70b-intermittent.yaml"   # rents, work in runs
AWS = EXAMPLES / "enterprise-aws.json"                # a cheaper row beaten
AXIS_HEAD = re.compile(r"^(Approach|Method|Deployment|Cloud kind|Pricing|Sharing): (\S+)  \(")


def run(answers: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--explain", "--answers",
                                      str(answers), *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def data(answers: Path) -> dict[str, Any]:
    return json.loads(run(answers, "--format", "json"))  # type: ignore[no-any-return]


def scenario_answers(tmp_path: Path, name: str) -> Path:
    """The answers of a scenario file as an answers file of their own."""
    answers = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text(encoding="utf-8"))["answers"]
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(answers), encoding="utf-8")
    return path


def table(out: str) -> list[str]:
    """The hardware table's rows (the lines after its rule, up to its legend)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("─")) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("$ per GPU-h:"))
    return lines[start:end]


# --- the hardware table -----------------------------------------------------------------------

def test_the_table_has_offer_region_price_days_and_cost_and_fits_80_columns() -> None:
    out = run(CLOUD)
    head = out[out.index("Hardware (→ the pick"):].splitlines()[:4]
    assert head[0] == "Hardware (→ the pick, then by rule score and cost for your year's work)"
    assert head[1].split() == ["$", "per", "days", "up", "cost"]
    assert head[2].split() == ["configuration", "offer", "region", "GPU-h", "a", "run",
                               "front", "a", "year"]
    rows = table(out)
    assert rows[0] == ("   8× H100 SXM      Vast.ai on-demand    us,eu +1   2.40    0.3"
                       "       $0    $864")  # ranked higher, on another cloud kind
    assert rows[1] == ("→  2× B200          RunPod on-demand     us,eu +2   6.79    0.4"
                       "       $0    $974")
    assert rows[-1] == ("   2× RTX PRO 6000  to buy               on site    0.12    2.5"
                        "  $25,586  $7,024")
    assert all(len(line) <= 80 for line in out.splitlines())
    assert ("$ per GPU-h: price per GPU-hour (owned: power); days a run: how long one "
            "training run takes;") in " ".join(out.split())
    assert all(len(line) <= 80 for line in out.splitlines())


def test_a_plan_of_100000_gpus_wraps_its_configuration_not_the_sums() -> None:
    """A plan so large that its configuration, offer and region at their least leave too
    little room: the configuration wraps between words, and every sum prints whole."""
    decision = load_engine().recommend(
        {"planned_gpu": "rtx-pro-6000-blackwell-server", "planned_gpu_count": 100_000,
         "model_params_b": 1.0, "work_unknown": True, "budget_usd": 1e9}, decision_id="x")
    out = render_text(decision, load_engine().rulebook)
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "…" not in "".join(table(out))
    plan = next(i for i, row in enumerate(table(out)) if "100,000×" in row)
    assert table(out)[plan].split()[:4] == ["100,000×", "RTX", "PRO", "6000"]
    assert table(out)[plan + 1].split()[0] == "Server"


def test_work_in_hours_comes_in_runs_with_their_length() -> None:
    """GPU-hours a year come in runs (here of the default length, said as assumed): the table
    shows how long one run takes, as for work in tokens."""
    out = run(LOCAL)
    assert "days" in out[out.index("Hardware (→ the pick"):].splitlines()[1]
    assert table(out)[0] == ("→  1× RTX 5090    to buy               on site    0.14    0.6"
                             "  $5,280  $2,005")
    assert "in runs of 24 hours (assumed)" in " ".join(out.split())


@pytest.mark.parametrize("name", ["08-quad-4090-box", "05-high-volume-api",
                                  "29-aws-reserved-steady"])
def test_rows_are_in_rank_order_with_the_pick_marked(tmp_path: Path, name: str) -> None:
    """The pick is not always the best-ranked row: it stands where the engine ranks it."""
    answers = scenario_answers(tmp_path, name)
    hw = data(answers)["hardware"]
    ranked = sorted([hw["choice"], *hw["alternatives"]], key=lambda c: (
        -c["score"], c["cost"]["per_year_usd"], c["cost"]["upfront_usd"], c["id"]))
    rows = table(run(answers))
    shown = [row for row in rows if re.match(r"^(→ | {2}) \d+× ", row)]
    assert len(shown) == len(ranked)
    for row, cand in zip(shown, ranked, strict=True):
        assert row[3:].startswith(f"{cand['count']}× {cand['gpu_label']} "), (row, cand["id"])
        assert row.startswith("→") == (cand["id"] == hw["choice"]["id"])
        assert f"${cand['cost']['per_year_usd']:,.0f}" in row


def test_rank_key_is_the_engines_order() -> None:
    """The output's order is the engine's: the alternatives come out of it already sorted."""
    engine = load_engine()
    from engine.answers.model import load_answers

    decision = engine.recommend(load_answers(CLOUD, (), engine.catalog))
    alternatives = decision.hardware.alternatives
    assert alternatives == sorted(alternatives, key=rank_key)


# --- why not the others, fallbacks -----------------------------------------------------------

def test_why_the_pick_beat_a_cheaper_row_is_printed() -> None:
    out = run(AWS)
    cheaper = data(AWS)["hardware"]["cheaper"]
    assert cheaper is not None
    joined = " ".join(out.split())
    assert "Why not the others · 2× RTX 4090, RunPod CC on-demand ($189 a year, $279 less): " \
           "cloud kind is hyperscaler: You already run on aws" in joined
    assert f"[{cheaper['rule']}]" in joined


def test_rows_ranked_above_the_pick_say_which_decision_they_go_against(tmp_path: Path) -> None:
    out = run(scenario_answers(tmp_path, "26-small-model-full-finetune"))
    joined = " ".join(out.split())
    # the decision a row goes against, with that decision's own reason and rule (not
    # "deployment is local, this one is rented"); the marketplace row costs less than
    # owning, so what kept it out is the kind of cloud the rented side was weighed on, not
    # "owning costs less" (the axes that apply only to renting come first)
    assert "· 1× L40S, RunPod CC on-demand (ranked higher): cloud kind is specialised: " \
           "With no cloud ecosystem to stay in" in joined
    assert "[cloud.gpu-centric-specialised]." in joined
    assert "this one is rented" not in joined
    assert "(ranked higher): deployment is local" not in joined


SITE_RULES = """\
rules:
  - id: site.spot-first
    description: This site prefers spot wherever it can get it.
    when:
      all:
        - {fact: workload, eq: fine-tune}
    then:
      - prefer: {decision: pricing, option: spot, weight: 5}
    because: Site policy prefers spot.
    sources: [tier.entry]
  - id: site.no-spot-on-hyperscalers
    description: This site refuses spot capacity on a hyperscaler.
    match: candidate
    when:
      all:
        - {fact: provider_kind, eq: hyperscaler}
        - {fact: pricing, eq: spot}
    then:
      - exclude: {}
    because: Site policy refuses spot on a hyperscaler.
    sources: [tier.entry]
"""


def test_a_pricing_fallback_is_printed_with_its_reason(tmp_path: Path) -> None:
    # a rule author's site policy: spot first, but never on a hyperscaler; a GCP team's
    # pricing falls back to on-demand and says why
    rules = tmp_path / "rules"
    shutil.copytree(REPO / "rules", rules)
    (rules / "site.yaml").write_text(SITE_RULES, encoding="utf-8")
    answers = scenario_answers(tmp_path, "45-entry-budget-spot-that-saves")
    pricing = json.loads(run(answers, "--rules", str(rules), "--format", "json"))[
        "decisions"]["pricing"]
    assert (pricing["revised_from"], pricing["choice"]) == ("spot", "on-demand")
    lines = run(answers, "--rules", str(rules)).splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("Pricing: "))
    assert lines[head] == "Pricing: on-demand  (revised: the rules chose spot at 5)"
    assert " ".join(" ".join(lines[head + 1:head + 3]).split()) == (
        "! revised from spot: no offer on a hyperscaler cloud that holds this job lists a "
        "spot price: on-demand")


# --- axes: a reason each, scores in words ----------------------------------------------------

@pytest.mark.parametrize("answers", sorted(EXAMPLES.iterdir()), ids=lambda p: p.name)
def test_every_axis_shows_a_reason_and_no_bare_hint(answers: Path) -> None:
    out = run(answers)
    assert "(next:" not in out
    lines = out.splitlines()
    assert " ".join(out.split()).count(SCORE_LEGEND) == 1
    heads = [i for i, line in enumerate(lines) if AXIS_HEAD.match(line)]
    assert len(heads) >= 4
    for i in heads:
        assert re.match(r"^ [+−✗!·] ", lines[i + 1]), lines[i:i + 2]


def test_scores_in_words() -> None:
    lines = run(LOCAL).splitlines()
    assert "Deployment: local  (score 8, ahead of cloud at 0)" in lines
    assert "Sharing: dedicated  (score 1, ahead of fractional at 0)" in lines


def _axis(scores: dict[str, float], excluded: tuple[str, ...] = ()) -> AxisDecision:
    ranking = [OptionScore(option=o, score=s, excluded=o in excluded, reasons=[])
               for o, s in scores.items()]
    return AxisDecision(choice=next(o for o in scores if o not in excluded), ranking=ranking)


def test_standing_words() -> None:
    assert standing(_axis({"a": 2, "b": 0})) == "score 2, ahead of b at 0"
    assert standing(_axis({"a": 0, "b": 0})) == "score 0, tied with b: first declared option"
    assert standing(_axis({"b": 0, "a": 0}, excluded=("a",))) == (
        "score 0; every other option was ruled out")


def test_an_axis_decided_by_declared_order_only_says_so(capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    engine = load_engine()
    from engine.answers.model import load_answers

    decision = engine.recommend(load_answers(LOCAL, (), engine.catalog))
    bare = _axis({"dedicated": 0, "fractional": 0})
    assert top_reasons(bare) == []
    changed = Decision.model_validate({**decision.model_dump(), "decisions": {
        **decision.decisions, "sharing": bare}})
    lines = render_text(changed, engine.rulebook).splitlines()
    head = lines.index("Sharing: dedicated  (score 0, tied with fractional: first declared "
                       "option)")
    assert lines[head + 1] == f" · {NO_RULE}"
    assert NO_RULE == "No rule preferred an option; first declared option."


def test_an_axis_the_pick_decides_never_claims_the_declared_order(tmp_path: Path) -> None:
    """The method follows the pick; with no pick (a refusal) it was not chosen by declared
    order either: no "No rule preferred" line in text, markdown or HTML."""
    answers = scenario_answers(tmp_path, "48-country-no-offer-serves")
    for fmt in ("text", "markdown", "html"):
        out = run(answers, "--format", fmt).replace("Chosen", "chosen")
        assert "No configuration in the catalog can do this job" in out
        start = out.index("chosen with the hardware: no configuration holds the job")
        method = out[start:out.index("Deployment", start)]   # the method's block only
        assert NO_RULE not in method, fmt


# --- what buying costs -------------------------------------------------------------------------

def test_the_purchase_is_cards_plus_platform() -> None:
    decision = data(LOCAL)
    i = decision["estimates"]["traces"]["pick_purchase_usd"]["inputs"]
    assert (i["cards"], i["platform"]) == (1, "consumer-box-2")
    lines = run(LOCAL).splitlines()
    assert lines[1] == (f"${i['cards_usd'] + i['platform_usd']:,.0f} up front = 1× RTX 5090 "
                        f"${i['cards_usd']:,.0f} + desktop for 1-2 GeForce cards "
                        f"${i['platform_usd']:,.0f}.")
    assert " ".join(" ".join(lines[2:4]).split()).startswith(
        "$2,005 a year = $1,474 write-off (less resale) and upkeep + $531 power for 3,785 busy "
        "hours.")


def test_several_cards_are_priced_each(tmp_path: Path) -> None:
    out = " ".join(run(scenario_answers(tmp_path, "26-small-model-full-finetune")).split())
    assert "$3,710 up front = 2× RTX 4070 Ti S $1,730 ($865 each) + desktop for 1-2 GeForce " \
           "cards $1,980." in out


def test_renting_shows_no_purchase_line() -> None:
    assert " up front = " not in run(CLOUD)


# --- as a subprocess ---------------------------------------------------------------------------

@pytest.mark.slow
def test_the_advice_as_a_subprocess() -> None:
    done = subprocess.run([sys.executable, "-m", "engine", "recommend", "--answers", str(LOCAL),
                           "--no-audit", "--explain"], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].endswith("+ desktop for 1-2 GeForce cards $1,980.")
    assert "Hardware (→ the pick, then by rule score and cost for your year's work)" in lines
    assert "Deployment: local  (score 8, ahead of cloud at 0)" in lines
    assert all(len(line) <= 80 for line in lines)


def test_audit_show_names_the_platform_as_recommend_did(tmp_path: Path) -> None:
    """The purchase line of a recorded owned pick reads the same in ``audit show``."""
    db = str(tmp_path / "audit.sqlite3")
    runner = CliRunner()
    example = str(Path(__file__).parent.parent / "examples" / "startup-7b-continuous.yaml")
    shown = runner.invoke(cli, ["recommend", "--answers", example, "--audit-db", db,
                                "--explain"])
    assert shown.exit_code == 0, shown.output
    purchase = next(line for line in shown.stdout.splitlines() if " up front = " in line)
    decision_id = shown.stdout.splitlines()[-1].split()[1]
    again = runner.invoke(cli, ["audit", "show", decision_id, "--audit-db", db])
    assert again.exit_code == 0, again.output
    assert purchase in again.stdout.splitlines()
    assert "desktop for 1-2 GeForce cards" in purchase


def test_a_refusal_says_which_rules_excluded_everything(tmp_path: Path) -> None:
    # data that must stay in a country no offer is sold in, and no capital: no configuration,
    # and the text says why: the rules that excluded them, the residency one with the
    # countries the offers are priced in, and what alone keeps some out
    out = run(scenario_answers(tmp_path, "48-country-no-offer-serves"))
    lines = out.splitlines()
    assert lines[0] == "No configuration in the catalog can do this job within your limits"
    at = lines.index("Hardware")
    assert re.fullmatch(r"All \d+ configurations are excluded:", lines[at + 1])
    section = " ".join(" ".join(lines[at + 2:]).split())
    assert section.startswith("✗ ")
    assert "by residency.region-excludes-offers, e.g.: Priced only in " in section
    assert "none of them in your allowed regions (za)" in section
    alone = re.search(r"Kept out by one limit only: (\d+) by residency.region-excludes-offers; "
                      r"(\d+) by tier.no-capex-candidates\.", section)
    assert alone is not None, section
    assert int(alone[1]) > int(alone[2]) > 0


def test_a_capacity_block_pick_says_how_it_is_bought(tmp_path: Path) -> None:
    out = run(scenario_answers(tmp_path, "68-aws-capacity-blocks"))
    head = " ".join(out.split("\n\n")[0].split())
    assert "reserved in 1-day blocks bought for each run at $" in head
    assert any(re.search(r"^→ .* AWS 1-day blocks ", row) for row in table(out))
    pick = data(scenario_answers(tmp_path, "68-aws-capacity-blocks"))["hardware"]["choice"]
    assert (pick["pricing"], pick["reserved_days"], pick["reserved_months"]) == ("reserved", 1,
                                                                                  None)


def test_a_table_of_huge_clusters_keeps_every_cell_in_80_columns() -> None:
    """Thousands of GPUs and sums in the tens of millions: the sums shorten ($17.1M), the
    offer and then the region wrap between words, and no row loses its mark, offer or cost."""
    from helpers.table_rows import missing_cells

    engine = load_engine()
    from engine.answers.model import load_answers

    decision = engine.recommend(load_answers(CLOUD, [], engine.catalog), decision_id="x")
    hw = decision.hardware
    assert hw.choice is not None and hw.alternatives

    def huge(c: Any, n: int) -> Any:
        cost = c.cost.model_copy(update={"upfront_usd": 17_054_520.0 * n,
                                         "per_year_usd": 5_320_772.4 * n})
        return c.model_copy(update={"count": 12_345, "gpu_label": "RTX PRO 6000 Server",
                                    "provider_label": "TensorWave", "cost": cost,
                                    "busy_hours_per_year": 8_760.0})

    big = hw.model_copy(update={"choice": huge(hw.choice, 1),
                                "alternatives": [huge(c, i + 2)
                                                 for i, c in enumerate(hw.alternatives)]})
    decision = decision.model_copy(update={"hardware": big})
    out = render_text(decision, engine.rulebook)
    assert missing_cells(decision, out) == []
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "→  12,345× RTX PRO 6000 Server" in out
    assert "$17.1M" in out


def test_the_reason_that_decided_against_an_option_is_shown() -> None:
    """An option its reasons alone would have chosen (reserved +2 against on-demand's +1)
    lost on a reason against it (−4): that reason is the deciding one and is shown, beside
    the choice's own; a reason against an option that lost anyway is not."""
    pricing = made_axis("on-demand", {
        "on-demand": [why("steady", "prefer", 1)],
        "spot": [why("steady-no-spot", "avoid", 1)],
        "reserved": [why("reserve", "prefer", 2), why("idle", "avoid", 4)]})
    shown = [(sign, text) for sign, text, _, _ in top_reasons(pricing)]
    assert shown == [("+", "steady text"), ("−", "reserved: idle text")]


def test_cards_priced_used_are_said_to_be_used(tmp_path: Path) -> None:
    """The catalog prices an RTX A6000 second-hand: a pick of them says so in the headline,
    the purchase, the next step, the table and the JSON; a new card's row does not. (Runs of
    up to 6 days are the team's: without them, steady work's stretch to 5.2 days a run is
    not worth the 13 % that 2× RTX PRO 6000 cost more for runs within the default 3.)"""
    answers = tmp_path / "a.yaml"
    answers.write_text(yaml.safe_dump({
        "workload": "fine-tune", "model": "llama-3.1-8b", "method": "full",
        "training_tokens_b": 2, "runs_per_year": 52, "usage_pattern": "continuous",
        "budget_usd": 2_000_000, "upfront_capex": True, "max_days_per_run": 6}))
    text = run(answers)
    assert text.startswith("Buy: 4× RTX A6000 (used), ")
    assert "4× RTX A6000 $10,000 ($2,500 each, used)" in text
    rows = [line for line in text.splitlines() if line.startswith(("→", "   2× RTX PRO"))]
    assert "to buy used" in rows[0] and "to buy used" not in rows[1]
    brief = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(answers)])
    assert "Next step: get quotes for 4× used RTX A6000" in brief.output
    data = json.loads(run(answers, "--format", "json"))
    assert data["hardware"]["choice"]["used"] is True
    assert all("used" not in alt for alt in data["hardware"]["alternatives"]
               if alt["gpu"] == "rtx-pro-6000-blackwell")


def test_an_oversized_purchase_compares_memory_with_the_whole_job(tmp_path: Path) -> None:
    """16× H100 for an 8B full fine-tune: the why-not compares all their memory with what
    the whole job needs on one GPU (125 GiB), not with the share each card holds."""
    answers = tmp_path / "a.yaml"
    answers.write_text(yaml.safe_dump({
        "workload": "fine-tune", "model": "llama-3.1-8b", "method": "full",
        "training_tokens_b": 2, "runs_per_year": 52, "usage_pattern": "continuous",
        "planned_gpu": "h100-sxm", "planned_gpu_count": 16,
        "budget_usd": 2_000_000, "upfront_capex": True}))
    text = " ".join(run(answers).split())
    assert "has 1,280 GiB for a job needing about 125 GiB on one GPU (10.3× more" in text


def test_a_capacity_block_pool_held_all_year_says_so() -> None:
    """Twenty full fine-tunes at once that come when they come, on an offer whose only
    shape larger than a job's share is sold in 1-day blocks: the pool is priced every hour
    of the year, and the headline says it is held, not bought for each run."""
    from engine.decide.engine import load_engine
    from engine.output.summary import headline

    answers = {"workload": "fine-tune", "model": "qwen3-30b-a3b", "method": "full",
               "hours_per_year": 800, "usage_pattern": "continuous", "budget_usd": 8000,
               "upfront_capex": False, "proprietary_data": True, "concurrent_jobs": 20,
               "owned_gpu": "h100-sxm", "owned_gpu_count": 8}
    decision = load_engine().recommend(answers, decision_id="x")
    pick = decision.hardware.choice
    assert pick is not None and pick.reserved_days and pick.pool is not None
    assert pick.pool.always_on
    head = " ".join(headline(decision).split())
    assert "-day blocks held every day of the year" in head
    assert "bought for each run" not in head
