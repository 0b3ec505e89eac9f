"""The lean decision JSON (schema_version 3) and the full trace on request.

Default: facts the rules read beyond the answers (and those the advice prints), excluded
configurations as one entry per rule and reason with the ids it excluded (first rule only),
``fired`` as rule → facts (request facts only), only the formula traces the advice prints,
no per-configuration notes. ``trace`` (``recommend --trace``, ``recommend(..., trace=True)``,
``audit show --trace`` by replay) adds the rest; without its traces a traced decision is the
lean one byte for byte, which is what the audit store keeps and replay compares.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import decided
from helpers.raw_audit import replace_in_record

import engine as engine_api
from engine.answers.model import load_answers
from engine.audit.record import parse
from engine.audit.store import AuditStore
from engine.cli import cli
from engine.decide.engine import SCHEMA_VERSION, SHOWN_TRACES, Decision, Engine, load_engine
from engine.files.jsonout import compact
from engine.output.hardware_rows import excluded_line
from engine.output.markdown import render_markdown
from engine.tools.scenarios import scenario_paths

REPO = Path(__file__).parent.parent
EXAMPLES = sorted((REPO / "examples").glob("*.*"))
EXAMPLE = REPO / "examples" / "startup-7b-continuous.yaml"
MEMORY_TRACES = {"vram_full_gib", "vram_lora_gib", "vram_qlora_gib", "vram_needed_gib"}


@pytest.fixture(scope="module")
def engine() -> Engine:
    return load_engine()


def decide(engine: Engine, path: Path, *, trace: bool = False) -> Decision:
    return engine.recommend(load_answers(path, [], engine.catalog), decision_id="lean",
                            trace=trace)


def run(runner: CliRunner, *args: str) -> Result:
    result = runner.invoke(cli, list(args))
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    return result


def candidates(data: dict[str, Any]) -> list[dict[str, Any]]:
    hw = data["hardware"]
    return [c for c in [hw["choice"], *hw["alternatives"]] if c is not None]


# -- the default shape -----------------------------------------------------------------------
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_default_decision_is_lean(engine: Engine, path: Path) -> None:
    data = json.loads(decide(engine, path).to_json())
    assert data["schema_version"] == SCHEMA_VERSION == 3
    assert set(data["estimates"]["traces"]) <= set(SHOWN_TRACES)
    assert all("warnings" not in c for c in candidates(data))
    assert isinstance(data["fired"], dict) and data["fired"]
    assert all(facts in ([], ["request"]) for facts in data["fired"].values())
    assert len(compact(decide(engine, path))) < 40_000


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_excluded_entry_has_the_rule_its_reason_and_the_ids(engine: Engine,
                                                            path: Path) -> None:
    decision = decide(engine, path)
    hw = decision.hardware
    assert hw.excluded
    for entry in json.loads(decision.to_json())["hardware"]["excluded"]:
        assert set(entry) == {"rule", "reason", "ids"}
        rule = engine.rulebook.rule(entry["rule"])
        assert rule.scoring[0], entry  # an excluding rule
        assert entry["reason"].strip() and "{" not in entry["reason"]
        assert entry["ids"] == sorted(entry["ids"]) and entry["ids"]
    pairs = [(g.rule, g.reason) for g in hw.excluded]
    assert len(pairs) == len(set(pairs))  # one entry per rule and reason
    shown = {c.id for c in [hw.choice, *hw.alternatives] if c is not None}
    assert not shown & {i for g in hw.excluded for i in g.ids}


def test_fired_is_grouped_per_rule_in_order_of_first_firing(engine: Engine) -> None:
    decision = decide(engine, EXAMPLE, trace=True)
    rules = list(decision.fired)
    assert len(rules) == len(set(rules)) == len(decision.fired)
    phase = {r.id: (r.phase if r.match == "request" else 1.5) for r in engine.rulebook.rules}
    # phase-1 request rules, then candidate rules, then the later phases' request rules
    assert [phase[r] for r in rules] == sorted(phase[r] for r in rules)
    on_candidates = [r for r in rules if engine.rulebook.rule(r).match == "candidate"]
    assert on_candidates and all(decision.fired[r] for r in on_candidates)
    assert all(f != "request" for r in on_candidates for f in decision.fired[r])
    lean = decide(engine, EXAMPLE)
    assert list(lean.fired) == rules
    assert all(lean.fired[r] == [] for r in on_candidates)


# -- the trace -------------------------------------------------------------------------------
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_trace_adds_the_traces_and_untraced_is_the_lean_decision_byte_for_byte(
        engine: Engine, path: Path) -> None:
    lean, traced = decide(engine, path), decide(engine, path, trace=True)
    data = json.loads(traced.to_json())
    assert set(data["estimates"]["traces"]) >= MEMORY_TRACES
    assert all(isinstance(c["warnings"], list) for c in candidates(data))
    assert engine.untraced(traced).to_json() == lean.to_json()
    assert len(traced.to_json()) > len(lean.to_json())
    # the advice is the same either way
    for key in ("answers", "decisions", "warnings", "strategies"):
        assert data[key] == json.loads(lean.to_json())[key], key
    # facts: the lean ones (what the rules read beyond the answers, what the advice prints)
    lean_facts = json.loads(lean.to_json())["facts"]
    assert lean_facts == {k: v for k, v in data["facts"].items() if k in engine.lean_facts
                          and k not in data["answers"]}
    assert len(data["facts"]) > len(lean_facts)


SCENARIOS = scenario_paths([REPO / "tests" / "scenarios"])


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_the_advice_reads_the_same_with_and_without_trace(engine: Engine, path: Path) -> None:
    """What a person reads (here the Markdown page, whose lines the text shares) does not
    depend on the trace: e.g. the excluded line counts each configuration under its first
    rule either way (an on-premises cluster: 54 by the on-premises rule, not 97 with trace)."""
    lean, traced = decided.decision_of(path), decided.decision_of(path, trace=True)
    page = render_markdown(traced, engine.rulebook).replace(traced.decision_id, "same")
    assert page == render_markdown(lean, engine.rulebook).replace(lean.decision_id, "same")
    assert excluded_line(traced) == excluded_line(lean)


def test_the_python_api_takes_trace() -> None:
    answers = {"model": "llama-3.1-8b", "hours_per_year": 2000}
    lean = engine_api.recommend(answers)
    traced = engine_api.recommend(answers, trace=True)
    assert "vram_lora_gib" not in lean.estimates["traces"]
    assert "vram_lora_gib" in traced.estimates["traces"]
    assert lean.decisions == traced.decisions


def test_recommend_trace_json_has_traces_rule_lines_and_records_the_lean_form(
        runner: CliRunner, engine: Engine, tmp_path: Path) -> None:
    db = tmp_path / "audit.sqlite3"
    out = run(runner, "recommend", "--answers", str(EXAMPLE), "--format", "json", "--trace",
              "--audit-db", str(db))
    data = json.loads(out.stdout)
    assert set(data["estimates"]["traces"]) >= MEMORY_TRACES
    assert {line["rule"] for line in data["trace"]} == {r.id for r in engine.rulebook.rules}
    assert data["fired"]["hardware.does-not-fit"]  # the candidates it fired on
    with AuditStore(db, create=False) as store:
        record = store.get(data["decision_id"])
    stored = json.loads(record.result)
    assert set(stored["estimates"]["traces"]) <= set(SHOWN_TRACES)
    assert stored["fired"]["hardware.does-not-fit"] == []
    del data["trace"]
    assert engine.untraced(Decision.model_validate(data)).to_json() == record.result
    replay = run(runner, "audit", "replay", data["decision_id"], "--audit-db", str(db))
    assert replay.stdout.endswith(": identical\n")


def test_audit_show_trace_rebuilds_what_recommend_trace_printed(runner: CliRunner,
                                                                tmp_path: Path) -> None:
    db = tmp_path / "audit.sqlite3"
    printed = run(runner, "recommend", "--answers", str(EXAMPLE), "--format", "json",
                  "--trace", "--audit-db", str(db)).stdout
    decision_id = json.loads(printed)["decision_id"]
    shown = run(runner, "audit", "show", decision_id, "--trace", "--format", "json",
                "--audit-db", str(db))
    assert shown.stdout == printed
    assert shown.stderr == ""
    lean = run(runner, "audit", "show", decision_id, "--format", "json", "--audit-db", str(db))
    assert "vram_lora_gib" not in json.loads(lean.stdout)["estimates"]["traces"]


def test_audit_show_trace_text_prints_the_decision_the_rules_and_the_header(
        runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "audit.sqlite3"
    decision_id = json.loads(run(runner, "recommend", "--answers", str(EXAMPLE), "--format",
                                 "json", "--audit-db", str(db)).stdout)["decision_id"]
    out = run(runner, "audit", "show", decision_id, "--trace", "--audit-db", str(db)).stdout
    assert out.startswith("Buy: 1× ")
    assert "\nTrace (every rule):\n" in out
    assert "  ✓ usage.continuous-favours-local: fired\n" in out
    assert "fired on " in out and " candidates" in out
    assert out.splitlines()[-1].startswith("recorded ")


def test_audit_show_trace_says_when_the_replay_differs(runner: CliRunner,
                                                       tmp_path: Path) -> None:
    db = tmp_path / "audit.sqlite3"
    decision_id = json.loads(run(runner, "recommend", "--answers", str(EXAMPLE), "--format",
                                 "json", "--audit-db", str(db)).stdout)["decision_id"]
    assert '"choice": "local"' in run(runner, "audit", "show", decision_id, "--format", "json",
                                      "--audit-db", str(db)).stdout
    replace_in_record(db, decision_id, '"choice": "local"', '"choice": "cloud"')
    result = runner.invoke(cli, ["audit", "show", decision_id, "--trace", "--format", "json",
                                 "--audit-db", str(db)])
    assert result.exit_code == 0
    assert result.stderr == (f"note: {decision_id}: replayed on its stored policy, the "
                             "decision differs from the record (see `audit replay`); the "
                             "trace shown is the replay's\n")


def test_recommend_trace_as_a_subprocess() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "engine", "recommend", "--answers", str(EXAMPLE), "--format",
         "json", "--trace", "--no-audit"], capture_output=True, text=True, timeout=120,
        check=False)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["schema_version"] == 3 and "vram_lora_gib" in data["estimates"]["traces"]
    assert data["trace"]


# -- excluded text; records of unreleased schemas ---------------------------------------
def test_text_says_why_configurations_were_excluded(runner: CliRunner, engine: Engine) -> None:
    decision = decide(engine, EXAMPLE)
    out = run(runner, "recommend", "--answers", str(EXAMPLE), "--no-audit",
              "--explain").stdout
    excluded = decision.hardware.excluded
    total = len({i for g in excluded for i in g.ids})
    top = max(excluded, key=lambda g: len(g.ids))  # one entry per rule in the lean form
    assert len({g.rule for g in excluded}) == len(excluded)
    line = (f"{total} of {decision.hardware.considered} configurations excluded; "
            f"{len(top.ids)} by {top.rule}, e.g.: {top.reason}")
    assert line in " ".join(out.split())


class _Written:
    """What ``AuditStore.append`` needs of a decision: its JSON text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def to_json(self) -> str:
        return self.text


def test_a_record_of_an_unreleased_decision_schema_is_refused_in_one_line(
        runner: CliRunner, engine: Engine, tmp_path: Path) -> None:
    """Decision schemas 1 and 2 were never released: a record holding one is intact (verify
    says ok) but is neither shown nor replayed, in one line, exit 2."""
    decision = decide(engine, EXAMPLE)
    text = decision.to_json().replace('"schema_version": 3', '"schema_version": 2', 1)
    assert '"schema_version": 2' in text
    db = tmp_path / "audit.sqlite3"
    with AuditStore(db) as store:
        store.append(_Written(text), engine.rulebook.texts, engine.catalog.texts)
    assert run(runner, "audit", "verify", "--audit-db", str(db)).stdout.startswith("ok: 1 ")
    for command in ("show", "replay"):
        result = runner.invoke(cli, ["audit", command, "lean", "--audit-db", str(db)])
        assert result.exit_code == 2, (command, result.output)
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert "holds a decision of schema 2; this version reads schema 3 only" in (
            result.stderr)


def test_the_json_form_of_the_unreleased_audit_schemas_is_refused() -> None:
    """The bytes of a schema-1/2 record are recognised only to be refused, with the reason."""
    old = json.dumps({"answers": "{}", "result": "{}", "id": "x"}, sort_keys=True).encode()
    with pytest.raises(ValueError, match="unreleased audit schema 1 or 2"):
        parse(old)
    with pytest.raises(ValueError, match="no record header"):
        parse(b"{}\n{}\n{}")
