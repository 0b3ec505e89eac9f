"""The training programme's cost a year, as the cost guide counts it: the compute of the runs
the team counted, beside evaluation, failed and repeated runs, the people, the data and its
storage.

The hardware pick is decided on the compute of the counted runs alone (every configuration
does the same work); this module adds what every configuration shares. Each part is a
:class:`~engine.estimates.figure.Figure` with its formula, inputs and sources, and says
whether it rests on the team's answer or on the policy's default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from engine.catalog.models import MethodGroup, Policy, Provider
from engine.estimates.figure import Figure, figure
from engine.estimates.runs import checkpoint_gb, trained_gb, weights_gb
from engine.estimates.shape import Shape
from engine.estimates.workload import Workload

Part = Literal["compute", "evaluation", "rework", "people", "data", "storage"]
COMPUTE_PARTS: tuple[Part, ...] = ("compute", "evaluation", "rework")
"""The parts that are GPU time: what ``compute_share`` counts."""
GB = 1e9


@dataclass(frozen=True)
class ProgrammePart:
    """One line of the programme's bill."""

    part: Part
    usd_per_year: Figure
    assumed: bool
    """True where the figure rests on the policy's default, not the team's answer."""

    def record(self) -> dict[str, Any]:
        """The JSON form (``estimates.programme.parts``)."""
        line = self.usd_per_year
        return {"part": self.part, "usd_per_year": round(line.value, 2),
                "assumed": self.assumed, "formula": line.formula,
                "inputs": dict(line.inputs), "sources": list(line.sources)}


@dataclass(frozen=True)
class Shared:
    """The parts every configuration shares, known before any is priced: people, data, and
    the shares of compute that evaluation and failed runs add."""

    people: ProgrammePart
    data: ProgrammePart
    evaluation_share: float
    rework_share: float
    rework_assumed: bool
    data_gb: float
    """What the data and the models kept take in storage, GB."""
    base_gb: float
    """The base model's weights a fine-tune starts from, GB: stored where owned GPUs train
    (a rented run downloads them at its start-up instead)."""

    @property
    def rerun_share(self) -> float:
        """Compute beyond the counted runs, as a share of theirs."""
        return self.evaluation_share + self.rework_share


def shared_parts(*, workload_kind: str, engineers: float | None, region: str,
                 dataset_prep_usd: float | None, rework_share: float | None,
                 shape: Shape, work: Workload, policy: Policy,
                 lowest_tier: bool = False) -> Shared:
    """People, data and the re-run shares for a team's answers and the work of its method;
    ``lowest_tier``: its budget is in the lowest budget tier, so what it does not say is
    assumed as a hobbyist's (``lowest_tier_programme_engineers``)."""
    kind: Literal["fine-tune", "pretrain"] = ("pretrain" if workload_kind == "pretrain"
                                              else "fine-tune")
    default_fte = (policy.lowest_tier_programme_engineers if lowest_tier
                   else policy.programme_engineers[kind])
    fte = default_fte.value if engineers is None else engineers
    salary = policy.engineer_usd_per_year[region]  # type: ignore[index]
    people = figure(fte * salary.value, "USD/year",
                    "engineers (full-time equivalents) × fully loaded $ a year where they work",
                    [*(default_fte.sources if engineers is None else ()), *salary.sources],
                    engineers=fte, usd_per_engineer_year=salary.value, region=region)
    tokens_m = tokens_per_run_m(work)
    if dataset_prep_usd is not None:
        data = figure(dataset_prep_usd, "USD/year", "your answer (dataset_prep_usd)", [],
                      tokens_per_run_m=tokens_m)
    else:
        data = _data_prep(kind, tokens_m, policy, lowest_tier)
    rework = policy.rework_share.expected if rework_share is None else rework_share
    stored = (tokens_m * 1e6 * policy.stored_bytes_per_token.value / GB
              + policy.checkpoints_kept.value * kept_gb(shape, work.method, policy))
    return Shared(people=ProgrammePart("people", people, engineers is None),
                  data=ProgrammePart("data", data, dataset_prep_usd is None),
                  evaluation_share=policy.evaluation_share.value, rework_share=rework,
                  rework_assumed=rework_share is None, data_gb=stored,
                  base_gb=weights_gb(shape, work.method, policy))


def _data_prep(kind: Literal["fine-tune", "pretrain"], tokens_m: float, policy: Policy,
               lowest_tier: bool) -> Figure:
    """What preparing one run's dataset costs a year: a fine-tune's labelled examples at
    the policy's rate up to ``fine_tune_labelled_m_tokens_max``, its tokens beyond that
    cleaned or generated at the low end; a pretrain's corpus at its rate; the low end
    throughout for a budget of the lowest tier."""
    rate = policy.data_prep_usd_per_m_tokens[kind]
    ranges = {"low_usd_per_m_tokens": rate.low, "high_usd_per_m_tokens": rate.high}
    cap = policy.fine_tune_labelled_m_tokens_max
    if lowest_tier or kind == "pretrain" or cap is None or tokens_m <= cap.value:
        per_m = rate.low if lowest_tier else rate.expected
        return figure(tokens_m * per_m, "USD/year",
                      "million tokens of one run (its dataset, prepared once a year) × $ per "
                      "million tokens prepared" + (" (the low end: a budget of the lowest "
                                                   "tier)" if lowest_tier else ""),
                      [*rate.sources,
                       *(policy.lowest_tier_programme_engineers.sources if lowest_tier
                         else ())],
                      tokens_per_run_m=tokens_m, usd_per_m_tokens=per_m, **ranges)
    rest = tokens_m - cap.value
    return figure(cap.value * rate.expected + rest * rate.low, "USD/year",
                  "the labelled million tokens of one run's dataset (prepared once a year; at "
                  "most the policy's) × $ per million tokens prepared + the rest, cleaned or "
                  "generated, × the low end", [*rate.sources, *cap.sources],
                  tokens_per_run_m=tokens_m, usd_per_m_tokens=rate.expected, **ranges,
                  labelled_m_tokens=cap.value, other_m_tokens=rest)


def kept_gb(shape: Shape, method: MethodGroup, policy: Policy) -> float:
    """GB of one model kept all year: a pretrain's resumable checkpoint (weights and
    optimizer states, to train it further); a fine-tune's trained weights or adapters, whose
    optimizer states go when the run has finished."""
    if method == "pretrain":
        return checkpoint_gb(shape, method, policy)
    return trained_gb(shape, method, policy)


def tokens_per_run_m(work: Workload) -> float:
    """Million tokens one run trains on: the team's answer, else its FLOPs ÷ FLOPs a token."""
    if work.tokens_per_run_b is not None:
        return work.tokens_per_run_b * 1e3
    return work.flops_per_run / work.flops_per_token / 1e6 if work.flops_per_token else 0.0


def storage_price(provider: Provider | None, local: bool, policy: Policy) -> Figure:
    """$ per GB-month where the data lives all year: the provider's listed storage where it
    costs no more than object storage (the policy's cloud default), else object storage,
    from which runs read as operators do (a GPU cloud's filesystem at $0.20 is not where a
    corpus waits between runs); on-premises, the policy's on-premises figure."""
    default = policy.storage_usd_per_gb_month["local" if local else "cloud"]
    if provider is not None and provider.storage is not None:
        s = provider.storage
        if s.usd_per_gb_month <= default.value:
            return figure(s.usd_per_gb_month, "USD/GB-month", f"{provider.name}: {s.product}",
                          s.sources, provider=provider.id)
        return figure(default.value, "USD/GB-month",
                      f"object storage (policy default), below {provider.name}'s {s.product} "
                      f"at ${s.usd_per_gb_month:.2f}", [*default.sources, *s.sources],
                      provider=provider.id, provider_usd_per_gb_month=s.usd_per_gb_month)
    return figure(default.value, "USD/GB-month",
                  "on-premises storage" if local else "object storage (policy default)",
                  default.sources)


def storage_part(shared: Shared, price: Figure, policy: Policy, *,
                 rented: bool) -> ProgrammePart:
    """The data (raw and tokenised) and the models kept, stored all year, with the base
    weights where owned GPUs train (``rented``: each run downloads them at start-up)."""
    base = 0.0 if rented else shared.base_gb
    gb = shared.data_gb + base
    return ProgrammePart("storage", figure(
        gb * price.value * 12, "USD/year",
        "GB stored (tokens × bytes a token + models kept × GB a model (a pretrain's "
        "resumable checkpoint; a fine-tune's trained weights or adapters) + the base "
        "weights on owned GPUs (a rented run downloads them at start-up)) × $ per GB-month "
        "× 12", [*price.sources, *policy.stored_bytes_per_token.sources,
                 *policy.checkpoints_kept.sources],
        gb=gb, base_weights_gb=base, usd_per_gb_month=price.value, where=price.formula),
        True)


def rerun_parts(shared: Shared, compute: Figure, policy: Policy) -> tuple[ProgrammePart, ...]:
    """Evaluation and failed or repeated runs, as shares of the counted runs' compute."""
    evaluation = figure(compute.value * shared.evaluation_share, "USD/year",
                        "compute of the counted runs × evaluation share",
                        policy.evaluation_share.sources, compute_usd_year=compute.value,
                        share=shared.evaluation_share)
    rework = figure(compute.value * shared.rework_share, "USD/year",
                    "compute of the counted runs × share for failed, repeated and sweep runs",
                    policy.rework_share.sources if shared.rework_assumed else [],
                    compute_usd_year=compute.value, share=shared.rework_share)
    return (ProgrammePart("evaluation", evaluation, True),
            ProgrammePart("rework", rework, shared.rework_assumed))


@dataclass(frozen=True)
class Programme:
    """The programme's bill a year: every part, their total and compute's share of it."""

    parts: tuple[ProgrammePart, ...]

    @property
    def total(self) -> float:
        """$ a year, every part."""
        return sum(p.usd_per_year.value for p in self.parts)

    @property
    def compute(self) -> float:
        """$ a year of GPU time: the counted runs, evaluation and failed runs."""
        return sum(p.usd_per_year.value for p in self.parts if p.part in COMPUTE_PARTS)

    @property
    def compute_share(self) -> float:
        """Compute's share of the total (1 where nothing else costs)."""
        return self.compute / self.total if self.total > 0 else 1.0

    def part(self, name: Part) -> ProgrammePart:
        """One part by name."""
        return next(p for p in self.parts if p.part == name)

    def record(self) -> dict[str, Any]:
        """The JSON form (``estimates.programme``)."""
        return {"total_usd_per_year": round(self.total, 2),
                "compute_usd_per_year": round(self.compute, 2),
                # to four significant digits: a job of cents beside a year of people is a
                # share of a few millionths, not 0 (tidy drops what is under 1e-4)
                "compute_share": float(f"{self.compute_share:.4g}"),
                "parts": [p.record() for p in self.parts]}


def programme(shared: Shared, compute: Figure, storage: Figure, policy: Policy, *,
              rented: bool) -> Programme:
    """The whole bill a year around ``compute`` (the counted runs on one configuration,
    ``rented`` or owned), its data stored at ``storage`` $ per GB-month."""
    return Programme((ProgrammePart("compute", compute, False),
                      *rerun_parts(shared, compute, policy), shared.people, shared.data,
                      storage_part(shared, storage, policy, rented=rented)))


def months(value: float) -> float:
    """A yearly figure a month."""
    return value / 12 if math.isfinite(value) else value
