"""The decision axes as ``rules/decisions.yaml`` declares them, for readers that need only the
axes (not a whole rulebook): the audit export's columns, for one."""

from __future__ import annotations

from engine.files.validation import build
from engine.files.yamlio import load_yaml_file
from engine.resources import bundled_dir
from engine.rules.load import DECLARATIONS
from engine.rules.model import AxisSpec, DeclarationFile


def bundled_axes() -> dict[str, AxisSpec]:
    """Axis id → its declaration, in the declared order, from the bundled rules."""
    path = bundled_dir("rules") / DECLARATIONS
    return dict(build(DeclarationFile, load_yaml_file(path), path=str(path)).decisions)


def always_applies(axes: dict[str, AxisSpec]) -> list[str]:
    """The axes that matter whatever else was decided (no ``applies_when``)."""
    return [axis for axis, spec in axes.items() if not spec.applies_when]
