"""A price file is part of the policy: its text, layout, provider and date are hashed, cached
and recorded; a SkyPilot CSV is bounded (rows, offers) and checked for plausible prices and
counts (bounds in catalog/policy.yaml), and two rows never collide into one offer id.

Bounded cost is shown by counting work (the row a refusal names), never by timing it: the
time is measured in benchmarks/csv_prices.py.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.catalog.load import load_catalog
from engine.catalog.prices import PriceInput, read_prices
from engine.cli import cli
from engine.decide.engine import load_engine
from engine.errors import CatalogError

ROOT = Path(__file__).resolve().parent.parent
AWS_TEAM = ROOT / "examples" / "enterprise-aws.json"
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice"
ROWS = ["p5.48xlarge,H100,8,us-east-1,55.04,20.79", "g6e.xlarge,L40S,1,us-east-1,1.86,0.70"]


def write_csv(path: Path, rows: list[str], *, bom: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(("\ufeff" if bom else "") + "\n".join([HEADER, *rows]) + "\n",
                    encoding="utf-8")
    return path


def refusal(path: Path, rows: list[str], catalog: Path | None = None) -> str:
    write_csv(path, rows)
    with pytest.raises(CatalogError) as caught:
        load_catalog(catalog, prices=Path(f"aws={path}"))
    return str(caught.value)


# ------------------------------------------------------------------ in the hash and the record
def test_the_same_bytes_for_two_providers_are_two_policies(tmp_path: Path) -> None:
    """Before: one catalog hash for aws=x.csv and lambda=x.csv, whose picks differ."""
    path = write_csv(tmp_path / "x.csv", ROWS)
    aws = load_catalog(prices=Path(f"aws={path}"))
    lam = load_catalog(prices=Path(f"lambda={path}"))
    assert aws.hash != lam.hash
    assert {o.provider for o in aws.offers if o.id.endswith("-us") and "p5" in o.id} == {"aws"}


def test_the_date_is_in_the_hash_and_the_cache_key(tmp_path: Path) -> None:
    """A CSV dated by its modification time: touching it changes the date, the catalog
    hash and the cached policy (before: the cache kept the old date, and the hash ignored
    it); --prices-date dates it explicitly, and says so."""
    path = write_csv(tmp_path / "aws" / "vms.csv", ROWS)
    os.utime(path, (dt.datetime(2026, 1, 5).timestamp(),) * 2)
    first = load_engine(prices=path).catalog
    os.utime(path, (dt.datetime(2026, 3, 9).timestamp(),) * 2)
    touched = load_engine(prices=path).catalog
    assert {o.as_of for o in first.offers if o.provider == "aws"} == {dt.date(2026, 1, 5)}
    assert {o.as_of for o in touched.offers if o.provider == "aws"} == {dt.date(2026, 3, 9)}
    assert first.hash != touched.hash
    dated = load_engine(prices=read_prices(path, date=dt.date(2026, 2, 1))).catalog
    assert {o.as_of for o in dated.offers if o.provider == "aws"} == {dt.date(2026, 2, 1)}
    assert dated.sources["prices-aws"].note == (
        "Offers read from a SkyPilot vms.csv; dated by --prices-date.")
    assert len({first.hash, touched.hash, dated.hash}) == 3


def test_a_price_file_is_rebuilt_from_the_texts_it_left(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "aws" / "vms.csv", ROWS)
    read = read_prices(path, date=dt.date(2026, 2, 1))
    catalog = load_catalog(prices=read)
    again = PriceInput.from_texts(catalog.texts)
    assert again is not None
    assert (again.text, again.provider, again.as_of, again.dated_by, again.name) == (
        read.text, "aws", dt.date(2026, 2, 1), "--prices-date", "vms.csv")
    assert load_catalog(prices=again).hash == catalog.hash


def test_a_csv_stored_before_its_provider_was_is_refused_in_one_line() -> None:
    with pytest.raises(CatalogError, match="stored before its provider and date were"):
        PriceInput.from_texts({"prices": f"{HEADER}\n{ROWS[0]}\n"})


@pytest.mark.parametrize(("args", "message"), [
    (["--prices-date", "2026-02-01"], "--prices-date dates a --prices file; give one"),
    (["--prices", "QUOTES", "--prices-date", "2026-02-01"],
     "QUOTES: --prices-date is for a price CSV (SkyPilot or gpuhunt); a YAML quotes file "
     "names each offer's provider and date (as_of)"),
])
def test_a_date_without_a_csv_is_refused(runner: CliRunner, tmp_path: Path, args: list[str],
                                         message: str) -> None:
    quotes = tmp_path / "quotes.yaml"
    quotes.write_text("offers: []\n", encoding="utf-8")
    args = [str(quotes) if a == "QUOTES" else a for a in args]
    result = runner.invoke(cli, ["catalog", "list", "clouds", *args])
    assert result.exit_code == 2 and result.stdout == ""
    assert message.replace("QUOTES", str(quotes)) in result.stderr
    assert result.stderr.count("\n") == 1


# ------------------------------------------------------------------ bounded
def _policy_with(catalog_copy: Path, name: str, value: int) -> Path:
    policy = catalog_copy / "policy.yaml"
    text = policy.read_text(encoding="utf-8")
    start = text.index(f"  {name}:\n    value: ") + len(f"  {name}:\n    value: ")
    end = text.index("\n", start)
    policy.write_text(text[:start] + str(value) + text[end:], encoding="utf-8")
    return catalog_copy


def test_rows_past_the_policy_s_cap_are_refused_at_the_row(tmp_path: Path,
                                                          catalog_copy: Path) -> None:
    catalog = _policy_with(catalog_copy, "price_file_rows_max", 5)
    rows = [f"m{i}.large,,,us-east-1,0.1," for i in range(6)]  # CPU-only: cheap rows
    assert refusal(tmp_path / "x.csv", rows, catalog) == (
        f"{tmp_path / 'x.csv'}:7: more than 5 rows (price_file_rows_max in "
        "catalog/policy.yaml)")


def test_the_bundled_offer_cap_stops_a_2_mb_file_at_its_row(tmp_path: Path) -> None:
    """43,500 instance types (2 MB): refused at the 1,001st offer, which is line 1,002 —
    before: every row became an offer (38 s, 641 MB a recommend)."""
    rows = [f"x{i}.xl,L40S,1,us-east-1,1.86,0.70" for i in range(43_500)]
    assert refusal(tmp_path / "x.csv", rows) == (
        f"{tmp_path / 'x.csv'}:1002: InstanceType: more than 1,000 offers (instance types × "
        "regions; price_file_offers_max in catalog/policy.yaml)")


def test_offers_within_the_cap_are_read(tmp_path: Path) -> None:
    rows = [f"x{i}.xl,L40S,1,us-east-1,1.86,0.70" for i in range(1000)]
    write_csv(tmp_path / "x.csv", rows)
    catalog = load_catalog(prices=Path(f"aws={tmp_path / 'x.csv'}"))
    assert sum(o.provider == "aws" for o in catalog.offers) == 1000


# ------------------------------------------------------------------ plausible
@pytest.mark.parametrize(("row", "message"), [
    ("cheap.xl,L40S,1,us-east-1,0.0001,", ":2: Price: $0.0001 per GPU-hour (0.0001 for 1 "
     "GPU) is not a plausible price: expected $0.01 to $100 (price_per_gpu_hour_min_usd in "
     "catalog/policy.yaml)"),
    ("tiny.xl,H100,8,us-east-1,0.0000004,", ":2: Price: $5e-08 per GPU-hour (4e-07 for 8 "
     "GPUs) is not a plausible price: expected $0.01 to $100 (price_per_gpu_hour_min_usd in "
     "catalog/policy.yaml)"),
    ("dear.xl,L40S,1,us-east-1,250,", ":2: Price: $250 per GPU-hour (250 for 1 GPU) is not a "
     "plausible price: expected $0.01 to $100 (price_per_gpu_hour_max_usd in "
     "catalog/policy.yaml)"),
    ("spot.xl,L40S,1,us-east-1,1.86,0.0001", ":2: SpotPrice: $0.0001 per GPU-hour (0.0001 "
     "for 1 GPU) is not a plausible price"),
    ("huge.xl,H100,1000000,us-east-1,55.04,", ":2: AcceleratorCount: expected a whole number "
     "of GPUs from 1 to 16 per instance (gpus_per_instance_max in catalog/policy.yaml), got "
     "1e+06"),
    ("half.xl,H100,1.5,us-east-1,55.04,", ":2: AcceleratorCount: expected a whole number of "
     "GPUs from 1 to 16 per instance (gpus_per_instance_max in catalog/policy.yaml), got 1.5"),
])
def test_an_implausible_row_is_refused_naming_line_and_column(tmp_path: Path, row: str,
                                                             message: str) -> None:
    """Before: $0.0001/h gave "~$0 a year", 1,000,000 GPUs an instance, a count of 1.5 was
    priced 33 % low, and a price that rounds to 0 per GPU was a ValidationError traceback."""
    assert refusal(tmp_path / "x.csv", [row]).startswith(f"{tmp_path / 'x.csv'}{message}")


def test_a_fraction_of_a_gpu_is_skipped_and_said(tmp_path: Path) -> None:
    write_csv(tmp_path / "x.csv", [*ROWS, "nv6.xl,A10G,0.167,us-east-1,0.45,"])
    catalog = load_catalog(prices=Path(f"aws={tmp_path / 'x.csv'}"))
    assert "A10G (a fraction of a GPU) ×1" in catalog.notices[0]


@pytest.mark.parametrize(("second", "how"), [
    ("P5.48xlarge,H100,8,us-east-1,40.00,", "only by case"),
    ("p5.48xlarge*,H100,8,us-east-1,40.00,", "only in characters an offer id drops"),
])
def test_two_instance_types_never_share_an_offer_id(tmp_path: Path, second: str,
                                                    how: str) -> None:
    """Before: one offer id for both, and the pick showed one row's instance with the other's
    price."""
    line = refusal(tmp_path / "x.csv", [ROWS[0], second])
    name = second.split(",")[0]
    assert line == (f"{tmp_path / 'x.csv'}:3: InstanceType: '{name}' differs from "
                    f"'p5.48xlarge' (line 2) {how}: both would be offer aws-p5.48xlarge-us; "
                    "rename one")


def test_a_csv_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    """Before: "not a SkyPilot vms.csv: no InstanceType column"."""
    write_csv(tmp_path / "aws" / "vms.csv", ROWS, bom=True)
    catalog = load_catalog(prices=tmp_path / "aws" / "vms.csv")
    assert {o.instance for o in catalog.offers if o.provider == "aws"} == {
        "p5.48xlarge", "g6e.xlarge"}
