"""The memory estimator against published reference points (papers and tools' own tables).

Figures in GB are the publisher's (10^9 bytes unless the table says otherwise); our estimates
are in GiB and converted. Tolerances are the spread between the publishers themselves: the
QLoRA paper's own breakdown and the tools' tables (which state no sequence length) differ by
10-25 % for the same model, so a point holds when we land within that band, and a fit claim
holds exactly (the card holds the job, or it does not).
"""

from __future__ import annotations

import pytest

from engine.catalog.load import Catalog
from engine.estimates.memory import MemoryRequest, Method, estimate_memory, gpus_needed
from engine.estimates.shape import resolve_shape

GIB_TO_GB = 2**30 / 1e9


def gb(catalog: Catalog, method: Method, *, model: str | None = None,
       params_b: float | None = None, seq: int = 512, checkpointing: bool = True) -> float:
    """Our estimate in 10^9 bytes, for comparison with a published GB figure."""
    req = request(catalog, method, model=model, params_b=params_b, seq=seq,
                  checkpointing=checkpointing)
    return estimate_memory(req, catalog.policy).total_gib * GIB_TO_GB


def request(catalog: Catalog, method: Method, *, model: str | None = None,
            params_b: float | None = None, seq: int = 512,
            checkpointing: bool = True) -> MemoryRequest:
    shape = resolve_shape(catalog, model=model, params_b=params_b)
    return MemoryRequest(shape=shape, method=method, seq_len=seq, micro_batch=1,
                         checkpointing=checkpointing)


# QLoRA (Dettmers et al. 2023, arXiv 2305.14314; HF blog 2023-05-24): NF4 + double
# quantisation, LoRA on all linear layers, gradient checkpointing, batch 1, sequence 512.
def test_qlora_33b_fits_one_24gb_card(catalog: Catalog) -> None:
    """"33B model finetuning on a single 24GB GPU" (LLaMA 33B = 32.5B parameters)."""
    req = request(catalog, "qlora", params_b=32.5)
    assert gpus_needed(req, catalog.gpu("rtx-4090"), catalog.policy) == 1
    assert gpus_needed(req, catalog.gpu("rtx-3090"), catalog.policy) == 1


def test_qlora_65b_fits_one_48gb_card_but_not_one_24gb(catalog: Catalog) -> None:
    """"finetune a 65B parameter model on a single 48GB GPU"."""
    req = request(catalog, "qlora", model="llama-1-65b")
    assert gpus_needed(req, catalog.gpu("rtx-a6000"), catalog.policy) == 1
    assert gpus_needed(req, catalog.gpu("l40s"), catalog.policy) == 1
    assert gpus_needed(req, catalog.gpu("rtx-4090"), catalog.policy) == 2


@pytest.mark.parametrize(("model", "params_b", "published_gb"), [
    ("llama-2-7b", None, 6.9), ("llama-2-13b", None, 11.3), (None, 32.5, 24.7),
    ("llama-1-65b", None, 45.0)])
def test_qlora_paper_memory_breakdown(catalog: Catalog, model: str | None,
                                      params_b: float | None, published_gb: float) -> None:
    """The paper's memory figure (batch 1, sequence 512, r=64, paged AdamW): within 20 %."""
    ours = gb(catalog, "qlora", model=model, params_b=params_b)
    assert published_gb / 1.2 <= ours <= published_gb * 1.2


# LLaMA-Factory README "Hardware Requirement" (2024-05 … 2025-08, "estimated", no sequence
# length given): 7B LoRA 16 GB, QLoRA-4 6 GB, full (AMP) 120 GB; 70B LoRA 160 GB, QLoRA-4 48 GB.
@pytest.mark.parametrize(("model", "method", "published_gb"), [
    ("llama-2-7b", "lora", 16), ("llama-2-7b", "qlora", 6), ("llama-2-7b", "full", 120),
    ("llama-2-13b", "qlora", 12), ("llama-2-70b", "lora", 160), ("llama-2-70b", "qlora", 48),
    ("llama-2-70b", "full", 1200)])
def test_llama_factory_table(catalog: Catalog, model: str, method: Method,
                             published_gb: float) -> None:
    """Within 25 % of the table, at sequences of 512 to 2,048 tokens."""
    low = gb(catalog, method, model=model, seq=512)
    high = gb(catalog, method, model=model, seq=2048)
    assert published_gb / 1.25 <= high and low <= published_gb * 1.25


# Unsloth's VRAM table ("absolute minimum", QLoRA 4-bit / LoRA 16-bit; their kernels use less
# than plain Hugging Face): 8B 6 / 22 GB, 70B 41 / 164 GB.
@pytest.mark.parametrize(("model", "method", "published_gb"), [
    ("llama-3.1-8b", "lora", 22), ("llama-3.1-70b", "qlora", 41),
    ("llama-3.1-70b", "lora", 164)])
def test_unsloth_table(catalog: Catalog, model: str, method: Method, published_gb: float) -> None:
    ours = gb(catalog, method, model=model, seq=2048)
    assert published_gb / 1.25 <= ours <= published_gb * 1.25


def test_unsloth_qlora_8b_minimum_is_below_ours(catalog: Catalog) -> None:
    """Unsloth's 6 GB for 8B QLoRA is a floor reached with its own kernels: plain training
    (what we estimate) needs more, but fits an 8 GB card only at short sequences."""
    ours = gb(catalog, "qlora", model="llama-3.1-8b", seq=512)
    assert ours > 6
    req = request(catalog, "qlora", model="llama-3.1-8b", seq=2048)
    assert gpus_needed(req, catalog.gpu("rtx-4060"), catalog.policy) != 1
