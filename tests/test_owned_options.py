"""A team's own GPUs: keep using them, add to them, rent the peaks beside them, or retire
them, each priced for the same work (``estimates.owned_options``), and said where it
matters: the peaks in the full output, and in the headline block when they beat the pick."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.cli import cli
from engine.decide.engine import Engine, load_engine
from engine.output.brief import MAX_LINES, brief_lines
from engine.output.markdown import render_markdown
from engine.output.text import render_text
from engine.resources import bundled_dir

HEAVY = {"workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
         "owned_gpu": "a100-80gb", "owned_gpu_count": 8, "usage_pattern": "continuous",
         "hours_per_year": 120000, "hours_per_run": 48, "budget_usd": 300000,
         "upfront_capex": False}
"""More work than 8× A100 do busy 80 % of the year (they would need ~7,800 hours)."""
LIGHT = {**HEAVY, "hours_per_year": 3000, "hours_per_run": 24}
"""Work the same GPUs do with most of the year to spare."""


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


def options(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o["option"]: o for o in found["options"]}


def test_the_peaks_are_the_owned_gpus_at_the_target_and_the_rest_rented(engine: Engine) -> None:
    decision = engine.recommend(HEAVY, decision_id="x")
    found = decision.estimates["owned_options"]
    by = options(found)
    assert set(by) >= {"keep", "peaks", "retire"}
    keep, peaks, retire = by["keep"], by["peaks"], by["retire"]
    assert not keep["feasible"] and keep["busy_hours_per_year"] > found["capacity_hours_per_year"]
    share = found["capacity_hours_per_year"] / keep["busy_hours_per_year"]
    assert peaks["owned_share"] == pytest.approx(share, abs=1e-3)
    assert peaks["power_usd_per_year"] == pytest.approx(keep["power_usd_per_year"] * share,
                                                        rel=1e-3)
    rented_all = peaks["rented"]["usd_per_year_for_all_the_work"]
    assert peaks["rented_usd_per_year"] == pytest.approx(rented_all * (1 - share), rel=1e-3)
    assert peaks["usd_per_year"] == pytest.approx(
        peaks["power_usd_per_year"] + peaks["upkeep_usd_per_year"]
        + peaks["rented_usd_per_year"], abs=0.02)
    assert peaks["rented"]["pricing"] in ("on-demand", "spot") and peaks["upfront_usd"] == 0
    assert retire["usd_per_year"] == rented_all and retire["resale_usd"] > 0
    assert found["cheapest"] == "peaks"


def test_the_peaks_are_the_pick_where_they_cost_least(engine: Engine) -> None:
    """Hybrid: the team's GPUs busy to the target, the resolved cloud configuration priced
    again for the rest of the work, every figure of the pick for that rest."""
    decision = engine.recommend(HEAVY, decision_id="x")
    found = decision.estimates["owned_options"]
    peaks = options(found)["peaks"]
    choice = decision.hardware.choice
    assert choice is not None and decision.decisions["deployment"].choice == "hybrid"
    assert found["peaks_is_the_pick"] and not found["peaks_beat_the_pick"]
    assert "usage.rent-the-peaks" in decision.fired
    assert choice.id == peaks["rented"]["id"] + ":share" and choice.where == "cloud"
    rest = 1 - peaks["owned_share"]
    whole = peaks["rented"]["usd_per_year_for_all_the_work"]
    assert choice.cost.per_year_usd == pytest.approx(whole * rest, rel=2e-3)
    assert choice.cost.per_year_usd == pytest.approx(peaks["rented_usd_per_year"], rel=2e-3)
    # the work's cost: their power and the rent (their upkeep is paid as long as they are kept)
    total = peaks["power_usd_per_year"] + choice.cost.per_year_usd
    assert peaks["work_usd_per_year"] == pytest.approx(total, abs=1)
    lines = brief_lines(decision)
    assert len(lines) <= MAX_LINES
    top = " ".join(" ".join(lines[:8]).split())
    assert top.startswith("Keep your 8× A100 80GB (SXM4) busy on 90% of the work and rent the "
                          f"rest: {choice.count}× {choice.gpu_label} on ")
    assert f"~${total:,.0f} a year in all" in top
    assert f"Cost: ~${total:,.0f} a year: " in top and "rent" in top
    assert not any("Cheaper with what you own" in line for line in lines)
    full = " ".join(render_text(decision, engine.rulebook).split())
    assert "and the pick rents the rest by the hour" in full
    kept = peaks["usd_per_year"]  # with the upkeep: what retiring them is weighed against
    assert kept == pytest.approx(total + peaks["upkeep_usd_per_year"], abs=1)
    retire = options(found)["retire"]
    assert (f"Or retire them: kept, they cost ${peaks['upkeep_usd_per_year']:,.0f} a year of "
            f"upkeep beside this (${kept:,.0f} a year in all); selling them would bring about "
            f"${retire['resale_usd']:,.0f}") in full
    assert "develop and test on them" not in full and "Or rent the peaks beside" not in full
    assert "Keep your 8× A100 80GB (SXM4) busy on 90% of the work" in " ".join(
        render_markdown(decision, engine.rulebook).split())
    programme = decision.estimates["programme"]
    compute = next(p for p in programme["parts"] if p["part"] == "compute")
    assert compute["usd_per_year"] == pytest.approx(total, abs=2)


def test_peaks_beside_a_reserved_cloud_side_are_rented_by_the_hour(engine: Engine) -> None:
    """An AWS shop's cloud side is reserved for the whole work; the peaks are rented by the
    hour on its kind of cloud, and the pricing decision says it was revised for them."""
    decision = engine.recommend({**HEAVY, "cloud_ecosystem": "aws"}, decision_id="x")
    choice = decision.hardware.choice
    pricing = decision.decisions["pricing"]
    assert decision.decisions["deployment"].choice == "hybrid" and choice is not None
    assert choice.id.endswith(":share") and choice.provider_kind == "hyperscaler"
    assert pricing.revised_from == "reserved" and pricing.choice == choice.pricing == "on-demand"
    assert "rented by the hour" in (pricing.revision or "")
    text = " ".join(" ".join(brief_lines(decision)).split())
    assert "Pricing: on-demand, not reserved: the peaks beside your own GPUs" in text


def test_peaks_that_beat_a_pick_they_are_not_are_said_in_the_headline_block(
        tmp_path: Path) -> None:
    """Where no rule makes the peaks the pick (here: a policy without
    ``usage.rent-the-peaks``) and they cost clearly less, they are said beside it."""
    rules = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), rules)
    usage = rules / "usage.yaml"
    text = usage.read_text()
    start = text.index("  - id: usage.rent-the-peaks")
    usage.write_text(text[:start] + text[text.index("  - id: usage.develop-on-your-own"):])
    engine = load_engine(rules=rules)
    decision = engine.recommend(HEAVY, decision_id="x")
    found = decision.estimates["owned_options"]
    assert found["peaks_beat_the_pick"] and not found["peaks_is_the_pick"]
    lines = brief_lines(decision)
    assert len(lines) <= MAX_LINES
    notice = " ".join(lines[:6])
    assert "Cheaper with what you own: your 8× A100 80GB" in notice
    peaks = options(found)["peaks"]
    assert f"~${peaks['work_usd_per_year']:,.0f} a year" in notice
    full = " ".join(render_text(decision, engine.rulebook).split())
    assert "Or rent the peaks beside your 8× A100 80GB" in full
    assert "Or rent the peaks beside" in render_markdown(decision, engine.rulebook)


def test_gpus_that_do_the_work_are_kept_with_no_peaks(engine: Engine) -> None:
    decision = engine.recommend(LIGHT, decision_id="x")
    found = decision.estimates["owned_options"]
    by = options(found)
    assert by["keep"]["feasible"] and "peaks" not in by
    # keeping them costs power and upkeep; selling them and renting may cost less a year
    # (said beside the pick as "Or retire…": worth it unless they have other work)
    cheapest = min((o for o in found["options"] if o["feasible"]),
                   key=lambda o: o["usd_per_year"])
    assert found["cheapest"] == cheapest["option"] and not found["peaks_beat_the_pick"]
    assert decision.hardware.choice is not None and decision.hardware.choice.owned
    assert not any("Cheaper with what you own" in line for line in brief_lines(decision))


def test_a_team_that_owns_nothing_gets_no_options(engine: Engine) -> None:
    answers = {k: v for k, v in HEAVY.items() if not k.startswith("owned_")}
    assert "owned_options" not in engine.recommend(answers, decision_id="x").estimates



def test_gpus_that_cannot_hold_the_job_are_offered_for_nothing(engine: Engine) -> None:
    """A full fine-tune of a 14B model needs ~227 GiB on one GPU: a team's one RTX 3090
    (24 GB) cannot run it, so neither keeping it nor renting the peaks beside it is an
    option (they were priced as if it could, and the headline block said "Cheaper with what
    you own: your 1× RTX 3090 for 74% of the work"); selling it still is."""
    answers = {"workload": "fine-tune", "model": "qwen3-14b", "method": "full",
               "training_tokens_b": 0.05, "runs_per_year": 200, "usage_pattern": "continuous",
               "budget_usd": 250000, "upfront_capex": True, "cloud_ecosystem": "gcp",
               "owned_gpu": "rtx-3090", "owned_gpu_count": 1}
    decision = engine.recommend(answers, decision_id="x")
    found = decision.estimates["owned_options"]
    by = options(found)
    assert not by["keep"]["feasible"] and "peaks" not in by and "jobs" not in by
    assert found["cheapest"] in (None, "retire") and not found["peaks_beat_the_pick"]
    lines = brief_lines(decision)
    assert not any("Cheaper with what you own" in line for line in lines)
    # said, unless the card holds the team's development (QLoRA) beside the rented runs
    assert (any("cannot do this work" in line for line in lines)
            or lines[0].startswith("Develop on your own 1× RTX 3090, rent for full runs"))

def test_the_audit_list_counts_the_own_gpus_of_a_peaks_pick(tmp_path: Path) -> None:
    answers = tmp_path / "heavy.json"
    answers.write_text(json.dumps(HEAVY))
    db = tmp_path / "audit.db"
    runner = CliRunner()
    made = runner.invoke(cli, ["recommend", "--answers", str(answers), "--audit-db", str(db),
                               "--format", "json"])
    assert made.exit_code == 0, made.output
    out = json.loads(made.output[made.output.index("{"):])
    peaks = options(out["estimates"]["owned_options"])["peaks"]
    total = peaks["power_usd_per_year"] + out["hardware"]["choice"]["cost"]["per_year_usd"]
    listed = runner.invoke(cli, ["audit", "list", "--audit-db", str(db)])
    assert listed.exit_code == 0, listed.output
    assert "your 8× NVIDIA A100 80GB (SXM4) + 1× B200, " in listed.output
    assert f"for the peaks, ${total:,.0f} a year" in listed.output


THREE_AT_ONCE = {"workload": "fine-tune", "model": "llama-3.1-70b", "method": "lora",
                 "training_tokens_b": 0.2, "runs_per_year": 60, "usage_pattern": "continuous",
                 "concurrent_jobs": 3, "owned_gpu": "a100-80gb", "owned_gpu_count": 8,
                 "budget_usd": 100000, "upfront_capex": False}
"""Three 70B LoRA jobs at once; the team's 8× A100 80GB hold two (four GPUs a job)."""


def test_own_gpus_that_hold_some_of_the_jobs_at_once_run_those(engine: Engine) -> None:
    """Where the team's GPUs run two of its three jobs at once, keeping them alone is no
    option; running two there and renting GPUs for the third as it runs is priced: their
    power on two thirds of the work and a third of renting it all (a pool rented by the job
    scales with the work). Their upkeep is paid as long as they are kept, so the split is
    the pick where its power and rent cost less than renting it all (as a team that keeps
    its GPUs would weigh it); what retiring them would save is said beside it."""
    decision = engine.recommend(THREE_AT_ONCE, decision_id="x")
    choice = decision.hardware.choice
    assert choice is not None and choice.where == "cloud"
    assert decision.decisions["deployment"].choice == "hybrid"
    found = decision.estimates["owned_options"]
    by = options(found)
    keep, jobs, retire = by["keep"], by["jobs"], by["retire"]
    assert not keep["feasible"] and found["peaks_is_the_pick"]
    assert (jobs["owned_jobs_at_once"], jobs["rented_jobs_at_once"]) == (2, 1)
    assert jobs["owned_share"] == pytest.approx(2 / 3, abs=1e-3)
    assert jobs["power_usd_per_year"] == pytest.approx(keep["power_usd_per_year"] * 2 / 3,
                                                       rel=1e-3)
    assert jobs["rented_usd_per_year"] == pytest.approx(
        retire["usd_per_year"] / 3, rel=1e-3)
    assert choice.cost.per_year_usd == pytest.approx(jobs["rented_usd_per_year"], rel=0.02)
    assert jobs["work_usd_per_year"] == pytest.approx(
        jobs["power_usd_per_year"] + jobs["rented_usd_per_year"], abs=0.02)
    assert jobs["usd_per_year"] == pytest.approx(
        jobs["work_usd_per_year"] + jobs["upkeep_usd_per_year"], abs=0.02)
    assert jobs["work_usd_per_year"] < retire["usd_per_year"]
    text = " ".join(" ".join(brief_lines(decision)).split())
    assert text.startswith("Run 2 of your 3 jobs at once on your 8× A100 80GB")
    full = " ".join(render_text(decision, engine.rulebook).split())
    gap = jobs["usd_per_year"] - retire["usd_per_year"]
    assert (f"renting it all on {retire['rented']['count']}× "
            f"{retire['rented']['gpu_label']}") in full
    assert (f"retiring them saves ${gap:,.0f} a year besides the sale" in full if gap > 0
            else f"retiring them costs ${-gap:,.0f} a year more than keeping them" in full)


def test_no_jobs_split_where_the_own_gpus_hold_every_job(engine: Engine) -> None:
    decision = engine.recommend({**THREE_AT_ONCE, "concurrent_jobs": 2}, decision_id="x")
    assert "jobs" not in options(decision.estimates["owned_options"])


def test_where_running_the_jobs_they_hold_costs_less_it_is_the_pick(engine: Engine) -> None:
    """With 250 runs a year renting all three jobs costs far more than the team's GPUs
    running two and B200 rented for the third (an instance of its own while it runs): that
    hybrid is the pick, priced for its share of the work on one job's GPUs, and said as
    such."""
    decision = engine.recommend({**THREE_AT_ONCE, "runs_per_year": 250, "budget_usd": 300000},
                                decision_id="x")
    assert decision.decisions["deployment"].choice == "hybrid"
    choice = decision.hardware.choice
    found = decision.estimates["owned_options"]
    assert found["peaks_is_the_pick"]
    jobs = options(found)["jobs"]
    assert jobs["rented_jobs_at_once"] == 1
    assert choice is not None and choice.where == "cloud" and choice.gpu == "b200"
    assert choice.count == jobs["rented_gpus_per_job"] <= 2
    assert choice.cost.per_year_usd == pytest.approx(jobs["rented_usd_per_year"], rel=0.02)
    assert decision.facts["peaks_split"] == "jobs"
    lines = brief_lines(decision)
    assert lines[0].startswith("Run 2 of your 3 jobs at once on your 8× A100 80GB")
    total = jobs["power_usd_per_year"] + choice.cost.per_year_usd
    assert f"~${total:,.0f} a year in all" in " ".join(lines)


SMALL_POOL = {"workload": "fine-tune", "model": "llama-3.2-3b", "method": "lora",
              "training_tokens_b": 0.02, "runs_per_year": 300, "concurrent_jobs": 4,
              "usage_pattern": "continuous", "owned_gpu": "rtx-3090", "owned_gpu_count": 2,
              "budget_usd": 5000, "upfront_capex": True}
"""Four small jobs at once that come when they come; the team's 2× RTX 3090 hold two, and
the pick rents a one-GPU instance for each job as it starts (one 4-GPU configuration)."""


def test_jobs_rented_one_instance_each_can_be_split_off(engine: Engine) -> None:
    """Steady jobs rented by the job each have an instance of their own even where the
    pick is one configuration of four GPUs, so the jobs the team's GPUs do not hold can be
    rented apart: the split is priced and said, and no longer read as "cannot do your runs"
    (the develop-on-your-own hybrid). Where their power costs more than renting (power at
    $2 a kWh) the split is not the pick, and the one screen says what it would cost and
    what selling them would bring."""
    decision = engine.recommend({**SMALL_POOL, "electricity_usd_per_kwh": 2.0},
                                decision_id="x")
    jobs = options(decision.estimates["owned_options"])["jobs"]
    assert (jobs["owned_jobs_at_once"], jobs["rented_jobs_at_once"]) == (2, 2)
    choice = decision.hardware.choice
    assert choice is not None and choice.pool is not None and choice.nodes == 1
    assert jobs["work_usd_per_year"] > choice.cost.per_year_usd
    assert decision.decisions["deployment"].choice == "cloud"
    text = " ".join(" ".join(brief_lines(decision)).split())
    assert "Your own 2× RTX 3090 hold 2 of your 4 jobs at once" in text
    assert (f"cost ${jobs['work_usd_per_year']:,.0f} a year (${jobs['rented_usd_per_year']:,.0f}"
            " rent, the rest power), more than the pick's") in text
    retire, keep = (options(decision.estimates["owned_options"])[o] for o in ("retire", "keep"))
    assert (f"or sell them (~${retire['resale_usd']:,.0f}; upkeep saved: "
            f"${keep['upkeep_usd_per_year']:,.0f} a year)") in text


def test_own_gpus_run_the_jobs_they_hold_where_their_power_costs_less(engine: Engine) -> None:
    """At the default power price the same team runs two jobs on its 2× RTX 3090 and rents
    for the other two: their upkeep is paid either way."""
    decision = engine.recommend(SMALL_POOL, decision_id="x")
    jobs = options(decision.estimates["owned_options"])["jobs"]
    assert decision.decisions["deployment"].choice == "hybrid"
    assert decision.estimates["owned_options"]["peaks_is_the_pick"]
    assert jobs["work_usd_per_year"] < options(
        decision.estimates["owned_options"])["retire"]["usd_per_year"]


def test_the_jobs_rented_beside_own_gpus_each_have_an_instance(engine: Engine) -> None:
    """Where that split is the pick (1,500 runs), the rented side is two jobs' pods: two
    instances of one GPU each, not a pool of no instances."""
    decision = engine.recommend({**SMALL_POOL, "runs_per_year": 1500}, decision_id="x")
    choice = decision.hardware.choice
    assert decision.decisions["deployment"].choice == "hybrid"
    assert choice is not None and (choice.count, choice.nodes) == (2, 2)


def test_more_owned_cards_than_one_machine_holds_run_on_one_machine() -> None:
    """Eight GeForce RTX 4090 the team owns: no platform holds eight in one box, so they were
    not priced at all ("cannot do this work within your limits", naming no limit) and a 3B
    fine-tune was rented. A job runs on one of their machines: four of them."""
    from engine.answers.model import validate_answers
    from engine.output.summary import headline

    engine = load_engine()
    decision = engine.recommend(validate_answers(
        {"workload": "fine-tune", "model": "llama-3.2-3b", "training_tokens_b": 0.02,
         "runs_per_year": 24, "usage_pattern": "intermittent", "budget_usd": 8000,
         "owned_gpu": "rtx-4090", "owned_gpu_count": 8}, engine.catalog))
    choice = decision.hardware.choice
    assert choice is not None and choice.owned and choice.count == 4
    assert headline(decision).startswith("Keep using 4 of your 8× RTX 4090 (one machine):")


def test_a_split_pick_is_changed_by_selling_not_by_a_purchase_break_even(
        engine: Engine) -> None:
    """Beside a pick that runs part of the work on the team's own GPUs, the break-even of
    buying against renting the whole work is not about the pick: what would change it is
    selling them, where that and renting it all costs less a year (their upkeep saved)."""
    for answers in (THREE_AT_ONCE, {**SMALL_POOL, "runs_per_year": 1500}):
        decision = engine.recommend(answers, decision_id="x")
        found = decision.estimates["owned_options"]
        assert found["peaks_is_the_pick"]
        split, retire = options(found)["jobs"], options(found)["retire"]
        text = " ".join(" ".join(brief_lines(decision)).split())
        assert "costs less than renting" not in text
        if split["usd_per_year"] > retire["usd_per_year"]:
            assert (f"Would change it: selling your {found['count']}× " in text
                    and f"saves ${split['usd_per_year'] - retire['usd_per_year']:,.0f} a year"
                    in text)
        else:
            assert "Would change it" not in text


TWENTY_AT_ONCE = {"workload": "fine-tune", "model": "mistral-7b", "method": "full",
                  "training_tokens_b": 0.01, "runs_per_year": 50, "usage_pattern": "bursty",
                  "budget_usd": 500, "upfront_capex": False, "cloud_ecosystem": "azure",
                  "concurrent_jobs": 20, "owned_gpu": "rtx-a6000", "owned_gpu_count": 4}
"""Twenty full fine-tunes of a 7B model at once, each on two GPUs; the team's 4× RTX A6000
hold one."""


def test_jobs_of_two_gpus_rented_beside_own_gpus_are_laid_out_on_real_instances(
        engine: Engine) -> None:
    """Running one job on the team's GPUs and renting 38 H100 PCIe (19 instances of two) for
    the others costs less than renting all forty, and the rules chose that hybrid; but the
    19 jobs' share was laid out as if a job had a one-GPU node (the priced counts, 38 on 19
    instances, have no single-instance shape), found to fit nowhere, and the pick fell back
    to all forty, said as "develop on your own 4× RTX A6000, rent for full runs". A pool's
    jobs are laid out on the instances the offer sells: the pick is the split, said as such."""
    decision = engine.recommend(TWENTY_AT_ONCE, decision_id="x")
    found = decision.estimates["owned_options"]
    jobs = options(found)["jobs"]
    assert (jobs["owned_jobs_at_once"], jobs["rented_jobs_at_once"]) == (1, 19)
    assert decision.decisions["deployment"].choice == "hybrid"
    assert found["peaks_is_the_pick"]
    choice = decision.hardware.choice
    assert choice is not None and (choice.count, choice.nodes) == (38, 19)
    assert choice.pool is not None and choice.pool.jobs_at_once == 19
    assert brief_lines(decision)[0].startswith("Run 1 of your 20 jobs at once on your 4× RTX")


ONE_H100 = {"model": "qwen2.5-7b", "training_tokens_b": 0.2, "runs_per_year": 4,
            "usage_pattern": "continuous", "budget_usd": 10000, "upfront_capex": True,
            "owned_gpu": "h100-sxm", "owned_gpu_count": 1}
"""A team with one H100 of its own, four LoRA runs a year and $10,000 to spend."""


def test_gpus_added_to_your_own_are_shown_only_within_reach_of_the_budget(
        engine: Engine) -> None:
    """Beside the one H100 a $10,000 team owns, the alternatives listed buying seven more
    ($213,500 up front, 21× the budget) as if it were an option; the GPUs added to a team's
    own are always shown only where their first year is under the policy's far-over-budget
    ratio, as every other row is ranked."""
    def added(answers: dict[str, Any]) -> list[Any]:
        decision = engine.recommend(answers, decision_id="x")
        return [a for a in decision.hardware.alternatives if a.id.endswith(":added")]

    assert added(ONE_H100) == []
    rich = added({**ONE_H100, "budget_usd": 300000})
    assert rich and rich[0].cost.upfront_usd > ONE_H100["budget_usd"]
