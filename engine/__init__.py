"""gpu-advisor: rule-based, explained advice on GPUs for training and fine-tuning LLMs.

    import engine
    decision = engine.recommend({"model": "llama-3.1-8b", "hours_per_year": 2000})
    decision.hardware.choice, decision.decisions["deployment"].choice
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from engine.version import __version__

if TYPE_CHECKING:
    from engine.answers.model import Answers, load_answers, validate_answers
    from engine.catalog import Catalog, load_catalog
    from engine.decide.decision import Decision
    from engine.decide.engine import Engine, load_engine, recommend
    from engine.errors import EngineError, InputError

# Imported on first use (PEP 562), so that importing the package costs nothing before the
# command line has set up the process (see engine.cli).
_EXPORTS = {
    "recommend": "engine.decide.engine",
    "Engine": "engine.decide.engine",
    "Decision": "engine.decide.decision",
    "load_engine": "engine.decide.engine",
    "Answers": "engine.answers.model",
    "load_answers": "engine.answers.model",
    "validate_answers": "engine.answers.model",
    "Catalog": "engine.catalog",
    "load_catalog": "engine.catalog",
    "EngineError": "engine.errors",
    "InputError": "engine.errors",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "Answers",
    "Catalog",
    "Decision",
    "Engine",
    "EngineError",
    "InputError",
    "__version__",
    "load_answers",
    "load_catalog",
    "load_engine",
    "recommend",
    "validate_answers",
]
