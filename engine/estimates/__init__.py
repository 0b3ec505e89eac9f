"""Pure estimators: memory, work, throughput and cost, each figure with its formula trace."""

from engine.estimates.cost import (
    CostLine,
    Owning,
    api_cost_per_month,
    break_even,
    owning,
    owning_cost,
    purchase_cost,
    renting_cost,
    running_cost_per_hour,
)
from engine.estimates.figure import Figure
from engine.estimates.memory import (
    MemoryEstimate,
    MemoryRequest,
    estimate_memory,
    gpus_needed,
)
from engine.estimates.shape import Shape, resolve_shape
from engine.estimates.training import TrainingEstimate, estimate_training
from engine.estimates.workload import Workload, workload

__all__ = [
    "CostLine",
    "Figure",
    "MemoryEstimate",
    "MemoryRequest",
    "Owning",
    "Shape",
    "TrainingEstimate",
    "Workload",
    "api_cost_per_month",
    "break_even",
    "estimate_memory",
    "estimate_training",
    "gpus_needed",
    "owning",
    "owning_cost",
    "purchase_cost",
    "renting_cost",
    "resolve_shape",
    "running_cost_per_hour",
    "workload",
]
