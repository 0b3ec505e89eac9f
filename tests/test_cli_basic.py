"""The command line through click's runner, plus one real ``python -m engine`` process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engine import __version__
from engine.catalog.load import Catalog
from engine.cli import cli


def run(runner: CliRunner, *args: str) -> Result:
    result = runner.invoke(cli, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def ok_json(runner: CliRunner, *args: str) -> Any:
    result = run(runner, *args, "--format", "json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return json.loads(result.stdout)


def one_error_line(result: Result) -> str:
    """The single ``error:`` line of a refused command (exit 2, nothing on stdout)."""
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_version(runner: CliRunner) -> None:
    result = run(runner, "--version")
    assert result.exit_code == 0
    assert result.stdout == f"gpu-advisor, version {__version__}\n"


# ------------------------------------------------------------------ estimate memory


@pytest.mark.slow
def test_estimate_memory_json(runner: CliRunner, catalog: Catalog) -> None:
    data = ok_json(runner, "estimate", "memory", "--model", "llama-2-7b", "--method", "full")
    assert data["model"] == "llama-2-7b" and data["method"] == "full"
    assert data["binding_phase"] == "optimizer_step"
    assert sum(data["breakdown"].values()) == pytest.approx(data["total_gib"], abs=0.05)
    # 16 bytes/param (ZeRO) + two fp32 copies of the embedding in the step, in GiB, + 1 GiB
    states = 16 * 6.74e9 / 2**30
    temporaries = 2 * 32000 * 4096 * 4 / 2**30
    assert data["total_gib"] == pytest.approx(states + temporaries + 1.0, abs=0.05)
    assert data["range_gib"]["low"] < data["total_gib"] < data["range_gib"]["high"]
    assert set(data["fits"]) == set(catalog.gpus)
    assert data["fits"]["rtx-4090"] > 1
    assert data["fits"]["h200"] == 1
    assert all(set(c) >= {"value", "unit", "formula", "sources"}
               for c in data["components"].values())


def test_estimate_memory_params_b_qlora(runner: CliRunner) -> None:
    data = ok_json(runner, "estimate", "memory", "--params-b", "13", "--method", "qlora")
    assert data["params_b"] == 13
    assert data["method"] == "qlora"
    assert 6 < data["total_gib"] < 16  # mem.qlora-13b: ~9 GB; fits a 16 GB card
    assert data["fits"]["rtx-4060-ti-16gb"] == 1


@pytest.mark.slow
def test_estimate_memory_sharded_json(runner: CliRunner) -> None:
    one = ok_json(runner, "estimate", "memory", "--model", "llama-2-13b", "--method", "full")
    four = ok_json(runner, "estimate", "memory", "--model", "llama-2-13b", "--method", "full",
                   "--gpus", "4")
    assert four["gpus"] == 4
    assert four["total_gib"] < one["total_gib"] / 2
    assert "ZeRO-3" in four["formula"]


def test_estimate_memory_text_has_tables(runner: CliRunner) -> None:
    result = run(runner, "estimate", "memory", "--model", "llama-2-7b", "--method", "lora")
    assert result.exit_code == 0
    out = result.stdout
    assert "llama-2-7b, lora, sequence 2,048 tokens × micro-batch 1" in out
    for header in ("component", "per GPU", "formula", "peak per GPU", "GPUs needed",
                   "rtx-4090", "h100-sxm"):
        assert header in out
    assert "weights" in out and "activations" in out


# ------------------------------------------------------------------ estimate training


@pytest.mark.slow
def test_estimate_training_json(runner: CliRunner) -> None:
    data = ok_json(runner, "estimate", "training", "--workload", "pretrain", "--model",
                   "llama-2-7b", "--tokens-b", "2000", "--gpu", "a100-80gb")
    assert data["tokens_b"] == 2000 and data["tokens_from"] == "answer"
    assert data["flops"] == pytest.approx(6 * 6.74e9 * 2e12, rel=1e-3)
    hours = data["gpu_hours"]
    assert hours["low"] <= hours["expected"] <= hours["high"]
    assert 184_320 / 1.5 < hours["expected"] < 184_320 * 1.5  # Llama 2 paper, Table 2
    assert data["days"]["expected"] == pytest.approx(hours["expected"] / 24, abs=0.01)
    cost = data["cost_usd"]
    assert cost["low"] <= cost["expected"] <= cost["high"]
    assert cost["expected"] > hours["expected"]  # A100-80GB rents above $1/h everywhere


def test_estimate_training_text(runner: CliRunner) -> None:
    result = run(runner, "estimate", "training", "--workload", "pretrain", "--params-b", "1",
                 "--gpu", "rtx-4090")
    assert result.exit_code == 0
    assert "20B tokens (20 per parameter)" in result.stdout
    assert "GPU-hours" in result.stdout and "days" in result.stdout


def test_estimate_training_defaults_as_recommend_does(runner: CliRunner) -> None:
    """A fine-tune by default (as recommend), its method picked on the GPUs given: full
    where it fits, else LoRA, else QLoRA; the amount of work asked for, never assumed."""
    def method(*args: str) -> str:
        return str(ok_json(runner, "estimate", "training", "--model", "llama-3.1-8b",
                           "--tokens-b", "0.15", *args)["method"])

    assert method("--gpu", "h100-sxm") == "lora"
    assert method("--gpu", "h100-sxm", "--gpus", "2") == "full"
    assert method("--gpu", "rtx-4060") == "qlora"
    assert method("--gpu", "h100-sxm", "--method", "qlora") == "qlora"
    assert method("--gpu", "h100-sxm", "--workload", "pretrain") == "pretrain"
    text = run(runner, "estimate", "training", "--model", "llama-3.1-8b", "--tokens-b", "0.15",
               "--gpu", "h100-sxm").stdout
    assert "Method auto: LoRA, as full fine-tuning needs 2 × h100-sxm" in " ".join(text.split())
    line = one_error_line(run(runner, "estimate", "training", "--model", "llama-3.1-8b",
                              "--gpu", "h100-sxm"))
    assert line.startswith("error: --tokens-b: a fine-tune needs its amount of work")
    line = one_error_line(run(runner, "estimate", "training", "--model", "llama-3.1-8b",
                              "--gpu", "h100-sxm", "--workload", "pretrain", "--method", "lora"))
    assert line.startswith("error: --method: a pretrain trains every weight from scratch")


# ------------------------------------------------------------------ catalog


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "sample", "in_text"),
    [("gpus", "rtx-4090", "rtx-4090"), ("clouds", "lambda-h100", "Cloud offers ("),
     ("models", "llama-2-7b", "llama-2-7b")],
)
def test_catalog_list(runner: CliRunner, catalog: Catalog, kind: str, sample: str,
                      in_text: str) -> None:
    text = run(runner, "catalog", "list", kind)
    assert text.exit_code == 0
    assert in_text in text.stdout
    data = ok_json(runner, "catalog", "list", kind)
    assert sample in [item["id"] for item in data]
    expected = {"gpus": len(catalog.gpus), "clouds": len(catalog.offers),
                "models": len(catalog.models)}[kind]
    assert len(data) == expected


@pytest.mark.slow
def test_catalog_show_lists_sources(runner: CliRunner, catalog: Catalog) -> None:
    result = run(runner, "catalog", "show", "rtx-4090")
    assert result.exit_code == 0
    joined = " ".join(result.stdout.split())  # citations wrap at 80 columns
    for sid in catalog.gpu("rtx-4090").sources:
        assert f"[{sid}] {catalog.sources[sid].title}" in joined
    data = ok_json(runner, "catalog", "show", "rtx-4090")
    assert data["vram_gb"] == 24 and data["sources"] == list(catalog.gpu("rtx-4090").sources)


@pytest.mark.slow
def test_catalog_show_prints_units_and_formatted_numbers(runner: CliRunner) -> None:
    lines = run(runner, "catalog", "show", "rtx-4090").stdout.splitlines()
    rows = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in lines
                if re.match(r"[a-z][a-z0-9 ]*\s{2,}\S", line))
    assert rows["vram"] == "24 GiB"
    assert rows["bandwidth"] == "1,008 GB/s"
    assert rows["dense bf16"] == "165.2 TFLOPS"
    assert rows["tdp"] == "450 W"
    assert rows["nvlink"] == "no" and rows["ecc"] == "yes"
    assert rows["purchase"].startswith("$2,200–2,800 (new; as of 2026-")
    offer = run(runner, "catalog", "show", "aws-h100-p5").stdout
    assert re.search(r"^on demand +\$6\.88/GPU-hour$", offer, re.M)
    assert "True" not in offer and "False" not in offer
    # every line fits 80 columns, except a URL too long for any line, which stands alone
    assert all(len(line) <= 80 or re.fullmatch(r" +<\S+>", line)
               for line in offer.splitlines())


def _listed_ids(runner: CliRunner, *args: str) -> list[str]:
    return [item["id"] for item in ok_json(runner, "catalog", "list", *args)]


@pytest.mark.slow
def test_catalog_list_filters_and_sorts(runner: CliRunner, catalog: Catalog) -> None:
    big = _listed_ids(runner, "gpus", "--form", "datacenter", "--min-vram", "80")
    assert big and all(catalog.gpu(g).form == "datacenter" and catalog.gpu(g).vram_gib >= 80
                       for g in big)
    assert "h100-sxm" in big and "rtx-4090" not in big and "l40s" not in big
    by_vram = [catalog.gpu(g).vram_bytes for g in _listed_ids(runner, "gpus")]
    assert by_vram == sorted(by_vram)
    priced = [g for g in _listed_ids(runner, "gpus", "--sort", "price")
              if catalog.gpu(g).purchase is not None]
    lows = [catalog.gpu(g).purchase.low_usd for g in priced]  # type: ignore[union-attr]
    assert lows == sorted(lows)
    aws = _listed_ids(runner, "clouds", "--provider", "aws")
    assert aws and {o.provider for o in catalog.offers if o.id in aws} == {"aws"}
    offers = [next(o for o in catalog.offers if o.id == i) for i in aws]
    hourly = [o.on_demand_usd_per_gpu_hour or o.price("reserved") for o in offers]
    assert hourly == sorted(hourly)  # an offer sold only reserved (a Capacity Block) by that
    result = run(runner, "catalog", "list", "clouds", "--provider", "awz")
    assert result.exit_code == 2
    assert result.stderr == "error: --provider: no provider 'awz'; did you mean 'aws'?\n"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gpus", "clouds", "models"])
def test_catalog_lists_fit_80_columns(runner: CliRunner, kind: str) -> None:
    text = run(runner, "catalog", "list", kind).stdout
    assert max(len(line) for line in text.splitlines()) <= 80


def test_catalog_list_with_prices_override(runner: CliRunner, tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "offers:\n- id: lambda-h100\n  provider: lambda\n  gpu: h100-sxm\n"
        "  gpus_per_instance: 8\n  regions: [us]\n  on_demand_usd_per_gpu_hour: 1.11\n"
        "  as_of: '2026-03-01'\n  sources: [house-assumption]\n", encoding="utf-8")
    data = ok_json(runner, "catalog", "list", "clouds", "--prices", str(prices))
    assert {o["id"]: o["on_demand_usd_per_gpu_hour"] for o in data}["lambda-h100"] == 1.11


# ------------------------------------------------------------------ errors


def test_unknown_model(runner: CliRunner) -> None:
    line = one_error_line(run(runner, "estimate", "memory", "--model", "llama-2-7x",
                              "--method", "full"))
    assert line == "error: --model: unknown model 'llama-2-7x'; did you mean 'llama-2-7b'?"


@pytest.mark.slow
def test_both_model_and_params_b(runner: CliRunner) -> None:
    line = one_error_line(run(runner, "estimate", "memory", "--model", "llama-2-7b",
                              "--params-b", "7", "--method", "full"))
    assert line == "error: --model: give exactly one of --model or --params-b"


def test_neither_model_nor_params_b(runner: CliRunner) -> None:
    line = one_error_line(run(runner, "estimate", "memory", "--method", "full"))
    assert line == "error: --model: give exactly one of --model or --params-b"


@pytest.mark.slow
def test_unknown_gpu(runner: CliRunner) -> None:
    line = one_error_line(run(runner, "estimate", "training", "--model", "llama-2-7b",
                              "--gpu", "a100-80g"))
    assert line == "error: unknown GPU 'a100-80g'; did you mean 'a100-80gb'?"


def test_catalog_show_unknown_id(runner: CliRunner) -> None:
    line = one_error_line(run(runner, "catalog", "show", "rtx-4091"))
    assert line == "error: ID: no catalog entry 'rtx-4091'; did you mean 'rtx-4090'?"


@pytest.mark.slow
def test_broken_catalog_dir(runner: CliRunner, catalog_copy: Path) -> None:
    gpus = catalog_copy / "gpus.yaml"
    text = gpus.read_text(encoding="utf-8")
    gpus.write_text(text.replace("  memory_type: GDDR6X\n  bandwidth_gbps: 1008\n",
                                 "  memory_typ: GDDR6X\n  bandwidth_gbps: 1008\n"),
                    encoding="utf-8")
    line_no = gpus.read_text(encoding="utf-8").splitlines().index("  memory_typ: GDDR6X") + 1
    line = one_error_line(run(runner, "catalog", "list", "gpus", "--catalog",
                              str(catalog_copy)))
    assert line == (f"error: {gpus}:{line_no}: gpus[rtx-4090].memory_typ: unknown key; "
                    "did you mean 'memory_type'?")


def test_missing_catalog_dir(runner: CliRunner, tmp_path: Path) -> None:
    line = one_error_line(run(runner, "estimate", "memory", "--model", "llama-2-7b",
                              "--method", "full", "--catalog", str(tmp_path / "none")))
    assert line == f"error: {tmp_path / 'none' / 'sources.yaml'}: file not found"


def test_click_usage_error_exits_2(runner: CliRunner) -> None:
    result = run(runner, "estimate", "memory", "--model", "llama-2-7b", "--method", "ful")
    assert result.exit_code == 2
    # CliRunner names the program "cli"; the console script says gpu-advisor
    assert result.stderr == ("error: Invalid value for '--method': 'ful' is not one of 'full', "
                             "'lora', 'qlora', 'pretrain', 'inference'. "
                             "(see cli estimate memory --help)\n")


# ------------------------------------------------------------------ a real process


@pytest.mark.slow
def test_python_dash_m_engine_succeeds() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "estimate", "memory", "--model", "llama-2-7b",
         "--method", "qlora", "--format", "json"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    data = json.loads(proc.stdout)
    assert data["method"] == "qlora" and data["fits"]["rtx-4060-ti-16gb"] == 1


@pytest.mark.slow
def test_python_dash_m_engine_error_is_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "estimate", "memory", "--model", "nope",
         "--method", "qlora"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: --model: ")
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_usage_errors_are_one_line_too() -> None:
    """A bad flag value is bad input like any other: one line on stderr, exit 2."""
    result = subprocess.run(
        [sys.executable, "-m", "engine", "estimate", "memory", "--params-b", "1000000",
         "--method", "full"], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: Invalid value for '--params-b': 1000000.0 is not in the range "
        "0.001<=x<=5000. (see gpu-advisor estimate memory --help)"]


def test_ctrl_c_inside_any_command_is_one_line_exit_130(runner: CliRunner,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Click would print a blank line and 'Aborted!'; ours is one line and exit 130."""
    import engine.cli.estimate as estimate

    def interrupted(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(estimate, "memory_report", interrupted, raising=True)
    result = runner.invoke(cli, ["estimate", "memory", "--model", "llama-2-7b", "--method",
                                 "qlora"])
    assert result.exit_code == 130
    assert result.stderr == "Interrupted.\n"
    assert result.stdout == ""
