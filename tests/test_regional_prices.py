"""Hyperscalers price each region: a location with a list price of its own is rented at it.

AWS's g6e.12xlarge lists $10.49264/h in us-east-1 and $13.12002/h in eu-central-1
(catalog/sources.yaml, skypilot-catalog-aws-v8); a team whose data stays in Germany was priced
at the US price. Each location may now carry its own on-demand (and spot) price; the pick is
rented where its data may go at the least of those prices, and a location with prices of its
own offers no spot unless it lists one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.answers.model import validate_answers
from engine.catalog.load import CatalogError, load_catalog
from engine.catalog.models import Offer
from engine.decide.engine import Engine, load_engine
from engine.output.markdown import render_markdown
from engine.output.text import render_text

GERMAN_DATA = {"workload": "fine-tune", "model": "llama-3.1-8b", "method": "full",
               "training_tokens_b": 0.5, "runs_per_year": 6, "usage_pattern": "intermittent",
               "budget_usd": 20000, "upfront_capex": False, "data_residency": "region",
               "allowed_regions": ["de"]}


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


def _candidates(engine: Engine, answers: dict[str, Any], offer: str) -> list[dict[str, Any]]:
    evaluation = engine.evaluate(validate_answers(answers, engine.catalog), trace=True)
    return [f for f in evaluation.candidate_facts if f["candidate_id"].startswith(
        f"cloud:{offer}:")]


def _offer(engine: Engine, offer_id: str) -> Offer:
    return next(o for o in engine.catalog.offers if o.id == offer_id)


def test_data_in_germany_rents_at_frankfurts_list_price(engine: Engine) -> None:
    decision = engine.recommend(validate_answers(GERMAN_DATA, engine.catalog))
    choice = decision.hardware.choice
    assert choice is not None and choice.offer == "aws-l40s-g6e-4"
    assert choice.location == "eu-central-1 (Frankfurt, Germany)"
    assert choice.usd_per_gpu_hour == pytest.approx(13.12002 / 4, abs=0.005)  # not $2.62


def test_data_that_may_go_anywhere_rents_at_the_offers_own_price(engine: Engine) -> None:
    anywhere = {k: v for k, v in GERMAN_DATA.items()
                if k not in ("data_residency", "allowed_regions")}
    found = [f for f in _candidates(engine, anywhere, "aws-l40s-g6e-4")
             if f["pricing"] == "on-demand"]
    assert found and {f["usd_per_gpu_hour"] for f in found} == {2.6232}
    offer = _offer(engine, "aws-l40s-g6e-4")
    where = engine.catalog.sold_at(offer, None)
    assert where is not None and where.region == "us-east-1"


def test_the_cheapest_allowed_location_is_the_one_rented(engine: Engine) -> None:
    offer = _offer(engine, "aws-h100-p5")
    eu = engine.catalog.sold_at(offer, frozenset({"eu", "uk"}))
    assert eu is not None and eu.region == "eu-north-1"  # $7.36, not London's $8.94
    assert engine.catalog.sold_at(offer, frozenset({"gb"})).region == "eu-west-2"  # type: ignore[union-attr]
    assert engine.catalog.sold_at(offer, frozenset({"br"})) is None


def test_a_location_priced_on_its_own_has_no_spot_unless_it_lists_one(engine: Engine) -> None:
    london = {**GERMAN_DATA, "model": "qwen2.5-14b", "method": "lora", "allowed_regions": ["uk"]}
    pricings = {f["pricing"] for f in _candidates(engine, london, "aws-h100-p5")}
    assert pricings == {"on-demand"}  # the US spot price is not London's
    stockholm = {**london, "model": "llama-3.1-70b", "allowed_regions": ["se"]}
    spot = [f for f in _candidates(engine, stockholm, "aws-h200-p5en")
            if f["pricing"] == "spot"]
    assert spot and {f["usd_per_gpu_hour"] for f in spot} == {4.98}


def test_a_spot_price_without_an_own_on_demand_price_is_refused(catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    text = clouds.read_text()
    marker = "    region: eu-west-2\n    city: London\n    on_demand_usd_per_gpu_hour: 8.944\n"
    assert marker in text
    clouds.write_text(text.replace(marker, "    region: eu-west-2\n    city: London\n"
                                           "    spot_usd_per_gpu_hour: 2.0\n", 1))
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    message = str(exc.value)
    assert str(clouds) in message and "\n" not in message
    assert "spot_usd_per_gpu_hour needs on_demand_usd_per_gpu_hour" in message


def test_an_imported_row_is_priced_at_its_own_price_not_the_locations(tmp_path: Path) -> None:
    """A SkyPilot row for g5.xlarge in Frankfurt takes the catalog's Frankfurt location
    (country, city), never the Frankfurt price another offer's location carries (p4de's)."""
    from test_skypilot import write_csv

    csv = write_csv(tmp_path / "aws", ["g5.xlarge,4.0,16.0,A10G,1.0,,eu-central-1,"
                                       "eu-central-1a,1.258,0.62"])
    catalog = load_catalog(prices=csv)
    imported = [o for o in catalog.offers if o.gpu == "a10g" and o.provider == "aws"
                and any(loc.region == "eu-central-1" for loc in o.locations)]
    assert imported
    for offer in imported:
        frankfurt = catalog.sold_at(offer, frozenset({"de"}))
        assert frankfurt is not None and frankfurt.city == "Frankfurt"
        assert not frankfurt.own_prices
        assert offer.on_demand_usd_per_gpu_hour == pytest.approx(1.258)


def test_the_catalog_listing_of_a_region_shows_that_regions_prices() -> None:
    from click.testing import CliRunner

    from engine.cli import cli

    def listed(*args: str) -> dict[str, Any]:
        result = CliRunner().invoke(cli, ["catalog", "list", "clouds", "--format", "json",
                                          *args])
        assert result.exit_code == 0, result.output
        return {o["id"]: o for o in json.loads(result.stdout)}

    london, anywhere = listed("--region", "gb"), listed()
    assert london["aws-h100-p5"]["on_demand_usd_per_gpu_hour"] == 8.944
    assert london["aws-h100-p5"]["spot_usd_per_gpu_hour"] is None
    assert anywhere["aws-h100-p5"]["on_demand_usd_per_gpu_hour"] == 6.88
    assert "aws-h100-p5" not in listed("--region", "gb", "--pricing", "spot")


INDIAN_DATA = {"workload": "fine-tune", "model": "llama-3.1-70b", "method": "auto",
               "training_tokens_b": 0.2, "runs_per_year": 12, "usage_pattern": "bursty",
               "budget_usd": 60000, "upfront_capex": False, "cloud_ecosystem": "aws",
               "data_residency": "region", "allowed_regions": ["in"]}


def test_an_aws_shop_in_india_rents_b200_at_mumbais_price(engine: Engine) -> None:
    """p6-b200.48xlarge lists $160.64525/h in ap-south-1 against $113.9328 in the US (the
    Vantage export of 2026-08-26); the Mumbai location carried no price and was rented at
    the US one ($14.24 a GPU-hour), so an AWS shop whose data stays in India was told to
    rent B200 where H100 at Mumbai's own $8.256 does the work for less."""
    found = [f for f in _candidates(engine, INDIAN_DATA, "aws-b200-p6")
             if f["pricing"] == "on-demand"]
    assert found and all(f["usd_per_gpu_hour"] == pytest.approx(160.64525 / 8, abs=1e-4)
                         for f in found)
    decision = engine.recommend(validate_answers(INDIAN_DATA, engine.catalog))
    choice = decision.hardware.choice
    assert choice is not None and choice.location == "ap-south-1 (Mumbai, India)"
    assert choice.gpu == "h100-sxm" and choice.usd_per_gpu_hour == pytest.approx(8.256)


def _table(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Hardware ("))
    end = next(i for i, line in enumerate(lines) if line.startswith("$ per GPU-h:"))
    return [line for line in lines[start:end] if "×" in line]


def test_the_table_of_a_team_whose_data_stays_says_where_each_row_is_rented(
        engine: Engine) -> None:
    """The region column listed every region an offer is sold in ("us,eu +4") for a team
    whose data may go only to India, as if its rows were rented in the US. For such a team
    it says where each row is rented (the city or country; in full in Markdown); for a
    team without that limit it still lists the offer's regions."""
    decision = engine.recommend(validate_answers(INDIAN_DATA, engine.catalog))
    rows = _table(render_text(decision, engine.rulebook))
    assert rows and all(("Mumbai" in row or "India" in row) and "us,eu" not in row
                        for row in rows), rows
    assert "| ap-south-1 (Mumbai, India) |" in render_markdown(decision, engine.rulebook)
    anywhere = {k: v for k, v in INDIAN_DATA.items()
                if k not in ("data_residency", "allowed_regions")}
    free = _table(render_text(engine.recommend(validate_answers(anywhere, engine.catalog)),
                              engine.rulebook))
    assert free and not any("Mumbai" in row for row in free)
    assert any("us,eu" in row for row in free)


def test_google_clouds_a100_in_europe_and_asia_at_their_own_prices(engine: Engine) -> None:
    """a2-ultragpu-1g lists $5.06880 an hour in us-central1 and $5.58092 in europe-west4,
    $6.24769 in asia-southeast1 (the Cloud Billing catalog compiled 2026-02-12, whose US
    price is the offer's to the cent); the European and Asian locations were rented at the
    US price."""
    offer = _offer(engine, "gcp-a100-80gb")
    rented = {}
    for country in ("us", "nl", "sg"):
        where = engine.catalog.sold_at(offer, frozenset({country}))
        assert where is not None
        rented[country] = (where.region, offer.priced_at(where).on_demand_usd_per_gpu_hour)
    assert rented == {"us": ("us-central1", 5.0688), "nl": ("europe-west4", 5.580918),
                      "sg": ("asia-southeast1", 6.247685)}
