"""A configuration as Python reads it: the typed view of a candidate's facts.

The rules read a candidate as a dict of facts (durable_rules takes nothing else). The code that
ranks, compares and shows configurations reads this frozen view instead, so that the type
checker sees its arithmetic. It is made in one place, :meth:`Configuration.of`, from the facts
the configuration was priced with; the facts added after pricing, for the rules only (the next
better and worse method on the same hardware, the cost ratios, the request values candidate
rules read), are not in it. Each field is a candidate fact of ``engine.facts.spec`` under its
own name and type (``tests/test_configuration.py`` checks them): a number is an ``int`` or a
``float``, and a fact only some configurations carry is ``None`` on the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields, make_dataclass
from operator import itemgetter
from typing import Any, Literal, NamedTuple, cast

from engine.catalog.models import MethodGroup


@dataclass(frozen=True, slots=True)
class Configuration:
    """One priced configuration: what it is, where and how it is paid for, what it does for
    the year's work and what that costs."""

    # what it is
    candidate_id: str
    gpu: str
    gpu_name: str
    gpu_label: str
    vendor: str
    count: int
    nodes: int
    vram_total_gib: float
    # where, and how it is sold
    where: Literal["local", "cloud"]
    provider: str
    provider_name: str
    provider_label: str
    provider_kind: str
    offer: str
    instance: str
    link: str
    price_as_of: str
    regions: str
    location: str
    access: str
    vendor_allowed: bool
    pricing: str
    # the work on it
    train_method: MethodGroup
    method_rank: int
    precision: str
    gradient_checkpointing_on: bool
    vram_needed_gib: float
    vram_without_checkpointing_gib: float
    fits: bool
    within_year: bool
    meets_deadline: bool
    holds_jobs_at_once: bool
    busy_hours_per_year: float
    utilisation: float
    runs_per_year: float
    run_hours: float
    days_per_run: float
    start_up_hours: float
    spot_extra_hours: float
    # what it costs
    usd_per_gpu_hour: float
    per_hour_usd: float
    upfront_usd: float
    fixed_usd_year: float
    cost_usd_year: float
    cost_usd_per_run: float
    start_up_usd_per_run: float
    first_year_bill_usd: float
    is_plan: bool
    # a pool of jobs at once (none: one job, no layout)
    jobs_at_once: int
    slices_per_gpu: int
    job_gib: float
    mig_profile: str
    pool_layout: str
    always_on: bool
    # how it is had: bought ``new`` or ``used`` (the catalog's purchase price), or ``rented``
    condition: str | None = None
    # owned GPUs only
    is_owned: bool | None = None
    owned_added: int | None = None
    platform: str | None = None
    resale_usd: float | None = None
    upkeep_usd_year: float | None = None
    # rented only
    reserved_months: int | None = None
    reserved_days: int | None = None

    @staticmethod
    def of(facts: Mapping[str, Any]) -> Configuration:
        """The configuration whose facts these are (the only conversion from facts)."""
        made = _Making(*_required(facts), *map(facts.get, _OPTIONAL))
        made.__class__ = Configuration
        return cast(Configuration, made)


_OPTIONAL = tuple(f.name for f in fields(Configuration) if f.default is None)
"""The facts some configurations do not carry: owned GPUs', rented ones'."""
_required = itemgetter(*(f.name for f in fields(Configuration) if f.name not in _OPTIONAL))
_Making = make_dataclass("_Making", [
    (f.name, f.type) if f.default is MISSING else (f.name, f.type, f.default)
    for f in fields(Configuration)], slots=True)
"""Configuration's twin, not frozen: the same slots, filled by a plain ``__init__``, then
made a Configuration. A frozen dataclass's ``__init__`` sets each field through
``object.__setattr__``, five times slower, and every candidate is made one: in an alternating
A/B (``benchmarks/ab.py``) the constructor cost 1.8 % of a recommendation's CPU."""


class Pronouns(NamedTuple):
    """The words for the team's GPUs, one or several."""

    them: str
    they: str
    their: str
    have: str
    do: str


def pronouns(count: int) -> Pronouns:
    """The words for ``count`` of the team's GPUs: "it", "it", "its", "has", "does" for one."""
    if count == 1:
        return Pronouns("it", "it", "its", "has", "does")
    return Pronouns("them", "they", "their", "have", "do")


def run_length(days: float) -> str:
    """``2.8 days``, ``14 hours``, ``1.6 hours``, ``25 min``: to a tenth of an hour below ten
    hours, so that two short runs are told apart (1.4 and 1.6 hours are not 1 and 2)."""
    if days >= 1:
        return f"{days:,.1f} days"
    hours_ = days * 24
    if hours_ < 1:
        return f"{max(1.0, hours_ * 60):.0f} min"
    if hours_ < 9.95:
        return f"{hours_:.1f} hour{'s' if round(hours_, 1) != 1 else ''}"
    return f"{hours_:,.0f} hours"


def config_label(c: Configuration, count: int | None = None) -> str:
    """``8× MI300X (TensorWave, on-demand)``, ``4× RTX A6000 (to buy)``: ``c`` in words, as
    facts name it (of ``count`` of its GPUs where given)."""
    where = f"{c.provider_label}, {c.pricing}" if c.where == "cloud" else "to buy"
    return f"{c.count if count is None else count:,}× {c.gpu_label} ({where})"
