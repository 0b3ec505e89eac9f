"""Pydantic models for the catalog files: every figure carries its sources, every price a date."""

from __future__ import annotations

import datetime as dt
from functools import cached_property
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
CountryCode = Annotated[str, Field(pattern=r"^[a-z]{2}$",
                                   description="ISO 3166-1 alpha-2, lower case (gb, not uk)")]
HttpsUrl = Annotated[str, Field(pattern=r"^https://[^\s]+$", max_length=500)]
Access = Literal["self-serve", "account", "contract"]
TeamRegion = Literal["us", "eu", "uk", "asia", "other"]
"""Where a team's engineers work: what an engineer costs (``engineer_usd_per_year``)."""
"""How GPU capacity is sold: ``self-serve`` (sign up with a card, launch in minutes),
``account`` (a quota increase, account review or approval first: days), ``contract`` (through
sales under a contract: weeks)."""


ProviderKind = Literal["hyperscaler", "specialised", "marketplace"]
Ecosystem = Literal["aws", "azure", "gcp"]
"""A hyperscaler whose managed services a team (``cloud_ecosystem``) or a provider lives in."""
ModelClass = Literal["small", "mid", "frontier"]


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
    condition: Literal["new", "used"] = Field(
        default="new", description="new, or a used-market price (cards no longer sold new)")
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


class MigProfile(Strict):
    """One MIG instance profile: ``3g.40gb`` is 3 of the GPU's compute slices and 40 GB."""

    name: str = Field(pattern=r"^[1-8]g\.[0-9]+gb$")
    memory_gb: PositiveFloat
    instances: int = Field(ge=1, le=8, description="how many of it one GPU holds at once")

    @property
    def compute_slices(self) -> int:
        """The compute slices (``g``) it takes."""
        return int(self.name.split("g", 1)[0])


class Gpu(Strict):
    """One GPU model with datasheet figures."""

    id: Id
    name: str
    short_name: str | None = Field(default=None, max_length=24,
                                   description="how tables name it (default: the name)")
    vendor: Literal["nvidia", "amd", "intel"] = "nvidia"
    architecture: str
    release_year: int = Field(ge=2010, le=2035)
    form: Literal["consumer", "workstation", "datacenter"]
    socket: Literal["pcie", "sxm", "oam"] = Field(
        default="pcie", description="pcie card, or a module on an HGX (sxm) / OAM baseboard")
    vram_gb: PositiveFloat = Field(description="memory as the vendor states it (see vram_unit)")
    vram_unit: Literal["GiB", "GB"] = Field(
        default="GiB", description="what the vendor's 'GB' is: GDDR/HBM capacities are binary "
        "(a '24 GB' card holds 24 GiB = 25.8 × 10^9 bytes)")
    memory_type: str
    bandwidth_gbps: PositiveFloat = Field(description="memory bandwidth, GB/s")
    bf16: bool = Field(description="native bf16 tensor-core support (Ampere and newer)")
    dense_bf16_tflops: PositiveFloat | None = Field(
        description="dense (no sparsity) bf16 tensor TFLOPS with fp32 accumulate; null without bf16"
    )
    dense_fp16_tflops: PositiveFloat = Field(
        description="dense fp16 tensor TFLOPS, fp32 accumulate"
    )
    dense_fp8_tflops: PositiveFloat | None = Field(
        default=None, description="dense FP8 tensor TFLOPS (no sparsity); none without FP8 "
        "tensor cores")
    tdp_w: PositiveFloat
    nvlink: bool
    nvlink_gbps: NonNegativeFloat = 0
    pcie_gen: int = Field(ge=3, le=6)
    ecc: bool = Field(description="ECC memory (GeForce cards have none)")
    datacenter_licence: bool = Field(
        description="the vendor's driver licence allows datacenter deployment (GeForce: no)")
    mig: bool = Field(default=False, description="can be split into MIG instances")
    host_cpu: Literal["x86", "arm"] = Field(
        default="x86", description="the instruction set of the host CPU it runs beside: arm "
        "where the CPU is on the module (Grace in GH200 and GB200), x86 for cards and HGX boards")
    mig_profiles: list[MigProfile] = Field(
        default_factory=list, description="the MIG instance profiles, smallest first (with mig)")
    purchase: PriceRange | None = None
    no_offer_reason: str | None = Field(
        default=None, max_length=300, description="why no cloud offer of the catalog rents it "
        "(sold to buy only, retired from clouds…): every GPU has an offer or a reason")
    sources: SourceIds
    note: str | None = None

    @property
    def label(self) -> str:
        """The short name tables and headlines use."""
        return self.short_name or self.name.removeprefix("NVIDIA ").removeprefix(
            "GeForce ").removeprefix("AMD ")

    @property
    def vram_bytes(self) -> float:
        """Memory in bytes, the vendor's unit honoured."""
        return self.vram_gb * (2**30 if self.vram_unit == "GiB" else 1e9)

    @cached_property
    def vram_gib(self) -> float:
        """Memory in GiB, the unit every output uses (kept: read on every trial)."""
        return self.vram_bytes / 2**30

    @model_validator(mode="after")
    def _consistent(self) -> Gpu:
        if self.bf16 != (self.dense_bf16_tflops is not None):
            raise ValueError("dense_bf16_tflops must be set exactly when bf16 is true")
        if self.nvlink != (self.nvlink_gbps > 0):
            raise ValueError("nvlink_gbps must be > 0 exactly when nvlink is true")
        if self.mig != bool(self.mig_profiles):
            raise ValueError("mig_profiles must be listed exactly when mig is true")
        return self

    @property
    def fp8(self) -> bool:
        """Whether it has FP8 tensor cores (a dense FP8 figure)."""
        return self.dense_fp8_tflops is not None

    @property
    def training_tflops(self) -> float:
        """Dense 16-bit tensor throughput used for training estimates (bf16, else fp16)."""
        return self.dense_bf16_tflops or self.dense_fp16_tflops

    @property
    def buyable(self) -> bool:
        """Whether a team can buy it (it has a purchase price)."""
        return self.purchase is not None


class AnnouncedGpu(Strict):
    """A GPU announced but neither rentable nor buyable yet: named so rules and notes can
    speak of it, never a configuration."""

    id: Id
    name: str
    vendor: Literal["nvidia", "amd"]
    architecture: str
    announced: str | None = Field(default=None, pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$",
                                  description="when the vendor first announced it")
    expected: str = Field(pattern=r"^\d{4}(-H[12]|-Q[1-4])?$",
                          description="when volume cloud access is expected (2026-H2, 2027)")
    vram_gb: PositiveFloat | None = None
    bandwidth_gbps: PositiveFloat | None = None
    sources: SourceIds
    note: str | None = None


class GpuFile(Strict):
    gpus: list[Gpu]
    announced: list[AnnouncedGpu] = Field(default_factory=list)


# ---------------------------------------------------------------- clouds
class Location(Strict):
    """Where an offer is sold: a country, and the provider's own region code and city if known."""

    country: CountryCode
    region: str | None = Field(default=None, min_length=1, max_length=60,
                               description="the provider's region code (us-east-1, "
                               "europe-west4, FIN-02)")
    city: str | None = Field(default=None, min_length=1, max_length=60)
    on_demand_usd_per_gpu_hour: PositiveFloat | None = Field(
        default=None, description="the list price here where it differs from the offer's "
        "(hyperscalers price each region); none: the offer's prices hold here")
    spot_usd_per_gpu_hour: PositiveFloat | None = Field(
        default=None, description="the spot price here, with a price of its own on demand; "
        "none there: no spot price is known here")

    @model_validator(mode="after")
    def _spot_with_own_price(self) -> Location:
        if self.spot_usd_per_gpu_hour is not None and self.on_demand_usd_per_gpu_hour is None:
            raise ValueError("spot_usd_per_gpu_hour needs on_demand_usd_per_gpu_hour here: a "
                             "location without prices of its own takes the offer's")
        if self.on_demand_usd_per_gpu_hour is not None and self.region is None:
            raise ValueError("a location priced on its own needs its region code")
        return self

    @property
    def own_prices(self) -> bool:
        """Whether this location has list prices of its own (else the offer's hold)."""
        return self.on_demand_usd_per_gpu_hour is not None


class Storage(Strict):
    """What a provider charges to keep data and checkpoints beside its GPUs."""

    usd_per_gb_month: PositiveFloat
    product: str = Field(max_length=80, description="which storage (e.g. S3 Standard)")
    sources: SourceIds


class Commitment(Strict):
    """Committed use a provider sells below on demand without a listed price per term."""

    discount_max: float = Field(gt=0, lt=1, description="the most it takes off on demand, as "
                                "the provider advertises it (0.35: up to 35 % less)")
    how: str = Field(max_length=80, description="how it is bought, in one short phrase (e.g. "
                     "for companies, through sales, prepaid)")
    sources: SourceIds


class Provider(Strict):
    """A cloud provider."""

    id: Id
    name: str
    short_name: str | None = Field(default=None, max_length=16,
                                   description="how tables name it (default: the id)")
    kind: ProviderKind = Field(
        description="hyperscaler (AWS, Azure, GCP), specialised GPU cloud, or a marketplace "
        "of third-party hosts")
    ecosystem: Ecosystem | None = None
    regions: list[Id] = Field(min_length=1)
    access: Access = Field(description="how its GPU offers are sold by default (an offer's "
                           "own access overrides it)")
    access_note: str | None = Field(default=None, max_length=200,
                                    description="what that access takes, in one short phrase")
    billing_increment_s: int = Field(ge=1, le=86_400, description="billing granularity in "
                                     "seconds: 1 per second, 60 per minute, 3600 per hour")
    billing_minimum_s: int = Field(ge=1, le=86_400 * 31, description="the least charged per "
                                   "instance start, in seconds (at least one increment)")
    url: HttpsUrl | None = Field(default=None, description="its GPU pricing page")
    storage: Storage | None = Field(
        default=None, description="its storage price (the policy's default where absent)")
    commitment: Commitment | None = Field(
        default=None, description="committed use it sells by quote only (a listed term "
        "price is an offer's reserved_terms)")
    locations: list[Location] = Field(
        min_length=1, description="where it sells GPUs at all: the locations of an offer that "
        "lists none of its own (those in the offer's regions)")
    sources: SourceIds
    note: str | None = None

    @model_validator(mode="after")
    def _billing(self) -> Provider:
        if self.billing_minimum_s < self.billing_increment_s:
            raise ValueError("billing_minimum_s must be at least one billing_increment_s")
        return self


class ReservedTerm(Strict):
    """A committed price the provider lists. A term of ``term_months`` is charged for every
    hour of it (one of a year or more covers the year; a shorter one is bought in whole terms
    around each run). A block of ``term_days`` is bought ahead for each run, as AWS sells
    Capacity Blocks and Lambda its 1-Click Clusters: the run's hours in whole steps of that
    many days, at least ``min_days``."""

    term_months: int | None = Field(default=None, ge=1, le=60)
    term_days: int | None = Field(
        default=None, ge=1, le=366, description="a block bought for each run, in steps of "
        "this many days (AWS Capacity Blocks: 1; Lambda 1-Click Clusters: 7)")
    min_days: int | None = Field(
        default=None, ge=1, le=366, description="the shortest block sold, in days (with "
        "term_days; default one step)")
    usd_per_gpu_hour: PositiveFloat
    product: str | None = Field(default=None,
                                description="which commitment (e.g. a 1-year no-upfront RI)")

    @model_validator(mode="after")
    def _one_term(self) -> ReservedTerm:
        if (self.term_months is None) == (self.term_days is None):
            raise ValueError("a reserved term needs term_months or term_days, not both")
        if self.min_days is not None and self.term_days is None:
            raise ValueError("min_days is the shortest block of a term_days term")
        return self

    @property
    def shortest_days(self) -> int | None:
        """The shortest block, in days (None for a term in months)."""
        return None if self.term_days is None else max(self.min_days or 0, self.term_days)


Network = Literal["infiniband", "efa", "roce", "ethernet"]


class Offer(Strict):
    """One rentable training configuration: a GPU at a provider, priced per GPU-hour."""

    id: Id
    provider: Id
    gpu: Id
    instance: str | None = None
    gpus_per_instance: int | list[Annotated[int, Field(ge=1, le=16)]] = Field(
        description="GPUs per instance: one shape, or every shape sold at this per-GPU price")
    multi_node: bool = Field(
        default=False, description="several instances can train together over a fast fabric")
    min_gpus: int | None = Field(
        default=None, ge=1, le=100_000, description="the fewest GPUs sold at once, where a "
        "cluster product starts above one instance (a Lambda 1-Click Cluster: 16)")
    network: Network = Field(default="ethernet", description="fabric between instances")
    regions: list[Id] = Field(min_length=1)
    market: Id | None = Field(
        default=None, description="a region the offer is sold only to (e.g. cn for the "
        "China-market A800): eligible only for teams that allow it")
    access: Access | None = Field(
        default=None, description="how this offer is sold when it differs from its "
        "provider's access (None: the provider's)")
    locations: list[Location] = Field(
        default_factory=list, description="where this GPU/instance type is sold, each "
        "country within regions; empty: the provider's locations apply")
    link: HttpsUrl | None = Field(default=None, description="the page selling this offer")
    on_demand_usd_per_gpu_hour: PositiveFloat | None = Field(
        default=None, description="None where it is sold only on spot or on committed terms "
        "(a spot listing, AWS Capacity Blocks)")
    spot_usd_per_gpu_hour: PositiveFloat | None = None
    on_demand_longest_hours: PositiveFloat | None = Field(
        default=None, description="the longest an on-demand instance runs before the provider "
        "ends it (Google Cloud's flex-start: 168 hours); a longer run stops and waits for "
        "capacity again. None: it runs until stopped")
    reserved: list[ReservedTerm] = Field(default_factory=list)
    reserved_usd_per_gpu_hour: PositiveFloat | None = Field(
        default=None, description="shorthand for one 12-month reserved term")
    price_includes_vm: bool = Field(
        default=True, description="false when the list price is for the GPU alone (GCP style)")
    vm_usd_per_instance_hour: NonNegativeFloat | None = Field(
        default=None, description="the VM one instance needs when the price is GPU-only")
    as_of: dt.date
    sources: SourceIds
    note: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Offer:
        if not self.price_includes_vm and self.vm_usd_per_instance_hour is None:
            raise ValueError("a GPU-only price (price_includes_vm: false) needs "
                             "vm_usd_per_instance_hour, the VM the provider requires")
        if not self.shapes:
            raise ValueError("gpus_per_instance needs at least one shape")
        if (self.on_demand_usd_per_gpu_hour is None and self.spot_usd_per_gpu_hour is None
                and not self.reserved_terms):
            raise ValueError("an offer needs a price: on_demand_usd_per_gpu_hour, "
                             "spot_usd_per_gpu_hour or a reserved term")
        if self.min_gpus and not self.multi_node and self.min_gpus > self.shapes[-1]:
            raise ValueError("min_gpus is more than its largest instance and it is not "
                             "multi_node: it is never rented")
        seen = [(loc.country, loc.region, loc.city) for loc in self.locations]
        if len(set(seen)) != len(seen):
            raise ValueError("locations lists the same location twice")
        return self

    @property
    def shapes(self) -> tuple[int, ...]:
        """Instance sizes sold, smallest first."""
        given = self.gpus_per_instance
        return tuple(sorted(set([given] if isinstance(given, int) else given)))

    @property
    def smallest_gpus(self) -> int:
        """The fewest GPUs it is rented as: its smallest shape, or its minimum if larger."""
        return max(self.shapes[0], self.min_gpus or 1)

    @property
    def reserved_terms(self) -> tuple[ReservedTerm, ...]:
        """Every committed term listed (the 12-month shorthand included)."""
        extra = () if self.reserved_usd_per_gpu_hour is None else (
            ReservedTerm(term_months=12, usd_per_gpu_hour=self.reserved_usd_per_gpu_hour),)
        return (*self.reserved, *extra)

    def priced_at(self, where: Location | None) -> Offer:
        """This offer as rented at ``where``: a location with list prices of its own has only
        those (on demand, and spot where it lists one; none of the offer's reserved terms,
        which are priced where the offer is); at any other, the offer itself."""
        if where is None or not where.own_prices:
            return self
        return self.model_copy(update={
            "on_demand_usd_per_gpu_hour": where.on_demand_usd_per_gpu_hour,
            "spot_usd_per_gpu_hour": where.spot_usd_per_gpu_hour,
            "reserved": [], "reserved_usd_per_gpu_hour": None})

    def price(self, pricing: str) -> float | None:
        """$/GPU-hour for ``on-demand``, ``spot`` or ``reserved`` (the cheapest term; None
        when not offered)."""
        if pricing == "reserved":
            terms = self.reserved_terms
            return min(t.usd_per_gpu_hour for t in terms) if terms else None
        return {
            "on-demand": self.on_demand_usd_per_gpu_hour,
            "spot": self.spot_usd_per_gpu_hour,
        }[pricing]


class ApiOffer(Strict):
    """A hosted-model API price point, per million tokens."""

    id: Id
    name: str
    model_class: ModelClass = Field(
        description="the class of hosted model: what a team's own model of that size replaces")
    input_usd_per_m_tokens: PositiveFloat
    output_usd_per_m_tokens: PositiveFloat
    as_of: dt.date
    sources: SourceIds


class SkyPilotMap(Strict):
    """How a SkyPilot catalog's names map onto ours (for ``--prices vms.csv``)."""

    accelerators: dict[str, Id] = Field(description="AcceleratorName → catalog GPU id")
    providers: dict[Id, dict[str, Id]] = Field(
        default_factory=dict, description="per provider, names that mean another GPU there")
    regions: dict[str, Id] = Field(description="region-name prefix → region id")
    sources: SourceIds


class GpuhuntMap(Strict):
    """Which provider each of gpuhunt's catalog files prices (for ``--prices FILE.csv``);
    its GPU and region names are read with the SkyPilot mapping."""

    files: dict[str, Id] = Field(description="file name without .csv → catalog provider id")
    sources: SourceIds


class CloudFile(Strict):
    providers: list[Provider]
    offers: list[Offer]
    apis: list[ApiOffer] = Field(default_factory=list)
    skypilot: SkyPilotMap | None = None
    gpuhunt: GpuhuntMap | None = None


# ---------------------------------------------------------------- regions
class Country(Strict):
    """A country an offer can be sold in, and the region groups (markets) it belongs to."""

    code: CountryCode
    name: str
    groups: list[Id] = Field(default_factory=list,
                             description="the region ids (groups) it counts towards")

    @property
    def id(self) -> str:
        """The code, so countries index like every other catalog list."""
        return self.code


class RegionGroup(Strict):
    """A region id the catalog's ``regions`` fields use (eu, us, uk, asia...)."""

    id: Id
    name: str
    sources: SourceIds
    note: str | None = None


class RegionFile(Strict):
    countries: list[Country] = Field(min_length=1)
    groups: list[RegionGroup] = Field(min_length=1)


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
    experts_active: int | None = Field(
        default=None, ge=1, le=1024, description="routed experts used per token (MoE)")
    experts_shared: int = Field(default=0, ge=0, le=64, description="always-on shared experts")
    dense_layers: int = Field(default=0, ge=0, le=1000,
                              description="leading layers with a dense FFN (MoE)")
    dense_intermediate: int | None = Field(
        default=None, ge=64, le=400_000, description="FFN size of the dense layers (MoE)")
    moe_layer_step: int = Field(default=1, ge=1, le=16,
                                description="every n-th layer is MoE (MoE)")
    head_dim: int | None = Field(default=None, ge=8, le=1024,
                                 description="attention head size when not hidden ÷ heads")
    active_params_b: PositiveFloat | None = Field(
        default=None, description="parameters used per token (MoE); defaults to params_b"
    )
    tied_embeddings: bool = False
    sources: SourceIds
    note: str | None = None

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


class Reference(Strict):
    """A catalog id the policy names (a reference GPU, a typical API)."""

    value: Id
    sources: SourceIds
    note: str | None = None


Form = Literal["consumer", "workstation", "datacenter"]
MethodGroup = Literal["pretrain", "full", "lora", "qlora"]
METHOD_NAMES = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA"}
"""A fine-tuning method in words."""
Link = Literal["nvlink", "pcie", "pcie-consumer", "infiniband", "efa", "roce", "ethernet"]


class BudgetTiers(Strict):
    """The budget tiers as contiguous bands: each runs from its lower bound (USD) up to the
    next one's, the last without end, so no budget falls between two tiers."""

    bands: dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*$")], BoundedFloat] = Field(
        min_length=1, description="tier name: lowest budget in it (USD), in rising order")
    unit: Literal["USD"] = "USD"
    sources: SourceIds
    note: str | None = None

    @model_validator(mode="after")
    def _contiguous(self) -> BudgetTiers:
        bounds = list(self.bands.values())
        if bounds[0] != 0:
            raise ValueError(f"the first tier must start at 0 (a budget of $0 needs a tier); "
                             f"'{next(iter(self.bands))}' starts at {bounds[0]:g}")
        for (low_name, low), (name, bound) in zip(self.bands.items(),
                                                  list(self.bands.items())[1:], strict=False):
            if bound <= low:
                raise ValueError(f"tiers rise in the order written: '{name}' starts at "
                                 f"{bound:g}, not above '{low_name}' at {low:g}")
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
    sharding_buffer_layers: Constant
    # overheads and fit
    framework_overhead_gib: Constant
    memory_margin_fraction: Constant
    usable_vram_fraction: Constant
    checkpointing_auto_min_saving: Constant
    checkpointing_time_overhead: Constant
    max_gpus_considered: Constant
    cluster_step_above_gpus: Constant
    max_consumer_gpus_per_box: Constant
    practical_consumer_gpus_per_box: Constant
    # the work and how fast it runs
    default_hours_per_year: Constant
    max_days_per_run: dict[Literal["fine-tune", "pretrain"], Constant]
    max_days_per_steady_run: dict[Literal["fine-tune", "pretrain"], Constant] | None = Field(
        default=None, description="absent (a policy recorded before it): steady work's runs on "
        "capacity held all year stretch up to the share of the year it is sized to be busy")
    reference_gpu: Reference
    reference_datacenter_gpu: Reference
    bare_size_family: Reference
    mfu: dict[MethodGroup, RangeConstant]
    fp8_mfu_factor: RangeConstant
    mfu_form_factor: dict[Form, Constant]
    rocm_mfu_factor: Constant
    scaling_efficiency: dict[Link, Constant]
    chinchilla_tokens_per_param: Constant
    flops_per_param_token: dict[MethodGroup, Constant]
    # cost
    hidden_cloud_overhead: RangeConstant
    # a run's fixed cost and spot interruptions (operators' model)
    provisioning_minutes: dict[ProviderKind, Constant]
    cluster_start_minutes: Constant
    container_image_gb: Constant
    transfer_gb_per_s: dict[ProviderKind, Constant]
    qlora_quantise_seconds_per_b: Constant
    spot_interruptions_per_instance_hour: Constant
    checkpoint_interval_hours: Constant
    frequent_checkpoint_interval_hours: Constant
    checkpoint_write_gb_per_s: Constant
    amortisation_years: Constant
    resale_fraction: dict[Form, Constant]
    electricity_usd_per_kwh: Constant
    cooling_power_factor: Constant
    maintenance_fraction_per_year: Constant
    infiniband_per_node_usd: Constant
    hours_per_year_max: Constant
    hours_per_month: Constant
    max_price_age_days: Constant
    api_output_token_share: Constant
    api_class_max_params_b: dict[Literal["small", "mid"], Constant]
    serving_tokens_per_s_per_bandwidth: Constant
    serving_peak_to_mean: Constant
    serving_operations_fte: Constant
    engineer_usd_per_year: dict[TeamRegion, Constant]
    # the programme beside compute (people, data, evaluation, rework, storage)
    programme_engineers: dict[Literal["fine-tune", "pretrain"], Constant]
    lowest_tier_programme_engineers: Constant
    data_prep_usd_per_m_tokens: dict[Literal["fine-tune", "pretrain"], RangeConstant]
    fine_tune_labelled_m_tokens_max: Constant | None = Field(
        default=None, description="absent (a policy recorded before it): every token of a "
        "fine-tune's dataset at the rate")
    evaluation_share: Constant
    rework_share: RangeConstant
    storage_usd_per_gb_month: dict[Literal["cloud", "local"], Constant]
    stored_bytes_per_token: Constant
    checkpoints_kept: Constant
    capacity_busy_target: dict[Literal["low", "high"], Constant]
    close_call_margin: Constant
    sooner_run_max_premium: Constant
    sooner_run_min_days: Constant
    sooner_run_premium_per_day: Constant | None = Field(
        default=None, description="absent (a policy recorded before it): a sooner "
        "configuration may cost sooner_run_max_premium more than the cheapest of its like, "
        "however long the slow run")
    sooner_run_premium_most: Constant | None = None
    sooner_run_days_share: Constant
    access_budget_usd_min: dict[Access, Constant]
    contract_cluster_gpus: Constant
    default_hours_per_run: Constant
    default_pretrain_runs_per_year: Constant
    # what only the rules read ({policy: NAME}); a rule author adds one here, no Python
    budget_tiers: BudgetTiers
    thresholds: dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$")], Constant] = Field(
        default_factory=dict, description="named thresholds of rule conditions and texts")
    # input limits
    batch_line_max_bytes: Constant
    price_file_rows_max: Constant
    price_file_offers_max: Constant
    gpus_per_instance_max: Constant
    price_per_gpu_hour_min_usd: Constant
    price_per_gpu_hour_max_usd: Constant

    @model_validator(mode="after")
    def _threshold_names(self) -> Policy:
        clash = sorted(set(self.thresholds) & set(type(self).model_fields))
        if clash:
            raise ValueError(f"thresholds: '{clash[0]}' is also a policy constant of its own; "
                             "a name means one number")
        return self


# ---------------------------------------------------------------- platforms
class Platform(Strict):
    """What holds the cards of an owned configuration: a desktop, workstation or server."""

    id: Id
    name: str
    forms: list[Form] = Field(min_length=1, description="GPU forms it takes")
    socket: Literal["pcie", "sxm", "oam"] = "pcie"
    max_gpus: int = Field(ge=1, le=16)
    multi_node: bool = Field(
        default=False, description="several can train one job together (InfiniBand)")
    price: PriceRange = Field(description="the platform without its GPUs")
    watts: PositiveFloat = Field(description="draw under load without the GPUs")
    watts_by_gpu: dict[str, PositiveFloat] = Field(
        default_factory=dict,
        description="the draw without the GPUs where it differs for a card (the baseboard "
                    "and switches of its generation), by GPU id")
    sources: SourceIds
    note: str | None = None

    def takes(self, gpu: Gpu) -> bool:
        """Whether it holds ``gpu`` cards: their form and their socket."""
        return gpu.form in self.forms and gpu.socket == self.socket

    def watts_for(self, gpu_id: str) -> float:
        """Its draw under load without the GPUs, holding ``gpu_id`` cards."""
        return self.watts_by_gpu.get(gpu_id, self.watts)


class PlatformFile(Strict):
    platforms: list[Platform]


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
