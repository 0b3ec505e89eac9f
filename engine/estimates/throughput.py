"""How fast a configuration does training work: dense peak × MFU × multi-GPU scaling.

Every configuration is priced for the same work (FLOPs), so what separates a slow cheap GPU
from a fast dear one is its effective throughput: the card's dense 16-bit peak, the share of it
training reaches for this method on this class of card (MFU), the efficiency lost when gradients
cross PCIe, NVLink or a network, and the recomputation gradient checkpointing adds.
"""

from __future__ import annotations

import math
from typing import Literal

from engine.catalog.models import Gpu, Link, MethodGroup, Network, Policy
from engine.estimates.figure import Figure, figure

Level = Literal["low", "expected", "high"]
Precision = Literal["bf16", "fp8"]
FP8_METHODS: tuple[MethodGroup, ...] = ("pretrain", "full")
"""What FP8 recipes train: every weight's matrix multiplies (not a frozen or 4-bit base)."""


def in_fp8(gpu: Gpu, method: MethodGroup, precision: str) -> bool:
    """Whether a run of ``method`` on ``gpu`` trains in FP8: asked for, and both allow it."""
    return precision == "fp8" and gpu.fp8 and method in FP8_METHODS


def peak_tflops(gpu: Gpu, method: MethodGroup, precision: str) -> float:
    """The dense peak a run reaches a share of: FP8 where it trains in FP8, else 16-bit."""
    if in_fp8(gpu, method, precision) and gpu.dense_fp8_tflops is not None:
        return gpu.dense_fp8_tflops
    return gpu.training_tflops


def mfu(gpu: Gpu, method: MethodGroup, policy: Policy, level: Level = "expected",
        precision: str = "bf16") -> float:
    """Model FLOPs utilisation of ``method`` on ``gpu``: the policy's figure for the method,
    scaled for the card's class (and for ROCm on AMD cards); of the FP8 peak, the policy's
    share of it, where the run trains in FP8."""
    factor = policy.mfu_form_factor[gpu.form].value
    if gpu.vendor == "amd":
        factor *= policy.rocm_mfu_factor.value
    if in_fp8(gpu, method, precision):
        factor *= getattr(policy.fp8_mfu_factor, level)
    base: float = getattr(policy.mfu[method], level)
    return base * factor


def link_within(gpu: Gpu, gpus_in_node: int) -> Link:
    """How the GPUs of one box or instance exchange gradients."""
    if gpu.nvlink and (gpu.socket != "pcie" or gpus_in_node <= 2):
        return "nvlink"  # SXM/OAM baseboards; PCIe cards only pair up over a bridge
    return "pcie-consumer" if gpu.form == "consumer" else "pcie"


def scaling(policy: Policy, gpu: Gpu, gpus_in_node: int, nodes: int,
            network: Network | None) -> float:
    """Share of linear speed-up kept: a policy efficiency per doubling of GPUs in a node, and
    per doubling of nodes over the network between them."""
    efficiency = 1.0
    if gpus_in_node > 1:
        within = policy.scaling_efficiency[link_within(gpu, gpus_in_node)].value
        efficiency *= within ** math.log2(gpus_in_node)
    if nodes > 1:
        between = policy.scaling_efficiency[network or "ethernet"].value
        efficiency *= between ** math.log2(nodes)
    return efficiency


def effective_tflops(gpu: Gpu, count: int, nodes: int, network: Network | None,
                     method: MethodGroup, checkpointing: bool, policy: Policy,
                     precision: str = "bf16") -> Figure:
    """Useful (model) TFLOPS of ``count`` × ``gpu`` in ``nodes`` nodes, for ``method``, in
    FP8 where ``precision`` asks for it and the card and method allow it."""
    per_node = max(1, count // max(1, nodes))
    util = mfu(gpu, method, policy, precision=precision)
    eff = scaling(policy, gpu, per_node, nodes, network)
    recompute = 1 + (policy.checkpointing_time_overhead.value if checkpointing else 0.0)
    dense = peak_tflops(gpu, method, precision)
    value = count * dense * util * eff / recompute
    sources = [*gpu.sources, *policy.mfu[method].sources,
               *policy.mfu_form_factor[gpu.form].sources]
    if in_fp8(gpu, method, precision):
        sources += policy.fp8_mfu_factor.sources
    if count > 1:
        sources += policy.scaling_efficiency[link_within(gpu, per_node)].sources
    if checkpointing:
        sources += policy.checkpointing_time_overhead.sources
    return figure(
        value, "TFLOPS",
        "GPUs × dense TFLOPS × MFU (method, card class) × scaling efficiency ÷ (1 + "
        "checkpointing recomputation)",
        sources, gpus=count, nodes=nodes, dense_tflops=dense, mfu=util,
        scaling=eff, recompute=recompute,
        precision="fp8" if in_fp8(gpu, method, precision) else "bf16",
    )


def hours_for(flops: float, tflops: float) -> float:
    """Wall-clock hours ``flops`` of work take at ``tflops`` useful TFLOPS."""
    return flops / (tflops * 1e12) / 3600
