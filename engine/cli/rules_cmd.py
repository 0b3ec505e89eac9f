"""``gpu-advisor rules check|test|diff|explain|schema``: tools for rule authors."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from engine.cli.options import (
    audit_db_option,
    catalog_options,
    format_option,
    rules_option,
    scenarios_option,
)
from engine.files.printable import printable

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput

_DEFAULT_SCENARIOS = Path("tests/scenarios")


@click.group()
def rules() -> None:
    """Check, test, diff and explain the rules (for rule authors)."""


@rules.command("check")
@rules_option
@catalog_options
@click.option("--strict", is_flag=True, help="Exit 1 when there are lint warnings.")
def check(rules_dir: Path | None, catalog_dir: Path | None, prices: PriceInput | None,
          strict: bool) -> None:
    """Validate rules and catalog, then lint them; one `file:line: id: message` per finding.

    Errors (the engine would refuse the files) exit 2; lint warnings exit 0, or 1 with
    --strict.

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
    errors: list[RuleError] = []
    book = load_rulebook(rules_dir, catalog, errors)
    for error in errors:
        click.echo(str(error))
    whole = rules_dir is None or (rules_dir.is_dir() and (rules_dir / "decisions.yaml").is_file())
    findings = lint(book, catalog, rules_dir, catalog_dir, whole_policy=whole and not errors)
    if not errors and not any(f.severity == "error" for f in findings):
        try:  # only rules that fit durable_rules' limits are built (in a bounded trial first)
            Engine.build(catalog, book)
        except EngineError as exc:
            click.echo(f"{rules_dir or 'rules'}: compile: {exc}")
            errors.append(RuleError(str(exc)))
    warnings = 0
    for finding in findings:
        click.echo(str(finding))
        if finding.severity == "error":
            errors.append(RuleError(finding.message))
        else:
            warnings += 1
    click.echo(f"{len(book.rules)} rules: {len(errors)} error(s), {warnings} warning(s)",
               err=True)
    if errors:
        sys.exit(2)
    if strict and warnings:
        sys.exit(1)


def _paths(paths: tuple[Path, ...]) -> list[Path]:
    from engine.errors import InputError
    from engine.tools.scenarios import scenario_paths

    chosen = list(paths) or [_DEFAULT_SCENARIOS]
    for path in chosen:
        if not path.exists():
            raise InputError("no such scenario file or directory", path=str(path))
    return scenario_paths(chosen)


@rules.command("test")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--coverage", is_flag=True, help="Show how many scenarios fire each rule.")
@rules_option
@catalog_options
@format_option("text", "json")
def test(paths: tuple[Path, ...], coverage: bool, rules_dir: Path | None,
         catalog_dir: Path | None, prices: PriceInput | None, fmt: str) -> None:
    """Run scenario files (answers in, expected decisions out); exit 1 on any failure.

    \b
    Example:
      gpu-advisor rules test tests/scenarios --coverage
    """
    from engine.decide.engine import load_engine
    from engine.tools.scenarios import run_scenario

    engine = load_engine(rules_dir, catalog_dir, prices)
    outcomes = [run_scenario(engine, p) for p in _paths(paths)]
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
         audit_db: Path | None, examples: int, fmt: str) -> None:
    """Compare two policy versions on every scenario: what changes, and which rules did it.

    OLD and NEW are rule directories, directories holding rules/ (and catalog/), or git
    revisions of this repository.

    \b
    Example:
      gpu-advisor rules diff HEAD~1 rules/
      gpu-advisor rules diff rules/ my-rules/ --scenarios tests/scenarios
    """
    from engine.tools.policydiff import diff_policies, resolve_policy
    from engine.tools.scenarios import load_scenario

    cases: list[tuple[str, object]] = [
        (p.stem, load_scenario(p).answers) for p in _paths(scenario_paths_)]
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
    from engine.tools.scenarios import run_scenario

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
             **candidate_registry(engine.catalog, book.decisions, book.early_axes),
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
        firing = [o.path.stem for o in (run_scenario(engine, p)
                                        for p in _paths(scenario_paths_)) if rule_id in o.fired]
        click.echo(f"\nfired by {len(firing)} scenario(s): {', '.join(firing) or 'none'}")


def _register_schema() -> None:
    from engine.cli.rules_schema import schema

    rules.add_command(schema)


_register_schema()
