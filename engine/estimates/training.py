"""Training compute: 6·N·D FLOPs, GPU-hours from the MFU range, wall-clock days and cost."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from engine.catalog.models import Gpu, MethodGroup, Network, Policy
from engine.estimates.figure import Figure, figure, tidy
from engine.estimates.shape import Shape
from engine.estimates.throughput import in_fp8, mfu, peak_tflops, scaling

TrainMethod = Literal["full", "pretrain", "lora", "qlora"]


class Span(BaseModel):
    """A low / expected / high triple."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    low: float
    expected: float
    high: float


class TrainingEstimate(BaseModel):
    """Compute, time and cost of one training run on a given GPU type and count."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    model: str
    params_b: float
    method: TrainMethod
    tokens_b: float
    tokens_from: Literal["answer", "chinchilla"]
    flops: float
    gpu: str
    gpus: int
    precision: Literal["bf16", "fp8"]
    """The precision the figures assume: FP8 only where asked and the GPU and method allow."""
    gpu_hours: Span
    days: Span
    price_usd_per_gpu_hour: Span | None
    cost_usd: Span | None
    trace: dict[str, Figure]


def default_tokens_b(shape: Shape, policy: Policy) -> float:
    """Compute-optimal training tokens (Chinchilla: ~20 tokens per parameter), in billions."""
    return shape.params_b * policy.chinchilla_tokens_per_param.value


def estimate_training(
    shape: Shape,
    gpu: Gpu,
    policy: Policy,
    *,
    method: TrainMethod = "pretrain",
    tokens_b: float | None = None,
    gpus: int = 1,
    nodes: int = 1,
    network: Network | None = None,
    checkpointing: bool = False,
    prices_usd_per_gpu_hour: Sequence[float] = (),
    precision: str = "bf16",
) -> TrainingEstimate:
    """GPU-hours as a range over the MFU range; cost over the given hourly prices (if any)."""
    tokens_from: Literal["answer", "chinchilla"] = "answer" if tokens_b else "chinchilla"
    tokens = tokens_b or default_tokens_b(shape, policy)
    k = policy.flops_per_param_token[method]
    flops = k.value * shape.compute_params_b * 1e9 * tokens * 1e9
    slowdown = 1 + (policy.checkpointing_time_overhead.value if checkpointing else 0.0)
    per_node = max(1, gpus // max(1, nodes))
    eff = scaling(policy, gpu, per_node, nodes, network)
    group: MethodGroup = method
    fp8 = in_fp8(gpu, group, precision)
    peak = peak_tflops(gpu, group, precision) * 1e12
    util = {level: mfu(gpu, group, policy, level, precision)
            for level in ("low", "expected", "high")}

    def hours(level: str) -> float:
        return flops / (peak * util[level] * eff) / 3600 * slowdown

    gpu_hours = Span(low=tidy(hours("high"), 1), expected=tidy(hours("expected"), 1),
                     high=tidy(hours("low"), 1))
    days = Span(low=tidy(gpu_hours.low / gpus / 24, 2),
                expected=tidy(gpu_hours.expected / gpus / 24, 2),
                high=tidy(gpu_hours.high / gpus / 24, 2))
    trace = {
        "flops": figure(flops, "FLOP", f"{k.value:g} × N × D", k.sources, N=shape.compute_params_b
                        * 1e9, D=tokens * 1e9),
        "gpu_hours": figure(
            gpu_hours.expected, "GPU-hours",
            "FLOPs ÷ (dense TFLOPS × 1e12 × MFU × scaling efficiency) ÷ 3600 × (1 + "
            "checkpointing overhead)",
            [*policy.mfu[method].sources, *gpu.sources,
             *(policy.fp8_mfu_factor.sources if fp8 else [])], peak_tflops=peak / 1e12,
            precision="fp8" if fp8 else "bf16",
            mfu_low=util["low"], mfu_expected=util["expected"], mfu_high=util["high"],
            scaling=eff, slowdown=slowdown,
        ),
    }
    price, cost = _cost(gpu_hours, prices_usd_per_gpu_hour, policy)
    if cost is not None:
        trace["cost_usd"] = figure(
            cost.expected, "USD", "GPU-hours × $/GPU-hour × (1 + hidden cloud overhead)",
            policy.hidden_cloud_overhead.sources,
            overhead_low=policy.hidden_cloud_overhead.low,
            overhead_high=policy.hidden_cloud_overhead.high,
        )
    return TrainingEstimate(
        model=shape.label, params_b=shape.params_b, method=method, tokens_b=tidy(tokens, 3),
        tokens_from=tokens_from, flops=float(f"{flops:.4g}"), gpu=gpu.id, gpus=gpus,
        precision="fp8" if fp8 else "bf16",
        gpu_hours=gpu_hours, days=days, price_usd_per_gpu_hour=price, cost_usd=cost, trace=trace,
    )


def _cost(
    gpu_hours: Span, prices: Sequence[float], policy: Policy
) -> tuple[Span | None, Span | None]:
    if not prices:
        return None, None
    over = policy.hidden_cloud_overhead
    price = Span(low=min(prices), expected=tidy(statistics.median(prices), 4), high=max(prices))
    cost = Span(
        low=tidy(gpu_hours.low * price.low * (1 + over.low), 0),
        expected=tidy(gpu_hours.expected * price.expected * (1 + over.expected), 0),
        high=tidy(gpu_hours.high * price.high * (1 + over.high), 0),
    )
    return price, cost
