"""The market in the catalog as a buyer asks about it: which offers rent a GPU, where, how
they are sold, how old their prices are, and why a GPU has no offer."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.answers.model import load_answers
from engine.catalog.load import Catalog, stale_figures
from engine.cli import cli
from engine.decide.engine import load_engine
from engine.rules.lint import gpus_without_offers


def _clouds(runner: CliRunner, *args: str) -> list[dict[str, object]]:
    result = runner.invoke(cli, ["catalog", "list", "clouds", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    offers: list[dict[str, object]] = json.loads(result.stdout)
    return offers


def test_b300_is_rented_by_aws_nebius_and_coreweave_with_dates(runner: CliRunner) -> None:
    offers = _clouds(runner, "--gpu", "b300")
    assert {o["provider"] for o in offers} >= {"aws", "nebius", "coreweave"}
    assert all(o["gpu"] == "b300" and o["as_of"] for o in offers)
    text = runner.invoke(cli, ["catalog", "list", "clouds", "--gpu", "b300"]).stdout
    assert "coreweave-b300" in text and "2026-" in text and "providers: aws = Amazon" in text


def test_mi300x_has_a_self_serve_cloud_under_two_dollars(runner: CliRunner,
                                                         catalog: Catalog) -> None:
    offers = _clouds(runner, "--gpu", "mi300x")
    cheap = [o for o in offers if float(str(o["on_demand_usd_per_gpu_hour"])) < 2
             and catalog.access_of(next(x for x in catalog.offers if x.id == o["id"]))
             == "self-serve"]
    assert cheap, offers


def test_every_gpu_has_an_offer_or_a_reason(catalog: Catalog) -> None:
    assert gpus_without_offers(catalog) == []
    rented = {o.gpu for o in catalog.offers}
    assert all(g.id in rented or g.no_offer_reason for g in catalog.gpus.values())
    assert [a.id for a in catalog.announced] == ["rubin-vr200"]
    assert not {"rubin-vr200", "gb300-nvl72"} & set(catalog.gpus)  # never a configuration


def test_filters_combine_and_region_means_where_it_is_sold(runner: CliRunner,
                                                           catalog: Catalog) -> None:
    offers = _clouds(runner, "--region", "jp", "--pricing", "spot")
    assert offers
    for o in offers:
        offer = next(x for x in catalog.offers if x.id == o["id"])
        assert offer.spot_usd_per_gpu_hour is not None
        assert any(loc.country == "jp" for loc in catalog.locations_of(offer))
    eu = _clouds(runner, "--region", "eu", "--gpu", "h100-sxm")
    assert eu and all(o["gpu"] == "h100-sxm" for o in eu)


@pytest.mark.parametrize(("args", "message"), [
    (["--gpu", "h100-sx"], "error: --gpu: no GPU 'h100-sx'; did you mean 'h100-sxm'?"),
    (["--region", "japan"], "error: --region: no region or country 'japan'"),
])
def test_a_filter_that_names_nothing_is_one_line(runner: CliRunner, args: list[str],
                                                 message: str) -> None:
    result = runner.invoke(cli, ["catalog", "list", "clouds", *args])
    assert result.exit_code == 2
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1


def test_stale_lists_what_is_older_than_the_policy(runner: CliRunner, catalog: Catalog) -> None:
    limit = catalog.policy.max_price_age_days.value
    old = stale_figures(catalog, dt.date(2026, 12, 3))
    assert old and all((catalog.newest_price_date - d.as_of).days >= 0 for d in old)
    assert old[0].id == "gemini-flash-lite"  # priced until its shutdown in June 2026
    assert "rtx-4060" not in {d.id for d in old}  # re-dated to its March 2026 street price
    result = runner.invoke(cli, ["catalog", "stale", "--as-of", "2026-12-03", "--format",
                                 "json"])
    data = json.loads(result.stdout)
    assert data["max_age_days"] == limit
    assert all(item["age_days"] > limit for item in data["stale"])
    strict = runner.invoke(cli, ["catalog", "stale", "--as-of", "2026-12-03", "--strict"])
    assert strict.exit_code == 1 and "older than 365 days" in strict.stdout
    fresh = runner.invoke(cli, ["catalog", "stale", "--as-of", "2023-07-02", "--strict"])
    assert fresh.exit_code == 0 and fresh.stdout.startswith("no price older than")


def test_an_offer_needs_a_price(catalog_copy: Path) -> None:
    from engine.catalog.load import load_catalog
    from engine.errors import CatalogError

    path = catalog_copy / "clouds.yaml"
    text = path.read_text(encoding="utf-8")
    start = text.index("- id: coreweave-b300")
    block = text[start:text.index("\n- id:", start + 1)]
    path.write_text(text.replace(block, block.replace("  spot_usd_per_gpu_hour: 4.48\n", "")),
                    encoding="utf-8")
    with pytest.raises(CatalogError, match="an offer needs a price"):
        load_catalog(catalog_copy)


def test_grace_superchips_have_an_arm_host(catalog: Catalog) -> None:
    assert {g.id for g in catalog.gpus.values() if g.host_cpu == "arm"} == {"gh200", "gb200"}


def test_show_an_announced_gpu_says_what_is_known(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["catalog", "show", "rubin-vr200"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "announced GPU (not sold yet) rubin-vr200"
    rows = {line.split()[0]: line.split(maxsplit=1)[1] for line in lines[3:] if line[:1].isalpha()}
    assert rows["announced"] == "2025-03-18" and rows["expected"] == "2026-H2"
    assert "[thegpu-gtc-2026] NVIDIA GTC 2026 full breakdown" in result.stdout
    data = json.loads(runner.invoke(cli, ["catalog", "show", "rubin-vr200", "--format",
                                          "json"]).stdout)
    assert data["expected"] == "2026-H2" and "thegpu-gtc-2026" in data["sources"]


def test_committed_prices_are_dated_terms_or_blocks(runner: CliRunner, catalog: Catalog) -> None:
    """AWS Capacity Blocks (self-serve, a block of days bought for each run) and Lambda's
    1-Click Clusters (from 16 GPUs, two weeks at least) are listed among reserved prices;
    CoreWeave and Nebius publish only a percentage off, which stays a note."""
    offers = {o["id"]: o for o in _clouds(runner, "--pricing", "reserved")}
    blocks = {oid for oid in offers if oid.endswith("-capacity-block")}
    assert {"aws-h100-p5-capacity-block", "aws-b200-p6-capacity-block",
            "aws-b300-p6-capacity-block", "aws-h200-p5en-capacity-block"} <= blocks
    for oid in blocks:
        offer = next(o for o in catalog.offers if o.id == oid)
        (term,) = offer.reserved_terms
        assert (term.term_days, offer.on_demand_usd_per_gpu_hour) == (1, None)
        assert catalog.access_of(offer) == "self-serve" and offer.as_of >= dt.date(2026, 10, 7)
    lam = next(o for o in catalog.offers if o.id == "lambda-h100-1cc")
    (term,) = lam.reserved_terms
    assert (lam.min_gpus, term.term_days, term.shortest_days) == (16, 7, 14)
    assert "lambda-b200-1cc" in offers
    assert not any(o.reserved_terms for o in catalog.offers
                   if o.provider in ("coreweave", "nebius"))
    text = runner.invoke(cli, ["catalog", "list", "clouds", "--provider", "lambda"]).stdout
    assert re.search(r"^lambda-h100-1cc +16\+ +none +none +6\.16 +account", text, re.M)


@pytest.mark.parametrize(("term", "message"), [
    ({"usd_per_gpu_hour": 1.0}, "a reserved term needs term_months or term_days, not both"),
    ({"term_months": 1, "term_days": 1, "usd_per_gpu_hour": 1.0}, "not both"),
    ({"term_months": 1, "min_days": 14, "usd_per_gpu_hour": 1.0},
     "min_days is the shortest block of a term_days term"),
])
def test_a_reserved_term_is_months_or_days(term: dict[str, object], message: str) -> None:
    from pydantic import ValidationError

    from engine.catalog.models import ReservedTerm

    with pytest.raises(ValidationError, match=message):
        ReservedTerm.model_validate(term)


AZURE_70B_QLORA = Path(__file__).parent / "teams" / "azure-70b-qlora.yaml"


def test_azures_one_gpu_h100_is_rented_to_an_azure_shop(runner: CliRunner) -> None:
    """Azure's cheapest H100 route, the NC H100 v5 sizes of one and two H100 NVL 94GB
    ($6.98 and $8.82 a GPU-hour, Azure's retail list of 2026-11-09), was missing: an Azure
    shop's 70B QLoRA, which one 94 GB card holds, was told to rent an 8× H200 node ($2,536
    a year); one H100 NVL does it for less. RunPod rents the card too."""
    offers = _clouds(runner, "--gpu", "h100-nvl")
    assert {(o["provider"], o["on_demand_usd_per_gpu_hour"]) for o in offers} >= {
        ("azure", 6.98), ("azure", 8.82), ("runpod", 3.19)}
    engine = load_engine()
    decision = engine.recommend(load_answers(AZURE_70B_QLORA, (), engine.catalog))
    choice = decision.hardware.choice
    assert choice is not None and (choice.offer, choice.count) == ("azure-h100-nvl-nc-v5", 1)
    assert choice.cost.per_year_usd < 2536
