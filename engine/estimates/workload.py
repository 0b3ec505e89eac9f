"""The year's training work, fixed by the answers and never by a configuration.

A team states it in tokens (tokens per run × runs a year) or in time (GPU-hours a year on one
named GPU). Either way it becomes model FLOPs a year: tokens × FLOPs per token for the method
(6·N for full training, 4·N for LoRA/QLoRA, N the active parameters), or hours × the named
GPU's useful throughput. Every candidate configuration is then priced for that same work.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from engine.catalog.models import Gpu, MethodGroup, Policy
from engine.estimates.figure import Figure, figure, tidy
from engine.estimates.shape import Shape


class Workload(BaseModel):
    """The work a team does in a year, with how it was derived."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    mode: Literal["tokens", "hours"]
    method: MethodGroup
    tokens_per_run_b: float | None
    tokens_from: Literal["answer", "chinchilla"] | None
    runs_per_year: float | None
    hours_per_year: float | None
    hours_assumed: bool
    """The hours are the policy's default: the team gave no amount of work."""
    hours_gpu: str
    hours_gpu_name: str
    flops_per_token: float
    flops_per_run: float | None
    flops_per_year: float
    reference_gpu_hours: float
    """The year's work in GPU-hours of one ``hours_gpu`` at its expected MFU: the unit the
    break-even and the team's hours are compared in."""
    trace: dict[str, Figure]

    @property
    def per_hour_flops(self) -> float:
        """FLOPs one ``hours_gpu`` does in a busy hour (the unit of ``reference_gpu_hours``)."""
        return self.flops_per_year / self.reference_gpu_hours if self.reference_gpu_hours else 0.0


def flops_per_token(shape: Shape, method: MethodGroup, policy: Policy) -> Figure:
    """Model FLOPs per training token: k × active parameters."""
    k = policy.flops_per_param_token[method]
    return figure(k.value * shape.compute_params_b * 1e9, "FLOP/token",
                  f"{k.value:g} × active params", k.sources,
                  k=k.value, active_params=shape.compute_params_b * 1e9)


def workload(*, shape: Shape, method: MethodGroup, policy: Policy, hours_gpu: Gpu,
             hour: Figure, tokens_per_run_b: float | None, runs_per_year: float | None,
             hours_per_year: float | None) -> Workload:
    """The year's work from the answers: tokens × runs, or hours on ``hours_gpu``.

    ``hour`` is the useful throughput of one ``hours_gpu`` as the team would run this job on
    it (TFLOPS per GPU: its MFU, scaling and checkpointing), so a configuration like theirs is
    busy exactly the hours they gave. Pretraining with neither takes the compute-optimal token
    count (Chinchilla, 20 tokens per parameter) for one run; fine-tuning with neither takes
    the policy's default hours. Either default is flagged so the output can say it was assumed.
    """
    per_token = flops_per_token(shape, method, policy)
    unit = hour.value * 1e12 * 3600
    tokens_from: Literal["answer", "chinchilla"] | None = "answer"
    if tokens_per_run_b is None and hours_per_year is None and method == "pretrain":
        tokens_per_run_b = shape.params_b * policy.chinchilla_tokens_per_param.value
        tokens_from = "chinchilla"
    trace = {"flops_per_token": per_token}
    if tokens_per_run_b is not None:
        runs = runs_per_year if runs_per_year is not None else 1.0
        per_run = per_token.value * tokens_per_run_b * 1e9
        per_year = per_run * runs
        trace["flops_per_year"] = figure(
            per_year, "FLOP/year", "FLOPs per token × tokens per run × runs a year",
            [*per_token.sources, *(policy.chinchilla_tokens_per_param.sources
                                   if tokens_from == "chinchilla" else [])],
            flops_per_token=per_token.value, tokens_per_run=tokens_per_run_b * 1e9,
            runs_per_year=runs)
        return Workload(
            mode="tokens", method=method, tokens_per_run_b=tidy(tokens_per_run_b, 4),
            tokens_from=tokens_from, runs_per_year=runs, hours_per_year=None,
            hours_assumed=False, hours_gpu=hours_gpu.id, hours_gpu_name=hours_gpu.name,
            flops_per_token=per_token.value, flops_per_run=per_run, flops_per_year=per_year,
            reference_gpu_hours=per_year / unit, trace=trace)
    assumed = hours_per_year is None
    hours = policy.default_hours_per_year.value if hours_per_year is None else hours_per_year
    trace["flops_per_year"] = figure(
        hours * unit, "FLOP/year",
        "GPU-hours a year × useful TFLOPS per GPU × 1e12 × 3600 (the named GPU, as the job "
        "would run on it)",
        [*hour.sources, *(policy.default_hours_per_year.sources if assumed else [])],
        gpu_hours_per_year=hours, useful_tflops_per_gpu=hour.value)
    return Workload(
        mode="hours", method=method, tokens_per_run_b=None, tokens_from=None,
        runs_per_year=None, hours_per_year=hours, hours_assumed=assumed,
        hours_gpu=hours_gpu.id, hours_gpu_name=hours_gpu.name,
        flops_per_token=per_token.value, flops_per_run=None, flops_per_year=hours * unit,
        reference_gpu_hours=hours, trace=trace)
