"""`rules check` as a rule author meets it: a tier band no rule covers, an option no input
reaches, a threshold named once in catalog/policy.yaml; and the cases kept beside the rules."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from engine.catalog.load import Catalog, load_catalog
from engine.cli import cli
from engine.decide.engine import load_engine
from engine.resources import bundled_dir
from engine.rules.coverage import Band, set_coverage
from engine.rules.load import load_rulebook

RULES = bundled_dir("rules")


@pytest.fixture
def rules_copy(tmp_path: Path) -> Path:
    target = tmp_path / "rules"
    shutil.copytree(RULES, target)
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def _check(rules: Path, *extra: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["rules", "check", "--rules", str(rules), *extra])
    assert "Traceback" not in result.output
    return result.exit_code, [line for line in result.stdout.splitlines()
                              if ": warning: " not in line]


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_a_raised_tier_bound_leaves_a_gap_that_check_names(rules_copy: Path) -> None:
    tiers = rules_copy / "budget-tiers.yaml"
    _edit(tiers, "- {fact: compute_budget_usd, gte: {policy: budget_tiers.production}}",
          "- {fact: compute_budget_usd, gte: 25000}")
    code, lines = _check(rules_copy)
    assert code == 1
    start = _line(tiers, "id: tier.set-production")
    assert lines == [f"{tiers}:{start}: tier.set-production: error: compute_budget_usd from "
                     "10,000 up to 25,000 gets no budget_tier: tier.set-production starts at "
                     "25,000 (tier.set-mid ends at 10,000)"]


def test_overlapping_tiers_are_named(rules_copy: Path) -> None:
    tiers = rules_copy / "budget-tiers.yaml"
    _edit(tiers, "- {fact: compute_budget_usd, lt: {policy: budget_tiers.mid}}",
          "- {fact: compute_budget_usd, lte: {policy: budget_tiers.mid}}")
    code, lines = _check(rules_copy)
    assert code == 1
    assert any("compute_budget_usd at 3,000 gets two values of budget_tier: tier.set-mid (mid) "
               "starts before tier.set-entry ends at 3,000" in line for line in lines), lines


def test_an_option_no_input_reaches_is_located_in_decisions(
        rules_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the cases beside the copied rules, no team scenarios
    _edit(rules_copy / "cloud-kind.yaml", "rules:\n", """rules:
  - id: my.never-spot
    description: a policy that never rents spot
    when: {all: [{fact: budget_usd, gte: 0}]}
    then:
      - exclude: {decision: pricing, option: spot}
    because: Never spot.
    sources: [decide.cloud]

""")
    code, lines = _check(rules_copy, "--samples", "10")
    assert code == 1
    decisions = rules_copy / "decisions.yaml"
    assert lines == [f"{decisions}:{_line(decisions, 'options: [on-demand, spot, reserved]')}"
                     ": pricing.spot: error: no input reaches this option (chosen in none of 16 "
                     "case(s) and 10 answers sampled from the questionnaire)"]


def test_the_bundled_policy_reaches_every_option_from_its_cases() -> None:
    code, lines = _check(RULES, "--samples", "0")
    assert (code, lines) == (0, [])


def test_tier_bounds_move_with_policy_alone(catalog_copy: Path) -> None:
    """One number in catalog/policy.yaml moves the rules that read it and their texts."""
    policy = catalog_copy / "policy.yaml"
    _edit(policy, "      mid: 3000\n", "      mid: 4500\n")
    engine = load_engine(None, catalog_copy, None)
    from engine.answers.model import validate_answers

    answers = validate_answers({"model": "llama-3.2-3b", "hours_per_year": 100,
                                "budget_usd": 4000}, engine.catalog)
    decision = engine.recommend(answers, trace=True)
    assert "tier.set-entry" in decision.fired and "tier.set-mid" not in decision.fired
    text = engine.rulebook.rule("tier.set-entry").model.because
    assert "under $4,500" in text
    assert "$4,500 to\n$10,000" in engine.rulebook.rule("tier.set-mid").model.because.replace(
        " $10", "\n$10") or "$4,500 to $10,000" in engine.rulebook.rule(
        "tier.set-mid").model.because


def test_tier_bands_are_contiguous_by_construction(catalog_copy: Path) -> None:
    from engine.errors import CatalogError

    _edit(catalog_copy / "policy.yaml", "      production: 10000\n", "      production: 2000\n")
    with pytest.raises(CatalogError, match="tiers rise in the order written: 'production' "
                                           "starts at 2000, not above 'mid' at 3000"):
        load_catalog(catalog_copy)


def test_bands_meet_as_ranges() -> None:
    a = Band("x", 0, True, 10, False)
    assert a.meet(Band("x", 10, True)).empty()
    assert not a.meet(Band("x", 9.5, True)).empty()
    assert Band("x", 5, False, 5, True).empty()


def test_the_bundled_tiers_cover_every_budget_once(catalog: Catalog) -> None:
    assert set_coverage(load_rulebook(None, catalog), catalog) == []


def test_rules_test_runs_the_cases_beside_the_rules(rules_copy: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no tests/scenarios here: only the cases beside the rules
    cases = yaml.safe_load((rules_copy / "budget-tiers_test.yaml").read_text())["cases"]
    result = CliRunner().invoke(cli, ["rules", "test", "--rules", str(rules_copy)])
    assert result.exit_code == 0, result.output
    assert f"PASS {rules_copy / 'budget-tiers_test.yaml'}: {cases[0]['name']}" in result.stdout
    _edit(rules_copy / "budget-tiers.yaml",
          "- {fact: compute_budget_usd, lt: {policy: budget_tiers.mid}}",
          "- {fact: compute_budget_usd, lt: 2000}")
    result = CliRunner().invoke(cli, ["rules", "test", "--rules", str(rules_copy)])
    assert result.exit_code == 1
    assert "FAIL" in result.stdout and "fired: expected tier.set-entry to fire" in result.stdout


def test_case_files_are_not_read_as_rules(rules_copy: Path, catalog: Catalog) -> None:
    book = load_rulebook(rules_copy, catalog)
    assert not any(r.path.endswith("_test.yaml") for r in book.rules)
