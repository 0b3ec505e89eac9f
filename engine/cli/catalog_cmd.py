"""``gpu-advisor catalog list|show``: browse GPUs, cloud offers and models."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from engine.catalog.load import Catalog, cited_sources, load_catalog
from engine.catalog.models import Form, Gpu, ModelPreset, Offer
from engine.cli.options import catalog_options, finite_float, format_option
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
@click.option("--sort", "sort_by", type=click.Choice(["id", "vram", "price", "tflops", "params"]),
              default=None, help="Order of the rows (default: memory for GPUs, price for "
              "offers, size for models).")
@catalog_options
@format_option("text", "json")
def list_(kind: str, form: str | None, min_vram: float | None, provider: str | None,
          sort_by: str | None, catalog_dir: Path | None, prices: PriceInput | None,
          fmt: str) -> None:
    """List GPUs, cloud offers or models, filtered and sorted.

    \b
    Examples:
      gpu-advisor catalog list gpus --form datacenter --min-vram 80 --sort price
      gpu-advisor catalog list clouds --provider runpod
    """
    cat = load_catalog(catalog_dir, prices=prices)
    if provider is not None and provider not in cat.providers:
        raise InputError(f"no provider '{provider}'{did_you_mean(provider, cat.providers)}",
                         field="--provider")
    items = _selected(cat, kind, form, min_vram, provider, sort_by)
    if fmt == "json":
        click.echo(json_printable(dumps(items)), nl=False)
        return
    _TEXT[kind](cat, items)


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
            "vram": lambda o: (cat.gpus[o.gpu].vram_bytes, o.on_demand_usd_per_gpu_hour, o.id),
            "price": lambda o: (o.on_demand_usd_per_gpu_hour, o.id),
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


def _regions(regions: list[str]) -> str:
    """``us,eu`` or ``us,eu,+4``: the full list is in ``catalog show``."""
    if len(regions) <= 2:
        return ",".join(regions)
    return f"{regions[0]},{regions[1]},+{len(regions) - 2}"


def _clouds_text(cat: Catalog, offers: list[Offer]) -> None:
    def usd(v: float | None) -> str:
        return "none" if v is None else f"{v:,.2f}"

    rows = [
        (o.id, _short(cat.gpus[o.gpu].vram_gib), "/".join(str(n) for n in o.shapes),
         usd(o.on_demand_usd_per_gpu_hour), usd(o.spot_usd_per_gpu_hour),
         usd(o.price("reserved")), _regions(o.regions), o.as_of.strftime("%Y-%m"))
        for o in offers
    ]
    print_table(f"Cloud offers ({len(rows)}): GiB per GPU, GPUs per instance, $ per GPU-hour "
                "on demand, spot, reserved (details: gpu-advisor catalog show ID)",
                ["id", "GiB", "GPUs", "on-dem", "spot", "resv", "regions", "as of"], rows,
                right=[1, 2, 3, 4, 5, 7])


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


@catalog.command("show")
@click.argument("item_id", metavar="ID")
@catalog_options
@format_option("text", "json")
def show(item_id: str, catalog_dir: Path | None, prices: PriceInput | None, fmt: str) -> None:
    """Show one GPU, cloud offer, provider, platform, model or source with all its figures
    and sources.

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
               "ModelPreset": "model", "Source": "source", "Platform": "platform"}
