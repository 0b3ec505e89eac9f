"""The catalog: GPUs, cloud offers, model shapes, policy constants, questions and sources."""

from engine.catalog.load import Catalog, load_catalog

__all__ = ["Catalog", "load_catalog"]
