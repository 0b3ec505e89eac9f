"""``gpu-advisor ask``: the :class:`Questionnaire` driven by scripted replies (which questions
are asked, answers checked when given, ``back``), and the command through click's runner
(answers saved as given, resumed, Ctrl-C before and after the decision). Real terminal
sessions are in test_ask_terminal.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from engine.answers.answers_file import HEADER
from engine.answers.model import load_answers
from engine.answers.questionnaire import BACK, Offer, Questionnaire, prompt_text
from engine.catalog.load import Catalog
from engine.catalog.models import Question
from engine.cli import cli

REPO = Path(__file__).parent.parent
EXAMPLE = REPO / "examples" / "startup-7b-continuous.yaml"
SIZE_REQUIRED = ("a catalog model id or model_params_b is required; expected a number from "
                 "0.01 to 5,000 billion parameters")


class Interrupt:
    """A scripted reply: the user presses Ctrl-C."""


INTERRUPT = Interrupt()


class Scripted:
    """A prompter replying in order as a person at the terminal would: text is typed (and
    refused, then the next reply typed, while the prompt's check fails), BACK goes back,
    INTERRUPT is Ctrl-C; once the replies run out, Enter takes each default, and "yes" goes on
    without an amount of work (the one question whose default, no, is refused)."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.asked: list[str] = []
        self.offered: list[tuple[str, Any]] = []
        self.refused: list[tuple[str, str]] = []
        self.said: list[str] = []

    def ask(self, question: Question, offer: Offer) -> Any:
        self.asked.append(question.id)
        self.offered.append((question.id, offer.default))
        while self.replies:
            reply = self.replies.pop(0)
            if reply is INTERRUPT:
                raise KeyboardInterrupt
            if not isinstance(reply, str):
                return reply
            if (message := offer.validate(reply)) is None:
                return offer.read(reply)
            self.refused.append((question.id, message))
        return offer.read("yes" if question.id == "work_unknown" else "")

    def say(self, text: str) -> None:
        self.said.append(text)


def ids(q: Questionnaire) -> list[str]:
    return [question.id for question in q.pending()]


# --- which questions are asked ----------------------------------------------------------------

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
    assert "planned_gpu_count" not in ids(Questionnaire(catalog, {}, advanced=True))
    assert "planned_gpu_count" not in ids(Questionnaire(catalog, {"planned_gpu": None}))
    assert "planned_gpu_count" in ids(Questionnaire(catalog, {"planned_gpu": "h100-sxm"}))


SCRATCH = {"proprietary_data", "specialised_domain", "competitive_moat"}


def test_scratch_reasons_only_for_pretraining(catalog: Catalog) -> None:
    # proprietary data is asked of everyone: the API and marketplace rules read it
    only_pretrain = SCRATCH - {"proprietary_data"}
    assert not only_pretrain & set(ids(Questionnaire(catalog, {})))
    assert not only_pretrain & set(ids(Questionnaire(catalog, {"workload": "fine-tune"})))
    assert "proprietary_data" in ids(Questionnaire(catalog, {"workload": "fine-tune"}))
    assert set(ids(Questionnaire(catalog, {"workload": "pretrain"}))) >= SCRATCH
    # and the method question is a fine-tuning one
    assert "method" not in ids(Questionnaire(catalog, {"workload": "pretrain"}))


def test_advanced_questions_only_on_request(catalog: Catalog) -> None:
    advanced = {q.id for q in catalog.questions if q.advanced}
    assert advanced >= {"seq_len", "micro_batch", "electricity_usd_per_kwh", "planned_gpu",
                        "api_tokens_per_month_m", "shared_small_workloads",
                        "needs_frontier_capability", "weeks_to_first_model"}
    assert not advanced & set(ids(Questionnaire(catalog, {})))
    assert advanced <= set(ids(Questionnaire(catalog, {"planned_gpu": "h100-sxm"},
                                             advanced=True))) | {"planned_gpu"}


def test_a_deadline_and_a_frontier_need_are_asked_without_a_token_volume(
        catalog: Catalog) -> None:
    """Both bound or warn without an API to weigh: a deadline bounds every run, a need for
    frontier capability is said."""
    asked = set(ids(Questionnaire(catalog, {"api_tokens_per_month_m": None}, advanced=True)))
    assert {"weeks_to_first_model", "needs_frontier_capability"} <= asked


def test_no_silent_size_or_amount_of_work(catalog: Catalog) -> None:
    """Only a question with an honest default may be advanced: never the model, its size or
    the amount of work (a default there would be an invented answer)."""
    never = {"workload", "model", "model_params_b", "method", "training_tokens_b",
             "runs_per_year", "hours_per_year", "hours_gpu", "budget_usd", "usage_pattern"}
    assert not never & {q.id for q in catalog.questions if q.advanced}


def test_model_params_only_without_a_model(catalog: Catalog) -> None:
    assert "model_params_b" not in ids(Questionnaire(catalog, {}))
    q = Questionnaire(catalog, {})
    q.record(catalog.question("model"), None)
    assert "model_params_b" in ids(q)


def test_prefilled_questions_are_skipped(catalog: Catalog) -> None:
    q = Questionnaire(catalog, {"workload": "fine-tune", "budget_usd": 100.0})
    assert "workload" not in ids(q) and "budget_usd" not in ids(q)
    assert q.next() is not None and q.next().id == "model"  # type: ignore[union-attr]


TEAMS = {  # three kinds of team, and the questions each is asked (before: 15, 18, 17), the
    # GPUs the team owns among them, and (fine-tuners) whether the data may go to a provider
    "fine-tune": ({"workload": "fine-tune", "model": "llama-3.1-8b", "method": "lora",
                   "training_tokens_b": "0.15", "runs_per_year": "12"}, 13),
    "fine-tune by size and GPU-hours, EU only": (
        {"model": "none", "model_params_b": "13", "training_tokens_b": "",
         "hours_per_year": "3000", "hours_gpu": "rtx-4090", "data_residency": "region",
         "allowed_regions": ["eu"]}, 17),  # and the length of a run, in those hours
    "pretrain": ({"workload": "pretrain", "model": "llama-3.1-8b",
                  "training_tokens_b": "100", "runs_per_year": "1"}, 14),
}


class ByQuestion(Scripted):
    """Replies by question id (else the default)."""

    def __init__(self, replies: dict[str, Any]) -> None:
        super().__init__()
        self.by_id = replies

    def ask(self, question: Question, offer: Offer) -> Any:
        self.replies = [self.by_id[question.id]] if question.id in self.by_id else []
        return super().ask(question, offer)


@pytest.mark.parametrize("team", TEAMS)
def test_questions_asked_per_team(catalog: Catalog, team: str) -> None:
    replies, count = TEAMS[team]
    prompter = ByQuestion(replies)
    Questionnaire(catalog, {}).run(prompter)
    assert len(prompter.asked) == count, prompter.asked
    assert not prompter.refused


def test_typical_fine_tuning_team_gets_at_most_thirteen(catalog: Catalog) -> None:
    """A dozen, and whether the data may go to a provider (issue 31: the API and marketplace
    rules read it for fine-tuners too)."""
    knows_its_tokens = Questionnaire(catalog, {})
    knows_its_tokens.record(catalog.question("training_tokens_b"), 0.15)
    assert len(ids(knows_its_tokens)) + 1 <= 13
    assert "proprietary_data" in ids(knows_its_tokens)


# --- answers checked when given ---------------------------------------------------------------

def test_validator_names_the_accepted_range(catalog: Catalog) -> None:
    q = Questionnaire(catalog, {})
    budget = q.validator(catalog.question("budget_usd"))
    assert budget("5000") is None
    assert budget("1,000") is None
    assert budget("?") is None and budget("<") is None      # help and back pass the check
    assert budget("-5") == "-5 is out of range; expected a number from 0 to 10,000,000,000 USD"
    assert budget("lots") == "expected a number from 0 to 10,000,000,000 USD, got 'lots'"
    count = q.validator(catalog.question("planned_gpu_count"))
    assert count("0") == "0 is out of range; expected a whole number from 1 to 100,000 GPUs"
    assert count("1.5") == "expected a whole number, got 1.5"
    model = q.validator(catalog.question("model"))
    assert model("llama-3.1-8b") is None
    assert model("") is None                                  # the default
    assert model("none") is None                              # the size is asked next
    assert model("no-such-model") is not None


def test_missing_size_refused_at_the_size_question(catalog: Catalog) -> None:
    prompter = Scripted("", "none", "", "0", "13")
    answers = Questionnaire(catalog, {}).run(prompter)
    assert prompter.asked[:4] == ["workload", "model", "model_params_b", "method"]
    assert prompter.refused == [
        ("model_params_b", SIZE_REQUIRED),
        ("model_params_b", "0 is out of range; expected a number from 0.01 to 5,000 billion "
                           "parameters")]
    assert answers["model"] is None and answers["model_params_b"] == 13


def test_run_loop_refuses_a_bad_reply_and_asks_again(catalog: Catalog) -> None:
    """A reply that slipped past the prompt's check is refused by the loop, with the reason."""
    prompter = Scripted("", "none", None, "13")
    answers = Questionnaire(catalog, {}).run(prompter)
    assert prompter.asked[2:4] == ["model_params_b", "model_params_b"]
    assert f"  {SIZE_REQUIRED}" in prompter.said
    assert answers["model_params_b"] == 13


def test_both_model_and_size_refused_at_the_model_question(catalog: Catalog) -> None:
    q = Questionnaire(catalog, {"model_params_b": 13.0})
    assert q.validator(catalog.question("model"))("mistral-7b") == (
        "give either model or model_params_b, not both")
    assert q.validator(catalog.question("model"))("") is None       # default: none


def test_each_answer_is_shown_also_a_default(catalog: Catalog) -> None:
    prompter = Scripted("", "mistral-7b")
    Questionnaire(catalog, {}).run(prompter)
    assert prompter.said[:3] == ["  workload: fine-tune", "  model: mistral-7b",
                                 "  method: auto"]
    assert "  upfront_capex: yes" in prompter.said


# --- back ---------------------------------------------------------------------------------------

def test_back_twice_keeps_the_answers(catalog: Catalog) -> None:
    prompter = Scripted("pretrain", "mistral-7b", "50", BACK, BACK, "", "")
    answers = Questionnaire(catalog, {}).run(prompter)
    assert prompter.asked[:7] == ["workload", "model", "training_tokens_b", "runs_per_year",
                                  "training_tokens_b", "model", "training_tokens_b"]
    assert prompter.offered[5] == ("model", "mistral-7b")          # kept as the default
    assert prompter.offered[6] == ("training_tokens_b", 50.0)
    assert prompter.said[3:5] == ["  back to: training_tokens_b", "  back to: model"]
    assert answers["model"] == "mistral-7b" and answers["training_tokens_b"] == 50


def test_back_at_the_first_question_says_so(catalog: Catalog) -> None:
    prompter = Scripted(BACK, "pretrain")
    answers = Questionnaire(catalog, {}).run(prompter)
    assert prompter.said[0] == "  (this is the first question)"
    assert answers["workload"] == "pretrain"


def test_changing_an_answer_drops_what_depended_on_it(catalog: Catalog) -> None:
    prompter = Scripted("", "none", "13", BACK, BACK, "llama-3.1-8b")
    answers = Questionnaire(catalog, {}).run(prompter)
    assert prompter.asked.count("model_params_b") == 2             # not asked a third time
    assert "model_params_b" not in answers and answers["model"] == "llama-3.1-8b"


def test_back_never_undoes_a_set_answer(catalog: Catalog) -> None:
    q = Questionnaire(catalog, {"workload": "pretrain", "model": "mistral-7b"},
                      fixed={"workload"})
    assert q.back(catalog.question("training_tokens_b")) == catalog.question("model")
    assert q.back(catalog.question("model")) is None
    assert q.answers == {"workload": "pretrain"}
    assert q.default(catalog.question("model")) == "mistral-7b"


def test_saved_after_each_answer(catalog: Catalog) -> None:
    seen: list[list[str]] = []
    Questionnaire(catalog, {}).run(Scripted("", "", BACK, ""), saved=lambda a: seen.append(
        list(a)))
    assert seen[:4] == [["workload"], ["workload", "model"],       # back: nothing written
                        ["workload", "model"], ["workload", "model", "method"]]


def test_prompt_shows_the_range_for_numbers(catalog: Catalog) -> None:
    assert prompt_text(catalog.question("hours_per_year")).endswith(
        "[a number from 0 to 10,000,000 GPU-hours/year]")
    assert prompt_text(catalog.question("workload")) == catalog.question("workload").prompt


def test_run_sees_earlier_answers(catalog: Catalog) -> None:
    prompter = ByQuestion({"workload": "pretrain", "data_residency": "region",
                           "allowed_regions": ["eu"]})
    answers = Questionnaire(catalog, {}, advanced=True).run(
        ByQuestion({**prompter.by_id, "planned_gpu": "h100-sxm", "planned_gpu_count": "4"}))
    assert answers["planned_gpu_count"] == 4 and answers["allowed_regions"] == ("eu",)
    Questionnaire(catalog, {}).run(prompter)
    assert set(prompter.asked) >= SCRATCH
    assert "method" not in prompter.asked
    assert prompter.asked.index("allowed_regions") > prompter.asked.index("data_residency")
    assert not {"seq_len", "micro_batch", "planned_gpu"} & set(prompter.asked)


def test_fill_defaults_answers_everything_relevant(catalog: Catalog) -> None:
    answers = Questionnaire(catalog, {"model": "mistral-7b"}).fill_defaults()
    assert answers["model"] == "mistral-7b"
    assert answers["budget_usd"] == catalog.question("budget_usd").default
    assert "allowed_regions" not in answers                    # not relevant, not asked


# --- the command, on a scripted terminal ----------------------------------------------------

@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """``ask`` believes it has a terminal; the prompter is scripted; the cwd is tmp_path.
    Call it with the replies of the next run."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("engine.cli.ask_cmd._interactive", lambda: True)

    def script(*replies: Any) -> Scripted:
        prompter = Scripted(*replies)
        monkeypatch.setattr("engine.answers.prompt.TerminalPrompter", lambda: prompter)
        return prompter
    return script


def flat(text: str) -> str:
    """Wrapped output as one line."""
    return re.sub(r"\s+", " ", text).strip()


def test_session_saves_to_a_new_file_and_recommend_takes_it(
        runner: CliRunner, terminal: Any, tmp_path: Path, catalog: Catalog) -> None:
    (tmp_path / "gpu-advisor-answers.yaml").write_text("# an earlier session\n")
    terminal("", "none", "13")
    result = runner.invoke(cli, ["ask", "--no-audit"])
    assert result.exit_code == 0, result.stderr
    saved = tmp_path / "gpu-advisor-answers-2.yaml"                # the earlier one is kept
    assert flat(result.stderr).startswith(
        "Your answers are saved to gpu-advisor-answers-2.yaml as you give them; if you stop, "
        "resume with: gpu-advisor ask --answers gpu-advisor-answers-2.yaml In every question, "
        "? shows help and < goes back; Ctrl-C stops.")
    assert flat(result.stderr).endswith(
        "Saved answers to gpu-advisor-answers-2.yaml; repeat with: gpu-advisor recommend "
        "--answers gpu-advisor-answers-2.yaml")
    assert saved.read_text().startswith(HEADER)
    assert yaml.safe_load(saved.read_text())["model_params_b"] == 13
    again = runner.invoke(cli, ["recommend", "--no-audit", "--answers", str(saved)])
    assert again.exit_code == 0, again.stderr
    assert again.stdout.splitlines()[0] == result.stdout.splitlines()[0]


def test_resume_asks_only_what_is_missing(runner: CliRunner, terminal: Any,
                                          tmp_path: Path) -> None:
    first = terminal("", "mistral-7b", "lora", INTERRUPT)
    result = runner.invoke(cli, ["ask", "--no-audit", "--answers", "mine.yaml"])
    assert result.exit_code == 130
    assert flat(result.stderr).endswith(
        "Cancelled; nothing was recorded. Your answers so far are saved in mine.yaml; resume "
        "with: gpu-advisor ask --answers mine.yaml")
    assert first.asked == ["workload", "model", "method", "training_tokens_b"]
    assert yaml.safe_load((tmp_path / "mine.yaml").read_text()) == {
        "workload": "fine-tune", "model": "mistral-7b", "method": "lora"}

    second = terminal()
    result = runner.invoke(cli, ["ask", "--no-audit", "--answers", "mine.yaml"])
    assert result.exit_code == 0, result.stderr
    assert "Resuming mine.yaml (3 answers there); asking only what is missing." in flat(
        result.stderr)
    assert second.asked[0] == "training_tokens_b"
    assert not {"workload", "model", "method"} & set(second.asked)
    data = yaml.safe_load((tmp_path / "mine.yaml").read_text())
    assert data["model"] == "mistral-7b" and data["regulated_control"] is False


def test_hand_written_answers_file_is_read_not_rewritten(runner: CliRunner, terminal: Any,
                                                         tmp_path: Path) -> None:
    before = EXAMPLE.read_text()
    prompter = terminal()
    result = runner.invoke(cli, ["ask", "--no-audit", "--answers", str(EXAMPLE)])
    assert result.exit_code == 0, result.stderr
    assert EXAMPLE.read_text() == before
    assert f"Starting from {EXAMPLE} (not changed: it was not written by gpu-advisor ask)" in (
        flat(result.stderr))
    saved = yaml.safe_load((tmp_path / "gpu-advisor-answers.yaml").read_text())
    assert saved["model"] == "llama-3.1-8b"                       # the file's own answers too
    assert "workload" not in prompter.asked


def test_ctrl_c_before_any_answer_leaves_nothing(runner: CliRunner, terminal: Any,
                                                 tmp_path: Path,
                                                 isolated_audit_store: Path) -> None:
    terminal(INTERRUPT)
    result = runner.invoke(cli, ["ask"])
    assert result.exit_code == 130
    assert result.stderr.endswith("\nCancelled; nothing was recorded.\n")
    assert list(tmp_path.iterdir()) == []
    assert not isolated_audit_store.exists()


def test_ctrl_c_after_the_decision_says_what_was_recorded(
        runner: CliRunner, terminal: Any, monkeypatch: pytest.MonkeyPatch,
        isolated_audit_store: Path) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("engine.cli.ask_cmd.emit", interrupted)
    terminal()
    result = runner.invoke(cli, ["ask"])
    assert result.exit_code == 130
    found = re.search(r"decision (\S+) is recorded in (.+?)\. Your", flat(result.stderr))
    assert found is not None, result.stderr
    assert found[2] == str(isolated_audit_store)
    assert "nothing was recorded" not in result.stderr
    assert flat(result.stderr).endswith("Your answers are saved in gpu-advisor-answers.yaml.")
    shown = runner.invoke(cli, ["audit", "show", found[1]])
    assert shown.exit_code == 0, shown.stderr


def test_unwritable_answers_file_fails_before_any_question(runner: CliRunner,
                                                           terminal: Any) -> None:
    prompter = terminal()
    result = runner.invoke(cli, ["ask", "--answers", "no-such-dir/answers.yaml"])
    assert result.exit_code == 2
    assert result.stderr == ("error: no-such-dir/answers.yaml: folder no-such-dir does not "
                             "exist\n")
    assert prompter.asked == []


# --- no terminal: click's runner ------------------------------------------------------------

def test_no_terminal_and_unanswered_exits_2(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["ask", "--no-audit"])
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "--answers" in lines[0] and "--set" in lines[0] and "--defaults" in lines[0]
    assert "Traceback" not in result.output


def test_defaults_with_set_gives_json(runner: CliRunner, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["ask", "--no-audit", "--defaults", "--set",
                                 "model=mistral-7b", "--set", "work_unknown=yes",
                                 "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert list(tmp_path.iterdir()) == []                  # nothing asked: no answers file
    data = json.loads(result.stdout)
    assert data["answers"]["model"] == "mistral-7b"
    assert data["answers"]["hours_per_year"] is None     # no work given: none invented
    assert data["estimates"]["work"]["hours_assumed"] is True  # the policy's hours, said so


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


def test_ask_no_audit_shows_no_decision_id(tmp_path: Path) -> None:
    """``--no-audit`` prints no id a person could look for in the audit store."""
    result = CliRunner().invoke(cli, [
        "ask", "--answers", str(Path(__file__).parent.parent / "examples" /
                                "startup-7b-continuous.yaml"),
        "--defaults", "--no-audit", "--audit-db", str(tmp_path / "a.sqlite3")])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].startswith("decision not recorded (--no-audit) · ")
    assert not (tmp_path / "a.sqlite3").exists()
