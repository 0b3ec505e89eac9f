"""Where durable_rules 2.0.28 breaks: the experiments behind ``engine/rules/limits.py``.

Not part of the test suite. Each case builds one hand-written ruleset exactly as
``engine.rules.evaluate.Evaluator`` does (no timer threads, ``cap``, the catch-all rule) in a
child process with a timeout (a hang cannot be interrupted in-process: the C core holds the
GIL and ignores SIGINT), asserts a few facts, and reports what happened: ``ok`` with the
rules each fact fired, ``BUILD-ERR``/``ASSERT-ERR`` with durable_rules' error, ``HANG`` at
build or assert, or ``CRASH`` with the signal. Prints one Markdown table:

    python benchmarks/durable_limits.py              # ~2 minutes (a hang costs --timeout)
    python benchmarks/durable_limits.py --negations  # not/all/any shapes, n = 2..20 (~2 min)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
from engine.rules.compile import Compiled, CompiledRuleset
from engine.rules.evaluate import Evaluator
spec = json.loads(sys.stdin.read())
rulesets = tuple(CompiledRuleset(name, "request", 0, defs, tuple(defs))
                 for name, defs in spec["rulesets"].items())
started = time.perf_counter()
try:  # built=True: no bounded trial, the real thing
    ev = Evaluator(Compiled(rulesets, frozenset(), {"request": frozenset()}, built=True),
                   memo=False)
except Exception as exc:
    print(json.dumps({"stage": "BUILD-ERR", "detail": str(exc)[-90:]}))
    sys.exit(0)
print("BUILT", flush=True)
fired = []
started = time.perf_counter()
for i, fact in enumerate(spec["facts"]):
    try:
        got = set()
        for rs in rulesets:
            got |= {r for r, _ in ev.run_session(rs, [{**fact, "kind": "request",
                                                       "fact_id": str(i)}], checked=True)}
        fired.append(len(got))
    except Exception as exc:
        print(json.dumps({"stage": "ASSERT-ERR", "detail": str(exc)[-90:]}))
        sys.exit(0)
print(json.dumps({"stage": "ok", "detail": f"fired {fired}",
                  "assert_s": time.perf_counter() - started}))
"""


def probe(rulesets: dict[str, Any], facts: list[dict[str, Any]], timeout: float
          ) -> tuple[str, str]:
    """(outcome, detail) of building ``rulesets`` and asserting ``facts`` in a child."""
    try:
        result = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(
            {"rulesets": rulesets, "facts": facts}), capture_output=True, text=True,
            timeout=timeout, cwd=ROOT, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return "HANG", f"no end within {timeout:g} s, at " + (
            "assert" if "BUILT" in out else "build")
    if result.returncode < 0:
        return "CRASH", f"signal {-result.returncode}"
    if result.returncode != 0:
        return "FAIL", result.stderr.strip().splitlines()[-1][-90:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    detail = out["detail"]
    if "assert_s" in out:
        detail += f", asserts took {out['assert_s']:.2f} s"
    return out["stage"], detail


def rule(expr: dict[str, Any] | None) -> dict[str, Any]:
    pattern = {"$and": [{"kind": "request"}, expr]} if expr else {"kind": "request"}
    return {"all": [{"m": pattern}]}


def one(expr: dict[str, Any]) -> dict[str, Any]:
    return {"rs": {"r": rule(expr)}}


def cases() -> Iterator[tuple[str, str, dict[str, Any], list[dict[str, Any]]]]:
    """(shape, size, rulesets, facts) per experiment."""
    for g in (14, 15, 16, 17):  # the kind wrapper, an outer $or and g-2 inner $or pairs
        expr = {"$or": [{"$or": [{"$gt": {f"x{i}": 1}}, {"$nex": {f"x{i}": 1}}]}
                        for i in range(g - 2)]}
        yield "$and/$or groups in one rule", str(g), one(expr), [{"x0": 3}, {}]
    for n in (13, 14):  # the old compilation of not: {all: [n leaves]}: an $or per leaf
        expr = {"$or": [{"$or": [{"$lte": {f"x{i}": i}}, {"$nex": {f"x{i}": 1}}]}
                        for i in range(n)]}
        yield "not: {all: [n leaves]}, $or per leaf (old)", str(n), one(expr), [{}]
    for n in (14, 40):  # the same, merged into one $or (now)
        expr = {"$or": [leaf for i in range(n)
                        for leaf in ({"$lte": {f"x{i}": i}}, {"$nex": {f"x{i}": 1}})]}
        yield "not: {all: [n leaves]}, one $or (now)", str(n), one(expr), [{}]
    for n in (510, 511, 512, 513):
        expr = {"$or": [{"x": i} for i in range(n)]}
        yield "in: list (alternatives under one node)", str(n), one(expr), [
            {"x": 3}, {"y": 1}]
    for n in (500, 5000):
        expr = {"$and": [{"$neq": {"x": i}} for i in range(n)]}
        yield "not_in: list (a chain)", str(n), one(expr), [{"x": 3}, {"x": -1}]
    for k in (127, 128, 129):
        defs = {f"r{i}": rule({"$nex": {f"x{i}": 1}}) for i in range(k)}
        yield "absence tests under one node", str(k), {"rs": defs}, [
            {f"x{i}": 1 for i in range(k)}]
    for k in (256, 257):
        defs = {f"r{i}": rule({"x": 1}) for i in range(k)}
        yield "rules ending on one node", str(k), {"rs": defs}, [{"x": 2}]
    for k in (64, 65):
        defs = {f"r{i}": rule({"$gt": {"x": i - 1000}}) for i in range(k)}
        yield "comparisons matching one fact", str(k), {"rs": defs}, [{"x": 1}]
    for k in (64, 65):
        defs = {f"r{i}": rule({"$nex": {f"x{i}": 1}}) for i in range(k)}
        yield "absence tests matching one fact", str(k), {"rs": defs}, [{"y": 1}]
    for width in (253, 254):
        fact = {f"p{i}": i for i in range(width - 3)}  # + kind, fact_id, sid
        yield "properties of a fact", str(width), one({"$gt": {"p1": 0}}), [fact]
    for n in (65534, 65535, 65536):
        literal = "x" * n
        yield ("string literal vs itself + 'z' (1 = wrong)", str(n), one({"s": literal}),
               [{"s": literal + "z"}])
    for b, k in ((10, 4), (10, 5), (10, 6)):
        expr = {"$and": [{"$or": [{"$gt": {f"x{g}_{i}": 0}} for i in range(b)]}
                         for g in range(k)]}
        fact = {f"x{g}_{i}": 1 for g in range(k) for i in range(b)}
        yield "ways to match one rule (b^k)", f"{b}^{k}", one(expr), [fact]


def negations() -> Iterator[tuple[str, str, dict[str, Any], list[dict[str, Any]]]]:
    """Negations as the compiler writes them (unsplit), n = 2..20 comparisons, on the real
    engine: where error 113 starts for each shape."""
    from engine.rules.compile import _group, compile_condition
    from engine.rules.conditions import All, AnyOf, Condition, Leaf, Not

    def now(condition: Condition) -> dict[str, Any]:  # the rule's pattern, groups merged
        pattern = _group("$and", [{"kind": "request"}, compile_condition(condition) or {}])
        return {"rs": {"r": {"all": [{"m": pattern}]}}}

    def leaves(n: int) -> tuple[Leaf, ...]:
        return tuple(Leaf(f"x{i}", "gt", i) for i in range(n))

    def nested(n: int) -> Any:  # not(all(x0, not(any(x1, not(all(x2, ...))))))
        node: Any = Leaf(f"x{n - 1}", "gt", 0)
        for i in reversed(range(n - 1)):
            node = Not((All if i % 2 == 0 else AnyOf)((Leaf(f"x{i}", "gt", 0), node)))
        return node

    def old(n: int) -> dict[str, Any]:  # before nested groups were merged
        return {"$or": [{"$or": [{"$lte": {f"x{i}": i}}, {"$nex": {f"x{i}": 1}}]}
                        for i in range(n)]}

    shapes = {"not: {all: [n]}, an $or per leaf (before)": lambda n: one(old(n)),
              "not: {all: [n]}, merged (now)": lambda n: now(Not(All(leaves(n)))),
              "not: {any: [n]} (now, unsplit)": lambda n: now(Not(AnyOf(leaves(n)))),
              "n nested not/all/any (now, unsplit)": lambda n: now(nested(n))}
    for name, make in shapes.items():
        for n in range(2, 21):
            yield name, str(n), make(n), [{}, {f"x{i}": 5 for i in range(n)}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per case")
    parser.add_argument("--negations", action="store_true",
                        help="sweep negation shapes instead (n = 2..20)")
    args = parser.parse_args()
    import durable

    print(f"durable_rules {getattr(durable, '__version__', '2.0.28')}, Python "
          f"{sys.version.split()[0]}, timeout {args.timeout:g} s per case\n")
    print("| shape | size | outcome | detail |\n|---|---|---|---|")
    for shape, size, rulesets, facts in (negations() if args.negations else cases()):
        started = time.perf_counter()
        outcome, detail = probe(rulesets, facts, args.timeout)
        took = time.perf_counter() - started
        print(f"| {shape} | {size} | {outcome} | {detail} ({took:.1f} s in all) |", flush=True)


if __name__ == "__main__":
    main()
