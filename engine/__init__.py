"""gpu-advisor: rule-based, explained advice on GPUs for training and fine-tuning LLMs."""

__version__ = "0.1.0"

from engine.answers import Answers, load_answers
from engine.catalog import Catalog, load_catalog
from engine.errors import EngineError, InputError

__all__ = [
    "Answers",
    "Catalog",
    "EngineError",
    "InputError",
    "__version__",
    "load_answers",
    "load_catalog",
]
