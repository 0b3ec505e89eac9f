"""Rule authors' tools through the CLI: rules test (with coverage), rules diff (directories,
git revisions, audit answers), rules explain, recommend --trace."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import cli
from engine.resources import bundled_dir

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"


def run(*argv: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(argv), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow
def test_rules_test_coverage_reports_every_rule_fired() -> None:
    code, out, _ = run("rules", "test", str(SCENARIOS), "--coverage")
    assert code == 0
    assert "100% of" in out and "never fired" not in out
    assert out.strip().endswith("passed, 0 failed")


def test_rules_test_failure_shows_expected_actual_and_fired(tmp_path: Path) -> None:
    scenario = tmp_path / "wrong.yaml"
    scenario.write_text(
        "name: wrong on purpose\ndescription: expects local for an intermittent 70B team\n"
        "answers: {model: llama-3.1-70b, hours_per_year: 300, usage_pattern: intermittent}\n"
        "expect:\n  decisions: {deployment: local}\n")
    code, out, _ = run("rules", "test", str(scenario))
    assert code == 1
    assert "FAIL" in out
    assert "decisions.deployment: expected local, got cloud" in out
    assert "rules fired:" in out and "usage.intermittent-favours-cloud" in out


def test_rules_test_json() -> None:
    code, out, _ = run("rules", "test", str(SCENARIOS / "01-continuous-8b-fits-consumer.yaml"),
                       "--coverage", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["passed"] == 1 and data["failed"] == 0
    assert data["coverage"]["rules"]["usage.continuous-favours-local"] == 1


def _changed_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), copy)
    usage = copy / "usage.yaml"
    text = usage.read_text()
    old = "      - prefer: {decision: deployment, option: local, weight: 2}"
    # usage.continuous-favours-local's preference; now it argues for cloud
    at = text.index(old, text.index("id: usage.continuous-favours-local\n"))
    usage.write_text(text[:at] + old.replace("local, weight: 2", "cloud, weight: 6")
                     + text[at + len(old):])
    return copy


@pytest.mark.slow
def test_rules_diff_names_the_changed_rule_and_scenarios(tmp_path: Path) -> None:
    copy = _changed_copy(tmp_path)
    some = tmp_path / "scenarios"  # a folder of them, as an author keeps (twenty: the time)
    some.mkdir()
    for path in sorted(SCENARIOS.glob("*.yaml"))[:20]:
        shutil.copy(path, some / path.name)
    code, out, _ = run("rules", "diff", str(bundled_dir("rules")), str(copy),
                       "--scenarios", str(some))
    assert code == 0
    assert "rules edited: usage.continuous-favours-local" in out
    cases = len(list(some.glob("*.yaml")))
    changed = re.search(rf"deployment: (\d+) of {cases} changed", out)
    assert changed is not None and int(changed.group(1)) >= 1, out
    assert "01-continuous-8b-fits-consumer: local → cloud (rules: usage.continuous-favours-local)" \
        in out
    # the same diff as JSON, on the one scenario named above (the whole set ran once)
    one = SCENARIOS / "01-continuous-8b-fits-consumer.yaml"
    code, out, _ = run("rules", "diff", str(bundled_dir("rules")), str(copy),
                       "--scenarios", str(one), "--format", "json")
    data = json.loads(out)
    assert data["axes"]["deployment"]["changed"] == 1
    assert data["axes"]["deployment"]["examples"][0]["rules"] == [
        "usage.continuous-favours-local"]


def test_rules_diff_same_policy_changes_nothing() -> None:
    code, out, _ = run("rules", "diff", str(bundled_dir("rules")), str(bundled_dir("rules")),
                       "--scenarios", str(SCENARIOS / "01-continuous-8b-fits-consumer.yaml"))
    assert code == 0
    assert out.strip() == "no decision changed in 1 case(s)"


@pytest.mark.slow
def test_rules_diff_against_a_git_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    if inside.stdout.strip() != "true":
        pytest.skip("not a git checkout")
    monkeypatch.chdir(ROOT)
    code, out, _ = run("rules", "diff", "HEAD", ".", "--scenarios",
                       str(SCENARIOS / "03-intermittent-70b.yaml"))
    assert code == 0, out
    # HEAD against the working tree: identical on a clean checkout, else the changes so far
    assert "no decision changed in 1 case(s)" in out or " of 1 changed" in out


def test_rules_diff_unknown_revision_is_a_clean_error() -> None:
    code, _, err = run("rules", "diff", "no-such-revision-xyz", "rules",
                       "--scenarios", str(SCENARIOS / "01-continuous-8b-fits-consumer.yaml"))
    assert code == 2
    assert err.startswith("error: no-such-revision-xyz: neither a directory nor a git revision")


@pytest.mark.slow
def test_rules_diff_from_audit(tmp_path: Path) -> None:
    db = tmp_path / "audit.sqlite3"
    assert run("recommend", "--answers", str(EXAMPLE), "--audit-db", str(db),
               "--format", "json")[0] == 0
    copy = _changed_copy(tmp_path)
    code, out, _ = run("rules", "diff", str(bundled_dir("rules")), str(copy), "--scenarios",
                       str(SCENARIOS / "01-continuous-8b-fits-consumer.yaml"), "--from-audit",
                       "--audit-db", str(db), "--format", "json")
    assert code == 0
    assert json.loads(out)["cases"] == 2


@pytest.mark.slow
def test_rules_explain(tmp_path: Path) -> None:
    # a tenth of the scenarios, the first among them: which of them fire the rule is what is
    # asserted, not the whole folder (`rules test --coverage` above decides every one)
    for path in sorted(SCENARIOS.glob("*.yaml"))[::10]:
        shutil.copy(path, tmp_path / path.name)
    code, out, _ = run("rules", "explain", "usage.cheaper-to-own", "--scenarios", str(tmp_path))
    assert code == 0
    assert "(matches request facts, phase 3, layer 0)" in out
    assert "id: usage.cheaper-to-own" in out
    assert '"$lt"' in out and '"own_to_rent_cost_ratio": 1' in out
    assert "own_to_rent_cost_ratio (derived, number)" in out
    assert "fired by" in out and "01-continuous-8b-fits-consumer" in out
    code, _, err = run("rules", "explain", "usage.cheaper-to-onw")
    assert code == 2 and "did you mean 'usage.cheaper-to-own'" in err


def test_recommend_trace_names_the_failed_condition_and_value() -> None:
    code, out, _ = run("recommend", "--answers", str(EXAMPLE), "--trace", "--no-audit")
    assert code == 0
    assert "✓ usage.continuous-favours-local: fired" in out
    assert ("· approach.scratch-with-reason: not fired: workload eq pretrain is false "
            "(workload = 'fine-tune')") in out
    code, out, _ = run("recommend", "--answers", str(EXAMPLE), "--trace", "--no-audit",
                       "--format", "json")
    trace = {line["rule"]: line for line in json.loads(out)["trace"]}
    assert trace["usage.continuous-favours-local"]["fired"] is True
    assert "not fired" in trace["usage.intermittent-favours-cloud"]["detail"]
    assert "usage_pattern = 'continuous'" in trace["usage.intermittent-favours-cloud"]["detail"]


def test_rules_diff_names_only_rules_that_can_move_a_pick(tmp_path: Path) -> None:
    """A hardware change is put down to the rule whose logic changed, not to rules reworded or
    that only warn (scenario 72 goes back to spot without the deadline rule)."""
    copy = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), copy)
    for name, old, new in (
            ("cloud-kind.yaml", "  - id: pricing.no-spot-against-a-deadline\n",
             "  - id: pricing.no-spot-against-a-deadline-off\n"),
            ("hardware.yaml", "these hold\n", "these hold (reworded)\n"),
            ("hardware.yaml", "GPU architectures are overtaken", "GPU generations are overtaken")):
        text = (copy / name).read_text()
        assert text.count(old) == 1, old
        (copy / name).write_text(text.replace(old, new))
    cloud = (copy / "cloud-kind.yaml").read_text()
    (copy / "cloud-kind.yaml").write_text(cloud.replace(
        "        - {fact: run_limit_share, gt: {policy: spot_deadline_share}}\n",
        "        - {fact: run_limit_share, gt: 1000}\n"))
    code, out, _ = run("rules", "diff", str(bundled_dir("rules")), str(copy), "--scenarios",
                       str(SCENARIOS / "72-overnight-deadline-no-spot.yaml"), "--format", "json")
    assert code == 0, out
    data = json.loads(out)
    assert data["rules_edited"] == ["hardware.does-not-fit", "hardware.obsolescence"]
    (change,) = data["axes"]["hardware"]["examples"]
    assert change["rules"] == ["pricing.no-spot-against-a-deadline"], change
