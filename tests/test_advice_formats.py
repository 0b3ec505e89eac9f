"""``catalog show``, ``estimate cost|training|memory`` and ``rules schema --help``: numbers and
units one way (thousands grouped, GiB with one decimal, ranges with the unit once, $ without
cents from $100), words instead of bare dashes, 80 columns, no word broken."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import cli
from engine.output.table import fmt_count, fmt_gib, fmt_gib_range, fmt_usd

REPO = Path(__file__).parent.parent
GIB = re.compile(r"\b\d{1,3}(?:,\d{3})*\.\d GiB\b")


def out(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), prog_name="gpu-advisor")
    assert result.exit_code == 0, result.output
    return result.stdout


def fits(text: str) -> bool:
    """Every line within 80 columns, but a URL longer than a line alone on its line."""
    return all(len(line) <= 80 or re.fullmatch(r" +<\S+>", line) for line in text.splitlines())


def no_bare_dash(text: str) -> bool:
    return not any(cell == "—" for line in text.splitlines()
                   for cell in re.split(r"\s{2,}", line.strip()))


def test_formatters() -> None:
    assert fmt_gib(1139.04) == "1,139.0 GiB"
    assert fmt_gib_range(1059.3, 1218.66) == "1,059.3–1,218.7 GiB"
    assert (fmt_usd(1234.5), fmt_usd(100), fmt_usd(4.366)) == ("$1,234", "$100", "$4.37")
    assert (fmt_count(2048), fmt_count(0.44), fmt_count(12.6)) == ("2,048", "0.4", "13")


def test_estimate_cost_names_the_platform_and_keeps_hours_out_of_money() -> None:
    text = out("estimate", "cost", "--gpu", "rtx-4090", "--hours-per-year", "2000")
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[0] == "1× rtx-4090, 2,000 busy hours a year: owning vs renting"
    assert lines[1].split() == ["for", "your", "hours"]
    rows = {re.split(r"\s{2,}", line.strip())[0]: re.split(r"\s{2,}", line.strip())[-1]
            for line in lines[3:]}
    assert rows["purchase"] == "$4,480"
    assert rows["1× card at $2,500"] == "$2,500"
    assert rows["1× Desktop for 1-2 GeForce cards"] == "$1,980"
    assert rows["owning, all in"] == "$1,545 a year"
    assert rows["rented"] == "2,000 GPU-hours at $0.34"
    assert rows["break-even"] == "4,842 busy hours a year"
    assert fits(text) and no_bare_dash(text)


@pytest.mark.parametrize("gpu", ["a800-80gb", "rtx-4060"])
def test_estimate_cost_says_in_words_what_is_missing(gpu: str) -> None:
    text = out("estimate", "cost", "--gpu", gpu, "--gpus", "16", "--hours-per-year", "500")
    assert no_bare_dash(text), text
    assert "not for sale" in text and "no cloud offer" in text
    assert fits(text)


def test_estimate_training_one_number_format() -> None:
    text = out("estimate", "training", "--workload", "pretrain", "--model", "llama-2-7b",
               "--tokens-b", "2000",
               "--gpu", "a100-80gb", "--gpus", "64")
    lines = text.splitlines()
    assert lines[0] == ("llama-2-7b, pretrain, 2,000B tokens (as given), 8.09e+22 FLOPs on "
                        "64 × a100-80gb")
    assert lines[3].split() == ["GPU-hours", "147,797", "193,543", "232,252"]
    assert lines[5].split() == ["$", "per", "GPU-hour", "$1.39", "$2.70", "$5.07"]
    assert lines[6].split() == ["rental", "cost", "$225,981", "$600,952", "$1,412,687"]
    assert fits(text) and no_bare_dash(text)


def test_estimate_training_without_an_offer_says_so() -> None:
    text = out("estimate", "training", "--model", "llama-3.1-8b", "--gpu", "rtx-4060",
               "--method", "lora", "--tokens-b", "0.1")
    assert "No cloud offer rents rtx-4060: no rental cost." in " ".join(text.split())
    assert "cost" not in [line.split()[0] for line in text.splitlines() if line.split()]


def test_estimate_memory_gib_one_way() -> None:
    text = out("estimate", "memory", "--model", "llama-3.1-405b", "--method", "full")
    peak = next(line for line in text.splitlines() if line.startswith("peak per GPU"))
    assert peak == ("peak per GPU      6,065.0 GiB  at the optimizer step; range "
                    "5,640.5–6,489.6 GiB")
    assert "master weights    1,512.1 GiB" in text
    assert "_" not in text.split("GPUs needed")[0]       # component names in words
    sizes = re.findall(r"\d[\d,.]* GiB", text.split("GPUs needed")[0])
    assert sizes and all(GIB.fullmatch(s) for s in sizes), sizes
    assert "too small" in text and fits(text) and no_bare_dash(text)


def test_catalog_show_numbers_one_way() -> None:
    model = out("catalog", "show", "llama-3.1-8b")
    rows = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in model.splitlines()
                if re.match(r"[a-z][a-z0-9 ]*\s{2,}\S", line))
    assert (rows["hidden"], rows["intermediate"], rows["vocab"]) == ("4,096", "14,336",
                                                                      "128,256")
    assert rows["params"] == "8.03 billion"
    gpu = out("catalog", "show", "rtx-4090")
    assert re.search(r"^release year +2022$", gpu, re.M)
    platform = out("catalog", "show", "workstation-4")
    assert re.search(r"^power draw +400 W$", platform, re.M)
    for text in (model, gpu, platform, out("catalog", "show", "aws")):
        assert fits(text) and no_bare_dash(text)


def test_catalog_citations_wrap_between_words() -> None:
    text = out("catalog", "show", "llama-3.1-8b")
    tail = text[text.index("  [meta-llama31-card]"):].splitlines()
    assert tail[:3] == [
        "  [meta-llama31-card] Llama 3.1 model cards and config.json (8B, 70B, 405B)",
        "    (Meta / Hugging Face, 2024-07)",
        "    <https://huggingface.co/meta-llama/Llama-3.1-8B>"]


def test_catalog_lists_use_words_for_missing_values() -> None:
    gpus = out("catalog", "list", "gpus")
    assert re.search(r"^t4 .* none .*$", gpus, re.M)           # no bf16
    assert re.search(r"^mi325x .* not sold$", gpus, re.M)
    clouds = out("catalog", "list", "clouds")
    assert no_bare_dash(gpus) and no_bare_dash(clouds) and fits(gpus) and fits(clouds)


def test_rules_schema_usage_breaks_no_word() -> None:
    text = out("rules", "schema", "--help")
    assert text.splitlines()[0] == "Usage: gpu-advisor rules schema [OPTIONS] [NAME]"
    assert "NAME is one of: rules, decisions, sources, gpus, platforms, clouds, regions," \
        in text
    assert fits(text)


@pytest.mark.slow
def test_estimate_cost_as_a_subprocess() -> None:
    done = subprocess.run([sys.executable, "-m", "engine", "estimate", "cost", "--gpu",
                           "rtx-4090", "--hours-per-year", "2000"], cwd=REPO,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "  1× Desktop for 1-2 GeForce cards" in done.stdout
    assert fits(done.stdout) and no_bare_dash(done.stdout)
