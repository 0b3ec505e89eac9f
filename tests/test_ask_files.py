"""``ask``'s pieces below the command: prompts that fit 80 columns without breaking a word
and say how to get help and go back, and the answers file written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from engine.answers.answers_file import (
    HEADER,
    answers_data,
    check_writable,
    fresh_path,
    write_answers,
    written_by_ask,
)
from engine.answers.prompt import hint_for, wrap_note, wrap_prompt
from engine.answers.questionnaire import Questionnaire, prompt_text
from engine.catalog.load import Catalog
from engine.errors import InputError

# --- prompts ----------------------------------------------------------------------------------

@pytest.mark.parametrize("columns", [80, 60, 200])
def test_every_prompt_fits_without_breaking_a_word(catalog: Catalog, columns: int) -> None:
    q = Questionnaire(catalog, {})
    for question in catalog.questions:
        text, hint = prompt_text(question), hint_for(question, q.offer(question))
        lines = ("? " + wrap_prompt(text, hint, columns)).splitlines()
        assert all(len(line) <= min(columns, 80) - 1 for line in lines), lines
        assert " ".join(" ".join(lines)[2:].split()) == " ".join(f"{text} {hint}".split())
        assert hint in "\n".join(line.strip() for line in lines)     # never split


def test_the_hint_leaves_room_for_the_answer() -> None:
    wrapped = wrap_prompt("x " * 30 + "end?", "(Enter for 5000; ? help, < back)", 80)
    assert wrapped.splitlines()[-1] == "  (Enter for 5000; ? help, < back)"
    assert wrap_prompt("Short?", "(? help, < back)", 80) == "Short? (? help, < back)"


def test_every_prompt_says_help_and_back(catalog: Catalog) -> None:
    q = Questionnaire(catalog, {"model": None}, advanced=True)
    hints = {question.type: hint_for(question, q.offer(question))
             for question in catalog.questions}
    assert set(hints) >= {"choice", "list", "bool", "int", "float", "model", "gpu"}
    assert all("? help, < back" in hint for hint in hints.values())
    size = catalog.question("model_params_b")
    assert hint_for(size, q.offer(size)) == "(? help, < back)"   # no size: Enter is refused


def test_notes_are_wrapped_and_indented() -> None:
    note = wrap_note("word " * 40, 80)
    assert all(line.startswith("  ") and len(line) <= 80 for line in note.splitlines())


# --- the answers file -------------------------------------------------------------------------

def test_fresh_path_never_takes_an_existing_file(tmp_path: Path) -> None:
    assert fresh_path(tmp_path) == tmp_path / "gpu-advisor-answers.yaml"
    (tmp_path / "gpu-advisor-answers.yaml").write_text("")
    (tmp_path / "gpu-advisor-answers-2.yaml").symlink_to(tmp_path / "nowhere")
    assert fresh_path(tmp_path) == tmp_path / "gpu-advisor-answers-3.yaml"


def test_written_in_questionnaire_order_and_read_back(tmp_path: Path, catalog: Catalog) -> None:
    path = tmp_path / "a.yaml"
    data = answers_data({"allowed_regions": ("eu",), "workload": "fine-tune", "model": None},
                        catalog)
    write_answers(path, data)
    text = path.read_text()
    assert text.startswith(HEADER) and written_by_ask(path)
    assert list(yaml.safe_load(text)) == ["workload", "model", "allowed_regions"]
    assert yaml.safe_load(text)["allowed_regions"] == ["eu"]
    write_answers(tmp_path / "a.json", data)
    assert json.loads((tmp_path / "a.json").read_text()) == {
        "workload": "fine-tune", "model": None, "allowed_regions": ["eu"]}
    assert not written_by_ask(tmp_path / "a.json")


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.yaml"
    write_answers(path, {"workload": "pretrain"})
    before = path.read_bytes()

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(InputError) as caught:
        write_answers(path, {"workload": "fine-tune"})
    assert str(caught.value) == f"{path}: cannot write (No space left on device)"
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml"]    # no temporary left


def test_written_through_a_symbolic_link(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    link = tmp_path / "link.yaml"
    write_answers(real, {})
    link.symlink_to(real)
    write_answers(link, {"workload": "pretrain"})
    assert link.is_symlink()
    assert yaml.safe_load(real.read_text()) == {"workload": "pretrain"}


def test_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    write_answers(path, {})
    assert path.stat().st_mode & 0o777 == 0o644
    path.chmod(0o600)
    write_answers(path, {"workload": "pretrain"})
    assert path.stat().st_mode & 0o777 == 0o600


def test_check_writable_refuses_before_any_question(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        check_writable(tmp_path)
    assert str(caught.value) == f"{tmp_path}: is a directory, not a regular file"
    with pytest.raises(InputError) as caught:
        check_writable(tmp_path / "missing" / "a.yaml")
    assert str(caught.value) == (f"{tmp_path / 'missing' / 'a.yaml'}: folder "
                                 f"{tmp_path / 'missing'} does not exist")
    check_writable(tmp_path / "a.yaml")
    assert list(tmp_path.iterdir()) == []                        # the probe leaves nothing
