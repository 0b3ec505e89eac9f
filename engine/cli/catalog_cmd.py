"""``gpu-advisor catalog list|show``: browse GPUs, cloud offers and models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from engine.catalog.load import Catalog, cited_sources, load_catalog
from engine.cli.options import catalog_options, format_option
from engine.errors import InputError
from engine.render.jsonout import dumps
from engine.render.table import print_table
from engine.validation import did_you_mean


@click.group()
def catalog() -> None:
    """Browse the catalog: GPUs, cloud offers, models."""


@catalog.command("list")
@click.argument("kind", type=click.Choice(["gpus", "clouds", "models"]))
@catalog_options
@format_option("text", "json")
def list_(kind: str, catalog_dir: Path | None, prices: Path | None, fmt: str) -> None:
    """List GPUs, cloud offers or models.

    \b
    Example:
      gpu-advisor catalog list gpus
    """
    cat = load_catalog(catalog_dir, prices=prices)
    listing: dict[str, list[Any]] = {
        "gpus": list(cat.gpus.values()),
        "clouds": list(cat.offers),
        "models": list(cat.models.values()),
    }
    items = listing[kind]
    if fmt == "json":
        click.echo(dumps(items), nl=False)
        return
    _TEXT[kind](cat)


_FORM = {"consumer": "cons", "workstation": "work", "datacenter": "dc"}


def _gpus_text(cat: Catalog) -> None:
    rows = [
        (g.id, _FORM[g.form], f"{g.vram_gb:g}", f"{g.bandwidth_gbps:,.0f}",
         f"{g.dense_bf16_tflops:g}" if g.dense_bf16_tflops else "none", f"{g.tdp_w:g}",
         "yes" if g.nvlink else "no",
         f"${g.purchase.low_usd / 1000:,.1f}–{g.purchase.high_usd / 1000:,.1f}k"
         if g.purchase else "—")
        for g in sorted(cat.gpus.values(), key=lambda g: (g.vram_gb, g.id))
    ]
    print_table("GPUs (bf16 = dense TFLOPS; price = purchase range)",
                ["id", "form", "GB", "GB/s", "bf16", "W", "NVLink", "price"], rows,
                right=[2, 3, 4, 5])


def _clouds_text(cat: Catalog) -> None:
    def usd(v: float | None) -> str:
        return "—" if v is None else f"{v:.2f}"

    rows = [
        (o.id, o.gpu, usd(o.on_demand_usd_per_gpu_hour), usd(o.spot_usd_per_gpu_hour),
         usd(o.price("reserved")), o.as_of.isoformat())
        for o in sorted(cat.offers, key=lambda o: (o.gpu, o.on_demand_usd_per_gpu_hour))
    ]
    print_table("Cloud offers, $ per GPU-hour (regions: gpu-advisor catalog show ID)",
                ["id", "gpu", "on-dem.", "spot", "resv.", "as of"], rows, right=[2, 3, 4])


def _models_text(cat: Catalog) -> None:
    rows = [
        (m.id, f"{m.params_b:g}", m.layers, m.hidden, m.heads, m.kv_heads, m.vocab)
        for m in sorted(cat.models.values(), key=lambda m: (m.params_b, m.id))
    ]
    print_table("Models", ["id", "params B", "layers", "hidden", "heads", "kv", "vocab"],
                rows, right=[1, 2, 3, 4, 5, 6])


_TEXT = {"gpus": _gpus_text, "clouds": _clouds_text, "models": _models_text}


@catalog.command("show")
@click.argument("item_id", metavar="ID")
@catalog_options
@format_option("text", "json")
def show(item_id: str, catalog_dir: Path | None, prices: Path | None, fmt: str) -> None:
    """Show one GPU, cloud offer, provider, model or source with all its figures and sources.

    \b
    Example:
      gpu-advisor catalog show rtx-4090
    """
    cat = load_catalog(catalog_dir, prices=prices)
    index: dict[str, Any] = {
        **{s.id: s for s in cat.sources.values()},
        **{p.id: p for p in cat.providers.values()},
        **{o.id: o for o in cat.offers},
        **cat.models,
        **cat.gpus,
    }
    if item_id not in index:
        raise InputError(f"no catalog entry '{item_id}'{did_you_mean(item_id, index)}",
                         field="ID")
    item = index[item_id]
    if fmt == "json":
        click.echo(dumps(item), nl=False)
        return
    data = item.model_dump(mode="json")
    rows = [(k, _cell(v)) for k, v in data.items() if v is not None]
    print_table(f"{type(item).__name__.lower()} {item_id}", ["field", "value"], rows)
    for sid in cited_sources(data):
        src = cat.sources.get(sid)
        if src is not None:
            click.echo(f"  [{sid}] {src.title} — {src.publisher}, {src.date}"
                       + (f" <{src.url}>" if src.url else ""))


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return str(value)
