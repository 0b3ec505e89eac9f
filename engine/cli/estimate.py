"""``gpu-advisor estimate memory|training``: the calculators on their own."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

import click

from engine.answers.hf_config import named_shape
from engine.catalog.load import Catalog, load_catalog
from engine.catalog.models import METHOD_NAMES
from engine.cli.options import (
    catalog_options,
    finite_float,
    format_option,
    gpu_option,
    gpus_option,
    model_options,
)
from engine.errors import InputError
from engine.estimates.memory import Method
from engine.estimates.reports import fits_table, memory_report, shape_from_flags, training_report
from engine.estimates.training import TrainMethod
from engine.files.jsonout import dumps
from engine.output.table import (
    fmt_count,
    fmt_gib,
    fmt_gib_range,
    fmt_usd,
    print_table,
    words,
)

if TYPE_CHECKING:
    from engine.catalog.prices import PriceInput


@click.group()
def estimate() -> None:
    """The calculators alone: memory and training compute/cost."""


@estimate.command("memory")
@model_options
@click.option("--method", required=True,
              type=click.Choice(get_args(Method)),
              help="Training method (or inference).")
@click.option("--seq-len", type=click.IntRange(1, 1_048_576), default=2048, show_default=True,
              help="Sequence length in tokens.")
@click.option("--micro-batch", type=click.IntRange(1, 4096), default=1, show_default=True,
              help="Sequences per GPU per step.")
@click.option("--gradient-checkpointing/--no-gradient-checkpointing", default=None,
              help="Force recomputation on/off (default: on only when it lowers the peak).")
@gpus_option("Shard over this many GPUs (ZeRO-3/FSDP).")
@catalog_options
@format_option("text", "json")
def memory(model_id: str | None, params_b: float | None, method: Any, seq_len: int,
           micro_batch: int, gradient_checkpointing: bool | None, gpus: int,
           catalog_dir: Path | None, prices: PriceInput | None, fmt: str) -> None:
    """Peak GPU memory of a training run (or inference), and how many GPUs of each kind.

    \b
    Example:
      gpu-advisor estimate memory --model llama-2-13b --method qlora --format json
    """
    catalog = load_catalog(catalog_dir, prices=prices)
    shape = shape_from_flags(catalog, model_id, params_b, named_shape(model_id, catalog.models))
    report = memory_report(catalog, shape, method, seq_len=seq_len, micro_batch=micro_batch,
                           checkpointing=gradient_checkpointing, gpus=gpus)
    if fmt == "json":
        click.echo(dumps(report), nl=False)
        return
    _memory_text(catalog, report)


_PHASES = {"forward_backward": "forward and backward pass", "optimizer_step": "optimizer step"}


def _memory_text(catalog: Catalog, report: Any) -> None:
    ckpt = "on" if report.gradient_checkpointing else "off"
    ckpt += " (auto)" if report.checkpointing_auto else ""
    title = (f"{report.model}, {report.method}, sequence {report.seq_len:,} tokens × "
             f"micro-batch {report.micro_batch:,}, checkpointing {ckpt}, "
             f"{report.gpus:,} GPU{'s' if report.gpus > 1 else ''}")
    rows = [(words(name), fmt_gib(gb), report.components[name].formula)
            for name, gb in report.breakdown.items()]
    rows.append(("peak per GPU", fmt_gib(report.total_gib),
                 f"at the {_PHASES.get(report.binding_phase, words(report.binding_phase))}; "
                 "range "
                 f"{fmt_gib_range(report.range_gib['low'], report.range_gib['high'])}"))
    print_table(title, ["component", "per GPU", "formula"], rows, right=[1])
    fit_rows = [(f.gpu, f"{f.vram_gib:,g} GiB",
                 "too small" if f.gpus_needed is None else f"{f.gpus_needed:,}")
                for f in fits_table(catalog, report)]
    print_table("GPUs needed, sharded (usable VRAM "
                f"{catalog.policy.usable_vram_fraction.value:.0%}; too small: the part that "
                "cannot be sharded does not fit one GPU)",
                ["gpu", "memory", "GPUs needed"], fit_rows, right=[1, 2])


@estimate.command("training")
@model_options
@click.option("--tokens-b", type=finite_float(0.000001, 1_000_000), default=None,
              metavar="N", help="Training tokens in billions (default: 20 × parameters).")
@gpu_option
@gpus_option("GPUs training in parallel.", most=1_000_000)
@click.option("--workload", type=click.Choice(["fine-tune", "pretrain"]), default="fine-tune",
              show_default=True, help="Adapt a pretrained model, or train one from scratch "
              "(as recommend's default: fine-tune).")
@click.option("--method", type=click.Choice(["auto", *get_args(TrainMethod)]), default="auto",
              show_default=True,
              help="What the run does; auto (as recommend does): a pretrain for --workload "
                   "pretrain, else full fine-tuning where it fits on the GPUs given, else LoRA, "
                   "else QLoRA.")
@click.option("--precision", type=click.Choice(["bf16", "fp8"]), default="bf16",
              show_default=True, help="fp8 on GPUs with FP8 tensor cores, for pretraining "
              "and full fine-tuning (else bf16, said in the title).")
@catalog_options
@format_option("text", "json")
def training(model_id: str | None, params_b: float | None, tokens_b: float | None, gpu_id: str,
             gpus: int, workload: str, method: str, precision: str, catalog_dir: Path | None,
             prices: PriceInput | None, fmt: str) -> None:
    """Training compute (6·N·D), GPU-hours over the MFU range, days and rental cost.

    A fine-tune (the default, as in recommend) needs --tokens-b, the tokens of one run;
    a pretrain defaults to 20 tokens per parameter (Chinchilla).

    \b
    Examples:
      gpu-advisor estimate training --model llama-3.1-8b --tokens-b 0.15 --gpu h100-sxm
      gpu-advisor estimate training --workload pretrain --model llama-2-7b \\
          --tokens-b 2000 --gpu a100-80gb --gpus 64
    """
    catalog = load_catalog(catalog_dir, prices=prices)
    largest = int(catalog.policy.max_gpus_considered.value)
    if gpus > largest:
        raise InputError(f"at most {largest:,} GPUs, the largest cluster `recommend` considers "
                         "(max_gpus_considered in catalog/policy.yaml)", field="--gpus")
    shape = shape_from_flags(catalog, model_id, params_b, named_shape(model_id, catalog.models))
    catalog.gpu(gpu_id)  # an unknown GPU is said first
    chosen, why = train_method(catalog, shape, gpu_id, gpus, workload, method, tokens_b)
    report = training_report(catalog, shape, gpu_id, gpus=gpus, tokens_b=tokens_b, method=chosen,
                             precision=precision)
    if fmt == "json":
        click.echo(dumps(report), nl=False)
        return
    frontier = catalog.policy.thresholds.get("frontier_cluster_gpus")
    _training_text(report, asked=precision,
                   contract=frontier is not None and gpus > frontier.value, method_note=why)


_TOKENS_FROM = {"answer": "as given", "chinchilla": "20 per parameter"}


def train_method(catalog: Catalog, shape: Any, gpu_id: str, gpus: int, workload: str,
                 method: str, tokens_b: float | None) -> tuple[TrainMethod, str | None]:
    """The method a run is estimated for, and (for ``auto``) why, as ``recommend`` picks
    it: full fine-tuning where it fits on these GPUs, else LoRA, else QLoRA; a pretrain
    for a pretraining workload. A fine-tune without its tokens is an :class:`InputError`."""
    if method == "pretrain" or (workload == "pretrain" and method == "auto"):
        return "pretrain", None
    if workload == "pretrain":
        raise InputError(f"a pretrain trains every weight from scratch; --method {method} is a "
                         "way to fine-tune (use --method pretrain or auto, or --workload "
                         "fine-tune)", field="--method")
    if tokens_b is None:
        raise InputError("a fine-tune needs its amount of work: the tokens of one run in "
                         "billions (examples × tokens each × epochs: 50,000 × 1,000 × 3 = 0.15); "
                         "20 per parameter is a pretraining corpus (--workload pretrain)",
                         field="--tokens-b")
    if method != "auto":
        return method, None  # type: ignore[return-value]
    from engine.estimates.memory import MemoryRequest, memory_model

    gpu, model = catalog.gpu(gpu_id), memory_model(catalog)
    needed: dict[str, int | None] = {}
    for candidate in ("full", "lora", "qlora"):
        needed[candidate] = model.gpus_needed(MemoryRequest(shape=shape, method=candidate), gpu)
        count = needed[candidate]
        if count is not None and count <= gpus:
            break
    else:
        return "qlora", (f"method auto: even QLoRA does not fit {gpus:,} × {gpu_id} "
                         "(`estimate memory` says how many it needs); estimated as QLoRA")
    if candidate == "full":
        return "full", f"method auto: full fine-tuning fits {gpus:,} × {gpu_id}"
    full = needed["full"]
    label = METHOD_NAMES[candidate]
    return candidate, (f"method auto: {label}, as full fine-tuning needs "
                       f"{'more memory than any count' if full is None else f'{full:,}'} "
                       f"× {gpu_id} (give --method to choose)")


def _training_text(report: Any, asked: str = "bf16", contract: bool = False,
                   method_note: str | None = None) -> None:
    span = report.gpu_hours
    rows: list[tuple[str, str, str, str]] = [
        ("GPU-hours", fmt_count(span.low), fmt_count(span.expected), fmt_count(span.high)),
        ("days", f"{report.days.low:,.1f}", f"{report.days.expected:,.1f}",
         f"{report.days.high:,.1f}"),
    ]
    if report.cost_usd is not None and report.price_usd_per_gpu_hour is not None:
        p, c = report.price_usd_per_gpu_hour, report.cost_usd
        rows.append(("$ per GPU-hour", f"${p.low:,.2f}", f"${p.expected:,.2f}",
                     f"${p.high:,.2f}"))
        rows.append(("rental cost", fmt_usd(c.low), fmt_usd(c.expected), fmt_usd(c.high)))
    # BF16 is the default and goes unsaid, unless FP8 was asked and cannot be had
    said = {"fp8": " in FP8"}.get(report.precision, " in BF16" if asked == "fp8" else "")
    title = (f"{report.model}, {report.method}{said}, {report.tokens_b:,g}B tokens "
             f"({_TOKENS_FROM.get(report.tokens_from, report.tokens_from)}), "
             f"{report.flops:.3g} FLOPs on {report.gpus:,} × {report.gpu}")
    caption = "GPU-hours = " + report.trace["gpu_hours"].formula
    if method_note:
        caption += f". {method_note[:1].upper()}{method_note[1:]}"
    if report.cost_usd is None:
        caption += f". No cloud offer rents {report.gpu}: no rental cost."
    if contract:
        caption += (f". {report.gpus:,} GPUs is a frontier-scale cluster: sold by contract, "
                    "months ahead, at a negotiated price (the listed one is a guide).")
    print_table(title, ["", "low", "expected", "high"], rows, right=[1, 2, 3], caption=caption)


@estimate.command("cost")
@gpu_option
@gpus_option("How many of them.")
@click.option("--hours-per-year", type=finite_float(0, 10_000_000), required=True,
              metavar="H", help="Busy hours a year.")
@click.option("--electricity", "electricity_usd_per_kwh", type=finite_float(0, 5),
              default=None, metavar="USD", help="Electricity price per kWh (default: policy).")
@click.option("--offer", "offer_id", default=None, metavar="ID",
              help="Cloud offer to compare with (default: the cheapest for this GPU).")
@catalog_options
@format_option("text", "json")
def cost(gpu_id: str, gpus: int, hours_per_year: float, electricity_usd_per_kwh: float | None,
         offer_id: str | None, catalog_dir: Path | None, prices: PriceInput | None,
         fmt: str) -> None:
    """Owning vs renting a GPU configuration: TCO, yearly rent and the break-even hours.

    \b
    Example:
      gpu-advisor estimate cost --gpu rtx-4090 --hours-per-year 2000 \\
          --offer runpod-a100-80gb
    """
    from engine.estimates.reports import cost_report

    catalog = load_catalog(catalog_dir, prices=prices)
    report = cost_report(catalog, gpu_id, gpus=gpus, hours_per_year=hours_per_year,
                         electricity_usd_per_kwh=electricity_usd_per_kwh, offer_id=offer_id)
    if fmt == "json":
        click.echo(dumps(report), nl=False)
        return

    _cost_text(catalog, report)


def _cost_text(catalog: Catalog, report: Any) -> None:
    owned = report.purchase_usd is not None
    rented = report.rent_usd_year is not None
    rows = [("purchase", fmt_usd(report.purchase_usd) if owned else "not for sale"),
            *_purchase_parts(catalog, report.trace.get("purchase")),
            ("owning: write-off less resale, upkeep", _per_year(report.own_fixed_usd_year)),
            ("owning: power and cooling", _per_year(report.own_running_usd_year)),
            ("owning, all in", _per_year(report.own_usd_year)),
            (f"renting {report.offer}, same work" if rented else "renting",
             _per_year(report.rent_usd_year, missing="no cloud offer")),
            ("  rented", "no cloud offer" if report.rent_gpu_hours is None else
             f"{report.rent_gpu_hours:,.0f} GPU-hours at ${report.rent_usd_per_gpu_hour:,.2f}"),
            ("break-even", _break_even(report, owned, rented)),
            ("payback", "never" if report.payback_years is None or not (owned and rented)
             else f"{report.payback_years:,.1f} years")]
    print_table(f"{report.gpus:,}× {report.gpu}, {report.hours_per_year:,.0f} busy hours a "
                "year: owning vs renting", ["", "for your hours"], rows, right=[1])


def _purchase_parts(catalog: Catalog, buy: Any) -> list[tuple[str, str]]:
    """The purchase as cards + platform (+ InfiniBand between nodes)."""
    if buy is None:
        return []
    i = buy.inputs
    boxes, platform_usd = int(i["boxes"] or 0), float(i["platform_usd"] or 0)
    names = {p.id: p.name for p in catalog.platforms}
    name = names.get(str(i["platform"]), f"platform {i['platform']}")
    parts = [(f"  {i['cards']:,}× card at {fmt_usd(float(i['card_usd'] or 0))}",
              fmt_usd(float(i["cards_usd"] or 0))),
             (f"  {boxes:,}× {name}", fmt_usd(platform_usd * boxes))]
    if i["network_usd"]:
        parts.append(("  InfiniBand between nodes", fmt_usd(float(i["network_usd"]))))
    return parts


def _break_even(report: Any, owned: bool, rented: bool) -> str:
    if not owned:
        return "not for sale: nothing to compare"
    if not rented:
        return "no cloud offer to compare"
    if report.break_even_hours_per_year is None:
        return "owning never costs less"
    return f"{report.break_even_hours_per_year:,.0f} busy hours a year"


def _per_year(value: float | None, missing: str = "not for sale") -> str:
    return missing if value is None else f"{fmt_usd(value)} a year"
