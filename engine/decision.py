"""Combine rule firings into decisions: exclusions, summed weights, declared-order ties."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.rulebook import Rule, Rulebook
from engine.templates import render

SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


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


def _order(book: Rulebook, firings: Iterable[tuple[str, str]]) -> list[tuple[Rule, str]]:
    """Firings in a deterministic order: priority (high first), then file order, then fact."""
    unique = sorted(set(firings))
    pairs = [(book.rule(rule_id), fact) for rule_id, fact in unique]
    return sorted(pairs, key=lambda p: (-p[0].model.priority, p[0].order, p[1]))


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
        sources = list(rule.model.sources)
        for effect in rule.model.then:
            kind, body = effect.kind, effect.body
            if kind in ("prefer", "avoid", "exclude"):
                axis, option = body.decision, body.option
                weight = 0.0 if kind == "exclude" else body.weight
                if kind == "exclude":
                    excluded[axis].add(option)
                else:
                    scores[axis][option] += weight if kind == "prefer" else -weight
                reasons.setdefault((axis, option), []).append(
                    Reason(rule=rule.id, effect=kind, weight=weight, text=text, sources=sources))
            elif kind == "warn":
                warnings.append(Note(id=body.id, severity=body.severity, rule=rule.id,
                                     text=text, sources=sources))
            elif kind == "suggest":
                strategies.append(Note(id=body.id, rule=rule.id, text=text, sources=sources))
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


def score_candidates(book: Rulebook, firings: Iterable[tuple[str, str]],
                     candidates: Sequence[Mapping[str, Any]]) -> list[Candidate]:
    """Apply candidate-rule effects to each candidate."""
    by_id = {c["candidate_id"]: c for c in candidates}
    state: dict[str, dict[str, Any]] = {
        cid: {"score": 0.0, "excluded": False, "reasons": [], "warnings": []} for cid in by_id
    }
    for rule, cid in _order(book, firings):
        facts = by_id[cid]
        text = text_of(rule, facts)
        sources = list(rule.model.sources)
        entry = state[cid]
        for effect in rule.model.then:
            kind, body = effect.kind, effect.body
            if kind in ("prefer", "avoid", "exclude"):
                weight = 0.0 if kind == "exclude" else body.weight
                entry["excluded"] |= kind == "exclude"
                entry["score"] += weight if kind == "prefer" else -weight if kind == "avoid" else 0
                entry["reasons"].append(Reason(rule=rule.id, effect=kind, weight=weight,
                                               text=text, sources=sources))
            elif kind in ("warn", "suggest"):
                entry["warnings"].append(Note(
                    id=body.id, severity=getattr(body, "severity", None), rule=rule.id,
                    text=text, sources=sources))
    return [_candidate(by_id[cid], state[cid]) for cid in by_id]


def _candidate(facts: Mapping[str, Any], state: Mapping[str, Any]) -> Candidate:
    return Candidate(
        id=facts["candidate_id"], gpu=facts["gpu"], gpu_name=facts["gpu_name"],
        count=facts["count"], where=facts["where"],
        provider=None if facts["where"] == "local" else facts["provider"],
        region=facts["regions"] or None, pricing=facts["pricing"],
        vram_needed_gb=facts["vram_needed_gb"], vram_total_gb=facts["vram_total_gb"],
        cost=CandidateCost(upfront_usd=facts["upfront_usd"], per_hour_usd=facts["per_hour_usd"],
                           per_year_usd=facts["per_year_usd"]),
        score=state["score"], excluded=state["excluded"], reasons=state["reasons"],
        warnings=state["warnings"],
    )


def choose_hardware(candidates: Sequence[Candidate], alternatives: int = 3) -> Hardware:
    """Best score wins, ties by lowest yearly cost; alternatives differ in GPU or place."""
    feasible = sorted((c for c in candidates if not c.excluded),
                      key=lambda c: (-c.score, c.cost.per_year_usd, c.cost.upfront_usd, c.id))
    choice = feasible[0] if feasible else None
    seen = {(choice.gpu, choice.where)} if choice else set()
    alts: list[Candidate] = []
    for cand in feasible[1:]:
        if len(alts) == alternatives:
            break
        if (cand.gpu, cand.where) not in seen:
            seen.add((cand.gpu, cand.where))
            alts.append(cand)
    excluded = [c for c in candidates if c.excluded]
    return Hardware(choice=choice, alternatives=alts, considered=len(candidates),
                    excluded=sorted(excluded, key=lambda c: c.id))
