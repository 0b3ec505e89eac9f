"""Combine rule firings into decisions: exclusions, summed weights, declared-order ties."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from engine.memo import Memo
from engine.rulebook import Rule, Rulebook
from engine.templates import render

SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}
_T = TypeVar("_T")


class _Out(BaseModel):
    # "constants": a non-finite float reaches jsonout's exact path, which refuses it
    model_config = ConfigDict(frozen=True, defer_build=True, ser_json_inf_nan="constants")


class Reason(_Out):
    """Why an option or candidate gained or lost: the rule, its effect, the text, sources."""

    rule: str
    effect: Literal["prefer", "avoid", "exclude"]
    weight: float
    text: str
    sources: list[str]


class OptionScore(_Out):
    """One option of an axis with its summed score and reasons."""

    option: str
    score: float
    excluded: bool
    reasons: list[Reason]


class AxisDecision(_Out):
    """The chosen option of an axis and the full ranking."""

    choice: str | None
    ranking: list[OptionScore]


class Note(_Out):
    """A warning (with severity) or a strategy raised by a rule."""

    id: str
    severity: Literal["info", "warning", "critical"] | None = None
    rule: str
    text: str
    sources: list[str]


class CandidateCost(_Out):
    """What a configuration costs."""

    upfront_usd: float
    per_hour_usd: float
    per_year_usd: float


class Candidate(_Out):
    """A scored hardware configuration (the JSON ``CANDIDATE`` of DESIGN.md)."""

    id: str
    gpu: str
    gpu_name: str
    count: int
    where: Literal["local", "cloud"]
    provider: str | None
    provider_kind: Literal["local", "hyperscaler", "specialised"]
    region: str | None
    pricing: str
    vram_needed_gb: float
    vram_total_gb: float
    cost: CandidateCost
    score: float
    excluded: bool
    reasons: list[Reason]
    warnings: list[Note] = Field(default_factory=list)


class Hardware(_Out):
    """The chosen configuration, alternatives, and how many candidates rules excluded."""

    choice: Candidate | None
    alternatives: list[Candidate]
    considered: int
    excluded: list[Candidate]


class Firing(_Out):
    """A rule that fired, on which fact."""

    rule: str
    fact: str


def text_of(rule: Rule, facts: Mapping[str, Any]) -> str:
    """The rule's ``because`` text filled from facts."""
    return render(rule.model.because, facts)


_INTERNED: Memo[tuple[Any, ...], Any] = Memo(8_000)
"""Distinct reasons and notes, shared: most recur across requests, and building a validated
pydantic object costs more than looking one up."""


def _interned(key: tuple[Any, ...], make: Callable[[], _T]) -> _T:
    """The one shared (frozen) output object with this content."""
    found: _T = _INTERNED.remember(key, make)
    return found


def reason(rule: Rule, kind: str, weight: float, text: str) -> Reason:
    """The reason ``rule`` gives for an option or candidate (shared when equal)."""
    sources = rule.model.sources
    return _interned(("reason", rule.id, kind, weight, text, *sources), lambda: Reason(
        rule=rule.id, effect=kind, weight=weight, text=text, sources=list(sources)))


def note(rule: Rule, note_id: str, severity: str | None, text: str) -> Note:
    """A warning (with severity) or strategy raised by ``rule`` (shared when equal)."""
    sources = rule.model.sources
    return _interned(("note", rule.id, note_id, severity, text, *sources), lambda: Note(
        id=note_id, severity=severity, rule=rule.id, text=text, sources=list(sources)))


_FIRINGS: Memo[tuple[str, str], Firing] = Memo(50_000)


def firings(pairs: Iterable[tuple[str, str]]) -> list[Firing]:
    """The records that rule ``r`` fired on fact ``f``, per ``(r, f)`` (shared when equal)."""
    found = _FIRINGS.get
    out = []
    for pair in pairs:
        record = found(pair)
        if record is None:
            record = _FIRINGS.put(pair, Firing(rule=pair[0], fact=pair[1]))
        out.append(record)
    return out


def _order(book: Rulebook, firings: Iterable[tuple[str, str]]) -> list[tuple[Rule, str]]:
    """Firings in a deterministic order: priority (high first), then file order, then fact."""
    precedence = book.precedence
    rule = book.rule
    return [(rule(rule_id), fact) for rule_id, fact in
            sorted(set(firings), key=lambda p: (precedence[p[0]], p[1]))]


def decide_axes(book: Rulebook, firings: Iterable[tuple[str, str]],
                facts: Mapping[str, Any]) -> tuple[dict[str, AxisDecision], list[Note],
                                                   list[Note]]:
    """Per axis: drop excluded options, sum weights, break ties by declared order."""
    scores: dict[str, dict[str, float]] = {a: dict.fromkeys(o, 0.0)
                                           for a, o in book.decisions.items()}
    excluded: dict[str, set[str]] = {a: set() for a in book.decisions}
    reasons: dict[tuple[str, str], list[Reason]] = {}
    warnings: list[Note] = []
    strategies: list[Note] = []
    for rule, _ in _order(book, firings):
        text = text_of(rule, facts)
        for effect in rule.model.then:
            kind, body = effect.kind, effect.body
            if kind in ("prefer", "avoid", "exclude"):
                axis, option = body.decision, body.option
                weight = 0.0 if kind == "exclude" else body.weight
                if kind == "exclude":
                    excluded[axis].add(option)
                else:
                    scores[axis][option] += weight if kind == "prefer" else -weight
                reasons.setdefault((axis, option), []).append(reason(rule, kind, weight, text))
            elif kind == "warn":
                warnings.append(note(rule, body.id, body.severity, text))
            elif kind == "suggest":
                strategies.append(note(rule, body.id, None, text))
    axes = {}
    for axis, options in book.decisions.items():
        ranking = [
            OptionScore(option=o, score=scores[axis][o], excluded=o in excluded[axis],
                        reasons=reasons.get((axis, o), []))
            for o in options
        ]
        ranked = sorted(ranking, key=lambda r: (r.excluded, -r.score, options.index(r.option)))
        choice = ranked[0].option if not ranked[0].excluded else None
        axes[axis] = AxisDecision(choice=choice, ranking=ranked)
    return axes, sort_warnings(warnings), _dedupe(strategies)


def sort_warnings(warnings: Sequence[Note]) -> list[Note]:
    """Critical first, then warning, then info; each id once per rule."""
    unique = _dedupe(warnings, key=lambda n: (n.id, n.rule))
    return sorted(unique, key=lambda n: SEVERITY_ORDER[n.severity or "info"])


def _dedupe(notes: Sequence[Note], key: Any = None) -> list[Note]:
    key = key or (lambda n: n.id)
    seen: set[Any] = set()
    out = []
    for note in notes:
        if key(note) not in seen:
            seen.add(key(note))
            out.append(note)
    return out


@dataclass
class Scored:
    """A candidate's facts with its summed score, exclusion and the rules that fired on it."""

    facts: Mapping[str, Any]
    score: float = 0.0
    excluded: bool = False
    rules: list[Rule] = field(default_factory=list)

    @property
    def sort_key(self) -> tuple[float, float, float, str]:
        """Best score first, then lowest yearly cost, lowest up-front cost, id."""
        f = self.facts
        return (-self.score, f["per_year_usd"], f["upfront_usd"], f["candidate_id"])


def score_candidates(book: Rulebook, firings: Iterable[tuple[str, str]],
                     candidates: Sequence[Mapping[str, Any]]) -> list[Scored]:
    """Sum candidate-rule weights per candidate (texts are rendered later, only if shown)."""
    scored = {c["candidate_id"]: Scored(c) for c in candidates}
    for rule, cid in _order(book, firings):
        entry = scored[cid]
        entry.rules.append(rule)
        excludes, deltas = rule.scoring
        if excludes:
            entry.excluded = True
        for delta in deltas:  # one by one, in effect order: the same float sums every time
            entry.score += delta
    return list(scored.values())


def _materialise(entry: Scored) -> Candidate:
    """The output form of a candidate, with its reasons and notes rendered."""
    reasons: list[Reason] = []
    notes: list[Note] = []
    for rule in entry.rules:
        text = text_of(rule, entry.facts)
        for effect in rule.model.then:
            kind, body = effect.kind, effect.body
            if kind in ("prefer", "avoid", "exclude"):
                weight = 0.0 if kind == "exclude" else body.weight
                reasons.append(reason(rule, kind, weight, text))
            elif kind in ("warn", "suggest"):
                notes.append(note(rule, body.id, getattr(body, "severity", None), text))
    f = entry.facts
    return Candidate(
        id=f["candidate_id"], gpu=f["gpu"], gpu_name=f["gpu_name"], count=f["count"],
        where=f["where"], provider=None if f["where"] == "local" else f["provider"],
        provider_kind=f["provider_kind"],
        region=f["regions"] or None, pricing=f["pricing"],
        vram_needed_gb=f["vram_needed_gb"], vram_total_gb=f["vram_total_gb"],
        cost=CandidateCost(upfront_usd=f["upfront_usd"], per_hour_usd=f["per_hour_usd"],
                           per_year_usd=f["per_year_usd"]),
        score=entry.score, excluded=entry.excluded, reasons=reasons, warnings=notes,
    )


def choose_hardware(candidates: Sequence[Scored], alternatives: int = 3) -> Hardware:
    """Best score wins, ties by lowest yearly cost; alternatives differ in GPU or place."""
    feasible = sorted((c for c in candidates if not c.excluded), key=lambda c: c.sort_key)
    choice = feasible[0] if feasible else None
    seen = {(choice.facts["gpu"], choice.facts["where"])} if choice else set()
    alts: list[Scored] = []
    for cand in feasible[1:]:
        if len(alts) == alternatives:
            break
        key = (cand.facts["gpu"], cand.facts["where"])
        if key not in seen:
            seen.add(key)
            alts.append(cand)
    excluded = sorted((c for c in candidates if c.excluded),
                      key=lambda c: c.facts["candidate_id"])
    return Hardware(choice=_materialise(choice) if choice else None,
                    alternatives=[_materialise(c) for c in alts], considered=len(candidates),
                    excluded=[_materialise(c) for c in excluded])
