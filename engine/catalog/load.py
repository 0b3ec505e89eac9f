"""Load ``catalog/*.yaml`` into validated models and cross-check every reference."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from engine.catalog.models import (
    Access,
    AnnouncedGpu,
    ApiOffer,
    CloudFile,
    Country,
    Gpu,
    GpuFile,
    Location,
    ModelFile,
    ModelPreset,
    Offer,
    Platform,
    PlatformFile,
    Policy,
    PolicyFile,
    Provider,
    Question,
    QuestionFile,
    RegionFile,
    RegionGroup,
    Source,
    SourceFile,
)
from engine.catalog.prices import PriceChange, PriceInput, read_prices
from engine.errors import CatalogError, InputError
from engine.files.validation import build, did_you_mean
from engine.files.yamlio import line_of, parse_yaml, read_text
from engine.memo import MISSING, Memo
from engine.resources import bundled_dir

if TYPE_CHECKING:
    from engine.catalog.skypilot import Imported

CATALOG_FILES = ("sources", "gpus", "platforms", "clouds", "regions", "models", "policy",
                 "questions")
T = TypeVar("T")


PER_JOB_LIMIT = 200_000
"""Entries of a catalog's per-job memo: the placements (peak and speed per job, GPU, count,
nodes, network) of every model shape and method asked for. At the default limit (20,000)
generated requests filled it every ~40 recommendations and forgot it all; over 40 models,
four methods and 3,000 distinct requests it holds ~83,000 entries."""


@dataclass(frozen=True)
class Catalog:
    """Everything static the engine needs, validated and indexed by id."""

    sources: Mapping[str, Source]
    gpus: Mapping[str, Gpu]
    announced: tuple[AnnouncedGpu, ...]
    """GPUs announced but not yet rentable or buyable: never a configuration."""
    platforms: tuple[Platform, ...]
    providers: Mapping[str, Provider]
    offers: tuple[Offer, ...]
    apis: tuple[ApiOffer, ...]
    models: Mapping[str, ModelPreset]
    policy: Policy
    questions: tuple[Question, ...]
    countries: Mapping[str, Country]
    """Every country a location may name (``regions.yaml``), by ISO code."""
    region_groups: Mapping[str, RegionGroup]
    """The region ids (eu, us, uk, asia...) the ``regions`` fields use, by id."""
    texts: Mapping[str, str] = field(repr=False)
    """The exact text of every file read (name → content), for hashing and the audit store."""
    notices: tuple[str, ...] = ()
    price_changes: tuple[PriceChange, ...] = ()
    """What each ``--prices`` file changed (none without one)."""
    """What loading skipped or noticed (said once on stderr by the command line)."""

    @cached_property
    def hash(self) -> str:
        """sha256 over the exact content of every catalog file (and price override)."""
        return content_hash(self.texts)

    @cached_property
    def _derived(self) -> Memo[Hashable, Any]:
        return Memo()

    def derived(self, key: Hashable, compute: Callable[..., T], *args: Any) -> T:
        """``compute(*args)``, remembered under ``key`` for this catalog (bounded).

        For values that depend on the catalog and ``key`` alone (the GPU counts that hold a
        job, a configuration's purchase price), which every request would otherwise redo.
        Callers must not mutate what they get.
        """
        memo = self._derived  # Memo.remember inlined: a few thousand lookups a request
        found = memo.lookup(key, MISSING)
        if found is MISSING:
            found = memo.put(key, compute(*args))
        result: T = found
        return result

    @cached_property
    def _per_job(self) -> Memo[Hashable, Any]:
        return Memo(PER_JOB_LIMIT)

    def per_job(self, key: Hashable, compute: Callable[..., T], *args: Any) -> T:
        """``compute(*args)`` for values that depend on one job (a model shape, a method, a
        batch geometry) as well as the catalog: shared by the configurations of a request and
        by requests that ask the same, and kept apart from :meth:`derived`, so that many
        distinct requests never push the catalog's own figures out (bounded alike)."""
        memo = self._per_job  # Memo.remember inlined, as in derived
        found = memo.lookup(key, MISSING)
        if found is MISSING:
            found = memo.put(key, compute(*args))
        result: T = found
        return result

    @cached_property
    def newest_price_date(self) -> dt.date:
        """The date of the newest price the catalog holds (offers and APIs)."""
        return max([o.as_of for o in self.offers] + [a.as_of for a in self.apis])

    def is_stale(self, as_of: dt.date) -> bool:
        """A price older than the policy's limit, counted back from the catalog's newest
        price (not from today: the same catalog always decides the same way)."""
        return (self.newest_price_date - as_of).days > self.policy.max_price_age_days.value

    def gpu(self, gpu_id: str) -> Gpu:
        """The GPU with this id; a CatalogError with did-you-mean otherwise."""
        try:
            return self.gpus[gpu_id]
        except KeyError:
            hint = did_you_mean(gpu_id, self.gpus)
            raise CatalogError(f"unknown GPU '{gpu_id}'{hint}") from None

    def model(self, model_id: str) -> ModelPreset:
        """The model preset with this id; a CatalogError with did-you-mean otherwise."""
        try:
            return self.models[model_id]
        except KeyError:
            hint = did_you_mean(model_id, self.models)
            raise CatalogError(f"unknown model '{model_id}'{hint}") from None

    def question(self, question_id: str) -> Question:
        """The questionnaire entry for an answers field."""
        return next(q for q in self.questions if q.id == question_id)

    def access_of(self, offer: Offer) -> Access:
        """How ``offer`` is sold: its own access, else its provider's."""
        return offer.access or self.providers[offer.provider].access

    def ecosystem_name(self, ecosystem: str | None) -> str:
        """The name of the provider whose ecosystem a team runs on (``azure`` → Microsoft
        Azure); empty for none or one the catalog has no provider of."""
        return next((p.name for p in self.providers.values()
                     if ecosystem and p.ecosystem == ecosystem), "")

    def locations_of(self, offer: Offer) -> tuple[Location, ...]:
        """Where ``offer`` is sold: its own locations, else its provider's that fall in the
        offer's regions (never empty for a loaded catalog)."""
        if offer.locations:
            return tuple(offer.locations)
        return tuple(loc for loc in self.providers[offer.provider].locations
                     if _in_regions(self.countries, loc.country, offer.regions))

    def allowed_locations(self, offer: Offer, allowed: frozenset[str]) -> tuple[Location, ...]:
        """The locations of ``offer`` inside ``allowed``: a country code (``jp``) allows that
        country, a region id (``eu``, ``asia``) every country in it."""
        return tuple(loc for loc in self.locations_of(offer)
                     if loc.country in allowed
                     or any(g in allowed for g in self.country_regions(loc.country)))

    def sold_at(self, offer: Offer, allowed: frozenset[str] | None) -> Location | None:
        """Where to rent ``offer`` for a team whose data may go to ``allowed`` (anywhere when
        None): of its locations there, the one where it costs least on demand (a location's
        own price, else the offer's), the first of equals; None where it is sold nowhere
        there (remembered per catalog)."""
        found: Location | None = self.derived(("sold_at", offer.id, allowed), self._sold_at,
                                              offer, allowed)
        return found

    def _sold_at(self, offer: Offer, allowed: frozenset[str] | None) -> Location | None:
        found = (self.locations_of(offer) if allowed is None
                 else self.allowed_locations(offer, allowed))
        base = offer.on_demand_usd_per_gpu_hour or 0.0
        return min(found, key=lambda loc: loc.on_demand_usd_per_gpu_hour or base,
                   default=None)

    def country_regions(self, code: str) -> tuple[str, ...]:
        """The region ids a country belongs to (``gb`` → ``uk``; ``de`` → ``eu``)."""
        country = self.countries.get(code)
        return tuple(country.groups) if country else ()


def cited_sources(data: Any) -> list[str]:
    """Every id listed under a ``sources`` key anywhere in parsed catalog data, in order."""
    found: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key == "sources" and isinstance(value, list):
                found.extend(str(v) for v in value)
            else:
                found.extend(cited_sources(value))
    elif isinstance(data, list):
        for value in data:
            found.extend(cited_sources(value))
    return list(dict.fromkeys(found))


def content_hash(texts: Mapping[str, str]) -> str:
    """A stable sha256 over named texts (order-independent)."""
    digest = hashlib.sha256()
    for name in sorted(texts):
        digest.update(name.encode() + b"\0" + texts[name].encode() + b"\0")
    return digest.hexdigest()


def load_catalog(directory: Path | None = None, *,
                 prices: Path | PriceInput | None = None) -> Catalog:
    """Load and cross-check a catalog directory (the bundled one by default).

    ``prices`` is an optional override (a path is read with :func:`read_prices`): a YAML file
    with ``offers:`` (and ``sources:``) of its own (an offer with an existing id replaces it,
    a new id is added), or a SkyPilot ``vms.csv``, whose offers replace those of its provider
    (``PROVIDER=FILE``, else the name of the file's folder, as in ``aws/vms.csv``). Its text,
    layout, provider and date are among the catalog's texts (:meth:`PriceInput.texts`).
    """
    root = directory or bundled_dir("catalog")
    texts: dict[str, str] = {}
    raw: dict[str, Any] = {}
    for name in CATALOG_FILES:  # a link inside a given catalog folder is refused
        path = root / f"{name}.yaml"
        texts[f"catalog/{name}.yaml"], raw[name] = _read_yaml(
            path, follow_symlinks=directory is None)

    def parse(name: str, model: type[Any]) -> Any:
        return build(model, raw[name], path=_p(root, name), error=CatalogError)

    source_file: SourceFile = parse("sources", SourceFile)
    gpu_file: GpuFile = parse("gpus", GpuFile)
    platform_file: PlatformFile = parse("platforms", PlatformFile)
    cloud_file: CloudFile = parse("clouds", CloudFile)
    region_file: RegionFile = parse("regions", RegionFile)
    model_file: ModelFile = parse("models", ModelFile)
    policy_file: PolicyFile = parse("policy", PolicyFile)
    question_file: QuestionFile = parse("questions", QuestionFile)
    sources = _index(source_file.sources, raw["sources"], "sources", _p(root, "sources"))
    offers = list(cloud_file.offers)
    overrides: _Override | None = None
    notices: list[str] = []
    if isinstance(prices, Path):
        prices = read_prices(prices)
    if prices is not None:
        texts.update(prices.texts())
    changes: list[PriceChange] = []
    if prices is not None and prices.layout in ("skypilot", "gpuhunt"):
        imported = _read_csv(prices, cloud_file, gpu_file, policy_file.policy)
        provider = imported.offers[0].provider
        dropped = sum(1 for o in offers if o.provider == provider)
        offers = [o for o in offers if o.provider != provider] + list(imported.offers)
        sources = {**sources, imported.source.id: imported.source}
        if imported.skipped:
            notices.append(f"{prices.shown}: {imported.skipped}")
        changes.append(_change(prices, provider, len(imported.offers), dropped, 0,
                               imported.skipped_rows))
    elif prices is not None:
        prices_data = _parse_yaml(prices.text, prices.shown)
        override = build(PriceFile, prices_data, path=prices.shown, error=CatalogError)
        sources = {**sources, **{s.id: s for s in override.sources}}
        replaced = {o.id: o for o in override.offers}
        before = len(replaced)
        offers = [replaced.pop(o.id, o) for o in offers] + list(replaced.values())
        changes.append(_change(prices, None, before, before - len(replaced), len(replaced), 0))
        overrides = _Override(prices.shown, prices_data, {o.id for o in override.offers})
    catalog = Catalog(
        sources=sources,
        gpus=_index(gpu_file.gpus, raw["gpus"], "gpus", _p(root, "gpus")),
        announced=tuple(gpu_file.announced),
        platforms=tuple(_index(platform_file.platforms, raw["platforms"], "platforms",
                               _p(root, "platforms")).values()),
        providers=_index(
            cloud_file.providers, raw["clouds"], "providers", _p(root, "clouds")
        ),
        offers=tuple(offers),
        apis=tuple(cloud_file.apis),
        models=_index(model_file.models, raw["models"], "models", _p(root, "models")),
        policy=policy_file.policy,
        questions=tuple(question_file.questions),
        countries=_index(region_file.countries, raw["regions"], "countries",
                         _p(root, "regions")),
        region_groups=_index(region_file.groups, raw["regions"], "groups", _p(root, "regions")),
        texts=texts,
        notices=tuple(notices),
        price_changes=tuple(changes),
    )
    _check_references(catalog, raw, root, overrides)
    clash = sorted({a.id for a in catalog.announced} & set(catalog.gpus))
    if clash:
        raise CatalogError(f"announced: '{clash[0]}' is also a GPU of gpus: (one id, one GPU)",
                           path=_p(root, "gpus"))
    return catalog


@dataclass(frozen=True)
class Dated:
    """A dated figure of the catalog: what it is, its id and the date it was true."""

    kind: str
    id: str
    as_of: dt.date
    sources: tuple[str, ...]


def dated_figures(catalog: Catalog) -> list[Dated]:
    """Every dated price of the catalog: offers, hosted APIs, GPU and platform purchases."""
    out = [Dated("offer", o.id, o.as_of, tuple(o.sources)) for o in catalog.offers]
    out += [Dated("api", a.id, a.as_of, tuple(a.sources)) for a in catalog.apis]
    out += [Dated("purchase", g.id, g.purchase.as_of, tuple(g.purchase.sources))
            for g in catalog.gpus.values() if g.purchase is not None]
    out += [Dated("platform", p.id, p.price.as_of, tuple(p.price.sources))
            for p in catalog.platforms]
    return out


def stale_figures(catalog: Catalog, today: dt.date) -> list[Dated]:
    """The dated figures older than the policy's limit on ``today``, oldest first."""
    limit = catalog.policy.max_price_age_days.value
    return sorted((d for d in dated_figures(catalog) if (today - d.as_of).days > limit),
                  key=lambda d: (d.as_of, d.kind, d.id))


def stale_prices(catalog: Catalog, today: dt.date) -> str | None:
    """A line naming the offers whose prices are older than the policy allows, or None."""
    limit = catalog.policy.max_price_age_days.value
    old = sorted((o for o in catalog.offers if (today - o.as_of).days > limit),
                 key=lambda o: o.as_of)
    if not old:
        return None
    return (f"prices of {len(old)} offer(s) are older than {limit:,.0f} days (oldest: "
            f"{old[0].id}, {old[0].as_of.isoformat()}); give fresh ones with --prices")


@dataclass(frozen=True)
class _Override:
    """Where the offers of a ``--prices`` file came from, so errors name that file."""

    path: str
    data: Any
    offer_ids: set[str]

    def locate(self, kind: str, item_id: str) -> tuple[str, int | None] | None:
        if kind != "offers" or item_id not in self.offer_ids:
            return None
        return self.path, _line_of_id(self.data, item_id)


class PriceFile(BaseModel):
    model_config = {"extra": "forbid", "defer_build": True}
    sources: list[Source] = []
    offers: list[Offer]


def _read_csv(prices: PriceInput, clouds: CloudFile, gpus: GpuFile,
              policy: Policy) -> Imported:
    """What a price CSV (SkyPilot's or gpuhunt's layout) imports."""
    from engine.catalog.gpuhunt import gpuhunt_rows
    from engine.catalog.skypilot import limits_of, read_skypilot

    known = {p.id: p for p in clouds.providers}
    provider_id = str(prices.provider)
    if prices.layout == "gpuhunt" and clouds.gpuhunt is not None:
        provider_id = clouds.gpuhunt.files.get(provider_id, provider_id)
    if provider_id not in known:
        named = "the file's name" if prices.layout == "gpuhunt" else "the file's folder"
        raise CatalogError(f"which provider are these prices for? '{provider_id}' ({named}) "
                           f"is not one{did_you_mean(provider_id, known)}; "
                           "name it: --prices PROVIDER=FILE", path=prices.shown)
    if clouds.skypilot is None:
        raise CatalogError("the catalog has no skypilot mapping (clouds.yaml) to read a "
                           "price CSV's GPU and region names with", path=prices.shown)
    prices = replace(prices, provider=provider_id)
    current = [o for o in clouds.offers if o.provider == provider_id]
    # where each region is; a location's own prices are its offer's, not an imported row's
    located = {loc.region: loc.model_copy(update={"on_demand_usd_per_gpu_hour": None,
                                                  "spot_usd_per_gpu_hour": None})
               for loc in [*known[provider_id].locations,
                           *(loc for o in current for loc in o.locations)]
               if loc.region}
    limits = limits_of(policy)
    names = {**clouds.skypilot.accelerators, **clouds.skypilot.providers.get(provider_id, {})}
    rows = gpuhunt_rows(prices, names, limits) if prices.layout == "gpuhunt" else None
    imported = read_skypilot(prices, [g.id for g in gpus.gpus], clouds.skypilot,
                             known[provider_id].regions, current, limits, located, rows)
    if not imported.offers:
        raise CatalogError(f"no offer for a catalog GPU in {provider_id}'s regions",
                           path=prices.shown)
    return imported


def _change(prices: PriceInput, provider: str | None, offers: int, replaced: int,
            added: int, skipped: int) -> PriceChange:
    return PriceChange(
        file=prices.shown, name=prices.name, layout=prices.layout, provider=provider,
        as_of=prices.as_of.isoformat() if prices.as_of else None, dated_by=prices.dated_by,
        sha256=prices.sha256, offers=offers, replaced=replaced, added=added,
        skipped_rows=skipped)


def _parse_yaml(text: str, shown: str) -> Any:
    """Parsed YAML of a text already read; any problem is a CatalogError."""
    try:
        return parse_yaml(text, path=shown)
    except CatalogError:
        raise
    except InputError as exc:
        raise CatalogError(exc.message, path=exc.path, line=exc.line, field=exc.field) from None


def _read_yaml(path: Path, *, follow_symlinks: bool = True) -> tuple[str, Any]:
    """The exact text and parsed data of one catalog file; any problem is a CatalogError."""
    try:
        text = read_text(path, follow_symlinks=follow_symlinks)
        return text, parse_yaml(text, path=str(path))
    except CatalogError:
        raise
    except InputError as exc:
        raise CatalogError(exc.message, path=exc.path, line=exc.line, field=exc.field) from None


def _p(root: Path, name: str) -> str:
    return str(root / f"{name}.yaml")


def _index(items: Iterable[Any], raw: Any, key: str, path: str) -> dict[str, Any]:
    """Index by id, refusing duplicates with the line of the second occurrence."""
    out: dict[str, Any] = {}
    for i, item in enumerate(items):
        if item.id in out:
            line = line_of(raw, (key, i))
            raise CatalogError(f"duplicate id '{item.id}'", path=path, line=line, field=key)
        out[item.id] = item
    return out


def _check_references(catalog: Catalog, raw: dict[str, Any], root: Path,
                      overrides: _Override | None = None) -> None:
    """Every cited source, GPU and provider exists; offers sit in their provider's regions."""
    known = catalog.sources
    checks: list[tuple[str, str, str, Iterable[str], Mapping[str, Any]]] = []
    for kind, items in (
        ("gpus", catalog.gpus.values()),
        ("models", catalog.models.values()),
        ("providers", catalog.providers.values()),
    ):
        for item in items:
            checks.append((kind, item.id, "sources", item.sources, known))
    for platform in catalog.platforms:
        checks.append(("platforms", platform.id, "sources", platform.sources, known))
        checks.append(("platforms", platform.id, "price.sources", platform.price.sources,
                       known))
    policy = catalog.policy
    for name, reference, index in (("reference_gpu", policy.reference_gpu, catalog.gpus),
                             ("reference_datacenter_gpu", policy.reference_datacenter_gpu,
                              catalog.gpus),
                             ("bare_size_family", policy.bare_size_family,
                              {m.family: m for m in catalog.models.values()})):
        checks.append(("policy", name, "value", [reference.value], index))
    for gpu in catalog.gpus.values():
        if gpu.purchase:
            checks.append(("gpus", gpu.id, "purchase.sources", gpu.purchase.sources, known))
    for offer in catalog.offers:
        checks.append(("offers", offer.id, "sources", offer.sources, known))
        checks.append(("offers", offer.id, "gpu", [offer.gpu], catalog.gpus))
        checks.append(("offers", offer.id, "provider", [offer.provider], catalog.providers))
    for api in catalog.apis:
        checks.append(("apis", api.id, "sources", api.sources, known))
    for name, constant in _policy_constants(catalog.policy):
        checks.append(("policy", name, "sources", constant.sources, known))
    for question in catalog.questions:
        checks.append(("questions", question.id, "sources", question.sources, known))
    for group in catalog.region_groups.values():
        checks.append(("groups", group.id, "sources", group.sources, known))
    for kind, item_id, attr, refs, index in checks:
        for ref in refs:
            if ref not in index:
                file = _FILE_OF[kind]
                path, line = (overrides and overrides.locate(kind, item_id)) or (
                    _p(root, file), _line_of_id(raw[file], item_id))
                raise CatalogError(
                    f"unknown {attr.split('.')[-1].rstrip('s')} '{ref}'{did_you_mean(ref, index)}",
                    path=path,
                    line=line,
                    field=f"{kind}[{item_id}].{attr}",
                )
    _check_platform_cards(catalog, raw, root, overrides)
    _check_offer_regions(catalog, raw, root, overrides)
    _check_locations(catalog, raw, root, overrides)


def _check_platform_cards(catalog: Catalog, raw: dict[str, Any], root: Path,
                          overrides: _Override | None) -> None:
    """A platform's draw for a card names a GPU of the catalog that it takes."""
    for platform in catalog.platforms:
        taken = {g.id for g in catalog.gpus.values() if platform.takes(g)}
        for gpu_id in platform.watts_by_gpu:
            if gpu_id in taken:
                continue
            path, line = (overrides and overrides.locate("platforms", platform.id)) or (
                _p(root, "platforms"), _line_of_id(raw["platforms"], platform.id))
            if gpu_id not in catalog.gpus:
                message = f"unknown GPU '{gpu_id}'{did_you_mean(gpu_id, catalog.gpus)}"
            else:
                message = (f"GPU '{gpu_id}' does not fit this platform (form or socket); "
                           f"expected one it takes: {', '.join(sorted(taken)) or 'none'}")
            raise CatalogError(message, path=path,
                               line=line, field=f"platforms[{platform.id}].watts_by_gpu")


_FILE_OF = {
    "gpus": "gpus",
    "platforms": "platforms",
    "models": "models",
    "providers": "clouds",
    "offers": "clouds",
    "apis": "clouds",
    "policy": "policy",
    "questions": "questions",
    "groups": "regions",
    "countries": "regions",
}


def _check_offer_regions(catalog: Catalog, raw: dict[str, Any], root: Path,
                         overrides: _Override | None = None) -> None:
    for offer in catalog.offers:
        allowed = catalog.providers[offer.provider].regions
        for region in [*offer.regions, *([offer.market] if offer.market else [])]:
            if region not in allowed:
                path, line = (overrides and overrides.locate("offers", offer.id)) or (
                    _p(root, "clouds"), _line_of_id(raw["clouds"], offer.id))
                raise CatalogError(
                    f"region '{region}' is not one of provider {offer.provider}'s {allowed}",
                    path=path,
                    line=line,
                    field=f"offers[{offer.id}].regions",
                )


def _in_regions(countries: Mapping[str, Country], code: str, regions: Iterable[str]) -> bool:
    country = countries.get(code)
    return country is not None and not set(country.groups).isdisjoint(regions)


def _check_locations(catalog: Catalog, raw: dict[str, Any], root: Path,
                     overrides: _Override | None = None) -> None:
    """regions.yaml is coherent and covers every region id; every location names a known
    country inside its offer's (or provider's) regions; every offer resolves to a location."""
    regions_path = _p(root, "regions")
    groups = catalog.region_groups
    raw_regions = raw["regions"]
    for i, country in enumerate(catalog.countries.values()):
        for j, group in enumerate(country.groups):
            if group not in groups:
                raise CatalogError(
                    f"unknown region group '{group}'{did_you_mean(group, groups)}",
                    path=regions_path, line=line_of(raw_regions, ("countries", i, "groups", j)),
                    field=f"countries[{country.code}].groups")
    members = {g for c in catalog.countries.values() for g in c.groups}
    for i, group_id in enumerate(groups):
        if group_id not in members:
            raise CatalogError(f"region group '{group_id}' has no country",
                               path=regions_path, line=line_of(raw_regions, ("groups", i)),
                               field=f"groups[{group_id}]")
    clouds = raw["clouds"]
    for i, provider in enumerate(catalog.providers.values()):
        for j, region in enumerate(provider.regions):
            if region not in groups:
                hint = did_you_mean(region, groups)
                raise CatalogError(
                    f"region '{region}' is not a group of regions.yaml{hint}",
                    path=_p(root, "clouds"), line=line_of(clouds, ("providers", i, "regions", j)),
                    field=f"providers[{provider.id}].regions")
        for j, loc in enumerate(provider.locations):
            _check_location(catalog, loc, provider.regions, _p(root, "clouds"),
                            line_of(clouds, ("providers", i, "locations", j, "country")),
                            f"providers[{provider.id}].locations[{j}].country")
    for offer in catalog.offers:
        path, data = (overrides.path, overrides.data) if (
            overrides and offer.id in overrides.offer_ids) else (_p(root, "clouds"), clouds)
        index = _index_of_id(data, "offers", offer.id)
        for j, loc in enumerate(offer.locations):
            line = line_of(data, ("offers", index, "locations", j, "country")) \
                if index is not None else None
            _check_location(catalog, loc, offer.regions, path, line,
                            f"offers[{offer.id}].locations[{j}].country")
        if index is not None and data is clouds and not catalog.locations_of(offer):
            # a catalog offer must say where it is sold; a user's quote may rely on defaults
            raise CatalogError(
                f"no location: list the offer's locations (provider {offer.provider} has none "
                f"in {offer.regions})", path=path,
                line=line_of(data, ("offers", index)), field=f"offers[{offer.id}].locations")


def _check_location(catalog: Catalog, loc: Location, regions: Iterable[str], path: str,
                    line: int | None, field: str) -> None:
    country = catalog.countries.get(loc.country)
    if country is None:
        raise CatalogError(f"unknown country '{loc.country}' (not in regions.yaml)"
                           f"{did_you_mean(loc.country, catalog.countries)}",
                           path=path, line=line, field=field)
    if not _in_regions(catalog.countries, loc.country, regions):
        raise CatalogError(f"country '{loc.country}' ({', '.join(country.groups) or 'no group'})"
                           f" is outside regions {list(regions)}", path=path, line=line,
                           field=field)


def _index_of_id(data: Any, key: str, item_id: str) -> int | None:
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    return next((i for i, item in enumerate(items)
                 if isinstance(item, dict) and item.get("id") == item_id), None)


def _policy_constants(policy: Policy) -> Iterable[tuple[str, Any]]:
    for name in type(policy).model_fields:
        value = getattr(policy, name)
        if isinstance(value, dict):
            yield from ((f"{name}.{k}", v) for k, v in value.items())
        elif value is not None:  # an optional constant a policy does not name
            yield name, value


def _line_of_id(data: Any, item_id: str) -> int | None:
    """The line where the item with this id (or this policy key) is defined."""
    if not isinstance(data, dict):
        return None
    for key, value in data.items():
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict) and item.get("id") == item_id:
                    return line_of(data, (key, i))
        elif isinstance(value, dict) and item_id.split(".")[0] in value:
            return line_of(data, (key, item_id.split(".")[0]))
    return None
