"""What a buyer needs to know about each offer: how it is sold (access), how it is billed, where
it is sold (locations in regions.yaml's countries), and the page that sells it; broken copies of
the catalog fail at load with ``file:line: field: message``."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from engine.catalog.load import Catalog, load_catalog
from engine.catalog.models import Access
from engine.errors import CatalogError

ACCESS = set(get_args(Access))


def _replace_once(path: Path, old: str, new: str) -> int:
    """Replace ``old`` (which must occur once); the 1-based line where it started."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path.name}"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return text[: text.index(old)].count("\n") + 1


# ------------------------------------------------------------------ the bundled catalog


def test_every_offer_has_locations(catalog: Catalog) -> None:
    for offer in catalog.offers:
        assert catalog.locations_of(offer), offer.id
    # most offers name where their own instance type is sold; the rest take the provider's
    own = [o for o in catalog.offers if o.locations]
    assert len(own) >= 30
    assert {o.provider for o in own} >= {"aws", "gcp", "azure", "nebius", "verda"}


def test_every_provider_has_access_billing_and_locations(catalog: Catalog) -> None:
    assert len(catalog.providers) == 16
    for provider in catalog.providers.values():
        assert provider.access in ACCESS
        assert provider.billing_increment_s > 0
        assert provider.billing_minimum_s >= provider.billing_increment_s
        assert provider.locations, provider.id
    aws = catalog.providers["aws"]
    assert (aws.billing_increment_s, aws.billing_minimum_s) == (1, 60)


def test_access_resolves_for_every_offer(catalog: Catalog) -> None:
    for offer in catalog.offers:
        assert catalog.access_of(offer) in ACCESS
        if offer.access is None:
            assert catalog.access_of(offer) == catalog.providers[offer.provider].access
    by_id = {o.id: o for o in catalog.offers}
    # an AWS Capacity Block is bought in the console; P5 on demand needs a quota first
    assert catalog.access_of(by_id["aws-h200-p5en-capacity-block"]) == "self-serve"
    assert catalog.access_of(by_id["aws-h100-p5"]) == "account"


def test_every_location_country_is_known_and_inside_its_offer_s_regions(
        catalog: Catalog) -> None:
    for offer in catalog.offers:
        for loc in catalog.locations_of(offer):
            assert loc.country in catalog.countries, (offer.id, loc.country)
            groups = catalog.country_regions(loc.country)
            assert set(groups) & set(offer.regions), (offer.id, loc.country, offer.regions)
    for provider in catalog.providers.values():
        for loc in provider.locations:
            assert set(catalog.country_regions(loc.country)) & set(provider.regions)


def test_region_groups_keep_their_meaning(catalog: Catalog) -> None:
    used = {r for p in catalog.providers.values() for r in p.regions}
    used |= {r for o in catalog.offers for r in [*o.regions, *([o.market] if o.market else [])]}
    assert used <= set(catalog.region_groups)
    assert set(catalog.region_groups) == {"eu", "uk", "us", "ca", "asia", "au", "cn"}
    members = {g: {c.code for c in catalog.countries.values() if g in c.groups}
               for g in catalog.region_groups}
    assert members["uk"] == {"gb"} and members["us"] == {"us"} and members["cn"] == {"cn"}
    assert len(members["eu"]) == 30  # 27 EU member states + Iceland, Liechtenstein, Norway
    assert {"de", "fr", "nl", "se", "fi", "ie", "no"} <= members["eu"]
    assert not {"ch", "gb"} & members["eu"]  # neither is in the EU
    assert {"jp", "sg", "in", "kr"} <= members["asia"]
    for code in ("jp", "de", "fr", "nl", "se", "fi", "no", "ch", "ie", "gb", "us", "ca", "sg",
                 "in", "kr", "au", "br", "cn"):
        assert code in catalog.countries


def test_every_url_is_https(catalog: Catalog) -> None:
    urls = [p.url for p in catalog.providers.values()] + [o.link for o in catalog.offers]
    urls += [s.url for s in catalog.sources.values()]
    assert all(u.startswith("https://") for u in urls if u is not None)
    assert sum(1 for o in catalog.offers if o.link) >= 70


# ------------------------------------------------------------------ broken copies


def test_location_outside_the_offer_s_regions_names_file_line_field(
        catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    line = _replace_once(clouds, "  - country: fi\n    region: FIN-02\n  link: https://verda.com",
                         "  - country: us\n    region: FIN-02\n  link: https://verda.com")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{clouds}:{line}: offers[verda-h100].locations[0].country: country 'us' (us) is "
        "outside regions ['eu']"
    )


def test_unknown_country_names_file_line_field(catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    line = _replace_once(clouds, "  - country: fi\n    region: FIN-02\n  link: https://verda.com",
                         "  - country: fx\n    region: FIN-02\n  link: https://verda.com")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value).startswith(
        f"{clouds}:{line}: offers[verda-h100].locations[0].country: unknown country 'fx' "
        "(not in regions.yaml)")


def test_upper_case_country_is_refused(catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    line = _replace_once(clouds, "  - country: fi\n    region: FIN-02\n  link: https://verda.com",
                         "  - country: FI\n    region: FIN-02\n  link: https://verda.com")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value).startswith(
        f"{clouds}:{line}: offers[verda-h100].locations[0].country: string should match pattern")


def test_bad_billing_value_names_file_line_field(catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    text = clouds.read_text(encoding="utf-8")
    start = text.index("- id: lambda\n")
    line = text[:start].count("\n") + text[start:].split("\n").index(
        "  billing_increment_s: 60") + 1
    clouds.write_text(text[:start] + text[start:].replace(
        "  billing_increment_s: 60\n", "  billing_increment_s: 0\n", 1), encoding="utf-8")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{clouds}:{line}: providers[lambda].billing_increment_s: "
        "input should be greater than or equal to 1"
    )


def test_minimum_below_one_increment_is_refused(catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    _replace_once(clouds, "  billing_increment_s: 60\n  billing_minimum_s: 300\n",
                  "  billing_increment_s: 60\n  billing_minimum_s: 30\n")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert "providers[azure]: value error, billing_minimum_s must be at least one " \
        "billing_increment_s" in str(exc.value)


def test_unknown_access_kind_names_file_line_field(catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    offer = "- id: aws-b300-p6-capacity-block\n"
    text = clouds.read_text(encoding="utf-8")
    start = text.index(offer)
    at = text.index("  access: self-serve\n", start)
    clouds.write_text(text[:at] + "  access: self-service\n" + text[at + 21:], encoding="utf-8")
    line = text.count("\n", 0, at) + 1
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value).startswith(
        f"{clouds}:{line}: offers[aws-b300-p6-capacity-block].access: input should be "
        "'self-serve', 'account' or 'contract'")


def test_plain_http_link_is_refused(catalog_copy: Path) -> None:
    clouds = catalog_copy / "clouds.yaml"
    text = clouds.read_text(encoding="utf-8")
    old = "  link: https://verda.com/pricing\n"
    line = text.splitlines().index(old.rstrip("\n")) + 1
    clouds.write_text(text.replace(old, "  link: http://verda.com/pricing\n", 1), encoding="utf-8")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value).startswith(
        f"{clouds}:{line}: offers[verda-h100].link: string should match pattern '^https://")


def test_country_in_unknown_group_names_regions_file_line(catalog_copy: Path) -> None:
    regions = catalog_copy / "regions.yaml"
    line = _replace_once(regions, "- code: jp\n  name: Japan\n  groups:\n  - asia\n",
                         "- code: jp\n  name: Japan\n  groups:\n  - apac\n") + 3
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{regions}:{line}: countries[jp].groups: unknown region group 'apac'"
    )


def test_offer_without_any_location_is_refused(catalog_copy: Path) -> None:
    """A catalog offer in a region where neither it nor its provider names a location."""
    clouds = catalog_copy / "clouds.yaml"
    text = clouds.read_text(encoding="utf-8")
    start = text.index("- id: coreweave-l40s\n")
    line = text[:start].count("\n") + 1
    block = text[start:].replace("  regions:\n  - us\n", "  regions:\n  - eu\n", 1)
    clouds.write_text(text[:start] + block, encoding="utf-8")
    with pytest.raises(CatalogError) as exc:
        load_catalog(catalog_copy)
    assert str(exc.value) == (
        f"{clouds}:{line}: offers[coreweave-l40s].locations: no location: list the offer's "
        "locations (provider coreweave has none in ['eu'])"
    )


# ------------------------------------------------------------------ price files


def test_a_quote_without_locations_takes_the_provider_s(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "sources:\n- id: our-quote\n  kind: price-list\n  title: Quote\n  publisher: us\n"
        "  date: '2026-11'\noffers:\n- id: our-h100\n  provider: nebius\n  gpu: h100-sxm\n"
        "  gpus_per_instance: 8\n  regions: [eu]\n  on_demand_usd_per_gpu_hour: 2.5\n"
        "  as_of: '2026-11-01'\n  sources: [our-quote]\n", encoding="utf-8")
    catalog = load_catalog(prices=prices)
    offer = next(o for o in catalog.offers if o.id == "our-h100")
    assert offer.locations == [] and offer.access is None and offer.link is None
    assert catalog.access_of(offer) == "self-serve"
    assert {loc.country for loc in catalog.locations_of(offer)} == {"fi", "fr"}


def test_skypilot_offers_take_a_catalog_location_by_region_code(tmp_path: Path) -> None:
    folder = tmp_path / "aws"
    folder.mkdir()
    csv = folder / "vms.csv"
    csv.write_text(
        "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GPUInfo,Region,"
        "AvailabilityZone,Price,SpotPrice\n"
        "p5.48xlarge,192.0,2048.0,H100,8.0,,eu-north-1,eu-north-1a,58.89,\n"
        "p5.48xlarge,192.0,2048.0,H100,8.0,,ap-southeast-5,ap-southeast-5a,70.0,\n",
        encoding="utf-8")
    catalog = load_catalog(prices=csv)
    by_id = {o.id: o for o in catalog.offers if o.provider == "aws"}
    eu = by_id["aws-p5.48xlarge-eu"]
    assert [(loc.country, loc.region) for loc in eu.locations] == [("se", "eu-north-1")]
    assert eu.access is None and catalog.access_of(eu) == "account"
    # a region code the catalog does not know leaves the provider's locations in that region
    asia = by_id["aws-p5.48xlarge-asia"]
    assert asia.locations == []
    assert {loc.country for loc in catalog.locations_of(asia)} == {"jp"}
