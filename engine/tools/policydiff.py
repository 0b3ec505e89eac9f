"""Compare two policy versions (rule/catalog directories or git revisions) on scenarios."""

from __future__ import annotations

import contextlib
import io
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.answers.model import Answers, validate_answers
from engine.decide.engine import Decision, Engine, load_engine
from engine.errors import InputError
from engine.resources import bundled_dir


@dataclass(frozen=True)
class PolicyRef:
    """Where one policy version lives on disk."""

    label: str
    rules: Path
    catalog: Path


@contextlib.contextmanager
def resolve_policy(ref: str, *, cwd: Path | None = None) -> Iterator[PolicyRef]:
    """A rules dir, a dir holding rules/ (and catalog/), or a git revision of this repo
    (checked out into a temporary folder, removed when the block ends)."""
    path = Path(ref)
    if path.is_dir():
        if (path / "decisions.yaml").is_file():
            catalog = path.parent / "catalog"
            yield PolicyRef(ref, path, catalog if catalog.is_dir() else bundled_dir("catalog"))
            return
        if (path / "rules").is_dir():
            catalog = path / "catalog"
            yield PolicyRef(ref, path / "rules",
                            catalog if catalog.is_dir() else bundled_dir("catalog"))
            return
        raise InputError("not a rules directory (no decisions.yaml) nor a dir with rules/",
                         path=ref)
    archive = _git_archive(ref, cwd or Path.cwd())
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-diff-") as folder:
        root = Path(folder)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(root, filter="data")
        yield PolicyRef(ref, root / "rules", root / "catalog")


def _git_archive(revision: str, cwd: Path) -> bytes:
    """The rules and catalog folders of a git revision, as a tar archive."""
    def git(*args: str) -> bytes:
        result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
        if result.returncode:
            raise InputError(f"neither a directory nor a git revision "
                             f"({result.stderr.decode(errors='replace').strip()})",
                             path=revision)
        return result.stdout

    top = Path(git("rev-parse", "--show-toplevel").decode().strip())
    return git("-C", str(top), "archive", "--format=tar", revision, "rules", "catalog")


@dataclass
class Change:
    """One case whose decision differs between the two versions."""

    case: str
    axis: str
    before: str | None
    after: str | None
    rules: list[str]


@dataclass
class PolicyDiff:
    """Per axis, how many cases changed, examples, and the rules behind the changes."""

    cases: int
    changes: list[Change] = field(default_factory=list)
    rules_added: list[str] = field(default_factory=list)
    rules_removed: list[str] = field(default_factory=list)
    rules_edited: list[str] = field(default_factory=list)
    catalog_files_changed: list[str] = field(default_factory=list)

    def by_axis(self) -> dict[str, list[Change]]:
        """Changes grouped by axis (``hardware`` included)."""
        out: dict[str, list[Change]] = {}
        for change in self.changes:
            out.setdefault(change.axis, []).append(change)
        return out

    def as_json(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "cases": self.cases,
            "axes": {axis: {"changed": len(items),
                            "examples": [c.__dict__ for c in items[:5]]}
                     for axis, items in self.by_axis().items()},
            "rules_added": self.rules_added, "rules_removed": self.rules_removed,
            "rules_edited": self.rules_edited,
            "catalog_files_changed": self.catalog_files_changed,
        }


def rule_changes(old: Engine, new: Engine) -> tuple[list[str], list[str], list[str]]:
    """Rule ids added, removed and edited between two engines."""
    before = {r.id: r.model.model_dump(mode="json") for r in old.rulebook.rules}
    after = {r.id: r.model.model_dump(mode="json") for r in new.rulebook.rules}
    return (sorted(set(after) - set(before)), sorted(set(before) - set(after)),
            sorted(k for k in set(before) & set(after) if before[k] != after[k]))


def diff_policies(old: PolicyRef, new: PolicyRef,
                  cases: Iterable[tuple[str, Mapping[str, Any] | Answers]]) -> PolicyDiff:
    """Evaluate every case under both policies and explain the differences."""
    old_engine = load_engine(old.rules, old.catalog)
    new_engine = load_engine(new.rules, new.catalog)
    added, removed, edited = rule_changes(old_engine, new_engine)
    changed_rules = set(added) | set(removed) | set(edited)
    # a rule that only warns or suggests, or whose edit is to its words, cannot move a pick:
    # never named as its cause
    deciding = (_deciding(old_engine) | _deciding(new_engine)) - _reworded(
        old_engine, new_engine, edited)
    result = PolicyDiff(0, [], added, removed, edited, sorted(
        name for name in {*old_engine.catalog.texts, *new_engine.catalog.texts}
        if old_engine.catalog.texts.get(name) != new_engine.catalog.texts.get(name)))
    for name, raw in cases:
        result.cases += 1
        before = _decide(old_engine, raw)
        after = _decide(new_engine, raw)
        for axis in before.decisions:
            b, a = before.decisions[axis].choice, after.decisions[axis].choice
            if b != a:
                involved = _reason_rules(before, axis) | _reason_rules(after, axis)
                result.changes.append(Change(name, axis, b, a, sorted(involved & changed_rules)))
        hb, ha = _hw(before), _hw(after)
        if hb != ha:
            involved = _fired(before) ^ _fired(after) | (_fired(before) & set(edited))
            result.changes.append(Change(name, "hardware", hb, ha,
                                         sorted(involved & changed_rules & deciding)))
    return result


def _reworded(old: Engine, new: Engine, edited: Sequence[str]) -> set[str]:
    """The ``edited`` rules that differ only in their description, ``because`` text or
    sources."""
    def logic(engine: Engine) -> dict[str, Any]:
        return {r.id: r.model.model_dump(mode="json", exclude={"description", "because",
                                                                "sources"})
                for r in engine.rulebook.rules}

    before, after = logic(old), logic(new)
    return {k for k in edited if before[k] == after[k]}


def _deciding(engine: Engine) -> set[str]:
    """The rules with an effect beyond a warning or a strategy (they score, exclude or set a
    fact other rules read)."""
    return {r.id for r in engine.rulebook.rules
            if any(e.kind not in ("warn", "suggest") for e in r.model.then)}


def _decide(engine: Engine, raw: Mapping[str, Any] | Answers) -> Decision:
    answers = raw if isinstance(raw, Answers) else validate_answers(raw, engine.catalog)
    return engine.recommend(answers, decision_id="diff")


def _reason_rules(decision: Decision, axis: str) -> set[str]:
    return {r.rule for option in decision.decisions[axis].ranking for r in option.reasons}


def _fired(decision: Decision) -> set[str]:
    return set(decision.fired)


def _hw(decision: Decision) -> str | None:
    return decision.hardware.choice.id if decision.hardware.choice else None
