"""The Answers model is generated from catalog/questions.yaml: a new choice, bound or question
is an edit of that file alone, and a questionnaire the engine cannot read is refused cleanly."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal, get_type_hints

import pytest
from pydantic import ValidationError

from engine.answers.model import AnswerFields, Answers, answers_model, validate_answers
from engine.catalog.load import Catalog, load_catalog
from engine.errors import AnswerError, CatalogError
from engine.facts.build import build_facts
from engine.tools.schema import answers_schema

REPO = Path(__file__).parent.parent
PYTHON_TYPE = {"choice": str, "gpu": str, "model": str, "text": str, "int": int,
               "float": float, "bool": bool, "tristate": bool | str, "list": tuple[str, ...]}


def edit_questions(catalog_dir: Path, old: str, new: str) -> None:
    """Replace one exact piece of ``catalog_dir/questions.yaml``."""
    path = catalog_dir / "questions.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "engine", *args], capture_output=True,
                          text=True, timeout=60, cwd=REPO, check=False)


# ------------------------------------------------------------------ generated from the questions
def test_fields_follow_the_questions(catalog: Catalog) -> None:
    model = answers_model(catalog)
    # one field per question, and model_shape, which no question asks (--model fills it)
    assert list(model.model_fields) == ["model_shape", *(q.id for q in catalog.questions)]
    fields = model.model_fields
    assert fields["workload"].annotation == Literal["fine-tune", "pretrain"]
    assert fields["cloud_ecosystem"].annotation == Literal["none", "aws", "azure", "gcp"]
    assert fields["method"].default == "auto"
    assert fields["allowed_regions"].default == ()
    for question in catalog.questions:
        assert fields[question.id].title == question.prompt


@pytest.mark.parametrize(("data", "field"), [
    ({"workload": "train"}, "workload"),
    ({"seq_len": 32}, "seq_len"),
    ({"budget_usd": float("nan")}, "budget_usd"),
    ({"model": "llama-9"}, "model"),
    ({"allowed_regions": ["mars"]}, "allowed_regions"),
    ({"gradient_checkpointing": "sometimes"}, "gradient_checkpointing"),
    ({"colour": "red"}, "colour"),
])
def test_the_model_itself_holds_choices_and_bounds(catalog: Catalog, data: dict[str, Any],
                                                  field: str) -> None:
    """What the questionnaire forbids, the model refuses too (answers built without checks)."""
    with pytest.raises(ValidationError) as info:
        answers_model(catalog).model_validate(data)
    assert info.value.errors()[0]["loc"][0] == field


def test_answer_fields_are_the_questions_types(catalog: Catalog) -> None:
    """The typed view type checkers use is what questions.yaml makes of each answer."""
    questions = {q.id: q for q in catalog.questions}
    for name, declared in get_type_hints(AnswerFields).items():
        question = questions[name]
        python = PYTHON_TYPE[question.type]
        assert declared == (python | None if question.nullable else python), name


def test_equal_answers_compare_equal_across_catalog_loads(catalog: Catalog) -> None:
    first = validate_answers({"model": "mistral-7b", "hours_per_year": 100}, catalog)
    second = validate_answers({"model": "mistral-7b", "hours_per_year": 100}, load_catalog())
    assert first == second and type(first) is type(second)
    assert isinstance(first, Answers)


def test_answers_pickle(catalog: Catalog) -> None:
    answers = validate_answers({"model": "mistral-7b", "hours_per_year": 100,
                                "data_residency": "region", "allowed_regions": ["eu"]}, catalog)
    again = pickle.loads(pickle.dumps(answers))
    assert again == answers and again.allowed_regions == ("eu",)


# ------------------------------------------------------------------ a catalog of one's own
def test_a_new_choice_needs_no_python(catalog_copy: Path) -> None:
    """Before the model was generated, this ended in a pydantic traceback (a Literal)."""
    edit_questions(catalog_copy, "choices: [none, aws, azure, gcp]",
                   "choices: [none, aws, azure, gcp, oracle]")
    custom = load_catalog(catalog_copy)
    answers = validate_answers({"model": "mistral-7b", "hours_per_year": 100,
                                "cloud_ecosystem": "oracle"}, custom)
    assert answers.cloud_ecosystem == "oracle"
    assert "oracle" in answers_schema(custom)["properties"]["cloud_ecosystem"]["enum"]
    done = run_cli("recommend", "--catalog", str(catalog_copy), "--set", "model=mistral-7b",
                   "--set", "hours_per_year=100",
                   "--set", "cloud_ecosystem=oracle", "--no-audit", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert '"cloud_ecosystem": "oracle"' in done.stdout


def test_a_new_question_is_an_answer_and_a_fact(catalog_copy: Path) -> None:
    path = catalog_copy / "questions.yaml"
    path.write_text(path.read_text(encoding="utf-8") + (
        "  - id: team_size\n    type: int\n    prompt: How many people train models?\n"
        "    help: Headcount.\n    default: 3\n    min: 1\n    max: 1000\n"), encoding="utf-8")
    custom = load_catalog(catalog_copy)
    answers = validate_answers({"model": "mistral-7b", "hours_per_year": 100, "team_size": 12},
                               custom)
    assert answers.model_dump()["team_size"] == 12
    assert build_facts(answers, custom).values["team_size"] == 12
    with pytest.raises(AnswerError) as info:
        validate_answers({"model": "mistral-7b", "hours_per_year": 100, "team_size": 0},
                         custom)
    assert str(info.value) == ("team_size: 0 is out of range; expected a whole number from 1 "
                               "to 1,000")


@pytest.mark.parametrize(("old", "new", "message"), [
    ("  - id: seq_len\n    type: int", "  - id: sequence_length\n    type: int",
     "seq_len: the engine reads the answer 'seq_len' (int); it must stay a question"),
    ("  - id: micro_batch\n    type: int", "  - id: micro_batch\n    type: float",
     "micro_batch: the engine reads this answer as int; a float question gives float"),
    ("    choices: [fine-tune, pretrain]\n    default: fine-tune",
     "    choices: [fine-tune, pretrain]\n    default: train",
     "workload: default: expected one of fine-tune, pretrain, got 'train'"),
    ("    default: llama-3.1-8b", "    default: no-such-thing",
     "model: default: unknown model 'no-such-thing'; see `gpu-advisor catalog list models`"),
    ("  - id: proprietary_data\n", "  - id: copy\n    type: bool\n    prompt: p\n    help: h\n"
     "  - id: proprietary_data\n",
     "copy: this id is reserved (a name of the answers model); choose another"),
], ids=["dropped", "retyped", "bad-choice-default", "bad-model-default", "reserved-id"])
def test_a_questionnaire_the_engine_cannot_read_is_refused(
        catalog_copy: Path, old: str, new: str, message: str) -> None:
    edit_questions(catalog_copy, old, new)
    custom = load_catalog(catalog_copy)
    expected = f"catalog/questions.yaml: {message}"
    with pytest.raises(CatalogError) as info:
        validate_answers({"model": "mistral-7b", "hours_per_year": 100}, custom)
    assert str(info.value) == expected
    done = run_cli("recommend", "--catalog", str(catalog_copy), "--set", "model=mistral-7b",
                   "--set", "hours_per_year=100",
                   "--no-audit")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"error: {expected}\n"


def test_a_retyped_answer_says_what_it_gives(catalog_copy: Path) -> None:
    edit_questions(catalog_copy, "  - id: hours_per_year\n    type: float",
                   "  - id: hours_per_year\n    type: int")
    with pytest.raises(CatalogError) as info:
        validate_answers({"model": "mistral-7b", "hours_per_year": 100}, load_catalog(catalog_copy))
    assert str(info.value) == ("catalog/questions.yaml: hours_per_year: the engine reads this "
                               "answer as float | None; a nullable int question gives int | None")
