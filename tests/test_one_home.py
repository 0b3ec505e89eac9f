"""Each concept has one home: the axes in rules/decisions.yaml, owning cost in one function,
each CLI option in cli/options.py, each operator's negation in rules/operators.py, the
durable_rules number range in rules/limits.py."""

from __future__ import annotations

import ast
import csv
import io
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from engine.catalog.load import Catalog
from engine.cli import COMMANDS, cli
from engine.decide.engine import load_engine
from engine.errors import RuleError
from engine.estimates.cost import (
    CostLine,
    owning,
    owning_cost,
    payback_years,
    platform_for,
)
from engine.estimates.reports import cost_report
from engine.facts.spec import CANDIDATE
from engine.output.chart import curves_from
from engine.resources import bundled_dir
from engine.rules.limits import PLAIN_LIMIT, PLAIN_MIN, durable_fact, plain_float
from engine.rules.load import load_rulebook
from engine.rules.operators import NEGATION, OPERATORS

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"
CLI = ENGINE / "cli"
LOCAL = ROOT / "examples" / "startup-7b-continuous.yaml"


# -- the command line ------------------------------------------------------------------------
def _option_flags(path: Path) -> list[str]:
    """The long flags of every ``click.option(...)`` written in a module."""
    flags = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "option" and node.args
                and isinstance(node.args[0], ast.Constant)):
            flags.append(str(node.args[0].value))
    return flags


SAME_FLAG_OTHER_MEANING = {
    "--since": "audit list: a date; audit verify: a chain head",
    "--out": "batch: the results file; rules schema: a folder of schemas",
    "--method": "estimate memory: a method or inference; estimate training: what the run does",
}


def test_each_option_is_defined_once() -> None:
    counts = Counter(flag for path in CLI.glob("*.py") for flag in _option_flags(path))
    assert counts and {flag: n for flag, n in counts.items()
                       if n > 1 and flag not in SAME_FLAG_OTHER_MEANING} == {}
    assert counts["--audit-db"] == counts["--catalog"] == 1
    assert "--audit-db" in _option_flags(CLI / "options.py")


def test_no_command_imports_another() -> None:
    commands = {target.split(":")[0] for target in COMMANDS.values()}
    found = []
    for module in sorted(commands):
        path = ROOT / (module.replace(".", "/") + ".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in commands - {module}:
                found.append(f"{module} imports {node.module}")
    assert found == []


def test_every_audit_db_option_reads_the_environment(runner: CliRunner, tmp_path: Path) -> None:
    """One definition: `audit list` and `rules diff --from-audit` take the same store."""
    missing = tmp_path / "none.sqlite3"
    for args in (["audit", "verify"], ["rules", "diff", "rules/", "rules/", "--from-audit"]):
        result = runner.invoke(cli, args, env={"GPU_ADVISOR_AUDIT_DB": str(missing)})
        assert result.exit_code == 2, (args, result.output)
        assert str(missing) in result.stderr
    listed = runner.invoke(cli, ["audit", "list"], env={"GPU_ADVISOR_AUDIT_DB": str(missing)})
    assert listed.output == f"no decisions recorded yet (store: {missing})\n"


# -- the axes --------------------------------------------------------------------------------
def _rules_with_support_axis(tmp_path: Path) -> Path:
    """The bundled rules plus a declared axis ``support`` and one rule deciding it."""
    rules = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), rules)
    decl = yaml.safe_load((rules / "decisions.yaml").read_text(encoding="utf-8"))
    decl["decisions"]["support_plan"] = {"description": "Who supports the team.",
                                         "options": ["community", "vendor"]}
    (rules / "decisions.yaml").write_text(yaml.safe_dump(decl, sort_keys=False),
                                          encoding="utf-8")
    (rules / "support.yaml").write_text(yaml.safe_dump({"rules": [{
        "id": "support.vendor-for-capex", "description": "Capex buys a support contract.",
        "when": {"all": [{"fact": "upfront_capex", "is": True}]},
        "then": [{"prefer": {"decision": "support_plan", "option": "vendor"}}],
        "because": "You can spend capital up front.", "sources": ["decide.local"]}]}),
        encoding="utf-8")
    return rules


def test_a_declared_axis_is_decided_and_shown_by_its_id(runner: CliRunner,
                                                        tmp_path: Path) -> None:
    rules = _rules_with_support_axis(tmp_path)
    args = ["recommend", "--answers", str(LOCAL), "--rules", str(rules), "--no-audit"]
    text = runner.invoke(cli, [*args, "--explain"])
    assert text.exit_code == 0, text.output
    assert "Support plan: vendor  (score 1, ahead of community at 0)" in text.stdout
    markdown = runner.invoke(cli, [*args, "--format", "markdown"])
    assert "### Support plan: vendor\n\n*Score 1, ahead of community at 0.*" in markdown.stdout
    decision = json.loads(runner.invoke(cli, [*args, "--format", "json"]).stdout)
    assert list(decision["decisions"]) == ["approach", "method", "deployment", "cloud_kind",
                                           "pricing", "sharing", "support_plan"]


def test_a_declared_axis_as_a_subprocess(tmp_path: Path) -> None:
    rules = _rules_with_support_axis(tmp_path)
    done = subprocess.run([sys.executable, "-m", "engine", "recommend", "--answers", str(LOCAL),
                           "--rules", str(rules), "--no-audit", "--format", "markdown"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "### Support plan: vendor\n\n*Score 1, ahead of community at 0.*" in done.stdout
    titles = [line for line in done.stdout.splitlines() if line.startswith("### ")]
    assert [t.split(":")[0] for t in titles] == [
        "### Approach", "### Method", "### Deployment", "### Sharing", "### Support plan"]


def _candidate_rule(tmp_path: Path, fact: str, value: str) -> Path:
    path = tmp_path / "one.yaml"
    path.write_text("rules:\n"
                    "  - id: test.one\n"
                    "    description: d\n"
                    "    match: candidate\n"
                    f"    when: {{all: [{{fact: {fact}, eq: {value}}}]}}\n"
                    "    then: [{avoid: {weight: 1}}]\n"
                    "    because: b\n"
                    "    sources: [decide.local]\n", encoding="utf-8")
    return path


def test_decided_choices_take_the_declared_options(catalog: Catalog, tmp_path: Path) -> None:
    """``method_choice`` and ``pricing`` are checked against decisions.yaml's options."""
    path = _candidate_rule(tmp_path, "method_choice", "lorra")
    with pytest.raises(RuleError) as exc:
        load_rulebook(path, catalog)
    assert str(exc.value) == (
        f"{path}:5: test.one: 'lorra' is not a value of 'method_choice'; did you mean 'lora'?; "
        "expected one of full, lora, qlora")
    path = _candidate_rule(tmp_path, "pricing", "purchased")
    with pytest.raises(RuleError, match=r"expected one of on-demand, spot, reserved, purchase$"):
        load_rulebook(path, catalog)


def test_an_option_declared_is_an_option_the_facts_know(catalog: Catalog,
                                                        tmp_path: Path) -> None:
    """A pricing option added to decisions.yaml: rules may compare the candidate's pricing
    with it and read its summary facts."""
    rules = tmp_path / "rules"
    rules.mkdir()
    decl = yaml.safe_load((bundled_dir("rules") / "decisions.yaml").read_text(encoding="utf-8"))
    decl["decisions"]["pricing"]["options"].append("committed-use")
    (rules / "decisions.yaml").write_text(yaml.safe_dump(decl), encoding="utf-8")
    shutil.copy(_candidate_rule(tmp_path, "pricing", "committed-use"), rules / "one.yaml")
    (rules / "two.yaml").write_text(yaml.safe_dump({"rules": [{
        "id": "test.two", "description": "d",
        "when": {"all": [{"fact": "committed_use_available", "is": True}]},
        "then": [{"prefer": {"decision": "pricing", "option": "committed-use"}}],
        "because": "b", "sources": ["decide.local"]}]}), encoding="utf-8")
    book = load_rulebook(rules, catalog)
    assert book.decisions["pricing"] == ("on-demand", "spot", "reserved", "committed-use")


def test_axis_phases_come_from_decisions_yaml(catalog: Catalog, tmp_path: Path) -> None:
    """An axis declared ``phase: 1`` is decided before candidates: candidate rules may read its
    choice, and its own rules may read request facts only, as the message says."""
    rules = _rules_with_support_axis(tmp_path)
    decl = yaml.safe_load((rules / "decisions.yaml").read_text(encoding="utf-8"))
    decl["decisions"]["support_plan"]["phase"] = 1
    (rules / "decisions.yaml").write_text(yaml.safe_dump(decl, sort_keys=False),
                                          encoding="utf-8")
    shutil.copy(_candidate_rule(tmp_path, "support_plan_choice", "vendor"), rules / "one.yaml")
    book = load_rulebook(rules, catalog)
    assert book.early_axes == ("approach", "method", "support_plan")
    late = rules / "late.yaml"
    late.write_text(yaml.safe_dump({"rules": [{
        "id": "test.late", "description": "d",
        "when": {"all": [{"fact": "own_to_rent_cost_ratio", "gt": 1}]},
        "then": [{"prefer": {"decision": "support_plan", "option": "community"}}],
        "because": "b", "sources": ["decide.local"]}]}), encoding="utf-8")
    with pytest.raises(RuleError) as exc:
        load_rulebook(rules, catalog)
    assert str(exc.value) == (
        f"{late}:2: test.late: decides support_plan but reads facts known only after "
        "approach, method and support plan are decided; rules deciding approach, method or "
        "support plan can read only request facts (answers, memory per method, consumer cards "
        "per method, the API comparison)")


def _pairings(source: str, fields: dict[str, str], facts: set[str]) -> list[str]:
    """Where ``source`` writes down which configuration fact an axis constrains: a statement
    naming an axis (a string) beside its fact (a string, an attribute or a keyword), or a
    dict mapping an axis that is no fact to a string (``{"cloud_kind": "kind"}``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.stmt):
            strings, names = _names_in(node)
            found += [f"{line}: {axis} beside {fact}" for axis, fact in fields.items()
                      if axis != fact and axis in strings and fact in names]
        if isinstance(node, ast.Dict):
            found += [f"{line}: {key.value} → {value.value}"
                      for key, value in zip(node.keys, node.values, strict=True)
                      if isinstance(key, ast.Constant) and key.value in set(fields) - facts
                      and isinstance(value, ast.Constant) and isinstance(value.value, str)]
    return found


def _names_in(stmt: ast.stmt) -> tuple[set[str], set[str]]:
    """The strings a statement writes outside the statements it holds; and those with the
    attribute and keyword names it uses."""
    strings: set[str] = set()
    names: set[str] = set()
    for child in ast.iter_child_nodes(stmt):
        if isinstance(child, (ast.stmt, ast.excepthandler)):
            continue
        for node in ast.walk(child):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
    return strings, strings | names


def test_which_fact_an_axis_constrains_is_written_once() -> None:
    """decisions.yaml's ``field`` is the one place that says which configuration fact an axis
    constrains: nothing in engine/ writes it down again (the four copies there were)."""
    fields = dict(load_engine().rulebook.fields)
    assert fields == {"method": "method_option", "deployment": "where",
                      "cloud_kind": "provider_kind", "pricing": "pricing"}
    facts = {spec.name for spec in CANDIDATE}
    copies = {
        "facts/spec.py": '_AXES = {"provider_kind": "cloud_kind", "pricing": "pricing"}',
        "decide/sides.py": '_FILTER = {"pricing": "pricing", "cloud_kind": "kind"}',
        "decide/pick.py": 'for axis, differs in (("cloud_kind", r["provider_kind"] != c),):\n'
                          '    pass',
        "output/hardware_rows.py": 'checks = (("deployment", c.where != pick.where),)',
    }
    assert all(_pairings(copy, fields, facts) for copy in copies.values())
    found = [f"{path.relative_to(ROOT)}:{where}" for path in sorted(ENGINE.rglob("*.py"))
             for where in _pairings(path.read_text(encoding="utf-8"), fields, facts)]
    assert found == []


def test_an_unknown_constrained_fact_is_a_located_load_error(runner: CliRunner,
                                                              tmp_path: Path) -> None:
    """A misspelt ``field`` in a copy of the rules: `rules check` names the file, the line
    and the key, with a suggestion, and exits 2 as for any file the engine refuses."""
    rules = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), rules)
    path = rules / "decisions.yaml"
    text = path.read_text(encoding="utf-8")
    assert text.count("    field: where\n") == 1
    path.write_text(text.replace("    field: where\n", "    field: wher\n"), encoding="utf-8")
    line = text.splitlines().index("    field: where") + 1
    result = runner.invoke(cli, ["rules", "check", "--rules", str(rules)])
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"error: {path}:{line}: decisions.deployment.field: unknown "
                             "configuration fact 'wher'; did you mean 'where'?\n")
    path.write_text(text.replace("    field: where\n", "    field: count\n"), encoding="utf-8")
    result = runner.invoke(cli, ["rules", "check", "--rules", str(rules)])
    assert (result.exit_code, result.stderr) == (2, (
        f"error: {path}:{line}: decisions.deployment.field: 'count' is a number fact; an "
        "axis constrains a string one\n"))


def test_an_axis_summarised_per_option_must_say_what_it_constrains(
        runner: CliRunner, tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    shutil.copytree(bundled_dir("rules"), rules)
    path = rules / "decisions.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("    field: provider_kind\n", ""), encoding="utf-8")
    line = text.splitlines().index("  cloud_kind:") + 1
    result = runner.invoke(cli, ["rules", "check", "--rules", str(rules)])
    assert (result.exit_code, result.stderr) == (2, (
        f"error: {path}:{line}: cloud_kind: an axis summarised per option needs the "
        "configuration fact it constrains (field:)\n"))


def test_audit_list_and_export_take_the_declared_axes(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "audit.sqlite3"
    ok = runner.invoke(cli, ["recommend", "--answers", str(LOCAL), "--audit-db", str(db)])
    assert ok.exit_code == 0, ok.output
    listed = runner.invoke(cli, ["audit", "list", "--audit-db", str(db)])
    assert " ".join(listed.stdout.split()).endswith(
        "approach=fine-tune method=lora deployment=local sharing=dedicated")
    exported = runner.invoke(cli, ["audit", "export", "--audit-db", str(db), "--format", "csv"])
    header = next(csv.reader(io.StringIO(exported.stdout)))
    axes = list(load_engine(None, None, None).rulebook.decisions)
    assert header[6:6 + len(axes)] == axes == ["approach", "method", "deployment",
                                               "cloud_kind", "pricing", "sharing"]


# -- one path through the request rules ------------------------------------------------------
def test_the_axes_are_decided_once_and_what_if_takes_the_same_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A recommendation decides its axes once (between phases it reads the rankings only),
    and what-if's quick probe is the recommendation's own request phase, with the facts of
    the configurations held: the same ``_request``, no configuration built, nothing decided
    with texts."""
    import engine.decide.engine as pipeline
    from engine.answers.model import load_answers

    engine = load_engine(None, None, None)
    answers = load_answers(LOCAL, (), engine.catalog)
    calls: Counter[str] = Counter()

    def counted(name: str, function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return function(*args, **kwargs)
        return call

    for name in ("decide_axes", "rank_axes", "build_facts", "build_candidates"):
        monkeypatch.setattr(pipeline, name, counted(name, getattr(pipeline, name)))
    monkeypatch.setattr(pipeline.Engine, "_request",
                        counted("_request", pipeline.Engine._request))
    evaluation = engine.evaluate(answers)
    assert calls == {"_request": 1, "build_facts": 1, "build_candidates": 1,
                     "decide_axes": 1, "rank_axes": 2}
    calls.clear()
    held = {name: evaluation.request_facts[name] for name in ("cloud_candidate",)}
    probe = engine.request_probe(answers, held)
    assert calls == {"_request": 1, "build_facts": 1, "rank_axes": 3}
    decided = evaluation.decision.decisions
    assert probe.choices["approach"] == decided["approach"].choice


# -- owning cost -----------------------------------------------------------------------------
def test_owning_puts_its_parts_together_once(catalog: Catalog) -> None:
    gpu = catalog.gpu("rtx-4090")
    home = platform_for(gpu, 2, catalog.platforms)
    assert home is not None
    own = owning(gpu, 2, home, 0.2, 3000, catalog.policy)
    assert own.cost == owning_cost(own.fixed, own.running, 3000)
    assert own.cost.value == pytest.approx(own.line.at(3000), abs=1e-3)
    assert own.running_usd_year == pytest.approx(own.running.value * 3000)
    assert own.fixed.inputs["purchase_usd"] == own.purchase.value
    report = cost_report(catalog, "rtx-4090", gpus=2, hours_per_year=3000,
                         electricity_usd_per_kwh=0.2)
    assert report.trace["own"] == own.cost and report.trace["purchase"] == own.purchase
    assert report.own_usd_year == own.cost.value


def test_cost_lines_and_payback_by_hand() -> None:
    line = CostLine.through(1000.0, 1600.0, 2000.0)
    assert line == CostLine(1000.0, 0.3) and line.at(2000.0) == pytest.approx(1600.0)
    assert payback_years(6000.0, 500.0, 2500.0) == 3.0
    assert payback_years(6000.0, 2500.0, 2500.0) is None


def test_the_chart_draws_the_decisions_figures() -> None:
    """At the team's work the chart's lines are the costs the decision weighed."""
    engine = load_engine(None, None, None)
    from engine.answers.model import load_answers

    decision = engine.recommend(load_answers(LOCAL, (), engine.catalog), trace=True)
    curves = curves_from(decision.estimates)
    assert curves is not None
    facts = decision.facts
    assert curves.own(curves.planned) == pytest.approx(facts["local_cost_usd_year"], abs=1.0)
    assert curves.rent(curves.planned) == pytest.approx(facts["cloud_cost_usd_year"], abs=1.0)
    assert decision.hardware.choice is not None
    assert decision.hardware.choice.cost.per_year_usd == round(facts["local_cost_usd_year"])


# -- operators and numbers -------------------------------------------------------------------
def test_negation_is_one_table_and_an_involution() -> None:
    assert set(NEGATION) | {"is", "exists"} == set(OPERATORS)
    assert all(NEGATION[NEGATION[op]] == op for op in NEGATION)
    for module in ("lint", "compile"):
        text = (ROOT / "engine" / "rules" / f"{module}.py").read_text(encoding="utf-8")
        assert "NEGATION" in text and '"lt": "gte"' not in text


def test_durable_facts_are_plain_numbers() -> None:
    fact = durable_fact({"tiny": PLAIN_MIN / 10, "huge": -PLAIN_LIMIT * 10, "ok": 0.5,
                         "none": None, "list": [1], "flag": True})
    assert fact == {"tiny": 0.0, "huge": -999_999_999_999_999.0, "ok": 0.5, "flag": True}
    assert all(plain_float(v) for v in fact.values() if type(v) is float)
    assert not plain_float(PLAIN_LIMIT) and not plain_float(float("nan"))
    assert plain_float(PLAIN_MIN) and plain_float(0.0)


def test_one_chart_check_and_svg_needs_no_matplotlib(runner: CliRunner, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The flag and the renderer share one check: a PNG needs matplotlib, an SVG does not."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    svg, png = tmp_path / "out.svg", tmp_path / "out.png"
    result = runner.invoke(cli, ["recommend", "--answers", str(LOCAL), "--no-audit",
                                 "--chart", str(svg)])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"Chart written to {svg}\n"
    assert svg.read_text(encoding="utf-8").startswith("<svg ")
    result = runner.invoke(cli, ["recommend", "--answers", str(LOCAL), "--no-audit",
                                 "--chart", str(png)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"error: {png}: --chart: needs matplotlib: "
                             "pip install 'gpu-advisor[chart]'\n")
