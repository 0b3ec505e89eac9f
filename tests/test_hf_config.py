"""A model given as its Hugging Face config.json: read into the shape a catalog preset has.

The fixtures in tests/fixtures/hf/ copy published configs (sources in SOURCES.md there):
- llama-3.1-8b: https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json
- qwen2.5-7b: https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json (GQA, 28:4 heads)
- mixtral-8x7b: https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json
- qwen1.5-moe-a2.7b: https://huggingface.co/Qwen/Qwen1.5-MoE-A2.7B/blob/main/config.json
- deepseek-v2-lite: https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite/blob/main/config.json
No test reaches the network: a Hub id is served by a local HTTP server (``HF_ENDPOINT``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers.hub_server import FakeHub, fake_hub

from engine.answers.hf_config import load_model_config, shape_of_config
from engine.answers.hf_shape import architecture, count_params
from engine.catalog.load import Catalog
from engine.catalog.models import ModelPreset
from engine.cli import cli
from engine.estimates.shape import Shape, resolve_shape, shape_of_preset

HF = Path(__file__).parent / "fixtures" / "hf"
SAME_AS_PRESET = {
    "llama-3.1-8b": "llama-3.1-8b",  # dense, GQA 32:8
    "qwen2.5-7b": "qwen2.5-7b",  # GQA 28:4, q/k/v biases
    "mixtral-8x7b": "mixtral-8x7b",  # MoE, 8 experts, top-2
    "deepseek-v2-lite": "deepseek-v2-lite",  # MoE with shared experts, latent attention
}


def config(name: str) -> Path:
    return HF / name / "config.json"


def shaped(catalog: Catalog, reference: str) -> Shape:
    """The shape the pipeline uses for a config: read at the edge, then from the answer."""
    return resolve_shape(catalog, model=reference, params_b=None,
                         model_shape=shape_of_config(reference))


def run(runner: CliRunner, *args: str) -> Result:
    result = runner.invoke(cli, list(args))
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result


def error_line(result: Result) -> str:
    """The one ``error:`` line of a refused command (exit 2, nothing on stdout)."""
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# ------------------------------------------------------------------ shape and counts
@pytest.mark.parametrize("folder", sorted(SAME_AS_PRESET))
def test_config_reads_the_shape_of_its_catalog_preset(folder: str, catalog: Catalog) -> None:
    preset = catalog.models[SAME_AS_PRESET[folder]]
    shape = shaped(catalog, str(config(folder)))
    expected = shape_of_preset(preset)
    assert shape.model_dump(exclude={"label", "sources", "compute_params_b"}) == (
        expected.model_dump(exclude={"label", "sources", "compute_params_b"}))
    assert shape.label == str(config(folder))
    # the catalog quotes DeepSeek's README (2.4B active); counted with both embeddings: 2.66B
    active = 2.66 if folder == "deepseek-v2-lite" else expected.compute_params_b
    assert shape.compute_params_b == active


@pytest.mark.parametrize("folder", sorted(SAME_AS_PRESET))
def test_parameter_count_matches_the_preset_within_one_percent(folder: str,
                                                                catalog: Catalog) -> None:
    preset = catalog.models[SAME_AS_PRESET[folder]]
    data = json.loads(config(folder).read_text())
    total, _ = count_params(architecture(data, "x"))
    assert total / 1e9 == pytest.approx(preset.params_b, rel=0.01)


def test_llama_count_by_hand() -> None:
    """Llama 3.1 8B, weight matrix by weight matrix."""
    h, inter, vocab, layers, q, kv = 4096, 14336, 128256, 32, 4096, 8 * 128
    attention = h * q + 2 * h * kv + q * h
    per_layer = attention + 3 * h * inter + 2 * h
    expected = 2 * vocab * h + layers * per_layer + h
    data = json.loads(config("llama-3.1-8b").read_text())
    assert count_params(architecture(data, "x")) == (expected, expected) == (8_030_261_248,) * 2


def test_moe_counts_total_and_active(catalog: Catalog) -> None:
    """Mixtral: 46.7B total, 12.9B used per token (two of eight experts), as the catalog."""
    preset = load_model_config(str(config("mixtral-8x7b")))
    catalog_preset = catalog.models["mixtral-8x7b"]
    assert (preset.params_b, preset.active_params_b) == (46.7, 12.9)
    assert (preset.params_b, preset.compute_params_b) == (catalog_preset.params_b,
                                                           catalog_preset.compute_params_b)
    assert (preset.experts, preset.experts_active, preset.experts_shared) == (8, 2, 0)


def test_qwen_moe_with_a_gated_shared_expert_matches_its_model_card() -> None:
    """Qwen1.5-MoE-A2.7B: "14.3B parameters in total and 2.7B activated" (model card)."""
    preset = load_model_config(str(config("qwen1.5-moe-a2.7b")))
    assert preset.params_b == 14.3
    assert preset.active_params_b == pytest.approx(2.7, rel=0.01)
    assert (preset.experts, preset.experts_active, preset.experts_shared) == (60, 4, 4)
    assert preset.intermediate == 1408 and preset.dense_layers == 0


def test_deepseek_dense_layers_and_shared_experts() -> None:
    preset = load_model_config(str(config("deepseek-v2-lite")))
    assert (preset.dense_layers, preset.dense_intermediate) == (1, 10944)
    assert (preset.experts, preset.experts_active, preset.experts_shared) == (64, 6, 2)
    assert preset.head_dim is None  # latent attention: sized like the catalog preset


def _config_like(preset: ModelPreset) -> dict[str, Any]:
    """A config.json with the published shape of a catalog preset (its family's keys)."""
    kind = {"llama": "llama", "llama-3": "llama", "phi": "phi3", "deepseek": "deepseek_v3",
            "gemma": "gemma3_text", "mistral": "mixtral" if preset.experts > 1 else "mistral",
            "qwen": ("qwen3_moe" if preset.experts > 1 else
                     "qwen3" if preset.id.startswith("qwen3") else "qwen2")}[preset.family]
    data: dict[str, Any] = {
        "model_type": kind, "num_hidden_layers": preset.layers, "hidden_size": preset.hidden,
        "intermediate_size": preset.dense_intermediate or preset.intermediate,
        "num_attention_heads": preset.heads, "num_key_value_heads": preset.kv_heads,
        "vocab_size": preset.vocab, "tie_word_embeddings": preset.tied_embeddings,
        "head_dim": preset.head_dim,
    }
    experts = {"num_experts_per_tok": preset.experts_active, "num_experts": preset.experts,
               "num_local_experts": preset.experts, "n_routed_experts": preset.experts,
               "n_shared_experts": preset.experts_shared,
               "moe_intermediate_size": preset.intermediate,
               "first_k_dense_replace": preset.dense_layers}
    if kind == "deepseek_v3":  # DeepSeek-V3's latent attention (its config.json)
        data |= {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
                 "qk_rope_head_dim": 64, "v_head_dim": 128}
    return data | (experts if preset.experts > 1 else {})


NOT_COMPARABLE = {
    "gemma-2-2b": "the preset lacks head_dim (256, not hidden ÷ heads)",
    "gemma-2-9b": "the preset lacks head_dim (256, not hidden ÷ heads)",
    "gemma-2-27b": "the preset lacks head_dim (128, not hidden ÷ heads)",
    "gemma-3-4b": "the published count includes the vision tower",
    "gemma-3-12b": "the published count includes the vision tower",
    "gemma-3-27b": "the published count includes the vision tower",
    "llama-4-scout-17b-16e": "Llama 4 (text_config of llama4) is not read",
    "llama-4-maverick-17b-128e": "Llama 4 (text_config of llama4) is not read",
    "deepseek-v2-lite": "its own test uses the published config (no query compression)",
}


def test_every_catalog_shape_counts_to_its_published_size(catalog: Catalog) -> None:
    """Counting a preset's shape gives the preset's parameter count within 1 % (the counts
    that cannot be compared are listed with the reason)."""
    off = {}
    for preset in catalog.models.values():
        if preset.id in NOT_COMPARABLE:
            continue
        total, _ = count_params(architecture(_config_like(preset), preset.id))
        if abs(total / 1e9 / preset.params_b - 1) > 0.01:
            off[preset.id] = (total / 1e9, preset.params_b)
    assert off == {}


def test_a_folder_holding_config_json_is_the_same_model(catalog: Catalog) -> None:
    by_file = shaped(catalog, str(config("qwen2.5-7b")))
    by_folder = shaped(catalog, str(HF / "qwen2.5-7b"))
    assert by_file.model_dump(exclude={"label", "sources"}) == by_folder.model_dump(
        exclude={"label", "sources"})
    assert by_folder.label == str(HF / "qwen2.5-7b")


# ------------------------------------------------------------------ the same memory
@pytest.mark.parametrize("method", ["full", "lora", "qlora", "inference"])
@pytest.mark.parametrize("folder", ["llama-3.1-8b", "qwen2.5-7b", "mixtral-8x7b"])
def test_estimate_memory_of_a_config_equals_its_preset(runner: CliRunner, folder: str,
                                                        method: str) -> None:
    """`estimate memory --model PATH` gives the memory of `--model ID` exactly."""
    args = ["estimate", "memory", "--method", method, "--seq-len", "4096", "--format", "json"]
    by_path = json.loads(run(runner, *args, "--model", str(config(folder))).stdout)
    by_id = json.loads(run(runner, *args, "--model", SAME_AS_PRESET[folder]).stdout)
    assert by_path.pop("model") == str(config(folder))
    assert by_id.pop("model") == SAME_AS_PRESET[folder]
    assert by_path == by_id


def _decision(runner: CliRunner, *args: str) -> str:
    """The decision without its id, and without the shape a config was read into (which a
    catalog id does not carry; the tests of the shape answer are in test_replay_inputs)."""
    result = run(runner, "recommend", *args, "--format", "json", "--no-audit")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    data.pop("decision_id")
    data["answers"].pop("model_shape", None)
    return json.dumps(data, sort_keys=True)


@pytest.mark.parametrize("folder", ["llama-3.1-8b", "qwen2.5-7b", "mixtral-8x7b"])
def test_recommend_on_a_config_decides_as_on_its_preset(runner: CliRunner, folder: str,
                                                         tmp_path: Path) -> None:
    """`--set model=PATH` and an answers file's `model: PATH` decide exactly as the catalog
    id does; only the model's name (the path) differs."""
    path, model_id = str(config(folder)), SAME_AS_PRESET[folder]
    work = ["--set", "training_tokens_b=0.5", "--set", "runs_per_year=12"]
    by_id = _decision(runner, "--set", f"model={model_id}", *work)
    by_set = _decision(runner, "--set", f"model={path}", *work)
    answers = tmp_path / "answers.yaml"
    answers.write_text(f"model: {path}\ntraining_tokens_b: 0.5\nruns_per_year: 12\n")
    by_file = _decision(runner, "--answers", str(answers))
    by_flag = _decision(runner, *work, "--model", path)
    assert path in by_set
    assert by_set.replace(json.dumps(path)[1:-1], model_id) == by_id
    assert by_file == by_set == by_flag


def test_model_flag_replaces_the_files_model(runner: CliRunner, tmp_path: Path) -> None:
    """`--model` names the model in place of the file's, even one given as a size."""
    answers = tmp_path / "answers.yaml"
    answers.write_text("model_params_b: 70\ntraining_tokens_b: 0.5\nruns_per_year: 12\n")
    path = str(config("llama-3.1-8b"))
    by_flag = _decision(runner, "--answers", str(answers), "--model", path)
    by_id = _decision(runner, "--answers", str(answers), "--model", "llama-3.1-8b")
    assert by_flag.replace(json.dumps(path)[1:-1], "llama-3.1-8b") == by_id


def test_model_flag_with_set_model_is_refused(runner: CliRunner) -> None:
    line = error_line(run(runner, "recommend", "--no-audit", "--set", "model=qwen3-8b",
                          "--model", str(config("llama-3.1-8b")))).replace("see cli ", "see ")
    assert line == ("error: Invalid value for '--set': --model names the model; do not also "
                    "give --set model= or --set model_params_b= (see recommend --help)")


def test_model_flag_names_itself_for_a_missing_config(runner: CliRunner,
                                                      tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "config.json"
    line = error_line(run(runner, "recommend", "--no-audit", "--model", str(missing)))
    line = line.replace("see cli ", "see ")
    assert line == f"error: --model: {missing}: file not found"


# ------------------------------------------------------------------ the Hub
@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A local stand-in Hub at HF_ENDPOINT serving meta-llama/Llama-3.1-8B's config."""
    with fake_hub() as server:
        server.serve("meta-llama/Llama-3.1-8B", config("llama-3.1-8b"))
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.setenv("HF_HUB_DOWNLOAD_TIMEOUT", "0.5")
        yield server


CONFIG_URL = "/meta-llama/Llama-3.1-8B/resolve/main/config.json"


def test_a_hub_id_reads_the_hub_config(runner: CliRunner, hub: FakeHub) -> None:
    args = ["estimate", "memory", "--method", "qlora", "--format", "json"]
    by_hub = json.loads(run(runner, *args, "--model", "meta-llama/Llama-3.1-8B").stdout)
    by_id = json.loads(run(runner, *args, "--model", "llama-3.1-8b").stdout)
    assert hub.requests == [(CONFIG_URL, None)]
    assert by_hub.pop("model") == "meta-llama/Llama-3.1-8B"
    by_id.pop("model")
    assert by_hub == by_id


def test_a_hub_token_goes_to_the_endpoint(runner: CliRunner, hub: FakeHub,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    run(runner, "estimate", "memory", "--method", "qlora", "--model", "meta-llama/Llama-3.1-8B")
    assert hub.requests == [(CONFIG_URL, "Bearer hf_test")]


def hub_error(runner: CliRunner, repo_id: str) -> str:
    line = error_line(run(runner, "estimate", "memory", "--method", "qlora", "--model", repo_id))
    prefix = (f"error: --model: {repo_id}: not a local file or folder, and its config.json "
              "could not be fetched from the Hugging Face Hub (")
    suffix = "); download it and give its path"
    assert line.startswith(prefix) and line.endswith(suffix), line
    return line[len(prefix):-len(suffix)]


def test_a_hub_id_the_hub_does_not_have_is_one_line(runner: CliRunner, hub: FakeHub) -> None:
    assert hub_error(runner, "Qwen/Qwen2-0.5B") == "HTTP 404: no such model or file"


def test_a_hub_that_never_answers_times_out(runner: CliRunner, hub: FakeHub) -> None:
    """HF_HUB_DOWNLOAD_TIMEOUT bounds every wait (before: no timeout, > 300 s)."""
    assert hub_error(runner, "slow/never") == (
        "no answer within 0.5 s (HF_HUB_DOWNLOAD_TIMEOUT)")


def test_a_declared_oversized_config_is_refused_before_its_body(runner: CliRunner,
                                                                hub: FakeHub) -> None:
    """A 200 MB Content-Length is refused from the headers: (almost) nothing of the body is
    read (before: the whole file was downloaded, then refused)."""
    assert hub_error(runner, "big/declared") == (
        "the server declares 209,715,200 bytes; the limit is 2,000,000")


def test_an_undeclared_oversized_config_stops_at_the_limit(runner: CliRunner,
                                                           hub: FakeHub) -> None:
    """With no length, the body is read in pieces and dropped past the limit: the server
    gets to send the limit and what the sockets buffer, not the 200 MB."""
    assert hub_error(runner, "big/undeclared") == (
        "stopped after 2,000,000 bytes: the limit for a config")
    hub.stop.set()  # the handler may still be writing into the buffers; let it end
    assert hub.finished.wait(timeout=60)
    assert hub.sent["/big/undeclared/resolve/main/config.json"] < 64 * 1024 * 1024


def test_hf_hub_offline_fetches_nothing(runner: CliRunner, hub: FakeHub,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub_error(runner, "meta-llama/Llama-3.1-8B") == (
        "HF_HUB_OFFLINE is set: nothing is fetched")
    assert hub.requests == []


@pytest.mark.parametrize("endpoint", ["file:///etc", "ftp://example.org"])
def test_an_endpoint_that_is_not_http_is_refused(runner: CliRunner, hub: FakeHub,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 endpoint: str) -> None:
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    line = error_line(run(runner, "estimate", "memory", "--method", "qlora", "--model",
                          "meta-llama/Llama-3.1-8B"))
    assert line == (f"error: --model: meta-llama/Llama-3.1-8B: HF_ENDPOINT must be an http or "
                    f"https address, not {endpoint!r}")


def test_a_hub_id_in_a_real_process_offline() -> None:
    """Offline (HF_HUB_OFFLINE=1, so nothing is fetched): exit 2, one line."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "estimate", "memory", "--method", "qlora",
         "--model", "meta-llama/Llama-3.1-8B"],
        capture_output=True, text=True, timeout=60, check=False, env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("error: --model: meta-llama/Llama-3.1-8B: not a local file "
                                  "or folder")


def test_recommend_model_flag_in_a_real_process(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "recommend", "--model", str(HF / "qwen2.5-7b"),
         "--set", "training_tokens_b=0.5", "--no-audit", "--format", "json"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answers"]["model"] == str(HF / "qwen2.5-7b")


def test_a_config_path_in_a_real_process() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "estimate", "memory", "--method", "qlora",
         "--model", str(HF / "mixtral-8x7b"), "--format", "json"],
        capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["params_b"] == 46.7


# ------------------------------------------------------------------ bad configs
def _llama(**changes: Any) -> dict[str, Any]:
    data = json.loads(config("llama-3.1-8b").read_text())
    return {k: v for k, v in (data | changes).items() if v is not ...}


BAD_CONFIGS: dict[str, tuple[Any, str]] = {
    "list": ([1, 2], "expected a JSON object of model settings, got list"),
    "no-model-type": (_llama(model_type=...), "model_type: required key is missing; is this "
                                              "a Hugging Face model config.json?"),
    "unknown-model-type": (_llama(model_type="gpt2"), "model_type: gpt2 is not a model type "
                           "this tool reads; it reads deepseek_v2, deepseek_v3, gemma, gemma2, "
                           "gemma3 (text_config), gemma3_text, llama, mistral, mixtral, phi3, "
                           "qwen2, qwen2_moe, qwen3, qwen3_moe"),
    "list-model-type": (_llama(model_type=["llama"]), 'model_type: ["llama"] is not a model '
                        "type this tool reads; it reads deepseek_v2, deepseek_v3, gemma, "
                        "gemma2, gemma3 (text_config), gemma3_text, llama, mistral, mixtral, "
                        "phi3, qwen2, qwen2_moe, qwen3, qwen3_moe"),
    "no-hidden-size": (_llama(hidden_size=...), "hidden_size: required key is missing"),
    "bool-layers": (_llama(num_hidden_layers=True),
                    "num_hidden_layers: expected a whole number, got bool true"),
    "text-vocab": (_llama(vocab_size="128256"),
                   "vocab_size: expected a whole number, got str 128256"),
    "zero-layers": (_llama(num_hidden_layers=0), "num_hidden_layers: expected a whole number "
                                                 "from 1 to 10,000,000, got 0"),
    "huge-width": (_llama(hidden_size=10**300), "hidden_size: expected a whole number from 1 "
                                                f"to 10,000,000, got {10**300:,}"),
    "too-many-layers": (_llama(num_hidden_layers=5000),
                        "num_hidden_layers: input should be less than or equal to 1000"),
    "tiny-vocab": (_llama(vocab_size=32),
                   "vocab_size: input should be greater than or equal to 1000"),
    "kv-heads": (_llama(num_key_value_heads=5),
                 "num_key_value_heads: num_attention_heads must be a multiple of it"),
    "tied-text": (_llama(tie_word_embeddings="no"),
                  "tie_word_embeddings: expected true or false, got no"),
    "top-k": ({**json.loads(config("mixtral-8x7b").read_text()), "num_experts_per_tok": 9},
              "num_experts_per_tok: 9 is more than num_local_experts"),
    "gemma3-without-text-config": ({"model_type": "gemma3"}, "text_config: required key is "
                                   "missing (the text decoder's config)"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_a_bad_config_is_one_line_naming_the_file_and_key(runner: CliRunner, tmp_path: Path,
                                                          case: str) -> None:
    data, message = BAD_CONFIGS[case]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    line = error_line(run(runner, "estimate", "memory", "--method", "lora", "--model",
                          str(path)))
    assert line == f"error: --model: {path}: {message}"


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", ":1: JSON error: Expecting property name enclosed in double quotes"),
    ('{"model_type": "llama", "model_type": "qwen2"}', ":1: JSON error: duplicate key "
                                                       "'model_type'"),
    ("[" * 100 + "]" * 100, ": nesting deeper than 40 levels"),
    ('{"vocab_size": NaN}', ": NaN is not a number this tool accepts"),
])
def test_a_config_that_is_no_json_is_one_line(runner: CliRunner, tmp_path: Path, text: str,
                                              message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    line = error_line(run(runner, "estimate", "memory", "--method", "lora", "--model",
                          str(path)))
    assert line == f"error: --model: {path}{message}"


def test_missing_files_and_folders(runner: CliRunner, tmp_path: Path) -> None:
    def line(model: str) -> str:
        return error_line(run(runner, "estimate", "memory", "--method", "lora", "--model",
                              model))

    assert line(f"{tmp_path}/nothere/config.json") == (
        f"error: --model: {tmp_path}/nothere/config.json: file not found")
    assert line(str(tmp_path)) == f"error: --model: {tmp_path}: the folder holds no config.json"
    (tmp_path / "config.json").mkdir()
    assert line(str(tmp_path)) == (
        f"error: --model: {tmp_path}/config.json: is a directory, expected a file")
    assert line(f"{tmp_path}/{'x' * 300}/config.json").startswith(
        f"error: --model: {tmp_path}/{'x' * 300}/config.json: cannot read (File name too long")


def test_a_fifo_is_refused_without_waiting(runner: CliRunner, tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    line = error_line(run(runner, "estimate", "memory", "--method", "lora", "--model",
                          str(fifo)))
    assert line == f"error: --model: {fifo}: is a FIFO (named pipe), expected a regular file"


def test_an_oversized_config_is_refused_unread(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"pad": "' + "x" * 2_100_000 + '"}')
    line = error_line(run(runner, "estimate", "memory", "--method", "lora", "--model",
                          str(path)))
    assert line == f"error: --model: {path}: file is 2,100,011 bytes; the limit is 2,000,000"


def test_a_bad_config_in_answers_names_the_answers_file_too(runner: CliRunner,
                                                            tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps(_llama(num_key_value_heads=5)))
    answers = tmp_path / "answers.yaml"
    answers.write_text(f"workload: fine-tune\nmodel: {bad}\n")
    message = "num_key_value_heads: num_attention_heads must be a multiple of it"
    by_file = error_line(run(runner, "recommend", "--answers", str(answers), "--no-audit"))
    assert by_file == f"error: {answers}:2: model: {bad}: {message}"
    by_set = error_line(run(runner, "recommend", "--set", f"model={bad}", "--no-audit"))
    assert by_set == f"error: --set: model: {bad}: {message}"


def test_a_refused_config_records_nothing(runner: CliRunner, tmp_path: Path,
                                          isolated_audit_store: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps(_llama(hidden_size=...)))
    error_line(run(runner, "recommend", "--set", f"model={bad}"))
    assert not isolated_audit_store.exists()


# ------------------------------------------------------------------ the answers schema
@pytest.mark.parametrize(("model", "valid"), [
    ("llama-3.1-8b", True),
    ("tests/fixtures/hf/llama-3.1-8b/config.json", True),
    ("./my-model", True),
    ("meta-llama/Llama-3.1-8B", True),
    (None, True),
    ("llama-9-9000b", False),
])
def test_the_answers_schema_takes_a_config_as_the_model(catalog: Catalog, model: str | None,
                                                        valid: bool) -> None:
    """Editors checking an answers file against schemas/answers.schema.json accept what
    the loader accepts."""
    from jsonschema import Draft202012Validator

    from engine.tools.schema import schemas

    validator = Draft202012Validator(schemas(catalog)["answers"])
    assert validator.is_valid({"model": model}) is valid
