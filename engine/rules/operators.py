"""The operators a condition leaf can use (``{fact: x, OP: value}``): one registry that says,
for each, its Python meaning, its durable_rules form, its negation and how it classes values.

Every module that reasons about conditions reads this table: the Python evaluation
(``conditions``), the compiler (``compile``), fact signatures (``signature``), lint and the
condition models (``when``, which must declare a field per operator).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Operator:
    """One operator of a condition leaf."""

    name: str
    holds: Callable[[Any, Any], bool] | None
    """Whether a known fact value and operand satisfy it (None: ``is``/``exists``, which
    also test unknown facts and are evaluated on their own)."""
    durable: str | None
    """Its durable_rules comparison (``$lt``…), None where the compiler builds the form
    (``eq`` is ``{fact: value}``; lists become groups; ``is``/``exists`` test presence)."""
    negation: str | None
    """The operator that holds exactly when this one does not, for a known fact."""
    orders: bool = False
    """Orders numbers (a number fact only)."""
    tells_numbers: bool = True
    """Tells numbers apart (a fact signature must class a number fact by its values)."""
    tells_equal: bool = True
    """Tells equal values from others (a signature must class the fact by equality)."""


_TABLE = (
    Operator("eq", operator.eq, None, "ne"),
    Operator("ne", operator.ne, "$neq", "eq"),
    Operator("lt", operator.lt, "$lt", "gte", orders=True, tells_equal=False),
    Operator("lte", operator.le, "$lte", "gt", orders=True, tells_equal=False),
    Operator("gt", operator.gt, "$gt", "lte", orders=True, tells_equal=False),
    Operator("gte", operator.ge, "$gte", "lt", orders=True, tells_equal=False),
    Operator("in", lambda value, options: value in options, None, "not_in"),
    Operator("not_in", lambda value, options: value not in options, None, "in"),
    Operator("is", None, None, None, tells_numbers=False),
    Operator("exists", None, None, None, tells_numbers=False, tells_equal=False),
)

REGISTRY: dict[str, Operator] = {op.name: op for op in _TABLE}
"""Every operator by name, in the order messages list them."""

OPERATORS = tuple(REGISTRY)
"""Every operator of a condition leaf (``{fact: {op: value}}``)."""

ORDERINGS = tuple(op.name for op in _TABLE if op.orders)
"""Operators that order numbers (a number fact only)."""

COMPARISONS = ("eq", "ne", *ORDERINGS)
"""Operators that compare a fact with one value (and may take ``{policy: NAME}``)."""

NEGATION = {op.name: op.negation for op in _TABLE if op.negation is not None}
"""The operator that holds exactly when this one does not, for a known fact (``not`` of a
leaf is this, or the fact is unknown)."""

DURABLE = {op.name: op.durable for op in _TABLE if op.durable is not None}
"""The durable_rules comparison of each operator that has one."""
