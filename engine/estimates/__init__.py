"""Pure estimators: memory, training compute and cost, each figure with its formula trace."""

from engine.estimates.cost import (
    api_cost_per_month,
    break_even_hours,
    cloud_cost,
    local_tco,
    purchase_cost,
    running_cost_per_hour,
)
from engine.estimates.memory import (
    MemoryEstimate,
    MemoryRequest,
    estimate_memory,
    gpus_needed,
)
from engine.estimates.shape import Shape, resolve_shape
from engine.estimates.trace import Figure
from engine.estimates.training import TrainingEstimate, estimate_training

__all__ = [
    "Figure",
    "MemoryEstimate",
    "MemoryRequest",
    "Shape",
    "TrainingEstimate",
    "api_cost_per_month",
    "break_even_hours",
    "cloud_cost",
    "estimate_memory",
    "estimate_training",
    "gpus_needed",
    "local_tco",
    "purchase_cost",
    "resolve_shape",
    "running_cost_per_hour",
]
