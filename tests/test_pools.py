"""Jobs that must run at once: the pool holds them all, says its layout, and is paid all year
for steady jobs that share instances, or while its jobs run (each on its own instance, or
each wave where they come together)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.cli import cli

COURSE = {"model": "llama-3.2-1b", "hours_per_year": 1600, "hours_per_run": 2,
          "usage_pattern": "bursty", "budget_usd": 20000}


def decide(tmp_path: Path, answers: dict[str, Any], *sets: str) -> dict[str, Any]:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(path),
                                      "--format", "json", "--trace",
                                      *(a for s in sets for a in ("--set", s))])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A regulated course on Google Cloud: no consumer cards, and MIG slices of 8× B200 hold
    the forty jobs for less than forty whole GPUs there (elsewhere forty 1-GPU pods can cost
    less: scenario 66)."""
    return decide(tmp_path_factory.mktemp("course"),
                  {**COURSE, "concurrent_jobs": 40, "regulated_control": True,
                   "cloud_ecosystem": "gcp"})


def test_the_pick_holds_every_job_at_once(course: dict[str, Any]) -> None:
    pool = course["hardware"]["choice"]["pool"]
    assert pool["jobs_at_once"] >= 40
    # a bursty course's jobs come together: rented, the pool is paid while they run
    assert pool["always_on"] is (course["hardware"]["choice"]["where"] == "local")
    assert f"{pool['jobs_at_once']} jobs at once" in pool["layout"]


def test_a_small_job_gets_a_mig_slice_that_holds_it(course: dict[str, Any]) -> None:
    choice = course["hardware"]["choice"]
    pool = choice["pool"]
    assert pool["mig_profile"], "a 1B LoRA job fits a MIG slice"
    per_gpu = int(pool["layout"].split(": ", 1)[1].split(" MIG")[0])
    assert choice["count"] * per_gpu == pool["jobs_at_once"]
    assert choice["count"] < 40, "slices, not one GPU per student"


def test_a_steady_pool_is_rented_all_year_only_where_its_jobs_share_instances() -> None:
    """Steady jobs come when they come: jobs that share an instance (MIG slices, or GPUs of
    an instance larger than one job's share) need it there every hour; a job on whole GPUs of
    its own rents an instance of its share while it runs, as one job alone would."""
    from engine.answers.model import validate_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    answers = validate_answers({**COURSE, "concurrent_jobs": 40, "upfront_capex": False,
                                "usage_pattern": "continuous", "budget_usd": 500000},
                               engine.catalog)
    evaluation = engine.evaluate(answers, trace=False)
    pools = [f for f in evaluation.candidate_facts
             if f["where"] == "cloud" and f["jobs_at_once"] > 1 and f["fits"]]
    shared = [f for f in pools if f["mig_profile"]]
    own = [f for f in pools if not f["mig_profile"] and f["gpus_per_job"] == 1
           and f["smallest_shape"] == 1]
    assert shared and own
    assert all(f["always_on"] and f["billed_hours_per_year"] == 8760 for f in shared)
    assert not any(f["always_on"] for f in own)
    decision = evaluation.decision
    choice = decision.hardware.choice
    assert choice is not None and choice.pool is not None and not choice.pool.always_on
    assert choice.cost.per_year_usd < choice.cost.per_hour_usd * 8760 / 2


def test_a_course_rents_its_pool_while_each_wave_of_jobs_runs(tmp_path: Path) -> None:
    """Forty jobs that come together (a lab): the year's 800 jobs are 20 waves, each billed
    for one job's run on its share plus the start-up, on the whole pool."""
    found = decide(tmp_path, {**COURSE, "concurrent_jobs": 40, "upfront_capex": False})
    choice = found["hardware"]["choice"]
    assert choice["where"] == "cloud" and choice["pricing"] != "spot"
    assert choice["pool"]["always_on"] is False
    trace = found["estimates"]["traces"]["pick_cost_usd_year"]
    assert "waves a year" in trace["formula"]
    inputs = trace["inputs"]
    jobs = 1600 / 2  # hours a year over hours a run
    assert inputs["runs"] == pytest.approx(jobs / 40)
    wave = choice["run_hours"] + choice["start_up_hours"]
    assert inputs["hours"] >= inputs["runs"] * wave * 0.999
    assert inputs["hours"] < 8760 / 10
    assert choice["cost"]["per_year_usd"] == pytest.approx(
        inputs["hourly_usd"] * inputs["hours"] * (1 + inputs["hidden_overhead"]), abs=1)
    path = tmp_path / "course.json"
    path.write_text(json.dumps({**COURSE, "concurrent_jobs": 40, "upfront_capex": False}))
    brief = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(path),
                                     "--explain", "--no-pager"])
    said = " ".join(brief.stdout.split())
    assert "your 40 jobs at once come together 20 times a year, so it is rented about" in said


def test_every_excluded_configuration_says_how_many_jobs_it_runs(
        course: dict[str, Any]) -> None:
    rules = {e["rule"] for e in course["hardware"]["excluded"]}
    assert "hardware.too-few-for-jobs-at-once" in rules


def test_one_job_at_a_time_has_no_pool(tmp_path: Path) -> None:
    choice = decide(tmp_path, COURSE)["hardware"]["choice"]
    assert "pool" not in choice


def test_a_teaching_lab_can_be_boxes_of_consumer_cards_side_by_side() -> None:
    """Each job runs on one card: a lab of workstations holds the pool without a cluster
    fabric (a teaching lab is not a datacenter), priced as boxes side by side. (With 2,000
    GPU-hours a year the lab rents each job its GPU instead: scenario 65.)"""
    from engine.answers.model import validate_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    answers = validate_answers({"model": "qwen2.5-0.5b", "method": "lora",
                                "concurrent_jobs": 40, "usage_pattern": "continuous",
                                "hours_per_year": 2000, "hours_per_run": 1,
                                "budget_usd": 60000}, engine.catalog)
    boxes = [f for f in engine.evaluate(answers, trace=False).candidate_facts
             if f["where"] == "local" and str(f["platform"]).startswith("consumer-")
             and f["jobs_at_once"] >= 40]
    assert boxes and all(f["count"] >= 40 and f["nodes"] > 1 for f in boxes)
    # about the budget: 40 RTX 4060s at their March 2026 street price come to ~3 % over it,
    # where a MIG server would cost three times it
    assert min(f["upfront_usd"] for f in boxes) <= 60000 * 1.05


def test_one_job_never_spans_boxes_without_a_fabric(tmp_path: Path) -> None:
    found = decide(tmp_path, {**COURSE, "upfront_capex": True, "budget_usd": 500000,
                              "hours_per_year": 60000})
    for c in [found["hardware"]["choice"], *found["hardware"]["alternatives"]]:
        if c and c["where"] == "local" and c["platform"].startswith("consumer-"):
            assert c["nodes"] == 1, c["id"]


RENTED_POOL = {"model": "llama-3.1-8b", "method": "lora", "concurrent_jobs": 16,
               "usage_pattern": "continuous", "hours_per_year": 30000, "hours_per_run": 8,
               "budget_usd": 200000, "upfront_capex": False}


def test_a_rented_pool_takes_whole_instances_side_by_side_and_no_dearer_reservation(
        tmp_path: Path) -> None:
    """Without capital, 16 jobs at once rent a single-GPU offer as several instances, each
    job its own while it runs; a reservation, paid every hour, would cost more than paying on
    demand for the work, and the pricing says so."""
    decision = decide(tmp_path, RENTED_POOL)
    pick = decision["hardware"]["choice"]
    assert pick["where"] == "cloud" and pick["pricing"] == "on-demand"
    assert pick["pool"]["jobs_at_once"] >= 16
    assert pick["nodes"] > 1 and pick["count"] == pick["nodes"]  # 1-GPU instances
    assert pick["cost"]["per_year_usd"] < RENTED_POOL["budget_usd"]
    pricing = decision["decisions"]["pricing"]
    assert pricing["choice"] == "on-demand"
    assert "pricing.reserved-pays-for-idle" in decision["fired"]


def test_a_node_larger_than_the_jobs_spreads_them_over_its_gpus() -> None:
    """Three jobs at once on an 8-GPU instance: each job runs on 2 GPUs, not on MIG slices
    of 1.5 GPUs while 6 idle, so a wave (billed on the whole instance) ends 4 times sooner
    and costs no more than the slices would."""
    from engine.answers.model import validate_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    answers = validate_answers({"model": "qwen2.5-14b", "method": "lora",
                                "training_tokens_b": 0.5, "runs_per_year": 30,
                                "usage_pattern": "bursty", "concurrent_jobs": 3,
                                "budget_usd": 40000, "upfront_capex": False,
                                "cloud_ecosystem": "azure"}, engine.catalog)
    facts = {f["candidate_id"]: f
             for f in engine.evaluate(answers, trace=False).candidate_facts}
    h200 = facts["cloud:azure-h200-nd-v5:on-demandx8:lora"]
    assert h200["gpus_per_job"] == 2 and h200["jobs_at_once"] == 4
    assert not h200["mig_profile"] and "so that none idles" in h200["pool_layout"]
    a100 = facts["cloud:azure-a100-80gb:on-demandx3:lora"]  # a GPU a job: no GPU idles
    assert a100["gpus_per_job"] == 1 and "one job per GPU" in a100["pool_layout"]
    # 2 H200s a job finish far sooner than 1 A100, and the whole instance, billed each wave,
    # costs about what the work does (on slices it cost 5.7 times the A100s)
    assert h200["days_per_run"] < a100["days_per_run"] / 4
    assert h200["cost_usd_year"] < 1.5 * a100["cost_usd_year"]


def test_a_pool_rents_one_instance_of_a_shape_a_job_not_the_next_larger_shape() -> None:
    """Three jobs at once on an offer sold as 1-, 2-, 4- and 8-GPU instances: three 1-GPU
    instances, one a job, not one 4-GPU instance whose fourth GPU idles through every wave
    (a pool of 3 was priced and told to rent 'up to 4 at once')."""
    from engine.answers.model import validate_answers
    from engine.catalog.load import load_catalog
    from engine.decide.engine import load_engine

    catalog = load_catalog()
    offer = next(o for o in catalog.offers if o.id == "runpod-l40s")
    assert offer.shapes[:3] == (1, 2, 4)
    engine = load_engine()
    answers = validate_answers({"model": "llama-3.1-8b", "method": "qlora",
                                "training_tokens_b": 0.02, "runs_per_year": 300,
                                "concurrent_jobs": 3, "usage_pattern": "continuous",
                                "budget_usd": 25000, "upfront_capex": False}, engine.catalog)
    facts = {f["candidate_id"]: f
             for f in engine.evaluate(answers, trace=False).candidate_facts}
    pool = facts["cloud:runpod-l40s:on-demandx3:qlora"]
    assert pool["count"] == 3 and pool["nodes"] == 3 and pool["jobs_at_once"] == 3
    assert "cloud:runpod-l40s:on-demandx4:qlora" not in facts
