"""Alternating A/B of the warm path: milliseconds per recommendation, two variants, one run.

Not part of the test suite. Run from the repository root with the project's virtualenv active:

    python benchmarks/ab.py memo                 # in-process: one named experiment (below)
    python benchmarks/ab.py --against 99d71ab    # this checkout vs a git revision: two warm
                                                 # processes, one on each, taking turns
    python benchmarks/ab.py --cold --runs 25     # the cold path: fresh processes, the policy
                                                 # from the cache vs without it (and, with
                                                 # --against REV, REV's from its own cache)

Both variants are loaded, warmed up on the same scenarios, then given the same chunks of
distinct generated answers (none repeated across chunks), taking turns: the variant that goes
first alternates chunk by chunk, so that drifting load on a shared machine, and anything one
variant leaves warm for the other, colours both alike. Each variant has its own engine
(catalog, rulebook, compiled rulesets, evaluator) and so its own caches. The decisions of both
are compared byte for byte (``decision_id`` fixed), chunk by chunk.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from run import EXAMPLE, child_cpu, generate_answers, load_average  # noqa: E402

from engine.memo import Memo  # noqa: E402


class Runner(Protocol):
    """One variant: runs a chunk of scenarios, says how long it took and what it decided."""

    def run(self, first: int, count: int) -> tuple[float, float, str]: ...


def scenarios(engine: Any, count: int, seed: int) -> list[Any]:
    """``count`` validated answers (the same for the same seed and catalog)."""
    from engine.answers.model import validate_answers

    models = sorted(engine.catalog.models)
    return [validate_answers(a, engine.catalog) for a in generate_answers(count, seed, models)]


def fresh_engine(**evaluator: Any) -> Any:
    """An engine that shares no object with any other (its own catalog, rulebook, rulesets,
    evaluator and so its own caches); ``evaluator``: keyword arguments of ``Evaluator``."""
    from engine.catalog.load import load_catalog
    from engine.decide.engine import Engine, compile_policy
    from engine.rules.evaluate import Evaluator
    from engine.rules.load import load_rulebook

    catalog = load_catalog()
    rulebook = load_rulebook(None, catalog)
    compiled = compile_policy(rulebook)
    return Engine(catalog, rulebook, compiled, Evaluator(compiled, **evaluator))


class InProcess:
    """A variant in this process."""

    def __init__(self, engine: Any, answers: Sequence[Any]) -> None:
        self.engine, self.answers = engine, answers

    def run(self, first: int, count: int) -> tuple[float, float, str]:
        """(wall seconds, CPU seconds of this process, sha256 of the decisions' JSON)."""
        recommend = self.engine.recommend
        digest = hashlib.sha256()
        start, used = time.perf_counter(), time.process_time()
        decisions = [recommend(a, decision_id="ab") for a in self.answers[first:first + count]]
        elapsed, used = time.perf_counter() - start, time.process_time() - used
        for decision in decisions:
            digest.update(decision.to_json().encode())
        return elapsed, used, digest.hexdigest()


class Worker:
    """A variant in a child process (``--worker``), on the ``engine`` package found first on
    ``pythonpath`` (None: this checkout's)."""

    def __init__(self, pythonpath: str | None, args: argparse.Namespace, cache: Path) -> None:
        env = {**os.environ, "GPU_ADVISOR_CACHE_DIR": str(cache)}
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--worker", "--seed",
             str(args.seed), "--scenarios", str(args.warmup + args.chunks * args.chunk)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
            cwd=pythonpath or ROOT)
        self.where = self._ask("where")

    def _ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if not answer:
            sys.exit(f"worker failed (exit {self.proc.wait()})")
        return answer

    def run(self, first: int, count: int) -> tuple[float, float, str]:
        elapsed, used, digest = self._ask(f"{first} {count}").split()
        return float(elapsed), float(used), digest

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def worker(seed: int, count: int) -> None:
    """Serve ``first count`` requests on stdin (see :class:`Worker`)."""
    import engine
    from engine.decide.engine import load_engine

    loaded = load_engine()
    runner = InProcess(loaded, scenarios(loaded, count, seed))
    for line in sys.stdin:
        if line.strip() == "where":
            print(Path(engine.__file__).parent, flush=True)
            continue
        first, size = map(int, line.split())
        elapsed, used, digest = runner.run(first, size)
        print(f"{elapsed!r} {used!r} {digest}", flush=True)


def compare(names: tuple[str, str], runners: tuple[Runner, Runner],
            args: argparse.Namespace) -> list[tuple[str, str, str, str]]:
    """Warm both up, then every chunk on both, the first to go alternating; table rows."""
    for runner in runners:
        runner.run(0, args.warmup)
    wall: tuple[list[float], list[float]] = ([], [])
    cpu: tuple[list[float], list[float]] = ([], [])
    same = True
    for k in range(args.chunks):
        first = args.warmup + k * args.chunk
        digests = {}
        for side in (0, 1) if k % 2 == 0 else (1, 0):
            elapsed, used, digests[side] = runners[side].run(first, args.chunk)
            wall[side].append(elapsed / args.chunk)
            cpu[side].append(used / args.chunk)
        same = same and digests[0] == digests[1]

    def ms(times: list[float]) -> str:
        return f"{statistics.median(times) * 1000:.2f} ms"

    def ratio(times: tuple[list[float], list[float]]) -> str:
        ratios = [b / a for a, b in zip(*times, strict=True)]
        low, _, high = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
        return f"{statistics.median(ratios):.3f} ({low:.3f}–{high:.3f})"

    n = args.chunks * args.chunk
    return [
        (f"A: {names[0]}", ms(wall[0]), ms(cpu[0]), ""),
        (f"B: {names[1]}", ms(wall[1]), ms(cpu[1]), ""),
        ("B / A per chunk: median (quartiles)", ratio(wall), ratio(cpu),
         f"{args.chunks} chunks of {args.chunk} ({n:,} distinct scenarios, after "
         f"{args.warmup} to warm up)"),
        ("decisions byte-identical (A vs B)", "yes" if same else "NO", "", ""),
    ]


# --------------------------------------------------------------------------------------------
# Experiments: name → (what A is, what B is, the two engines)

Experiment = tuple[str, str, Callable[[], tuple[Any, Any]]]


def _memo() -> tuple[Any, Any]:
    return fresh_engine(memo=False), fresh_engine()


class NoMemo:
    """A memo that remembers nothing (what a variant without that memo does)."""

    limit = 0

    def get(self, key: Any) -> None:
        return None

    def put(self, key: Any, value: Any) -> Any:
        return value

    def remember(self, key: Any, compute: Callable[..., Any], *args: Any) -> Any:
        return compute(*args)

    def __len__(self) -> int:
        return 0


class Without(InProcess):
    """A variant in this process that runs with some process-global memos replaced by
    :class:`NoMemo` (put back after each of its chunks)."""

    def __init__(self, engine: Any, answers: Sequence[Any],
                 swaps: Sequence[tuple[Any, str, Any]]) -> None:
        super().__init__(engine, answers)
        self.swaps = swaps

    def run(self, first: int, count: int) -> tuple[float, float, str]:
        saved = [(owner, name, getattr(owner, name)) for owner, name, _ in self.swaps]
        for owner, name, value in self.swaps:
            setattr(owner, name, value)
        try:
            return super().run(first, count)
        finally:
            for owner, name, value in saved:
                setattr(owner, name, value)


def _without(*names: str) -> Callable[[], tuple[Any, Any]]:
    """An experiment: as shipped (A) vs without the memos named ``module:attribute`` (B)."""
    def make() -> tuple[Any, Any]:
        import importlib

        b = fresh_engine()
        swaps = []
        for target in names:
            module, name = target.split(":")
            if module == "catalog":  # a cached_property of this engine's catalog
                vars(b.catalog)[name] = NoMemo()
                continue
            owner = importlib.import_module(module)
            current = getattr(owner, name)
            swaps.append((owner, name, getattr(current, "__wrapped__", None) or NoMemo()))
        return fresh_engine(), (b, swaps)

    return make


def _memory() -> tuple[Any, Any]:
    from engine.estimates.memory import memory_model

    b = fresh_engine()
    memory_model(b.catalog)._memo = NoMemo()  # type: ignore[assignment]
    return fresh_engine(), b


class LeastRecentlyUsed(Memo[Any, Any]):
    """The other eviction rule: a hit moves its entry to the recent end, a full memo forgets
    its least recently used entry; every change under the lock (a dict keeps insertion
    order, so re-inserting is the move)."""

    __slots__ = ()

    def get(self, key: Any) -> Any:
        found = self._entries.get(key)
        if found is not None:
            self._touch(key)
        return found

    def put(self, key: Any, value: Any) -> Any:
        entries = self._entries
        with self._lock:
            entries.pop(key, None)
            entries[key] = value
            while len(entries) > self.limit:
                del entries[next(iter(entries))]
        return value

    def remember(self, key: Any, compute: Callable[..., Any], *args: Any) -> Any:
        found = self._entries.get(key, NoMemo)
        if found is NoMemo:
            return self.put(key, compute(*args))
        self._touch(key)
        return found

    def _touch(self, key: Any) -> None:
        entries = self._entries
        with self._lock:
            if key in entries:  # another thread may have evicted it meanwhile
                entries[key] = entries.pop(key)


def memos_of(engine: Any) -> list[Memo[Any, Any]]:
    """Every memo an engine owns (its catalog's, its MemoryModel's, its evaluator's)."""
    from engine.estimates.memory import memory_model

    return [engine.catalog._derived, memory_model(engine.catalog)._memo,
            *(seen for rules in engine.evaluator._rule_verdicts.values() for _, _, seen in rules)]


def _eviction() -> tuple[Any, Any]:
    b = fresh_engine()
    for memo in memos_of(b):
        memo.__class__ = LeastRecentlyUsed
    return fresh_engine(), b


EXPERIMENTS: dict[str, Experiment] = {
    "memo": ("every fact decided by durable_rules (no verdict memo)",
             "verdicts remembered by fact signature (as shipped)", _memo),
    "derived": ("as shipped", "without Catalog.derived (so without its MemoryModel either)",
                _without("catalog:_derived")),
    "memory": ("as shipped", "without the MemoryModel's memo (job components, phase splits)",
               _memory),
    "eviction": ("as shipped: every memo forgets all when full",
                 "every memo forgets its least recently used entry (under a lock)", _eviction),
}


def print_table(title: str, rows: list[tuple[str, str, str, str]]) -> None:
    print(f"{title}\n")
    header = ("variant", "wall / recommendation", "CPU / recommendation", "note")
    width = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    print("| " + " | ".join(f"{h:<{w}}" for h, w in zip(header, width, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) if i in (0, 3) else "-" * (w + 1) + ":"
                         for i, w in enumerate(width)) + "|")
    for row in rows:
        print("| " + " | ".join(f"{c:>{w}}" if i in (1, 2) else f"{c:<{w}}"
                                for i, (c, w) in enumerate(zip(row, width, strict=True))) + " |")
    print()


def against(revision: str, args: argparse.Namespace) -> None:
    """This checkout (B) vs ``revision`` (A), each in its own warm process."""
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-ab-") as name:
        tmp = Path(name)
        tree = _archive(revision, tmp)
        workers = (Worker(str(tree), args, tmp / "cache-a"), Worker(None, args, tmp / "cache-b"))
        try:
            rows = compare((f"revision {revision}", "this checkout"), workers, args)
        finally:
            for w in workers:
                w.close()
        print_table(f"A = {workers[0].where} (git {revision}), B = {workers[1].where}", rows)


# --------------------------------------------------------------------------------------------
# The cold path: one recommendation per fresh process


def cold_command(tree: Path, example: Path, tmp: Path, name: str,
                 extra: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """``recommend --format json --no-audit`` on ``tree``'s engine, with a cache directory of
    its own and commands with bytecode (as installed), and ``extra`` in its environment."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(tmp / "pycache"),
           "GPU_ADVISOR_CACHE_DIR": str(tmp / f"cache-{name}"),
           # the key file that signed the pickle entries of revisions before issue 28
           "GPU_ADVISOR_CACHE_KEY_FILE": str(tmp / f"key-{name}" / "key"), **extra}
    for unset in ("PYTHONDONTWRITEBYTECODE", *(() if "GPU_ADVISOR_NO_CACHE" in extra
                                              else ("GPU_ADVISOR_NO_CACHE",))):
        env.pop(unset, None)
    argv = [sys.executable, "-m", "engine", "recommend", "--answers", str(example.resolve()),
            "--format", "json", "--no-audit"]
    return argv, env


def cold_run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds, the decision without its id) of one fresh process."""
    import json

    used, start = child_cpu(), time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed, used = time.perf_counter() - start, child_cpu() - used
    if proc.returncode != 0:
        sys.exit(f"cold run failed ({proc.returncode}):\n{proc.stderr.decode()}")
    decision = json.loads(proc.stdout)
    decision.pop("decision_id", None)
    return elapsed, used, json.dumps(decision, sort_keys=True).encode()


def cold(args: argparse.Namespace) -> None:
    """Cold ``recommend`` in fresh processes, the variants taking turns run by run (the first
    to go rotating); each variant's cache is filled by a warm-up run first."""
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-cold-") as name:
        tmp = Path(name)
        variants = {"cache": (ROOT, {}), "no cache": (ROOT, {"GPU_ADVISOR_NO_CACHE": "1"})}
        for spec in args.cold_with:
            label, _, assignment = spec.partition(":")
            variable, _, value = assignment.partition("=")
            variants[label] = (ROOT, {variable: value})
        if args.against:
            variants[f"{args.against}, cache"] = (_archive(args.against, tmp), {})
        commands = {label: cold_command(tree, args.example, tmp, str(i), extra)
                    for i, (label, (tree, extra)) in enumerate(variants.items())}
        outputs = {label: cold_run(*command, tmp)[2] for label, command in commands.items()}
        wall: dict[str, list[float]] = {label: [] for label in commands}
        cpu: dict[str, list[float]] = {label: [] for label in commands}
        load = load_average()
        labels = list(commands)
        for k in range(args.runs):
            for label in labels[k % len(labels):] + labels[:k % len(labels)]:
                elapsed, used, output = cold_run(*commands[label], tmp)
                wall[label].append(elapsed)
                cpu[label].append(used)
                if output != outputs[label]:
                    sys.exit(f"{label}: a different decision on run {k + 1}")
        print(f"cold `recommend --format json --no-audit` on {args.example.name}, "
              f"{args.runs} runs each, alternating; load average {load} → {load_average()}\n")
        _cold_table(labels, wall, cpu)
        same = len(set(outputs.values())) == 1
        print(f"\ndecisions byte-identical (decision_id aside): {'yes' if same else 'NO'}")


def _cold_table(labels: list[str], wall: dict[str, list[float]],
                cpu: dict[str, list[float]]) -> None:
    def spread(times: list[float]) -> str:
        low, mid, high = statistics.quantiles(times, n=4)
        return f"{mid * 1000:.1f} ({low * 1000:.1f}–{high * 1000:.1f})"

    def paired(times: list[float], base: list[float]) -> str:
        return spread([t - b for t, b in zip(times, base, strict=True)])

    first = labels[0]
    print(f"| variant | wall ms, median (quartiles) | CPU ms | wall − {first}, per run | "
          f"CPU − {first} |")
    print("|---|---:|---:|---:|---:|")
    for label in labels:
        print(f"| {label} | {spread(wall[label])} | {spread(cpu[label])} | "
              f"{paired(wall[label], wall[first]) if label != first else ''} | "
              f"{paired(cpu[label], cpu[first]) if label != first else ''} |")


def _archive(revision: str, tmp: Path) -> Path:
    """``revision``'s engine, rules and catalog, extracted under ``tmp``."""
    tree = tmp / f"tree-{revision}"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", revision, "engine", "rules", "catalog"],
                             cwd=ROOT, capture_output=True, check=True).stdout
    (tmp / "tree.tar").write_bytes(archive)
    with tarfile.open(tmp / "tree.tar") as tar:
        tar.extractall(tree, filter="data")
    return tree


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("experiment", nargs="*",
                        help=f"In-process experiments: {', '.join(EXPERIMENTS)} (default all).")
    parser.add_argument("--against", metavar="REV",
                        help="Compare this checkout with a git revision instead.")
    parser.add_argument("--chunks", type=int, default=20, help="Chunks timed (20).")
    parser.add_argument("--chunk", type=int, default=50, help="Scenarios per chunk (50).")
    parser.add_argument("--warmup", type=int, default=200, help="Warm-up scenarios (200).")
    parser.add_argument("--seed", type=int, default=20261201, help="Scenario seed.")
    parser.add_argument("--limit", type=int,
                        help="Entries per memo, both variants (default engine.memo.LIMIT).")
    parser.add_argument("--cold", action="store_true",
                        help="Time cold `recommend` runs instead (fresh processes).")
    parser.add_argument("--runs", type=int, default=25, help="Cold runs per variant (25).")
    parser.add_argument("--example", type=Path, default=EXAMPLE, help="Cold: the answers.")
    parser.add_argument("--with", dest="cold_with", action="append", default=[],
                        metavar="NAME:VAR=VALUE",
                        help="Cold: also this checkout with VAR=VALUE in its environment.")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--scenarios", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.seed, args.scenarios)
        return
    if args.cold:
        cold(args)
        return
    if args.against:
        against(args.against, args)
        return
    unknown = set(args.experiment) - set(EXPERIMENTS)
    if unknown:
        parser.error(f"unknown experiment(s): {', '.join(sorted(unknown))}")
    if args.limit:
        import engine.memo

        engine.memo.LIMIT = args.limit
    count = args.warmup + args.chunks * args.chunk
    for name in args.experiment or list(EXPERIMENTS):
        a_name, b_name, make = EXPERIMENTS[name]
        engines = make()
        answers = scenarios(engines[0], count, args.seed)
        a, b = (Without(e[0], answers, e[1]) if isinstance(e, tuple)
                else InProcess(e, answers) for e in engines)
        runners: tuple[Runner, Runner] = (a, b)
        print_table(f"experiment `{name}`", compare((a_name, b_name), runners, args))


if __name__ == "__main__":
    main()
