"""The answer on one screen: at most 24 lines of 80 columns carrying the decision, its cost a
year with a range, the budget, the offer's link and price date and the next step; the full
explanation with --explain; a pager only where a person reads on a terminal."""

from __future__ import annotations

import math
import os
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import decided

from engine.answers.model import validate_answers
from engine.cli import cli
from engine.decide.configuration import run_length
from engine.decide.decision import Candidate
from engine.decide.engine import Decision, load_engine
from engine.output.brief import (
    FAR_DEARER,
    MAX_LINES,
    WIDTH,
    brief_items,
    brief_lines,
    instance_of,
)
from engine.output.hardware_rows import decided_against, table_rows, why_not_short
from engine.output.summary import (
    close_call_lines,
    peaks_pick,
    usd,
    work_line,
)
from engine.tools.scenarios import scenario_paths

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.suffix in (".yaml", ".json"))
SCENARIOS = scenario_paths([ROOT / "tests" / "scenarios"])
TEAMS = sorted((ROOT / "tests" / "teams").glob("*.yaml"))


def _decide(path: Path) -> Decision:
    return decided.decision_of(path)  # each test here reads the same decision; none changes it


@pytest.mark.parametrize("path", [*EXAMPLES, *TEAMS, *SCENARIOS], ids=lambda p: p.stem)
def test_one_screen_carries_what_a_team_lead_acts_on(path: Path) -> None:
    decision = _decide(path)
    lines = brief_lines(decision, load_engine().rulebook)  # as the command line prints it
    assert len(lines) <= MAX_LINES and all(len(line) <= WIDTH for line in lines), lines
    text = " ".join(" ".join(lines).split())
    assert lines[-1].startswith(f"decision {decision.decision_id} · rules ")
    assert lines[-2].startswith("--explain: ")  # where the rest is, never cut
    choice = decision.hardware.choice
    if choice is None:
        return
    if decision.decisions["approach"].choice == "use-api":
        assert "Next step: serve from a hosted API now" in text
        api = next(o for o in decision.decisions["approach"].ranking if o.option == "use-api")
        said = [r.text for r in sorted(api.reasons, key=lambda r: -r.weight)
                if r.effect == "prefer"][:3]
        assert said and all(" ".join(r.split())[:60] in text for r in said), said
        bill = decision.facts.get("api_cost_usd_month")
        if bill is not None:  # the API's bill heads the answer, as a purchase's price would
            assert text.startswith("Use a hosted API rather than training your own model: "
                                   f"~{usd(bill)} a month for ")
        why = text[text.index("Why:"):text.index("Next step:")]
        for axis in ("deployment", "cloud_kind", "pricing"):  # training it would not do
            for option in decision.decisions[axis].ranking:
                assert all(" ".join(r.text.split())[:60] not in why for r in option.reasons)
        # nor, in any format, the training pick's close calls (they are not the decision's),
        # and its work is what it would be if the team trained anyway, on that configuration
        assert close_call_lines(decision) == []
        said = work_line(decision)
        assert said.startswith("Work, if you train anyway: ") and "the pick" not in said, said
        own = decision.facts.get("own_cost_usd_month")
        if any(w.id == "frontier-need-at-volume" for w in decision.warnings):
            assert (f"a model of your own at ~{usd(own)} a month would cost less than the "
                    f"API's {usd(bill)}") in text
        return
    cost = choice.cost
    assert f"~{usd(cost.per_year_usd)} a year" in text
    low, high = cost.range_usd.get("low"), cost.range_usd.get("high")
    if low and high and usd(low) != usd(high):
        assert f"({usd(low)}–{usd(high)} as speed varies)" in text
    else:  # a pool rented all year costs the same at any speed: no range of one figure
        assert "as speed varies" not in text
    budget = decision.answers["budget_usd"]
    if budget > 0:
        assert (f"of your {usd(budget)} budget" in text
                or f"your {usd(budget)} budget leaves for compute" in text)
    assert "Next step:" in text
    method = decision.decisions["method"].choice
    if (decision.answers.get("method") == "auto" and method in ("full", "lora", "qlora")
            and decision.decisions["approach"].choice == "fine-tune"):
        # the method the advice chose is said where the team left it open
        said = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA"}[method]
        assert f" {said} run" in text or f"a year of {said} on one " in text
    elif decision.decisions["approach"].choice != "fine-tune":  # a pretrain is no fine-tune
        assert "fine-tuning run" not in text and "a year of full fine-tuning" not in text
    if choice.where == "cloud":
        assert f"{usd(cost.per_run_usd)} a run" in text
        assert choice.link is None or choice.link in text  # the catalog's page, where it has one
        assert f"price of {choice.price_as_of}" in text
    elif not choice.owned:
        assert f"price of {choice.price_as_of}" in text


@pytest.mark.parametrize("path", [*EXAMPLES, *TEAMS, *SCENARIOS], ids=lambda p: p.stem)
def test_the_headline_block_says_the_plan_and_the_closest_call(path: Path) -> None:
    """Right under the headline: the team's plan priced beside the pick, and the closest call
    (within the policy's margin), before the cost; an alternative ranked above the pick, or
    cheaper than it, says why it is not the pick."""
    engine = load_engine()
    decision = _decide(path)
    lines = brief_lines(decision, engine.rulebook)
    text = " ".join(" ".join(lines).split())
    head = text[:text.index("Cost:")] if "Cost:" in text else text
    hw = decision.hardware
    api = decision.decisions["approach"].choice == "use-api"
    if hw.plan is not None and hw.choice is not None and not api:
        assert "Your plan" in head
    if hw.close_calls and not api:
        assert f"A close call: {hw.close_calls[0].label} costs" in head
    for near, line in zip(hw.close_calls, close_call_lines(decision), strict=False):
        if near.reason:  # what the rules held against it is said, cheaper or dearer
            said = ("the pick won on: " if math.copysign(1.0, near.premium) < 0
                else "against it: ")
            assert said + near.reason.rstrip(".") in line
    owned = decision.answers.get("owned_gpu")
    if (owned and hw.choice is not None and not hw.choice.owned and not api
            and peaks_pick(decision)[1] is None):
        # a team whose own GPUs are not the pick hears why not before the cost
        assert ("Your own" in head or "alone cannot" in head
                or re.match(r"Develop on (your own|[\d,]+ of your) ", head)), head
        if "Your own" in head and "cannot do this work" in head and hw.owned_why_not:
            why = hw.owned_why_not
            assert f"limits: {why[:1].lower()}{' '.join(why[1:].split())[:40]}" in head, head
    if api:  # the headline is the API: the hardware is for training anyway, further down
        assert "A close call" not in head and "Your plan" not in head
    rows = [c for _, c in table_rows(decision)]
    above = rows[:rows.index(hw.choice)] if hw.choice else []
    pick = hw.choice

    def no_better(c: Candidate, other: Candidate) -> bool:
        return (c.cost.per_year_usd >= other.cost.per_year_usd
                and c.cost.upfront_usd >= other.cost.upfront_usd
                and (c.days_per_run or 0) >= (other.days_per_run or 0))

    plan = hw.plan.id if hw.plan is not None and "Your plan" in head else None
    others: list[tuple[Candidate, str | None]] = []
    open_rows: list[Candidate] = []  # shown without a "not taken": they beat what they beat
    for c in rows:
        if c is pick or (pick is not None and no_better(c, pick)) or c.id == plan or any(
                no_better(c, o) for o in open_rows):
            continue
        cheaper = c.cost.per_year_usd < hw.choice.cost.per_year_usd if hw.choice else False
        why = why_not_short(decision, c, engine.rulebook) if c in above or cheaper else None
        if why is None and pick is not None and not pick.owned and (
                c.cost.per_year_usd > FAR_DEARER * pick.cost.per_year_usd):
            continue  # no alternative at ten times the pick's year
        if why is None:
            open_rows.append(c)
        others.append((c, why))
    shown = [t for kind, t in brief_items(decision, 3, engine.rulebook) if kind == "alternative"]
    for (c, why), line in zip(others, shown, strict=False):
        assert ("(not taken: " in line) == (why is not None), (c.id, line)
        if why is not None:
            assert f"(not taken: {why})" in " ".join(line.split())
        if c in above:  # ranked above the pick: it goes against a decision
            assert decided_against(decision, c, engine.rulebook) is not None


def test_a_refusal_says_what_shut_out_the_configurations() -> None:
    """No configuration holds the job: the brief says how many were excluded and by which
    rule most, counting every rule that excluded each (a refusal keeps them all), and, where
    the rules ruled out every deployment, why each was."""
    engine = load_engine()
    answers = validate_answers({"model": "qwen3-4b", "hours_per_year": 100,
                                "data_residency": "on-premises", "upfront_capex": False},
                               engine.catalog)
    decision = engine.recommend(answers)
    assert decision.hardware.choice is None
    text = " ".join(" ".join(brief_lines(decision, engine.rulebook)).split())
    considered = decision.hardware.considered
    assert f"{considered} of {considered} configurations excluded; " in text
    local = {i for x in decision.hardware.excluded if x.rule == "tier.no-capex-candidates"
             for i in x.ids}
    cloud = {i for x in decision.hardware.excluded
             if x.rule == "residency.on-premises-excludes-cloud-candidates" for i in x.ids}
    assert local and cloud and len(local | cloud) == considered  # every exclusion is kept
    assert "✗ local: You cannot spend capital up front" in text
    assert "✗ cloud: Your data must stay on premises" in text
    assert "Next step: run gpu-advisor whatif on the same answers" in text
    # the configurations one rule alone excludes: lifting it lets them in
    rules: dict[str, set[str]] = {}
    for x in decision.hardware.excluded:
        for i in x.ids:
            rules.setdefault(i, set()).add(x.rule)
    alone = Counter(next(iter(found)) for found in rules.values() if len(found) == 1)
    assert set(alone) == {"residency.on-premises-excludes-cloud-candidates",
                          "tier.no-capex-candidates"}
    (first, many), (second, few) = sorted(alone.items(), key=lambda p: (-p[1], p[0]))
    assert (f"Kept out by one limit only: {many:,} by {first}; {few:,} by {second} (") in text


@pytest.mark.parametrize(("days", "said"), [
    (2.8, "2.8 days"), (1.0, "1.0 days"), (14 / 24, "14 hours"), (1.41 / 24, "1.4 hours"),
    (1.58 / 24, "1.6 hours"), (1.0 / 24, "1.0 hour"), (25 / 60 / 24, "25 min"),
    (0.1 / 60 / 24, "1 min")])
def test_run_lengths_below_ten_hours_keep_a_tenth(days: float, said: str) -> None:
    assert run_length(days) == said


@pytest.mark.parametrize(("value", "said"), [
    (0.0, "$0"), (0.001, "$0.01"), (0.37, "$0.37"), (4.391, "$4.39"), (9.994, "$9.99"),
    (9.996, "$10"), (1234.4, "$1,234")])
def test_sums_under_ten_dollars_keep_the_cents(value: float, said: str) -> None:
    assert usd(value) == said


def test_a_job_of_cents_a_year_is_not_said_to_cost_nothing() -> None:
    """One run a year of a million tokens on a 3B model costs 37 cents: its headline, cost
    line, close call and plan said "$0", as if it were free; the decision kept the year to
    the dollar (0.0)."""
    engine = load_engine()
    decision = engine.recommend(validate_answers({
        "workload": "fine-tune", "model": "llama-3.2-3b", "method": "full",
        "training_tokens_b": 0.001, "runs_per_year": 1, "usage_pattern": "continuous",
        "budget_usd": 2000000, "upfront_capex": True, "cloud_ecosystem": "none",
        "planned_gpu": "rtx-a6000", "planned_gpu_count": 4}, engine.catalog))
    choice = decision.hardware.choice
    assert choice is not None and 0 < choice.cost.per_year_usd < 1
    text = " ".join(" ".join(brief_lines(decision, engine.rulebook)).split())
    assert f"~{usd(choice.cost.per_year_usd)} a year for your work" in text
    assert "$0 a year" not in text and f"against {usd(choice.cost.per_year_usd)}" in text
    assert all(0 < c.per_year_usd < 1 for c in decision.hardware.close_calls)


def test_the_default_output_is_the_brief_and_explain_the_full(runner: CliRunner) -> None:
    example = str(ROOT / "examples" / "research-70b-intermittent.yaml")
    brief = runner.invoke(cli, ["recommend", "--answers", example, "--no-audit"])
    full = runner.invoke(cli, ["recommend", "--answers", example, "--no-audit", "-v"])
    assert brief.exit_code == full.exit_code == 0
    assert len(brief.stdout.splitlines()) <= MAX_LINES < len(full.stdout.splitlines())
    assert brief.stdout.splitlines()[0] == full.stdout.splitlines()[0]
    assert "Why not the others" in full.stdout and "Why not the others" not in brief.stdout
    assert "Hardware (→ the pick" in full.stdout


@pytest.mark.slow
def test_a_terminal_pages_long_output_and_a_pipe_never_does(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    marker = tmp_path / "paged"
    pager = tmp_path / "pager.sh"
    pager.write_text(f"#!/bin/sh\ncat > {marker}\necho PAGED\n", encoding="utf-8")
    pager.chmod(0o755)
    example = str(ROOT / "examples" / "research-70b-intermittent.yaml")
    env = {**os.environ, "PAGER": str(pager), "COLUMNS": "80", "LINES": "24"}
    env.pop("NO_PAGER", None)
    args = ["-m", "engine", "recommend", "--answers", example, "--no-audit", "--explain"]
    child = pexpect.spawn(sys.executable, args, env=env, encoding="utf-8", timeout=120,
                          dimensions=(24, 80))
    child.expect("PAGED")
    child.expect(pexpect.EOF)
    assert "Why not the others" in marker.read_text(encoding="utf-8")
    marker.unlink()
    quiet = pexpect.spawn(sys.executable, [*args, "--no-pager"], env=env, encoding="utf-8",
                          timeout=120, dimensions=(24, 80))
    quiet.expect("Why not the others")
    quiet.expect(pexpect.EOF)
    assert not marker.exists()
    short = pexpect.spawn(sys.executable, args[:-1], env=env, encoding="utf-8", timeout=120,
                          dimensions=(24, 80))  # the brief fits the screen: not paged
    short.expect("Next step:")
    short.expect(pexpect.EOF)
    assert not marker.exists()


@pytest.mark.parametrize("premium,said", [(0.8, "80% more than the pick"),
                                          (-0.03, "3% less than the pick"),
                                          (0.004, "under 1% more than the pick"),
                                          (-0.0, "under 1% less than the pick"),
                                          (-0.004, "under 1% less than the pick"),
                                          (1.99, "199% more than the pick"),
                                          (2.0, "3.0× the pick's cost"),
                                          (7.7, "8.7× the pick's cost"),
                                          (8.96, "10× the pick's cost"),
                                          (9.0, "10× the pick's cost"),
                                          (98.4, "99× the pick's cost"),
                                          (1991.3, "against $7.00 for the pick"),
                                          (82061, "against $0.13 for the pick")])
def test_a_plan_far_dearer_than_the_pick_is_said_as_a_multiple(premium: float,
                                                               said: str) -> None:
    """A hundred times or more, the pick's own cost says more than a multiple of it."""
    from engine.output.summary import _against_the_pick

    pick = 0.13 if premium > 10_000 else 7.0
    assert _against_the_pick(premium, pick) == said


def test_no_work_is_said_at_the_top() -> None:
    """0 GPU-hours a year (the answers allow it): every configuration costs $0, and the
    advice says so before anything else is read as a verdict on cost."""
    engine = load_engine()
    decision = engine.recommend(validate_answers(
        {"workload": "fine-tune", "model": "qwen2.5-32b", "hours_per_year": 0,
         "usage_pattern": "intermittent", "budget_usd": 100000, "cloud_ecosystem": "gcp"},
        engine.catalog))
    lines = brief_lines(decision, engine.rulebook)
    text = " ".join(" ".join(lines).split())
    assert "⚠ No work: 0 GPU-hours a year costs $0 anywhere" in text
    assert lines.index(next(x for x in lines if x.startswith("⚠ No work"))) < 4
    with_work = engine.recommend(validate_answers(
        {"workload": "fine-tune", "model": "qwen2.5-32b", "hours_per_year": 100,
         "usage_pattern": "intermittent", "budget_usd": 100000, "cloud_ecosystem": "gcp"},
        engine.catalog))
    assert "No work" not in " ".join(brief_lines(with_work, engine.rulebook))


def test_a_job_that_fits_nowhere_says_what_most_of_its_memory_is() -> None:
    """A 32k-token LoRA at micro-batch 4: the logits (sequence × micro-batch × vocabulary)
    are most of the memory, so the refusal says so and what cuts them."""
    engine = load_engine()
    answers = validate_answers({"model": "qwen3-8b", "method": "lora", "seq_len": 32768,
                                "micro_batch": 4, "training_tokens_b": 0.5,
                                "runs_per_year": 12, "budget_usd": 20000,
                                "upfront_capex": False}, engine.catalog)
    decision = engine.recommend(answers)
    assert decision.hardware.choice is None
    memory = decision.estimates["memory"]
    logits = memory["breakdown"]["logits"]
    assert logits > memory["total_gib"] / 2
    said = " ".join(" ".join(brief_lines(decision, engine.rulebook)).split())
    assert (f"Most of it is logits: {logits:,.0f} of the {memory['total_gib']:,.0f} GiB"
            in said)
    assert "a smaller micro_batch cuts it" in said
    # every full format says it too, in its own escaping
    from engine.output.html import render_html
    from engine.output.markdown import render_markdown
    from engine.output.text import render_text

    part = f"Most of it is logits: {logits:,.0f} of the {memory['total_gib']:,.0f} GiB"
    assert part in " ".join(render_text(decision, engine.rulebook).split())
    assert part in render_html(decision, engine.rulebook)
    assert "a smaller micro\\_batch cuts it" in render_markdown(decision, engine.rulebook)


def test_activations_that_fit_nowhere_with_checkpointing_off_say_to_turn_it_on() -> None:
    """A 70B LoRA at micro-batch 4 with gradient_checkpointing: false: activations are most
    of the memory, and the refusal names the answer that keeps them whole."""
    engine = load_engine()
    raw = {"model": "llama-3.1-70b", "method": "lora", "seq_len": 4096, "micro_batch": 4,
           "training_tokens_b": 0.2, "runs_per_year": 10, "budget_usd": 30000,
           "upfront_capex": False}
    off = engine.recommend(validate_answers({**raw, "gradient_checkpointing": False},
                                            engine.catalog))
    assert off.hardware.choice is None
    said = " ".join(" ".join(brief_lines(off, engine.rulebook)).split())
    assert "Most of it is activations" in said
    assert "gradient checkpointing (false in your answers) or a smaller micro_batch" in said
    auto = engine.recommend(validate_answers(raw, engine.catalog))
    assert auto.hardware.choice is not None  # checkpointing where needed lets it fit


@pytest.mark.parametrize("count,gpu,seq_len,needs", [(8, "rtx-4090", 2048, "it takes "),
                                                     (4, "rtx-4060", 8192, "no count of them")])
def test_a_plan_that_cannot_hold_the_job_is_said_not_priced(count: int, gpu: str,
                                                            seq_len: int, needs: str) -> None:
    """A 70B full fine-tune on a few consumer cards: the one screen says under the headline
    that the plan cannot hold it, and how many of the card would (or that none would), and
    does not price the plan for a year of work it cannot run."""
    engine = load_engine()
    decision = engine.recommend(validate_answers(
        {"workload": "fine-tune", "model": "llama-3.1-70b", "method": "full",
         "seq_len": seq_len, "training_tokens_b": 0.1, "runs_per_year": 4,
         "usage_pattern": "intermittent", "budget_usd": 40000, "upfront_capex": True,
         "planned_gpu": gpu, "planned_gpu_count": count}, engine.catalog))
    text = " ".join(" ".join(brief_lines(decision, engine.rulebook)).split())
    head = text[:text.index("Cost:")]
    assert f"Your plan, {count}× " in head and "cannot hold this job: full needs about" in head
    assert needs in head
    assert "a year (" not in head.split("Your plan", 1)[1].split(".")[0]


@pytest.mark.parametrize(("instance", "gpus", "named"), [
    ("a2-ultragpu-1g/2g/4g/8g", 4, "a2-ultragpu-4g"),
    ("1x/2x/4x/8x A100 SXM 40GB", 2, "2x A100 SXM 40GB"),
    ("a2-ultragpu-1g/2g/4g/8g", 16, "a2-ultragpu-1g/2g/4g/8g"),  # no such size: as listed
    ("p5.48xlarge", 8, "p5.48xlarge"),
])
def test_the_next_step_names_the_instance_of_its_size(instance: str, gpus: int,
                                                      named: str) -> None:
    assert instance_of(instance, gpus) == named
