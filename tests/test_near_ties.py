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
