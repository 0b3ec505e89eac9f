"""``gpu-advisor whatif``: the smallest single answer change that flips each decision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.answers.model import load_answers
from engine.catalog.load import Catalog
from engine.cli import cli
from engine.decide.engine import load_engine
from engine.tools.whatif import Probe, thresholds, what_if

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "startup-7b-continuous.yaml"
AXES = {"approach", "method", "deployment", "cloud_kind", "pricing", "sharing"}


def recommend_json(*sets: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(EXAMPLE),
                                      "--format", "json", *(a for s in sets
                                                            for a in ("--set", s))])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def whatif(fmt: str, *sets: str) -> str:
    result = CliRunner().invoke(cli, ["whatif", "--answers", str(EXAMPLE), "--format", fmt,
                                      *(a for s in sets for a in ("--set", s))])
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def below_break_even() -> tuple[float, list[str]]:
    """The break-even hours of the intermittent team, and --set values just below them."""
    estimates = recommend_json("usage_pattern=intermittent")["estimates"]
    break_even = float(estimates["break_even"]["work"])  # hours: the work is in hours
    hours = int(break_even) - 20
    sets = ["usage_pattern=intermittent", f"hours_per_year={hours}"]
    assert recommend_json(*sets)["decisions"]["deployment"]["choice"] != "local"
    return break_even, sets


@pytest.fixture(scope="module")
def flips(below_break_even: tuple[float, list[str]]) -> list[dict[str, Any]]:
    return json.loads(whatif("json", *below_break_even[1]))  # type: ignore[no-any-return]


@pytest.mark.slow
def test_json_shape(flips: list[dict[str, Any]],
                    below_break_even: tuple[float, list[str]]) -> None:
    assert isinstance(flips, list) and flips
    base = recommend_json(*below_break_even[1])
    for flip in flips:
        assert {"axis", "from", "to", "answer", "value"} <= set(flip)
        assert flip["axis"] in AXES
        assert flip["from"] != flip["to"]
        assert flip["from"] == base["decisions"][flip["axis"]]["choice"]
        assert flip["answer"] in base["answers"]
    assert len({f["axis"] for f in flips}) == len(flips)      # at most one per axis


@pytest.mark.slow
def test_break_even_flip_matches_the_fact(flips: list[dict[str, Any]],
                                          below_break_even: tuple[float, list[str]]) -> None:
    break_even = below_break_even[0]
    deployment = next(f for f in flips if f["axis"] == "deployment")
    assert deployment["to"] == "local"
    assert deployment["answer"] == "hours_per_year"
    # the smallest change found by search, at the fact: within an hour or 0.2 % (runs are
    # billed in whole increments, so the cost is a line only to within them)
    assert abs(deployment["value"] - break_even) <= max(1.0, 0.002 * break_even)
    # and the reported value does flip it, on its own
    flipped = recommend_json(below_break_even[1][0], f"hours_per_year={deployment['value']}")
    assert flipped["decisions"]["deployment"]["choice"] == "local"


@pytest.mark.slow
def test_a_choice_flips_an_axis_and_no_flip_changes_the_goal(flips: list[dict[str, Any]]
                                                            ) -> None:
    """A changed choice is a flip like a number (shared_small_workloads = true: GPU
    fractions take over); the nearest change is the one reported (a budget under the entry
    tier's $3,000 moves the team to a marketplace, nearer than budget_covers = programme);
    changing what the team sets out to do (workload: fine-tune → pretrain) or a change after
    which nothing does the work is not what would make another option better."""
    sharing = next(f for f in flips if f["axis"] == "sharing")
    assert (sharing["from"], sharing["to"]) == ("dedicated", "fractional")
    assert (sharing["answer"], sharing["value"], sharing["current"]) == (
        "shared_small_workloads", True, False)
    cloud_kind = next(f for f in flips if f["axis"] == "cloud_kind")
    assert (cloud_kind["from"], cloud_kind["to"]) == ("specialised", "marketplace")
    assert cloud_kind["answer"] == "budget_usd" and cloud_kind["value"] < 3000
    assert all(f["answer"] != "workload" and f["to"] is not None for f in flips), flips


@pytest.mark.slow
def test_every_reported_flip_flips_its_axis(flips: list[dict[str, Any]],
                                            below_break_even: tuple[float, list[str]]) -> None:
    """Applied on its own, each reported change gives the decision it names."""
    for flip in flips:
        value = flip["value"]
        text = ("true" if value else "false") if isinstance(value, bool) else str(value)
        changed = recommend_json(*below_break_even[1], f"{flip['answer']}={text}")
        assert changed["decisions"][flip["axis"]]["choice"] == flip["to"], flip


@pytest.mark.slow
def test_text_lines(below_break_even: tuple[float, list[str]]) -> None:
    lines = whatif("text", *below_break_even[1]).splitlines()
    by_axis = {line.split(":", 1)[0]: line for line in lines}
    assert set(by_axis) == AXES, lines
    deployment = by_axis["deployment"]
    assert deployment.startswith("deployment: cloud → local if hours_per_year ≥ ")
    # the first whole hour at or above the break-even fact (itself rounded)
    shown = float(deployment.split("≥ ")[1].split(" ")[0].replace(",", ""))
    assert shown == int(shown)
    assert 0 <= shown - below_break_even[0] <= max(1.0, 0.002 * below_break_even[0])
    assert by_axis["cloud_kind"].startswith("cloud_kind: specialised → marketplace if "
                                            "budget_usd ≤ 2,999 (now 6,000): ")
    assert " a year" in deployment  # what the pick and its cost become
    for line in lines:
        assert " → " in line or "(no single answer change flips it)" in line


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


@pytest.mark.slow
def test_library_flip_is_smallest_change(catalog: Catalog) -> None:
    engine = load_engine(None, None, None)
    answers = load_answers(EXAMPLE, ["hours_per_year=8000"], engine.catalog)
    base, flips = what_if(engine, answers)
    assert base.decisions["deployment"].choice == "local"
    deployment = next(f for f in flips if f.axis == "deployment")
    # the smallest change that flips it (another method can come before less work); where it
    # is the work, going down from 8,000 the first flip is at or below the break-even
    if deployment.answer == "hours_per_year":
        assert isinstance(deployment.value, (int, float)) and deployment.value < 8000
    assert recommend_json(f"{deployment.answer}={_text(deployment.value)}",
                          "hours_per_year=8000")["decisions"]["deployment"]["choice"] != "local"
    assert "hours_per_year" in {q.id for q in engine.catalog.questions}
    assert thresholds(engine, "hours_per_year", Probe(engine, answers).facts)


def test_a_limit_of_the_team_is_tried_lifted(catalog: Catalog, tmp_path: Path) -> None:
    """A list answer that limits (only AMD GPUs) is tried empty, and an owned GPU as none;
    the changes are only tried, so the base decision is the same as a plain recommendation."""
    from engine.tools.whatif import _trials

    path = tmp_path / "amd.yaml"
    path.write_text("model: llama-3.1-8b\ntraining_tokens_b: 0.1\nruns_per_year: 4\n"
                    "gpu_vendors: [amd]\nowned_gpu: mi300x\nowned_gpu_count: 8\n",
                    encoding="utf-8")
    engine = load_engine()
    answers = load_answers(path, [], engine.catalog)
    base = engine.evaluate(answers, decision_id="w")
    tried = {(t.answer, str(t.value)) for t in _trials(engine, answers, base.request_facts)}
    assert ("gpu_vendors", "[]") in tried and ("owned_gpu", "None") in tried


@pytest.mark.slow
def test_the_run_limit_that_lets_a_cheaper_node_in_is_tried(catalog: Catalog) -> None:
    """An AMD-only pretrain whose cheaper single-node offer only the default 30-day limit
    keeps out: what-if tries the limit that lets it in (left empty, the limit is the
    default's), and a change after which no configuration does the work (two jobs at once
    on these offers) flips nothing."""
    from engine.answers.model import validate_answers

    engine = load_engine()
    answers = validate_answers({
        "workload": "pretrain", "model": "llama-3.1-8b", "training_tokens_b": 200,
        "runs_per_year": 2, "usage_pattern": "bursty", "budget_usd": 500000,
        "upfront_capex": True, "gpu_vendors": ["amd"]}, catalog)
    base, flips = what_if(engine, answers)
    said = {f.axis: f for f in flips}
    kind = said["cloud_kind"]
    assert (kind.answer, kind.before, kind.after, kind.current) == (
        "max_days_per_run", "hyperscaler", "specialised", 30.0)
    assert 49 < float(kind.value) <= float(base.facts.get("longer_run_answer_days") or 50)
    assert all(f.answer != "concurrent_jobs" for f in flips)


def test_a_change_to_an_api_says_the_api_and_its_bill(catalog: Catalog) -> None:
    """A change that makes the advice a hosted API leads to the API and its bill a year, not
    to the training hardware priced beside it (it read "approach: fine-tune → use-api if
    data_residency = none …: rent 2× B200, RunPod on-demand, ~$650 a year"); where the
    advice is an API already, a flip of the training's hardware still names that hardware."""
    from engine.answers.model import validate_answers
    from engine.tools.whatif import _result

    engine = load_engine()
    team = {"workload": "fine-tune", "model": "llama-3.1-70b", "training_tokens_b": 0.2,
            "runs_per_year": 4, "usage_pattern": "intermittent", "budget_usd": 100000,
            "upfront_capex": True, "data_residency": "on-premises",
            "needs_frontier_capability": True, "api_tokens_per_month_m": 500}
    base = engine.recommend(validate_answers(team, catalog))
    api = engine.recommend(validate_answers({**team, "data_residency": "none"}, catalog))
    assert (base.decisions["approach"].choice, api.decisions["approach"].choice) == (
        "fine-tune", "use-api")
    assert _result(api, base) == (f"use a hosted API ({api.facts['api_name']})",
                                  api.facts["api_cost_usd_month"] * 12, 0.0)
    words, per_year, _ = _result(api, api)
    assert api.hardware.choice is not None and words is not None
    assert words.startswith(("rent ", "buy ")) and "hosted API" not in words
    assert per_year == api.hardware.choice.cost.per_year_usd
