"""The architecture shape behind a model: a catalog preset, the ``model_shape`` answer a
config was read into at the edge, or for a bare parameter count a scaled nearest preset.

Reads no file: a model named by its config arrives with its shape in the answers."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict

from engine.answers.model_shape import ModelShape
from engine.catalog.load import Catalog
from engine.catalog.models import ModelPreset


class Shape(BaseModel):
    """What the memory and compute estimators need to know about a model."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    label: str
    params_b: float
    compute_params_b: float
    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied_embeddings: bool
    derived_from: str | None = None
    """The preset a bare parameter count was scaled from (None for an exact preset)."""
    sources: tuple[str, ...]

    @property
    def params(self) -> float:
        """Total parameters."""
        return self.params_b * 1e9

    @property
    def embedding_params(self) -> float:
        """Parameters in the token embedding and output head (kept 16-bit under QLoRA)."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)


def shape_of_preset(preset: ModelPreset) -> Shape:
    """The exact shape of a catalog model."""
    return Shape(
        label=preset.id,
        params_b=preset.params_b,
        compute_params_b=preset.compute_params_b,
        layers=preset.layers,
        hidden=preset.hidden,
        intermediate=preset.intermediate,
        heads=preset.heads,
        kv_heads=preset.kv_heads,
        head_dim=preset.head_dim or preset.hidden // preset.heads,
        vocab=preset.vocab,
        tied_embeddings=preset.tied_embeddings,
        sources=tuple(preset.sources),
    )


def shape_for_params(params_b: float, catalog: Catalog) -> Shape:
    """A sensible shape for a bare parameter count.

    Takes the preset of the policy's family for bare sizes (one modern family, so that the
    vocabulary is typical and does not jump between neighbouring sizes) nearest in log-size,
    and scales its depth and width by the cube root of the size ratio (parameters grow
    roughly as layers x hidden^2), keeping head size.
    """
    family = catalog.policy.bare_size_family.value
    dense = [m for m in catalog.models.values() if m.experts == 1 and m.family == family]
    base = min(dense, key=lambda m: abs(math.log(params_b / m.params_b)))
    if math.isclose(base.params_b, params_b, rel_tol=0.02):
        return shape_of_preset(base).model_copy(
            update={"params_b": params_b, "compute_params_b": params_b}
        )
    k = (params_b / base.params_b) ** (1 / 3)
    head_dim = base.head_dim or base.hidden // base.heads
    kv_ratio = base.heads // base.kv_heads
    # the nearest multiple of the GQA group size (flooring could halve a small model's width)
    heads = max(kv_ratio, round(base.heads * k / kv_ratio) * kv_ratio)
    return Shape(
        label=f"{params_b:g}B (shape scaled from {base.id})",
        params_b=params_b,
        compute_params_b=params_b,
        layers=max(1, round(base.layers * k)),
        hidden=heads * head_dim,
        intermediate=max(64, round(base.intermediate * k / 64) * 64),
        heads=heads,
        kv_heads=heads // kv_ratio,
        head_dim=head_dim,
        vocab=base.vocab,
        tied_embeddings=base.tied_embeddings,
        derived_from=base.id,
        sources=tuple(base.sources),
    )


def resolve_shape(catalog: Catalog, *, model: str | None, params_b: float | None,
                  model_shape: ModelShape | None = None) -> Shape:
    """The shape for a model named with its ``model_shape`` (its config, read at the edge),
    a catalog model id, or a bare parameter count."""
    if model_shape is not None:
        label = model or "model_shape"
        return shape_of_preset(model_shape.preset(label)).model_copy(update={"label": label})
    if model is not None:
        return shape_of_preset(catalog.model(model))
    if params_b is None:
        raise ValueError("either a model id or params_b is required")
    return shape_for_params(params_b, catalog)
