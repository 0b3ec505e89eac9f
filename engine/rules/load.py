"""Load ``rules/*.yaml`` into validated rules: every name resolved, every type checked.

A bad rule file fails here, before anything is evaluated, with ``file:line: rule-id: message``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.catalog.load import Catalog, content_hash
from engine.errors import InputError, RuleError
from engine.facts.spec import (
    OPTION_SUMMARY_AXES,
    FactSpec,
    FactType,
    candidate_registry,
    registry,
)
from engine.files.validation import build, did_you_mean, located
from engine.files.yamlio import line_of, parse_yaml, read_text
from engine.resources import bundled_dir
from engine.rules.conditions import (
    Condition,
    FactRef,
    Leaf,
    StoredCondition,
    facts_read,
    leaves,
)
from engine.rules.model import DeclarationFile, Declared, Effect, RuleFile, RuleModel
from engine.rules.templates import Parsed, TemplateError, check, format_value, parse
from engine.rules.when import (
    ConditionSyntaxError,
    condition_tree,
    resolve_policy,
    validate_condition,
)

DECLARATIONS = "decisions.yaml"
_POLICY_FIELD = re.compile(r"\{policy\.([a-z][a-z0-9_.\-]*)(:[^{}]*)?\}")
MAX_RULE_FILES = 200


@dataclass(frozen=True)
class Rule:
    """A validated rule with its parsed condition and where it came from."""

    model: RuleModel
    condition: StoredCondition
    path: str
    line: int | None
    order: int
    stratum: int = 0
    phase: int = 1
    """Request rules: 1 before sizing (may decide approach and method), 2 once candidates are
    scored (may decide cloud kind, pricing, sharing), 3 once the cloud side is resolved
    (deployment). Candidate rules: 1, or 2 when they compare costs between candidates."""

    @property
    def id(self) -> str:
        """The rule id."""
        return self.model.id

    @property
    def match(self) -> str:
        """``request`` or ``candidate``."""
        return self.model.match

    @cached_property
    def reads(self) -> frozenset[str]:
        """Facts the condition reads."""
        return frozenset(facts_read(self.condition))

    @cached_property
    def because_parts(self) -> Parsed:
        """The ``because`` template, parsed once (:func:`engine.rules.templates.fill`)."""
        return parse(self.model.because)

    @property
    def rank(self) -> tuple[int, int]:
        """Evaluation precedence: higher priority first, then file order."""
        return (-self.model.priority, self.order)

    @cached_property
    def scoring(self) -> tuple[bool, tuple[float, ...]]:
        """(whether the rule excludes, the signed weights its prefer/avoid effects add, in
        order): what scoring a candidate needs, without walking the effects each time."""
        excludes = any(e.kind == "exclude" for e in self.model.then)
        deltas = tuple(e.body.weight if e.kind == "prefer" else -e.body.weight
                       for e in self.model.then if e.kind in ("prefer", "avoid"))
        return excludes, deltas

    @property
    def sets(self) -> frozenset[str]:
        """Facts this rule derives with ``set``."""
        return frozenset(e.set.fact for e in self.model.then if e.set is not None)


@dataclass(frozen=True)
class Rulebook:
    """Every rule, the decision axes, declared warning/strategy ids and the content hash."""

    rules: tuple[Rule, ...]
    decisions: Mapping[str, tuple[str, ...]]
    decision_descriptions: Mapping[str, str]
    applies_when: Mapping[str, Mapping[str, tuple[str, ...]]]
    phases: Mapping[str, int]
    warnings: Mapping[str, Declared]
    strategies: Mapping[str, Declared]
    set_facts: Mapping[str, FactSpec]
    texts: Mapping[str, str] = field(repr=False)
    fields: Mapping[str, str] = field(default_factory=dict)
    """Axis → the configuration fact it constrains (``field`` in decisions.yaml; an axis
    that constrains none is absent): the one home of that mapping."""
    picked: Mapping[str, str] = field(default_factory=dict)
    """Axis → the configuration fact the pick's value of which is its choice (``chosen_by:
    pick``)."""

    @cached_property
    def hash(self) -> str:
        """sha256 over the exact text of every rule file."""
        return content_hash(self.texts)

    @cached_property
    def _by_id(self) -> dict[str, Rule]:
        return {rule.id: rule for rule in self.rules}

    def rule(self, rule_id: str) -> Rule:
        """The rule with this id (KeyError if none)."""
        return self._by_id[rule_id]

    @cached_property
    def precedence(self) -> dict[str, int]:
        """Rule id → its position in evaluation precedence (``Rule.rank``), for sorting."""
        ranked = sorted(self.rules, key=lambda r: r.rank)
        return {rule.id: position for position, rule in enumerate(ranked)}

    @cached_property
    def file_order(self) -> dict[str, int]:
        """Rule id → its position in file order (``Rule.order``), for sorting."""
        return {rule.id: rule.order for rule in self.rules}

    @cached_property
    def early_axes(self) -> tuple[str, ...]:
        """The axes decided before the job is sized (phase 1), whose choices candidate rules
        read as ``<axis>_choice``."""
        return tuple(axis for axis, phase in self.phases.items() if phase == 1)

    def strata(self, phase: int) -> int:
        """How many forward-chaining layers the request rules of ``phase`` form."""
        return 1 + max((r.stratum for r in self.rules
                        if r.match == "request" and r.phase == phase), default=0)


def load_rulebook(directory: Path | None, catalog: Catalog,
                  findings: list[RuleError] | None = None) -> Rulebook:
    """Load and check every rule file of a directory (the bundled rules by default).

    ``directory`` may also be a single rule file. Without a ``decisions.yaml`` of its own, the
    bundled one declares the decision axes. Raises the first problem as a
    :class:`RuleError`; with a ``findings`` list, every problem is appended there instead (one
    per broken file or rule) and the valid rest is returned.
    """
    collect = _Collector(findings)
    root = directory or bundled_dir("rules")
    files, root = _rule_files(root)
    # a file named by --rules may be a link (the user's choice); one inside a folder may not
    confined = directory is not None and directory.is_dir()
    decl_path = root / DECLARATIONS
    if decl_path not in files:
        decl_path = bundled_dir("rules") / DECLARATIONS
        files = [decl_path, *files]
    texts: dict[str, str] = {}
    raw: dict[Path, Any] = {}
    for path in files:
        with collect, _as_rule_error():
            follow = not confined or path.parent != root
            texts[f"rules/{path.name}"] = read_text(path, follow_symlinks=follow)
            raw[path] = parse_yaml(texts[f"rules/{path.name}"], path=str(path))
    if decl_path not in raw:
        raise collect.first()
    with _as_rule_error():
        decl = build(DeclarationFile, raw[decl_path], path=str(decl_path))
    _check_declared(decl, raw[decl_path], str(decl_path), catalog)
    models: list[tuple[RuleModel, Any, Path, int]] = []
    for path in files:
        if path == decl_path or path not in raw:
            continue
        with collect, _as_rule_error():
            rule_file = _rule_file(raw[path], str(path))
            models.extend((m, raw[path]["rules"][i], path, i)
                          for i, m in enumerate(rule_file.rules))
    checker = _Checker(catalog, decl, models, collect)
    rules = checker.check()
    if not models and not (findings and len(findings) > 0):
        with collect:  # a policy without rules decides nothing: never advice
            raise RuleError("holds no rules (rules: in *.yaml files); a policy with none "
                            "would recommend from the answers alone", path=str(directory or root))
    return Rulebook(
        rules=rules,
        decisions={k: tuple(v.options) for k, v in decl.decisions.items()},
        decision_descriptions={k: v.description for k, v in decl.decisions.items()},
        applies_when={k: {a: tuple(o) for a, o in v.applies_when.items()}
                      for k, v in decl.decisions.items()},
        phases={k: v.phase for k, v in decl.decisions.items()},
        fields=checker.fields,
        picked={k: v.field for k, v in decl.decisions.items()
                if v.chosen_by == "pick" and v.field is not None},
        warnings={w.id: w for w in decl.warnings},
        strategies={s.id: s for s in decl.strategies},
        set_facts=checker.set_facts,
        texts=texts,
    )


CASES_STEM = "_test"
"""Files named ``NAME_test.yaml`` beside the rules hold cases for ``rules test``, not rules."""


def _rule_files(root: Path) -> tuple[list[Path], Path]:
    """The rule files to read and the folder they are in (cases files left out).

    Every ``*.yaml``/``*.yml`` entry of a folder that is not a directory is listed, links and
    FIFOs included, so that reading refuses them rather than skipping them unseen.
    """
    if root.is_file():
        return [root], root.parent
    if not root.is_dir():
        raise RuleError("no such rule file or directory", path=str(root))
    files = sorted(p for p in root.iterdir() if p.suffix in (".yaml", ".yml")
                   and (p.is_symlink() or not p.is_dir())
                   and not p.stem.endswith(CASES_STEM))
    if len(files) > MAX_RULE_FILES:
        raise RuleError(f"more than {MAX_RULE_FILES} rule files", path=str(root))
    return files, root


class _Collector:
    """A context that appends a RuleError to ``findings`` and goes on, or lets it raise."""

    def __init__(self, findings: list[RuleError] | None) -> None:
        self.findings = findings

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, RuleError) and self.findings is not None:
            self.findings.append(exc)
            return True
        return False

    def first(self) -> RuleError:
        """The first collected problem (only called when one exists)."""
        assert self.findings
        return self.findings[0]


def _rule_file(data: Any, path: str) -> RuleFile:
    """The rules of one file. When only conditions are wrong, the file is read without them
    (its rules' ``when`` unset): the checker reports each broken condition in its turn, as
    ``file:line: rule-id: message``, and still checks the other rules."""
    try:
        return RuleFile.model_validate(data)
    except ValidationError:
        pass
    rules = data.get("rules") if isinstance(data, Mapping) else None
    without = data if not isinstance(rules, list) else {**data, "rules": [
        {k: v for k, v in rule.items() if k != "when"} if isinstance(rule, Mapping) else rule
        for rule in rules]}
    try:
        return RuleFile.model_validate(without)
    except ValidationError as exc:  # located in the file as read, lines and all
        raise located(exc, RuleFile, data, path=path) from None


@contextmanager
def _as_rule_error() -> Iterator[None]:
    """Re-raise an unreadable, unparsable or invalid rule file as a RuleError.

    (``build(..., error=RuleError)`` cannot be used: RuleError takes ``rule_id``, not ``field``.)
    """
    try:
        yield
    except RuleError:
        raise
    except InputError as exc:
        raise RuleError(exc.message, path=exc.path, line=exc.line, rule_id=exc.field) from None


def _check_declared(decl: DeclarationFile, raw: Any, path: str, catalog: Catalog) -> None:
    for axis in OPTION_SUMMARY_AXES:
        if axis in decl.decisions and decl.decisions[axis].field is None:
            raise RuleError("an axis summarised per option needs the configuration fact it "
                            "constrains (field:)", path=path,
                            line=line_of(raw, ("decisions", axis)), rule_id=axis)
    for key in ("warnings", "strategies"):
        for i, item in enumerate(getattr(decl, key)):
            for source in item.sources:
                if source not in catalog.sources:
                    raise RuleError(
                        f"unknown source '{source}'{did_you_mean(source, catalog.sources)}",
                        path=path, line=line_of(raw, (key, i)), rule_id=item.id)


class _Checker:
    """Resolves every name in every rule; raises the first problem with its location."""

    def __init__(self, catalog: Catalog, decl: DeclarationFile,
                 models: list[tuple[RuleModel, Any, Path, int]],
                 collect: _Collector | None = None) -> None:
        self.catalog = catalog
        self.decl = decl
        self.models = models
        self.collect = collect or _Collector(None)
        self.set_facts: dict[str, FactSpec] = {}
        self._pending: list[RuleError] | None = None
        self.axes = {axis: tuple(spec.options) for axis, spec in decl.decisions.items()}
        self.early = tuple(axis for axis, spec in decl.decisions.items() if spec.phase == 1)
        self.fields = {axis: spec.field for axis, spec in decl.decisions.items()
                       if spec.field is not None}

    def check(self) -> tuple[Rule, ...]:
        with self.collect:
            self._collect_set_facts()
        rules: list[Rule] = []
        seen: dict[str, str] = {}
        for order, (model, raw, path, _) in enumerate(self.models):
            with self.collect:
                where = (str(path), getattr(raw, "line", None), model.id)
                if model.id in seen:
                    self._fail(where, f"duplicate rule id (first defined at {seen[model.id]})")
                seen[model.id] = f"{path.name}:{where[1]}"
                model, condition = self._condition(model, raw, where)
                model = self._with_policy_text(model, raw, where)
                rule = Rule(model, condition, str(path), where[1], order)
                self._raise_all(self._problems(rule, raw, where))
                rules.append(rule)
        try:
            return self._stratify(rules)
        except RuleError:
            with self.collect:
                raise
            return tuple(rules)

    # -- helpers -------------------------------------------------------------------------
    def _fail(self, where: tuple[str, int | None, str], message: str,
              line: int | None = None) -> None:
        path, rule_line, rule_id = where
        error = RuleError(message, path=path, line=line or rule_line, rule_id=rule_id)
        if self._pending is None:
            raise error
        self._pending.append(error)

    def _problems(self, rule: Rule, raw: Any,
                  where: tuple[str, int | None, str]) -> list[RuleError]:
        """Every problem of a rule's names, not only the first (as a linter reports)."""
        self._pending = []
        try:
            self._check_rule(rule, raw, where)
            return self._pending
        finally:
            self._pending = None

    def _raise_all(self, problems: list[RuleError]) -> None:
        """Raise the first problem, when collecting after the others are collected."""
        if not problems:
            return
        if self.collect.findings is None:
            raise problems[0]
        self.collect.findings.extend(problems[:-1])
        raise problems[-1]

    def _known(self, match: str) -> dict[str, FactSpec]:
        base = (registry(self.catalog, self.axes) if match == "request"
                else candidate_registry(self.catalog, self.axes, self.early, self.fields))
        return {**base, **self.set_facts}

    def _collect_set_facts(self) -> None:
        answers = registry(self.catalog, self.axes)
        for model, raw, path, _ in self.models:
            for i, effect in enumerate(model.then):
                if effect.set is None:
                    continue
                where = (str(path), line_of(raw, ("then", i)), model.id)
                name, value = effect.set.fact, effect.set.value
                if name in answers:
                    self._fail(where, f"set: '{name}' is an answer or derived fact; "
                                      "choose a new name")
                type_: FactType = "bool" if isinstance(value, bool) else (
                    "string" if isinstance(value, str) else "number")
                previous = self.set_facts.get(name)
                if previous and previous.type != type_:
                    self._fail(where, f"set: '{name}' is set as {previous.type} elsewhere, "
                                      f"here as {type_}")
                old = previous.choices if previous and previous.choices else ()
                choices = tuple(sorted({*old, value})) if isinstance(value, str) else None
                self.set_facts[name] = FactSpec(name, type_, f"derived by rule {model.id}",
                                                choices, None, "set")

    def _condition(self, model: RuleModel, raw: Any,
                   where: tuple[str, int | None, str]) -> tuple[RuleModel, Condition]:
        """The rule (with its condition, if the file was read without it) and its tree."""
        line = line_of(raw, ("when",))
        data = raw.get("when") if isinstance(raw, Mapping) else None
        try:
            if model.when is None and data is not None:  # see _rule_file
                model = model.model_copy(update={"when": validate_condition(data, line)})
            tree = condition_tree(model.when, data, line)
            return model, resolve_policy(
                tree, lambda name, at: self._policy_value(name, where, at))
        except ConditionSyntaxError as exc:
            self._fail(where, str(exc), exc.line)
            raise  # pragma: no cover

    def _with_policy_text(self, model: RuleModel, raw: Any,
                          where: tuple[str, int | None, str]) -> RuleModel:
        """The rule with each ``{policy.NAME}`` of its ``because`` text filled in."""
        def fill(match: re.Match[str]) -> str:
            value = self._policy_value(match.group(1), where, line_of(raw, ("because",)))
            spec = match.group(2) or ""
            try:
                return format_value(value, spec[1:])
            except (TemplateError, ValueError) as exc:
                self._fail(where, f"because: {{policy.{match.group(1)}{spec}}}: {exc}",
                           line_of(raw, ("because",)))
                raise  # pragma: no cover

        text = _POLICY_FIELD.sub(fill, model.because)
        return model if text == model.because else model.model_copy(update={"because": text})

    def _policy_value(self, name: str, where: tuple[str, int | None, str],
                      line: int | None) -> Any:
        """The value of a policy constant a rule names (``{policy: NAME}``)."""
        found = policy_constants(self.catalog.policy).get(name)
        if found is None:
            self._fail(where, f"unknown policy constant '{name}'"
                              f"{did_you_mean(name, policy_constants(self.catalog.policy))}",
                       line)
        return found

    def _check_rule(self, rule: Rule, raw: Any, where: tuple[str, int | None, str]) -> None:
        known = self._known(rule.match)
        for leaf in leaves(rule.condition):
            self._check_leaf(leaf, known, where)
        for i, effect in enumerate(rule.model.then):
            self._check_effect(rule, effect, (where[0], line_of(raw, ("then", i)), where[2]))
        for source in rule.model.sources:
            if source not in self.catalog.sources:
                self._fail(where, f"unknown source '{source}'"
                                  f"{did_you_mean(source, self.catalog.sources)}",
                           line_of(raw, ("sources",)))
        try:
            unknown = check(rule.model.because, known)
        except TemplateError as exc:
            self._fail(where, f"because: {exc}", line_of(raw, ("because",)))
            unknown = []
        for name in unknown:
            self._fail(where, f"because: unknown fact '{{{name}}}'{did_you_mean(name, known)}",
                       line_of(raw, ("because",)))

    def _check_leaf(self, leaf: Leaf, known: Mapping[str, FactSpec],
                    where: tuple[str, int | None, str]) -> None:
        spec = known.get(leaf.fact)
        if spec is None:
            self._fail(where, f"unknown fact '{leaf.fact}'{did_you_mean(leaf.fact, known)}",
                       leaf.line)
            return
        if spec.type == "list" and leaf.op != "exists":
            self._fail(where, f"'{leaf.fact}' is a list; only 'exists' applies", leaf.line)
        if isinstance(leaf.value, FactRef):
            other = known.get(leaf.value.name)
            if other is None:
                self._fail(where, f"unknown fact '{leaf.value.name}'"
                                  f"{did_you_mean(leaf.value.name, known)}", leaf.line)
            elif other.type != spec.type:
                self._fail(where, f"cannot compare {spec.type} '{leaf.fact}' with {other.type} "
                                  f"'{other.name}'", leaf.line)
            return
        values = leaf.value if isinstance(leaf.value, tuple) else (leaf.value,)
        for value in values:
            self._check_value(leaf, spec, value, where)

    def _check_value(self, leaf: Leaf, spec: FactSpec, value: Any,
                     where: tuple[str, int | None, str]) -> None:
        if leaf.op == "exists" or value is None:
            if value is None and leaf.op != "is":
                self._fail(where, "compare with null using 'is: null' or 'exists: false'",
                           leaf.line)
            return
        ok = {
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "string": isinstance(value, str),
        }.get(spec.type, False)
        if not ok:
            self._fail(where, f"'{leaf.fact}' is a {spec.type}; {value!r} is not", leaf.line)
        if leaf.op in ("lt", "lte", "gt", "gte") and spec.type != "number":
            self._fail(where, f"'{leaf.op}' needs a number fact; '{leaf.fact}' is a "
                              f"{spec.type}", leaf.line)
        if leaf.op == "is" and spec.type != "bool":
            self._fail(where, f"'is: {value}' needs a bool fact; use eq for '{leaf.fact}'",
                       leaf.line)
        if spec.choices and spec.origin != "set" and value not in spec.choices:
            self._fail(where, f"'{value}' is not a value of '{leaf.fact}'"
                              f"{did_you_mean(str(value), spec.choices)}; expected one of "
                              f"{', '.join(spec.choices)}", leaf.line)

    def _check_effect(self, rule: Rule, effect: Effect,
                      where: tuple[str, int | None, str]) -> None:
        kind, body = effect.kind, effect.body
        if kind in ("prefer", "avoid", "exclude"):
            self._check_option(rule, body.decision, body.option, where)
        elif kind == "set" and rule.match == "candidate":
            self._fail(where, "set is only allowed in request rules")
        elif kind == "warn":
            self._check_id(body.id, self.decl.warnings, "warning", where)
        elif kind == "suggest":
            self._check_id(body.id, self.decl.strategies, "strategy", where)

    def _check_option(self, rule: Rule, decision: str | None, option: str | None,
                      where: tuple[str, int | None, str]) -> None:
        if rule.match == "candidate":
            if decision not in (None, "hardware") or option is not None:
                self._fail(where, "in a candidate rule, prefer/avoid/exclude apply to the "
                                  "candidate: leave out decision and option")
            return
        axes = self.decl.decisions
        if decision is None or decision not in axes:
            self._fail(where, f"unknown decision '{decision}'"
                              f"{did_you_mean(str(decision), axes)}; expected one of "
                              f"{', '.join(axes)}")
            return
        options = axes[decision].options
        if option not in options:
            self._fail(where, f"unknown option '{option}' for {decision}"
                              f"{did_you_mean(str(option), options)}; expected one of "
                              f"{', '.join(options)}")

    def _check_id(self, ident: str, declared: Iterable[Declared], what: str,
                  where: tuple[str, int | None, str]) -> None:
        ids = [d.id for d in declared]
        if ident not in ids and ident not in self.catalog.sources:
            self._fail(where, f"unknown {what} '{ident}'"
                              f"{did_you_mean(ident, [*ids, *self.catalog.sources])}; use a "
                              f"source id or declare it in {DECLARATIONS}")

    def _stratify(self, rules: list[Rule]) -> tuple[Rule, ...]:
        """Give each rule its phase (the first in which everything it reads exists) and, among
        request rules of one phase, its layer (after every rule that sets a fact it reads)."""
        setters: dict[str, list[Rule]] = {}
        for rule in rules:
            for name in rule.sets:
                setters.setdefault(name, []).append(rule)
        known = {**registry(self.catalog, self.axes),
                 **candidate_registry(self.catalog, self.axes, self.early, self.fields)}
        placed: dict[str, tuple[int, int]] = {}
        visiting: list[str] = []

        def place(rule: Rule) -> tuple[int, int]:
            if rule.id in placed:
                return placed[rule.id]
            if rule.id in visiting:
                cycle = " → ".join([*visiting[visiting.index(rule.id):], rule.id])
                self._fail((rule.path, rule.line, rule.id), f"set cycle: {cycle}")
            visiting.append(rule.id)
            names = {*rule.reads, *_template_names(rule)}
            phase = max((_PHASE_OF[known[n].phase] for n in names
                         if n in known and n not in self.set_facts), default=1)
            if rule.match == "candidate":
                phase = 2 if any(known[n].phase == "summary" for n in names
                                 if known.get(n) and known[n].origin == "candidate") else 1
            deps = [place(setter) for n in names for setter in setters.get(n, [])]
            if rule.match == "request":
                phase = max([phase, *(p for p, _ in deps)])
            depth = max((d + 1 for p, d in deps if p == phase), default=0)
            visiting.pop()
            placed[rule.id] = (phase, depth if rule.match == "request" else 0)
            return placed[rule.id]

        out = []
        for rule in rules:
            with self.collect:
                phase, depth = place(rule)
                placed_rule = Rule(rule.model, rule.condition, rule.path, rule.line, rule.order,
                                   depth, phase)
                self._check_phase(placed_rule, setters, placed)
                out.append(placed_rule)
        return tuple(out)

    def _check_phase(self, rule: Rule, setters: Mapping[str, list[Rule]],
                     placed: Mapping[str, tuple[int, int]]) -> None:
        """A rule may only decide what is still undecided when it runs."""
        where = (rule.path, rule.line, rule.id)
        if rule.match == "candidate":
            late = sorted(n for n in rule.reads for s in setters.get(n, [])
                          if placed[s.id][0] > 1)
            if late:
                self._fail(where, f"reads '{late[0]}', which a rule sets after the candidates "
                                  "are scored; candidate rules can read facts set by rules that "
                                  "read only request facts")
            return
        for effect in rule.model.then:
            axis = getattr(effect.body, "decision", None)
            latest = self.decl.decisions[axis].phase if axis else 3
            if rule.phase > latest:
                self._fail(where, f"decides {axis} but reads facts known only after "
                                  f"{self._axes_of(latest, 'and')} are decided; rules deciding "
                                  f"{self._axes_of(latest, 'or')} {_AXIS_HINT[latest]}")

    def _axes_of(self, phase: int, conjunction: str) -> str:
        """The axes decided in ``phase``, as words (``cloud kind, pricing and sharing``)."""
        names = [a.replace("_", " ") for a, s in self.decl.decisions.items() if s.phase == phase]
        return ", ".join(names[:-1]) + f" {conjunction} " + names[-1] if len(names) > 1 \
            else "".join(names)


_PHASE_OF = {"request": 1, "sized": 2, "summary": 2, "deployment": 3}
_AXIS_HINT = {1: "can read only request facts (answers, memory per method, consumer cards per "
                 "method, the API comparison)",
              2: "cannot read the deployment comparison (local_*, cloud_*, "
                 "own_to_rent_cost_ratio, break_even_hours)"}


def policy_constants(policy: Any) -> dict[str, Any]:
    """Every single-valued policy constant by name: ``a`` (a threshold too), ``a.b`` for a
    table entry, ``budget_tiers.TIER`` for the lowest budget of a tier."""
    out: dict[str, Any] = {}
    for name in type(policy).model_fields:
        value = getattr(policy, name)
        if name == "thresholds":
            out.update((key, constant.value) for key, constant in value.items())
            continue
        if name == "budget_tiers":
            out.update((f"{name}.{tier}", bound) for tier, bound in value.bands.items())
            continue
        items = value.items() if isinstance(value, dict) else [(None, value)]
        for key, constant in items:
            if hasattr(constant, "value"):
                out[name if key is None else f"{name}.{key}"] = constant.value
    return out


def _template_names(rule: Rule) -> list[str]:
    from engine.rules.templates import fields

    return [name for name, _ in fields(rule.model.because)]


__all__ = ["Rule", "Rulebook", "load_rulebook", "located"]
