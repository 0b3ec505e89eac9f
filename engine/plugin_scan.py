"""pydantic without its plugin loader's imports, when plugins are off.

pydantic builds every validator through ``pydantic.plugin._schema_validator``, which imports
``pydantic.plugin._loader`` to ask for plugins. That module imports ``importlib.metadata`` at
its top (email, zipfile, csv, socket...: ~15 ms of a cold ``recommend``, measured with
``python -X importtime``) to scan entry points; with ``PYDANTIC_DISABLE_PLUGINS`` set to
``__all__``, ``1`` or ``true`` its ``get_plugins`` returns nothing without scanning.

:func:`skip_plugin_loader` puts a stand-in for the loader module in ``sys.modules`` that
answers ``get_plugins()`` with no plugins while they are all disabled, and hands anything else
(a later release's names, or plugins enabled again) to pydantic's own module, loaded then.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import types
from collections.abc import Iterable
from typing import Any

LOADER = "pydantic.plugin._loader"
"""pydantic's plugin loader module, the one stood in for."""
DISABLED_ALL = ("__all__", "1", "true")
"""The ``PYDANTIC_DISABLE_PLUGINS`` values with which pydantic loads no plugin."""


def plugins_disabled() -> bool:
    """Whether ``PYDANTIC_DISABLE_PLUGINS`` disables every plugin (pydantic's own test)."""
    return os.environ.get("PYDANTIC_DISABLE_PLUGINS") in DISABLED_ALL


def skip_plugin_loader() -> bool:
    """Stand in for pydantic's plugin loader while plugins are disabled; False (nothing
    done) when they are not or the loader is already imported."""
    if not plugins_disabled() or LOADER in sys.modules:
        return False
    sys.modules[LOADER] = _StandIn(LOADER, __doc__)
    return True


class _StandIn(types.ModuleType):
    """``pydantic.plugin._loader`` as far as a process with plugins disabled needs it."""

    def get_plugins(self) -> Iterable[Any]:
        """No plugins while disabled; pydantic's answer once they are enabled again."""
        if plugins_disabled():
            return ()
        result: Iterable[Any] = _real_loader().get_plugins()
        return result

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # what the import system probes (``__path__``...)
            raise AttributeError(name)
        return getattr(_real_loader(), name)


_real: types.ModuleType | None = None


def _real_loader() -> types.ModuleType:
    """pydantic's own loader module, loaded from its file on first need (not registered)."""
    global _real
    if _real is None:
        import pydantic.plugin

        spec = importlib.machinery.PathFinder.find_spec(LOADER, pydantic.plugin.__path__)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot find {LOADER}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _real = module
    return _real
