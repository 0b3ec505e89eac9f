"""Instances the provider ends after a set time (Google Cloud's flex-start B200, seven days):
a run that would outlive them is sized to fit, excluded where nothing fits, or, where the
team checkpoints often, run in pieces whose restarts are priced."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine.answers.model import validate_answers
from engine.decide.candidates import instance_restarts
from engine.decide.engine import Engine, load_engine
from engine.output.brief import brief_lines

GCP_PRETRAIN = {"workload": "pretrain", "model": "llama-3.2-3b", "training_tokens_b": 500,
                "runs_per_year": 4, "usage_pattern": "continuous", "budget_usd": 1_500_000,
                "upfront_capex": False, "cloud_ecosystem": "gcp"}


@pytest.mark.parametrize(("wall", "longest", "restarts"), [
    (10.0, None, 0), (168.0, 168.0, 0), (168.5, 168.0, 1), (376.0, 168.0, 2),
    (504.0, 168.0, 2), (504.1, 168.0, 3)])
def test_a_run_stops_once_for_each_instance_life_it_outlasts(
        wall: float, longest: float | None, restarts: int) -> None:
    assert instance_restarts(wall, longest) == restarts


def _flex(engine: Engine, **answers: object) -> list[dict[str, object]]:
    evaluation = engine.evaluate(validate_answers({**GCP_PRETRAIN, **answers}, engine.catalog))
    return [c for c in evaluation.candidate_facts
            if str(c["candidate_id"]).startswith("cloud:gcp-b200-a4:on-demand")]


def test_without_frequent_checkpoints_the_count_is_the_fewest_that_finish_in_a_life() -> None:
    engine = load_engine()
    decision = engine.recommend(validate_answers(GCP_PRETRAIN, engine.catalog))
    pick = decision.hardware.choice
    assert pick is not None and pick.offer == "gcp-b200-a4" and pick.pricing == "on-demand"
    assert pick.days_per_run is not None and pick.days_per_run <= 7
    (flex,) = _flex(engine)
    assert flex["instance_restarts"] == 0 and flex["instance_longest_hours"] == 168
    smaller = int(flex["outlived_count"])  # type: ignore[call-overload]
    assert 0 < smaller < int(flex["count"])  # type: ignore[call-overload]
    assert float(flex["outlived_days"]) > 7  # type: ignore[arg-type]
    said = [w.text for w in decision.warnings if w.id == "sized-for-the-instance-life"]
    assert said and f"{smaller} would take {flex['outlived_days']:.1f}." in said[0]
    brief = " ".join(" ".join(brief_lines(decision, engine.rulebook)).split())
    assert " ".join(said[0].split()) in brief  # declared for the one screen


def test_with_frequent_checkpoints_a_run_goes_in_pieces_and_pays_each_restart() -> None:
    engine = load_engine()
    (flex,) = _flex(engine, frequent_checkpoints=True)
    days = float(flex["days_per_run"])  # type: ignore[arg-type]
    assert days > 7 and flex["outlived_count"] == 0
    restarts = int(flex["instance_restarts"])  # type: ignore[call-overload]
    assert restarts == math.ceil(days * 24 / 168) - 1 > 0
    # the wall time of a run: training, one start-up, and a restart for each piece after
    # the first (the start-up without the final upload)
    start = float(flex["start_up_hours"])  # type: ignore[arg-type]
    training = float(flex["run_hours"])  # type: ignore[arg-type]
    assert days * 24 > training + start
    assert days * 24 < training + start * (1 + restarts)
    decision = engine.recommend(validate_answers({**GCP_PRETRAIN,
                                                 "frequent_checkpoints": True}, engine.catalog))
    assert decision.hardware.choice is not None
    assert decision.hardware.choice.id == flex["candidate_id"]  # fewer GPUs, in pieces
    said = [w.text for w in decision.warnings if w.id == "run-in-pieces"]
    assert said and f"stops {restarts} times" in said[0]


def test_where_no_count_fits_a_life_the_offer_is_excluded(catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    text = clouds.read_text(encoding="utf-8")
    assert text.count("  on_demand_longest_hours: 168\n") == 1
    clouds.write_text(text.replace("  on_demand_longest_hours: 168\n",
                                   "  on_demand_longest_hours: 0.05\n"), encoding="utf-8")
    engine = load_engine(catalog=catalog_copy)
    evaluation = engine.evaluate(validate_answers(GCP_PRETRAIN, engine.catalog))
    ids = evaluation.fired.get("pricing.instance-ends-before-the-run", [])
    assert any(i.startswith("cloud:gcp-b200-a4:on-demand") for i in ids)
    decision = evaluation.decision
    assert decision.hardware.choice is None or decision.hardware.choice.offer != "gcp-b200-a4"
