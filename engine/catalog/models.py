"""Pydantic models for the catalog files: every figure carries its sources, every price a date."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SourceIds = Annotated[list[str], Field(min_length=1)]
MAX_FIGURE = 1e12
"""No catalog or price figure is larger: absurd values (a $1e308 GPU-hour) would overflow the
estimates to Infinity, which neither the rule engine nor JSON can carry."""
PositiveFloat = Annotated[float, Field(gt=0, le=MAX_FIGURE, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0, le=MAX_FIGURE, allow_inf_nan=False)]
BoundedFloat = Annotated[float, Field(ge=-MAX_FIGURE, le=MAX_FIGURE, allow_inf_nan=False)]
Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9.\-]*$", max_length=60)]


class Strict(BaseModel):
    """Base for catalog data: unknown keys are errors, NaN/Infinity are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


# ---------------------------------------------------------------- sources
class Source(Strict):
    """A citable source: a knowledge.md id, a datasheet, a paper, a price page, an assumption."""

    id: Id
    kind: Literal["knowledge", "datasheet", "paper", "price-list", "article", "assumption"]
    title: str
    publisher: str
    date: str = Field(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$")
    url: str | None = None
    section: str | None = None
    note: str | None = None


# ---------------------------------------------------------------- gpus
class PriceRange(Strict):
    """A purchase price range in US dollars, dated and sourced."""

    low_usd: PositiveFloat
    high_usd: PositiveFloat
    as_of: dt.date
    sources: SourceIds

    @model_validator(mode="after")
    def _ordered(self) -> PriceRange:
        if self.high_usd < self.low_usd:
            raise ValueError("high_usd must be >= low_usd")
        return self

    @property
    def mid_usd(self) -> float:
        """The midpoint, used as the expected purchase price."""
        return (self.low_usd + self.high_usd) / 2


class Gpu(Strict):
    """One GPU model with datasheet figures."""

    id: Id
    name: str
    vendor: Literal["nvidia", "amd", "intel"] = "nvidia"
    architecture: str
    release_year: int = Field(ge=2010, le=2035)
    form: Literal["consumer", "workstation", "datacenter"]
    vram_gb: PositiveFloat
    memory_type: str
    bandwidth_gbps: PositiveFloat = Field(description="memory bandwidth, GB/s")
    bf16: bool = Field(description="native bf16 tensor-core support (Ampere and newer)")
    dense_bf16_tflops: PositiveFloat | None = Field(
        description="dense (no sparsity) bf16 tensor TFLOPS with fp32 accumulate; null without bf16"
    )
    dense_fp16_tflops: PositiveFloat = Field(
        description="dense fp16 tensor TFLOPS, fp32 accumulate"
    )
    tdp_w: PositiveFloat
    nvlink: bool
    nvlink_gbps: NonNegativeFloat = 0
    pcie_gen: int = Field(ge=3, le=6)
    purchase: PriceRange | None = None
    sources: SourceIds
    note: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Gpu:
        if self.bf16 != (self.dense_bf16_tflops is not None):
            raise ValueError("dense_bf16_tflops must be set exactly when bf16 is true")
        if self.nvlink != (self.nvlink_gbps > 0):
            raise ValueError("nvlink_gbps must be > 0 exactly when nvlink is true")
        return self

    @property
    def training_tflops(self) -> float:
        """Dense 16-bit tensor throughput used for training estimates (bf16, else fp16)."""
        return self.dense_bf16_tflops or self.dense_fp16_tflops

    @property
    def buyable(self) -> bool:
        """Whether a team can buy it (it has a purchase price)."""
        return self.purchase is not None


class GpuFile(Strict):
    gpus: list[Gpu]


# ---------------------------------------------------------------- clouds
class Provider(Strict):
    """A cloud provider."""

    id: Id
    name: str
    kind: Literal["hyperscaler", "specialised"]
    ecosystem: Literal["aws", "azure", "gcp"] | None = None
    regions: list[Id] = Field(min_length=1)
    sources: SourceIds


class Offer(Strict):
    """One rentable configuration: a GPU at a provider, priced per GPU-hour."""

    id: Id
    provider: Id
    gpu: Id
    instance: str | None = None
    gpus_per_instance: int = Field(ge=1, le=16)
    regions: list[Id] = Field(min_length=1)
    on_demand_usd_per_gpu_hour: PositiveFloat
    spot_usd_per_gpu_hour: PositiveFloat | None = None
    reserved_usd_per_gpu_hour: PositiveFloat | None = None
    price_includes_vm: bool = Field(
        default=True, description="false when the list price is for the GPU alone (GCP style)"
    )
    as_of: dt.date
    sources: SourceIds
    note: str | None = None

    def price(self, pricing: str) -> float | None:
        """$/GPU-hour for ``on-demand``, ``spot`` or ``reserved`` (None when not offered)."""
        return {
            "on-demand": self.on_demand_usd_per_gpu_hour,
            "spot": self.spot_usd_per_gpu_hour,
            "reserved": self.reserved_usd_per_gpu_hour,
        }[pricing]


class ApiOffer(Strict):
    """A hosted-model API price point, per million tokens."""

    id: Id
    name: str
    input_usd_per_m_tokens: PositiveFloat
    output_usd_per_m_tokens: PositiveFloat
    as_of: dt.date
    sources: SourceIds


class CloudFile(Strict):
    providers: list[Provider]
    offers: list[Offer]
    apis: list[ApiOffer] = Field(default_factory=list)


# ---------------------------------------------------------------- models
class ModelPreset(Strict):
    """A model family member with the shape the memory estimator needs."""

    id: Id
    name: str
    family: str
    params_b: PositiveFloat
    layers: int = Field(ge=1, le=1000)
    hidden: int = Field(ge=64, le=100_000)
    intermediate: int = Field(ge=64, le=400_000, description="feed-forward inner size")
    heads: int = Field(ge=1, le=1000)
    kv_heads: int = Field(ge=1, le=1000)
    vocab: int = Field(ge=1000, le=1_000_000)
    experts: int = Field(default=1, ge=1, le=1024, description="MoE experts per layer")
    active_params_b: PositiveFloat | None = Field(
        default=None, description="parameters used per token (MoE); defaults to params_b"
    )
    tied_embeddings: bool = False
    sources: SourceIds

    @model_validator(mode="after")
    def _heads(self) -> ModelPreset:
        if self.heads % self.kv_heads:
            raise ValueError("heads must be a multiple of kv_heads")
        return self

    @property
    def compute_params_b(self) -> float:
        """Parameters touched per token: what 6·N·D counts."""
        return self.active_params_b or self.params_b


class ModelFile(Strict):
    models: list[ModelPreset]


# ---------------------------------------------------------------- policy
class Constant(Strict):
    """One tunable number with its unit and sources."""

    value: BoundedFloat
    unit: str
    sources: SourceIds
    note: str | None = None


class RangeConstant(Strict):
    """A tunable low/expected/high triple."""

    low: BoundedFloat
    expected: BoundedFloat
    high: BoundedFloat
    unit: str
    sources: SourceIds
    note: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> RangeConstant:
        if not self.low <= self.expected <= self.high:
            raise ValueError("expected low <= expected <= high")
        return self


class Policy(Strict):
    """Every constant the estimators use; no policy number lives in Python."""

    # model states, bytes per parameter (mixed-precision AdamW, ZeRO paper)
    weight_bytes_16bit: Constant
    master_weight_bytes: Constant
    gradient_bytes: Constant
    adam_state_bytes: Constant
    inference_weight_bytes: Constant
    nf4_bytes_per_param: Constant
    adapter_state_bytes: Constant
    lora_rank: Constant
    # activations (Korthikanti et al.; our measurements)
    activation_bytes_per_token_hidden: Constant
    attention_score_coeff: Constant
    fused_attention: Constant
    logits_bytes_per_token_vocab: Constant
    checkpoint_bytes_per_token_hidden: Constant
    kv_cache_bytes: Constant
    step_temporary_tensors: Constant
    # overheads and fit
    framework_overhead_gb: Constant
    memory_margin_fraction: Constant
    usable_vram_fraction: Constant
    checkpointing_auto_min_saving: Constant
    checkpointing_time_overhead: Constant
    max_gpus_considered: Constant
    max_consumer_gpus_per_box: Constant
    practical_consumer_gpus_per_box: Constant
    target_run_days: Constant
    max_gpus_per_cloud_node: Constant
    # compute
    mfu: RangeConstant
    chinchilla_tokens_per_param: Constant
    flops_per_param_token: dict[Literal["full", "pretrain", "lora", "qlora"], Constant]
    # cost
    hidden_cloud_overhead: RangeConstant
    amortisation_years: Constant
    electricity_usd_per_kwh: Constant
    platform_cost_usd: dict[Literal["consumer", "workstation", "datacenter"], Constant]
    platform_watts: Constant
    cooling_power_factor: Constant
    maintenance_fraction_per_year: Constant
    hours_per_year_max: Constant
    api_output_token_share: Constant
    # input limits
    batch_line_max_bytes: Constant


# ---------------------------------------------------------------- questions
class When(Strict):
    """Ask a question only when an earlier answer has (one of) the given value(s)."""

    field: str
    equals: Any = None
    in_: list[Any] | None = Field(default=None, alias="in")
    not_in: list[Any] | None = None
    exists: bool | None = None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class Question(Strict):
    """One questionnaire entry; one per answers-file field."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: Literal["choice", "int", "float", "bool", "tristate", "list", "gpu", "model", "text"]
    prompt: str
    help: str
    choices: list[str] | None = None
    default: Any = None
    nullable: bool = False
    min: float | None = Field(default=None, allow_inf_nan=False)
    max: float | None = Field(default=None, allow_inf_nan=False)
    unit: str | None = None
    advanced: bool = Field(default=False, description="asked only with --advanced")
    when: list[When] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)

    @field_validator("choices")
    @classmethod
    def _unique(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and len(set(v)) != len(v):
            raise ValueError("choices must be unique")
        return v

    @model_validator(mode="after")
    def _shape(self) -> Question:
        if self.type in ("choice", "list") and not self.choices:
            raise ValueError(f"a {self.type} question needs choices")
        return self


class PolicyFile(Strict):
    policy: Policy


class QuestionFile(Strict):
    questions: list[Question]


class SourceFile(Strict):
    sources: list[Source]
