"""What durable_rules 2.0.28 can build and run: measured limits and a model of its network.

durable_rules turns each rule's pattern into an alpha network (``rete.c``): one node per
comparison, shared with an equal comparison under the same parent; an ``$and`` is a chain of
nodes, an ``$or`` hangs every alternative under the parent and joins them in a "forward"
node. Fixed-size arrays make some shapes fail, crash or hang, and a hang cannot be
interrupted (the C core holds the GIL and ignores SIGINT). Measured against the real engine,
each shape in a child process with a timeout (``benchmarks/durable_limits.py``):

==============================================  ==========  ===================================
shape                                           works up to  first failure
==============================================  ==========  ===================================
``$and``/``$or`` groups in one rule's pattern   15          16: error 113 at build
comparisons directly under one node             511         512: error 303 or SIGSEGV at assert;
                                                            513: a hang at build
absence tests and ``$or`` joins under one node  127         128: SIGSEGV at assert; 129: error
                                                            107 at build
rules ending on one node                        256         257: error 108 at build
matches pending at once for one fact            64          65: error 303, SIGSEGV or SIGABRT
properties of a fact (kind, fact_id, sid too)   253         254: SIGSEGV
string length (bytes)                           65,534      65,535 on: compared wrongly, silently
ways one fact matches one rule                  10^5: 0.8 s  each is walked: 10^6 took 8 s
``not_in`` list (a chain of ``$neq``)           5,000       (none found)
==============================================  ==========  ===================================

The compiler keeps every count below the constants here (the measured threshold with margin),
splitting a rule that does not fit (``engine.rules.compile``);
``engine.rules.trial.verified`` builds the result once in a child process under a time
bound, for whatever this table misses.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_GROUPS = 14
"""``$and``/``$or`` groups in one rule's pattern, the ``kind`` wrapper included (16: error 113)."""
MAX_STACK = 48
"""Matches that can be pending at once for one fact in one ruleset (65: error 303 or a
crash)."""
MAX_CHILDREN = 256
"""Comparisons directly under one node (512 hang)."""
MAX_JOINS = 100
"""Absence tests and ``$or`` joins under one node (128 crash, 129: error 107)."""
MAX_BETAS = 200
"""Rules ending on the same node (257: error 108)."""
MAX_PATHS = 256
"""Ways one fact can match one rule; each is walked separately (~9 µs each)."""
MAX_PROPERTIES = 250
"""Properties of one fact, ``kind``, ``fact_id`` and ``sid`` included (254 crash)."""
MAX_LIST_VALUES = 500
"""Values of one ``in``/``not_in`` list (512 alternatives on one field hang when unsplit)."""
MAX_STRING_BYTES = 4096
"""UTF-8 bytes of a string literal (from 65,535 durable_rules compares strings wrongly)."""
MAX_PARTS = 16
"""Durable rules one rule may be split into to fit the limits above."""
PLAIN_MIN = 1e-4
"""Smallest magnitude of a non-zero float durable_rules reads: Python writes smaller ones in
exponent form (``1e-05``), which durable_rules cannot parse."""
PLAIN_LIMIT = 1e15
"""Numbers (literals and facts) stay below this magnitude: from ``1e16`` Python writes
exponent form, and 10^15 is the round limit rule authors are told."""


def plain_float(value: float) -> bool:
    """Whether durable_rules reads this float as written: finite, and 0 or between
    :data:`PLAIN_MIN` and :data:`PLAIN_LIMIT` in magnitude."""
    return math.isfinite(value) and (value == 0 or PLAIN_MIN <= abs(value) < PLAIN_LIMIT)


def durable_fact(values: Mapping[str, Any],
                 names: Iterable[str] | None = None) -> dict[str, Any]:
    """The scalar, non-null facts durable_rules sees (lists and unknowns left out)."""
    keys = values if names is None else names
    get = values.get
    out: dict[str, Any] = {}
    for key in keys:
        value: Any = get(key)
        kind = value.__class__
        if kind is str or kind is bool or kind is int:  # the usual case, kept as is
            out[key] = value
        elif kind is float:  # plain already unless tiny, huge or not finite
            out[key] = value if (PLAIN_MIN <= value < PLAIN_LIMIT or value == 0
                                 or -PLAIN_LIMIT < value <= -PLAIN_MIN) else _plain(value)
        elif value is not None and not isinstance(value, (list, tuple, dict)):
            out[key] = value
    return out


def durable_value(value: Any) -> Any:
    """The value durable_rules sees for ``value`` in a fact (``durable_fact``), or None where
    it sees none (None, lists, mappings)."""
    if value is None or isinstance(value, (list, tuple, dict)):
        return None
    return _plain(value) if type(value) is float else value


def _plain(value: float) -> float:
    """A finite float durable_rules can parse: never in exponent form.

    Answers are only range-checked (a budget of $0.000001 is valid) and ratios of them can be
    huge, but durable_rules cannot read ``1e-06`` or ``1e+16``. The rule checker admits only
    literals that are 0 or plain (:func:`plain_float`), so tiny values become 0 (as ``tidy``
    does for derived facts) and huge ones the largest value below the limit; comparisons with
    any literal keep their outcome (except ``gt: 0`` for a tiny positive value).
    """
    if not math.isfinite(value) or value == 0:
        return value  # non-finite: left for the evaluator to refuse loudly
    if abs(value) < PLAIN_MIN:
        return 0.0
    if abs(value) >= PLAIN_LIMIT:
        return math.copysign(PLAIN_LIMIT - 1, value)
    return value

Expr = dict[str, Any]
"""A compiled durable_rules expression (``{"$and": [...]}``, ``{"$gt": {"x": 1}}``, …)."""


class LimitError(ValueError):
    """A rule that does not fit durable_rules' limits; ``kind`` names the limit."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def is_group(expr: Expr, op: str | None = None) -> bool:
    """Whether ``expr`` is an ``$and``/``$or`` group (of operator ``op``, when given)."""
    key = next(iter(expr))
    return key in ("$and", "$or") and (op is None or key == op)


def leaf_parts(expr: Expr) -> tuple[str, str, Any]:
    """(operator, field, value) of a leaf; equality is ``$eq``."""
    key, body = next(iter(expr.items()))
    if not key.startswith("$"):
        return "$eq", key, body
    field, value = next(iter(body.items()))
    return key, field, value


def groups(expr: Expr) -> int:
    """``$and``/``$or`` groups in an expression (what error 113 counts)."""
    if not is_group(expr):
        return 0
    return 1 + sum(groups(child) for child in next(iter(expr.values())))


@dataclass(frozen=True)
class Shape:
    """How one fact can walk an expression's part of the network.

    ``first``: nodes its parent pushes at once; ``peak``: most entries of it pending at once;
    ``rest``: entries of it still pending when what follows it is walked; ``paths``: ways
    the whole expression can match; ``leaves``: its comparisons, ``absent`` of them
    absence tests.
    """

    first: int
    peak: int
    rest: int
    paths: int
    leaves: int = 1
    absent: int = 0


_LEAF = Shape(1, 1, 0, 1)
_ABSENT = Shape(1, 1, 0, 1, 1, 1)


def shape(expr: Expr) -> Shape:
    """The :class:`Shape` of an expression (an upper bound for any fact)."""
    op, body = next(iter(expr.items()))
    if op == "$and":
        return _chain([shape(child) for child in body])
    if op == "$or":
        return _alternatives(body)
    return _ABSENT if op == "$nex" else _LEAF


def _chain(parts: Sequence[Shape]) -> Shape:
    pending = peak = 0
    paths = 1
    for part in parts:
        peak = max(peak, pending + part.peak)
        pending += part.rest
        paths *= part.paths
    return Shape(parts[0].first, peak, pending, paths, sum(p.leaves for p in parts),
                 sum(p.absent for p in parts))


def _alternatives(children: Sequence[Expr]) -> Shape:
    """An ``$or``: its alternatives pushed at once, walked one after the other.

    Comparisons of one field with literals that cannot hold together count as one: per
    field, at most (the other comparisons + 1 if there are equalities, 1 equal value
    at a time) hold at once, or 1 for absence alone (absence excludes every comparison).
    """
    nested: list[Shape] = []
    parts: list[Shape] = []
    counts: Counter[str] = Counter()
    equal: dict[str, Counter[tuple[str, Any]]] = {}
    absent: set[str] = set()
    tests = 0
    for child in children:
        op, body = next(iter(child.items()))
        if op == "$and" or op == "$or":
            nested.append(shape(child))
            continue
        if op[0] == "$":
            field, value = next(iter(body.items()))
        else:
            op, field, value = "$eq", op, body
        if op == "$ex" or isinstance(value, dict):
            parts.append(_LEAF)
        elif op == "$nex":
            absent.add(field)
            tests += 1
        elif op == "$eq":  # durable_rules: 1 == 1.0 == True
            key = ("s", value) if isinstance(value, str) else ("n", float(value or 0))
            values = equal.get(field)
            if values is None:
                values = equal[field] = Counter()
            values[key] += 1
        else:
            counts[field] += 1
    for field in set(counts) | set(equal) | absent:
        most_equal = max(equal[field].values()) if field in equal else 0
        parts += [_LEAF] * max(counts[field] + most_equal, field in absent)
    parts += nested
    pushed = sum(p.first for p in parts)
    return Shape(pushed, max(pushed - p.first + p.peak for p in parts),
                 max(pushed - p.first + p.rest for p in parts), sum(p.paths for p in parts),
                 len(children) - len(nested) + sum(p.leaves for p in nested),
                 tests + sum(p.absent for p in nested))


class Network:
    """The alpha network durable_rules builds for one ruleset, counted (``rete.c``:
    ``createAlpha``, ``findAlpha``, ``linkAlpha``)."""

    _ROOT = 0

    def __init__(self) -> None:
        self._nodes: dict[tuple[Any, ...], int] = {}
        self._count = 1
        self.children: Counter[int] = Counter()
        self.joins: Counter[int] = Counter()
        self.betas: Counter[int] = Counter()
        self.most = {"children": 0, "joins": 0, "betas": 0}
        """The highest count of each kind on any node."""
        self.stack = 1
        """Pending matches: the catch-all rule's, then each rule's peak."""

    def add(self, pattern: Expr, peak: int | None = None) -> None:
        """Add one rule's pattern (``peak``: its shape's, when already known)."""
        self._count_on("betas", self.betas, self._alpha(pattern, self._ROOT))
        self.stack += shape(pattern).peak if peak is None else peak

    def problem(self) -> LimitError | None:
        """The first limit this network exceeds, or None."""
        checks = (
            ("stack", self.stack, MAX_STACK,
             "up to {n} of its comparisons can hold for one fact at once; at most {limit} "
             "(from 65, durable_rules 2.0.28 crashes or fails with error 303)"),
            ("children", self.most["children"], MAX_CHILDREN,
             "puts {n} alternatives under one condition; at most {limit} (from 512, "
             "durable_rules 2.0.28 hangs)"),
            ("joins", self.most["joins"], MAX_JOINS,
             "puts {n} absence tests and any-joins under one condition; at most {limit} "
             "(from 128, durable_rules 2.0.28 crashes or fails with error 107)"),
            ("betas", self.most["betas"], MAX_BETAS,
             "{n} rules end on the same condition; at most {limit} (from 257, durable_rules "
             "2.0.28 fails with error 108)"),
        )
        for kind, n, limit, text in checks:
            if n > limit:
                return LimitError(kind, text.format(n=f"{n:,}", limit=f"{limit:,}"))
        return None

    def _new(self) -> int:
        self._count += 1
        return self._count - 1

    def _count_on(self, kind: str, counts: Counter[int], node: int) -> None:
        counts[node] += 1
        if counts[node] > self.most[kind]:
            self.most[kind] = counts[node]

    def _alpha(self, expr: Expr, parent: int) -> int:
        """Add ``expr`` under ``parent``; the node where a match of it ends."""
        op, body = next(iter(expr.items()))
        if op == "$and":
            node = parent
            for child in body:
                node = self._alpha(child, node)
            return node
        if op == "$or":
            forward = self._new()
            for child in body:
                self._count_on("joins", self.joins, self._alpha(child, parent))
            return forward
        if op[0] == "$":
            field, value = next(iter(body.items()))
        else:
            op, field, value = "$eq", op, body
        # the type keeps 1, 1.0 and True apart (separate nodes: the safe side)
        key = (parent, op, field, value.__class__,
               tuple(value.items()) if isinstance(value, dict) else value)
        if key not in self._nodes:
            self._nodes[key] = self._new()
            if op == "$nex":
                self._count_on("joins", self.joins, parent)
            else:
                self._count_on("children", self.children, parent)
        return self._nodes[key]


def pattern_problem(pattern: Expr, walk: Shape | None = None) -> LimitError | None:
    """The first limit one rule's pattern exceeds on its own, or None (``walk``: its
    :class:`Shape`, when already known)."""
    n = groups(pattern)
    if n > MAX_GROUPS:
        return LimitError("groups", f"compiles to {n} nested all/any groups (each negated "
                          f"comparison makes one); at most {MAX_GROUPS} (from 16, durable_rules "
                          "2.0.28 fails with error 113)")
    walk = walk or shape(pattern)
    if walk.paths > MAX_PATHS:
        return LimitError("paths", f"can match one fact in {walk.paths:,} ways (its "
                          f"any-groups multiply); at most {MAX_PATHS} (durable_rules walks each "
                          "one)")
    if (1 + walk.peak <= MAX_STACK and walk.leaves <= MAX_CHILDREN
            and walk.absent + n <= MAX_JOINS):
        # alone, no node has more children than there are comparisons, nor more joins than
        # absence tests and $or groups (one per group and node: equal alternatives merge)
        return None
    network = Network()
    network.add(pattern, walk.peak)
    return network.problem()
