"""``gpu-advisor ask``: real terminal sessions (pexpect), the non-interactive paths (click's
runner) and the :class:`Questionnaire` that decides which questions are asked."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engine.answers.model import load_answers
from engine.answers.questionnaire import Questionnaire, prompt_text
from engine.catalog.load import Catalog
from engine.cli import cli

pexpect = pytest.importorskip("pexpect")

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "startup-7b-continuous.yaml"
DOWN = "\x1b[B"
KILL_LINE = "\x15"  # Ctrl-U: clear what was typed in a text prompt
HEADLINE = r"(Buy|Rent|Develop locally, rent): "


# --- real pseudo-terminal sessions ----------------------------------------------------------

class Session:
    """One ``gpu-advisor ask`` in a pseudo-terminal; counts the questions it answers."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
        env.pop("NO_COLOR", None)
        self.child = pexpect.spawn(sys.executable, ["-m", "engine", "ask", *args], env=env,
                                   cwd=str(REPO), dimensions=(40, 120), encoding="utf-8",
                                   timeout=20)
        self.transcript: list[str] = []
        self.asked: list[str] = []

    def question(self, pattern: str) -> None:
        """Wait for a question (a fragment of its prompt)."""
        self.expect(pattern)
        self.asked.append(pattern)

    def expect(self, pattern: str | list[Any]) -> int:
        index: int = self.child.expect(pattern)
        self.transcript.append(self.child.before + str(self.child.after))
        return index

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def finish(self) -> tuple[int | None, str]:
        """Wait for the end; (exit status, everything printed)."""
        self.child.expect(pexpect.EOF)
        self.transcript.append(self.child.before)
        self.child.close()
        return self.child.exitstatus, "".join(self.transcript)

    def kill(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


@pytest.fixture
def session() -> Iterator[type[Session]]:
    made: list[Session] = []

    class Tracked(Session):
        def __init__(self, *args: str) -> None:
            super().__init__(*args)
            made.append(self)

    yield Tracked
    for s in made:
        s.kill()


def _answer_common_tail(s: Session) -> None:
    """From the cloud-ecosystem question to the end, mostly by defaults."""
    s.question("embedded in a cloud")
    s.send("\r")                                  # default: none
    s.question("newest GPU generation")
    s.send("n")                                   # confirm: one key, no Enter
    s.question("share the GPUs")
    s.send("n")
    s.question("plan a GPU")
    s.send("\r")                                  # empty: none
    s.question("Tokens a month an API")
    s.send("?\r")                                 # help on demand
    s.expect("Compares a hosted API with serving your own model")
    s.expect("Tokens a month an API")             # asked again after the help
    s.send("\r")
    s.question("regulation or safety")
    s.send("n")


@pytest.mark.slow
def test_full_terminal_session(session: type[Session], tmp_path: Path,
                               catalog: Catalog) -> None:
    saved = tmp_path / "answers.yaml"
    s = session("--no-audit", "--save-answers", str(saved))
    s.question("pretrain one")
    s.send("\r")                                  # default: fine-tune
    s.question("Which model")
    s.send("\r")                                  # default: llama-3.1-8b
    s.question("Training method")
    s.send(DOWN + DOWN)                           # auto → full → lora
    s.send("\r")
    s.question("Tokens per training run")
    s.send("\r")                                  # none: the work is given in hours
    s.question("GPU-hours a year")
    s.send("\r")                                  # none: 800 assumed, and said so
    s.question("spread over the year")
    s.send("\r")                                  # default: intermittent
    s.question("Budget for compute")
    s.send("50000000000\r")                       # 50,000,000,000: out of range
    s.expect(r"out of range; expected a number from 0 to 10,000,000,000 USD")
    s.send(KILL_LINE + "7000\r")
    s.question("spend capital up front")
    s.send("y")
    s.question("training data go")
    s.send("\r")                                  # default: none (no regions question)
    _answer_common_tail(s)
    s.expect(HEADLINE)
    s.expect("Saved answers to")
    status, output = s.finish()
    assert status == 0, output
    assert "Traceback" not in output
    assert "Which regions" not in output          # residency none: skipped
    assert "How many of them" not in output       # no planned GPU: no count
    assert "proprietary" not in output            # fine-tune: no scratch reasons
    assert "sequence length" not in output        # advanced: only with --advanced
    assert len(s.asked) <= 15, s.asked

    answers = load_answers(saved, [], catalog)
    assert answers.method == "lora"               # picked with the arrow keys
    assert answers.budget_usd == 7000             # typed after the rejected value
    assert answers.upfront_capex is True
    assert answers.needs_latest_hardware is False
    assert answers.hours_per_year is None         # none given: the policy's 800 assumed
    assert answers.model == "llama-3.1-8b"
    assert answers.planned_gpu is None
    assert answers.api_tokens_per_month_m is None


@pytest.mark.slow
def test_ctrl_c_exits_130_without_traceback(session: type[Session]) -> None:
    s = session("--no-audit")
    s.question("pretrain one")
    s.send("\x03")
    status, output = s.finish()
    assert status == 130, output
    assert "Traceback" not in output
    assert "Cancelled" in output


@pytest.mark.slow
def test_region_residency_asks_for_regions(session: type[Session], tmp_path: Path,
                                           catalog: Catalog) -> None:
    saved = tmp_path / "answers.yaml"
    s = session("--no-audit", "--save-answers", str(saved))
    for prompt in ("pretrain one", "Which model", "Training method", "Tokens per training run",
                   "GPU-hours a year", "spread over the year", "Budget for compute"):
        s.question(prompt)
        s.send("\r")
    s.question("spend capital up front")
    s.send("y")
    s.question("training data go")
    s.send(DOWN + "\r")                           # none → region
    s.question("Which regions are allowed")
    s.send(" " + DOWN + " \r")                    # tick us, tick eu
    _answer_common_tail(s)
    s.expect(HEADLINE)
    status, output = s.finish()
    assert status == 0, output
    answers = load_answers(saved, [], catalog)
    assert answers.data_residency == "region"
    assert answers.allowed_regions == ("us", "eu")


# --- no terminal: click's runner ------------------------------------------------------------

def test_no_terminal_and_unanswered_exits_2(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["ask", "--no-audit"])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "--answers" in lines[0] and "--set" in lines[0] and "--defaults" in lines[0]
    assert "Traceback" not in result.output


def test_defaults_with_set_gives_json(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["ask", "--no-audit", "--defaults", "--set",
                                 "model=mistral-7b", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["answers"]["model"] == "mistral-7b"
    assert data["answers"]["hours_per_year"] is None     # no work given: none invented
    assert data["facts"]["work_assumed"] is True          # the policy's hours, said so


def test_answers_file_defaults_and_save_round_trip(runner: CliRunner, tmp_path: Path,
                                                   catalog: Catalog) -> None:
    saved = tmp_path / "saved.yaml"
    result = runner.invoke(cli, ["ask", "--no-audit", "--answers", str(EXAMPLE), "--defaults",
                                 "--save-answers", str(saved)])
    assert result.exit_code == 0, result.stderr
    assert "Saved answers to" in result.stderr
    assert load_answers(saved, [], catalog) == load_answers(EXAMPLE, [], catalog)
    again = runner.invoke(cli, ["recommend", "--no-audit", "--answers", str(saved)])
    assert again.exit_code == 0, again.stderr
    assert again.stdout.splitlines()[0] == result.stdout.splitlines()[0]


def test_fully_answered_file_needs_no_terminal(runner: CliRunner, tmp_path: Path) -> None:
    full = tmp_path / "full.yaml"
    assert runner.invoke(cli, ["ask", "--no-audit", "--answers", str(EXAMPLE), "--defaults",
                               "--save-answers", str(full)]).exit_code == 0
    result = runner.invoke(cli, ["ask", "--no-audit", "--answers", str(full)])
    assert result.exit_code == 0, result.stderr


def test_set_out_of_range_names_the_range(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["ask", "--no-audit", "--defaults", "--set", "budget_usd=-1"])
    assert result.exit_code == 2
    assert "from 0 to 10,000,000,000 USD" in result.stderr


# --- the questionnaire ----------------------------------------------------------------------

def ids(q: Questionnaire) -> list[str]:
    return [question.id for question in q.pending()]


def test_regions_only_for_region_residency(catalog: Catalog) -> None:
    assert "allowed_regions" not in ids(Questionnaire(catalog, {}))
    assert "allowed_regions" not in ids(Questionnaire(catalog, {"data_residency": "none"}))
    assert "allowed_regions" in ids(Questionnaire(catalog, {"data_residency": "region"}))


def test_regions_follow_an_answer_given_in_the_session(catalog: Catalog) -> None:
    q = Questionnaire(catalog, {})
    q.record(catalog.question("data_residency"), "region")
    assert "allowed_regions" in ids(q)
    q = Questionnaire(catalog, {})
    q.record(catalog.question("data_residency"), "on-premises")
    assert "allowed_regions" not in ids(q)
    assert "cloud_ecosystem" not in ids(q)


def test_planned_gpu_count_only_with_a_planned_gpu(catalog: Catalog) -> None:
    assert "planned_gpu_count" not in ids(Questionnaire(catalog, {}))
    assert "planned_gpu_count" not in ids(Questionnaire(catalog, {"planned_gpu": None}))
    assert "planned_gpu_count" in ids(Questionnaire(catalog, {"planned_gpu": "h100-sxm"}))


SCRATCH = {"proprietary_data", "specialised_domain", "competitive_moat"}


def test_scratch_reasons_only_for_pretraining(catalog: Catalog) -> None:
    assert not SCRATCH & set(ids(Questionnaire(catalog, {})))
    assert not SCRATCH & set(ids(Questionnaire(catalog, {"workload": "fine-tune"})))
    assert set(ids(Questionnaire(catalog, {"workload": "pretrain"}))) >= SCRATCH
    # and the method question is a fine-tuning one
    assert "method" not in ids(Questionnaire(catalog, {"workload": "pretrain"}))


def test_advanced_questions_only_on_request(catalog: Catalog) -> None:
    advanced = {q.id for q in catalog.questions if q.advanced}
    assert advanced >= {"seq_len", "micro_batch", "electricity_usd_per_kwh"}
    assert not advanced & set(ids(Questionnaire(catalog, {})))
    assert advanced <= set(ids(Questionnaire(catalog, {}, advanced=True)))


def test_model_params_only_without_a_model(catalog: Catalog) -> None:
    assert "model_params_b" not in ids(Questionnaire(catalog, {}))
    q = Questionnaire(catalog, {})
    q.record(catalog.question("model"), None)
    assert "model_params_b" in ids(q)


def test_prefilled_questions_are_skipped(catalog: Catalog) -> None:
    q = Questionnaire(catalog, {"workload": "fine-tune", "budget_usd": 100.0})
    assert "workload" not in ids(q) and "budget_usd" not in ids(q)
    assert q.next() is not None and q.next().id == "model"  # type: ignore[union-attr]


def test_typical_session_is_short(catalog: Catalog) -> None:
    assert len(ids(Questionnaire(catalog, {}))) <= 15


def test_validator_names_the_accepted_range(catalog: Catalog) -> None:
    q = Questionnaire(catalog, {})
    budget = q.validator(catalog.question("budget_usd"))
    assert budget("5000") is None
    assert budget("1,000") is None
    message = budget("-5")
    assert message is not None and "from 0 to 10,000,000,000 USD" in message
    message = budget("lots")
    assert message is not None and "from 0 to 10,000,000,000 USD" in message
    count = q.validator(catalog.question("planned_gpu_count"))
    message = count("0")
    assert message is not None and "a whole number from 1 to 100,000 GPUs" in message
    message = count("1.5")
    assert message is not None and "whole number" in message
    model = q.validator(catalog.question("model"))
    assert model("llama-3.1-8b") is None
    assert model("") is None                                  # nullable: none
    assert model("no-such-model") is not None


def test_prompt_shows_the_range_for_numbers(catalog: Catalog) -> None:
    assert prompt_text(catalog.question("hours_per_year")).endswith(
        "[a number from 0 to 10,000,000 GPU-hours/year]")
    assert prompt_text(catalog.question("workload")) == catalog.question("workload").prompt


class Scripted:
    """A prompter answering from a dict (else the default); records what it was asked."""

    def __init__(self, replies: dict[str, Any]) -> None:
        self.replies = replies
        self.asked: list[str] = []

    def ask(self, question: Any, default: Any, validate: Any, choices: Any) -> Any:
        self.asked.append(question.id)
        return self.replies.get(question.id, default)


def test_run_sees_earlier_answers(catalog: Catalog) -> None:
    prompter = Scripted({"workload": "pretrain", "data_residency": "region",
                         "allowed_regions": ["eu"], "planned_gpu": "h100-sxm",
                         "planned_gpu_count": 4})
    answers = Questionnaire(catalog, {}).run(prompter)
    assert set(prompter.asked) >= SCRATCH
    assert "method" not in prompter.asked
    assert "allowed_regions" in prompter.asked
    assert prompter.asked.index("allowed_regions") > prompter.asked.index("data_residency")
    assert "planned_gpu_count" in prompter.asked
    assert answers["planned_gpu_count"] == 4
    assert not {"seq_len", "micro_batch"} & set(prompter.asked)


def test_fill_defaults_answers_everything_relevant(catalog: Catalog) -> None:
    answers = Questionnaire(catalog, {"model": "mistral-7b"}).fill_defaults()
    assert answers["model"] == "mistral-7b"
    assert answers["budget_usd"] == catalog.question("budget_usd").default
    assert "allowed_regions" not in answers                    # not relevant, not asked


def test_prefilled_regions_survive_the_final_check(runner: CliRunner) -> None:
    """A list answer from --answers/--set is checked twice (pre-fill, then the whole set)."""
    result = runner.invoke(cli, ["ask", "--no-audit", "--answers", str(EXAMPLE), "--defaults",
                                 "--set", "data_residency=region", "--set",
                                 "allowed_regions=eu,us", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["answers"]["allowed_regions"] == ["eu", "us"]
