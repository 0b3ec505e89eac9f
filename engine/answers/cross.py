"""Rules that span two answers, written once: checked on a whole set of answers (files,
``--set``, batch lines) and, as soon as every answer a rule reads is settled, by the
questionnaire at the question that completes it (so a missing size is refused at the size
question, not seventeen questions later)."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from typing import Any, NamedTuple

Values = Mapping[str, Any]


class CrossCheck(NamedTuple):
    """One rule over several answers: the answers it reads, the one blamed, the problem."""

    reads: frozenset[str]
    blames: str
    problem: Callable[[Values], str | None]


def _model_twice(v: Values) -> str | None:
    if v.get("model") is not None and v.get("model_params_b") is not None:
        return "give either model or model_params_b, not both"
    return None


def _no_model(v: Values) -> str | None:
    if v.get("model") is None and v.get("model_params_b") is None:
        return "a catalog model id or model_params_b is required"
    return None


def _work_twice(v: Values) -> str | None:
    if v.get("training_tokens_b") is not None and v.get("hours_per_year") is not None:
        return ("give the work as training_tokens_b (with runs_per_year) or as hours_per_year "
                "(with hours_gpu), not both")
    return None


def _work_missing(v: Values) -> str | None:
    if (v.get("training_tokens_b") is None and v.get("hours_per_year") is None
            and not v.get("work_unknown")):
        return ("the amount of work is required: give training_tokens_b (tokens a run, with "
                "runs_per_year) or hours_per_year (GPU-hours a year), or work_unknown: true to "
                "go on with the policy's assumed work, said as such at the top of the advice")
    return None


def _unknown_with_work(v: Values) -> str | None:
    if v.get("work_unknown") and (v.get("training_tokens_b") is not None
                                  or v.get("hours_per_year") is not None):
        return "only applies when no amount of work is given (training_tokens_b, hours_per_year)"
    return None


def _runs_without_work(v: Values) -> str | None:
    if (v.get("runs_per_year") is not None and v.get("training_tokens_b") is None
            and v.get("hours_per_year") is None):
        return "only applies with training_tokens_b (tokens per run) or hours_per_year"
    return None


def _run_length_without_hours(v: Values) -> str | None:
    if v.get("hours_per_run") is not None and v.get("hours_per_year") is None:
        return "only applies with hours_per_year (the length of a run in those hours)"
    return None


def _runs_twice(v: Values) -> str | None:
    length, runs = v.get("hours_per_run"), v.get("runs_per_year")
    if length is None or runs is None:
        return None
    said = "give the runs as hours_per_run or as runs_per_year, not both"
    if v.get("hours_per_year") is None:  # checked numbers, as _run_longer_than_year reads
        # what the team means: the year's hours, in runs of that length
        said += (f"; {runs:g} runs of {length:g} hours are hours_per_year: "
                 f"{runs * length:g} with hours_per_run: {length:g}")
    return said


def _run_longer_than_year(v: Values) -> str | None:
    hours, run = v.get("hours_per_year"), v.get("hours_per_run")
    if hours is not None and run is not None and run > hours:
        return f"a run of {run:g} hours is more than the {hours:g} hours a year of work"
    return None


def _deadline_unchecked(v: Values) -> str | None:
    if (v.get("max_days_per_run") is not None and v.get("hours_per_year") is not None
            and v.get("hours_per_run") is None and v.get("runs_per_year") is None):
        return ("with the work in hours_per_year, a longest run can only be checked against "
                "the length of a run: give hours_per_run (hours one run keeps that GPU busy) "
                "or runs_per_year")
    return None


def _more_jobs_than_runs(v: Values) -> str | None:
    jobs, runs = v.get("concurrent_jobs"), v.get("runs_per_year")
    if runs is not None and jobs is not None and jobs > max(1, math.ceil(runs)):
        return (f"{jobs:,} jobs at once take at least {jobs:,} runs a year, and runs_per_year "
                f"is {runs:g}: count every job's run in runs_per_year, or give fewer jobs "
                "at once")
    return None


def _more_jobs_than_hours_make_runs(v: Values) -> str | None:
    jobs, hours, run = v.get("concurrent_jobs"), v.get("hours_per_year"), v.get("hours_per_run")
    if jobs is None or hours is None or not run or run > hours:
        return None
    runs = hours / run
    if jobs > max(1, math.ceil(runs - 1e-9)):
        return (f"{jobs:,} jobs at once take at least {jobs:,} runs a year, and "
                f"hours_per_year over hours_per_run is {runs:,.3g} runs: give the hours of "
                "every job's run in hours_per_year, shorter runs, or fewer jobs at once")
    return None


def _gpu_without_hours(v: Values) -> str | None:
    if v.get("hours_gpu") is not None and v.get("hours_per_year") is None:
        return "only applies with hours_per_year"
    return None


def _regions_missing(v: Values) -> str | None:
    if v.get("data_residency") == "region" and not v.get("allowed_regions"):
        return "data_residency is region: list at least one region"
    return None


def _regions_unused(v: Values) -> str | None:
    residency = v.get("data_residency")
    if v.get("allowed_regions") and residency != "region":
        return f"only applies when data_residency is region (it is {residency!r})"
    return None


def _adapter_for_pretrain(v: Values) -> str | None:
    method = v.get("method")
    if v.get("workload") == "pretrain" and method in ("lora", "qlora"):
        return (f"{method} only applies to fine-tuning: a pretrain trains every weight "
                "(full or auto)")
    return None


def _count_without_card(card: str, count: str) -> Callable[[Values], str | None]:
    def problem(v: Values) -> str | None:
        if v.get(card) is None and v.get(count) not in (None, 1):
            return f"only applies with {card}: name the card these {v.get(count)} GPUs are"
        return None
    return problem


def _check(reads: str, blames: str, problem: Callable[[Values], str | None]) -> CrossCheck:
    return CrossCheck(frozenset(reads.split()), blames, problem)


CROSS_CHECKS: tuple[CrossCheck, ...] = (
    _check("model model_params_b", "model_params_b", _model_twice),
    _check("model model_params_b", "model", _no_model),
    _check("training_tokens_b hours_per_year", "hours_per_year", _work_twice),
    _check("training_tokens_b hours_per_year work_unknown", "work_unknown",
           _unknown_with_work),
    _check("hours_per_run runs_per_year", "runs_per_year", _runs_twice),
    _check("training_tokens_b hours_per_year runs_per_year", "runs_per_year",
           _runs_without_work),
    _check("hours_per_year hours_per_run", "hours_per_run", _run_length_without_hours),
    _check("hours_per_year hours_per_run", "hours_per_run", _run_longer_than_year),
    _check("max_days_per_run hours_per_year hours_per_run runs_per_year", "max_days_per_run",
           _deadline_unchecked),
    _check("hours_per_year hours_gpu", "hours_gpu", _gpu_without_hours),
    _check("concurrent_jobs runs_per_year", "concurrent_jobs", _more_jobs_than_runs),
    _check("concurrent_jobs hours_per_year hours_per_run", "concurrent_jobs",
           _more_jobs_than_hours_make_runs),
    _check("data_residency allowed_regions", "allowed_regions", _regions_missing),
    _check("data_residency allowed_regions", "allowed_regions", _regions_unused),
    _check("training_tokens_b hours_per_year work_unknown", "hours_per_year", _work_missing),
    _check("workload method", "method", _adapter_for_pretrain),
    _check("owned_gpu owned_gpu_count", "owned_gpu_count",
           _count_without_card("owned_gpu", "owned_gpu_count")),
    _check("planned_gpu planned_gpu_count", "planned_gpu_count",
           _count_without_card("planned_gpu", "planned_gpu_count")),
)


def first_problem(values: Values, *, settled: Collection[str] | None = None,
                  involving: str | None = None) -> tuple[str, str] | None:
    """The first rule the values break, as (blamed answer, message), or None.

    With ``settled``, only rules whose answers are all settled are checked; with
    ``involving``, only rules that read that answer.
    """
    for check in CROSS_CHECKS:
        if settled is not None and not check.reads <= set(settled):
            continue
        if involving is not None and involving not in check.reads:
            continue
        if (message := check.problem(values)) is not None:
            return check.blames, message
    return None
