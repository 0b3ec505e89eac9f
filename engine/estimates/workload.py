"""The year's training work, fixed by the answers and never by a configuration.

A team states it in tokens (tokens per run × runs a year) or in time (GPU-hours a year on one
named GPU, with the length of a run or the runs a year). Either way it becomes model FLOPs a
year: tokens × FLOPs per token for the method (6·N for full training, 4·N for LoRA/QLoRA, N
the active parameters), or hours × the named GPU's useful throughput, in runs. Every candidate
configuration is then priced for that same work, run by run.
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
    runs_per_year: float
    runs_assumed: bool
    """The runs are a default: the team gave neither runs a year nor the length of a run."""
    hours_per_year: float | None
    hours_assumed: bool
    """The hours are the policy's default: the team gave no amount of work."""
    hours_gpu: str
    hours_gpu_name: str
    flops_per_token: float
    flops_per_run: float
    flops_per_year: float
    reference_gpu_hours: float
    """The year's work in GPU-hours of one ``hours_gpu`` at its expected MFU: the unit the
    break-even and the team's hours are compared in."""
    trace: dict[str, Figure]

    @property
    def per_hour_flops(self) -> float:
        """FLOPs one ``hours_gpu`` does in a busy hour (the unit of ``reference_gpu_hours``)."""
        return self.flops_per_year / self.reference_gpu_hours if self.reference_gpu_hours else 0.0

    @property
    def units(self) -> float:
        """The year's work in the team's own unit: runs a year when it gave tokens, GPU-hours
        on its GPU when it gave time (what the break-even and what-if speak in)."""
        return self.runs_per_year if self.mode == "tokens" else float(self.hours_per_year or 0)

    @property
    def unit(self) -> str:
        """The name of :attr:`units`."""
        if self.mode == "tokens":
            return f"runs a year of {self.tokens_per_run_b:,g}B tokens"
        return f"GPU-hours a year on one {self.hours_gpu_name}"


def flops_per_token(shape: Shape, method: MethodGroup, policy: Policy) -> Figure:
    """Model FLOPs per training token: k × active parameters."""
    k = policy.flops_per_param_token[method]
    return figure(k.value * shape.compute_params_b * 1e9, "FLOP/token",
                  f"{k.value:g} × active params", k.sources,
                  k=k.value, active_params=shape.compute_params_b * 1e9)


def workload(*, shape: Shape, method: MethodGroup, policy: Policy, hours_gpu: Gpu,
             hour: Figure, tokens_per_run_b: float | None, runs_per_year: float | None,
             hours_per_year: float | None, hours_per_run: float | None = None,
             hours_method: MethodGroup | None = None, concurrent_jobs: int = 1) -> Workload:
    """The year's work from the answers: tokens × runs, or hours on ``hours_gpu``.

    ``hour`` is the useful throughput of one ``hours_gpu`` as the team would run this job on
    it (TFLOPS per GPU: its MFU, scaling and checkpointing), so a configuration like theirs is
    busy exactly the hours they gave. Pretraining with neither takes the compute-optimal token
    count (Chinchilla, 20 tokens per parameter) for one run; fine-tuning with neither takes
    the policy's default hours. Either default is flagged so the output can say it was assumed.
    In time, the runs are ``hours_per_run`` long on ``hours_gpu``, or ``runs_per_year`` many,
    or the policy's default run length (flagged as assumed); in tokens, one run a year unless
    ``runs_per_year`` says otherwise (flagged likewise). Runs assumed are at least the
    ``concurrent_jobs`` that run at once, and at least one: ten jobs at once over 20
    GPU-hours are ten runs of two hours, not 0.83 of a 24-hour run shared by ten.

    Hours are hours of ``hours_method`` (``hour`` is its throughput): they are turned into
    the tokens that method trains on ``hours_gpu`` in that time, and every method does those
    same tokens, so methods are compared for the same work in either unit.
    """
    per_token = flops_per_token(shape, method, policy)
    measured = flops_per_token(shape, hours_method or method, policy)
    unit = hour.value * 1e12 * 3600
    tokens_from: Literal["answer", "chinchilla"] | None = "answer"
    if tokens_per_run_b is None and hours_per_year is None and method == "pretrain":
        tokens_per_run_b = shape.params_b * policy.chinchilla_tokens_per_param.value
        tokens_from = "chinchilla"
    trace = {"flops_per_token": per_token}
    if tokens_per_run_b is not None:
        runs = runs_per_year if runs_per_year is not None else float(max(1, concurrent_jobs))
        runs_assumed = runs_per_year is None and tokens_from == "answer"
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
            tokens_from=tokens_from, runs_per_year=runs, runs_assumed=runs_assumed,
            hours_per_year=None, hours_assumed=False, hours_gpu=hours_gpu.id,
            hours_gpu_name=hours_gpu.name,
            flops_per_token=per_token.value, flops_per_run=per_run, flops_per_year=per_year,
            reference_gpu_hours=per_year / unit, trace=trace)
    assumed = hours_per_year is None
    hours = policy.default_hours_per_year.value if hours_per_year is None else hours_per_year
    if hours_per_run is not None:
        runs, runs_assumed = hours / hours_per_run, False
    elif runs_per_year is not None:
        runs, runs_assumed = runs_per_year, False
    else:  # assumed: at least the jobs at once, where there is any work
        runs = (policy.default_pretrain_runs_per_year.value if method == "pretrain"
                else hours / policy.default_hours_per_run.value)
        runs = max(runs, concurrent_jobs) if hours > 0 else runs
        runs_assumed = True
    runs = max(runs, 1e-6)
    tokens = hours * unit / measured.value
    per_year = tokens * per_token.value
    trace["flops_per_year"] = figure(
        per_year, "FLOP/year",
        "GPU-hours a year × useful TFLOPS per GPU of the method the hours are of × 1e12 × "
        "3600 ÷ its FLOPs per token (the tokens trained) × FLOPs per token of this method",
        [*hour.sources, *measured.sources,
         *(policy.default_hours_per_year.sources if assumed else [])],
        gpu_hours_per_year=hours, useful_tflops_per_gpu=hour.value,
        hours_method=hours_method or method, tokens_per_year=tokens,
        flops_per_token=per_token.value)
    return Workload(
        mode="hours", method=method, tokens_per_run_b=None, tokens_from=None,
        runs_per_year=tidy(runs, 4), runs_assumed=runs_assumed, hours_per_year=hours,
        hours_assumed=assumed, hours_gpu=hours_gpu.id, hours_gpu_name=hours_gpu.name,
        flops_per_token=per_token.value, flops_per_run=per_year / runs,
        flops_per_year=per_year, reference_gpu_hours=hours, trace=trace)
