"""One price per GPU-hour: `estimate cost` and `recommend` read an offer's GPU-hour the same
way (its rate plus its GPUs' share of a GPU-only price's VM), for every catalog offer and for
quotes and price-file rows of any shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.answers.model import validate_answers
from engine.catalog.load import Catalog
from engine.decide.engine import load_engine
from engine.estimates.reports import cost_report

TINY = {"model": "llama-3.2-1b", "method": "qlora", "training_tokens_b": 0.001,
        "runs_per_year": 1}


def _agree(catalog: Catalog) -> list[tuple[str, float, float]]:
    """(offer, recommend's $/GPU-hour, estimate cost's) for each offer at its smallest shape,
    on demand, wherever the two differ; checks that every offer was compared."""
    engine = load_engine()
    evaluation = engine.evaluate(validate_answers(TINY, catalog))
    offers = {o.id: o for o in catalog.offers}
    seen: dict[str, float] = {}
    for facts in evaluation.candidate_facts:
        offer = offers.get(str(facts.get("offer")))
        if (offer is not None and facts["pricing"] == "on-demand"
                and facts["count"] == offer.shapes[0] and not facts.get("pool")):
            seen[offer.id] = float(facts["usd_per_gpu_hour"])
    differ = []
    for offer_id, rate in seen.items():
        report = cost_report(catalog, offers[offer_id].gpu, hours_per_year=100, offer_id=offer_id)
        assert report.rent_usd_per_gpu_hour is not None
        if abs(report.rent_usd_per_gpu_hour - rate) > 1e-4:
            differ.append((offer_id, rate, report.rent_usd_per_gpu_hour))
    assert len(seen) >= len([o for o in catalog.offers if o.market is None]) // 2
    return differ


def test_every_catalog_offer_has_one_gpu_hour(catalog: Catalog) -> None:
    assert _agree(catalog) == []


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(rate=st.floats(0.05, 40), gpus=st.sampled_from([1, 2, 4, 8]),
       vm=st.one_of(st.none(), st.floats(0.0, 30)))
def test_a_quote_of_any_shape_has_one_gpu_hour(tmp_path: Path, rate: float, gpus: int,
                                               vm: float | None) -> None:
    """A GPU-only quote for an 8-GPU, 4-GPU … instance with its VM priced per instance:
    $10 + a $16 VM on 8 GPUs is $12 a GPU-hour in both commands."""
    quote = (f"offers:\n- id: my-quote\n  provider: lambda\n  gpu: h100-sxm\n"
             f"  gpus_per_instance: {gpus}\n  regions: [us]\n"
             f"  on_demand_usd_per_gpu_hour: {rate:.4f}\n"
             + (f"  vm_usd_per_instance_hour: {vm:.4f}\n" if vm is not None else "")
             + "  as_of: '2026-11-01'\n  sources: [house-assumption]\n")
    path = tmp_path / f"quote-{gpus}.yaml"
    path.write_text(quote, encoding="utf-8")
    engine = load_engine(prices=path)
    catalog = engine.catalog
    report = cost_report(catalog, "h100-sxm", hours_per_year=100, offer_id="my-quote")
    expected = round(rate, 4) + (round(vm, 4) / gpus if vm else 0.0)
    assert report.rent_usd_per_gpu_hour == pytest.approx(expected, abs=1e-4)
    evaluation = engine.evaluate(validate_answers(TINY, catalog))
    rented = [f for f in evaluation.candidate_facts if f.get("offer") == "my-quote"
              and f["pricing"] == "on-demand" and f["count"] == gpus]
    assert rented and rented[0]["usd_per_gpu_hour"] == pytest.approx(expected, abs=1e-4)
