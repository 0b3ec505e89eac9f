"""A team whose own GPUs cannot hold the job with the method it asked for hears what they
would cost with a lighter one that fits them, priced as that recommendation prices them."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from engine.answers.model import validate_answers
from engine.decide.engine import load_engine

TEAM = Path(__file__).resolve().parent / "teams" / "owns-8-h100-asks-70b-full.yaml"


def _answers() -> dict[str, object]:
    return dict(yaml.safe_load(TEAM.read_text(encoding="utf-8")))


def test_own_gpus_too_small_for_full_say_what_lora_costs_on_them() -> None:
    engine = load_engine()
    asked = _answers()
    decision = engine.recommend(validate_answers(asked, engine.catalog))
    why = decision.hardware.owned_why_not
    assert why is not None and why.startswith("The job needs")
    said = re.search(r"; with LoRA \(method: lora\) they would hold it, for ~\$([\d,]+) a "
                     r"year of their power\.$", why)
    assert said is not None, why
    lora = engine.recommend(validate_answers({**asked, "method": "lora"}, engine.catalog))
    pick = lora.hardware.choice
    assert pick is not None and pick.owned and pick.count == 8
    assert int(said[1].replace(",", "")) == round(pick.cost.per_year_usd)


def test_nothing_lighter_is_said_where_the_lightest_method_does_not_fit() -> None:
    """QLoRA of a 405B model on one owned H100: nothing lighter to try, so the reason stands
    alone."""
    engine = load_engine()
    decision = engine.recommend(validate_answers(
        {**_answers(), "method": "qlora", "model": "llama-3.1-405b", "owned_gpu_count": 1},
        engine.catalog))
    why = decision.hardware.owned_why_not
    assert why is not None and "(method:" not in why
