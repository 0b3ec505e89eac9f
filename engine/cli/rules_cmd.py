"""``gpu-advisor rules check|test|diff|explain|schema``: tools for rule authors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from engine.audit.location import Location
from engine.cli.options import (
    audit_db_option,
    catalog_options,
    format_option,
    rules_option,
    scenarios_option,
    strict_option,
)
from engine.files.printable import printable

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput
    from engine.decide.engine import Engine
    from engine.rules.lint import Finding

_DEFAULT_SCENARIOS = Path("tests/scenarios")


@click.group()
def rules() -> None:
    """Check, test, diff and explain the rules (for rule authors)."""


@rules.command("check")
@rules_option
@catalog_options
@strict_option("Exit 1 when there are lint warnings.")
@click.option("--samples", type=click.IntRange(0, 10_000), default=120, show_default=True,
              help="Answers sampled from the questionnaire when the cases leave an option "
                   "unreached.")
def check(rules_dir: Path | None, catalog_dir: Path | None, prices: PriceInput | None,
          strict: bool, samples: int) -> None:
    """Validate rules and catalog, lint them, and try that every option can be reached; one
    `file:line: id: message` per finding, every finding at once.

    Errors the engine would refuse the files for exit 2; policy errors (a band of an answer
    no tier covers, an option no input reaches) exit 1; lint warnings exit 0, or 1 with
    --strict. Reachability runs the cases beside the rules (NAME_test.yaml) and the team
    scenarios (tests/scenarios, in a checkout), then sampled answers.

    \b
    Example:
      gpu-advisor rules check --rules my-rules/ --strict
    """
    from engine.catalog.load import load_catalog
    from engine.decide.engine import Engine
    from engine.errors import EngineError, RuleError
    from engine.rules.lint import lint
    from engine.rules.load import load_rulebook

    catalog = load_catalog(catalog_dir, prices=prices)
    refused: list[RuleError] = []
    book = load_rulebook(rules_dir, catalog, refused)
    for error in refused:
        click.echo(str(error))
    whole = rules_dir is None or (rules_dir.is_dir() and (rules_dir / "decisions.yaml").is_file())
    findings = lint(book, catalog, rules_dir, catalog_dir, whole_policy=whole and not refused)
    if not refused and not any(f.refused for f in findings):
        try:  # only rules that fit durable_rules' limits are built (in a bounded trial first)
            engine = Engine.build(catalog, book)
        except EngineError as exc:
            click.echo(f"{rules_dir or 'rules'}: compile: {exc}")
            refused.append(RuleError(str(exc)))
        else:
            if whole:
                findings += _unreached(engine, rules_dir, samples)
    for finding in findings:
        click.echo(str(finding))
    failed = [f for f in findings if f.severity == "error" and not f.refused]
    refused += [RuleError(f.message) for f in findings if f.refused]
    warnings = sum(1 for f in findings if f.severity == "warning")
    click.echo(f"{len(book.rules)} rules: {len(refused) + len(failed)} error(s), "
               f"{warnings} warning(s)", err=True)
    if refused:
        sys.exit(2)
    if failed or (strict and warnings):
        sys.exit(1)


def _unreached(engine: Engine, rules_dir: Path | None, samples: int) -> list[Finding]:
    """A finding for each axis option that no case, scenario or sampled answer reaches,
    located at the option in decisions.yaml."""
    from engine.answers.model import validate_answers
    from engine.errors import AnswerError
    from engine.files.yamlio import line_of, load_yaml_file
    from engine.resources import bundled_dir
    from engine.rules.lint import Finding
    from engine.tools.reach import unreached_options
    from engine.tools.scenarios import case_files, load_cases, scenario_paths

    files = case_files(rules_dir) + (
        scenario_paths([_DEFAULT_SCENARIOS]) if _DEFAULT_SCENARIOS.is_dir() else [])
    cases = []
    for path in files:
        for scenario in load_cases(path):
            try:
                cases.append(validate_answers(scenario.answers, engine.catalog))
            except AnswerError:
                continue  # rules test reports it; here it only reaches nothing
    path = (rules_dir or bundled_dir("rules")) / "decisions.yaml"
    raw = load_yaml_file(path)
    found = []
    for miss in unreached_options(engine, cases, samples):
        options = list(engine.rulebook.decisions[miss.axis])
        line = line_of(raw, ("decisions", miss.axis, "options", options.index(miss.option)))
        found.append(Finding(str(path), line, f"{miss.axis}.{miss.option}",
                             str(miss).split(": ", 1)[1], "error"))
    return found


def _paths(paths: tuple[Path, ...], rules_dir: Path | None = None) -> list[Path]:
    """The scenario files named, else the team scenarios (where this is a checkout) and the
    cases beside the rules (``NAME_test.yaml``)."""
    from engine.errors import InputError
    from engine.tools.scenarios import case_files, scenario_paths

    for path in paths:
        if not path.exists():
            raise InputError("no such scenario file or directory", path=str(path))
    if paths:
        return scenario_paths(paths)
    found = scenario_paths([_DEFAULT_SCENARIOS]) if _DEFAULT_SCENARIOS.is_dir() else []
    found += case_files(rules_dir)
    if not found:
        raise InputError("no scenarios here and no cases beside the rules: name scenario "
                         "files or folders", path=str(_DEFAULT_SCENARIOS))
    return found


@rules.command("test")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--coverage", is_flag=True, help="Show how many scenarios fire each rule.")
@rules_option
@catalog_options
@format_option("text", "json")
def test(paths: tuple[Path, ...], coverage: bool, rules_dir: Path | None,
         catalog_dir: Path | None, prices: PriceInput | None, fmt: str) -> None:
    """Run scenario files (answers in, expected decisions out); exit 1 on any failure.

    Without PATHS: tests/scenarios (in a checkout) and the cases kept beside the rules
    (NAME_test.yaml, a list of scenarios under `cases:`).

    \b
    Example:
      gpu-advisor rules test tests/scenarios --coverage
    """
    from engine.decide.engine import load_engine
    from engine.tools.scenarios import run_cases

    engine = load_engine(rules_dir, catalog_dir, prices)
    outcomes = [o for p in _paths(paths, rules_dir) for o in run_cases(engine, p)]
    counts = {r.id: 0 for r in engine.rulebook.rules}
    for outcome in outcomes:
        for rule_id in outcome.fired:
            counts[rule_id] = counts.get(rule_id, 0) + 1
    failed = [o for o in outcomes if not o.passed]
    never = [r for r, n in counts.items() if n == 0]
    if fmt == "json":
        data = {"scenarios": [{"path": str(o.path), "name": o.scenario.name,
                               "passed": o.passed, "failures": o.failures, "fired": o.fired}
                              for o in outcomes],
                "passed": len(outcomes) - len(failed), "failed": len(failed)}
        if coverage:
            data["coverage"] = {"rules": counts, "never_fired": never,
                                "percent": _percent(counts)}
        click.echo(json.dumps(data, indent=2))
    else:
        for o in outcomes:
            click.echo(f"{'PASS' if o.passed else 'FAIL'} {o.path}: {o.scenario.name}")
            for failure in o.failures:
                click.echo(f"    {failure}")
            if o.failures:
                click.echo(f"    rules fired: {', '.join(o.fired)}")
        if coverage:
            width = max(len(r) for r in counts)
            click.echo("\ncoverage (scenarios firing each rule):")
            for rule_id, n in counts.items():
                click.echo(f"  {rule_id:<{width}}  {n}")
            click.echo(f"{_percent(counts):.0f}% of {len(counts)} rules fired"
                       + (f"; never fired: {', '.join(never)}" if never else ""))
        click.echo(f"{len(outcomes) - len(failed)} passed, {len(failed)} failed")
    if failed:
        sys.exit(1)


def _percent(counts: dict[str, int]) -> float:
    return 100.0 * sum(1 for n in counts.values() if n) / max(1, len(counts))


@rules.command("diff")
@click.argument("old")
@click.argument("new")
@scenarios_option
@click.option("--from-audit", is_flag=True,
              help="Also replay the answers of recorded decisions (from --audit-db).")
@audit_db_option
@click.option("--examples", type=click.IntRange(1, 100), default=3, show_default=True,
              help="Examples shown per axis.")
@format_option("text", "json")
def diff(old: str, new: str, scenario_paths_: tuple[Path, ...], from_audit: bool,
         audit_db: Location | None, examples: int, fmt: str) -> None:
    """Compare two policy versions on every scenario: what changes, and which rules did it.

    OLD and NEW are rule directories, directories holding rules/ (and catalog/), or git
    revisions of this repository.

    \b
    Example:
      gpu-advisor rules diff HEAD~1 rules/
      gpu-advisor rules diff rules/ my-rules/ --scenarios tests/scenarios
    """
    from engine.tools.policydiff import diff_policies, resolve_policy
    from engine.tools.scenarios import load_cases

    cases: list[tuple[str, object]] = []
    for path in _paths(scenario_paths_):
        found = load_cases(path)
        cases += [(path.stem if len(found) == 1 else f"{path.stem}:{s.name}", s.answers)
                  for s in found]
    if from_audit:
        from engine.audit.store import AuditStore, default_path

        with AuditStore(audit_db or default_path(), create=False) as store:
            cases += [(f"audit:{r.id}", r.answers_data) for r in store.iter_all()]
    with resolve_policy(old) as before, resolve_policy(new) as after:
        result = diff_policies(before, after, cases)  # type: ignore[arg-type]
    if fmt == "json":
        click.echo(json.dumps(result.as_json(), indent=2))
        return
    for label, ids in (("added", result.rules_added), ("removed", result.rules_removed),
                       ("edited", result.rules_edited)):
        if ids:
            click.echo(f"rules {label}: {', '.join(ids)}")
    if result.catalog_files_changed:
        click.echo(f"catalog files changed: {', '.join(result.catalog_files_changed)}")
    groups = result.by_axis()
    if not groups:
        click.echo(f"no decision changed in {result.cases} case(s)")
    for axis, items in groups.items():
        click.echo(f"{axis}: {len(items)} of {result.cases} changed")
        for c in items[:examples]:
            why = f" (rules: {', '.join(c.rules)})" if c.rules else ""
            click.echo(printable(f"    {c.case}: {c.before} → {c.after}{why}"))  # ids of records


@rules.command("explain")
@click.argument("rule_id")
@scenarios_option
@rules_option
@catalog_options
def explain(rule_id: str, scenario_paths_: tuple[Path, ...], rules_dir: Path | None,
            catalog_dir: Path | None, prices: PriceInput | None) -> None:
    """Show a rule, its compiled durable_rules form, its facts, and the scenarios firing it.

    \b
    Example:
      gpu-advisor rules explain usage.cheaper-to-own
    """
    import yaml

    from engine.decide.engine import load_engine
    from engine.errors import InputError
    from engine.facts.spec import candidate_registry, registry
    from engine.files.validation import did_you_mean
    from engine.rules.compile import rule_parts
    from engine.tools.scenarios import run_cases

    engine = load_engine(rules_dir, catalog_dir, prices)
    ids = [r.id for r in engine.rulebook.rules]
    if rule_id not in ids:
        raise InputError(f"no rule '{rule_id}'{did_you_mean(rule_id, ids)}", field="RULE_ID")
    rule = engine.rulebook.rule(rule_id)
    click.echo(f"# {rule.path}:{rule.line} (matches {rule.match} facts, phase {rule.phase}, "
               f"layer {rule.stratum})")
    click.echo(yaml.safe_dump([rule.model.model_dump(mode="json", exclude_defaults=True)],
                              sort_keys=False, allow_unicode=True).rstrip())
    parts = rule_parts(rule)
    split = f", in {len(parts)} parts that fire as one rule" if len(parts) > 1 else ""
    click.echo(f"\ncompiled (durable_rules JSON{split}):")
    for name, pattern in parts:
        click.echo(json.dumps({name: {"all": [{"m": pattern}]}} if split else
                              {"all": [{"m": pattern}]}, indent=2))
    book = engine.rulebook
    specs = {**registry(engine.catalog, book.decisions),
             **candidate_registry(engine.catalog, book.decisions, book.early_axes,
                                  book.fields),
             **book.set_facts}
    click.echo("\nfacts it reads:")
    for name in sorted(rule.reads):
        spec = specs.get(name)
        if spec is not None:
            unit = f" [{spec.unit}]" if spec.unit else ""
            click.echo(f"  {name} ({spec.origin}, {spec.type}{unit}): {spec.description}")
    setters = [r.id for r in engine.rulebook.rules if r.sets & rule.reads]
    if setters:
        click.echo(f"  set by: {', '.join(setters)}")
    if scenario_paths_ or _DEFAULT_SCENARIOS.is_dir():
        firing = [o.path.stem for p in _paths(scenario_paths_, rules_dir)
                  for o in run_cases(engine, p) if rule_id in o.fired]
        click.echo(f"\nfired by {len(firing)} scenario(s): {', '.join(firing) or 'none'}")


def _register_schema() -> None:
    from engine.cli.rules_schema import schema

    rules.add_command(schema)


_register_schema()
