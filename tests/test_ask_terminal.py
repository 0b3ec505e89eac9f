"""``gpu-advisor ask`` in a real pseudo-terminal (pexpect), driven as a new user would: a
wrong size refused where it is given, ``<`` back twice with the answers kept, the terminal
killed mid-way and the session resumed from its answers file, ``?`` help in every kind of
prompt, Ctrl-C. Timeouts only catch a hang; nothing waits on time."""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from engine.answers.model import load_answers
from engine.catalog.load import Catalog
from engine.cli import cli

pexpect = pytest.importorskip("pexpect")

pytestmark = pytest.mark.slow

DOWN = "\x1b[B"
HEADLINE = r"(Buy|Rent|Develop locally, rent): "
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


class Session:
    """One ``gpu-advisor ask`` in an 80-column pseudo-terminal, in ``cwd``."""

    def __init__(self, cwd: Path, *args: str) -> None:
        env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
        env.pop("NO_COLOR", None)
        self.child = pexpect.spawn(sys.executable, ["-m", "engine", "ask", *args], env=env,
                                   cwd=str(cwd), dimensions=(40, 80), encoding="utf-8",
                                   timeout=60)
        self.transcript: list[str] = []
        self.asked: list[str] = []

    def question(self, pattern: str) -> None:
        """Wait for a question (a fragment of its prompt)."""
        self.expect(pattern)
        self.asked.append(pattern)

    def expect(self, pattern: str) -> None:
        self.child.expect(pattern)
        self.transcript.append(self.child.before + str(self.child.after))

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def finish(self) -> tuple[int | None, str]:
        """Wait for the end; (exit status, everything printed, escape codes removed)."""
        self.child.expect(pexpect.EOF)
        self.transcript.append(self.child.before)
        self.child.close()
        return self.child.exitstatus, self.text()

    def text(self) -> str:
        return ANSI.sub("", "".join(self.transcript))

    def kill(self) -> None:
        """Kill the process as a closed terminal window would, with no chance to clean up."""
        if self.child.isalive():
            self.child.kill(signal.SIGKILL)
            self.child.expect(pexpect.EOF)
        self.child.close()


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Any]:
    made: list[Session] = []

    def start(*args: str) -> Session:
        made.append(Session(tmp_path, *args))
        return made[-1]

    yield start
    for s in made:
        s.kill()


def words(text: str) -> str:
    """A pattern for ``text`` wrapped anywhere between its words."""
    return r"\s+".join(map(re.escape, text.split()))


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_refused_at_question_3_back_twice_killed_and_resumed(
        session: Any, tmp_path: Path, catalog: Catalog, runner: CliRunner) -> None:
    s = session()
    s.expect("saved to gpu-advisor-answers.yaml as you give them")
    s.question("pretrain one")
    s.send("\r")                                            # 1: fine-tune (default)
    s.question("Which model")
    s.send("none\r")                                        # 2: no catalog model
    s.question("Model size")
    s.send("\r")                                            # 3: Enter, no size: refused here
    s.expect(words("a catalog model id or model_params_b is required; expected a number "
                   "from 0.01 to 5,000 billion parameters"))
    s.question("Model size")                                # asked again
    s.send("0\r")                                           # out of range: refused here too
    s.expect(words("0 is out of range; expected a number from 0.01 to 5,000 billion "
                   "parameters"))
    s.question("Model size")
    s.send("13\r")
    s.expect("model_params_b: 13")
    s.question("Training method")
    s.send(DOWN + DOWN + "\r")                              # auto → full → lora
    s.expect("method: lora")
    s.question("Tokens per training run")
    s.send("<")                                             # back once…
    s.expect("back to: method")
    s.question("Training method")
    s.send("<")                                             # …and twice
    s.expect("back to: model_params_b")
    s.question("Model size")
    s.expect("Enter for 13;")                               # the answer kept as the default
    s.send("\r")
    s.expect("model_params_b: 13")
    s.question("Training method")
    s.send("\r")                                            # still lora
    s.expect("method: lora")
    s.question("Tokens per training run")
    s.send("0.15\r")
    s.question("Training runs a year")
    s.send("12\r")
    s.expect("runs_per_year: 12")
    s.question("spread over the year")
    s.kill()                                                # the terminal goes away

    saved = tmp_path / "gpu-advisor-answers.yaml"
    assert yaml.safe_load(saved.read_text()) == {
        "workload": "fine-tune", "model": None, "model_params_b": 13.0, "method": "lora",
        "training_tokens_b": 0.15, "runs_per_year": 12.0}

    r = session("--answers", "gpu-advisor-answers.yaml")
    r.expect("Resuming gpu-advisor-answers.yaml")
    r.question("spread over the year")                      # where it stopped
    r.send("\r")
    r.question("Budget for compute")
    r.send("7000\r")
    r.question("spend capital up front")
    r.send("y")
    r.question("training data go")
    r.send("\r")
    r.question("embedded in a cloud")
    r.send("\r")
    r.question("already own GPUs")                          # Enter: none
    r.send("\r")
    r.question("proprietary and unshareable")               # asked of fine-tuners too
    r.send("n")
    r.question("regulation or safety")
    r.send("n")
    r.expect(HEADLINE)
    status, output = r.finish()
    assert status == 0, output
    assert "Which model" not in output and "Training method" not in output
    assert "Saved answers to gpu-advisor-answers.yaml" in flat(output)
    assert "Traceback" not in output

    answers = load_answers(saved, [], catalog)
    assert (answers.model, answers.model_params_b, answers.method) == (None, 13, "lora")
    assert (answers.budget_usd, answers.upfront_capex) == (7000, True)
    result = runner.invoke(cli, ["recommend", "--no-audit", "--answers", str(saved)])
    assert result.exit_code == 0, result.stderr


def test_help_in_every_kind_of_prompt_then_ctrl_c(session: Any, tmp_path: Path,
                                                  isolated_audit_store: Path) -> None:
    s = session()
    s.question("pretrain one")                              # a choice list
    s.expect(r"\? help, < back")                            # the prompt says how
    s.send("?")
    s.expect("Fine-tuning adapts a pretrained model")
    s.question("pretrain one")
    s.send("\r")
    s.question("Which model")                               # typed text
    s.send("?")
    s.expect("catalog list models")
    s.question("Which model")
    s.send("\r")
    s.expect("model: llama-3.1-8b")                         # a default, shown when taken
    s.question("Training method")
    s.send("\r")
    s.question("Tokens per training run")                   # a number
    s.send("?")
    s.expect("The amount of work")
    s.question("Tokens per training run")
    s.send("?")                                             # again: asked again, help not
    s.question("Tokens per training run")                   # printed a second time
    s.send("\r")
    s.question("GPU-hours a year")
    s.send("\r")
    s.question("Go on without it")                          # no amount of work: say so
    s.send("n")
    s.expect("the amount of work is required")              # no is refused: give it, or
    s.question("Go on without it")
    s.send("y")                                             # say explicitly: not known yet
    s.question("spread over the year")
    s.send("\r")
    s.question("Budget for compute")
    s.send("\r")
    s.question("spend capital up front")                    # yes/no
    s.send("?")
    s.expect("Buying needs the money now")
    s.question("spend capital up front")
    s.send("y")
    s.question("training data go")
    s.send(DOWN + "\r")                                     # none → region
    s.question("Which regions or countries are allowed")    # a checkbox list
    s.send("?")
    s.expect("Cloud offers sold nowhere in these")
    s.question("Which regions or countries are allowed")
    s.send(" " + DOWN + " \r")                              # tick us, tick eu
    s.expect("allowed_regions: us, eu")
    s.question("embedded in a cloud")
    s.send("\x03")                                          # Ctrl-C
    status, output = s.finish()
    assert status == 130, output
    assert ("Cancelled; nothing was recorded. Your answers so far are saved in "
            "gpu-advisor-answers.yaml; resume with: gpu-advisor ask --answers "
            "gpu-advisor-answers.yaml") in flat(output)
    assert "Traceback" not in output
    assert flat(output).count("The amount of work") == 1    # the help, shown once
    saved = yaml.safe_load((tmp_path / "gpu-advisor-answers.yaml").read_text())
    assert saved["data_residency"] == "region" and saved["allowed_regions"] == ["us", "eu"]
    assert not isolated_audit_store.exists()


def test_ctrl_c_at_the_first_question(session: Any, tmp_path: Path) -> None:
    s = session("--no-audit")
    s.question("pretrain one")
    s.send("\x03")
    status, output = s.finish()
    assert status == 130, output
    assert "Traceback" not in output
    assert output.rstrip().endswith("Cancelled; nothing was recorded.")
    assert list(tmp_path.iterdir()) == []


def test_asks_on_the_terminal_when_the_result_goes_to_a_file(tmp_path: Path) -> None:
    """``ask --format json > rec.json``: the questions are drawn on the terminal (stderr),
    the file gets the decision alone."""
    answers = tmp_path / "answers.yaml"
    answers.write_text("model: llama-3.1-8b\ntraining_tokens_b: 0.1\nruns_per_year: 4\n",
                       encoding="utf-8")
    env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    command = (f"{sys.executable} -m engine ask --answers {answers} --no-audit "
               f"--format json > {tmp_path / 'rec.json'}")
    child = pexpect.spawn("/bin/sh", ["-c", command], env=env, cwd=str(tmp_path),
                          dimensions=(40, 80), encoding="utf-8", timeout=60)
    child.expect("pretrain one")                           # a question, on the terminal
    child.send("\r")
    for _ in range(20):                                    # Enter through the rest
        if child.expect([r"\(.*\? help", pexpect.EOF]) == 1:
            break
        child.send("\r")
    child.close()
    decision = (tmp_path / "rec.json").read_text(encoding="utf-8")
    assert decision.startswith("{") and '"schema_version": 3' in decision
