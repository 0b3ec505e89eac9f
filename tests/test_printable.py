"""One escaping function for what reaches a terminal (engine/files/printable.py), and the
places that show data from a price file or a catalog through it: the "skipped" note, catalog
list and show, and the recommendation itself. Tests run as real processes, so that click's
own stripping of ANSI codes on a pipe does not hide a raw character."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.files.printable import csv_cell, json_printable, printable, printable_data

ROOT = Path(__file__).resolve().parent.parent
AWS_TEAM = ROOT / "examples" / "enterprise-aws.json"
HEADER = ("InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GPUInfo,Region,"
          "AvailabilityZone,Price,SpotPrice")
FORGED = "\x1b[2K\r ok: 37 record(s), chain intact"
IN_CSV = "\x1b[2K\x1b[1G ok: 37 record(s) chain intact"  # no comma: one CSV field
IN_CSV_SHOWN = "\\x1b[2K\\x1b[1G ok: 37 record(s) chain intact"
RAW = ("\x1b", "\r", "\x9b", "\x9d", "\u202e", "\u2028", "\u2066")


@pytest.mark.parametrize(("text", "shown"), [
    (FORGED, "\\x1b[2K\\r ok: 37 record(s), chain intact"),
    ("a\nb\tc", "a\\nb\\tc"),
    ("\x9b2J \x9d0;title\x07", "\\x9b2J \\x9d0;title\\x07"),         # C1 CSI, OSC, BEL
    ("\x1b]0;title\x1b\\", "\\x1b]0;title\\x1b\\"),                   # OSC set-title
    ("abc\u202edef\u2066x\u2069\u200f", "abc\\u202edef\\u2066x\\u2069\\u200f"),  # bidi
    ("line\u2028next\u2029", "line\\u2028next\\u2029"),
    ("lone \ud800 surrogate", "lone \\ud800 surrogate"),
    ("plain café – 1,000 ✓", "plain café – 1,000 ✓"),
])
def test_printable_escapes_what_a_terminal_acts_on(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_printable_data_escapes_keys_and_values() -> None:
    assert printable_data({"a\x1b": ["b\r", 1, None, {"c": "\u202e"}]}) == {
        "a\\x1b": ["b\\r", 1, None, {"c": "\\u202e"}]}


def test_json_printable_keeps_the_value() -> None:
    import json

    text = json.dumps({"id": "x\u202e\x9b\u2028", "n": [1, 2]}, ensure_ascii=False, indent=2)
    shown = json_printable(text)
    assert not any(char in shown for char in RAW)
    assert json.loads(shown) == json.loads(text)


@pytest.mark.parametrize(("value", "cell"), [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1", "'+1"), ("-2", "'-2"),
    ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "\\t=1"), (None, ""), (7, "7"), ("ok", "ok"),
])
def test_csv_cells_are_text_in_a_spreadsheet(value: object, cell: str) -> None:
    assert csv_cell(value) == cell


# -- the places that print data from a price file ----------------------------------------------
def _engine(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


@pytest.fixture
def hostile_csv(tmp_path: Path) -> Path:
    """A vms.csv whose unknown accelerator carries terminal sequences (no bare CR: the CSV
    reader refuses that itself) and whose instance type carries bidirectional controls (an
    instance type with ESC in it never becomes an offer)."""
    folder = tmp_path / "aws"
    folder.mkdir()
    path = folder / "vms.csv"
    rows = ["g6e.xlarge\u202e\u2066,4.0,32.0,L40S,1.0,,us-east-1,us-east-1a,0.30,0.12",
            f"x1.big,4.0,16.0,Evil{IN_CSV}\x9b2J,1.0,,us-east-1,us-east-1a,1.0,"]
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def _escaped(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    for stream in (done.stdout, done.stderr):
        assert not any(char in stream for char in RAW), repr(stream[:2000])


def test_the_skipped_note_is_escaped(hostile_csv: Path) -> None:
    done = _engine("recommend", "--no-audit", "--answers", str(AWS_TEAM), "--prices",
                   str(hostile_csv))
    _escaped(done)
    assert f"Evil{IN_CSV_SHOWN}\\x9b2J" in done.stderr


@pytest.mark.parametrize("args", [["catalog", "list", "clouds", "--provider", "aws"],
                                  ["catalog", "list", "clouds", "--format", "json"],
                                  ["recommend", "--no-audit", "--answers", str(AWS_TEAM)],
                                  ["recommend", "--no-audit", "--answers", str(AWS_TEAM),
                                   "--format", "markdown"],
                                  ["recommend", "--no-audit", "--answers", str(AWS_TEAM),
                                   "--format", "json"]])
def test_price_file_text_is_escaped_wherever_it_is_shown(hostile_csv: Path,
                                                         args: list[str]) -> None:
    _escaped(_engine(*args, "--prices", str(hostile_csv)))


def test_catalog_show_of_a_price_file_offer_is_escaped(hostile_csv: Path) -> None:
    listed = _engine("catalog", "list", "clouds", "--provider", "aws", "--format", "json",
                     "--prices", str(hostile_csv))
    import json

    [offer] = [o for o in json.loads(listed.stdout) if o["instance"].startswith("g6e")]
    assert offer["instance"] == "g6e.xlarge\u202e\u2066"  # the JSON keeps the value
    done = _engine("catalog", "show", offer["id"], "--prices", str(hostile_csv))
    _escaped(done)
    assert "g6e.xlarge\\u202e\\u2066" in done.stdout
