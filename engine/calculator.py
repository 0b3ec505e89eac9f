"""The calculators behind ``gpu-advisor estimate``: estimators wired to the catalog."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from engine.catalog.load import Catalog
from engine.errors import InputError
from engine.estimates.memory import (
    MemoryEstimate,
    MemoryRequest,
    Method,
    estimate_memory,
    gpus_needed,
)
from engine.estimates.shape import Shape, resolve_shape
from engine.estimates.trace import Figure
from engine.estimates.training import TrainingEstimate, TrainMethod, estimate_training


class GpuFit(BaseModel):
    """How many of one GPU a job needs (None: no count up to the limit holds it)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    gpu: str
    name: str
    vram_gb: float
    gpus_needed: int | None


class MemoryReport(MemoryEstimate):
    """A memory estimate plus, per catalog GPU, how many are needed."""

    fits: dict[str, int | None]


def shape_from_flags(catalog: Catalog, model_id: str | None, params_b: float | None) -> Shape:
    """Exactly one of ``--model`` / ``--params-b`` → a shape."""
    if (model_id is None) == (params_b is None):
        raise InputError("give exactly one of --model or --params-b", field="--model")
    if model_id is not None:
        try:
            return resolve_shape(catalog, model=model_id, params_b=None)
        except InputError as exc:
            raise InputError(exc.message, field="--model") from None
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
    return sorted(o.on_demand_usd_per_gpu_hour for o in catalog.offers if o.gpu == gpu_id)


def training_report(catalog: Catalog, shape: Shape, gpu_id: str, *, gpus: int = 1,
                    tokens_b: float | None = None,
                    method: TrainMethod = "pretrain") -> TrainingEstimate:
    """Compute, time and rental cost of one training run on ``gpus`` × ``gpu_id``."""
    gpu = catalog.gpu(gpu_id)
    return estimate_training(shape, gpu, catalog.policy, method=method, tokens_b=tokens_b,
                             gpus=gpus, prices_usd_per_gpu_hour=on_demand_prices(catalog, gpu.id))


def fits_table(catalog: Catalog, report: MemoryReport) -> list[GpuFit]:
    """Per GPU, sorted by VRAM: how many are needed."""
    rows = [
        GpuFit(gpu=g.id, name=g.name, vram_gb=g.vram_gb, gpus_needed=report.fits[g.id])
        for g in catalog.gpus.values()
    ]
    return sorted(rows, key=lambda r: (r.vram_gb, r.gpu))


class CostReport(BaseModel):
    """Owning vs renting one configuration, like for like."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    gpu: str
    gpus: int
    hours_per_year: float
    offer: str | None
    purchase_usd: float | None
    local_tco_usd: float | None
    local_per_year_usd: float | None
    cloud_usd_per_gpu_hour: float | None
    cloud_per_year_usd: float | None
    break_even_hours_per_year: float | None
    payback_hours: float | None
    trace: dict[str, Figure]


def cost_report(catalog: Catalog, gpu_id: str, *, gpus: int = 1, hours_per_year: float,
                electricity_usd_per_kwh: float | None = None,
                offer_id: str | None = None) -> CostReport:
    """Owning ``gpus`` × ``gpu_id`` vs renting the cheapest (or given) offer of the same GPU."""
    from engine.estimates.cost import break_even_hours, cloud_cost, local_tco, purchase_cost
    from engine.validation import did_you_mean

    gpu = catalog.gpu(gpu_id)
    policy = catalog.policy
    kwh = policy.electricity_usd_per_kwh.value if electricity_usd_per_kwh is None else (
        electricity_usd_per_kwh)
    offers = [o for o in catalog.offers if o.gpu == gpu.id]
    if offer_id is not None:
        offers = [o for o in catalog.offers if o.id == offer_id]
        if not offers:
            ids = [o.id for o in catalog.offers]
            raise InputError(f"unknown offer '{offer_id}'{did_you_mean(offer_id, ids)}",
                             field="--offer")
    offer = min(offers, key=lambda o: (o.on_demand_usd_per_gpu_hour, o.id)) if offers else None
    trace: dict[str, Figure] = {}
    buy = tco = per_year = None
    if gpu.purchase is not None:
        buy_fig = purchase_cost(gpu, gpus, policy)
        tco_fig = local_tco(gpu, gpus, hours_per_year, kwh, policy)
        trace.update(purchase=buy_fig, local_tco=tco_fig)
        buy, tco = buy_fig.value, tco_fig.value
        per_year = tco / policy.amortisation_years.value
    rent = rent_year = be_year = payback = None
    if offer is not None:
        rent = offer.on_demand_usd_per_gpu_hour
        year = cloud_cost(rent, gpus, hours_per_year, policy)
        trace["cloud_cost"] = year
        rent_year = year.value
        if gpu.purchase is not None:
            cloud_gpu = catalog.gpus[offer.gpu]
            be = break_even_hours(gpu, gpus, cloud_gpu, rent, kwh, policy)
            if be is not None:
                trace["payback_hours"] = be
                payback = round(be.value)
                be_year = round(be.value / policy.amortisation_years.value)
    return CostReport(gpu=gpu.id, gpus=gpus, hours_per_year=hours_per_year,
                      offer=offer.id if offer else None, purchase_usd=buy, local_tco_usd=tco,
                      local_per_year_usd=per_year, cloud_usd_per_gpu_hour=rent,
                      cloud_per_year_usd=rent_year, break_even_hours_per_year=be_year,
                      payback_hours=payback, trace=trace)
