"""``gpu-advisor catalog list|show``: browse GPUs, cloud offers and models."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from engine.catalog.load import Catalog, cited_sources, load_catalog
from engine.catalog.models import Form, Gpu, ModelPreset, Offer
from engine.cli.options import (
    catalog_options,
    finite_float,
    format_option,
    gpu_choice,
    strict_option,
)
from engine.errors import InputError
from engine.files.jsonout import dumps
from engine.files.printable import json_printable
from engine.files.validation import did_you_mean
from engine.output.catalog_view import citation_lines, field_rows
from engine.output.table import print_table

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput


@click.group()
def catalog() -> None:
    """Browse the catalog: GPUs, cloud offers, models."""


@catalog.command("list")
@click.argument("kind", type=click.Choice(["gpus", "clouds", "models"]))
@click.option("--form", type=click.Choice(get_args(Form)),
              help="Only GPUs (or offers of GPUs) of this form factor.")
@click.option("--min-vram", type=finite_float(0, 10_000), metavar="GIB",
              help="Only GPUs (or offers of GPUs) with at least this much memory, in GiB.")
@click.option("--provider", metavar="ID", help="Only this provider's offers (clouds).")
@gpu_choice(required=False, help_text="Only offers of this GPU (clouds).")
@click.option("--region", metavar="R", help="Only offers sold in this region (eu, asia, …) or "
              "country (jp, de, …) (clouds).")
@click.option("--pricing", type=click.Choice(["on-demand", "spot", "reserved"]),
              help="Only offers sold this way (clouds).")
@click.option("--sort", "sort_by", type=click.Choice(["id", "vram", "price", "tflops", "params"]),
              default=None, help="Order of the rows (default: memory for GPUs, price for "
              "offers, size for models).")
@catalog_options
@format_option("text", "json")
def list_(kind: str, form: str | None, min_vram: float | None, provider: str | None,
          gpu_id: str | None, region: str | None, pricing: str | None,
          sort_by: str | None, catalog_dir: Path | None, prices: PriceInput | None,
          fmt: str) -> None:
    """List GPUs, cloud offers or models, filtered and sorted.

    \b
    Examples:
      gpu-advisor catalog list gpus --form datacenter --min-vram 80 --sort price
      gpu-advisor catalog list clouds --gpu b300
      gpu-advisor catalog list clouds --gpu h100-sxm --region jp --pricing spot
    """
    cat = load_catalog(catalog_dir, prices=prices)
    if provider is not None and provider not in cat.providers:
        raise InputError(f"no provider '{provider}'{did_you_mean(provider, cat.providers)}",
                         field="--provider")
    if gpu_id is not None and gpu_id not in cat.gpus:
        raise InputError(f"no GPU '{gpu_id}'{did_you_mean(gpu_id, cat.gpus)}", field="--gpu")
    if region is not None:
        known = {*cat.countries, *(g for c in cat.countries.values() for g in c.groups)}
        if region not in known:
            raise InputError(f"no region or country '{region}'{did_you_mean(region, known)}",
                             field="--region")
    items = _selected(cat, kind, form, min_vram, provider, sort_by)
    if kind == "clouds":
        if region is not None:
            # each as rented there: at its cheapest location's own prices, where it has some
            allowed = frozenset({region})
            items = [o.priced_at(where) for o in items
                     if (where := cat.sold_at(o, allowed)) is not None]
        items = [o for o in items if (gpu_id is None or o.gpu == gpu_id)
                 and (pricing is None or o.price(pricing) is not None)]
    if fmt == "json":
        click.echo(json_printable(dumps(items)), nl=False)
        return
    _TEXT[kind](cat, items)


def _cheapest(offer: Offer) -> float:
    """The offer's price for sorting: on demand, else its cheapest other price."""
    return offer.on_demand_usd_per_gpu_hour or min(
        p for p in (offer.price("spot"), offer.price("reserved")) if p is not None)


def _gpu_passes(gpu: Gpu, form: str | None, min_vram: float | None) -> bool:
    return (form is None or gpu.form == form) and (
        min_vram is None or gpu.vram_gib >= min_vram - 1e-9)


def _selected(cat: Catalog, kind: str, form: str | None, min_vram: float | None,
              provider: str | None, sort_by: str | None) -> list[Any]:
    """The rows of one listing: filtered, then sorted (ties by id)."""
    if kind == "gpus":
        gpus = [g for g in cat.gpus.values() if _gpu_passes(g, form, min_vram)]
        gpu_keys: dict[str, Any] = {
            "id": lambda g: (g.id,), "vram": lambda g: (g.vram_bytes, g.id),
            "price": lambda g: (g.purchase is None,
                                g.purchase.low_usd if g.purchase else 0, g.id),
            "tflops": lambda g: (-(g.dense_bf16_tflops or 0), g.id)}
        return sorted(gpus, key=gpu_keys.get(sort_by or "vram", gpu_keys["vram"]))
    if kind == "clouds":
        offers = [o for o in cat.offers
                  if (provider is None or o.provider == provider)
                  and _gpu_passes(cat.gpus[o.gpu], form, min_vram)]
        offer_keys: dict[str, Any] = {
            "id": lambda o: (o.id,),
            "vram": lambda o: (cat.gpus[o.gpu].vram_bytes, _cheapest(o), o.id),
            "price": lambda o: (_cheapest(o), o.id),
            "tflops": lambda o: (-(cat.gpus[o.gpu].dense_bf16_tflops or 0), o.id)}
        return sorted(offers, key=offer_keys.get(sort_by or "price", offer_keys["price"]))
    models = list(cat.models.values())
    if sort_by == "id":
        return sorted(models, key=lambda m: m.id)
    return sorted(models, key=lambda m: (m.params_b, m.id))


_FORM = {"consumer": "cons", "workstation": "work", "datacenter": "dc"}


def _gpus_text(cat: Catalog, gpus: list[Gpu]) -> None:
    rows = [
        (g.id, _FORM[g.form], _short(g.vram_gib), f"{g.bandwidth_gbps:,.0f}",
         _short(g.dense_bf16_tflops) if g.dense_bf16_tflops else "none",
         f"{g.tdp_w:,.0f}", "yes" if g.ecc else "no",
         _price_k(g.purchase.low_usd, g.purchase.high_usd) if g.purchase else "not sold")
        for g in gpus
    ]
    print_table(f"GPUs ({len(rows)}): memory GiB, bandwidth GB/s, dense bf16 TFLOPS, watts, "
                "purchase price (details: gpu-advisor catalog show ID)",
                ["id", "form", "GiB", "GB/s", "TFLOPS", "W", "ECC", "price"], rows,
                right=[2, 3, 4, 5, 7])


def _short(value: float) -> str:
    """``24``, ``15.9``, ``1,307``: a decimal only where it says something."""
    return f"{value:,.0f}" if value >= 100 or value == int(value) else f"{value:.1f}"


def _price_k(low: float, high: float) -> str:
    """``$1.6–1.8k``, ``$25–30k``."""
    def k(v: float) -> str:
        return f"{v / 1000:,.0f}" if v >= 10_000 else f"{v / 1000:,.1f}"
    return f"${k(low)}k" if low == high else f"${k(low)}–{k(high)}k"


def _countries(cat: Catalog, offer: Offer) -> str:
    """Where an offer is sold: ``jp``, ``us,de``, or ``us,de +5`` (5 more countries; every
    one with its provider region code in ``catalog show``)."""
    codes = list(dict.fromkeys(loc.country for loc in cat.locations_of(offer)))
    if len(codes) <= 2:
        return ",".join(codes)
    return f"{codes[0]},{codes[1]} +{len(codes) - 2}"


def _clouds_text(cat: Catalog, offers: list[Offer]) -> None:
    def usd(v: float | None) -> str:
        return "none" if v is None else f"{v:,.2f}"

    rows = [
        (o.id, f"{o.min_gpus}+" if o.min_gpus else "/".join(str(n) for n in o.shapes),
         usd(o.on_demand_usd_per_gpu_hour),
         usd(o.spot_usd_per_gpu_hour), usd(o.price("reserved")),
         _ACCESS[cat.access_of(o)], _countries(cat, o), o.as_of.strftime("%Y-%m"))
        for o in offers
    ]
    print_table(f"Cloud offers ({len(rows)}): $ per GPU-hour on demand, spot and reserved "
                "(cheapest term), priced as of the month shown (details: gpu-advisor catalog "
                "show ID)",
                ["id", "GPUs", "on-dem", "spot", "resv", "access", "sold in", "as of"], rows,
                right=[1, 2, 3, 4])
    for line in _legend(cat, offers):
        click.echo(line)


def _legend(cat: Catalog, offers: list[Offer]) -> list[str]:
    """What the columns' abbreviations mean, for the providers listed."""
    shown = sorted({o.provider for o in offers})
    names = "; ".join(f"{p} = {cat.providers[p].name}" for p in shown)
    lines = textwrap.wrap(f"providers: {names}", 80) if names else []
    lines += textwrap.wrap(
        "GPUs: instance sizes sold (GPUs per instance; N+: clusters of N GPUs and more). "
        "resv: the cheapest committed price (a term, or blocks bought for each run). "
        "access: self (self-serve: a card, "
        "minutes), account (a quota or account review, days), contract (sales, weeks). "
        "sold in: ISO country codes where the GPU is sold, +N more countries (each with the "
        "provider's region code in catalog show ID).", 80)
    return lines


_ACCESS = {"self-serve": "self", "account": "account", "contract": "contract"}


def _models_text(cat: Catalog, models: list[ModelPreset]) -> None:
    rows = [
        (m.id, f"{m.params_b:,.1f}", m.layers, f"{m.hidden:,}", m.heads, m.kv_heads,
         f"{m.vocab:,}")
        for m in models
    ]
    print_table(f"Models ({len(rows)}; parameters in billions)",
                ["id", "params", "layers", "hidden", "heads", "kv", "vocab"],
                rows, right=[1, 2, 3, 4, 5, 6])


_TEXT: dict[str, Callable[[Catalog, Any], None]] = {
    "gpus": _gpus_text, "clouds": _clouds_text, "models": _models_text}


@catalog.command("stale")
@click.option("--as-of", "as_of", type=click.DateTime(["%Y-%m-%d"]), default=None,
              help="The day to count ages from (default today).")
@strict_option("Exit 1 when anything is stale.")
@catalog_options
@format_option("text", "json")
def stale(as_of: Any, strict: bool, catalog_dir: Path | None, prices: PriceInput | None,
          fmt: str) -> None:
    """List the catalog's prices older than the policy's limit (max_price_age_days): cloud
    offers, hosted APIs, GPU and platform purchase prices, oldest first.

    \b
    Example:
      gpu-advisor catalog stale --as-of 2026-12-01
    """
    import datetime as dt

    from engine.catalog.load import stale_figures

    cat = load_catalog(catalog_dir, prices=prices)
    today = as_of.date() if as_of is not None else dt.date.today()
    old = stale_figures(cat, today)
    limit = cat.policy.max_price_age_days.value
    if fmt == "json":
        click.echo(json_printable(dumps({
            "as_of": today.isoformat(), "max_age_days": limit,
            "stale": [{"kind": d.kind, "id": d.id, "as_of": d.as_of.isoformat(),
                       "age_days": (today - d.as_of).days, "sources": list(d.sources)}
                      for d in old]})), nl=False)
    elif old:
        print_table(f"{len(old)} price(s) older than {limit:,.0f} days on {today.isoformat()} "
                    "(max_price_age_days in catalog/policy.yaml); re-check them, or give fresh "
                    "ones with --prices", ["kind", "id", "as of", "days", "sources"],
                    [(d.kind, d.id, d.as_of.isoformat(), f"{(today - d.as_of).days:,}",
                      ", ".join(d.sources)) for d in old], right=[3])
    else:
        click.echo(f"no price older than {limit:,.0f} days on {today.isoformat()}")
    if strict and old:
        sys.exit(1)


@catalog.command("show")
@click.argument("item_id", metavar="ID")
@catalog_options
@format_option("text", "json")
def show(item_id: str, catalog_dir: Path | None, prices: PriceInput | None, fmt: str) -> None:
    """Show one GPU, cloud offer, provider, platform, model or source with all its figures
    and sources; a GPU announced but not yet sold shows what is known of it.

    \b
    Example:
      gpu-advisor catalog show rtx-4090
    """
    cat = load_catalog(catalog_dir, prices=prices)
    index: dict[str, Any] = {
        **{s.id: s for s in cat.sources.values()},
        **{p.id: p for p in cat.providers.values()},
        **{o.id: o for o in cat.offers},
        **{p.id: p for p in cat.platforms},
        **cat.models,
        **cat.gpus,
        **{a.id: a for a in cat.announced},
    }
    if item_id not in index:
        raise InputError(f"no catalog entry '{item_id}'{did_you_mean(item_id, index)}",
                         field="ID")
    item = index[item_id]
    if fmt == "json":
        click.echo(json_printable(dumps(item)), nl=False)
        return
    data = item.model_dump(mode="json")
    print_table(f"{_KIND_NAMES.get(type(item).__name__, type(item).__name__.lower())} {item_id}",
                ["field", "value"], field_rows(data))
    for sid in cited_sources(data):
        src = cat.sources.get(sid)
        if src is not None:
            for line in citation_lines(sid, src.title, src.publisher, src.date, src.url):
                click.echo(line)


_KIND_NAMES = {"Gpu": "GPU", "Offer": "cloud offer", "Provider": "provider",
               "ModelPreset": "model", "Source": "source", "Platform": "platform",
               "AnnouncedGpu": "announced GPU (not sold yet)"}
