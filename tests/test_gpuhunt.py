"""Prices in the layout of dstack's gpuhunt catalog: read as a buyer's fresh prices, said in
the output, kept in the record, and refused in one located line when a row is malformed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.catalog.load import load_catalog
from engine.catalog.prices import read_prices
from engine.errors import CatalogError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "gpuhunt"
TEAM = ("model: llama-3.1-8b\nmethod: lora\ntraining_tokens_b: 0.2\nruns_per_year: 12\n"
        "usage_pattern: intermittent\nbudget_usd: 20000\nupfront_capex: false\n")
HEADER = ("instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,"
          "disk_size,gpu_vendor,flags\n")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, timeout=300, check=False, cwd=cwd)


@pytest.fixture
def team(tmp_path: Path) -> Path:
    path = tmp_path / "team.yaml"
    path.write_text(TEAM, encoding="utf-8")
    return path


def test_a_cheap_row_moves_the_pick_and_the_output_names_the_file(team: Path,
                                                                  tmp_path: Path) -> None:
    before = run("recommend", "--answers", str(team), "--no-audit", "--format", "json",
                 cwd=tmp_path)
    after = run("recommend", "--answers", str(team), "--no-audit", "--prices",
                str(FIXTURES / "runpod.csv"), cwd=tmp_path)
    assert before.returncode == after.returncode == 0, after.stderr
    old = json.loads(before.stdout)["hardware"]["choice"]
    assert old["offer"] != "runpod-nvidia-h100-80gb-hbm3-us"
    lines = after.stdout.splitlines()
    assert lines[0].startswith("Rent: 1× H100 PCIe on a specialised GPU cloud (RunPod")
    text = " ".join(after.stdout.split())
    assert ("prices: 5 runpod offers from runpod.csv (dated 2026-11-30, by the gpuhunt "
            "catalog version) replaced 8 catalog offers; 1 row skipped") in text
    assert "A40 ×1" in after.stderr  # the row no catalog GPU is


def test_the_record_keeps_the_file_and_replays_without_it(team: Path, tmp_path: Path) -> None:
    copy = tmp_path / "prices"
    shutil.copytree(FIXTURES, copy)
    db = tmp_path / "audit.sqlite3"
    made = run("recommend", "--answers", str(team), "--audit-db", str(db), "--format", "json",
               "--prices", str(copy / "runpod.csv"), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    prices = json.loads(made.stdout)["catalog"]["prices"]
    text = (FIXTURES / "runpod.csv").read_text(encoding="utf-8")
    import hashlib

    assert prices == [{"file": "runpod.csv", "layout": "gpuhunt", "provider": "runpod",
                       "as_of": "2026-11-30", "dated_by": "the gpuhunt catalog version",
                       "sha256": hashlib.sha256(text.encode()).hexdigest(), "offers": 5,
                       "replaced": 8, "added": 0, "skipped_rows": 1}]
    shutil.rmtree(copy)
    record = json.loads(made.stdout)["decision_id"]
    replay = run("audit", "replay", record, "--audit-db", str(db), cwd=tmp_path)
    assert replay.returncode == 0 and "identical" in replay.stdout, replay.stdout


@pytest.mark.parametrize(("row", "where"), [
    ("x,us-ks-2,abc,16,125,1,H100,80.0,False,,nvidia,", "3: price: expected a number, got "
                                                          "'abc'"),
    ("x,us-ks-2,1.0,16,125,1,H100,80.0,maybe,,nvidia,", "3: spot: expected True or False, "
                                                          "got 'maybe'"),
    ("x,us-ks-2,1.0,16,125,two,H100,80.0,False,,nvidia,", "3: gpu_count: expected a number, "
                                                            "got 'two'"),
    ("x,us-ks-2,900,16,125,1,H100,80.0,False,,nvidia,", "3: price: $900 per GPU-hour"),
])
def test_a_malformed_row_is_one_located_line(team: Path, tmp_path: Path, row: str,
                                             where: str) -> None:
    path = tmp_path / "runpod.csv"
    path.write_text(HEADER + "ok,us-ks-2,0.5,16,125,1,H100,80.0,False,,nvidia,\n" + row + "\n",
                    encoding="utf-8")
    done = run("recommend", "--answers", str(team), "--no-audit", "--prices", str(path),
               "--prices-date", "2026-11-30", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"error: {path}:{where}"), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_the_provider_comes_from_the_file_name_or_is_named(tmp_path: Path) -> None:
    odd = tmp_path / "mystery.csv"
    odd.write_text(HEADER + "i1,us-east-1,2.0,8,64,1,H100,80.0,False,,nvidia,\n",
                   encoding="utf-8")
    with pytest.raises(CatalogError, match="'mystery' \\(the file's name\\) is not one"):
        load_catalog(prices=read_prices(odd, date=None))
    named = load_catalog(prices=read_prices(Path(f"lambda={odd}")))
    assert [c.provider for c in named.price_changes] == ["lambda"]


def test_the_date_is_the_flag_else_the_catalog_version(tmp_path: Path) -> None:
    import datetime as dt

    shutil.copy(FIXTURES / "runpod.csv", tmp_path / "runpod.csv")
    by_mtime = read_prices(tmp_path / "runpod.csv")
    assert by_mtime.dated_by == "the file's modification time"
    (tmp_path / "version").write_text("20261115-3\n", encoding="utf-8")
    assert read_prices(tmp_path / "runpod.csv").as_of == dt.date(2026, 11, 15)
    flagged = read_prices(tmp_path / "runpod.csv", date=dt.date(2026, 12, 1))
    assert (flagged.as_of, flagged.dated_by) == (dt.date(2026, 12, 1), "--prices-date")
    (tmp_path / "version").write_text("latest\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="expected a gpuhunt catalog version"):
        read_prices(tmp_path / "runpod.csv")


def test_the_layout_is_named_or_told_by_the_header(tmp_path: Path) -> None:
    path = tmp_path / "runpod.txt"
    shutil.copy(FIXTURES / "runpod.csv", path)
    assert read_prices(Path(f"gpuhunt:{path}")).layout == "gpuhunt"
    assert read_prices(FIXTURES / "runpod.csv").layout == "gpuhunt"


def test_spot_rows_join_their_instance_and_spot_only_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "runpod.csv"
    path.write_text(HEADER
                    + "a,us-ks-2,2.0,8,64,1,H100,80.0,False,,nvidia,\n"
                    + "a,us-ks-2,0.9,8,64,1,H100,80.0,True,,nvidia,\n"
                    + "b,us-ks-2,0.7,8,64,1,RTX4090,24.0,True,,nvidia,\n", encoding="utf-8")
    catalog = load_catalog(prices=read_prices(path, date=None))
    offer = next(o for o in catalog.offers if o.provider == "runpod")
    assert (offer.on_demand_usd_per_gpu_hour, offer.spot_usd_per_gpu_hour) == (2.0, 0.9)
    assert catalog.price_changes[0].skipped_rows == 1
    assert any("RTX4090 (spot only) ×1" in n for n in catalog.notices)
