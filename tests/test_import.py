"""`gpu-advisor import axolotl|llama-factory|trl FILE`: a training config into answers.

The fixtures in tests/fixtures/training/ are the projects' published examples (SOURCES.md
there names each file's source path):
- axolotl-ai-cloud/axolotl examples/llama-3/qlora.yml
- hiyouga/LLaMA-Factory examples/train_lora/llama3_lora_sft.yaml and
  examples/train_qlora/llama3_lora_sft_otfq.yaml
- huggingface/trl examples/cli_configs/example_config.yaml
- huggingface/alignment-handbook recipes/zephyr-7b-beta/sft/config_qlora.yaml (a TRL config)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from engine.answers.importers import import_config
from engine.answers.training_config import catalog_model_named
from engine.catalog.load import Catalog
from engine.cli import cli

TRAINING = Path(__file__).parent / "fixtures" / "training"
HF = Path(__file__).parent / "fixtures" / "hf"
AXOLOTL = TRAINING / "axolotl-llama-3-qlora.yml"
FACTORY_LORA = TRAINING / "llama-factory-llama3-lora-sft.yaml"
FACTORY_QLORA = TRAINING / "llama-factory-llama3-qlora-sft.yaml"
TRL_EXAMPLE = TRAINING / "trl-example-config.yaml"
TRL_ZEPHYR = TRAINING / "trl-zephyr-7b-sft-qlora.yaml"


def run(runner: CliRunner, *args: str) -> Result:
    result = runner.invoke(cli, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def imported(runner: CliRunner, tool: str, path: Path, *args: str) -> tuple[Any, list[str]]:
    """The answers printed on stdout and the report lines on stderr."""
    result = run(runner, "import", tool, str(path), *args)
    assert result.exit_code == 0, result.output
    return yaml.safe_load(result.stdout), result.stderr.splitlines()


# ------------------------------------------------------------------ the published examples
def test_axolotl_qlora_example(runner: CliRunner) -> None:
    answers, report = imported(runner, "axolotl", AXOLOTL)
    assert answers == {"workload": "fine-tune", "model": "llama-3-8b", "method": "qlora",
                       "seq_len": 4096, "micro_batch": 2, "gradient_checkpointing": True,
                       "work_unknown": True}
    assert report[:8] == [
        "read workload: fine-tune (axolotl trains a pretrained model)",
        "read model: llama-3-8b (base_model NousResearch/Meta-Llama-3-8B, the catalog preset "
        "of that name)",
        "read method: qlora (adapter qlora, load_in_4bit true)",
        "read seq_len: 4096 (sequence_len)",
        "read micro_batch: 2 (micro_batch_size)",
        "read gradient_checkpointing: true (gradient_checkpointing true)",
        "read work_unknown: true (no dataset size: the advice assumes the work and says so "
        "at its top until training_tokens_b is given)",
        "not read training_tokens_b: the file gives no dataset size of datasets "
        '["tatsu-lab/alpaca"]; give training_tokens_b = examples × tokens each × epochs '
        "(num_epochs 4) ÷ 10^9",
    ]
    assert report[8].startswith("ignored 45 other key(s) that do not change the hardware: "
                                "model_type, tokenizer_type, strict, ")
    assert len(report) == 9


def test_llama_factory_lora_example(runner: CliRunner) -> None:
    answers, report = imported(runner, "llama-factory", FACTORY_LORA)
    assert answers == {"workload": "fine-tune", "model": "llama-3-8b", "method": "lora",
                       "seq_len": 2048, "micro_batch": 1, "gradient_checkpointing": True,
                       "training_tokens_b": 0.012288}
    assert report[1:7] == [
        "read model: llama-3-8b (model_name_or_path meta-llama/Meta-Llama-3-8B-Instruct, "
        "the catalog preset of that name)",
        "read method: lora (finetuning_type lora)",
        "read seq_len: 2048 (cutoff_len)",
        "read micro_batch: 1 (per_device_train_batch_size)",
        "read gradient_checkpointing: true (LLaMA-Factory checkpoints unless "
        "disable_gradient_checkpointing is set)",
        "read training_tokens_b: 0.012288 (at most: max_samples 1,000 × 2 dataset(s) × "
        "cutoff_len 2,048 × num_train_epochs 3 ÷ 10^9; shorter examples make it less)",
    ]


def test_llama_factory_4_bit_is_qlora(runner: CliRunner) -> None:
    answers, report = imported(runner, "llama-factory", FACTORY_QLORA)
    assert answers["method"] == "qlora"
    assert "read method: qlora (finetuning_type lora, quantization_bit 4)" in report


def test_trl_example_takes_the_trainers_defaults_and_says_so(runner: CliRunner) -> None:
    answers, report = imported(runner, "trl", TRL_EXAMPLE)
    assert answers == {"workload": "fine-tune", "model": "qwen2.5-0.5b", "method": "full",
                       "seq_len": 1024, "micro_batch": 8, "work_unknown": True}
    assert report[2:8] == [
        "read method: full (use_peft not set: every weight is trained)",
        "read seq_len: 1024 (max_length not set: TRL's SFTConfig default)",
        "read micro_batch: 8 (per_device_train_batch_size not set: transformers' "
        "TrainingArguments default)",
        "read work_unknown: true (no dataset size: the advice assumes the work and says so "
        "at its top until training_tokens_b is given)",
        "not read gradient_checkpointing: no gradient_checkpointing; auto applies",
        "not read training_tokens_b: the file gives no dataset size of dataset_name "
        "stanfordnlp/imdb; give training_tokens_b = examples × tokens each × epochs ÷ 10^9",
    ]
    assert report[8] == ("ignored 3 other key(s) that do not change the hardware: report_to, "
                         "learning_rate, lr_scheduler_type")


def test_trl_qlora_recipe(runner: CliRunner) -> None:
    answers, _ = imported(runner, "trl", TRL_ZEPHYR)
    assert answers == {"workload": "fine-tune", "model": "mistral-7b", "method": "qlora",
                       "seq_len": 2048, "micro_batch": 4, "gradient_checkpointing": True,
                       "work_unknown": True}


@pytest.mark.parametrize(("tool", "path", "method"), [
    ("axolotl", AXOLOTL, "qlora"),
    ("llama-factory", FACTORY_LORA, "lora"),
    ("llama-factory", FACTORY_QLORA, "qlora"),
    ("trl", TRL_EXAMPLE, "full"),
    ("trl", TRL_ZEPHYR, "qlora"),
])
def test_the_answers_file_feeds_recommend(runner: CliRunner, tmp_path: Path, tool: str,
                                          path: Path, method: str) -> None:
    out = tmp_path / "answers.yaml"
    result = run(runner, "import", tool, str(path), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        f"wrote {out}; next: gpu-advisor recommend --answers {out}")
    decision = run(runner, "recommend", "--answers", str(out), "--format", "json",
                   "--no-audit")
    assert decision.exit_code == 0, decision.output
    assert json.loads(decision.stdout)["decisions"]["method"]["choice"] == method


def test_each_answer_says_where_it_came_from_in_the_file(runner: CliRunner) -> None:
    result = run(runner, "import", "axolotl", str(AXOLOTL))
    assert result.stdout.splitlines() == [
        f"# gpu-advisor answers imported from the axolotl config {AXOLOTL}",
        "# (gpu-advisor import); every answer not listed takes its default.",
        "workload: fine-tune  # axolotl trains a pretrained model",
        "model: llama-3-8b  # base_model NousResearch/Meta-Llama-3-8B, the catalog preset of "
        "that name",
        "method: qlora  # adapter qlora, load_in_4bit true",
        "seq_len: 4096  # sequence_len",
        "micro_batch: 2  # micro_batch_size",
        "gradient_checkpointing: true  # gradient_checkpointing true",
        "work_unknown: true  # no dataset size: the advice assumes the work and says so at its "
        "top until training_tokens_b is given",
        "# not read: training_tokens_b: the file gives no dataset size of datasets "
        '["tatsu-lab/alpaca"]; give training_tokens_b = examples × tokens each × epochs '
        "(num_epochs 4) ÷ 10^9",
    ]


def test_import_then_recommend_in_real_processes(tmp_path: Path) -> None:
    out = tmp_path / "answers.yaml"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    first = subprocess.run(
        [sys.executable, "-m", "engine", "import", "llama-factory", str(FACTORY_QLORA),
         "--out", str(out)], capture_output=True, text=True, timeout=60, check=False, env=env)
    assert first.returncode == 0, first.stderr
    second = subprocess.run(
        [sys.executable, "-m", "engine", "recommend", "--answers", str(out), "--no-audit",
         "--format", "json"], capture_output=True, text=True, timeout=120, check=False, env=env)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["decisions"]["method"]["choice"] == "qlora"


# ------------------------------------------------------------------ method and model
def _write(tmp_path: Path, text: str, name: str = "train.yml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "method", "why"), [
    ("adapter: lora\n", "lora", "adapter lora"),
    ("adapter: lora\nload_in_4bit: true\n", "qlora", "adapter lora, load_in_4bit true"),
    ("adapter: lora\nload_in_8bit: true\n", "qlora",
     "adapter lora, load_in_8bit true; an 8-bit base is estimated as qlora's 4-bit one: its "
     "weights need about twice the memory shown"),
    ("adapter:\n", "full", "no adapter: every weight is trained"),
])
def test_axolotl_methods(runner: CliRunner, tmp_path: Path, text: str, method: str,
                         why: str) -> None:
    path = _write(tmp_path, f"base_model: meta-llama/Llama-3.1-8B\n{text}")
    answers, report = imported(runner, "axolotl", path)
    assert answers["method"] == method
    assert f"read method: {method} ({why})" in report


def test_a_method_the_estimates_do_not_know_stays_auto(runner: CliRunner,
                                                       tmp_path: Path) -> None:
    path = _write(tmp_path, "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\n"
                            "finetuning_type: freeze\n")
    answers, report = imported(runner, "llama-factory", path)
    assert "method" not in answers and answers["model"] == "qwen2.5-7b"
    assert ("not read method: finetuning_type freeze: freeze is neither lora nor qlora; "
            "method stays auto") in report


def test_preference_training_is_flagged(runner: CliRunner, tmp_path: Path) -> None:
    path = _write(tmp_path, "model_name_or_path: Qwen/Qwen2.5-7B\nstage: dpo\n")
    _, report = imported(runner, "llama-factory", path)
    assert ("not read stage: dpo: the estimates model supervised training; preference and "
            "reward training also hold a reference or reward model") in report


@pytest.mark.parametrize(("name", "model_id"), [
    ("NousResearch/Meta-Llama-3-8B", "llama-3-8b"),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
    ("google/gemma-2-9b-it", "gemma-2-9b"),
    ("microsoft/Phi-4-mini-instruct", "phi-4-mini"),
    ("qwen2.5-7b", "qwen2.5-7b"),
    ("mistralai/Mistral-7B-v0.3", None),  # a later release, another vocabulary
    ("Qwen/Qwen2-0.5B", None),
])
def test_hub_names_of_catalog_presets(catalog: Catalog, name: str,
                                      model_id: str | None) -> None:
    assert catalog_model_named(name, catalog) == model_id


def test_a_local_model_folder_is_kept_as_its_path(runner: CliRunner, tmp_path: Path) -> None:
    folder = HF / "mixtral-8x7b"
    path = _write(tmp_path, f"base_model: {folder}\nadapter: lora\n")
    answers, report = imported(runner, "axolotl", path)
    assert answers["model"] == str(folder)
    assert report[1] == f"read model: {folder} (base_model {folder}: its config.json)"


def test_an_unknown_hub_model_offline_is_one_line_with_a_way_out(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    path = _write(tmp_path, "# a TRL config\nmodel_name_or_path: Qwen/Qwen2-0.5B\n")
    line = error_line(run(runner, "import", "trl", str(path)))
    assert line == (
        f"error: {path}:2: model_name_or_path: Qwen/Qwen2-0.5B: not a local file or folder, "
        "and its config.json could not be fetched from the Hugging Face Hub (HF_HUB_OFFLINE "
        "is set: nothing is fetched); download it and give its path; or give --model with a "
        "catalog id or a config.json")
    answers, report = imported(runner, "trl", path, "--model", "qwen2.5-0.5b")
    assert answers["model"] == "qwen2.5-0.5b" and "read model: qwen2.5-0.5b (--model)" in report
    assert error_line(run(runner, "import", "trl", str(path), "--model", "qwen2.5-0.6b")) == (
        "error: --model: unknown model 'qwen2.5-0.6b'; did you mean 'qwen2.5-0.5b'?; see "
        "`gpu-advisor catalog list models`")


# ------------------------------------------------------------------ what could not be read
def test_a_misspelt_key_is_named_with_a_suggestion(runner: CliRunner, tmp_path: Path) -> None:
    path = _write(tmp_path, "base_model: meta-llama/Llama-3.1-8B\nsequence_length: 8192\n"
                            "gradient_accumulation_steps: 4\n")
    answers, report = imported(runner, "axolotl", path)
    assert "seq_len" not in answers
    assert "not read seq_len: no sequence_len (the sequence length); the answers' default " \
           "applies" in report
    assert ("not read sequence_length: not a key axolotl reads; did you mean "
            "'sequence_len'?") in report
    assert report[-1] == ("ignored 1 other key(s) that do not change the hardware: "
                          "gradient_accumulation_steps")


def test_values_quoted_in_comments_cannot_add_answers(runner: CliRunner,
                                                      tmp_path: Path) -> None:
    """A line break inside a quoted value stays inside its one comment line."""
    path = _write(tmp_path, 'base_model: meta-llama/Llama-3.1-8B\n'
                            'adapter: "ia3\\nbudget_usd: 0"\n')
    result = run(runner, "import", "axolotl", str(path))
    assert result.exit_code == 0, result.output
    assert "budget_usd" not in yaml.safe_load(result.stdout)
    assert ("# not read: method: adapter ia3\\nbudget_usd: 0: ia3\\nbudget_usd: 0 is neither "
            "lora nor qlora; method stays auto") in result.stdout.splitlines()


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(("text", "message"), [
    ("- a\n- b\n", "expected a mapping of training settings, got list"),
    ("adapter: lora\n", ":1: base_model: required key is missing (the model to train); or "
                        "give --model"),
    ("base_model: 7\n", ":1: base_model: expected text, got int 7"),
    ("base_model: llama-3-8b\nsequence_len: long\n", ":2: sequence_len: expected a number, "
                                                     "got long"),
    ("base_model: llama-3-8b\nsequence_len: 32\n", ":2: sequence_len: 32 is out of range; "
     "expected a whole number from 64 to 1,048,576 tokens"),
    ("base_model: llama-3-8b\nmicro_batch_size: 2.5\n", ":2: micro_batch_size: expected a "
                                                        "whole number, got 2.5"),
    ("base_model: llama-3-8b\nload_in_4bit: yes please\n", ":2: load_in_4bit: expected true "
                                                           "or false, got yes please"),
    ("base_model: llama-3-8b\ngradient_checkpointing: 3\n", ":2: gradient_checkpointing: "
                                                            "expected true or false, got 3"),
    ("base_model: llama-3-8b\nadapter: [lora]\n", ':2: adapter: expected text, got list '
                                                  '["lora"]'),
    ("base_model: llama-9-9000b\n", ":1: base_model: unknown model 'llama-9-9000b'; did you "
     "mean 'llama-3-70b'?; see `gpu-advisor catalog list models`; or give --model with a "
     "catalog id or a config.json"),
    ("base_model: [unclosed\n", ":2: YAML error: did not find expected ',' or ']'"),
])
def test_bad_axolotl_configs_are_one_line(runner: CliRunner, tmp_path: Path, text: str,
                                          message: str) -> None:
    path = _write(tmp_path, text)
    line = error_line(run(runner, "import", "axolotl", str(path)))
    assert line == f"error: {path}{message if message[0] == ':' else ': ' + message}"


def test_bad_values_of_the_other_tools(runner: CliRunner, tmp_path: Path) -> None:
    factory = _write(tmp_path, "model_name_or_path: Qwen/Qwen2.5-7B\ncutoff_len: 0\n")
    assert error_line(run(runner, "import", "llama-factory", str(factory))) == (
        f"error: {factory}:2: cutoff_len: 0 is out of range; expected a whole number from 64 "
        "to 1,048,576 tokens")
    trl = _write(tmp_path, "model_name_or_path: Qwen/Qwen2.5-7B\nuse_peft: 1\n", "t.yml")
    assert error_line(run(runner, "import", "trl", str(trl))) == (
        f"error: {trl}:2: use_peft: expected true or false, got 1")


def test_unknown_tool_and_missing_file(runner: CliRunner, tmp_path: Path) -> None:
    assert error_line(run(runner, "import", "unsloth", str(AXOLOTL))) == (
        "error: Invalid value for '{axolotl|llama-factory|trl}': 'unsloth' is not one of "
        "'axolotl', 'llama-factory', 'trl'. (see cli import --help)")
    assert error_line(run(runner, "import", "trl", str(tmp_path / "none.yml"))) == (
        f"error: {tmp_path / 'none.yml'}: file not found")


# ------------------------------------------------------------------ --out
def test_out_never_replaces_a_file_unasked(runner: CliRunner, tmp_path: Path) -> None:
    out = _write(tmp_path, "kept\n", "answers.yaml")
    assert error_line(run(runner, "import", "axolotl", str(AXOLOTL), "--out", str(out))) == (
        f"error: {out}: --out: already exists; give --force to replace it")
    assert out.read_text() == "kept\n"
    result = run(runner, "import", "axolotl", str(AXOLOTL), "--out", str(out), "--force")
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(out.read_text())["model"] == "llama-3-8b"


def test_out_is_refused_before_anything_is_read(runner: CliRunner, tmp_path: Path) -> None:
    config = _write(tmp_path, AXOLOTL.read_text(), "qlora.yml")
    link = tmp_path / "link.yml"
    link.symlink_to(config)

    def line(out: Path, *more: str) -> str:
        return error_line(run(runner, "import", "axolotl", str(config), "--out", str(out),
                              *more))

    assert line(link, "--force") == (
        f"error: {link}: --out: is the config being imported; choose another file")
    assert line(tmp_path) == f"error: {tmp_path}: --out: is a directory, not a regular file"
    missing = tmp_path / "no" / "answers.yaml"
    assert line(missing) == f"error: {missing}: --out: folder {missing.parent} does not exist"
    assert config.read_text() == AXOLOTL.read_text()


def test_bad_input_leaves_an_existing_out_untouched(runner: CliRunner, tmp_path: Path) -> None:
    out = _write(tmp_path, "kept\n", "answers.yaml")
    bad = _write(tmp_path, "adapter: lora\n")
    error_line(run(runner, "import", "axolotl", str(bad), "--out", str(out), "--force"))
    assert out.read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.yaml", "train.yml"]


def test_the_library_call(catalog: Catalog) -> None:
    result = import_config("llama-factory", FACTORY_QLORA, catalog)
    assert result.answers["method"] == "qlora"
    assert result.tool == "llama-factory" and result.path == str(FACTORY_QLORA)


# ------------------------------------------------------------------ numbers and line breaks
@pytest.mark.parametrize(("tool", "text", "where"), [
    ("axolotl", "base_model: llama-3-8b\nnum_epochs: " + "9" * 310 + "\n", ":2: num_epochs"),
    ("llama-factory", "model_name_or_path: llama-3-8b\ndataset: a,b\ncutoff_len: 2048\n"
     "num_train_epochs: 3\nmax_samples: " + "9" * 310 + "\n", ":5: max_samples"),
])
def test_a_number_beyond_a_float_is_one_line(runner: CliRunner, tmp_path: Path, tool: str,
                                             text: str, where: str) -> None:
    """Before: OverflowError (int too large to convert to float)."""
    path = _write(tmp_path, text)
    assert error_line(run(runner, "import", tool, str(path))) == (
        f"error: {path}{where}: expected a finite number, got a 310-digit number")


def test_line_separators_in_quoted_values_stay_in_their_comment(runner: CliRunner,
                                                                tmp_path: Path) -> None:
    """U+2028 and U+2029 end a line in YAML: quoted into a comment raw, they broke the
    answers file (a YAML error, or the read-back AssertionError); they are escaped."""
    path = _write(tmp_path, 'base_model: llama-3-8b\nadapter: "lo\u2028ra"\n'
                            'datasets:\n  - path: "a\u2029b"\n')
    result = run(runner, "import", "axolotl", str(path))
    assert result.exit_code == 0, result.output
    assert "\u2028" not in result.stdout and "\u2029" not in result.stdout
    assert "lo\\u2028ra" in result.stdout and "a\\u2029b" in result.stdout
    assert yaml.safe_load(result.stdout) == {"workload": "fine-tune", "model": "llama-3-8b",
                                             "work_unknown": True}
