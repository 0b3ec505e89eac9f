"""Renderers: JSON (the contract), text tables (rich) and markdown."""
