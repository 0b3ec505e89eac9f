"""Rendering a decision: text, markdown, JSON, chart."""
