"""The two sides of the deployment question, summarised from the scored candidates.

Owning and renting are each represented by their best configuration for the work (highest rule
score, then lowest cost for the year's work): the rules decide cloud kind and pricing from how
the cloud offers compare, the cloud side is then the best offer of the decided kind and pricing
(or, where none holds the job, the decision is revised and says why), and the deployment rules
compare it with the best owned configuration, for the same work. The pick is one of these
two, so every figure the output quotes (break-even, chart, estimates) is about the pick and
the best alternative on the other side.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, get_args

from engine.catalog.models import Ecosystem, Policy
from engine.decide.candidates import PricedCandidate, market, sooner_premium, stretched_past
from engine.decide.configuration import Configuration, config_label, run_length
from engine.estimates.cost import CostLine, break_even, crossing, payback_years
from engine.estimates.figure import Figure, dollars, tidy
from engine.estimates.workload import Workload
from engine.facts.spec import OPTION_SUMMARY_AXES, option_key
from engine.rules.load import Rule, Rulebook


@dataclass
class Scored:
    """A candidate with its summed rule score, exclusion and the rules that fired on it."""

    candidate: PricedCandidate
    score: float = 0.0
    excluded: bool = False
    rules: list[Rule] = field(default_factory=list)

    @property
    def facts(self) -> dict[str, Any]:
        """The candidate's facts, as the rules read them."""
        return self.candidate.facts

    @property
    def config(self) -> Configuration:
        """The candidate's facts as typed fields."""
        return self.candidate.config

    @property
    def id(self) -> str:
        """The candidate id."""
        return self.candidate.id

    @property
    def sort_key(self) -> tuple[float, float, float, str]:
        """Best score first, then lowest cost for the year's work, lowest up-front cost, id."""
        c = self.config
        return (-self.score, c.cost_usd_year, c.upfront_usd, c.candidate_id)


def best(scored: Iterable[Scored], **wanted: str | None) -> Scored | None:
    """The best eligible candidate with these values of its facts (``where="cloud"``; None:
    any), or None if there is none."""
    pairs = {name: value for name, value in wanted.items() if value is not None}
    found = [s for s in scored if not s.excluded]
    if pairs:  # one itemgetter call per candidate: this runs for every option summarised
        values_of = itemgetter(*pairs)
        values = tuple(pairs.values()) if len(pairs) > 1 else next(iter(pairs.values()))
        found = [s for s in found if values_of(s.facts) == values]
    return min(found, key=lambda s: s.sort_key) if found else None


HYPERSCALER_ECOSYSTEMS = frozenset(get_args(Ecosystem))
"""The ``cloud_ecosystem`` answers that name a hyperscaler a team already runs on."""


def summary_facts(scored: Sequence[Scored], book: Rulebook,
                  ecosystem: str | None = None, reach: float | None = None,
                  ruled_out: Mapping[str, frozenset[str]] | None = None,
                  margin: float = 0.0) -> dict[str, Any]:
    """What the cloud-kind, pricing and sharing rules compare: the best cost for the work per
    side, per declared cloud kind and pricing (an offer of one has it as the value of the
    configuration fact the axis constrains), and how they relate. A team that runs on a
    hyperscaler (``ecosystem``) that holds the job weighs its pricings there: its spot against
    its on-demand, not another cloud's. With ``reach`` (the first year's bill ÷ the compute
    budget beyond which a configuration is out of reach), a cloud holds the job only within
    it, unless no cloud does. Configurations whose value of a field an earlier phase has
    ruled out (``ruled_out``: field → options, such as a marketplace for data that may not go
    to third-party hosts) are no side of any comparison. Where a purchase costs more than
    ``margin`` (a share) less than staying in the team's hyperscaler, the team's cloud is
    not held to (``own_cloud_dearer_than_owning``)."""
    plan_priced = any(s.facts.get("is_plan") for s in scored)
    if ruled_out:
        scored = [s for s in scored
                  if not any(s.facts.get(name) in options for name, options in ruled_out.items())]
    out: dict[str, Any] = {
        "plan_priced": plan_priced,
        "eligible_local_count": sum(1 for s in scored if not s.excluded
                                    and s.config.where == "local"),
        "eligible_cloud_count": sum(1 for s in scored if not s.excluded
                                    and s.config.where == "cloud"),
        "eligible_consumer_local_count": sum(1 for s in scored if not s.excluded
                                             and s.config.where == "local"
                                             and s.facts["form"] == "consumer"),
    }
    billed = [s for s in scored if not s.excluded and s.facts.get("budget_ratio") is not None]
    if billed:
        least = min(billed, key=lambda s: (float(s.facts["budget_ratio"]), s.sort_key))
        out["least_budget_ratio"] = float(least.facts["budget_ratio"])
        out["least_first_year_bill_usd"] = float(least.facts["first_year_bill_usd"])
        out["least_first_year_label"] = config_label(least.config)
    owned = [s.config.vram_total_gib for s in scored
             if not s.excluded and s.config.where == "local"]
    if owned:
        out["least_local_vram_gib"] = min(owned)
    local = best(scored, where="local")
    if local is not None:
        out.update(_side("best_local", local))
    cloud = best(scored, where="cloud")
    if cloud is not None:
        out.update(_side("best_cloud", cloud))
    sides = [s for s in (local, cloud) if s is not None]
    overall = min(sides, key=lambda s: s.sort_key) if sides else None
    out["best_slices_per_gpu"] = overall.config.slices_per_gpu if overall is not None else 0
    own = _own_cloud(scored, ecosystem, reach)
    over = [] if own else _own_cloud_over_budget(scored, ecosystem)
    owning, staying = _owning_beats(own, scored, margin)
    out["own_cloud_dearer_than_owning"] = owning is not None
    if owning is not None:
        out["own_cloud_least_cost_usd_year"] = staying
        out["owning_instead_label"] = config_label(owning.config)
        out["owning_instead_cost_usd_year"] = owning.config.cost_usd_year
        own = []
    out["pricing_in_own_cloud"] = out["own_cloud_holds_job"] = bool(own)
    out["own_cloud_name"] = own[0].config.provider_name if own else ""
    out["own_cloud_over_budget"] = bool(over)
    if over:
        out["own_cloud_least_first_year_usd"] = min(
            float(s.facts["first_year_bill_usd"]) for s in over)
    costs: dict[str, float] = {}
    for axis in OPTION_SUMMARY_AXES:
        among = own if own and axis == "pricing" else scored
        field = book.fields[axis]
        newest = {s.facts.get(field) for s in among if not s.excluded
                  and s.config.where == "cloud" and s.facts.get("is_newest_generation")}
        for option in book.decisions.get(axis, ()):
            found = best(among, where="cloud", **{field: option})
            key = option_key(option)
            out[f"{key}_available"] = found is not None
            out[f"{key}_newest"] = option in newest
            if found is not None:
                costs[key] = found.config.cost_usd_year
                out[f"best_{key}_cost_usd_year"] = costs[key]
                out[f"best_{key}_first_year_usd"] = found.config.first_year_bill_usd
                if key == "spot" and found.config.days_per_run is not None:
                    out["spot_run_hours"] = tidy(found.config.days_per_run * 24, 2)
    out.update(_ratios(costs))
    out.update(_hyperscaler_on_demand(scored, book))
    out.update(_reservation(own or scored))
    return out


def _hyperscaler_on_demand(scored: Sequence[Scored], book: Rulebook) -> dict[str, Any]:
    """What the best hyperscaler configuration paid on demand saves against the best
    specialised one paid on demand, for the work (a share; negative: it costs more): the
    guide's premise that specialised clouds sell the same hardware for less, checked like for
    like (spot is weighed on its own axis)."""
    kind, pricing = book.fields["cloud_kind"], book.fields["pricing"]
    hyperscaler = best(scored, where="cloud", **{kind: "hyperscaler", pricing: ON_DEMAND})
    specialised = best(scored, where="cloud", **{kind: "specialised", pricing: ON_DEMAND})
    if hyperscaler is None or specialised is None or not specialised.config.cost_usd_year:
        return {}
    saving = 1 - hyperscaler.config.cost_usd_year / specialised.config.cost_usd_year
    return {"hyperscaler_on_demand_saving_on_specialised": tidy(saving, 3)}


def _kept_out_only_by(fact: str, scored: Sequence[Scored], sides: Sequence[Scored],
                      min_saving: float, also: Callable[[Scored], bool],
                      first: Callable[[Scored], Any]) -> tuple[Scored, Scored] | None:
    """The cheaper of the two ``sides`` (owning and renting, as resolved), and the first by
    ``first`` of the configurations that only rules reading ``fact`` keep out (never the
    team's own GPUs), that cost at least ``min_saving`` less than it, that the rules weigh no
    lower than the best of their side, and for which ``also`` holds (None where there is no
    side or no such configuration)."""
    if not sides:
        return None
    met = min(sides, key=lambda s: s.config.cost_usd_year)
    least = met.config.cost_usd_year
    kept = [s for s in scored
            if s.excluded and not s.config.is_owned
            and s.config.cost_usd_year <= least * (1 - min_saving)
            and all(s.score >= side.score for side in sides
                    if side.config.where == s.config.where)
            and all(fact in r.reads for r in s.rules if r.scoring[0]) and also(s)]
    return (met, min(kept, key=first)) if kept else None


def longer_run_facts(scored: Sequence[Scored], bound_days: float, kind: str | None,
                     pricing: str | None, sides: Sequence[Scored], min_saving: float,
                     ecosystem: str | None = None) -> dict[str, Any]:
    """Where the default run limit alone keeps out configurations that would cost at least
    ``min_saving`` less than the cheaper of the two ``sides`` (owning and renting, as
    resolved) that meet it: the one of them with the shortest runs (then by rule score and
    cost), its runs and what it saves, for the rules to say.

    Only runs no longer than ``bound_days`` (the longest a run may reasonably take) and
    within the year count; owned, only of another card than the best owned one (a smaller
    purchase of it is said on it); rented, only of the cloud ``kind`` and ``pricing`` the
    rules chose (None: none rented) and, for a team staying in its hyperscaler, of its
    ``ecosystem``; none the rules score below the best of its side; never the team's own
    GPUs (their limit is said on them). Call it only where the team set no limit."""
    bought = {s.config.gpu for s in sides if s.config.where == "local"}

    def along(c: Configuration) -> bool:
        if c.where == "local":  # fewer of the card bought: said on it (slower_count)
            return c.gpu not in bought
        return c.provider_kind == kind and c.pricing == pricing

    def stays(s: Scored) -> bool:
        return ecosystem is None or s.facts.get("provider_ecosystem") == ecosystem

    found = _kept_out_only_by(
        "meets_deadline", scored, sides, min_saving,
        lambda s: (s.config.fits and s.config.within_year and not s.config.meets_deadline
                   and s.config.days_per_run <= bound_days and along(s.config) and stays(s)),
        lambda s: (s.config.days_per_run, s.sort_key))
    if found is None:
        return {}
    met, slow = found
    c, least = slow.config, met.config.cost_usd_year
    return {"longer_run_candidate": c.candidate_id,
            "longer_run_label": config_label(c),
            "longer_run_cost_usd_year": c.cost_usd_year,
            "longer_run_days": c.days_per_run,
            "longer_run_answer_days": math.ceil(c.days_per_run),
            "longer_run_limit_days": slow.facts.get("run_limit_days"),
            "longer_run_met_label": config_label(met.config),
            "longer_run_met_cost_usd_year": least,
            "longer_run_saving_share": tidy(1 - c.cost_usd_year / least, 3)}


def vendor_limit_facts(scored: Sequence[Scored], sides: Sequence[Scored], kind: str | None,
                       pricing: str | None, min_saving: float) -> dict[str, Any]:
    """Where the team's GPU vendor limit (``gpu_vendors``) alone keeps out configurations
    that would cost at least ``min_saving`` less than the cheaper of the two ``sides``
    (owning and renting, as resolved): the cheapest of them, and what it saves, for the
    rules to say. Rented, only of the cloud ``kind`` and ``pricing`` the rented side resolved
    to (not a marketplace host for a team the rules keep on datacenter clouds); none the
    rules score below the best of its side; never the team's own GPUs (their limit is said
    on them)."""
    def along(c: Configuration) -> bool:
        return c.where == "local" or (c.provider_kind == kind and c.pricing == pricing)

    found = _kept_out_only_by(
        "vendor_allowed", scored, sides, min_saving,
        lambda s: not s.facts.get("vendor_allowed", True) and along(s.config),
        lambda s: (s.config.cost_usd_year, s.id))
    if found is None:
        return {}
    met, kept = found
    c, least = kept.config, met.config.cost_usd_year
    return {"vendor_limit_candidate": c.candidate_id,
            "vendor_limit_label": config_label(c),
            "vendor_limit_gpu_vendor": str(kept.facts.get("vendor", "")),
            "vendor_limit_cost_usd_year": c.cost_usd_year,
            "vendor_limit_met_label": config_label(met.config),
            "vendor_limit_met_cost_usd_year": least,
            "vendor_limit_saving_usd": tidy(least - c.cost_usd_year, 2),
            "vendor_limit_saving_share": tidy(1 - c.cost_usd_year / least, 3)}


def queued_owning_facts(local: Scored | None, cloud: Scored | None, min_saving: float,
                        budget: float, split: float | None = None) -> dict[str, Any]:
    """Where the team's jobs at once make the best purchase (``local``) dearer than renting
    (``cloud``), but the fewest of its card that do the year's work with the jobs run one at
    a time (its ``queued_*`` facts) would cost at least ``min_saving`` less than the rent, no
    more up front than the ``budget`` for compute, and less than the team's own GPUs with
    rent beside them (``split``, where they do part of the work): what they cost and how
    busy they would be, for the rules to say (the purchase that is the pick says its own)."""
    if local is None or cloud is None:
        return {}
    owned, rented, f = local.config, cloud.config, local.facts
    queued = float(f.get("queued_cost_usd_year") or 0.0)
    upfront = owned.upfront_usd - float(f.get("queued_saving_usd") or 0.0)
    if (not f.get("queued_count") or rented.cost_usd_year >= owned.cost_usd_year
            or queued > rented.cost_usd_year * (1 - min_saving) or upfront > budget
            or (split is not None and queued >= split)):
        return {}
    return {"queued_owning_label": config_label(owned),
            "queued_owning_count": f["queued_count"],
            "queued_owning_cost_usd_year": queued,
            "queued_owning_upfront_usd": dollars(upfront),
            "queued_owning_busy_share": f["queued_busy_share"],
            "queued_owning_run": f["queued_run"],
            "queued_owning_rent_cost_usd_year": rented.cost_usd_year}


def _own_cloud(scored: Sequence[Scored], ecosystem: str | None,
               reach: float | None = None) -> list[Scored]:
    """The configurations of the hyperscaler the team runs on, where one of them holds the
    job within the compute budget (or no cloud's does), within ``reach`` of it (or no cloud's
    does within reach), and one of them ranks above every other hyperscaler's, by rule score
    then cost for the work (else none: staying is not what the rules advise, and the pricings
    are weighed on every cloud)."""
    if ecosystem not in HYPERSCALER_ECOSYSTEMS:
        return []
    own = [s for s in scored if s.config.where == "cloud"
           and s.facts.get("provider_ecosystem") == ecosystem]
    held, others = _held_and_others(scored, ecosystem)
    if not held:
        return []
    if reach is not None and any(_kept_out(held, others, limit) for limit in (1.0, reach)):
        return []
    rivals = [s for s in others if s.facts.get("provider_kind") == "hyperscaler"]
    if not rivals:
        return own
    ours, theirs = (min(s.sort_key for s in side) for side in (held, rivals))
    return own if ours < theirs else []


def _owning_beats(own: Sequence[Scored], scored: Sequence[Scored],
                  margin: float) -> tuple[Scored | None, float]:
    """The best purchase no rule excluded (not the team's own GPUs), where it keeps within
    the compute budget in its first year and costs more than ``margin`` less for the work
    than every eligible configuration of the hyperscaler the team runs on (``own``, where it
    holds the job): the training would leave that cloud for it, so other clouds are as open
    (else None); and the least that cloud's configurations cost for the work."""
    held = [s.config.cost_usd_year for s in own if not s.excluded]
    if not held:
        return None, 0.0
    staying = min(held)
    purchase = best([s for s in scored if not s.config.is_owned], where="local")
    if (purchase is None or float(purchase.facts.get("budget_ratio") or 0.0) > 1.0
            or purchase.config.cost_usd_year >= staying * (1 - margin)):
        return None, staying
    return purchase, staying


def _own_cloud_over_budget(scored: Sequence[Scored], ecosystem: str | None) -> list[Scored]:
    """The configurations of the hyperscaler the team runs on that hold the job, where each
    costs more than the compute budget in its first year and another cloud's does not (else
    none: its cloud is out for another reason, or stays)."""
    if ecosystem not in HYPERSCALER_ECOSYSTEMS:
        return []
    held, others = _held_and_others(scored, ecosystem)
    return held if held and _kept_out(held, others, 1.0) else []


def _held_and_others(scored: Sequence[Scored],
                     ecosystem: str | None) -> tuple[list[Scored], list[Scored]]:
    """The eligible cloud configurations of the hyperscaler the team runs on, and those of
    every other cloud."""
    clouds = [s for s in scored if not s.excluded and s.config.where == "cloud"]
    return ([s for s in clouds if s.facts.get("provider_ecosystem") == ecosystem],
            [s for s in clouds if s.facts.get("provider_ecosystem") != ecosystem])


def _kept_out(held: Sequence[Scored], others: Sequence[Scored], limit: float) -> bool:
    """Whether none of ``held`` keeps its first year within ``limit`` times the compute
    budget where one of ``others`` does."""
    return not any(_within(s, limit) for s in held) and any(_within(s, limit) for s in others)


def _within(s: Scored, reach: float) -> bool:
    """Whether ``s``'s first year stays under ``reach`` times the compute budget."""
    return bool(s.facts.get("budget_ratio", 0) < reach)


def _reservation(scored: Sequence[Scored]) -> dict[str, Any]:
    """The best reservation against paying on demand for the same work: the same offer on
    demand, or the best on-demand configuration of its kind of cloud (for a hyperscaler, its
    provider) where that costs less; for an offer sold only reserved (an AWS Capacity Block,
    a Lambda 1-Click Cluster) with nothing on demand of its kind, the best configuration paid
    on demand. Below 1 the reservation pays."""
    reserved = best(scored, where="cloud", pricing="reserved")
    if reserved is None:
        return {}
    c = reserved.config
    same = [s for s in scored if s.config.offer == c.offer and s.config.pricing == "on-demand"]
    found = [s for s in (same[0] if same else None,
                         best(scored, where="cloud", pricing="on-demand", **market(c)))
             if s is not None]
    other = (min(found, key=lambda s: s.config.cost_usd_year) if found
             else best(scored, where="cloud", pricing="on-demand"))
    if other is None or not other.config.cost_usd_year:
        return {}
    ratio = reserved.config.cost_usd_year / other.config.cost_usd_year
    return {"reserved_to_on_demand_cost_ratio": tidy(ratio, 3)}


def _side(prefix: str, s: Scored) -> dict[str, Any]:
    c = s.config
    return {
        f"{prefix}_id": c.candidate_id,
        f"{prefix}_gpu_name": c.gpu_name,
        f"{prefix}_count": c.count,
        f"{prefix}_cost_usd_year": c.cost_usd_year,
        f"{prefix}_upfront_usd": c.upfront_usd,
        f"{prefix}_days_per_run": c.days_per_run,
        f"{prefix}_busy_hours_per_year": c.busy_hours_per_year,
        f"{prefix}_utilisation": c.utilisation,
    }


def _ratios(costs: Mapping[str, float]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    od = costs.get("on_demand")
    if od and "spot" in costs:
        out["spot_to_on_demand_cost_ratio"] = tidy(costs["spot"] / od, 3)
        out["spot_saving"] = tidy(1 - costs["spot"] / od, 3)
    if costs.get("specialised") and "marketplace" in costs:
        out["marketplace_saving_on_specialised"] = tidy(
            1 - costs["marketplace"] / costs["specialised"], 3)
    others = [costs[k] for k in ("specialised", "marketplace") if k in costs]
    if "hyperscaler" in costs and others and min(others) > 0:
        out["hyperscaler_to_other_cost_ratio"] = tidy(costs["hyperscaler"] / min(others), 3)
        out["hyperscaler_premium_usd_year"] = dollars(costs["hyperscaler"] - min(others))
    return out


@dataclass(frozen=True)
class Revision:
    """A decided option no configuration offers, and what the decision became instead."""

    axis: str
    before: str
    after: str
    text: str


RESERVED = "reserved"
ON_DEMAND = "on-demand"
"""The pricing options a reservation is weighed between when the cloud side is resolved."""


def pool_sharing(choice: Scored | None, sharing: str | None) -> Revision | None:
    """Where the pick holds jobs at once laid out otherwise than the sharing decision said
    (made before the cloud kind was resolved, from the best configuration overall), the
    sharing the pick's layout is: MIG slices are fractional, whole GPUs dedicated."""
    if choice is None or sharing is None or choice.config.jobs_at_once <= 1:
        return None
    c = choice.config
    after = "fractional" if c.slices_per_gpu > 1 else "dedicated"
    if after == sharing:
        return None
    laid = (f"on {c.slices_per_gpu} MIG slices ({c.mig_profile}) on each of its "
            f"{c.count:,}× {c.gpu_label}" if after == "fractional"
            else f"each on a whole GPU or more of its {c.count:,}× {c.gpu_label}")
    return Revision("sharing", sharing, after,
                    f"the pick runs its jobs {laid}, room for {c.jobs_at_once:,} at once: "
                    f"{after}")


def resolve_cloud(scored: Sequence[Scored], kinds: Sequence[str], pricings: Sequence[str],
                  fields: Mapping[str, str], premium: float | None = None
                  ) -> tuple[Scored | None, list[Revision]]:
    """The best cloud candidate of the decided kind and pricing (the values of the facts
    ``fields`` says the two axes constrain); where none exists, the next pricing in the
    decision's ranking, then the next kind, each change said. Where the decided kind sells
    the job only reserved, and that costs ``premium`` times or more what the decided pricing
    costs on another kind the decision ranks (a block of days where an hour would do), that
    kind is taken instead. A reservation is taken only where it costs less for the work than the
    best configuration paid on demand on the same kind of cloud (the rules weighed
    reservations against on demand on any kind)."""
    if not kinds or not pricings:
        return None, []
    kind_of, pricing_of = fields["cloud_kind"], fields["pricing"]
    for kind in kinds:
        for pricing in pricings:
            found = best(scored, where="cloud", **{kind_of: kind, pricing_of: pricing})
            if found is None:
                continue
            if premium is not None and pricing == RESERVED != pricings[0]:
                elsewhere = _kind_instead(scored, found, kinds, pricings[0], premium,
                                          kind_of, pricing_of)
                if elsewhere is not None:
                    return elsewhere
            revisions = _revisions((kinds[0], kind), (pricings[0], pricing), scored, kind_of)
            kind_revisions = [r for r in revisions if r.axis != "pricing"]
            weighed = _less_weighed(scored, found, kind, pricings, kind_of, pricing_of)
            if weighed is not None:
                return weighed, [*kind_revisions,
                                 _weighed_down(found, weighed, kind, pricings[0])]
            if pricing == RESERVED and ON_DEMAND in pricings:
                on_demand = best(scored, where="cloud", **{kind_of: kind, pricing_of: ON_DEMAND})
                if on_demand is not None and (on_demand.config.cost_usd_year
                                              < found.config.cost_usd_year):
                    held, paid = found.config, on_demand.config
                    return on_demand, [*kind_revisions, Revision(
                        "pricing", pricings[0], ON_DEMAND,
                        f"reserving on a {kind} cloud would cost ${held.cost_usd_year:,.0f} a "
                        f"year for your work ({held.count:,}× {held.gpu_label}), paying on "
                        f"demand there ${paid.cost_usd_year:,.0f} ({paid.count:,}× "
                        f"{paid.gpu_label}): {ON_DEMAND}")]
            return found, revisions
    return None, []


def _kind_instead(scored: Sequence[Scored], found: Scored, kinds: Sequence[str],
                  decided: str, premium: float, kind_of: str,
                  pricing_of: str) -> tuple[Scored, list[Revision]] | None:
    """Where ``found`` (another pricing than the ``decided`` one, on a kind of cloud that
    sells this job no other way) costs ``premium`` times or more the best configuration of
    the decided pricing on another of the ranked ``kinds``: that one, and the change of kind
    said; else None."""
    kind = str(found.facts[kind_of])
    for other_kind in kinds:
        if other_kind == kind:
            continue
        other = best(scored, where="cloud", **{kind_of: other_kind, pricing_of: decided})
        if other is None or not other.config.cost_usd_year:
            continue
        f, o = found.config, other.config
        ratio = f.cost_usd_year / o.cost_usd_year
        if ratio < premium:
            return None
        paid = (f"{f.reserved_days}-day blocks" if f.reserved_days else
                f"reserved for {f.reserved_months} months" if f.reserved_months else f.pricing)
        return other, [Revision(
            "cloud_kind", kinds[0], other_kind,
            f"no {kind} cloud sells this job {decided}: its best, {f.count:,}× {f.gpu_label} "
            f"({f.provider_name}, {paid}), would cost ${f.cost_usd_year:,.0f} a year for "
            f"your work, {ratio:,.1f}× the {o.count:,}× {o.gpu_label} ({o.provider_name}, "
            f"{decided}) of a {other_kind} cloud at ${o.cost_usd_year:,.0f}: {other_kind} "
            "instead")]
    return None


def _less_weighed(scored: Sequence[Scored], found: Scored, kind: str, pricings: Sequence[str],
                  kind_of: str, pricing_of: str) -> Scored | None:
    """Where ``found``, the best of its kind and pricing, runs on a stack the team did not
    choose and the rules weigh it down for that, the best configuration of the same kind at
    another pricing the rules ranked that they weigh less against, else None."""
    if not _weighed_against(found):
        return None
    others = [b for p in pricings if p != found.facts[pricing_of]
              for b in (best(scored, where="cloud", **{kind_of: kind, pricing_of: p}),)
              if b is not None and b.score > found.score]
    return min(others, key=lambda s: s.sort_key) if others else None


SWITCH_FACT = "vendor_chosen"
"""What the rules that weigh against a GPU vendor the team did not choose read."""


def _weighed_against(s: Scored) -> list[Rule]:
    """The candidate rules that weigh against ``s`` for a software stack the team did not
    choose (an avoid weight on a rule reading ``vendor_chosen``): an offer the team would have
    to port to, which a pricing must not force on it."""
    return [r for r in s.rules if SWITCH_FACT in r.reads and any(d < 0 for d in r.scoring[1])]


def _weighed_down(held: Scored, taken: Scored, kind: str, decided: str) -> Revision:
    """The pricing revised because its best configuration is one the rules weigh against."""
    h, t = held.config, taken.config
    against = ", ".join(r.id for r in _weighed_against(held))
    return Revision("pricing", decided, t.pricing,
                    f"the best {h.pricing} configuration on a {kind} cloud ({h.count:,}× "
                    f"{h.gpu_label}, ${h.cost_usd_year:,.0f} a year) is one the rules weigh "
                    f"against ({against}); {t.pricing} there has {t.count:,}× {t.gpu_label} "
                    f"(${t.cost_usd_year:,.0f}): {t.pricing}")


def _revisions(kinds: tuple[str, str], pricings: tuple[str, str], scored: Sequence[Scored],
               kind_of: str) -> list[Revision]:
    """The changes from the decided (kind, pricing) to those taken, said."""
    (kind0, kind), (pricing0, pricing) = kinds, pricings
    out = []
    if pricing != pricing0:
        where = f"a {kind0} cloud" if kind == kind0 else "any cloud of the kinds considered"
        out.append(Revision("pricing", pricing0, pricing,
                            f"no offer on {where} that holds this job lists a {pricing0} "
                            f"price: {pricing}"))
    if kind != kind0:
        what = "offers" if best(scored, where="cloud", **{kind_of: kind0}) is None else (
            f"{pricing0} offers")
        out.append(Revision("cloud_kind", kind0, kind,
                            f"no {kind0} cloud {what} hold this job within your limits: {kind} "
                            "instead"))
    return out


def deployment_facts(local: Scored | None, cloud: Scored | None, work: Workload,
                     policy: Policy, owned: Sequence[Scored] = (),
                     default_days: float | None = None
                     ) -> tuple[dict[str, Any], Figure | None]:
    """What the deployment rules compare: owning the best local configuration against renting
    the resolved cloud one for the same work, and the work at which owning costs the same:
    the least over the best local one and the other eligible ``owned`` ones (less work may
    make a smaller purchase the best local one, which then decides where owning stops
    paying); and, where steady work stretched the run limit of a purchase past
    ``default_days``, whether renting within it is worth the wait
    (:func:`rent_sooner_worth_the_wait`)."""
    out: dict[str, Any] = {}
    if local is not None:
        c = local.config
        out.update(local_candidate=c.candidate_id, local_gpu=c.gpu,
                   local_gpu_name=c.gpu_name, local_gpu_count=c.count,
                   local_purchase_usd=c.upfront_usd, local_cost_usd_year=c.cost_usd_year,
                   local_days_per_run=c.days_per_run, local_run_length=run_length(c.days_per_run),
                   local_busy_percent=tidy(c.utilisation * 100, 0),
                   local_is_owned=bool(c.is_owned),
                   local_verb="keeping your" if c.is_owned else "owning",
                   local_cost_basis=(
                       "their power: the purchase is spent and the upkeep paid either way"
                       if c.is_owned else
                       f"purchase written off over {policy.amortisation_years.value:g} years "
                       "less resale, upkeep and power"))
    if cloud is not None:
        c = cloud.config
        out.update(cloud_candidate=c.candidate_id, cloud_offer=c.offer,
                   cloud_provider_name=c.provider_name, cloud_gpu_name=c.gpu_name,
                   cloud_gpu_count=c.count, cloud_pricing=c.pricing,
                   cloud_cost_usd_year=c.cost_usd_year,
                   cloud_first_year_usd=c.first_year_bill_usd,
                   cloud_usd_per_gpu_hour=c.usd_per_gpu_hour,
                   cloud_days_per_run=c.days_per_run, cloud_run_length=run_length(c.days_per_run))
    if local is None or cloud is None:
        return out, None
    own, rent = local.config.cost_usd_year, cloud.config.cost_usd_year
    out["own_to_rent_cost_ratio"] = tidy(own / rent, 3) if rent else None
    out["rent_saving_share"] = tidy(1 - rent / own, 3) if own else None
    extra = rent_sooner_worth_the_wait(local, cloud, policy, default_days)
    out["rent_sooner_worth_the_wait"] = extra is not None
    out["rent_sooner_extra_share"] = 0.0 if extra is None else tidy(extra, 3)
    line = _lowest_break_even(local, owned, cloud, work, policy)
    if line is not None:
        out["break_even_work"] = tidy(line.value, 2)
        years = _payback_years(local, cloud)
        if years is not None:
            out["payback_years"] = tidy(years, 2)
    return out, line


def rent_sooner_worth_the_wait(local: Scored, cloud: Scored, policy: Policy,
                               default_days: float | None) -> float | None:
    """What renting ``cloud`` costs more than owning ``local``, as a share of owning, where
    that is no more than the wait is worth; None otherwise. The wait counts where steady work
    stretched the purchase's runs past ``default_days`` (None: nothing was stretched) and the
    rented runs keep within it; it is worth :func:`~engine.decide.candidates.sooner_premium`
    of the purchase's days, as on its own side
    (:func:`~engine.decide.candidates.against_the_wait`). The team's own GPUs, paid for
    already, wait for nothing; renting over the compute budget is no reason against a
    purchase that keeps within it."""
    own, rent = local.config, cloud.config
    if (default_days is None or not stretched_past(own, local.facts, default_days)
            or not own.cost_usd_year or rent.days_per_run > default_days
            or rent.cost_usd_year <= own.cost_usd_year
            or (cloud.facts.get("over_budget") and not local.facts.get("over_budget"))):
        return None
    extra = rent.cost_usd_year / own.cost_usd_year - 1
    return extra if extra <= sooner_premium(policy, own.days_per_run) else None


def _lowest_break_even(local: Scored, owned: Sequence[Scored], cloud: Scored, work: Workload,
                       policy: Policy) -> Figure | None:
    """The least work above which owning one of ``local`` and ``owned`` costs less than
    renting ``cloud`` (``local``'s own on a tie); None where none ever does, or one does at
    any work (the team's own GPUs, paid for already). Another purchase counts only where it
    crosses below the team's work and costs no less than ``local`` at it: it is the cheaper
    purchase with less work (eligible now, it is eligible with less work, not necessarily
    with more: a year holds only so many hours). One that costs less at the team's work
    already, or that a rule ranks below ``local`` (two cards beside one that holds the job),
    is ranked below it with less work too; its crossing would say owning pays where the
    owning compared does not."""
    units = work.units
    if units <= 0:
        return None
    rent, own = _line(cloud.config, units), _line(local.config, units)
    lowest, least = local, crossing(own, rent)
    for other in owned:
        if (other.config.cost_usd_year < local.config.cost_usd_year
                or other.score < local.score):
            continue
        at = crossing(_line(other.config, units), rent)
        if at is not None and at < units and (least is None or at < least):
            lowest, least = other, at
    if least is None or least <= 0:
        return None
    found = break_even_line(lowest, cloud, work, policy)
    if found is None or lowest is local:
        return found
    # owning is the cheaper of the two purchases at each level of work (the chart draws it)
    pick, smaller = local.config, lowest.config
    return found.model_copy(update={"inputs": {
        **found.inputs,
        "own": f"{pick.count:,}× {pick.gpu_label} ({smaller.count:,}× {smaller.gpu_label} "
               "with less work)",
        "pick_fixed_usd": own.fixed_usd, "pick_usd_per_unit": own.usd_per_unit}})


def break_even_line(local: Scored, cloud: Scored, work: Workload,
                    policy: Policy) -> Figure | None:
    """The year's work, in the team's own unit (runs a year, or GPU-hours on its GPU), above
    which owning ``local`` costs less than renting ``cloud``; both configurations held
    fixed, each doing the work with its own method."""
    units = work.units
    if units <= 0:
        return None
    lc, cc = local.config, cloud.config
    return break_even(
        _line(lc, units), _line(cc, units),
        unit=work.unit,
        sources=[*local.candidate.cost.sources, *cloud.candidate.cost.sources,
                 "price.break-even-4090", "price.onprem-break-even"],
        own_label=f"{lc.count:,}× {lc.gpu_label}",
        rent_label=f"{cc.count:,}× {cc.gpu_label} ({cc.provider_label}, {cc.pricing})",
    )


def _line(c: Configuration, units: float) -> CostLine:
    """A configuration's cost a year as a line in the year's work (``units`` of it now)."""
    return CostLine.through(c.fixed_usd_year, c.cost_usd_year, units)


def _payback_years(local: Scored, cloud: Scored) -> float | None:
    """Years until the purchase is paid back by the rent it saves (running costs deducted)."""
    lc = local.config
    running = lc.cost_usd_year - lc.fixed_usd_year
    return payback_years(lc.upfront_usd, running, cloud.config.cost_usd_year)
