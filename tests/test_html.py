"""The HTML page of a decision, rendered in a real headless Chromium: it loads with no
console error and no network request, and its chart and table are visible. A screenshot of
each example is kept under a temporary folder (named in the test's output), never committed.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers.chromium import Page, chromium

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.suffix in (".yaml", ".json"))
SHOTS = Path(tempfile.gettempdir()) / "gpu-advisor-html-screenshots"
BINARY = chromium()
needs_chromium = pytest.mark.skipif(
    BINARY is None, reason="no Chromium on this machine (Debian: apt-get install chromium; "
                           ".ci/run installs it where it can)")


@functools.cache
def _rendered(example: Path) -> str:
    """The page ``recommend --format html`` prints for these answers, made once per test
    process (a page runs what-if: ~3 s of CPU each)."""
    done = subprocess.run([sys.executable, "-m", "engine", "recommend", "--answers",
                           str(example), "--no-audit", "--format", "html"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def page_of(example: Path, out: Path) -> Path:
    path = out / f"{example.stem}.html"
    path.write_text(_rendered(example), encoding="utf-8")
    return path


def test_the_page_is_self_contained(tmp_path: Path) -> None:
    text = page_of(ROOT / "examples" / "research-70b-intermittent.yaml", tmp_path).read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "<table>" in text
    for fetching in ("<script", "<link", "src=", "@import", "url("):
        assert fetching not in text, fetching
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert 'href="https://runpod.io/pricing"' in text  # the offer's page, for the reader


@needs_chromium
@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_each_example_renders_in_chromium(example: Path, tmp_path: Path) -> None:
    assert BINARY is not None
    path = page_of(example, tmp_path)
    SHOTS.mkdir(exist_ok=True)
    with Page(BINARY) as page:
        page.open(path)
        assert page.console_errors == []
        assert [u for u in page.requests if not u.startswith("file://")] == []
        title = page.evaluate("document.querySelector('h1').textContent")
        assert title.split(":")[0] in ("Buy", "Rent", "Keep using your", "Use a hosted API "
                                       "rather than training your own model", "Develop on")
        table = page.evaluate("(() => {const r = document.querySelector('table')"
                              ".getBoundingClientRect(); return [r.width, r.height];})()")
        assert table[0] > 300 and table[1] > 50
        rows = page.evaluate("document.querySelectorAll('tr.pick').length")
        assert rows == 1
        if "<svg" in path.read_text(encoding="utf-8"):
            chart = page.evaluate("(() => {const r = document.querySelector('figure svg')"
                                  ".getBoundingClientRect(); return [r.width, r.height];})()")
            assert chart[0] > 300 and chart[1] > 200
        page.screenshot(SHOTS / f"{example.stem}.png")
    assert (SHOTS / f"{example.stem}.png").stat().st_size > 10_000


@needs_chromium
@pytest.mark.slow
def test_a_refusal_page_lists_what_shut_out_the_configurations(tmp_path: Path) -> None:
    """Data that must stay in a country no offer is priced in, and no capital (scenario 48):
    the page says so, lists the excluding rules and the limits that alone keep some out, and
    has no pick."""
    import yaml

    scenario = ROOT / "tests" / "scenarios" / "48-country-no-offer-serves.yaml"
    answers = tmp_path / "answers.yaml"
    answers.write_text(yaml.safe_dump(yaml.safe_load(scenario.read_text())["answers"]))
    path = page_of(answers, tmp_path)
    assert BINARY is not None
    with Page(BINARY) as page:
        page.open(path)
        assert page.console_errors == []
        headings = page.evaluate("[...document.querySelectorAll('h2')].map(h => h.textContent)")
        assert "The job" in headings and "The pick in detail" not in headings
        assert "Hardware" in headings
        text = page.evaluate("document.body.innerText")
        assert "No configuration in the catalog can do this job" in text
        assert "by residency.region-excludes-offers, e.g.: Priced only in" in text
        assert "Kept out by one limit only:" in text
        assert page.evaluate("document.querySelectorAll('tr.pick').length") == 0
