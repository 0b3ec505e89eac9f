"""``model_shape``: the architecture of a model named by its config, carried in the answers.

A model given as a Hugging Face ``config.json`` (a file, a folder holding one, or a Hub id) is
read once, where the answers come in (``--model``, an answers file, ``--set``, a prompt): its
shape becomes the ``model_shape`` answer, beside ``model`` (the reference as given, which
names it). The pipeline reads the shape from the answers and never the file, so a decision,
its audit record and ``recommend --answers`` of the recorded answers need no file at all, and
editing or deleting the file changes nothing already decided. A hand-written answers file may
give a shape too (``source`` then says where its figures come from).

The bounds of every figure are the catalog's model presets' (:class:`ModelPreset`): one home.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from engine.catalog.models import ModelPreset

SHAPE_FIELD = "model_shape"
"""The answer that holds the shape (not a question: ``--model`` fills it, nothing asks)."""
SHAPE_OF = ("model", "model_params_b")
"""Answers that name the model: giving one of them replaces the shape a file carried."""


class ModelShape(BaseModel):
    """What the memory and compute estimates need to know about a model given by its config."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    params_b: float = Field(description="total parameters, billions")
    active_params_b: float | None = Field(
        default=None, description="parameters used per token (mixture of experts); "
                                  "default params_b")
    layers: int
    hidden: int
    intermediate: int = Field(description="feed-forward width (of one expert in an MoE)")
    heads: int
    kv_heads: int
    head_dim: int | None = Field(default=None, description="when not hidden ÷ heads")
    vocab: int
    tied_embeddings: bool = False
    experts: int = Field(default=1, description="routed experts per MoE layer")
    experts_active: int | None = Field(default=None, description="routed experts per token")
    family: str | None = Field(default=None, max_length=60,
                               description="the config's model_type")
    source: str = Field(min_length=1, max_length=200,
                        description="where the figures come from: 'config.json sha256:…' "
                                    "when --model read them")

    @model_validator(mode="after")
    def _within_a_preset_s_bounds(self) -> ModelShape:
        try:
            self.preset("shape")
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            field = ".".join(str(part) for part in error["loc"])
            message = str(error["msg"]).removeprefix("Value error, ")
            message = message[:1].lower() + message[1:]
            raise ValueError(f"{field}: {message}" if field else message) from None
        return self

    def preset(self, name: str) -> ModelPreset:
        """The catalog preset this shape is (validated by the preset's own bounds)."""
        data: dict[str, Any] = self.model_dump(exclude={"source", "family"})
        return ModelPreset.model_validate({
            **data, "id": "config", "name": name, "family": self.family or "config",
            "sources": [self.source]})


def shape_of_preset(preset: ModelPreset, source: str) -> ModelShape:
    """The answer for a preset read from a config (``source`` names the bytes read)."""
    return ModelShape(
        params_b=preset.params_b, active_params_b=preset.active_params_b,
        layers=preset.layers, hidden=preset.hidden, intermediate=preset.intermediate,
        heads=preset.heads, kv_heads=preset.kv_heads, head_dim=preset.head_dim,
        vocab=preset.vocab, tied_embeddings=preset.tied_embeddings, experts=preset.experts,
        experts_active=preset.experts_active, family=preset.family, source=source)
