"""The vocabulary rules may use: every fact name with its type, allowed values and meaning.

Answer facts come from the questionnaire; derived facts are computed by ``engine.facts``;
candidate facts describe one hardware configuration. Rule files are checked against this
registry at load time (unknown names, wrong types, misspelt enum values).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine.catalog.load import Catalog

FactType = Literal["number", "bool", "string", "list"]


@dataclass(frozen=True)
class FactSpec:
    """One fact: its type, the values a string fact can take, its unit and meaning."""

    name: str
    type: FactType
    description: str
    choices: tuple[str, ...] | None = None
    unit: str | None = None
    origin: Literal["answer", "derived", "candidate", "set"] = "derived"


def _d(name: str, type_: FactType, description: str, unit: str | None = None,
       choices: tuple[str, ...] | None = None) -> FactSpec:
    return FactSpec(name, type_, description, choices, unit)


_METHODS = ("full", "lora", "qlora")

DERIVED: tuple[FactSpec, ...] = (
    _d("params_b", "number", "model size", "billion parameters"),
    _d("model_name", "string", "the model (catalog id or a scaled shape)"),
    _d("sizing_method", "string", "method the VRAM need is sized for: the requested one; with "
       "auto the first of full/lora/qlora that fits a consumer box (else lora); pretraining "
       "sizes as pretrain",
       choices=("full", "lora", "qlora", "pretrain")),
    *(_d(f"vram_{m}_gb", "number", f"peak VRAM of {m} training on one GPU", "GB")
      for m in (*_METHODS, "pretrain", "inference")),
    *(_d(f"fits_consumer_{m}", "bool", f"{m} fits a consumer box (≤ max cards per box)")
      for m in _METHODS),
    *(_d(f"consumer_gpus_needed_{m}", "number", f"consumer cards needed for {m}", "GPUs")
      for m in _METHODS),
    _d("vram_needed_gb", "number", "peak VRAM on one GPU for the sizing method", "GB"),
    _d("fits_consumer_gpu", "bool", "the sizing method fits a consumer box"),
    _d("fits_single_consumer_gpu", "bool", "the sizing method fits one consumer card"),
    _d("consumer_gpus_needed", "number", "consumer cards needed (sizing method)", "GPUs"),
    _d("largest_consumer_vram_gb", "number", "VRAM of the largest consumer card", "GB"),
    _d("max_consumer_gpus_per_box", "number", "policy: cards one consumer box holds", "GPUs"),
    _d("datacenter_gpus_needed", "number", "80 GB-class datacenter GPUs needed (sizing method)",
       "GPUs"),
    _d("full_to_lora_vram_ratio", "number", "VRAM of full fine-tuning ÷ LoRA"),
    _d("activation_share", "number", "share of the peak taken by activations (sizing method)"),
    _d("local_gpu", "string", "id of the cheapest local configuration's GPU"),
    _d("local_gpu_name", "string", "name of the cheapest local configuration's GPU"),
    _d("local_gpu_count", "number", "cards in the cheapest local configuration", "GPUs"),
    _d("local_purchase_usd", "number", "up-front cost of the cheapest local configuration",
       "USD"),
    _d("local_tco_usd_3y", "number", "cost of owning it over the amortisation period", "USD"),
    _d("dev_gpu_name", "string", "cheapest local box for QLoRA development and tests"),
    _d("dev_gpu_count", "number", "cards in that development box", "GPUs"),
    _d("dev_purchase_usd", "number", "up-front cost of that development box", "USD"),
    _d("cloud_offer", "string", "id of the cheapest allowed cloud offer that fits"),
    _d("cloud_gpu_name", "string", "GPU of that offer"),
    _d("cloud_gpu_count", "number", "GPUs of that offer the job needs", "GPUs"),
    _d("cloud_usd_per_hour", "number", "on-demand $/hour of that configuration", "USD/hour"),
    _d("cloud_usd_per_hour_anywhere", "number", "the same, ignoring data residency", "USD/hour"),
    _d("residency_price_ratio", "number", "cheapest allowed ÷ cheapest anywhere, per hour"),
    _d("cloud_cost_usd_year", "number", "renting it for hours_per_year, hidden costs in",
       "USD/year"),
    _d("cloud_cost_usd_3y", "number", "the same over the amortisation period", "USD"),
    _d("break_even_hours", "number", "busy hours a year above which owning beats renting the "
       "same work over the amortisation period", "hours/year"),
    _d("payback_hours", "number", "busy hours until the purchase has paid for itself",
       "hours"),
    _d("break_even_years", "number", "years to pay the purchase back at hours_per_year",
       "years"),
    _d("training_tokens_b_effective", "number", "tokens per run (answer or 20 × params)",
       "billion tokens"),
    _d("training_gpu_hours", "number", "expected GPU-hours of one run on the cloud offer's GPU",
       "GPU-hours"),
    _d("training_run_cost_usd", "number", "expected cost of one run on that offer", "USD"),
    _d("training_days_on_local", "number", "days one run takes on the local configuration",
       "days"),
    _d("api_cost_usd_month", "number", "monthly API bill for api_tokens_per_month_m",
       "USD/month"),
    _d("own_cost_usd_month", "number", "monthly cost of serving the model yourself, 24/7",
       "USD/month"),
    _d("api_to_own_cost_ratio", "number", "API bill ÷ own serving cost"),
    _d("fine_tune_advised", "bool", "fine-tuning is planned, or advised because none of the four "
       "reasons to train from scratch holds"),
    _d("scratch_reasons", "number", "how many of the four reasons to train from scratch hold"),
    _d("hours_share_of_year", "number", "hours_per_year ÷ 8,760"),
    _d("planned_vram_gb", "number", "VRAM of one planned GPU", "GB"),
    _d("planned_vram_total_gb", "number", "VRAM of the planned GPUs together", "GB"),
    _d("planned_vram_ratio", "number", "planned VRAM ÷ VRAM the job needs"),
    _d("planned_fits", "bool", "the job fits the planned GPUs"),
    _d("planned_form", "string", "form of the planned GPU",
       choices=("consumer", "workstation", "datacenter")),
    _d("planned_nvlink", "bool", "the planned GPU has NVLink"),
    _d("planned_bf16", "bool", "the planned GPU supports bf16"),
    _d("planned_tdp_w", "number", "TDP of one planned GPU", "W"),
    _d("planned_total_tdp_w", "number", "TDP of all planned GPUs together", "W"),
    _d("planned_pcie_gen", "number", "PCIe generation of the planned GPU"),
    _d("planned_release_year", "number", "release year of the planned GPU"),
    _d("planned_gpu_name", "string", "name of the planned GPU"),
    _d("newest_release_year", "number", "release year of the newest GPU in the catalog"),
)

_CANDIDATE_ROWS: tuple[tuple[str, FactType, str, tuple[str, ...] | None, str | None], ...] = (
        ("candidate_id", "string", "configuration id", None, None),
        ("gpu", "string", "GPU id", None, None),
        ("gpu_name", "string", "GPU name", None, None),
        ("count", "number", "GPUs in the configuration", None, "GPUs"),
        ("where", "string", "owned or rented", ("local", "cloud"), None),
        ("provider", "string", "cloud provider id (local: none)", None, None),
        ("provider_name", "string", "cloud provider name (local: owned)", None, None),
        ("offer", "string", "cloud offer id", None, None),
        ("provider_kind", "string", "kind of provider", ("local", "hyperscaler", "specialised"),
         None),
        ("provider_ecosystem", "string", "hyperscaler ecosystem", ("none", "aws", "azure", "gcp"),
         None),
        ("regions", "string", "regions, comma-separated", None, None),
        ("in_allowed_region", "bool", "runs in a region the residency answer allows", None, None),
        ("form", "string", "card form", ("consumer", "workstation", "datacenter"), None),
        ("vram_gb", "number", "VRAM of one card", None, "GB"),
        ("vram_total_gb", "number", "VRAM of all cards", None, "GB"),
        ("vram_needed_gb", "number", "peak VRAM per card at this count", None, "GB"),
        ("vram_ratio", "number", "VRAM of all cards ÷ VRAM the job needs on one", None, None),
        ("vram_headroom_ratio", "number", "VRAM of one card ÷ what the job needs per card",
         None, None),
        ("nvlink", "bool", "cards linked by NVLink", None, None),
        ("bf16", "bool", "cards support bf16", None, None),
        ("tdp_w", "number", "TDP of one card", None, "W"),
        ("total_tdp_w", "number", "TDP of all cards", None, "W"),
        ("release_year", "number", "release year of the card", None, None),
        ("is_newest_generation", "bool", "of the architecture of the newest GPU in the catalog",
         None, None),
        ("tflops_total", "number", "dense 16-bit TFLOPS of all cards", None, "TFLOPS"),
        ("upfront_usd", "number", "up-front cost (local: purchase)", None, "USD"),
        ("per_hour_usd", "number", "cost per busy hour", None, "USD/hour"),
        ("per_year_usd", "number", "cost per year at hours_per_year", None, "USD/year"),
        ("pricing", "string", "pricing used for the cost", ("on-demand", "spot", "reserved",
                                                            "purchase"), None),
        ("pricing_available", "bool", "the offer has the chosen pricing", None, None),
        ("gpus_per_instance", "number", "GPUs in one rented instance (local: the count)", None,
         "GPUs"),
        ("run_days", "number", "days one training run takes on this configuration", None,
         "days"),
        ("over_budget", "bool", "first-year cost exceeds budget_usd", None, None),
        ("budget_ratio", "number", "first-year cost ÷ budget_usd", None, None),
)
CANDIDATE: tuple[FactSpec, ...] = tuple(
    FactSpec(name, type_, description, choices, unit, "candidate")
    for name, type_, description, choices, unit in _CANDIDATE_ROWS
)

DECISION_FACTS: tuple[FactSpec, ...] = tuple(
    FactSpec(f"{axis}_choice", "string", f"the decided {axis} option", None, None, "candidate")
    for axis in ("approach", "method", "deployment", "cloud_kind", "pricing", "sharing")
)
"""Request-level decisions, visible to candidate rules (decided before hardware is scored)."""


def answer_specs(catalog: Catalog) -> tuple[FactSpec, ...]:
    """One fact per questionnaire entry."""
    specs = []
    for q in catalog.questions:
        type_: FactType = {"int": "number", "float": "number", "bool": "bool",
                           "list": "list"}.get(q.type, "string")  # type: ignore[assignment]
        choices = tuple(q.choices) if q.type == "choice" and q.choices else None
        if q.type == "tristate":
            type_, choices = "string", ("auto", "true", "false")
        specs.append(FactSpec(q.id, type_, q.prompt, choices, q.unit, "answer"))
    return tuple(specs)


def registry(catalog: Catalog) -> dict[str, FactSpec]:
    """Every fact a request rule may read (answers and derived)."""
    return {s.name: s for s in (*answer_specs(catalog), *DERIVED)}


def candidate_registry(catalog: Catalog) -> dict[str, FactSpec]:
    """Every fact a candidate rule may read: candidate fields, decisions and request facts."""
    return {**registry(catalog), **{s.name: s for s in (*CANDIDATE, *DECISION_FACTS)}}
