"""The vocabulary rules may use: every fact name with its type, allowed values and meaning.

Answer facts come from the questionnaire; derived facts are computed by ``engine.facts.build`` and
``engine.decide.sides``; candidate facts describe one hardware configuration. Rule files are checked
against this registry at load time (unknown names, wrong types, misspelt enum values).

Each derived fact has a *phase*: when in the decision it exists. Request facts exist from the
start; sized facts once the method is decided; summary facts once every candidate has been
built and scored; deployment facts once cloud kind and pricing are decided. A rule runs in the
first phase where everything it reads exists, so a rule that decides the method can only read
request facts (``engine.rules.load`` checks this when it loads the rules).

The decision axes and their options are declared in ``rules/decisions.yaml`` only: a fact whose
values are an axis' options names that axis (``options_of``), facts named after options are
made from the declared ones, and :func:`registry` is given the declared axes to fill them in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

from engine.catalog.load import Catalog
from engine.catalog.models import Form
from engine.estimates.memory import Method

FactType = Literal["number", "bool", "string", "list"]
Phase = Literal["request", "sized", "summary", "deployment"]
PHASES: tuple[Phase, ...] = ("request", "sized", "summary", "deployment")


@dataclass(frozen=True)
class FactSpec:
    """One fact: its type, the values a string fact can take, its unit and meaning."""

    name: str
    type: FactType
    description: str
    choices: tuple[str, ...] | None = None
    unit: str | None = None
    origin: Literal["answer", "derived", "candidate", "set"] = "derived"
    phase: Phase = "request"
    scales_with_work: bool = False
    """Proportional to the year's work."""
    work_level: bool = False
    """A level of the year's work (in ``work_gpu_hours_per_year`` units) a decision can turn
    on: what-if probes the answers that set the work at it."""
    options_of: str | None = None
    """The axis whose declared options are this fact's values (``choices`` then lists the
    values it takes besides them)."""
    values_of: str | None = None
    """A configuration fact whose values this one takes: that of an axis constrains
    (``field`` in decisions.yaml), whose options :func:`candidate_registry` makes this fact's
    ``options_of``."""

    def resolved(self, axes: Axes) -> FactSpec:
        """This fact with the declared options of its axis first among its choices."""
        if self.options_of is None:
            return self
        return replace(self, choices=(*axes.get(self.options_of, ()), *(self.choices or ())))


Axes = Mapping[str, Sequence[str]]
"""Axis id → its options, as ``rules/decisions.yaml`` declares them (``Rulebook.decisions``)."""


def _d(name: str, type_: FactType, description: str, unit: str | None = None,
       choices: tuple[str, ...] | None = None, phase: Phase = "request",
       scales: bool = False, options_of: str | None = None) -> FactSpec:
    return FactSpec(name, type_, description, choices, unit, "derived", phase, scales,
                    options_of=options_of)


TRAINING_METHODS: tuple[Method, ...] = ("full", "lora", "qlora")
"""The ways of training a model whose memory the request facts give, one fact each (the
method axis chooses among them)."""
_FORMS: tuple[str, ...] = get_args(Form)

REQUEST: tuple[FactSpec, ...] = (
    _d("params_b", "number", "model size", "billion parameters"),
    _d("model_name", "string", "the model (catalog id or a scaled shape)"),
    _d("base_model_named", "bool", "the team named a catalog model (not a bare size)"),
    *(_d(f"vram_{m}_gib", "number", f"peak VRAM of {m} training on one GPU", "GiB")
      for m in (*TRAINING_METHODS, "pretrain", "inference")),
    *(_d(f"fits_consumer_{m}", "bool", f"{m} fits a consumer box (≤ max cards per box)")
      for m in TRAINING_METHODS),
    *(_d(f"consumer_gpus_needed_{m}", "number", f"consumer cards needed for {m}", "GPUs")
      for m in TRAINING_METHODS),
    _d("largest_consumer_vram_gib", "number", "VRAM of the largest consumer card", "GiB"),
    _d("write_off_years", "number", "policy: years a purchase is written off over", "years"),
    _d("full_to_lora_vram_ratio", "number", "VRAM of full fine-tuning ÷ LoRA"),
    _d("is_moe", "bool", "the model is a mixture of experts"),
    _d("dev_gpu_name", "string", "local box for QLoRA development and tests: the team's own "
       "GPUs where they hold it, else the cheapest to buy"),
    _d("dev_gpu_count", "number", "cards in that development box", "GPUs"),
    _d("budget_after_dev_box_usd", "number", "what the compute budget leaves once the "
       "development box is bought (the budget itself where the team owns one)", "USD"),
    _d("dev_purchase_usd", "number", "up-front cost of that development box (0: owned)",
       "USD"),
    _d("dev_is_owned", "bool", "the development box is the team's own GPUs"),
    _d("dev_box", "string", "that box in words (\"e.g. 1× …, $2,455\" or \"your own …\")"),
    _d("api_cost_usd_month", "number", "monthly API bill for api_tokens_per_month_m",
       "USD/month"),
    _d("own_cost_usd_month", "number", "monthly cost of a model of your own: its training "
       "programme a month and serving it 24/7, operations included", "USD/month"),
    _d("own_serving_usd_month", "number", "monthly cost of serving the model yourself, 24/7, "
       "operations included", "USD/month"),
    _d("api_break_even_tokens_m", "number", "the monthly volume nearest "
       "api_tokens_per_month_m at which the API's bill and a model of your own cost the "
       "same: above it where the API costs less now, below it where your own does (serving "
       "takes whole GPUs, so it moves in steps)", "M tokens/month"),
    _d("own_training_usd_month", "number", "the training programme a month: compute at the "
       "reference rental with evaluation and failed runs, people, data, storage", "USD/month"),
    _d("training_compute_estimate_usd_year", "number", "the year's training compute rented "
       "on demand on the reference datacenter GPU", "USD/year"),
    _d("programme_engineers", "number", "engineers on the programme (answer or policy)",
       "full-time engineers"),
    _d("programme_engineers_assumed", "bool", "the engineers are the policy's default"),
    _d("programme_people_usd_year", "number", "the engineers' cost a year", "USD/year"),
    _d("programme_data_usd_year", "number", "data preparation a year", "USD/year"),
    _d("programme_beside_compute_usd_year", "number", "people, data and storage a year",
       "USD/year"),
    _d("rerun_share", "number", "evaluation and failed runs as a share of the counted runs' "
       "compute"),
    _d("compute_budget_usd", "number", "what the budget leaves for compute (all of it "
       "unless budget_covers is programme)", "USD"),
    _d("own_serving_gpus", "number", "GPUs that serving it needs", "GPUs"),
    _d("own_serving_gpu_name", "string", "their GPU"),
    _d("own_serving_run_by", "string", "who runs the served model, in words: the share of "
       "an engineer, or the team's own time where its programme counts no paid engineers"),
    _d("api_model_class", "string", "the class of hosted model it stands in for",
       choices=("small", "mid", "frontier")),
    _d("api_name", "string", "the hosted model priced"),
    _d("api_to_own_cost_ratio", "number", "API bill ÷ own model's cost (training "
       "programme and serving) a month"),
    _d("fine_tune_advised", "bool", "fine-tuning is planned, or none of the four reasons to "
       "train from scratch holds"),
    _d("scratch_reasons", "number", "how many of the four reasons to train from scratch hold"),
    _d("own_model_reasons", "string", "those reasons in words (\"proprietary data and "
       "regulated control\"), or \"none\""),
    _d("owns_gpus", "bool", "the team owns GPUs it can train on (owned_gpu)"),
    _d("owned_gpu_name", "string", "name of the GPU the team owns"),
    _d("owned_gpu_vendor", "string", "vendor of the GPU the team owns (nvidia, amd, intel)"),
    _d("owned_gpus_hold_job", "bool", "the team's own GPUs hold the job with the lightest "
       "method its answers allow (false where it owns none)"),
    _d("planned_gpu_name", "string", "name of the planned GPU"),
    _d("planned_vram_gib", "number", "VRAM of one planned GPU", "GiB"),
    _d("planned_vram_total_gib", "number", "VRAM of the planned GPUs together", "GiB"),
    _d("planned_form", "string", "form of the planned GPU", choices=_FORMS),
    _d("planned_nvlink", "bool", "the planned GPU has NVLink"),
    _d("planned_bf16", "bool", "the planned GPU supports bf16"),
    _d("planned_tdp_w", "number", "TDP of one planned GPU", "W"),
    _d("planned_total_tdp_w", "number", "TDP of all planned GPUs together", "W"),
    _d("planned_pcie_gen", "number", "PCIe generation of the planned GPU"),
    _d("planned_release_year", "number", "release year of the planned GPU"),
    _d("newest_release_year", "number", "release year of the newest GPU in the catalog"),
    _d("announced_gpu", "string", "the next GPU announced but not yet sold (name, expected "
       "date), or 'none announced'"),
)

SIZED: tuple[FactSpec, ...] = tuple(replace(spec, phase="sized") for spec in (
    _d("method_sized", "string", "the lightest method candidates are built for (pretrain when "
       "training from scratch): what the request-level fit facts speak of",
       choices=("pretrain",), options_of="method"),
    _d("method_sized_said", "string", "method_sized as a reason says it: 'qlora, the "
       "lightest method you allow', 'pretraining, the only method for training from "
       "scratch'"),
    _d("methods_considered", "string", "the methods candidates are built for, comma-separated"),
    _d("vram_needed_gib", "number", "peak VRAM on one GPU of the lightest method", "GiB"),
    _d("fits_consumer_gpu", "bool", "the lightest method fits a consumer box"),
    _d("fits_single_consumer_gpu", "bool", "the lightest method fits one consumer card"),
    _d("fits_local_box", "bool", "the lightest method fits a box (max_consumer_gpus_per_box) "
       "of the roomiest consumer or workstation card the catalog sells: a practical local "
       "configuration"),
    _d("largest_local_gpu_name", "string", "that card's short name (``RTX PRO 6000``)"),
    _d("largest_local_vram_gib", "number", "its memory", "GiB"),
    _d("consumer_gpus_needed", "number", "consumer cards needed (lightest method)", "GPUs"),
    _d("reference_datacenter_gpu_name", "string", "the policy's reference datacenter GPU"),
    _d("datacenter_gpus_needed", "number", "reference datacenter GPUs needed (lightest "
       "method)", "GPUs"),
    _d("roomiest_gpu_name", "string", "the catalog's GPU with the most memory"),
    _d("roomiest_gpu_vram_gib", "number", "its memory", "GiB"),
    _d("roomiest_gpus_needed", "number", "those GPUs needed, sharded (lightest method; absent "
       "where no count the catalog considers holds the job)", "GPUs"),
    _d("activation_share", "number", "share of the peak taken by activations (lightest "
       "method, one GPU)"),
    _d("checkpointing_on", "bool", "gradient checkpointing is on in the one-GPU estimate of the "
       "lightest method (asked for, or where it lowers the peak)"),
    _d("work_mode", "string", "how the team states its work", choices=("tokens", "hours")),
    _d("work_assumed", "bool", "the amount of work is a default, not the team's answer"),
    _d("hours_gpu_name", "string", "the GPU whose hours measure the work"),
    _d("work_gpu_hours_per_year", "number", "the year's work in GPU-hours of that GPU",
       "GPU-hours/year", scales=True),
    _d("work_flops_per_year", "number", "the year's work in model FLOPs", "FLOP/year",
       scales=True),
    _d("work_units", "number", "the year's work in the team's own unit (runs a year, or "
       "GPU-hours on its GPU)", scales=True),
    _d("work_unit", "string", "the name of that unit"),
    _d("work_description", "string", "the year's work as the team stated it"),
    _d("runs_assumed", "bool", "the number of runs is a default, not the team's answer"),
    _d("tokens_per_run_b", "number", "tokens per training run", "billion tokens"),
    _d("tokens_from", "string", "where the token count comes from",
       choices=("answer", "chinchilla")),
    _d("runs_per_year_effective", "number", "training runs a year", "runs/year"),
    _d("max_days_per_run_effective", "number", "the longest acceptable run on owned or "
       "committed capacity (steady work stretches it)", "days"),
    _d("max_days_per_run_rented", "number", "the longest acceptable run on capacity paid by "
       "the hour it runs (on demand, spot, blocks bought per run)", "days"),
    _d("run_deadline_days", "number", "the longest run the team allows: max_days_per_run, or "
       "the days to its first model (weeks_to_first_model) where shorter than that or than "
       "the policy's default; absent where neither limits a run", "days"),
    _d("max_days_per_run_default", "number", "the policy's longest run for the workload, "
       "before steady work stretches it to fill the year", "days"),
    _d("planned_vram_ratio", "number", "planned VRAM ÷ VRAM the job needs"),
    _d("planned_fits", "bool", "the job fits the planned GPUs"),
    _d("planned_gpus_needed", "number", "planned GPUs the job needs", "GPUs"),
    _d("plan_unpriced_because", "string", "why the planned GPUs may find no price for the "
       "work: no cloud that rents that many, and no purchase price in the catalog or no "
       "machine that holds them"),
))

SUMMARY: tuple[FactSpec, ...] = tuple(replace(spec, phase="summary") for spec in (
    _d("eligible_local_count", "number", "owned configurations no rule excluded"),
    _d("plan_priced", "bool", "the team's planned GPUs are priced for the work: bought, or "
       "rented at the planned count (false without a plan, or where no cloud in the catalog "
       "rents that many and no machine in it holds them)"),
    _d("eligible_consumer_local_count", "number", "owned consumer-card configurations no "
       "rule excluded (a consumer box that holds the job and does the work in time)"),
    _d("best_slices_per_gpu", "number", "MIG slices per GPU of the best eligible "
       "configuration's pool (0: whole GPUs, or no pool)"),
    _d("eligible_cloud_count", "number", "rented configurations no rule excluded"),
    _d("least_budget_ratio", "number", "the least first year's bill ÷ compute_budget_usd of a "
       "configuration no rule excluded (absent where none is left)"),
    _d("least_first_year_bill_usd", "number", "that configuration's first year's bill",
       "USD"),
    _d("least_first_year_label", "string", "that configuration, in words (``8× B200 (GCP, "
       "spot)``)"),
    _d("least_local_vram_gib", "number", "the least VRAM of an owned configuration no rule "
       "excluded (where fewer cards cannot be bought, a plan cannot be smaller)", "GiB"),
    *(item for side in ("local", "cloud") for item in (
        _d(f"best_{side}_id", "string", f"the best {side} configuration"),
        _d(f"best_{side}_gpu_name", "string", "its GPU"),
        _d(f"best_{side}_count", "number", "its GPU count", "GPUs"),
        _d(f"best_{side}_cost_usd_year", "number", "its cost for the year's work", "USD/year"),
        _d(f"best_{side}_upfront_usd", "number", "its up-front cost", "USD"),
        _d(f"best_{side}_days_per_run", "number", "days one run takes on it", "days"),
        _d(f"best_{side}_busy_hours_per_year", "number", "hours a year it is busy",
           "hours/year"),
        _d(f"best_{side}_utilisation", "number", "the share of the year it is busy"),
    )),
    _d("pricing_in_own_cloud", "bool", "the pricing facts weigh only the configurations of "
       "the hyperscaler the team runs on (one of them holds the job)"),
    _d("own_cloud_name", "string", "that hyperscaler's name (empty where the pricings are "
       "weighed on every cloud)"),
    _d("own_cloud_holds_job", "bool", "the hyperscaler the team runs on (cloud_ecosystem) "
       "sells a configuration no rule excluded, within the compute budget where another "
       "cloud's is, under far_over_budget_ratio of it where another cloud's is, and ranked "
       "above every other hyperscaler's by rule score, then cost (false where it runs on "
       "none)"),
    _d("own_cloud_over_budget", "bool", "the hyperscaler the team runs on holds the job, but "
       "every configuration it sells costs more than the compute budget in its first year, "
       "where another cloud's does not"),
    _d("own_cloud_least_first_year_usd", "number", "the least first year's bill there, "
       "evaluation and failed runs included (where own_cloud_over_budget)", "USD"),
    _d("own_cloud_dearer_than_owning", "bool", "the hyperscaler the team runs on holds the "
       "job, but the best purchase no rule excluded keeps within the compute budget and costs "
       "more than close_call_margin less for the work than any configuration it sells: the "
       "training leaves it either way (own_cloud_holds_job is then false)"),
    _d("own_cloud_least_cost_usd_year", "number", "the least cost for the work there (where "
       "own_cloud_dearer_than_owning)", "USD/year"),
    _d("owning_instead_label", "string", "that purchase, in words (``8× B200 (to buy)``)"),
    _d("owning_instead_cost_usd_year", "number", "its cost for the work", "USD/year"),
    _d("ecosystem_cloud_name", "string", "the name of the hyperscaler the team runs on "
       "(empty where it runs on none)"),
    _d("spot_to_on_demand_cost_ratio", "number", "best spot ÷ best on-demand cost for the work"),
    _d("spot_run_hours", "number", "how long a run takes on the best spot configuration, "
       "start-up and expected rework included (hours)"),
    _d("spot_saving", "number", "what the best spot configuration saves against the best "
       "on-demand one for the work, rework and start-ups included (a share)"),
    _d("reserved_to_on_demand_cost_ratio", "number",
       "the best reservation ÷ paying on demand for the work: the same offer, or the best "
       "on-demand configuration of its kind of cloud (a hyperscaler: its provider) where that "
       "costs less"),
    _d("marketplace_saving_on_specialised", "number",
       "what the best marketplace configuration saves against the best specialised one for "
       "the work (a share; negative: it costs more)"),
    _d("hyperscaler_on_demand_saving_on_specialised", "number",
       "what the best hyperscaler configuration paid on demand saves against the best "
       "specialised one paid on demand, for the work (a share; negative: it costs more)"),
    _d("hyperscaler_to_other_cost_ratio", "number",
       "best hyperscaler ÷ best other cloud cost for the work"),
    _d("hyperscaler_premium_usd_year", "number",
       "best hyperscaler − best other cloud cost for the work (negative: the hyperscaler "
       "costs less)", "USD/year"),
))

DEPLOYMENT: tuple[FactSpec, ...] = tuple(
    replace(spec, phase="deployment") for spec in (
        _d("local_candidate", "string", "the best owned configuration"),
        _d("local_gpu", "string", "its GPU id"),
        _d("local_gpu_name", "string", "its GPU"),
        _d("local_gpu_count", "number", "its cards", "GPUs"),
        _d("local_purchase_usd", "number", "its purchase price", "USD"),
        _d("local_cost_usd_year", "number", "owning it for the year's work", "USD/year"),
        _d("local_days_per_run", "number", "days one run takes on it", "days"),
        _d("local_run_length", "string", "the same in words (``12.7 days``, ``5.4 hours``)"),
        _d("local_busy_percent", "number", "the share of the year it is busy with the year's "
           "work, in per cent", "%"),
        _d("local_is_owned", "bool", "it is the team's own GPUs (owned_gpu)"),
        _d("local_verb", "string", "how the advice names having it: owning, or keeping your"),
        _d("local_cost_basis", "string", "what its cost a year counts, in words"),
        _d("cloud_candidate", "string", "the rented configuration of the decided kind and "
           "pricing"),
        _d("cloud_offer", "string", "its offer id"),
        _d("cloud_provider_name", "string", "its provider"),
        _d("cloud_gpu_name", "string", "its GPU"),
        _d("cloud_gpu_count", "number", "its GPUs", "GPUs"),
        _d("cloud_pricing", "string", "its pricing", options_of="pricing"),
        _d("cloud_cost_usd_year", "number", "renting it for the year's work", "USD/year"),
        _d("cloud_first_year_usd", "number", "its first year's bill: the year's work with "
           "evaluation and failed runs", "USD"),
        _d("cloud_usd_per_gpu_hour", "number", "its $/GPU-hour", "USD/GPU-hour"),
        _d("cloud_days_per_run", "number", "days one run takes on it", "days"),
        _d("cloud_run_length", "string", "the same in words (``12.7 days``, ``5.4 hours``)"),
        _d("own_to_rent_cost_ratio", "number", "owning ÷ renting cost for the year's work"),
        _d("rent_saving_share", "number", "what renting saves against owning for the year's "
           "work, as a share of owning (negative where renting costs more)"),
        _d("rent_sooner_worth_the_wait", "bool", "the owned configuration's runs are "
           "stretched past max_days_per_run_default by steady work, the rented one keeps within "
           "it, and renting costs more than owning by no more than the wait is worth (the "
           "premium of hardware.stretched-run-not-worth-the-wait, within the compute budget "
           "where owning is)"),
        _d("rent_sooner_extra_share", "number", "what renting then costs more than owning, as "
           "a share of owning (0 where rent_sooner_worth_the_wait is false)"),
        _d("peaks_cost_usd_year", "number", "the team's own GPUs busy up to the busy target "
           "and the rest of the work rented on the cloud configuration, by the hour: their "
           "power plus the rent (their upkeep is paid as long as they are kept)", "USD/year"),
        _d("peaks_owned_share", "number", "the share of the work the team's own GPUs do "
           "then (0-1)"),
        _d("peaks_owned_percent", "number", "the same in per cent", "%"),
        _d("peaks_owned_run_days", "number", "a run on them, in days (past the default limit "
           "only where they take a share of steady work: the policy's bound on a steady "
           "run)", "days"),
        _d("peaks_owned_run_length", "string", "the same in words (``15 hours``, "
           "``4.4 days``)"),
        _d("peaks_owned_longest_days", "number", "that bound, where it applies (steady work, "
           "no limit set by the team)", "days"),
        _d("peaks_owned_usd_year", "number", "their power then", "USD/year"),
        _d("peaks_rented_usd_year", "number", "the rent for the rest", "USD/year"),
        _d("peaks_owned_label", "string", "the team's own GPUs (``8× A100 80GB``)"),
        _d("peaks_split", "string", "how the work is split: ``hours`` (they are busy up to "
           "the busy target) or ``jobs`` (they run the jobs at once they hold, the others "
           "rented)"),
        _d("peaks_owned_jobs", "number", "jobs at once the team's own GPUs run then (0: "
           "split by hours)"),
        _d("peaks_rented_jobs", "number", "jobs at once rented then (0: split by hours)"),
        _d("peaks_rented_candidate", "string", "the configuration that rents the rest: the "
           "cloud one, or where that is a committed term the best hourly one of its kind"),
        _d("peaks_rented_label", "string", "it, in words (``8× L40S (AWS, on-demand)``)"),
        _d("longer_run_candidate", "string", "where the team set no run limit: of the "
           "configurations only the default limit keeps out that cost at least "
           "longer_run_min_saving less than the cheaper of the best owned and rented ones "
           "that meet it, the one with the shortest runs; only runs no longer than "
           "max_days_per_steady_run (nor the deadline for a first model) and within the "
           "year, owned or of the cloud kind and pricing the rules chose, scored no lower "
           "than the best of their side (absent otherwise; never the team's own GPUs)"),
        _d("longer_run_label", "string", "it, in words (``8× MI300X (TensorWave, "
           "on-demand)``)"),
        _d("longer_run_cost_usd_year", "number", "its cost for the year's work", "USD/year"),
        _d("longer_run_days", "number", "days one run takes on it", "days"),
        _d("longer_run_answer_days", "number", "those days rounded up: the max_days_per_run "
           "that lets it in", "days"),
        _d("longer_run_limit_days", "number", "the default limit that keeps it out", "days"),
        _d("longer_run_met_label", "string", "the cheaper of the best owned and rented "
           "configurations that meet the limit, in words"),
        _d("longer_run_met_cost_usd_year", "number", "its cost for the year's work", "USD/year"),
        _d("longer_run_saving_share", "number", "what it saves against that one (a share)"),
        _d("queued_owning_label", "string", "where the team's jobs at once make the best "
           "purchase dearer than renting, and the fewest of its card that do the year's work "
           "with the jobs run one at a time cost queued_owning_min_saving less than the rent "
           "and no more up front than compute_budget_usd: that purchase, in words (``3× RTX "
           "PRO 6000 (to buy)``)"),
        _d("queued_owning_count", "number", "the fewest of its card that do the year's work "
           "with the jobs run one at a time", "GPUs"),
        _d("queued_owning_cost_usd_year", "number", "what they cost for the year's work",
           "USD/year"),
        _d("queued_owning_upfront_usd", "number", "what they cost up front", "USD"),
        _d("queued_owning_busy_share", "number", "the share of the year they are busy"),
        _d("queued_owning_run", "string", "how long a run takes on them, in words"),
        _d("queued_owning_rent_cost_usd_year", "number", "what the best rented configuration "
           "costs for the year's work", "USD/year"),
        _d("vendor_limit_candidate", "string", "where the team named gpu_vendors: the "
           "cheapest configuration only that limit keeps out that costs at least "
           "vendor_limit_min_saving less than the cheaper of the best owned and rented ones "
           "(absent otherwise; never the team's own GPUs)"),
        _d("vendor_limit_label", "string", "it, in words (``8× A10G (AWS, on-demand)``)"),
        _d("vendor_limit_gpu_vendor", "string", "its GPU vendor (nvidia, amd)"),
        _d("vendor_limit_cost_usd_year", "number", "its cost for the year's work", "USD/year"),
        _d("vendor_limit_met_label", "string", "the cheaper of the best owned and rented "
           "configurations, in words"),
        _d("vendor_limit_met_cost_usd_year", "number", "its cost for the year's work",
           "USD/year"),
        _d("vendor_limit_saving_usd", "number", "what it saves against that one", "USD/year"),
        _d("vendor_limit_saving_share", "number", "what it saves against that one (a share)"),
        replace(_d("break_even_work", "number", "the year's work (in work_unit) above which "
                   "owning costs less than renting the cloud one: the local configuration, or "
                   "an eligible smaller purchase where its break-even is lower"),
                work_level=True),
        _d("payback_years", "number", "years for the purchase to pay for itself in saved rent",
           "years"),
    ))

DERIVED: tuple[FactSpec, ...] = (*REQUEST, *SIZED, *SUMMARY, *DEPLOYMENT)
"""The derived facts whatever the axes declare (:func:`option_summary` adds the rest)."""

OPTION_SUMMARY_AXES = ("pricing", "cloud_kind")
"""The axes with a summary fact per option: is it available, and its best cost."""


def option_key(option: str) -> str:
    """``on_demand`` for the option ``on-demand``: how an option appears in a fact name."""
    return option.replace("-", "_")


def option_summary(axes: Axes) -> tuple[FactSpec, ...]:
    """Per option of the pricing and cloud-kind axes: whether an eligible cloud configuration
    offers it, and the best one's cost for the year's work."""
    return tuple(replace(spec, phase="summary") for axis in OPTION_SUMMARY_AXES
                 for key in map(option_key, axes.get(axis, ())) for spec in (
        _d(f"{key}_available", "bool", f"an eligible cloud configuration is {key}"),
        _d(f"{key}_newest", "bool", f"an eligible {key} cloud configuration has a GPU of the "
           "newest generation (for pricing: in the team's own cloud where it weighs them "
           "there)"),
        _d(f"best_{key}_cost_usd_year", "number", f"the best {key} cloud configuration's cost "
           "for the year's work", "USD/year"),
        _d(f"best_{key}_first_year_usd", "number", f"the best {key} cloud configuration's "
           "first year's bill, evaluation and failed runs included", "USD"),
    ))

_CANDIDATE_ROWS: tuple[tuple[str, FactType, str, tuple[str, ...] | None, str | None], ...] = (
        ("candidate_id", "string", "configuration id", None, None),
        ("gpu", "string", "GPU id", None, None),
        ("gpu_name", "string", "GPU name", None, None),
        ("gpu_label", "string", "GPU short name", None, None),
        ("vendor", "string", "GPU vendor", ("nvidia", "amd", "intel"), None),
        ("count", "number", "GPUs in the configuration", None, "GPUs"),
        ("nodes", "number", "boxes, servers or instances", None, None),
        ("where", "string", "owned or rented", ("local", "cloud"), None),
        ("provider", "string", "cloud provider id (local: none)", None, None),
        ("provider_name", "string", "cloud provider name (local: owned)", None, None),
        ("provider_label", "string", "cloud provider short name (local: owned)", None, None),
        ("offer", "string", "cloud offer id (local: none)", None, None),
        ("instance", "string", "instance type", None, None),
        ("link", "string", "the page that sells the offer (empty for owned GPUs)", None, None),
        ("price_as_of", "string", "the date of its price (the offer's, or the GPU's purchase "
         "price; empty where none)", None, None),
        ("provider_kind", "string", "kind of provider (a cloud_kind option, or local)",
         ("local",), None),
        ("provider_ecosystem", "string", "hyperscaler ecosystem", ("none", "aws", "azure", "gcp"),
         None),
        ("regions", "string", "regions, comma-separated", None, None),
        ("market", "string", "the only market the offer is sold in (empty: any)", None, None),
        ("in_allowed_region", "bool", "sold in a country the residency answer allows", None, None),
        ("countries", "string", "countries it is sold in, comma-separated (ISO codes)", None,
         None),
        ("location", "string", "where to deploy it: the first location the residency answer "
         "allows (provider region code, city, country), 'on site' when owned", None, None),
        ("vendor_chosen", "bool", "made by a vendor the team named in gpu_vendors", None,
         None),
        ("vendor_allowed", "bool", "made by a vendor the team can use (gpu_vendors)", None,
         None),
        ("market_allowed", "bool", "not restricted to a market the team does not allow", None,
         None),
        ("smallest_shape", "number", "GPUs in the smallest instance sold (local: the count)",
         None, "GPUs"),
        ("provider_smallest_shape", "number", "GPUs in the smallest instance of this GPU the "
         "provider sells in any offer (local: the count)", None, "GPUs"),
        ("access_note", "string", "what getting access to the offer takes", None, None),
        ("multi_node", "bool", "instances can train together over a fast fabric", None, None),
        ("network", "string", "the fabric between its nodes", ("infiniband", "efa", "roce",
                                                               "ethernet"), None),
        ("platform", "string", "platform of an owned configuration", None, None),
        ("condition", "string", "bought new or used, or rented", ("new", "used", "rented"), None),
        ("platform_name", "string", "its name", None, None),
        ("form", "string", "card form", _FORMS, None),
        ("socket", "string", "card socket", ("pcie", "sxm", "oam"), None),
        ("host_cpu", "string", "instruction set of the host CPU: arm on Grace superchips "
         "(GH200, GB200), whose software must be built for aarch64", ("x86", "arm"), None),
        ("vram_gib", "number", "VRAM of one card", None, "GiB"),
        ("vram_usable_gib", "number", "VRAM of one card a job can count on "
         "(usable_vram_fraction of it)", None, "GiB"),
        ("vram_total_gib", "number", "VRAM of all cards", None, "GiB"),
        ("vram_needed_gib", "number", "peak VRAM per card at this count", None, "GiB"),
        ("vram_ratio", "number", "VRAM of all cards ÷ VRAM the job needs on one", None, None),
        ("vram_job_gib", "number", "VRAM the whole job needs on one GPU (its method, unsharded)",
         None, "GiB"),
        ("vram_headroom_ratio", "number", "VRAM of one card ÷ what the job needs per card",
         None, None),
        ("fits", "bool", "the job fits the cards' memory", None, None),
        ("gradient_checkpointing_on", "bool", "checkpointing on at this count (only where the "
         "job does not fit without it, unless the team decided)", None, None),
        ("vram_without_checkpointing_gib", "number", "peak VRAM per card without "
         "checkpointing", None, "GiB"),
        ("gpus_for_memory", "number", "fewest of these cards that hold the job", None, "GPUs"),
        ("smallest_instance_holding", "number", "fewest of these cards one instance is rented "
         "at, by any offer, that hold the job (absent: no instance does)", None, "GPUs"),
        ("smallest_instance_of_any_gpu", "number", "fewest GPUs one instance of any card of "
         "the team's vendors is rented at, by any offer, that hold the job (absent: none "
         "does)", None, "GPUs"),
        ("memory_share_of_node", "number", "the fewest of these cards that hold the job ÷ the "
         "configuration's count (a rented pool's: ÷ the GPUs of one job)", None, "fraction"),
        ("fewest_gpus_that_fit", "number", "the fewest GPUs of this placement (as it is sold or "
         "built) that hold the job", None, "GPUs"),
        ("speed_sets_count", "bool", "the count is above what memory needs: the year's work or "
         "the run limit set it", None, None),
        ("memory_sets_count", "bool", "memory sets the count: more than the fewest the "
         "placement comes as, and no more than the job needs to fit", None, None),
        ("train_method", "string", "the method this configuration is priced for",
         ("pretrain",), None),
        ("precision", "string", "the precision its speed assumes: fp8 where the team asked "
         "and the card and method allow it, else bf16", ("bf16", "fp8"), None),
        ("fp8_declined", "bool", "the team asked for FP8 and this configuration trains in "
         "BF16: its card has no FP8 tensor cores, or its method trains adapters", None, None),
        ("fp8_card", "bool", "its card has FP8 tensor cores", None, None),
        ("method_option", "string", "the method option it is (pretraining: full)", None,
         None),
        ("method_rank", "number", "0 full training, 1 LoRA, 2 QLoRA (lower: better quality)",
         None, None),
        ("better_method", "string", "the next better method that does the job on the same "
         "hardware (none: no better one)", ("none",), None),
        ("better_method_premium", "number", "how much more that method costs for the work "
         "than this one (a share: 0.1 is 10 % more)", None, None),
        ("worse_method", "string", "the next worse method that does the job on the same "
         "hardware (none: no worse one)", ("none",), None),
        ("premium_over_worse_method", "number", "how much more this one costs for the work "
         "than that worse method (a share)", None, None),
        ("is_plan", "bool", "the GPUs the team plans, at the planned count", None, None),
        ("jobs_at_once", "number", "jobs it runs at the same time (concurrent_jobs above 1: "
         "on MIG slices, whole GPUs or several GPUs a job; else 1)", None, "jobs"),
        ("holds_jobs_at_once", "bool", "it runs concurrent_jobs jobs at the same time", None,
         None),
        ("gpus_per_job", "number", "GPUs one job trains on together, exchanging gradients "
         "(all of them for one job at a time; a pool's jobs on a slice or a GPU: 1)", None,
         "GPUs"),
        ("nodes_per_job", "number", "boxes, servers or instances one job spans (all of "
         "them for one job at a time; a pool's jobs each on their own share)", None, None),
        ("always_on", "bool", "a pool that must be there whenever jobs arrive: paid for "
         "every hour of the year (owned, or rented for steady work whose jobs share GPUs; a "
         "rented pool of whole GPUs, or whose jobs come together, is paid while its jobs "
         "run)", None, None),
        ("slices_per_gpu", "number", "MIG slices one GPU is split into for the pool (0: "
         "whole GPUs)", None, None),
        ("job_gib", "number", "memory each job of the pool gets (its slice or its GPUs; 0: "
         "no pool)", None, "GiB"),
        ("mig_profile", "string", "the MIG profile each job of the pool gets (empty: whole "
         "GPUs)", None, None),
        ("pool_layout", "string", "how the pool holds its jobs, in words (empty: no pool)",
         None, None),
        ("is_owned", "bool", "the GPUs the team already owns, at their count (purchase spent)",
         None, None),
        ("owned_added", "number", "GPUs bought beside the team's own to make this count (0: "
         "none, or not a configuration that adds to them)", None, None),
        ("resale_usd", "number", "what selling the team's own GPUs would bring (0 otherwise)",
         None, "USD"),
        ("upkeep_usd_year", "number", "upkeep a year of the team's own GPUs, paid whether they "
         "train or idle (0 otherwise)", None, "USD/year"),
        ("access", "string", "how the offer is sold (a purchase: contract from "
         "contract_cluster_gpus bought, else self-serve; owned: self-serve)",
         ("self-serve", "account", "contract"), None),
        ("nvlink", "bool", "cards linked by NVLink", None, None),
        ("bf16", "bool", "cards support bf16", None, None),
        ("ecc", "bool", "cards have ECC memory", None, None),
        ("datacenter_licence", "bool", "the driver licence allows datacenter deployment", None,
         None),
        ("mig", "bool", "cards can be split into MIG instances", None, None),
        ("tdp_w", "number", "TDP of one card", None, "W"),
        ("total_tdp_w", "number", "TDP of all cards", None, "W"),
        ("release_year", "number", "release year of the card", None, None),
        ("is_newest_generation", "bool", "of the architecture of the newest GPU in the catalog",
         None, None),
        ("tflops_total", "number", "dense 16-bit TFLOPS of all cards", None, "TFLOPS"),
        ("effective_tflops", "number", "useful TFLOPS for this method (MFU, scaling)", None,
         "TFLOPS"),
        ("busy_hours_per_year", "number", "hours a year it is busy doing the work", None,
         "hours/year"),
        ("hours_needed_per_year", "number", "hours a year it must be busy for the work: "
         "training, and for a rented run its start-ups and spot rework; what within_year "
         "compares with busy_hours_cap", None, "hours/year"),
        ("busy_hours_cap", "number", "hours a year it can be busy: the year's when rented "
         "by the hour, the policy's busy target when owned or reserved", None, "hours/year"),
        ("gpu_hours_per_year", "number", "GPU-hours a year it spends on the work", None,
         "GPU-hours/year"),
        ("gpus_filled", "number", "GPUs of this kind the year's work would keep busy at the "
         "policy's high capacity target (gpu_hours_per_year ÷ its busy hours)", None, "GPUs"),
        ("utilisation", "number", "busy hours ÷ hours in a year", None, None),
        ("within_year", "bool", "no GPU is busier than the hours in a year", None, None),
        ("days_per_run", "number", "days one training run takes, start-up included", None,
         "days"),
        ("run_hours", "number", "hours one run keeps it busy training", None, "hours"),
        ("runs_per_year", "number", "runs a year", None, "runs/year"),
        ("start_up_hours", "number", "hours a rented run spends starting and finishing "
         "(provisioning, downloads, quantisation, upload)", None, "hours"),
        ("start_up_usd_per_run", "number", "what that costs a run", None, "USD"),
        ("start_up_share", "number", "the share of a run's hours, start-up included, that "
         "start-up and upload take, where each run pays its own (0 for owned GPUs, a pool's "
         "waves and capacity rented all year)", None, None),
        ("start_up_usd_year", "number", "what start-up and upload cost a year, where each run "
         "pays its own", None, "USD/year"),
        ("spot_extra_hours", "number", "expected hours a spot run loses to interruptions and "
         "checkpoints", None, "hours"),
        ("interruptions_per_run", "number", "expected spot interruptions per run", None, None),
        ("interruptions_said", "string", "those interruptions in words (``about 0.8 "
         "interruptions a run``, ``about 1 interruption in 40 runs``)", None, None),
        ("spot_extra_said", "string", "the hours they cost in words (``24 min``, ``1.6 hours``)",
         None, None),
        ("instance_longest_hours", "number", "how long the provider lets an on-demand "
         "instance run before it ends it (0: until stopped)", None, "hours"),
        ("instance_restarts", "number", "times a run stops because its instances end and "
         "starts again on new ones", None, None),
        ("outlived_count", "number", "the next smaller count, where only the life of the "
         "provider's instances kept it out (0: none)", None, "GPUs"),
        ("outlived_days", "number", "days a run would take on that count", None, "days"),
        ("sooner_than_count", "number", "the fewest GPUs that meet every requirement, where "
         "a larger instance was taken to finish a long run sooner (0: none)", None, "GPUs"),
        ("sooner_than_days", "number", "days a run would take on that count", None, "days"),
        ("sooner_premium_usd", "number", "what the larger instance costs more a year", None,
         "USD"),
        ("sooner_premium_share", "number", "that premium as a share of the fewest GPUs' cost",
         None, "fraction"),
        ("slower_count", "number", "a purchase's next smaller count, where only the run limit "
         "kept it out (0: none)", None, "GPUs"),
        ("slower_days", "number", "days a run would take on that count", None, "days"),
        ("slower_saving_usd", "number", "how much less that count costs up front", None,
         "USD"),
        ("slower_saving_share", "number", "that saving as a share of the purchase", None,
         "fraction"),
        ("queued_count", "number", "where the team's jobs at once size a purchase: the fewest "
         "of the card that do the year's work with the jobs run one at a time (0: none)", None,
         "GPUs"),
        ("queued_run", "string", "how long a run would take on that count, in words "
         "(``2.7 days``, ``25 min``)", None, None),
        ("queued_busy_share", "number", "the share of the year the runs one after another "
         "keep it busy", None, "fraction"),
        ("queued_saving_usd", "number", "how much less that count costs up front", None,
         "USD"),
        ("queued_saving_share", "number", "that saving as a share of the purchase", None,
         "fraction"),
        ("queued_cost_usd_year", "number", "what that count costs for the year's work",
         None, "USD/year"),
        ("commitment_discount_max", "number", "the most the provider's quoted commitments "
         "take off this on-demand price (0: none sold)", None, "fraction"),
        ("commitment_how", "string", "how those commitments are bought", None, None),
        ("commitment_saving_max_usd", "number", "the most such a commitment could save on the "
         "year's work", None, "USD/year"),
        ("billed_hours_per_year", "number", "hours a year it is paid for", None, "hours/year"),
        ("cost_usd_per_run", "number", "cost of one run", None, "USD"),
        ("meets_deadline", "bool", "one run finishes within the longest acceptable run", None,
         None),
        ("run_limit_days", "number", "the longest acceptable run on this configuration: "
         "max_days_per_run_effective owned or committed, max_days_per_run_rented paid by the "
         "hour it runs", None, "days"),
        ("run_limit_share", "number", "one run's length (start-up and expected spot rework "
         "included) as a share of the longest acceptable run", None, "fraction"),
        ("pricing", "string", "how it is paid for (a pricing option, or purchase: owned, "
         "bought or the team's own, is_owned)", ("purchase",), None),
        ("reserved_months", "number", "term of a reserved price (0: none)", None, "months"),
        ("reserved_days", "number", "days a reserved block bought for each run comes in (an "
         "AWS Capacity Block: 1; 0: none)", None, "days"),
        ("usd_per_gpu_hour", "number", "$/GPU-hour (owned: electricity)", None, "USD/GPU-hour"),
        ("per_hour_usd", "number", "cost per busy hour of the whole configuration", None,
         "USD/hour"),
        ("upfront_usd", "number", "up-front cost (owned: purchase)", None, "USD"),
        ("fixed_usd_year", "number", "cost a year whatever the work (owned: write-off and "
         "upkeep; reserved: the term)", None, "USD/year"),
        ("cost_usd_year", "number", "cost for the year's work", None, "USD/year"),
        ("first_year_bill_usd", "number", "first year's bill: up front, or rented compute "
         "with evaluation and failed runs", None, "USD"),
        ("over_budget", "bool", "first year's bill exceeds compute_budget_usd", None, None),
        ("budget_ratio", "number", "first year's bill ÷ compute_budget_usd", None, None),
)
_VALUES_OF = {"provider_kind": "provider_kind", "pricing": "pricing",
              "method_option": "method_option", "train_method": "method_option",
              "better_method": "method_option", "worse_method": "method_option"}
"""Configuration facts that take the options of the axis constraining a fact (their own, or
the method option they are priced for or rank against), besides their own ``choices``: which
axis that is, decisions.yaml says. Not ``where``: deployment constrains it, but a
configuration is owned or rented (local or cloud) whatever the options are (hybrid rents)."""
CANDIDATE: tuple[FactSpec, ...] = tuple(
    FactSpec(name, type_, description, choices, unit, "candidate", "sized",
             values_of=_VALUES_OF.get(name))
    for name, type_, description, choices, unit in _CANDIDATE_ROWS
)
RANKED: tuple[FactSpec, ...] = (
    FactSpec("cost_vs_cheapest", "number", "cost for the work ÷ the cheapest eligible "
             "configuration's", origin="candidate", phase="summary"),
    FactSpec("cost_vs_cheapest_same_side", "number", "cost for the work ÷ the cheapest "
             "eligible one on its side (owned or rented)", origin="candidate", phase="summary"),
    FactSpec("cost_vs_cheapest_like", "number", "cost for the work ÷ the cheapest eligible "
             "one of its like (its GPU vendor; owned, bought new or used as it is, or rented "
             "at the same pricing from the same kind of cloud, the same provider among "
             "hyperscalers)",
             origin="candidate", phase="summary"),
    FactSpec("cost_vs_other_vendor", "number", "cost for the work ÷ the cheapest eligible "
             "one of another GPU vendor of its like (same side, pricing and kind of provider, the "
             "same provider among hyperscalers; else on its side): what a switch of software "
             "stack saves",
             origin="candidate", phase="summary"),
    FactSpec("saving_vs_other_vendor_usd", "number", "that cheapest configuration's cost "
             "for the work less this one's, a year (negative: this one costs more)",
             unit="USD/year", origin="candidate", phase="summary"),
    FactSpec("extra_vs_specialised_usd", "number", "for a hyperscaler's configuration, its "
             "cost for the work less the cheapest eligible specialised cloud configuration's "
             "of its GPU vendor, paid the same way and no harder to get, a year (negative: "
             "this one costs less; absent for others or where none is eligible)",
             unit="USD/year", origin="candidate", phase="summary"),
    FactSpec("cost_vs_specialised", "number", "for a hyperscaler's configuration, its cost "
             "for the work ÷ that specialised configuration's (absent where there is none)",
             origin="candidate", phase="summary"),
    FactSpec("cheapest_specialised_label", "string", "that specialised configuration, as "
             "the advice names it (8× B200 (Lambda, on-demand); empty where there is none)",
             origin="candidate", phase="summary"),
    FactSpec("self_serve_cost_ratio", "number", "for a configuration sold by account (a "
             "quota request or an account review, days), the cheapest eligible one of its like "
             "and GPU vendor sold by card ÷ this one's cost (absent for others and where there "
             "is none)", origin="candidate", phase="summary"),
    FactSpec("self_serve_extra_usd", "number", "that configuration sold by card's cost for "
             "the work less this one's, a year (absent where the ratio is)", unit="USD/year",
             origin="candidate", phase="summary"),
    FactSpec("cheapest_self_serve_label", "string", "that configuration sold by card, as the "
             "advice names it (empty where there is none)", origin="candidate",
             phase="summary"),
    FactSpec("provider_least_cost_usd_year", "number", "for a rented configuration, the "
             "least any eligible configuration of its provider costs for the year's work, "
             "whatever its count or pricing (absent for owned ones and where none is "
             "eligible)", unit="USD/year", origin="candidate", phase="summary"),
    FactSpec("spot_instead_saving", "number", "for a configuration rented on demand, what the "
             "cheapest eligible spot configuration of the same provider saves against it, as "
             "a share of its cost (absent for others and where there is none)",
             origin="candidate", phase="summary"),
    FactSpec("spot_instead_cost_usd_year", "number", "that spot configuration's cost for the "
             "work (absent where the saving is)", unit="USD/year", origin="candidate",
             phase="summary"),
    FactSpec("spot_instead_saving_usd", "number", "what it saves a year (absent where the "
             "share is)", unit="USD/year", origin="candidate", phase="summary"),
    FactSpec("spot_instead_label", "string", "that spot configuration, as the advice names "
             "it (empty where there is none)", origin="candidate", phase="summary"),
    FactSpec("open_cloud_available", "bool", "an eligible rented configuration sold by card "
             "or by account (not only under a sales contract) does the work",
             origin="candidate", phase="summary"),
    FactSpec("dominated_same_side", "bool", "an eligible configuration on its side (owned or "
             "rented) costs no more for the work and finishes a run sooner", origin="candidate",
             phase="summary"),
    FactSpec("single_node_premium", "number", "for a configuration of several nodes, what the "
             "cheapest eligible single-node one of the same GPU vendor on its side costs more, "
             "as a share (negative where it costs less)", origin="candidate", phase="summary"),
    FactSpec("single_gpu_premium", "number", "for a configuration whose job trains on "
             "several GPUs together, what the cheapest eligible one alike (same GPU vendor, "
             "side, kind of provider and pricing) with one GPU a job, a method at least as "
             "good and a run no longer costs more, as a share (negative where it costs less; "
             "absent where there is none)", origin="candidate", phase="summary"),
    FactSpec("held_vs_cost", "number", "what the cheapest eligible configuration held all "
             "year (owned, or committed for months) costs for the work ÷ this one's (absent "
             "where none is eligible)", origin="candidate", phase="summary"),
    FactSpec("sooner_alike_days", "number", "for a run paid by the hour that takes days, the "
             "shortest run among eligible configurations of its like and GPU vendor trained "
             "with a method at least as good, on one instance, within sooner_run_max_premium "
             "of the cheapest of them (where that one's run is long, within a premium that "
             "grows with this one's days: sooner_run_premium_per_day), where at most "
             "sooner_run_days_share of this one's (0: none)", origin="candidate",
             phase="summary"),
    FactSpec("sooner_alike_cost_ratio", "number", "that sooner configuration's cost for the "
             "work ÷ this one's (absent where there is none)", origin="candidate",
             phase="summary"),
    FactSpec("within_default_days", "number", "for a configuration held all year whose run "
             "steady work stretched past the workload's default limit, the run of the cheapest "
             "eligible configuration on its side (owned or rented) whose runs keep within that "
             "default, trained with a method at least as good, where it costs at most "
             "sooner_run_premium_per_day a day of this one's run more (within "
             "sooner_run_max_premium and sooner_run_premium_most; 0: none)", unit="days",
             origin="candidate", phase="summary"),
    FactSpec("within_default_cost_ratio", "number", "that configuration's cost for the work "
             "÷ this one's (absent where there is none)", origin="candidate", phase="summary"),
    FactSpec("within_default_label", "string", "that configuration, as the advice names it "
             "(empty where there is none)", origin="candidate", phase="summary"),
    FactSpec("sooner_than_alike_label", "string", "the cheapest configuration of this "
             "one's like that this one marked down as slow (sooner_alike_days), as the "
             "advice names it (empty where there is none)", origin="candidate",
             phase="summary"),
    FactSpec("sooner_than_alike_days", "number", "days a run takes on it (0: none)",
             unit="days", origin="candidate", phase="summary"),
    FactSpec("sooner_than_alike_saving_usd", "number", "what it would cost less a year for "
             "the work (absent where there is none)", unit="USD/year", origin="candidate",
             phase="summary"),
    FactSpec("sooner_than_alike_saving_share", "number", "that saving ÷ this one's cost for "
             "the work (absent where there is none)", origin="candidate", phase="summary"),
    FactSpec("better_method_alike", "string", "the better training method (full over LoRA "
             "over QLoRA) of the cheapest eligible configuration of this one's like and GPU "
             "vendor trained with one ('none' where there is none)", origin="candidate",
             phase="summary"),
    FactSpec("better_method_alike_premium", "number", "what that configuration costs more "
             "for the work than this one, as a share (negative where it costs less; absent "
             "where there is none)", origin="candidate", phase="summary"),
    FactSpec("better_method_alike_cost_said", "string", "that premium in words, read before "
             "this one's method (``3% more than``, ``2% less than``, ``about the same as``; "
             "empty where there is none)", origin="candidate", phase="summary"),
)
"""Candidate facts known once the other candidate rules have excluded what they exclude."""

def decision_facts(early: Sequence[str]) -> tuple[FactSpec, ...]:
    """The choices of the axes decided before candidates are built (``phase: 1`` in
    ``decisions.yaml``), visible to candidate rules. The other axes are decided from the
    scored candidates, so candidate rules cannot read them: the pick follows them instead."""
    return tuple(FactSpec(f"{axis}_choice", "string", f"the decided {axis} option", None, None,
                          "candidate", "sized", options_of=axis) for axis in early)


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


def registry(catalog: Catalog, axes: Axes) -> dict[str, FactSpec]:
    """Every fact a request rule may read (answers and derived), for the declared axes."""
    return {s.name: s.resolved(axes)
            for s in (*answer_specs(catalog), *DERIVED, *option_summary(axes))}


def candidate_registry(catalog: Catalog, axes: Axes, early: Sequence[str],
                       fields: Mapping[str, str]) -> dict[str, FactSpec]:
    """Every fact a candidate rule may read: candidate fields (those an axis constrains, by
    ``fields``, taking its options), the choices of the ``early`` axes (decided before
    candidates exist), and the request facts known by then."""
    request = {name: spec for name, spec in registry(catalog, axes).items()
               if spec.phase in ("request", "sized")}
    axis_of = {fact: axis for axis, fact in fields.items()}
    configuration = (replace(s, options_of=axis_of.get(s.values_of)) if s.values_of else s
                     for s in CANDIDATE)
    return {**request, **{s.name: s.resolved(axes)
                          for s in (*configuration, *RANKED, *decision_facts(early))}}
