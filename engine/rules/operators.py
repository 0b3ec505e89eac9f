"""The operators a condition can use, and how they relate: one table for every module that
reasons about them (loading, compiling, linting)."""

from __future__ import annotations

OPERATORS = ("eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "is", "exists")
"""Every operator of a condition leaf (``{fact: {op: value}}``)."""

ORDERINGS = ("lt", "lte", "gt", "gte")
"""Operators that order numbers (a number fact only)."""

COMPARISONS = ("eq", "ne", *ORDERINGS)
"""Operators that compare a fact with one value."""

NEGATION = {"eq": "ne", "ne": "eq", "lt": "gte", "gte": "lt", "lte": "gt", "gt": "lte",
            "in": "not_in", "not_in": "in"}
"""The operator that holds exactly when this one does not, for a known fact (``not`` of a
leaf is this, or the fact is unknown)."""
