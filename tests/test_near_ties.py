"""``single_node_premium``: what one machine of the same GPU vendor on the same side costs
more than a configuration of several nodes (the fact ``hardware.one-node-within-the-margin``
reads)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from engine.decide.candidates import PricedCandidate, with_ratios


@dataclass
class _Config:
    where: str
    cost_usd_year: float
    days_per_run: float
    nodes: int = 1
    vendor: str = "nvidia"
    provider_kind: str = ""
    pricing: str = ""
    provider: str = ""


@dataclass
class _Candidate:
    id: str
    config: _Config
    facts: dict[str, Any] = field(default_factory=dict)


def _ratios(rows: list[_Candidate], eligible: set[str] | None = None
            ) -> dict[str, dict[str, Any]]:
    ok = {c.id: eligible is None or c.id in eligible for c in rows}
    with_ratios(cast(list[PricedCandidate], rows), ok)
    return {c.id: c.facts for c in rows}


def test_several_nodes_are_priced_against_one_node_of_the_same_vendor() -> None:
    facts = _ratios([
        _Candidate("rtx24", _Config("local", 105_645, 125, nodes=3)),
        _Candidate("b200x8", _Config("local", 114_233, 68)),
        _Candidate("mi300x", _Config("local", 60_000, 60, vendor="amd")),  # another stack
        _Candidate("amd16", _Config("local", 200_000, 30, nodes=2, vendor="amd")),
    ])
    assert facts["rtx24"]["single_node_premium"] == pytest.approx(0.081, abs=1e-3)
    assert facts["b200x8"]["single_node_premium"] is None     # one node already
    assert facts["amd16"]["single_node_premium"] == pytest.approx(-0.7)


def test_only_an_eligible_single_node_counts() -> None:
    rows = [_Candidate("two", _Config("local", 100, 1.0, nodes=2)),
            _Candidate("one", _Config("local", 101, 1.0))]
    assert _ratios(rows, eligible={"two"})["two"]["single_node_premium"] is None
    assert _ratios(rows)["two"]["single_node_premium"] == pytest.approx(0.01)


def test_a_cheaper_faster_rival_is_the_first_close_call() -> None:
    """The startup example buys the guide's RTX 4090 (a mid-budget rule prefers it); an RTX
    5090 does the work for less in 15-hour runs instead of 24: that is the close call said
    first, with the rule the pick won on, before rivals nearer in cost but no better."""
    from pathlib import Path

    from engine.answers.model import load_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    example = Path(__file__).resolve().parent.parent / "examples" / "startup-7b-continuous.yaml"
    decision = engine.recommend(load_answers(example, [], engine.catalog))
    pick = decision.hardware.choice
    assert pick is not None and pick.gpu == "rtx-4090"
    first = decision.hardware.close_calls[0]
    assert first.id.startswith("local:rtx-5090x1")
    assert first.premium < 0 and first.days_per_run is not None
    assert pick.days_per_run is not None and first.days_per_run < pick.days_per_run * 0.9
    assert first.reason and "RTX 4090" in first.reason
