"""The calculators behind ``gpu-advisor estimate``: estimators wired to the catalog."""

from __future__ import annotations

from typing import Any

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
from engine.estimates.training import TrainingEstimate, TrainMethod, estimate_training


class GpuFit(BaseModel):
    """How many of one GPU a job needs (None: no count up to the limit holds it)."""

    model_config = ConfigDict(frozen=True)

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


def as_dict(model: BaseModel) -> dict[str, Any]:
    """JSON-ready dict of a report."""
    return model.model_dump(mode="json")
