"""``--prices vms.csv``: fresh prices in the layout of SkyPilot's public catalog files.

The fixture follows the published column layout of ``catalogs/v8/aws/vms.csv`` (InstanceType,
vCPUs, MemoryGiB, AcceleratorName, AcceleratorCount, GPUInfo, Region, AvailabilityZone, Price,
SpotPrice); prices are per instance-hour, several zones per region.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.catalog.load import load_catalog
from engine.cli import cli
from engine.errors import CatalogError

ROOT = Path(__file__).resolve().parent.parent
AWS_TEAM = ROOT / "examples" / "enterprise-aws.json"
HEADER = ("InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GPUInfo,Region,"
          "AvailabilityZone,Price,SpotPrice")
ROWS = [
    'p5.48xlarge,192.0,2048.0,H100,8.0,"{\'Gpus\': [{\'Name\': \'H100\', \'Count\': 8}]}",'
    "us-east-1,us-east-1a,55.04,20.79",
    "p5.48xlarge,192.0,2048.0,H100,8.0,,us-east-1,us-east-1b,54.0,21.0",
    "p5.48xlarge,192.0,2048.0,H100,8.0,,eu-north-1,eu-north-1a,58.89,",
    "g6e.xlarge,4.0,32.0,L40S,1.0,,us-east-1,us-east-1a,0.30,0.12",
    "g5.xlarge,4.0,16.0,A10G,1.0,,us-east-1,us-east-1a,1.006,0.40",
    "m5.large,2.0,8.0,,,,us-east-1,us-east-1a,0.096,0.04",
    "inf2.xlarge,4.0,16.0,Inferentia2,1.0,,us-east-1,us-east-1a,0.76,",
    "trn1.2xlarge,8.0,32.0,Trainium,1.0,,us-east-1,us-east-1a,1.34,",
    "trn1.32xlarge,128.0,512.0,Trainium,16.0,,us-east-1,us-east-1a,21.5,",
]


def write_csv(folder: Path, rows: list[str], name: str = "vms.csv") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def aws_csv(tmp_path: Path) -> Path:
    return write_csv(tmp_path / "aws", ROWS)


def recommend(runner: CliRunner, *args: str) -> tuple[dict[str, Any], str]:
    result = runner.invoke(cli, ["recommend", "--no-audit", "--format", "json",
                                 "--answers", str(AWS_TEAM), *args])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def test_the_provider_s_offers_are_replaced_per_instance_and_region(aws_csv: Path) -> None:
    catalog = load_catalog(prices=aws_csv)
    aws = {o.id: o for o in catalog.offers if o.provider == "aws"}
    assert set(aws) == {"aws-p5.48xlarge-us", "aws-p5.48xlarge-eu", "aws-g6e.xlarge-us",
                        "aws-g5.xlarge-us"}
    p5 = aws["aws-p5.48xlarge-us"]
    # the cheaper zone of the region, per GPU, with that zone's spot price
    assert (p5.gpu, p5.shapes) == ("h100-sxm", (8,))
    assert p5.on_demand_usd_per_gpu_hour == pytest.approx(54.0 / 8)
    assert p5.spot_usd_per_gpu_hour == pytest.approx(21.0 / 8)
    # what the price file cannot say is kept from the catalog's offer of that instance type
    assert p5.multi_node is True and p5.network == "efa"
    assert aws["aws-p5.48xlarge-eu"].spot_usd_per_gpu_hour is None
    assert aws["aws-g6e.xlarge-us"].gpu == "l40s"
    # other providers are untouched
    assert any(o.id == "lambda-h100" for o in catalog.offers)
    assert catalog.sources["prices-aws"].kind == "price-list"


def test_skipped_rows_are_one_summed_warning(aws_csv: Path) -> None:
    catalog = load_catalog(prices=aws_csv)
    assert catalog.notices == (f"{aws_csv}: skipped 3 row(s) the catalog has no GPU or region "
                               "for: Trainium ×2, Inferentia2 ×1",)


@pytest.mark.slow
def test_a_new_price_moves_the_pick(runner: CliRunner, aws_csv: Path) -> None:
    before, _ = recommend(runner)
    assert before["hardware"]["choice"]["offer"] == "aws-l40s-g6e"
    after, stderr = recommend(runner, "--prices", str(aws_csv))
    choice = after["hardware"]["choice"]
    assert (choice["gpu"], choice["offer"]) == ("l40s", "aws-g6e.xlarge-us")
    assert choice["cost"]["per_year_usd"] < before["hardware"]["choice"]["cost"]["per_year_usd"]
    assert choice["usd_per_gpu_hour"] == pytest.approx(0.12)
    assert stderr.splitlines() == [f"note: {aws_csv}: skipped 3 row(s) the catalog has no GPU "
                                   "or region for: Trainium ×2, Inferentia2 ×1"]


@pytest.mark.slow
def test_provider_named_on_the_command_line(runner: CliRunner, tmp_path: Path) -> None:
    path = write_csv(tmp_path / "downloads", ROWS[:4], name="prices.csv")
    result = runner.invoke(cli, ["catalog", "list", "clouds", "--provider", "aws",
                                 "--format", "json", "--prices", f"aws={path}"])
    assert result.exit_code == 0, result.stderr
    assert {o["id"] for o in json.loads(result.stdout)} == {
        "aws-p5.48xlarge-us", "aws-p5.48xlarge-eu", "aws-g6e.xlarge-us"}
    unnamed = runner.invoke(cli, ["catalog", "list", "clouds", "--prices", str(path)])
    assert unnamed.exit_code == 2
    assert unnamed.stderr.strip().splitlines() == [
        f"error: {path}: which provider are these prices for? 'downloads' (the file's "
        "folder) is not one; name it: --prices PROVIDER=FILE"]


@pytest.mark.slow
@pytest.mark.parametrize(("row", "message"), [
    ("g6e.xlarge,4.0,32.0,L40S,1.0,,us-east-1,us-east-1a,n/a,0.12",
     "Price: expected a number, got 'n/a'"),
    ("g6e.xlarge,4.0,32.0,L40S,one,,us-east-1,us-east-1a,0.30,0.12",
     "AcceleratorCount: expected a number, got 'one'"),
    ("g6e.xlarge,4.0,32.0,L40S,1.0,,us-east-1,us-east-1a,0.30,nan",
     "SpotPrice: expected a finite price or count, got 'nan'"),
])
def test_a_malformed_row_is_one_line_naming_the_row(tmp_path: Path, row: str,
                                                    message: str) -> None:
    path = write_csv(tmp_path / "aws", [*ROWS[:3], row, *ROWS[3:]])
    done = subprocess.run(
        [sys.executable, "-m", "engine", "recommend", "--no-audit", "--answers", str(AWS_TEAM),
         "--prices", str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT,
        check=False)
    assert (done.returncode, done.stdout) == (2, "")
    # the header is row 1: the fourth data row is line 5
    assert done.stderr.splitlines() == [f"error: {path}:5: {message}"]


def test_a_file_without_the_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    path.write_text("instance,price\np5.48xlarge,55.04\n", encoding="utf-8")
    with pytest.raises(CatalogError) as refused:
        load_catalog(prices=path)
    assert ("not a SkyPilot vms.csv: no InstanceType, AcceleratorName, AcceleratorCount, Price, "
            "Region column") in str(refused.value)


@pytest.mark.slow
def test_old_prices_are_said_once(runner: CliRunner, aws_csv: Path) -> None:
    two_years = 2 * 365 * 24 * 3600
    stamp = aws_csv.stat().st_mtime - two_years
    os.utime(aws_csv, (stamp, stamp))
    _, stderr = recommend(runner, "--prices", str(aws_csv))
    stale = [line for line in stderr.splitlines() if "older than" in line]
    assert len(stale) == 1
    assert "aws-" in stale[0] and "give fresh ones with --prices" in stale[0]
