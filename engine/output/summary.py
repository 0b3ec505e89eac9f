"""What every human-readable format says: the headline and the lines under it.

Every number here is about the pick (or, for the break-even, the pick against the best
configuration on the other side), taken from the decision as the engine made it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from engine.catalog.models import METHOD_NAMES
from engine.decide.configuration import pronouns, run_length
from engine.decide.decision import AxisDecision, Candidate, OptionScore
from engine.decide.engine import Decision
from engine.decide.owned_options import named, own_usd_per_year, picked_split
from engine.decide.pick import POWER_ALONE, strongest_against
from engine.estimates.figure import said_in_cents
from engine.files.printable import printable_data

KIND_NAMES = {"specialised": "a specialised GPU cloud", "hyperscaler": "a hyperscaler",
              "marketplace": "a GPU marketplace"}
SCORE_LEGEND = ("Each choice is the option with the highest score: the weights of the rules "
                "for it minus those against it. Reasons: + for, − against, ✗ ruled out.")
NO_RULE = "No rule preferred an option; first declared option."
FROM_PICK = "Taken from the picked configuration; no rule weighed the options on it."
"""What an axis the pick decides (``chosen_by: pick``) says when no rule gave it a reason."""
TIP_SHARE = 0.8
"""A close call's shorter runs or smaller purchase is worth saying from this share of the
pick's down (a fifth or more less)."""


def bare_note(axis: AxisDecision) -> str | None:
    """The line for an axis without reasons: the declared order decided it, or it is the
    pick's (nothing where there is no pick: its heading says so)."""
    if axis.follows is None:
        return NO_RULE
    return FROM_PICK if axis.choice is not None else None


def printable_decision(decision: Decision, platforms: Mapping[str, str] | None = None
                       ) -> tuple[Decision, Mapping[str, str] | None]:
    """The decision (and platform names) with every string made printable, as text and
    Markdown show them: names and ids from a catalog, a price file, a config or an audit
    store cannot drive the terminal (the decision itself is returned when nothing changes)."""
    data = decision.model_dump(mode="json")
    shown = printable_data(data)
    if shown != data:
        decision = Decision.model_validate(shown)
    return decision, None if platforms is None else printable_data(platforms)


def axis_title(axis: str) -> str:
    """``Cloud kind`` for the axis ``cloud_kind`` (axes are declared in rules/decisions.yaml)."""
    return axis.replace("_", " ").capitalize()


def shown_axes(decision: Decision) -> list[tuple[str, AxisDecision]]:
    """(title, decision) of every axis that matters, in the rulebook's declared order (pricing
    is left out when buying)."""
    return [(axis_title(axis), result) for axis, result in decision.decisions.items()
            if result.applies]


def usd(value: float) -> str:
    """``$1,234``; to the cent below $10 (``$0.48``: a small job's sum rounded to whole
    dollars would read ``$0``), at least ``$0.01``."""
    if said_in_cents(value):
        return f"${max(value, 0.01):.2f}"
    return f"${value:,.0f}"


def hours(value: float) -> str:
    """``1,234``, or ``0.4`` below ten."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def short_name(name: str) -> str:
    """``RTX 4090`` from ``NVIDIA GeForce RTX 4090``."""
    return name.removeprefix("NVIDIA ").removeprefix("AMD ").removeprefix("GeForce ")


def config_name(c: Candidate) -> str:
    """``2× H100 SXM``."""
    return f"{c.count:,}× {c.gpu_label}"


def advises_api(decision: Decision) -> bool:
    """Whether the advice is a hosted API: the hardware, then, is for training the team is
    told not to do."""
    return decision.decisions["approach"].choice == "use-api"


def _api_bill(decision: Decision) -> str:
    """``: ~$50,000 a month for 5,000M tokens (Claude Opus 4.7)`` where the team gave a
    volume and the catalog prices it, else nothing."""
    facts = decision.facts
    bill, volume = facts.get("api_cost_usd_month"), decision.answers.get("api_tokens_per_month_m")
    if not isinstance(bill, (int, float)) or not isinstance(volume, (int, float)):
        return ""
    return f": ~{usd(bill)} a month for {amount(volume)}M tokens ({facts.get('api_name')})"


def headline(decision: Decision) -> str:
    """One line: what to do, on what, for how much."""
    choice = decision.hardware.choice
    axes = decision.decisions
    if advises_api(decision):
        return "Use a hosted API rather than training your own model" + _api_bill(decision)
    if choice is None:
        return "No configuration in the catalog can do this job within your limits"
    if choice.owned:
        owned = decision.answers.get("owned_gpu_count") or choice.count
        yours = _of_yours(choice.count, owned, choice.gpu_label, machines=choice.nodes)
        return (f"Keep using {yours}: ~{usd(choice.cost.per_year_usd)} a "
                "year of power for your work (bought already; upkeep is paid either way)")
    used = " (used)" if choice.used else ""
    if choice.added_to_owned:
        return (f"Add {choice.added_to_owned}× {choice.gpu_label}{used} to your "
                f"{choice.count - choice.added_to_owned}: ~{usd(choice.cost.upfront_usd)} up "
                f"front, ~{usd(choice.cost.per_year_usd)} a year for your work on all "
                f"{choice.count}")
    if choice.where == "local":
        return (f"Buy: {config_name(choice)}{used}, "
                f"~{usd(choice.cost.upfront_usd)} up front, "
                f"~{usd(choice.cost.per_year_usd)} a year for your work")
    verb = "Rent"
    facts = decision.facts
    found, peaks = peaks_pick(decision)
    if peaks is not None:
        lead = (f"Run {peaks['owned_jobs_at_once']:,} of your "
                f"{peaks['owned_jobs_at_once'] + peaks['rented_jobs_at_once']:,} jobs at once "
                f"on your {_owned_gpus(decision, found)} and rent for the "
                f"{'other' if peaks['rented_jobs_at_once'] == 1 else 'others'}"
                if peaks["option"] == "jobs" else
                f"Keep your {_owned_gpus(decision, found)} busy on {peaks['owned_share']:.0%} "
                "of the work and rent the rest")
        return (f"{lead}: {config_name(choice)} on "
                f"{KIND_NAMES.get(choice.provider_kind, 'a cloud')} ({choice.provider_name}), "
                f"{choice.pricing} at ${choice.usd_per_gpu_hour:.2f}/GPU-hour; "
                f"~{usd(peaks_total(decision, peaks))} a year in all")
    if axes["deployment"].choice == "hybrid" and facts.get("dev_is_owned"):
        verb = f"Develop on {_own_dev_box(decision)}, rent for full runs"
    elif axes["deployment"].choice == "hybrid" and facts.get("dev_gpu_name"):
        verb = (f"Develop on {facts.get('dev_gpu_count')}× "
                f"{short_name(str(facts['dev_gpu_name']))} "
                f"(~{usd(float(facts.get('dev_purchase_usd') or 0))}), rent for full runs")
    pricing = choice.pricing if not choice.reserved_months else (
        f"reserved for {choice.reserved_months} months")
    if choice.reserved_days:
        pricing = (f"reserved in {choice.reserved_days}-day blocks held every day of the year "
                   "(jobs that come when they come need the pool there)"
                   if choice.pool is not None and choice.pool.always_on
                   else f"reserved in {choice.reserved_days}-day blocks bought for each run")
    where = (f" in {choice.location}" if choice.location
             and decision.answers.get("data_residency") == "region" else "")
    return (f"{verb}: {config_name(choice)} on {KIND_NAMES.get(choice.provider_kind, 'a cloud')}"
            f" ({choice.provider_name}){where}, {pricing} at "
            f"${choice.usd_per_gpu_hour:.2f}/GPU-hour, "
            f"~{usd(choice.cost.per_year_usd)} a year for your work")


def purchase_line(decision: Decision,
                  platforms: Mapping[str, str] | None = None) -> str | None:
    """``$4,480 up front = 1× RTX 4090 $2,500 + desktop for 1-2 GeForce cards $1,980.`` for an
    owned pick (``platforms``: platform id → name; the id is shown without it)."""
    choice = decision.hardware.choice
    trace = decision.estimates["traces"].get("pick_purchase_usd")
    if choice is None or choice.where != "local" or choice.owned or not trace:
        return None
    i = trace["inputs"]
    if choice.added_to_owned:
        return (f"{usd(trace['value'])} up front = {choice.count:,}× {choice.gpu_label} "
                f"{usd(i['whole_usd'])} − your {i['owned_cards']} with their box "
                f"{usd(i['owned_usd'])} ({i['cards']} more at {usd(i['card_usd'])} each, and "
                "what holding them all takes).")
    cards = f"{i['cards']:,}× {choice.gpu_label} {usd(i['cards_usd'])}"
    each = [f"{usd(i['card_usd'])} each"] if i["cards"] > 1 else []
    if each or choice.used:
        cards += f" ({', '.join([*each, *(['used'] if choice.used else [])])})"
    boxes = f"{i['boxes']}× " if i["boxes"] > 1 else ""
    parts = [cards, f"{boxes}{platform_name(i['platform'], platforms)} "
                    f"{usd(i['platform_usd'] * i['boxes'])}"]
    if i.get("network_usd"):
        parts.append(f"InfiniBand between nodes {usd(i['network_usd'])}")
    return f"{usd(trace['value'])} up front = " + " + ".join(parts) + "."


def platform_name(platform_id: str, platforms: Mapping[str, str] | None) -> str:
    """``desktop for 1-2 GeForce cards`` (the catalog's name, its first word lower case unless
    it is an abbreviation), or ``platform ID`` without the catalog."""
    name = (platforms or {}).get(platform_id)
    if not name:
        return f"platform {platform_id}"
    first = name.split(" ", 1)[0]
    return name if first[1:2].isupper() or first[:1].isdigit() else name[0].lower() + name[1:]


def running_line(decision: Decision) -> str | None:
    """What an owned pick's cost a year is made of: the fixed part and power for the work."""
    choice = decision.hardware.choice
    trace = decision.estimates["traces"].get("pick_cost_usd_year")
    if choice is None or choice.where != "local" or choice.owned or not trace:
        return None
    i = trace["inputs"]
    power = i["running_usd_per_hour"] * i["busy_hours_per_year"]
    return (f"{usd(trace['value'])} a year = {usd(i['fixed_usd_per_year'])} write-off (less "
            f"resale) and upkeep + {usd(power)} power for {hours(i['busy_hours_per_year'])} "
            "busy hours.")


def owned_notice(decision: Decision) -> str | None:
    """The brief's line for a team whose own GPUs are not the pick (nor its peaks' base):
    why not, and what to do with them (``owned_line``)."""
    choice = decision.hardware.choice
    if choice is None:  # a refusal: what keeps the team's own GPUs out, first
        return _owned_refused(decision)
    if (choice.owned or peaks_pick(decision)[1] is not None
            or _develops_on_own(decision)):  # the headline says it: develop on your own
        return None
    return owned_line(decision, brief=True)


def _owned_refused(decision: Decision) -> str | None:
    """Where no configuration is eligible, why the team's own GPUs are not one either
    (``Your own 1× A10G cannot do this work within your limits: …``): of all the
    configurations shut out, the one the team has."""
    owned, why = decision.answers.get("owned_gpu"), decision.hardware.owned_why_not
    if not owned or not why:
        return None
    count = int(decision.answers.get("owned_gpu_count") or 1)
    name = str(decision.facts.get("owned_gpu_name") or owned)
    return (f"Your own {count:,}× {short_name(name)} cannot do this work within your limits: "
            f"{_clause(why)}.")


def _clause(sentence: str) -> str:
    """A sentence as a clause inside another: its first letter lower case, no full stop."""
    return f"{sentence[:1].lower()}{sentence[1:].rstrip('.')}"


def owned_line(decision: Decision, *, brief: bool = False) -> str | None:
    """For a team that owns GPUs: what keeping them costs against selling them and renting
    (or, when the pick is not theirs, why not and what is left to decide; ``brief`` leaves the
    why to ``--explain``)."""
    owned = decision.answers.get("owned_gpu")
    if not owned:
        return None
    mine = next((c for c in [decision.hardware.choice, *decision.hardware.alternatives]
                 if c is not None and c.owned), None)
    name = mine.gpu_label if mine is not None else str(
        decision.facts.get("owned_gpu_name") or owned)
    count = decision.answers.get("owned_gpu_count", 1)
    yours = f"your {count:,}× {short_name(name)}"
    cloud = next((c for c in decision.hardware.alternatives if c.where == "cloud"), None)
    rent = (f"renting {config_name(cloud)} ({cloud.provider_name}, {cloud.pricing}) for this "
            f"work would cost {usd(cloud.cost.per_year_usd)} a year"
            if cloud is not None else None)
    why = decision.hardware.owned_why_not
    because = f" ({_clause(why)})" if why and not brief else ""
    said = f": {_clause(why)}." if why and brief else ""
    choice = decision.hardware.choice
    added = next((c for c in [choice, *decision.hardware.alternatives]
                  if c is not None and c.added_to_owned), None)
    add = (f"adding {added.added_to_owned} to make {added.count} would cost "
           f"{usd(added.cost.upfront_usd)} up front and {usd(added.cost.per_year_usd)} a year"
           + _with_method(added, choice)
           if added is not None and added is not choice else None)
    if choice is not None and choice.added_to_owned:
        alone = f"Your {count}× {short_name(name)} alone cannot do this work within your limits"
        if said and why and why.endswith(POWER_ALONE):  # the brief: a longer run limit
            return alone + said + (f" {rent[:1].upper()}{rent[1:]}." if rent else "")
        return f"{alone}{because}; {rent}." if rent else f"{alone}{because}."
    found, peaks = peaks_pick(decision)
    if peaks is not None and peaks["option"] == "jobs":
        return (f"Your own {count}× {short_name(name)} alone cannot run all your jobs at "
                f"once{because}: {'it runs' if count == 1 else 'they run'} "
                f"{peaks['owned_jobs_at_once']:,} of them "
                f"({peaks['owned_share']:.0%} of the work), and the pick rents GPUs for the "
                "others as each runs." + _retire_split(found, peaks, count))
    if peaks is not None:
        return (f"Your own {count}× {short_name(name)} alone cannot do all of this work within "
                f"your limits{because}: kept busy "
                f"{'it does' if count == 1 else 'they do'} {peaks['owned_share']:.0%} of it, "
                "and the pick rents the rest by the hour." + _retire_split(found, peaks, count))
    if mine is None:
        them = pronouns(count).them
        split = _jobs_split(decision, them)
        if split is not None:  # they hold some of the jobs at once: what that costs, first
            return (f"Your own {count}× {short_name(name)} {'holds' if count == 1 else 'hold'} "
                    f"{split[0]:,} of your "
                    f"{split[1]:,} jobs at once{because}: {split[2]}.")
        then = (f"develop and test on {them} (QLoRA fits), rent for the runs"
                if _develops_on_own(decision) else
                f"keep {them} for other work, rent beside {them} for this, or sell {them}")
        if said:  # the brief: why first, then what to do with them
            return (f"Your own {count}× {short_name(name)} cannot do this work within your "
                    f"limits{said}" + (f" Or {add}." if add else "")
                    + f" {then[:1].upper()}{then[1:]}.")
        return (f"Your own {count}× {short_name(name)} cannot do this work within your "
                f"limits{because}" + (f"; {add}" if add else "") + f": {then}.")
    them = pronouns(count).them
    sell = (f"selling {them} would bring about {usd(mine.resale_usd)} and save "
            f"{usd(mine.upkeep_usd_year)} a year of upkeep")
    if decision.hardware.choice is mine:
        if cloud is None:
            return f"Or retire {yours}: {sell}."
        keep = mine.cost.per_year_usd + mine.upkeep_usd_year
        return (f"Or retire {yours}: keeping {them} costs {usd(keep)} a year (power and "
                f"upkeep); {sell}; {rent}: "
                f"{_retire_verdict(keep - cloud.cost.per_year_usd, count)}.")
    return (f"Keeping {yours} for this work would cost {usd(mine.cost.per_year_usd)} a year of "
            f"power; {sell}.")


def _with_method(config: Candidate, choice: Candidate | None) -> str:
    """`` with QLoRA`` where ``config`` trains with another method than the pick."""
    if choice is None or config.method == choice.method or config.method not in METHOD_NAMES:
        return ""
    return f" with {METHOD_NAMES[config.method]}"


def _retire_verdict(gap: float, count: int) -> str:
    """What retiring the team's ``count`` GPUs does, where keeping them costs ``gap`` a year
    more than selling them and renting it all (less where negative)."""
    words = pronouns(count)
    if gap > 0:
        return (f"retiring {words.them} saves {usd(gap)} a year besides the sale: worth it "
                f"unless {words.they} {words.have} other work")
    return f"retiring {words.them} costs {usd(-gap)} a year more than keeping {words.them}"


def _retire_split(found: Mapping[str, Any], split: Mapping[str, Any], count: int) -> str:
    """Where the pick runs part of the work on the team's own GPUs: what keeping them costs
    a year, upkeep included, against selling them and renting it all ("" where that is not
    priced)."""
    retire = named(found.get("options", []), "retire")
    if retire is None:
        return ""
    keep, rent = split["usd_per_year"], retire["usd_per_year"]
    rented = retire["rented"]
    words = pronouns(count)
    return (f" Or retire {words.them}: kept, {words.they} {'costs' if count == 1 else 'cost'} "
            f"{usd(split['upkeep_usd_per_year'])} a year of upkeep beside this "
            f"({usd(keep)} a year in all); selling {words.them} would bring about "
            f"{usd(retire['resale_usd'])}, and renting it all on {rented['count']:,}× "
            f"{rented['gpu_label']} ({rented['provider_label']}, {rented['pricing']}) would "
            f"cost {usd(rent)} a year: {_retire_verdict(keep - rent, count)}.")


def retire_split_line(decision: Decision) -> str | None:
    """Where the pick runs part of the work on the team's own GPUs and selling them and
    renting it all would cost less a year (their upkeep saved): what would change it. None
    otherwise."""
    found, split = peaks_pick(decision)
    retire = named(found.get("options", []), "retire") if split is not None else None
    if split is None or retire is None or split["usd_per_year"] <= retire["usd_per_year"]:
        return None
    rented = retire["rented"]
    count = int(found["count"])
    words = pronouns(count)
    return (f"selling your {_owned_gpus(decision, found)} (~{usd(retire['resale_usd'])}) and "
            f"renting it all ({rented['count']:,}× {rented['gpu_label']}, "
            f"{usd(retire['usd_per_year'])} a year) saves "
            f"{usd(split['usd_per_year'] - retire['usd_per_year'])} a year, "
            f"unless {words.they} {words.have} other work.")


def peaks_line(decision: Decision) -> str | None:
    """For a team whose own GPUs cannot do the whole year's work within the busy target:
    what keeping them busy and renting the rest by the hour costs, beside the pick."""
    found, peaks = _peaks(decision)
    if peaks is None or found.get("peaks_is_the_pick"):
        return None
    rented = peaks["rented"]
    line = (f"Or rent the peaks beside your {_owned_gpus(decision, found)}: busy "
            f"{_percent(peaks['owned_busy_share'])} of the year they do "
            f"{peaks['owned_share']:.0%} of the work ({usd(peaks['power_usd_per_year'])} power; "
            "the upkeep is paid either way), "
            f"{rented['count']:,}× {rented['gpu_label']} ({rented['provider_label']}, "
            f"{rented['pricing']}) the rest ({usd(peaks['rented_usd_per_year'])}): "
            f"{usd(peaks['work_usd_per_year'])} a year, nothing to buy")
    choice = decision.hardware.choice
    if choice is None or choice.owned:
        return line + "."
    upfront = (f" after {usd(choice.cost.upfront_usd)} up front"
               if choice.cost.upfront_usd else "")
    return f"{line}; the pick: {usd(choice.cost.per_year_usd)} a year{upfront}."


def peaks_notice(decision: Decision) -> str | None:
    """In the headline block, where renting the peaks beside the team's own GPUs costs
    clearly less than the pick: say so, with both costs."""
    found, peaks = _peaks(decision)
    if peaks is None or not found.get("peaks_beat_the_pick") or decision.hardware.choice is None:
        return None
    rented = peaks["rented"]
    return (f"Cheaper with what you own: your {_owned_gpus(decision, found)} for "
            f"{peaks['owned_share']:.0%} of "
            f"the work, the peaks rented on {rented['count']:,}× {rented['gpu_label']} "
            f"({rented['provider_label']}): ~{usd(peaks['work_usd_per_year'])} a year "
            "(--explain).")


def peaks_pick(decision: Decision) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The decision's ``owned_options`` and the option the pick is part of where it rents
    beside the team's own GPUs (``jobs`` or ``peaks``: :func:`picked_split`)."""
    found: dict[str, Any] = decision.estimates.get("owned_options") or {}
    return found, picked_split(found)


def peaks_total(decision: Decision, peaks: Mapping[str, Any]) -> float:
    """The year's cost of a peaks pick: the own GPUs' power and the rent."""
    choice = decision.hardware.choice
    rent = choice.cost.per_year_usd if choice is not None else 0.0
    return own_usd_per_year(peaks) + rent


def _jobs_split(decision: Decision, them: str) -> tuple[int, int, str] | None:
    """Where the team's GPUs run some of its jobs at once: how many, of how many, and
    running those on them and renting GPUs for the others as they run, its cost a year
    against the pick's (None otherwise)."""
    found: dict[str, Any] = decision.estimates.get("owned_options") or {}
    jobs = named(found.get("options", []), "jobs")
    choice = decision.hardware.choice
    if jobs is None or choice is None:
        return None
    rented = jobs["rented"]
    rest = jobs["rented_jobs_at_once"]
    others = f"each of the other {rest:,}" if rest > 1 else "the other"
    verdict = ("less than" if jobs["work_usd_per_year"] < choice.cost.per_year_usd
               else "more than")
    held = jobs["owned_jobs_at_once"]
    retire, keep = (named(found.get("options", []), o) for o in ("retire", "keep"))
    sale = (f" (~{usd(retire['resale_usd'])}; upkeep saved: "
            f"{usd(keep['upkeep_usd_per_year'])} a year)"
            if retire and keep and retire["resale_usd"] > 0 else "")
    these = "that job" if held == 1 else "those"
    return held, held + rest, (
        f"{these} on {them} with {jobs['rented_gpus_per_job']:,}× {rented['gpu_label']} "
        f"({rented['provider_label']}, {rented['pricing']}) for {others} as it runs cost "
        f"{usd(jobs['work_usd_per_year'])} a year ({usd(jobs['rented_usd_per_year'])} rent, "
        f"the rest power), {verdict} the pick's {usd(choice.cost.per_year_usd)}; "
        f"keep {them} for other work or sell {them}{sale}")


def _peaks(decision: Decision) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The decision's ``owned_options`` and their peaks option (None where there is none)."""
    found: dict[str, Any] = decision.estimates.get("owned_options") or {}
    return found, named(found.get("options", []), "peaks")


def _owned_gpus(decision: Decision, found: dict[str, Any]) -> str:
    """``8× A100 80GB (SXM4)``: the team's own GPUs as the options count them."""
    name = decision.facts.get("owned_gpu_name") or found["gpu"]
    return f"{found['count']:,}× {short_name(str(name))}"


def _own_dev_box(decision: Decision) -> str:
    """The team's own cards it develops on: all of them, or as many as one machine takes."""
    return _of_yours(int(decision.facts["dev_gpu_count"]),
                     int(decision.answers["owned_gpu_count"]),
                     short_name(str(decision.facts["dev_gpu_name"])), whose="your own")


def _of_yours(used: int, owned: int, label: str, whose: str = "your",
              machines: int = 1) -> str:
    """``your 2× A100 80GB``, or where the work runs on part of them ``4 of your 8× RTX 4090
    (one machine)`` (``machines``: the boxes those take, side by side for jobs at once)."""
    boxes = "one machine" if machines <= 1 else f"{machines:,} machines"
    return (f"{whose} {used:,}× {label}" if used == owned
            else f"{used:,} of your {owned:,}× {label} ({boxes})")


def steady_work(decision: Decision) -> bool:
    """Whether the team's jobs come when they come (continuous work), not together."""
    return decision.answers.get("usage_pattern") == "continuous"


def _develops_on_own(decision: Decision) -> bool:
    """The deployment is hybrid with development on the team's own GPUs."""
    deployment = decision.decisions.get("deployment")
    return bool(decision.facts.get("dev_is_owned")) and deployment is not None and (
        deployment.choice == "hybrid") and peaks_pick(decision)[1] is None


def price_lines(decision: Decision) -> list[str]:
    """One line per ``--prices`` file: what it changed in the catalog the decision used
    (``prices: 4 aws offers from vms.csv (dated 2026-11-30, by --prices-date) replaced 16
    catalog offers; 2 rows skipped``)."""
    return [_price_line(record) for record in decision.catalog.get("prices", [])]


def _price_line(r: Mapping[str, Any]) -> str:
    offers, replaced, added, skipped = r["offers"], r["replaced"], r["added"], r["skipped_rows"]
    whose = f"{r['provider']} " if r.get("provider") else ""
    dated = f" (dated {r['as_of']}, by {r['dated_by']})" if r.get("as_of") else ""
    what = [f"replaced {replaced} catalog offer{'s' * (replaced != 1)}"] if replaced else []
    what += [f"added {added}"] if added else []
    text = (f"prices: {offers} {whose}offer{'s' * (offers != 1)} from {r['file']}{dated} "
            + (" and ".join(what) or "changed nothing"))
    if skipped:
        text += f"; {skipped} row{'s' * (skipped != 1)} skipped"
    return text


def serving_line(decision: Decision) -> str | None:
    """Under a headline for training (the team keeps a model of its own, not an API), where
    it states its tokens a month: what serving that model costs against the hosted API's
    bill for them. The training is the small part of such a model's bill."""
    facts, answers = decision.facts, decision.answers
    own, bill = facts.get("own_cost_usd_month"), facts.get("api_cost_usd_month")
    volume, gpus = answers.get("api_tokens_per_month_m"), facts.get("own_serving_gpus")
    if (advises_api(decision) or not isinstance(own, (int, float))
            or not isinstance(bill, (int, float)) or not isinstance(volume, (int, float))
            or not isinstance(gpus, (int, float))):
        return None
    serving, training = facts.get("own_serving_usd_month"), facts.get("own_training_usd_month")
    where = f"on {gpus:,.0f} GPU{'s' * (gpus != 1)} around the clock"
    parts = (f" ({usd(serving)} serving it {where}, {usd(training)} its training programme)"
             if isinstance(serving, (int, float)) and isinstance(training, (int, float))
             else f", served {where}")
    served = f"Your own model: ~{usd(own)} a month all in{parts}"
    api = (f"{facts.get('api_name', 'a hosted API')}'s ~{usd(bill)} for your "
           f"{amount(volume)}M tokens")
    even = facts.get("api_break_even_tokens_m")
    if own <= bill:
        below = (f" (less below ~{amount(even)}M)"
                 if isinstance(even, (int, float)) and even < volume else "")
        return f"{served}, against {api}{below}."
    against = strongest_against(decision.decisions["approach"], "use-api")
    why = f"; not an API: {against.text[0].lower()}{against.text[1:]}" if against else "."
    return f"{served}, more than {api}{why}"


def assumed_work_line(decision: Decision) -> str | None:
    """The warning, at the top, that the work is assumed because the team does not know it,
    or that there is none (0 GPU-hours a year: every configuration costs nothing for it)."""
    work = decision.estimates["work"]
    if work["mode"] != "hours":
        return None
    if not work["hours_assumed"]:
        if work["hours_per_year"]:
            return None
        return ("⚠ No work: 0 GPU-hours a year costs $0 anywhere, so the pick says nothing "
                "about cost; give training_tokens_b or hours_per_year.")
    gpu = short_name(str(decision.facts.get("hours_gpu_name") or work["hours_gpu"]))
    return (f"⚠ Assumed work: you do not know your amount of work yet, so every figure here "
            f"is for {work['hours_per_year']:,.0f} GPU-hours a year on one {gpu}; give "
            "training_tokens_b or hours_per_year for advice on your own.")


def work_line(decision: Decision) -> str:
    """The year's work as the team stated it, and what it means on the pick: a run's length,
    start-up included, and the hours a year it is busy. Under an API's headline, what it
    would mean on the configuration it would train on."""
    choice = decision.hardware.choice
    if advises_api(decision) and choice is not None:
        return _work_line(decision, "Work, if you train anyway", config_name(choice))
    method = decision.decisions["method"].choice
    if (decision.answers.get("method") == "auto" and method in METHOD_NAMES
            and decision.decisions["approach"].choice == "fine-tune"):
        # the team left the fine-tuning method to the advice: which one its runs use
        return _work_line(decision, "Work", "the pick", METHOD_NAMES[method])
    return _work_line(decision, "Work", "the pick")


def _work_line(decision: Decision, title: str, pick: str, method: str = "") -> str:
    """``method``: the fine-tuning method to name (``LoRA``), where the advice chose it."""
    work = decision.estimates["work"]
    facts = decision.facts
    gpu = short_name(str(facts.get("hours_gpu_name") or work["hours_gpu"]))
    if work["mode"] == "hours":
        said = "assumed, see above" if work["hours_assumed"] else "as given"
        of = f" of {method}" if method else ""
        text = (f"{title}: {work['hours_per_year']:,.0f} GPU-hours a year{of} on one {gpu} "
                f"({said})")
        if work.get("runs_assumed"):
            text += (", in one run (assumed)" if float(str(work["runs_per_year"])) == 1
                     else f", in runs of {_run_default(work)} (assumed)")
    else:
        source = ("Chinchilla default: 20 tokens per parameter" if work["tokens_from"]
                  == "chinchilla" else "as given")
        runs = _runs(work["runs_per_year"], method)
        if work.get("runs_assumed"):
            runs += " (assumed: you gave no runs a year)"
        text = f"{title}: {runs} of {work['tokens_per_run_b']:,g}B tokens ({source})"
    choice = decision.hardware.choice
    if choice is not None and choice.pool is not None and choice.days_per_run is not None:
        text += (f"; a job takes {run_length(choice.days_per_run)} on its share of {pick}, "
                 f"whose GPUs are busy {_busy(choice)} on average")
        trace = decision.estimates["traces"].get("pick_cost_usd_year")
        if choice.where == "cloud" and not choice.pool.always_on and trace:
            waves, billed = trace["inputs"]["runs"], trace["inputs"]["hours"]
            at_once = int(decision.answers.get("concurrent_jobs", 1))
            times = f"{waves:,.1f}".removesuffix(".0")
            text += (f"; each job rents its share only while it runs, up to {at_once:,} at "
                     f"once: about {hours(billed)} hours a year of the whole pool"
                     if steady_work(decision) else
                     f"; your {at_once:,} jobs at once come together {times} times a year, "
                     f"so it is rented about {hours(billed)} hours")
        return text + "."
    _, peaks = peaks_pick(decision)
    if choice is not None and peaks is not None and choice.days_per_run is not None:
        own_run = peaks.get("owned_days_per_run")
        each = f" ({run_length(own_run)} a run)" if own_run else ""
        return (f"{text}: {peaks['owned_share']:.0%} on your GPUs{each}, busy "
                f"{_percent(peaks['owned_busy_share'])} of the year, the rest on "
                f"{config_name(choice)} ({hours(choice.busy_hours_per_year)} hours, "
                f"{run_length(choice.days_per_run)} a run).")
    if choice is not None and choice.days_per_run is not None:
        text += f"; a run takes {run_length(choice.days_per_run)} on {pick}"
        if choice.start_up_hours:
            text += f" ({_hours_text(choice.start_up_hours)} of it start-up and upload)"
        text += f", busy {_busy(choice)}"
    return text + "."


def _busy(choice: Candidate) -> str:
    """How busy the pick's GPUs are: ``23% of the year`` where they are paid for every hour
    (owned, rented for a term of months, a pool rented all year), ``1,980 hours a year``
    where paid by the hour they run."""
    if paid_every_hour(choice):
        return f"{_percent(choice.busy_share)} of the year"
    if rounds_to_no_hours(choice):
        return "under 0.1 hours a year"
    return f"{hours(choice.busy_hours_per_year)} hours a year"


def rounds_to_no_hours(c: Candidate) -> bool:
    """Whether ``c`` trains for seconds a year: busy hours that round to 0.0 though it runs."""
    return bool(c.run_hours) and c.busy_hours_per_year < 0.05


def paid_every_hour(choice: Candidate) -> bool:
    """Whether the pick's GPUs cost the same busy or idle: owned, rented for a term of
    months, or a pool rented for every hour of the year."""
    return bool(choice.where == "local" or choice.reserved_months
                or (choice.pool is not None and choice.pool.always_on))


def _run_default(work: Mapping[str, object]) -> str:
    runs = float(str(work.get("runs_per_year") or 1))
    per = float(str(work.get("hours_per_year") or 0)) / runs if runs else 0.0
    return f"{per:,.0f} hours"


def _hours_text(value: float) -> str:
    minutes = value * 60
    return f"{minutes:,.0f} min" if minutes < 90 else f"{value:,.1f} h"


def _runs(runs: float | None, method: str = "") -> str:
    n, kind = runs or 1, f"{method} " if method else ""
    return f"{n:,.4g} {kind}run a year" if n == 1 else f"{n:,.4g} {kind}runs a year"


def memory_line(decision: Decision) -> str:
    """The model, the method on the pick and what it needs per GPU there, with whether
    gradient checkpointing is on and why."""
    mem = decision.estimates["memory"]
    facts = decision.facts
    choice = decision.hardware.choice
    line = f"Model {facts['model_name']} ({facts['params_b']:g}B), {mem['method']}"
    if choice is None:
        return (line + f": ~{mem['total_gib']:.1f} GiB on one GPU ({mem['range_gib']['low']:.1f}"
                f"–{mem['range_gib']['high']:.1f}).")
    per = choice.vram_total_gib / choice.count
    line += _precision_text(decision, choice)
    if choice.pool is not None:
        return line + f"; {pool_text(choice, steady=steady_work(decision))}."
    line += f": {choice.vram_needed_gib:.1f} of {per:g} GiB per GPU on the pick"
    if choice.count > 1:
        line += f" (sharded over {choice.count:,})"
    if choice.gradient_checkpointing:
        line += (f"; checkpointing on: without it {choice.vram_without_checkpointing_gib:.1f} "
                 f"of {per:g} GiB")
    else:
        line += "; no gradient checkpointing needed"
    return line + "."


def _precision_text(decision: Decision, choice: Candidate) -> str:
    """`` in FP8`` where the pick's figures assume FP8; where FP8 was asked and the pick
    trains in BF16, why."""
    if choice.precision == "fp8":
        return " in FP8"
    if decision.answers.get("precision") != "fp8":
        return ""
    why = ("FP8 recipes train every weight, not LoRA/QLoRA adapters"
           if choice.method in ("lora", "qlora") else
           f"the {short_name(choice.gpu_label)} has no FP8 tensor cores")
    return f" in BF16 ({why})"


def pool_text(choice: Candidate, *, steady: bool = False) -> str:
    """The pick's pool layout and how it is paid: ``a job needs 15.9 GiB: 4 MIG slices of 24
    GiB (1g.24gb) on each GPU, 8 jobs at once (bought: on all year)``."""
    pool = choice.pool
    assert pool is not None
    paid = (" (yours: on all year)" if choice.owned else " (bought: on all year)"
            if choice.where == "local" else ": rented for every hour of the year, since the "
            "jobs come when they come" if pool.always_on else
            ": each job rents its GPUs only while it runs, so none sits idle between jobs"
            if steady else ": rented while they run, "
            "since they come together (a lab session, a burst)")
    return f"{pool.layout}{paid}"


def break_even_line(decision: Decision) -> str | None:
    """Owning vs renting the same work: where they cross, in the team's own unit of work."""
    be = decision.estimates.get("break_even")
    if not be:
        return None
    work, even, unit = decision.estimates["work"], amount(be["work"]), str(be["unit"])
    if even == "1" and unit.startswith("runs "):
        unit = unit.replace("runs ", "run ", 1)
    return (f"Owning {be['own']} costs less than renting {be['rent']} above "
            f"{even} {unit}; yours is {amount(work['units'])}.")


def amount(value: float) -> str:
    """An amount (of tokens, runs, hours): whole from 10 up, two significant digits
    below."""
    return f"{value:,.0f}" if value >= 10 else f"{value:,.2g}"


def plan_line(decision: Decision) -> str | None:
    """The team's own plan priced for the same work, beside the pick."""
    plan, choice = decision.hardware.plan, decision.hardware.choice
    if plan is None or choice is None:
        return None
    if plan.excluded and any(w.id == "plan-too-small" for w in decision.warnings):
        return None  # its critical warning says why, without pricing what cannot run
    if plan.id == choice.id:
        return f"Your plan ({plan.label}) is the pick."
    answers = decision.answers
    planned = int(answers.get("planned_gpu_count") or 0)
    if (choice.owned and answers.get("planned_gpu") == answers.get("owned_gpu")
            and planned <= int(answers.get("owned_gpu_count") or 0)):
        # the plan is GPUs the team has: priced as bought or rented again, it says nothing
        return (f"Your plan, {planned:,}× {short_name(choice.gpu_label)}, is of the GPUs you "
                "own: the pick keeps using them.")
    days = f", {run_length(plan.days_per_run)} a run" if plan.days_per_run is not None else ""
    why = (f" ({'ruled out' if plan.excluded else 'not the pick'}: {plan.reason.rstrip('.')})"
           if plan.reason else "")
    if not plan.within_year:  # what it would cost for work it cannot do says nothing
        return (f"Your plan, {plan.label}, cannot do this work within a year: it would be "
                f"busy {_percent(plan.busy_share)} of the year{days}{why}.")
    against = _against_the_pick(plan.premium, choice.cost.per_year_usd)
    text = (f"Your plan, {plan.label}: {usd(plan.per_year_usd)} a year ({against}), busy "
            f"{_percent(plan.busy_share)} of the year{days}")
    if plan.premium > 0:
        text += f"; the pick saves {usd(plan.per_year_usd - choice.cost.per_year_usd)} a year"
    return text + why + "."


def close_call_lines(decision: Decision) -> list[str]:
    """``A close call: …`` for each eligible configuration within the policy's margin of the
    pick's cost, with what would tip it; and for an owned pick whose purchase pays back only
    after its write-off. None under an API's headline: the hardware is for training the team
    is told not to do, and its close calls are not the decision's."""
    choice = decision.hardware.choice
    if choice is None or advises_api(decision):
        return []
    out = []
    for near in decision.hardware.close_calls:
        text = (f"A close call: {near.label} costs {_more_or_less(near.premium)} "
                f"({usd(near.per_year_usd)} a year)")
        if (near.days_per_run is not None and choice.days_per_run is not None
                and near.days_per_run * TIP_SHARE > choice.days_per_run):
            # what it saves, it saves by waiting (runs a quarter or more longer): say how long
            text += f", at {_runs_instead(near.days_per_run, choice.days_per_run)}"
        tips = _tips(choice, near.label, near.days_per_run, near.upfront_usd)
        if tips:
            text += f"; prefer it if {tips}"
        if near.reason:  # what the rules hold against it, cheaper or not
            won = "the pick won on" if _cheaper(near.premium) else "against it"
            text += f"; {won}: {near.reason.rstrip('.')}"
        out.append(text + ".")
    be = decision.estimates.get("break_even") or {}
    years, write_off = be.get("payback_years"), be.get("write_off_years")
    if choice.where == "local" and years and write_off and years > write_off:
        out.append(f"A close call on owning: the purchase pays for itself in {years:.1f} "
                   f"years of saved rent, after its {write_off:g}-year write-off.")
    return out


def _runs_instead(days: float, than: float) -> str:
    """``1.6 days a run instead of 5.3 hours``."""
    return f"{run_length(days)} a run instead of {run_length(than)}"


def _tips(choice: Candidate, label: str, days: float | None, upfront: float) -> str:
    tips = []
    if (days is not None and choice.days_per_run is not None
            and days < choice.days_per_run * TIP_SHARE):
        tips.append(f"shorter runs matter ({_runs_instead(days, choice.days_per_run)})")
    if choice.where == "local" and upfront == 0:
        tips.append(f"you would rather not spend {usd(choice.cost.upfront_usd)} up front")
    elif 0 < upfront < choice.cost.upfront_usd * TIP_SHARE:
        tips.append(f"you would rather spend less up front ({usd(upfront)} instead of "
                    f"{usd(choice.cost.upfront_usd)})")
    if choice.where == "cloud" and upfront > 0:
        tips.append("you would rather own the capacity and keep it busy")
    return " or ".join(tips)


def programme_line(decision: Decision) -> str | None:
    """``Your training programme: ~$118,017 a year, of which compute $6,744 (5.7%); people
    $100,000 (0.5 engineers assumed), data $11,264 assumed, storage $4.`` Compute counts
    the runs with their evaluation and failed runs."""
    found = decision.estimates.get("programme")
    if not found or advises_api(decision):
        return None
    parts = {p["part"]: p for p in found["parts"]}
    share = found["compute_share"]
    text = (f"Your training programme: ~{usd(found['total_usd_per_year'])} a year, of which "
            f"compute {usd(found['compute_usd_per_year'])} ({_share(share)})")
    beside = []
    for name in ("people", "data", "storage"):
        part = parts.get(name)
        if part is None:
            continue
        text_part = f"{name} {usd(part['usd_per_year'])}"
        if name == "people":
            count = float(part["inputs"]["engineers"])
            if not count and part["assumed"]:  # a budget of the lowest tier
                beside.append("people not counted (your own time)")
                continue
            text_part += f" ({count:g} engineer{'' if count == 1 else 's'}" + (
                " assumed)" if part["assumed"] else ")")
        elif name == "data" and part["assumed"]:
            text_part += " assumed"
        beside.append(text_part)
    return text + "; " + ", ".join(beside) + "."


def programme_part_lines(decision: Decision) -> list[str]:
    """Each part of the programme's bill with its formula and sources (``--explain``)."""
    found = decision.estimates.get("programme")
    if not found:
        return []
    return [f"{p['part']}: {usd(p['usd_per_year'])} a year = {p['formula']}"
            + (" (assumed: the policy's figure)" if p["assumed"] else "")
            + (f" [{'; '.join(p['sources'])}]" if p["sources"] else "")
            for p in found["parts"]]


def _share(share: float) -> str:
    """``1.5%``, ``98%``, ``under 0.1%``."""
    if share >= 0.1:
        return f"{share:.0%}"
    return f"{share:.1%}" if share >= 0.001 else "under 0.1%"


def _against_the_pick(premium: float, pick_usd: float) -> str:
    """``80% more than the pick``, ``3% less than the pick``; three times or more as a
    multiple (``8.7× the pick's cost``, ``42× the pick's cost``); a hundred times or more
    beside the pick's own cost (``against $7 for the pick``), where a multiple of a few
    dollars or cents (``82,062×``) says less than the sums."""
    times = premium + 1
    if times >= 99.5:
        return f"against {usd(pick_usd)} for the pick"
    if premium >= 2:
        return f"{times:,.{1 if times < 9.95 else 0}f}× the pick's cost"
    return f"{_more_or_less(premium)} than the pick"


def _more_or_less(premium: float) -> str:
    """``80% more``, ``3% less``, ``under 1% more``; a premium rounded to zero from below
    (-0.0) is less."""
    return f"{_percent(premium)} {'less' if _cheaper(premium) else 'more'}"


def _cheaper(premium: float) -> bool:
    """Whether a rival's premium over the pick is below zero, if only by rounding (-0.0)."""
    return math.copysign(1.0, premium) < 0


def _percent(share: float) -> str:
    return f"{abs(share):.0%}" if abs(share) >= 0.01 else "under 1%"


def against_break_even_line(decision: Decision) -> str | None:
    """When the pick goes against the break-even (rented where owning costs less for the
    team's work, or owned where renting does), the reason that decided it."""
    be, choice = decision.estimates.get("break_even"), decision.hardware.choice
    if not be or choice is None:
        return None
    work = float(decision.estimates["work"]["units"])
    owning_cheaper = work > float(be["work"])
    if owning_cheaper == (choice.where == "local"):
        return None
    deployment = decision.decisions["deployment"]
    chosen = _option(deployment, deployment.choice or "")
    strongest = max((r for r in chosen.reasons if r.effect == "prefer"),
                    key=lambda r: r.weight, default=None) if chosen else None
    against = next((r for o in deployment.ranking if o.option != deployment.choice
                    for r in o.reasons if r.effect in ("exclude", "avoid")), None)
    side = "owning" if owning_cheaper else "renting"
    why = against or strongest
    if why is None:
        return None
    return (f"Although {side} costs less for your work, the decision is "
            f"{deployment.choice}: {why.text.rstrip('.')} [{why.rule}].")


def revision_note(axis: AxisDecision) -> str | None:
    """``revised from spot: …`` when no configuration offers what the rules chose."""
    if axis.revised_from is None:
        return None
    return f"revised from {axis.revised_from}: {axis.revision}"


def standing(axis: AxisDecision) -> str:
    """How the choice stood against the other options, in words: its score and the next
    best, a tie broken by the declared order, or the option the rules chose before a
    revision."""
    if axis.choice is None:
        return ("chosen with the hardware: no configuration holds the job"
                if axis.follows is not None else "every option was ruled out")
    if axis.follows is not None:
        ruled_out = [r.option for r in axis.ranking if r.excluded]
        return ("chosen with the hardware: as priced on the picked configuration"
                + (f"; ruled out: {', '.join(ruled_out)}" if ruled_out else ""))
    if axis.revised_from is not None:
        wanted = _option(axis, axis.revised_from)
        at = f" at {wanted.score:g}" if wanted is not None else ""
        return f"revised: the rules chose {axis.revised_from}{at}"
    chosen = _option(axis, axis.choice)
    score = chosen.score if chosen is not None else 0.0
    rest = [r for r in axis.ranking if r.option != axis.choice and not r.excluded]
    if not rest:
        return f"score {score:g}; every other option was ruled out"
    if rest[0].score == score:
        return f"score {score:g}, tied with {rest[0].option}: first declared option"
    return f"score {score:g}, ahead of {rest[0].option} at {rest[0].score:g}"


def _option(axis: AxisDecision, option: str) -> OptionScore | None:
    return next((r for r in axis.ranking if r.option == option), None)


def top_reasons(axis: AxisDecision, limit: int = 4) -> list[tuple[str, str, list[str], str]]:
    """(sign, text, sources, rule) for the chosen option's reasons, strongest first; then why
    other options were ruled out (``✗ local: …``); what weighed down an option whose reasons
    for it alone would have matched the choice (the deciding reason against it: ``−
    reserved: …``); and when the choice has no reason of its own, what weighed the others
    down (``− hybrid: …``). Where every option was ruled out, what ruled out each."""
    chosen = _option(axis, axis.revised_from or axis.choice or "")
    if chosen is None:
        return _ruled_out(axis, limit)
    reasons = sorted(chosen.reasons, key=lambda r: -r.weight)
    out = []
    for r in reasons[:limit]:
        sign = {"prefer": "+", "avoid": "−", "exclude": "✗"}[r.effect]
        out.append((sign, r.text, r.sources, r.rule))
    shown = {rule for *_, rule in out}
    for option in axis.ranking:
        if option is chosen or option.excluded:
            continue
        backed = sum(r.weight for r in option.reasons if r.effect == "prefer")
        against = sorted((r for r in option.reasons if r.effect == "avoid"
                          and r.rule not in shown), key=lambda r: -r.weight)
        if chosen.reasons and backed >= chosen.score and against:
            shown.add(against[0].rule)
            out.append(("−", f"{option.option}: {against[0].text}", against[0].sources,
                        against[0].rule))
    effects = ["exclude", "avoid"] if not chosen.reasons else ["exclude"]
    for effect in effects:
        for option in axis.ranking:
            if option is chosen or (effect == "exclude") != option.excluded:
                continue
            for r in option.reasons:
                if r.effect == effect and r.rule not in shown:
                    shown.add(r.rule)
                    out.append(("✗" if effect == "exclude" else "−",
                                f"{option.option}: {r.text}", r.sources, r.rule))
    return out


def _ruled_out(axis: AxisDecision, limit: int) -> list[tuple[str, str, list[str], str]]:
    """``✗ local: …`` for each excluded option, by the first rule that excluded it (each rule
    once)."""
    out: list[tuple[str, str, list[str], str]] = []
    shown: set[str] = set()
    for option in axis.ranking:
        first = next((r for r in option.reasons if r.effect == "exclude"), None)
        if option.excluded and first is not None and first.rule not in shown:
            shown.add(first.rule)
            out.append(("✗", f"{option.option}: {first.text}", first.sources, first.rule))
    return out[:limit]
