"""The calculators behind ``gpu-advisor estimate``: estimators wired to the catalog."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from engine.answers.model_shape import ModelShape
from engine.catalog.load import Catalog
from engine.errors import InputError
from engine.estimates.figure import Figure
from engine.estimates.memory import (
    MemoryEstimate,
    MemoryRequest,
    Method,
    estimate_memory,
    gpus_needed,
)
from engine.estimates.shape import Shape, resolve_shape
from engine.estimates.training import TrainingEstimate, TrainMethod, estimate_training


class GpuFit(BaseModel):
    """How many of one GPU a job needs (None: no count up to the limit holds it)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    gpu: str
    name: str
    vram_gib: float
    gpus_needed: int | None


class MemoryReport(MemoryEstimate):
    """A memory estimate plus, per catalog GPU, how many are needed."""

    fits: dict[str, int | None]


def shape_from_flags(catalog: Catalog, model_id: str | None, params_b: float | None,
                     model_shape: ModelShape | None = None) -> Shape:
    """Exactly one of ``--model`` / ``--params-b`` → a shape (``model_shape``: the shape of
    the config ``--model`` names, read where the flags are)."""
    if (model_id is None) == (params_b is None):
        raise InputError("give exactly one of --model or --params-b", field="--model")
    if model_id is not None:
        try:
            return resolve_shape(catalog, model=model_id, params_b=None,
                                 model_shape=model_shape)
        except InputError as exc:
            raise InputError(str(exc) if exc.path else exc.message, field="--model") from None
    return resolve_shape(catalog, model=None, params_b=params_b)


def memory_report(catalog: Catalog, shape: Shape, method: Method, *, seq_len: int = 2048,
                  micro_batch: int = 1, checkpointing: bool | None = None,
                  gpus: int = 1) -> MemoryReport:
    """Peak memory per GPU and the GPU count each catalog GPU needs."""
    req = MemoryRequest(shape=shape, method=method, seq_len=seq_len, micro_batch=micro_batch,
                        checkpointing=checkpointing)
    estimate = estimate_memory(req, catalog.policy, gpus)
    fits = {gpu.id: gpus_needed(req, gpu, catalog.policy) for gpu in catalog.gpus.values()}
    return MemoryReport(**estimate.model_dump(), fits=fits)


def on_demand_prices(catalog: Catalog, gpu_id: str) -> list[float]:
    """Every on-demand $/GPU-hour the catalog lists for this GPU."""
    return sorted(o.on_demand_usd_per_gpu_hour for o in catalog.offers
                  if o.gpu == gpu_id and o.on_demand_usd_per_gpu_hour is not None)


def training_report(catalog: Catalog, shape: Shape, gpu_id: str, *, gpus: int = 1,
                    tokens_b: float | None = None, method: TrainMethod = "pretrain",
                    precision: str = "bf16") -> TrainingEstimate:
    """Compute, time and rental cost of one training run on ``gpus`` × ``gpu_id``."""
    gpu = catalog.gpu(gpu_id)
    return estimate_training(shape, gpu, catalog.policy, method=method, tokens_b=tokens_b,
                             gpus=gpus, prices_usd_per_gpu_hour=on_demand_prices(catalog, gpu.id),
                             precision=precision)


def fits_table(catalog: Catalog, report: MemoryReport) -> list[GpuFit]:
    """Per GPU, sorted by VRAM: how many are needed."""
    rows = [
        GpuFit(gpu=g.id, name=g.name, vram_gib=round(g.vram_gib, 2), gpus_needed=report.fits[g.id])
        for g in catalog.gpus.values()
    ]
    return sorted(rows, key=lambda r: (r.vram_gib, r.gpu))


class CostReport(BaseModel):
    """Owning vs renting one configuration for the same work."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    gpu: str
    gpus: int
    hours_per_year: float
    platform: str | None
    offer: str | None
    purchase_usd: float | None
    own_fixed_usd_year: float | None
    own_running_usd_year: float | None
    own_usd_year: float | None
    rent_gpu_hours: float | None
    rent_usd_per_gpu_hour: float | None
    rent_usd_year: float | None
    break_even_hours_per_year: float | None
    payback_years: float | None
    trace: dict[str, Figure]


def cost_report(catalog: Catalog, gpu_id: str, *, gpus: int = 1, hours_per_year: float,
                electricity_usd_per_kwh: float | None = None,
                offer_id: str | None = None) -> CostReport:
    """Owning ``gpus`` × ``gpu_id`` busy ``hours_per_year`` hours against renting the
    cheapest (or given) offer for the same work (its GPUs' throughput taken into account)."""
    from engine.estimates.cost import (
        CostLine,
        all_in_usd_per_gpu_hour,
        break_even,
        owning,
        payback_years,
        platform_for,
        renting_cost,
    )
    from engine.estimates.throughput import effective_tflops
    from engine.files.validation import did_you_mean

    gpu = catalog.gpu(gpu_id)
    policy = catalog.policy
    kwh = policy.electricity_usd_per_kwh.value if electricity_usd_per_kwh is None else (
        electricity_usd_per_kwh)
    offers = [o for o in catalog.offers if o.gpu == gpu.id and o.market is None
              and o.on_demand_usd_per_gpu_hour is not None]
    if offer_id is not None:
        offers = [o for o in catalog.offers if o.id == offer_id]
        if not offers:
            ids = [o.id for o in catalog.offers]
            raise InputError(f"unknown offer '{offer_id}'{did_you_mean(offer_id, ids)}",
                             field="--offer")
    offer = min(offers, key=lambda o: (o.on_demand_usd_per_gpu_hour or 0.0, o.id)) \
        if offers else None
    trace: dict[str, Figure] = {}
    home = platform_for(gpu, gpus, catalog.platforms) if gpu.purchase is not None else None
    own = owning(gpu, gpus, home, kwh, hours_per_year, policy) if home is not None else None
    if own is not None:
        trace.update(purchase=own.purchase, own_fixed=own.fixed, running=own.running,
                     own=own.cost)
    rent = rate = rent_hours = be = payback = None
    if offer is not None:
        rented = catalog.gpus[offer.gpu]
        ratio = (effective_tflops(gpu, 1, 1, None, "full", False, policy).value
                 / effective_tflops(rented, 1, 1, None, "full", False, policy).value)
        rent_hours = hours_per_year * gpus * ratio
        if offer.on_demand_usd_per_gpu_hour is None:
            raise InputError(f"offer '{offer.id}' is not sold on demand (spot or committed "
                             "terms only): estimate cost compares on-demand renting",
                             field="--offer")
        rate = all_in_usd_per_gpu_hour(offer.on_demand_usd_per_gpu_hour, offer.shapes[0],
                                       offer.vm_usd_per_instance_hour or 0.0, 1)
        rent_fig = renting_cost(rate, rent_hours, "on-demand", policy, sources=offer.sources,
                                usd_per_gpu_hour=rate, gpu_hours=rent_hours)
        trace["rent"] = rent_fig
        rent = rent_fig.value
        if own is not None and hours_per_year > 0:
            line = break_even(own.line, CostLine(0.0, rent / hours_per_year),
                              unit="busy hours/year", sources=rent_fig.sources,
                              own_label=f"{gpus:,}× {gpu.label}", rent_label=offer.id)
            if line is not None:
                trace["break_even"] = line
                be = round(line.value)
        if own is not None:
            payback = payback_years(own.purchase.value, own.running_usd_year, rent)
    return CostReport(gpu=gpu.id, gpus=gpus, hours_per_year=hours_per_year,
                      platform=home[0].id if home else None, offer=offer.id if offer else None,
                      purchase_usd=None if own is None else own.purchase.value,
                      own_fixed_usd_year=None if own is None else own.fixed.value,
                      own_running_usd_year=None if own is None else own.running_usd_year,
                      own_usd_year=None if own is None else own.cost.value,
                      rent_gpu_hours=rent_hours, rent_usd_per_gpu_hour=rate,
                      rent_usd_year=rent, break_even_hours_per_year=be,
                      payback_years=payback, trace=trace)
