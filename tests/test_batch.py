"""``gpu-advisor batch``, :func:`engine.batch.lines.evaluate_lines` and the Dask adapter."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.batch.lines import evaluate_lines, record_error
from engine.catalog.load import Catalog
from engine.cli import cli

MODELS = ["llama-3.1-8b", "mistral-7b", "qwen2.5-14b", "gemma-2-2b", "llama-3.1-70b"]


def scenarios(count: int, seed: int = 7) -> list[str]:
    """Varied, valid answers as JSON lines (deterministic)."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        answers: dict[str, object] = {
            "model": rng.choice(MODELS),
            "hours_per_year": rng.choice([50, 400, 1500, 4000, 8000]),
            "budget_usd": rng.choice([500, 3000, 12000, 80000]),
            "usage_pattern": rng.choice(["continuous", "intermittent", "bursty"]),
            "upfront_capex": rng.random() < 0.5,
        }
        residency = rng.choice(["none", "region", "on-premises"])
        answers["data_residency"] = residency
        if residency == "region":
            answers["allowed_regions"] = rng.sample(["us", "eu", "uk"], 2)
        if residency != "on-premises":
            answers["cloud_ecosystem"] = rng.choice(["none", "aws", "azure", "gcp"])
        lines.append(json.dumps(answers))
    return lines


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def run_batch(runner: CliRunner, source: Path, out: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(cli, ["batch", str(source), "--out", str(out), *args])
    return result.exit_code, result.stderr


@pytest.fixture(scope="module")
def good_input(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("batch") / "in.jsonl", scenarios(14))


@pytest.fixture(scope="module")
def one_worker_output(good_input: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("batch") / "out.jsonl"
    code, stderr = run_batch(CliRunner(), good_input, out)
    assert code == 0, stderr
    return out.read_bytes()


def test_one_record_per_line_in_order_with_deterministic_ids(
        one_worker_output: bytes, good_input: Path) -> None:
    records = [json.loads(line) for line in one_worker_output.decode().splitlines()]
    inputs = [json.loads(line) for line in good_input.read_text().splitlines()]
    assert [r["line"] for r in records] == list(range(1, 15))
    for number, (record, answers) in enumerate(zip(records, inputs, strict=True), 1):
        assert record["decision"]["decision_id"] == f"batch-{number:09d}"
        assert record["decision"]["answers"]["model"] == answers["model"]
        assert record["decision"]["answers"]["hours_per_year"] == answers["hours_per_year"]


@pytest.mark.slow
def test_two_workers_preserve_order_and_match_one_worker_byte_for_byte(
        runner: CliRunner, good_input: Path, one_worker_output: bytes, tmp_path: Path) -> None:
    out = tmp_path / "out2.jsonl"
    code, stderr = run_batch(runner, good_input, out, "--workers", "2", "--chunk-size", "3")
    assert code == 0, stderr
    assert out.read_bytes() == one_worker_output


@pytest.mark.slow
def test_bad_lines_are_reported_by_number_and_the_rest_succeed(
        runner: CliRunner, tmp_path: Path, isolated_audit_store: Path) -> None:
    lines = scenarios(8)
    lines[1] = '{"model": "llama-3.1-8b",'                                   # line 2
    lines[3] = json.dumps({"model": "llama-3.1-8b", "hours_pr_year": 10})    # line 4
    lines[5] = json.dumps({"model": "llama-3.1-8b", "budget_usd": -1})       # line 6
    lines[6] = "[1, 2]"                                                     # line 7
    out = tmp_path / "out.jsonl"
    code, stderr = run_batch(runner, write(tmp_path / "in.jsonl", lines), out,
                             "--workers", "2", "--chunk-size", "2")
    assert code == 1
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["line"] for r in records] == list(range(1, 9))
    errors = {r["line"]: r["error"] for r in records if "error" in r}
    assert set(errors) == {2, 4, 6, 7}
    assert errors[2].startswith("invalid JSON")
    assert "hours_pr_year: unknown answer" in errors[4]
    assert "budget_usd" in errors[6] and "out of range" in errors[6]
    assert "JSON object" in errors[7]
    assert all("decision" in r for r in records if r["line"] not in errors)
    for number, message in errors.items():
        assert f"in.jsonl:{number}: {message}" in stderr
    assert all("\n" not in message for message in errors.values())
    assert not isolated_audit_store.exists()  # batch never records decisions


def test_blank_lines_are_skipped_and_exit_zero(runner: CliRunner, tmp_path: Path) -> None:
    lines = scenarios(2)
    out = tmp_path / "out.jsonl"
    code, _ = run_batch(runner, write(tmp_path / "in.jsonl", [lines[0], "", lines[1]]), out)
    assert code == 0
    assert [json.loads(line)["line"] for line in out.read_text().splitlines()] == [1, 3]


def test_missing_input_exits_2(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    code, stderr = run_batch(runner, tmp_path / "missing.jsonl", out)
    assert code == 2
    assert "missing.jsonl: no such input file" in stderr
    assert not out.exists()


@pytest.mark.slow
def test_evaluate_lines_is_pure() -> None:
    pairs = list(enumerate([*scenarios(3), "{", "null"], 10))
    first = evaluate_lines(pairs)
    assert evaluate_lines(pairs) == first
    assert evaluate_lines(reversed(pairs)) == first[::-1]
    assert [record_error(r) is not None for r in first] == [False, False, False, True, True]


def test_evaluate_lines_reports_answer_errors_as_records(catalog: Catalog) -> None:
    [record] = evaluate_lines([(3, json.dumps({"model": "no-such-model"}))])
    assert json.loads(record) == {"line": 3, "error": record_error(record)}
    assert "unknown model 'no-such-model'" in str(record_error(record))


@pytest.mark.slow
def test_dask_local_cluster_matches_plain_batch(good_input: Path, one_worker_output: bytes,
                                               tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    from engine.batch.distributed import run_on_dask

    out = tmp_path / "dask.jsonl"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        failed = run_on_dask(good_input, out, client=client, npartitions=4)
    assert failed == 0
    assert out.read_bytes() == one_worker_output
