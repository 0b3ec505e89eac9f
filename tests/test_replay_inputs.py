"""A record replays from itself alone: whatever a decision read from outside its answers and
the bundled policy (a rules or catalog folder, a price file with its provider and date, a
model's config.json) is in the record, so ``audit show`` and ``audit replay`` work after every
input is deleted, and editing an input never changes what was decided.

The model a config.json describes travels as the ``model_shape`` answer (read where answers
come in); a price file travels among the catalog's texts with its layout, provider and date.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import cli
from engine.resources import bundled_dir

ROOT = Path(__file__).resolve().parent.parent
HF = ROOT / "tests" / "fixtures" / "hf" / "llama-3.1-8b"
STARTUP = ROOT / "examples" / "startup-7b-continuous.yaml"
AWS_TEAM = ROOT / "examples" / "enterprise-aws.json"
CSV = ("InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\n"
       "p5.48xlarge,H100,8,us-east-1,55.04,20.79\n"
       "g6e.xlarge,L40S,1,us-east-1,1.86,0.70\n")
QUOTES = ("offers:\n- id: lambda-h100\n  provider: lambda\n  gpu: h100-sxm\n"
          "  gpus_per_instance: 8\n  regions: [us]\n  on_demand_usd_per_gpu_hour: 1.11\n"
          "  as_of: '2026-03-01'\n  sources: [house-assumption]\n")


def engine(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m engine ARGS`` in a real process (bytecode not written)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, timeout=300, check=False, cwd=cwd, env=env)


def _rules(inputs: Path) -> list[str]:
    folder = inputs / "rules"
    shutil.copytree(bundled_dir("rules"), folder)
    with (folder / "usage.yaml").open("a", encoding="utf-8") as handle:
        handle.write("# a copy of our own\n")  # another policy hash than the bundled one
    return ["--answers", str(inputs / "answers.yaml"), "--rules", str(folder)]


def _catalog(inputs: Path) -> list[str]:
    folder = inputs / "catalog"
    shutil.copytree(bundled_dir("catalog"), folder)
    with (folder / "gpus.yaml").open("a", encoding="utf-8") as handle:
        handle.write("# a copy of our own\n")
    return ["--answers", str(inputs / "answers.yaml"), "--catalog", str(folder)]


def _quotes(inputs: Path) -> list[str]:
    (inputs / "quotes.yaml").write_text(QUOTES, encoding="utf-8")
    return ["--answers", str(inputs / "answers.yaml"), "--prices", str(inputs / "quotes.yaml")]


def _csv(inputs: Path) -> list[str]:
    (inputs / "aws").mkdir()
    (inputs / "aws" / "vms.csv").write_text(CSV, encoding="utf-8")
    return ["--answers", str(inputs / "aws-team.json"), "--prices",
            str(inputs / "aws" / "vms.csv")]


def _named_csv(inputs: Path) -> list[str]:
    (inputs / "x.csv").write_text(CSV, encoding="utf-8")
    return ["--answers", str(inputs / "aws-team.json"), "--prices", f"aws={inputs / 'x.csv'}"]


def _config(inputs: Path) -> list[str]:
    shutil.copyfile(HF / "config.json", inputs / "config.json")
    return ["--answers", str(inputs / "answers.yaml"), "--model", str(inputs / "config.json")]


def _folder(inputs: Path) -> list[str]:
    shutil.copytree(HF, inputs / "model")
    return ["--answers", str(inputs / "answers.yaml"), "--model", str(inputs / "model")]


KINDS: dict[str, Callable[[Path], list[str]]] = {
    "bundled": lambda inputs: ["--answers", str(inputs / "answers.yaml")],
    "rules folder": _rules, "catalog folder": _catalog, "prices yaml": _quotes,
    "prices csv": _csv, "prices aws=csv": _named_csv, "model config.json": _config,
    "model folder": _folder,
}


@pytest.mark.slow
def test_every_kind_of_input_replays_after_it_is_deleted(tmp_path: Path) -> None:
    """One decision per input kind, recorded by real processes into a real SQLite store;
    then every input is deleted, and each record shows (text and JSON) and replays
    identical (before: a --prices CSV record could not be shown or replayed, a --model one
    replayed DIFFERS once the file was edited and failed once it was deleted)."""
    store, inputs = tmp_path / "audit.sqlite3", tmp_path / "inputs"
    recorded: dict[str, tuple[str, str]] = {}
    for kind, make in KINDS.items():
        shutil.rmtree(inputs, ignore_errors=True)
        inputs.mkdir()
        shutil.copyfile(STARTUP, inputs / "answers.yaml")
        shutil.copyfile(AWS_TEAM, inputs / "aws-team.json")
        run = engine("recommend", *make(inputs), "--audit-db", str(store), "--format", "json",
                     cwd=tmp_path)
        assert run.returncode == 0, (kind, run.stderr)
        recorded[kind] = (json.loads(run.stdout)["decision_id"], run.stdout)
    shutil.rmtree(inputs)
    assert len({policy_of(store, i) for i, _ in recorded.values()}) == len(KINDS) - 2  # models
    runner = CliRunner()
    for kind, (decision_id, printed) in recorded.items():
        # shown in this process (what a record holds does not depend on the process); replayed
        # in a process of its own, where nothing of the recording is in memory
        shown = runner.invoke(cli, ["audit", "show", decision_id, "--audit-db", str(store),
                                    "--format", "json"])
        assert (shown.exit_code, shown.stdout) == (0, printed), (kind, shown.output)
        if kind == next(iter(KINDS)):  # text is rendered from the same record
            text = engine("audit", "show", decision_id, "--audit-db", str(store),
                          cwd=tmp_path)
            assert text.returncode == 0 and decision_id in text.stdout, (kind, text.stderr)
        replay = engine("audit", "replay", decision_id, "--audit-db", str(store),
                        cwd=tmp_path)
        assert replay.returncode == 0, (kind, replay.stdout, replay.stderr)
        assert replay.stdout.rstrip().endswith(": identical"), (kind, replay.stdout)


def policy_of(store: Path, decision_id: str) -> tuple[str, str]:
    """The (rules, catalog) hashes a record names."""
    import sqlite3

    with sqlite3.connect(store) as conn:
        row = conn.execute("SELECT rules_hash, catalog_hash FROM decisions WHERE id = ?",
                           (decision_id,)).fetchone()
    return row[0], row[1]


# ------------------------------------------------------------------ the model's shape
def _decision(runner: CliRunner, *args: str) -> dict[str, object]:
    result = runner.invoke(cli, ["recommend", "--no-audit", "--format", "json", *args])
    assert result.exit_code == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_the_recorded_answers_decide_alone(runner: CliRunner, tmp_path: Path) -> None:
    """``recommend --answers`` of the answers a --model decision carries decides the same
    with no file present, and a changed file does not change them."""
    model = tmp_path / "m"
    shutil.copytree(HF, model)
    first = _decision(runner, "--answers", str(STARTUP), "--model", str(model))
    answers = first["answers"]
    assert isinstance(answers, dict)
    shape = answers["model_shape"]
    assert shape["layers"] == 32 and shape["source"].startswith("config.json sha256:")
    recorded = tmp_path / "recorded.json"
    recorded.write_text(json.dumps(answers), encoding="utf-8")
    shutil.rmtree(model)
    again = _decision(runner, "--answers", str(recorded))
    first.pop("decision_id"), again.pop("decision_id")
    assert again == first


def test_a_hand_written_shape_decides_like_its_config(runner: CliRunner,
                                                     tmp_path: Path) -> None:
    by_config = _decision(runner, "--answers", str(STARTUP), "--model", str(HF))
    answers = dict(by_config["answers"])  # type: ignore[call-overload]
    shape = {k: v for k, v in answers["model_shape"].items() if v is not None}
    answers.update(model="acme/llama-like", model_shape={**shape, "source": "model card"})
    written = tmp_path / "answers.json"
    written.write_text(json.dumps(answers), encoding="utf-8")
    by_hand = _decision(runner, "--answers", str(written))
    assert by_hand["facts"]["model_name"] == "acme/llama-like"  # type: ignore[index]
    for data in (by_config, by_hand):
        data.pop("decision_id"), data.pop("answers")
    # the same decision, but for the model's name in the facts and the reasons
    assert json.dumps(by_hand).replace("acme/llama-like", str(HF)) == json.dumps(by_config)


@pytest.mark.parametrize(("text", "message"), [
    ("model: llama-3.1-8b\nmodel_shape: {params_b: 8, layers: 32, hidden: 4096, "
     "intermediate: 14336, heads: 32, kv_heads: 8, vocab: 128256, source: x}\n",
     ":2: model_shape: describes a model named by its config (a path or Hub id as model:); "
     "a catalog model or a bare size has a shape of its own"),
    ("model: acme/x\nmodel_shape: {params_b: 8, layers: 32, hidden: 4096, "
     "intermediate: 14336, heads: 32, kv_heads: 7, vocab: 128256, source: x}\n",
     ":2: model_shape: heads must be a multiple of kv_heads"),
    ("model: acme/x\nmodel_shape: {params_b: 8, layers: 32, hidden: 4096, "
     "intermediate: 14336, heads: 32, kv_heads: 8, vocab: 12, source: x}\n",
     ":2: model_shape: vocab: input should be greater than or equal to 1000"),
    ("model: acme/x\nmodel_shape: {params_b: 8, lyers: 32}\n",
     ":2: model_shape.lyers: unknown key"),
    ("model: acme/x\nmodel_shape: 8\n",
     ":2: model_shape: expected a mapping of the model's figures, got int"),
])
def test_a_bad_shape_is_one_located_line(runner: CliRunner, tmp_path: Path, text: str,
                                         message: str) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(text, encoding="utf-8")
    result = runner.invoke(cli, ["recommend", "--no-audit", "--answers", str(path)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"error: {path}{message}\n"


def test_a_file_s_shape_goes_with_its_model(runner: CliRunner, tmp_path: Path) -> None:
    """--model (or --set model=) names another model: the file's shape is dropped with the
    file's model, and the new one is read."""
    recorded = tmp_path / "recorded.json"
    first = _decision(runner, "--answers", str(STARTUP), "--model", str(HF))
    recorded.write_text(json.dumps(first["answers"]), encoding="utf-8")
    by_id = _decision(runner, "--answers", str(recorded), "--set", "model=mistral-7b",
                      "--set", "model_params_b=null")
    assert "model_shape" not in by_id["answers"]  # type: ignore[operator]
    assert by_id["answers"]["model"] == "mistral-7b"  # type: ignore[index]


def test_the_pipeline_reads_no_model_file(tmp_path: Path) -> None:
    """A config named without its shape is refused where no file may be read (validate
    without read_model_files: replay, batch lines) — the estimators never read it."""
    from engine.answers.model import validate_answers
    from engine.catalog.load import load_catalog
    from engine.errors import AnswerError

    with pytest.raises(AnswerError, match="names a model's config, which is read only where"):
        validate_answers({"model": str(HF)}, load_catalog())


def test_batch_reads_a_line_s_model_file_only_when_allowed(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(json.dumps({"model": str(HF), "hours_per_year": 400}) + "\n",
                      encoding="utf-8")
    refused = runner.invoke(cli, ["batch", str(source), "--out", str(out)])
    assert refused.exit_code == 1
    assert "names a model's config, which is read only" in json.loads(
        out.read_text(encoding="utf-8"))["error"]
    allowed = runner.invoke(cli, ["batch", str(source), "--out", str(out), "--force",
                                  "--allow-model-files"])
    assert allowed.exit_code == 0, allowed.stderr
    decision = json.loads(out.read_text(encoding="utf-8"))["decision"]
    assert decision["answers"]["model_shape"]["layers"] == 32


def test_the_questionnaire_reads_a_config_when_the_model_is_given(catalog: object) -> None:
    """At the prompt, a model path is read once, when it is given; its shape goes with the
    answer (back and another model drop it), and the answers validate without the file."""
    from engine.answers.model import validate_answers
    from engine.answers.questionnaire import Questionnaire
    from engine.catalog.load import Catalog

    assert isinstance(catalog, Catalog)
    q = Questionnaire(catalog, {"workload": "fine-tune"})
    model = catalog.question("model")
    q.record(model, q.check(model, str(HF)))
    assert q.answers["model_shape"].layers == 32
    answers = validate_answers({**q.answers, "hours_per_year": 400}, catalog)
    assert answers.model_shape is not None and answers.model == str(HF)
    q.back(catalog.question("model_params_b"))
    assert "model" not in q.answers and "model_shape" not in q.answers
    q.record(model, q.check(model, "mistral-7b"))
    assert "model_shape" not in q.answers
    with pytest.raises(Exception, match="file not found"):
        q.check(model, str(HF / "nowhere.json"))
