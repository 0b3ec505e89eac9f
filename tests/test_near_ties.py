"""``single_node_premium``: what one machine alike (the same side, pricing, kind of provider
and GPU vendor) costs more than a configuration of several nodes (the fact
``hardware.one-node-within-the-margin`` reads)."""

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
    reserved_months: int | None = None
    access: str = "self-serve"
    candidate_id: str = ""
    provider_label: str = ""
    count: int = 8
    gpu_label: str = ""
    condition: str | None = None


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


def test_several_nodes_are_priced_against_one_node_bought_alike() -> None:
    """A team on AWS weighing 3 on-demand A100 instances against one B300 instance there: a
    cheaper single node on spot, or from another cloud it does not use, is not what it
    would take instead, so it does not make the three instances look no cheaper."""
    aws = {"provider_kind": "hyperscaler", "provider": "aws"}
    facts = _ratios([
        _Candidate("a100x24", _Config("cloud", 57, 0.03, nodes=3, pricing="on-demand", **aws)),
        _Candidate("b300x8", _Config("cloud", 70, 0.02, pricing="on-demand", **aws)),
        _Candidate("h200spot", _Config("cloud", 30, 0.03, pricing="spot", **aws)),
        _Candidate("mi300x", _Config("cloud", 40, 0.03, pricing="on-demand",
                                     provider_kind="specialised", provider="tensorwave")),
    ])
    assert facts["a100x24"]["single_node_premium"] == pytest.approx(70 / 57 - 1, abs=1e-3)


def test_only_an_eligible_single_node_counts() -> None:
    rows = [_Candidate("two", _Config("local", 100, 1.0, nodes=2)),
            _Candidate("one", _Config("local", 101, 1.0))]
    assert _ratios(rows, eligible={"two"})["two"]["single_node_premium"] is None
    assert _ratios(rows)["two"]["single_node_premium"] == pytest.approx(0.01)


def test_a_cheaper_faster_rival_is_the_first_close_call() -> None:
    """The overnight team rents one B200 for 5.5-hour runs; 8 MI300X do the work for 4 % less
    in 2.4-hour runs but on ROCm, which the policy weighs against: that is the close call said
    first, with the rule the pick won on, before rivals nearer in cost but no better."""
    from pathlib import Path

    from engine.answers.model import load_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    team = Path(__file__).resolve().parent / "teams" / "overnight-8b.yaml"
    decision = engine.recommend(load_answers(team, [], engine.catalog))
    pick = decision.hardware.choice
    assert pick is not None and pick.gpu == "b200"
    first = decision.hardware.close_calls[0]
    assert first.id.startswith("cloud:tensorwave-mi300x:")
    assert first.premium < 0 and first.days_per_run is not None
    assert pick.days_per_run is not None and first.days_per_run < pick.days_per_run * 0.9
    assert first.reason and "ROCm" in first.reason


def test_a_tier_preference_never_keeps_a_configuration_beaten_on_cost_and_time() -> None:
    """The startup example's mid budget names the RTX 4090 (the guide's tier); an RTX 5090
    does the work for less in 15-hour runs instead of 24, so it is the pick and the tier rule
    does not fire on the 4090."""
    from pathlib import Path

    from engine.answers.model import load_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    example = Path(__file__).resolve().parent.parent / "examples" / "startup-7b-continuous.yaml"
    decision = engine.recommend(load_answers(example, [], engine.catalog), trace=True)
    pick = decision.hardware.choice
    assert pick is not None and pick.gpu == "rtx-5090"
    fired = decision.fired.get("tier.mid-4090-systems", [])
    assert not any("rtx-4090x1" in target for target in fired)


def test_dominated_means_cheaper_and_faster_on_the_same_side() -> None:
    facts = _ratios([
        _Candidate("guide", _Config("local", 2035, 1.0)),
        _Candidate("newer", _Config("local", 2005, 0.62)),     # cheaper and faster
        _Candidate("slow", _Config("local", 2008, 0.96)),      # dearer than newer, slower
        _Candidate("rent", _Config("cloud", 1000, 0.1)),       # the other side: not counted
        _Candidate("tie", _Config("local", 2005, 0.62)),       # equal on both: not beaten
    ])
    assert facts["guide"]["dominated_same_side"] is True
    assert facts["slow"]["dominated_same_side"] is True
    assert facts["newer"]["dominated_same_side"] is False
    assert facts["tie"]["dominated_same_side"] is False
    assert facts["rent"]["dominated_same_side"] is False


def test_only_an_eligible_rival_dominates() -> None:
    rows = [_Candidate("guide", _Config("local", 2035, 1.0)),
            _Candidate("newer", _Config("local", 2005, 0.62))]
    assert _ratios(rows, eligible={"guide"})["guide"]["dominated_same_side"] is False
    assert _ratios(rows)["guide"]["dominated_same_side"] is True


def test_held_capacity_is_weighed_against_each_configuration() -> None:
    """``held_vs_cost``: the cheapest eligible configuration held all year (owned, or
    committed for months) against each one; per-run blocks and on demand are not held, and an
    excluded owned box does not count."""
    facts = _ratios([
        _Candidate("rent", _Config("cloud", 100, 1.0, pricing="on-demand")),
        _Candidate("term", _Config("cloud", 350, 2.0, pricing="reserved", reserved_months=36)),
        _Candidate("box", _Config("local", 300, 3.0)),
        _Candidate("block", _Config("cloud", 90, 1.0, pricing="reserved")),
    ], eligible={"rent", "term", "block"})
    assert facts["rent"]["held_vs_cost"] == 3.5 and facts["term"]["held_vs_cost"] == 1.0
    none = _ratios([_Candidate("rent", _Config("cloud", 100, 1.0, pricing="on-demand"))])
    assert none["rent"]["held_vs_cost"] is None
