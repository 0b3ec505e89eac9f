"""Answers files and ``--set`` overrides: typed, defaulted, and refused with exact messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.answers.model import Answers, answers_to_data, load_answers, validate_answers
from engine.catalog.load import Catalog
from engine.errors import AnswerError, InputError


def write(tmp_path: Path, text: str, name: str = "answers.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path | None, catalog: Catalog, *overrides: str) -> str:
    with pytest.raises(AnswerError) as exc:
        load_answers(path, list(overrides), catalog)
    return str(exc.value)


# ------------------------------------------------------------------ loading


def test_yaml_file_with_defaults_filled(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: llama-2-13b\nbudget_usd: 12000\nhours_per_year: 3500\n")
    answers = load_answers(path, [], catalog)
    assert answers.model == "llama-2-13b"
    assert answers.budget_usd == 12000.0 and isinstance(answers.budget_usd, float)
    assert answers.hours_per_year == 3500.0
    # defaults from questions.yaml
    assert answers.workload == "fine-tune"
    assert answers.method == "auto"
    assert answers.seq_len == 2048
    assert answers.gradient_checkpointing == "auto"
    assert answers.allowed_regions == ()
    assert answers.electricity_usd_per_kwh == 0.12
    assert answers.planned_gpu is None


def test_a_path_given_as_a_string_is_read_like_a_path(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: llama-2-13b\nhours_per_year: 3500\n")
    assert load_answers(str(path), [], catalog) == load_answers(path, [], catalog)


def test_json_file(catalog: Catalog, tmp_path: Path) -> None:
    data = {"workload": "pretrain", "model_params_b": 3, "data_residency": "region",
            "allowed_regions": ["eu", "uk", "eu"], "upfront_capex": True,
            "training_tokens_b": 60}
    path = write(tmp_path, json.dumps(data), "answers.json")
    answers = load_answers(path, [], catalog)
    assert answers.workload == "pretrain"
    assert answers.model is None and answers.model_params_b == 3.0
    assert answers.allowed_regions == ("eu", "uk")  # de-duplicated, order kept
    assert answers.upfront_capex is True


@pytest.mark.parametrize(("text", "name"), [("", "answers.yaml"), ("# only a comment\n",
                                             "answers.yaml"), ("{}", "answers.json"),
                                            ("budget_usd: 9000\n", "answers.yaml")])
def test_a_file_that_names_no_model_is_refused(catalog: Catalog, tmp_path: Path, text: str,
                                               name: str) -> None:
    path = write(tmp_path, text, name)
    assert refused(path, catalog) == f"{path}: names no model: give model or model_params_b"


def test_no_file_and_no_model_is_refused(catalog: Catalog) -> None:
    expected = ("the answers name no model: give --set model=ID or --set model_params_b=N, "
                "or --answers FILE")
    assert refused(None, catalog) == expected
    assert refused(None, catalog, "budget_usd=9000") == expected


def test_the_model_and_the_work_are_enough_everything_else_has_a_default(
        catalog: Catalog, tmp_path: Path) -> None:
    from_file = load_answers(write(tmp_path, "model: mistral-7b\nhours_per_year: 500\n"), [],
                             catalog)
    from_set = load_answers(None, ["model=mistral-7b", "hours_per_year=500"], catalog)
    assert from_file == from_set
    assert from_set.budget_usd == catalog.question("budget_usd").default


def test_answers_round_trip(catalog: Catalog, tmp_path: Path) -> None:
    answers = load_answers(None, ["model=mistral-7b", "data_residency=region",
                                  "allowed_regions=eu,us", "work_unknown=yes"], catalog)
    path = write(tmp_path, json.dumps(answers_to_data(answers)), "dumped.json")
    assert load_answers(path, [], catalog) == answers


def test_set_overrides_file_and_is_typed(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "hours_per_year: 100\nupfront_capex: false\nseq_len: 4096\n")
    answers = load_answers(path, [
        "hours_per_year=1,500", "upfront_capex=yes", "gradient_checkpointing=true",
        "seq_len=8192", "data_residency=region", "allowed_regions=eu, us",
        "model=null", "model_params_b=13", "planned_gpu=rtx-4090", "planned_gpu_count=2",
    ], catalog)
    assert answers.hours_per_year == 1500.0
    assert answers.upfront_capex is True
    assert answers.gradient_checkpointing is True
    assert answers.seq_len == 8192 and isinstance(answers.seq_len, int)
    assert answers.allowed_regions == ("eu", "us")
    assert answers.model is None and answers.model_params_b == 13.0
    assert answers.planned_gpu == "rtx-4090" and answers.planned_gpu_count == 2


def test_model_params_b_alone_clears_the_default_model(catalog: Catalog) -> None:
    answers = load_answers(None, ["model_params_b=70", "hours_per_year=10"], catalog)
    assert answers.model is None and answers.model_params_b == 70.0


def test_validate_answers_returns_frozen_model(catalog: Catalog) -> None:
    answers = validate_answers({"budget_usd": 1, "work_unknown": True}, catalog)
    assert isinstance(answers, Answers)
    with pytest.raises(ValueError, match="frozen"):
        answers.budget_usd = 2  # type: ignore[misc]


# ------------------------------------------------------------------ refusals in a file


def test_unknown_key_did_you_mean(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "budget_usd: 10\nhours_per_yaer: 5\n")
    assert refused(path, catalog) == (
        f"{path}:2: hours_per_yaer: unknown answer; did you mean 'hours_per_year'?"
    )


def test_out_of_range_names_field_and_accepted_range(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: llama-2-7b\nhours_per_year: -5\n")
    assert refused(path, catalog) == (
        f"{path}:2: hours_per_year: -5 is out of range; "
        "expected a number from 0 to 10,000,000 GPU-hours/year"
    )


def test_out_of_range_int(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "seq_len: 32\n")
    assert refused(path, catalog) == (
        f"{path}:1: seq_len: 32 is out of range; expected a whole number from 64 to "
        "1,048,576 tokens"
    )


def test_fraction_for_an_int(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "micro_batch: 2.5\n")
    assert refused(path, catalog) == f"{path}:1: micro_batch: expected a whole number, got 2.5"


def test_wrong_type(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "budget_usd: lots\n")
    assert refused(path, catalog) == (
        f"{path}:1: budget_usd: expected a number from 0 to 10,000,000,000 USD, got 'lots'"
    )


def test_bool_is_not_a_number(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "budget_usd: true\n")
    assert refused(path, catalog) == (
        f"{path}:1: budget_usd: expected a number from 0 to 10,000,000,000 USD, got True"
    )


def test_number_is_not_a_bool(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "upfront_capex: 1\n")
    assert refused(path, catalog) == f"{path}:1: upfront_capex: expected true or false, got 1"


@pytest.mark.parametrize(("line", "expected"), [
    ("upfront_capex: 'false'", "upfront_capex: expected true or false, got the text 'false' "
                               "(write false without quotes)"),
    ('gradient_checkpointing: "True"', "gradient_checkpointing: expected auto, true or false, "
                                       "got the text 'True' (write true without quotes)"),
])
def test_a_quoted_boolean_is_named_as_text(catalog: Catalog, tmp_path: Path, line: str,
                                           expected: str) -> None:
    """YAML reads a quoted false as text: the refusal says so rather than "expected … false,
    got 'false'"."""
    path = write(tmp_path, line + "\n")
    assert refused(path, catalog) == f"{path}:1: {expected}"


def test_nan_refused_in_yaml(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: llama-2-7b\nbudget_usd: .nan\n")
    assert refused(path, catalog) == f"{path}:2: budget_usd: expected a finite number, got nan"


def test_nan_refused_in_json(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, '{"budget_usd": NaN}', "answers.json")
    assert refused(path, catalog) == f"{path}: NaN is not a number this tool accepts"


def test_bad_json(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, '{\n  "budget_usd" 5\n}', "answers.json")
    assert refused(path, catalog) == f"{path}:2: JSON error: Expecting ':' delimiter"


def test_unknown_model_did_you_mean(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: llama-2-7x\n")
    assert refused(path, catalog) == (
        f"{path}:1: model: unknown model 'llama-2-7x'; did you mean 'llama-2-7b'?; "
        "see `gpu-advisor catalog list models`"
    )


def test_unknown_planned_gpu(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "planned_gpu: rtx-4091\n")
    assert refused(path, catalog) == (
        f"{path}:1: planned_gpu: unknown gpu 'rtx-4091'; did you mean 'rtx-4090'?; "
        "see `gpu-advisor catalog list gpus`"
    )


def test_unknown_choice(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "method: qlroa\n")
    assert refused(path, catalog) == (
        f"{path}:1: method: expected one of auto, full, lora, qlora, got 'qlroa'"
    )


def test_unknown_region_in_list(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "data_residency: region\nallowed_regions: [eu, euu]\n")
    line = refused(path, catalog)
    assert line.startswith(
        f"{path}:2: allowed_regions: unknown value 'euu'; did you mean 'eu'?; "
        "expected any of us, eu, uk, ca, asia, au, cn, gb, ")
    assert "\n" not in line and line.endswith(", jp, kr, sg, in, tw, hk, id, my, th, vn, ph, "
                                               "ch, br, mx, cl, nz, il, ae, sa, qa, bh, za")


def test_both_model_and_model_params_b(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: llama-2-7b\nmodel_params_b: 7\n")
    assert refused(path, catalog) == (
        f"{path}:2: model_params_b: give either model or model_params_b, not both"
    )


def test_runs_as_a_count_and_a_length_say_the_year_they_mean(catalog: Catalog,
                                                              tmp_path: Path) -> None:
    """Six-hour runs on an A100, 24 a year: the work is the year's hours, in runs of six."""
    path = write(tmp_path, "model: llama-3.1-8b\nhours_per_run: 6\nhours_gpu: a100-80gb\n"
                           "runs_per_year: 24\n")
    assert refused(path, catalog) == (
        f"{path}:4: runs_per_year: give the runs as hours_per_run or as runs_per_year, not "
        "both; 24 runs of 6 hours are hours_per_year: 144 with hours_per_run: 6")
    path = write(tmp_path, "model: llama-3.1-8b\nhours_per_year: 144\nhours_per_run: 6\n"
                           "runs_per_year: 24\n")
    assert refused(path, catalog) == (
        f"{path}:4: runs_per_year: give the runs as hours_per_run or as runs_per_year, not both")


def test_neither_model_nor_size(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: null\n")
    assert refused(path, catalog) == (
        f"{path}:1: model: a catalog model id or model_params_b is required"
    )


def test_region_residency_without_regions(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: mistral-7b\ndata_residency: region\n")
    assert refused(path, catalog) == (
        f"{path}:1: allowed_regions: data_residency is region: list at least one region"
    )


def test_regions_without_region_residency(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: mistral-7b\nallowed_regions: [eu]\n")
    assert refused(path, catalog) == (
        f"{path}:2: allowed_regions: only applies when data_residency is region (it is 'none')"
    )


@pytest.mark.parametrize(("text", "kind"), [("- a\n- b\n", "list"), ("just text\n", "str")])
def test_non_mapping_file(catalog: Catalog, tmp_path: Path, text: str, kind: str) -> None:
    path = write(tmp_path, text)
    assert refused(path, catalog) == f"{path}: expected a mapping of answers, got {kind}"


def test_missing_file(catalog: Catalog, tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    assert refused(path, catalog) == f"{path}: file not found"


def test_alias_refused_in_answers(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "budget_usd: &b 10\nhours_per_year: *b\n")
    assert refused(path, catalog) == f"{path}:1: YAML anchors and aliases are not allowed"


def test_file_errors_are_input_errors(catalog: Catalog, tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        load_answers(write(tmp_path, "x: 1\n"), [], catalog)
    assert exc.value.exit_code == 2
    assert (exc.value.line, exc.value.field) == (1, "x")


# ------------------------------------------------------------------ refusals in --set


def test_set_without_equals(catalog: Catalog) -> None:
    assert refused(None, catalog, "hours_per_year") == (
        "--set: expected key=value, got 'hours_per_year'"
    )


def test_set_with_empty_key(catalog: Catalog) -> None:
    assert refused(None, catalog, "=5") == "--set: expected key=value, got '=5'"


def test_set_unknown_key(catalog: Catalog) -> None:
    assert refused(None, catalog, "hours_per_yaer=4") == (
        "--set: hours_per_yaer: unknown answer; did you mean 'hours_per_year'?"
    )


def test_set_wrong_type(catalog: Catalog) -> None:
    assert refused(None, catalog, "hours_per_year=lots") == (
        "--set: hours_per_year: expected a number from 0 to 10,000,000 GPU-hours/year, "
        "got 'lots'"
    )


def test_set_bad_bool(catalog: Catalog) -> None:
    assert refused(None, catalog, "upfront_capex=maybe") == (
        "--set: upfront_capex: expected true or false, got 'maybe'"
    )


def test_set_nan(catalog: Catalog) -> None:
    assert refused(None, catalog, "budget_usd=nan") == (
        "--set: budget_usd: expected a finite number, got nan"
    )


def test_set_error_beats_file_location(catalog: Catalog, tmp_path: Path) -> None:
    path = write(tmp_path, "model: llama-2-7b\n")
    assert refused(path, catalog, "model_params_b=7") == (
        "--set: model_params_b: give either model or model_params_b, not both"
    )


# ------------------------------------------------------------------ numbers, written one way


@pytest.mark.parametrize(("text", "value"), [
    ("1500", 1500.0), ("1_500", 1500.0), ("1,500", 1500.0), ("2,500,000", 2_500_000.0),
    ("1,500.25", 1500.25), ("2.5", 2.5), (".5", 0.5), ("7.", 7.0), ("1e3", 1000.0),
    ("+12", 12.0), (" 40 ", 40.0),
])
def test_set_numbers_people_write(catalog: Catalog, text: str, value: float) -> None:
    answers = load_answers(None, ["model=mistral-7b", f"budget_usd={text}", "work_unknown=y"],
                           catalog)
    assert answers.budget_usd == value and isinstance(answers.budget_usd, float)


def test_set_whole_numbers_stay_exact(catalog: Catalog) -> None:
    answers = load_answers(None, ["model=mistral-7b", "seq_len=4,096", "micro_batch=1e1",
                                  "training_tokens_b=0.1"],
                           catalog)
    assert (answers.seq_len, answers.micro_batch) == (4096, 10)


@pytest.mark.parametrize("text", ["2,5", "1,50,000", "2,5000", ",500", "1,500,00", "1,5.0"])
def test_set_a_comma_that_is_not_a_thousands_separator_is_refused(catalog: Catalog,
                                                                 text: str) -> None:
    assert refused(None, catalog, "model=mistral-7b", f"budget_usd={text}") == (
        f"--set: budget_usd: '{text}' is not a number: a comma only separates thousands "
        "(2,500); write decimals with a dot (2.5)"
    )


@pytest.mark.parametrize("text", ["1 500", "1__500", "_1", "0x10", "١٢", "1.2.3", "1e", "--1"])
def test_set_other_spellings_are_not_numbers(catalog: Catalog, text: str) -> None:
    assert refused(None, catalog, "model=mistral-7b", f"budget_usd={text}") == (
        f"--set: budget_usd: expected a number from 0 to 10,000,000,000 USD, got '{text}'"
    )


def test_set_a_huge_number_is_out_of_range_not_an_overflow(catalog: Catalog) -> None:
    huge = "2" + "0" * 308
    assert refused(None, catalog, "model=mistral-7b", f"budget_usd={huge}") == (
        "--set: budget_usd: a 309-digit number is out of range; expected a number from 0 to "
        "10,000,000,000 USD"
    )
    assert refused(None, catalog, "model=mistral-7b", f"seq_len={huge}") == (
        "--set: seq_len: a 309-digit number is out of range; expected a whole number from 64 "
        "to 1,048,576 tokens"
    )
    assert refused(None, catalog, "model=mistral-7b", f"budget_usd={'9' * 401}") == (
        "--set: budget_usd: a number of 401 characters is too long"
    )


def test_the_questionnaire_reads_numbers_the_same_way(catalog: Catalog) -> None:
    from engine.answers.questionnaire import Questionnaire

    questionnaire = Questionnaire(catalog, {})
    check = questionnaire.validator(catalog.question("budget_usd"))
    assert check("2,500") is None
    assert check("2,5") == ("'2,5' is not a number: a comma only separates thousands (2,500); "
                            "write decimals with a dot (2.5)")
    assert questionnaire.parse(catalog.question("budget_usd"), "2,500") == 2500.0


@pytest.mark.parametrize(("text", "name", "message"), [
    ("model: llama-2-7b\nbudget_usd: 2" + "0" * 308 + "\n", "answers.yaml",
     ":2: budget_usd: a 309-digit number is out of range; expected a number from 0 to "
     "10,000,000,000 USD"),
    ('{"model": "llama-2-7b", "planned_gpu_count": 1' + "0" * 300 + "}", "answers.json",
     ": planned_gpu_count: a 301-digit number is out of range; expected a whole number from 1 "
     "to 100,000 GPUs"),
    ('{"model": "llama-2-7b", "budget_usd": 1e999}', "answers.json",
     ": budget_usd: expected a finite number, got inf"),
])
def test_numbers_beyond_a_float_are_out_of_range(catalog: Catalog, tmp_path: Path, text: str,
                                                 name: str, message: str) -> None:
    path = write(tmp_path, text, name)
    assert refused(path, catalog) == f"{path}{message}"


def test_validate_answers_refuses_a_huge_integer_cleanly(catalog: Catalog) -> None:
    """The shared validation (batch lines use it too) never overflows."""
    with pytest.raises(AnswerError) as exc:
        validate_answers({"model": "llama-2-7b", "hours_per_year": 10**400}, catalog)
    assert str(exc.value) == ("hours_per_year: a 401-digit number is out of range; expected a "
                              "number from 0 to 10,000,000 GPU-hours/year")


@pytest.mark.parametrize("value", ["llama\x1b[2J", "x\x9b31m", "a\rb"])
def test_set_a_control_character_in_a_text_answer_is_refused(catalog: Catalog,
                                                             value: str) -> None:
    code = next(f"U+{ord(c):04X}" for c in value if ord(c) < 32 or 127 <= ord(c) < 160)
    assert refused(None, catalog, f"model={value}") == (
        f"--set: model: control character {code} is not allowed")
