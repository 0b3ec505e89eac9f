"""No silent work: the amount of work is given, or "I don't know yet" is said explicitly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.answers.questionnaire import Questionnaire
from engine.catalog.load import Catalog
from engine.cli import cli
from engine.errors import AnswerError


def run(tmp_path: Path, text: str, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "answers.yaml"
    path.write_text(text)
    result = CliRunner().invoke(cli, ["recommend", "--no-audit", "--answers", str(path), *args])
    return result.exit_code, result.stdout, result.stderr


def test_no_amount_of_work_is_refused_in_one_line(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, "model: llama-3.1-8b\n")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "answers.yaml" in err and "the amount of work is required" in err
    assert "work_unknown: true" in err


def test_not_knowing_it_yet_is_said_at_the_top(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path, "model: llama-3.1-8b\nwork_unknown: true\n")
    assert code == 0
    lines = out.splitlines()
    top = "\n".join(lines[:6])
    assert "⚠ Assumed work" in top
    work = next(line for line in lines if line.startswith("Work:"))
    assert "(assumed, see above)" in work and "you gave no amount" not in work


def test_not_knowing_it_beside_an_amount_is_refused(tmp_path: Path) -> None:
    code, _, err = run(tmp_path, "model: llama-3.1-8b\nhours_per_year: 500\nwork_unknown: true\n")
    assert code == 2 and "work_unknown" in err and "only applies" in err


def test_the_json_says_the_hours_are_assumed(tmp_path: Path) -> None:
    code, out, _ = run(tmp_path, "model: llama-3.1-8b\nwork_unknown: true\n", "--format", "json")
    assert code == 0
    assert json.loads(out)["estimates"]["work"]["hours_assumed"] is True


def test_ask_with_defaults_does_not_invent_the_work(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["ask", "--no-audit", "--defaults", "--set",
                                      "model=mistral-7b"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "the amount of work is required" in result.stderr
    assert list(tmp_path.iterdir()) == []                   # no record of refused input


def test_the_questionnaire_refuses_enter_through_both_work_questions(catalog: Catalog) -> None:
    """Enter on tokens and on hours leads to "go on without it?"; Enter there (no) is
    refused with what to give, and only an explicit yes goes on."""
    questionnaire = Questionnaire(catalog, {"workload": "fine-tune", "model": "llama-3.1-8b",
                                            "method": "lora"})
    for field in ("training_tokens_b", "hours_per_year"):
        question = questionnaire.next()
        assert question is not None and question.id == field
        questionnaire.record(question, questionnaire.read(question, ""))
    question = questionnaire.next()
    assert question is not None and question.id == "work_unknown"
    with pytest.raises(AnswerError, match="the amount of work is required"):
        questionnaire.read(question, "")
    assert questionnaire.read(question, "yes") is True
