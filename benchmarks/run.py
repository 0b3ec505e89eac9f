"""Performance benchmarks for gpu-advisor: ONE table (Markdown) of every target, side by side.

Not part of the test suite. Run from the repository root with the project's virtualenv active:

    python benchmarks/run.py                 # full run: the sizes the targets name
    python benchmarks/run.py --quick         # every part, scaled down
    python benchmarks/run.py --baseline REV  # also the audit part on git revision REV

Each part can be scaled separately (see --help); ``--only`` runs a subset. A measure whose
feature this checkout lacks (``recommend --trace``, ``whatif``) says "n/a".
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"
WHATIF_EXAMPLES = tuple(ROOT / "examples" / name for name in (
    "research-70b-intermittent.yaml", "startup-7b-continuous.yaml",
    "regulated-on-premises.yaml"))
FLOOR = "import pydantic, yaml, click, durable.engine"
FLOOR_WITH_MODELS = FLOOR + "; from pydantic import BaseModel"
"""What any program defining a pydantic model loads on top of the floor (informational)."""
FLOOR_WITHOUT_PYDANTIC = "import yaml, click, durable.engine"
"""The floor without pydantic (informational: what a pydantic-free recommend path starts at)."""
HELP_FLOOR = "import click"
"""What ``--help`` is compared with (plus interpreter start)."""
PARTS = ("size", "audit", "whatif", "startup", "warm", "raw", "batch", "memory")

Row = tuple[str, str, str]
"""(measure, value, target or note)."""


# --------------------------------------------------------------------------------------------
# Scenarios


def generate_answers(count: int, seed: int, models: Sequence[str]) -> list[dict[str, Any]]:
    """``count`` varied, valid answer mappings, the same for the same seed."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for _ in range(count):
        workload = "pretrain" if rng.random() < 0.1 else "fine-tune"
        answers: dict[str, Any] = {"workload": workload}
        if rng.random() < 0.15:
            answers["model_params_b"] = rng.choice([0.5, 1.3, 3, 7, 13, 34, 70, 180])
        else:
            answers["model"] = rng.choice(models)
        if workload == "fine-tune":
            answers["method"] = rng.choice(["auto", "auto", "full", "lora", "qlora"])
        answers["hours_per_year"] = rng.choice([0, 20, 100, 300, 800, 1500, 3000, 4000, 6000,
                                                8760])
        answers["usage_pattern"] = rng.choice(["continuous", "intermittent", "bursty"])
        answers["budget_usd"] = rng.choice([0, 500, 2000, 3000, 6000, 10000, 25000, 100000,
                                            1_000_000])
        answers["upfront_capex"] = rng.random() < 0.6
        residency = rng.choice(["none", "none", "region", "on-premises"])
        answers["data_residency"] = residency
        if residency == "region":
            answers["allowed_regions"] = sorted(
                rng.sample(["us", "eu", "uk", "ca", "asia", "au"], rng.randint(1, 3)))
        if residency != "on-premises":
            answers["cloud_ecosystem"] = rng.choice(["none", "none", "aws", "azure", "gcp"])
        answers["needs_latest_hardware"] = rng.random() < 0.2
        answers["shared_small_workloads"] = rng.random() < 0.2
        answers["proprietary_data"] = rng.random() < 0.5
        out.append(answers)
    return out


def scenario_lines(count: int, seed: int) -> list[str]:
    from engine.catalog.load import load_catalog

    models = sorted(load_catalog().models)
    return [json.dumps(a, sort_keys=True) for a in generate_answers(count, seed, models)]


# --------------------------------------------------------------------------------------------
# Helpers


def gpu_advisor() -> list[str]:
    """The console script next to this interpreter (else ``python -m engine``)."""
    script = Path(sys.executable).parent / "gpu-advisor"
    if script.exists():
        return [str(script)]
    found = shutil.which("gpu-advisor")
    return [found] if found else [sys.executable, "-m", "engine"]


def child_cpu() -> float:
    """CPU seconds (user + system) used so far by finished child processes and theirs."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(argv: Sequence[str], env: dict[str, str], *, ok: Iterable[int] = (0,)) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in tuple(ok):
        sys.exit(f"benchmark command failed ({proc.returncode}): {' '.join(argv)}\n"
                 f"{proc.stderr.decode(errors='replace')}")
    return elapsed


def rss_mb() -> float:
    """Current resident set size in MB (Linux /proc; peak RSS elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2**20 if sys.platform == "darwin" else 2**10)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def verdict(ok: bool, target: str) -> str:
    return f"{'PASS' if ok else 'FAIL'} (target {target})"


def load_scenarios(count: int, seed: int) -> tuple[Any, list[Any]]:
    from engine.answers.model import validate_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    lines = scenario_lines(count, seed)
    return engine, [validate_answers(json.loads(line), engine.catalog) for line in lines]


# --------------------------------------------------------------------------------------------
# Parts


def alternating(commands: dict[str, Sequence[str]], env: dict[str, str], runs: int
                ) -> dict[str, list[float]]:
    """Wall seconds of each command, ``runs`` times, the commands taking turns run by run so
    that drifting load on a shared machine colours every median alike (one warm-up each)."""
    for argv in commands.values():
        timed_run(argv, env)  # the page cache and .pyc files
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(timed_run(argv, env))
    return times


def bench_startup(args: argparse.Namespace, env: dict[str, str]) -> list[Row]:
    """``--help`` and a cold ``recommend`` against the import floors they are held to."""
    times = alternating({
        "help": [*gpu_advisor(), "--help"],
        "help floor": [sys.executable, "-c", HELP_FLOOR],
        "recommend": [*gpu_advisor(), "recommend", "--answers", str(EXAMPLE), "--format",
                      "json", "--no-audit"],
        "floor": [sys.executable, "-c", FLOOR],
    }, env, args.runs)
    med = {name: statistics.median(values) for name, values in times.items()}
    help_ratio = med["help"] / med["help floor"]
    cold_ratio = med["recommend"] / med["floor"]
    return [
        (f"`--help` (median of {args.runs})", ms(med["help"]),
         f"floor `python -c \"{HELP_FLOOR}\"` {ms(med['help floor'])}"),
        ("`--help` / its floor", f"{help_ratio:.2f}×", verdict(help_ratio <= 1.3, "≤ 1.3×")),
        (f"cold `recommend --format json --no-audit` (median of {args.runs})",
         ms(med["recommend"]), f"floor `python -c \"{FLOOR}\"` {ms(med['floor'])}"),
        ("cold `recommend` / its floor", f"{cold_ratio:.2f}×",
         verdict(cold_ratio <= 2.8, "≤ 2.8×, no slower than before")),
    ]


def bench_size(args: argparse.Namespace, tmp: Path, env: dict[str, str]) -> list[Row]:
    """Bytes of a decision: compact (as ``batch`` writes a line and the audit store keeps it)
    and as ``recommend --format json`` prints it (indented), in-process over many distinct
    generated answers; through the command line, default and ``--trace``, on a sample."""
    try:
        from engine.files.jsonout import compact
    except ImportError:  # an older checkout: its indented JSON, re-dumped compact
        def compact(obj: Any) -> str:
            return json.dumps(json.loads(obj.to_json()), ensure_ascii=False,
                              separators=(",", ":"))
    engine, scenarios = load_scenarios(args.size_decisions, args.seed + 2)
    decisions = [engine.recommend(a, decision_id="bench") for a in scenarios]
    sizes = [len(compact(d).encode()) for d in decisions]
    printed = [len(d.to_json().encode()) for d in decisions]
    mean = statistics.mean(sizes)
    rows: list[Row] = [
        (f"bytes per decision, default, compact JSON, {len(sizes):,} distinct",
         kb(mean), verdict(mean <= 20 * 1024, "≤ 20 KB") + f"; largest {kb(max(sizes))}"),
        ("bytes per decision, default, as `--format json` prints it (indented)",
         kb(statistics.mean(printed)), f"largest {kb(max(printed))}"),
    ]
    sample = []
    for i, answers in enumerate(scenarios[:args.size_cli]):
        path = tmp / f"answers-{i}.json"
        path.write_text(answers.model_dump_json(exclude_none=True), encoding="utf-8")
        sample.append(path)
    if not sample:
        return [*rows, ("bytes per decision, `--trace`", "n/a", "not run (--size-cli 0)")]
    base = [*gpu_advisor(), "recommend", "--format", "json", "--no-audit", "--answers"]
    default = [len(cli_output([*base, str(p)], env)) for p in sample]
    if not has_flag(["recommend", "--help"], "--trace", env):
        return [*rows, ("bytes per decision, `--trace`", "n/a", "no `recommend --trace` here")]
    traced = [len(cli_output([*base, str(p), "--trace"], env)) for p in sample]
    ratio = statistics.mean(traced) / statistics.mean(default)
    return [*rows, (f"bytes per decision, `--trace` ({len(sample)} of them, command line)",
                    kb(statistics.mean(traced)),
                    f"{ratio:.2f}× the default's {kb(statistics.mean(default))} on the same")]


def cli_output(argv: Sequence[str], env: dict[str, str]) -> bytes:
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"benchmark command failed ({proc.returncode}): {' '.join(argv)}\n"
                 f"{proc.stderr.decode(errors='replace')}")
    return proc.stdout


def has_flag(args: Sequence[str], flag: str, env: dict[str, str]) -> bool:
    """Whether ``gpu-advisor ARGS`` (a ``--help``) mentions ``flag``."""
    proc = subprocess.run([*gpu_advisor(), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)
    return proc.returncode == 0 and flag in proc.stdout


def kb(size: float) -> str:
    return f"{size / 1024:,.1f} KB"


def bench_whatif(args: argparse.Namespace, env: dict[str, str]) -> list[Row]:
    """``whatif`` vs one ``recommend`` on each example: as commands (what a user waits for,
    alternating, medians), and in one warm process (the search alone)."""
    return [*bench_whatif_cli(args, env), *bench_whatif_warm(args)]


def bench_whatif_cli(args: argparse.Namespace, env: dict[str, str]) -> list[Row]:
    rows: list[Row] = []
    worst = 0.0
    for example in WHATIF_EXAMPLES[:args.whatif_examples]:
        times = alternating({
            "whatif": [*gpu_advisor(), "whatif", "--answers", str(example)],
            "recommend": [*gpu_advisor(), "recommend", "--answers", str(example),
                          "--no-audit"],
        }, env, args.whatif_runs)
        med = {name: statistics.median(values) for name, values in times.items()}
        ratio = med["whatif"] / med["recommend"]
        worst = max(worst, ratio)
        rows.append((f"`gpu-advisor whatif` on {example.name} (median of {args.whatif_runs})",
                     ms(med["whatif"]),
                     f"{ratio:.2f}× `gpu-advisor recommend` ({ms(med['recommend'])})"))
    rows.append(("`gpu-advisor whatif` / `recommend`, worst example", f"{worst:.2f}×",
                 verdict(worst <= 1.5, "≤ 1.5×")))
    return rows


def bench_whatif_warm(args: argparse.Namespace) -> list[Row]:
    try:
        from engine.tools.whatif import what_if
    except ImportError:
        return [("`whatif` / `recommend`", "n/a", "no engine.tools.whatif.what_if here")]
    from engine.answers.model import load_answers
    from engine.decide.engine import load_engine

    engine = load_engine()
    rows: list[Row] = []
    worst = 0.0
    for example in WHATIF_EXAMPLES[:args.whatif_examples]:
        answers = load_answers(example, (), engine.catalog)
        one = median_time(partial(engine.recommend, answers, decision_id="bench"),
                          args.runs + 1)
        probe = median_time(partial(what_if, engine, answers), args.whatif_runs)
        worst = max(worst, probe / one)
        rows.append((f"`what_if` in one process on {example.name} (median of "
                     f"{args.whatif_runs})", ms(probe),
                     f"{probe / one:.2f}× one `recommend` ({ms(one)})"))
    rows.append(("`what_if` / one `recommend`, in one process, worst example", f"{worst:.2f}×",
                 verdict(worst <= 1.5, "≤ 1.5×")))
    return rows


def median_time(call: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class _Sessions:
    """Counts the durable_rules sessions (and facts asserted) an Evaluator opens."""

    def __init__(self, evaluator: Any) -> None:
        self.evaluator = evaluator
        self.session = evaluator.run_session
        self.sessions = self.facts = 0

    def __enter__(self) -> _Sessions:
        def counting(ruleset: Any, facts: Iterable[dict[str, Any]], **kwargs: Any) -> Any:
            batch = list(facts)
            self.sessions += 1
            self.facts += len(batch)
            return self.session(ruleset, batch, **kwargs)

        self.evaluator.run_session = counting  # instance attribute shadows the method
        return self

    def __exit__(self, *exc: object) -> None:
        del self.evaluator.run_session


def bench_warm(args: argparse.Namespace, state: dict[str, Any]) -> list[Row]:
    """Engine.recommend on distinct answers only (no scenario is ever repeated): first the
    process's first N (its memos of request-independent figures and rule verdicts fill),
    then the next N (steady state, as in a long batch)."""
    calls = args.warm_calls
    engine, scenarios = load_scenarios(2 * calls, args.seed)
    rows: list[Row] = []
    for label, chunk in (("first", scenarios[:calls]), ("next", scenarios[calls:])):
        with _Sessions(engine.evaluator) as counted:
            start = time.perf_counter()
            for answers in chunk:
                engine.recommend(answers, decision_id="bench")
            per_call = (time.perf_counter() - start) / len(chunk)
        rate = 1 / per_call
        rows.append((f"warm `Engine.recommend`, the {label} {len(chunk):,} distinct scenarios",
                     ms(per_call), f"{rate:,.0f}/s; durable_rules sessions per call "
                     f"{counted.sessions / len(chunk):.2f} ({counted.facts / len(chunk):.1f} "
                     "facts)"))
    state["warm_per_call"] = per_call
    rows.append(("warm recommendations/s, one core (steady state)", f"{rate:,.0f}/s",
                 verdict(rate >= 1000, "≥ 1,000/s")))
    return rows


class _Recorder:
    """Wraps ``Evaluator.run`` to capture the exact (ruleset, facts) calls of one evaluation."""

    def __init__(self, run: Callable[..., Any]) -> None:
        self.run = run
        self.calls: list[tuple[Any, list[dict[str, Any]]]] = []

    def __call__(self, ruleset: Any, facts: Iterable[dict[str, Any]], **kwargs: Any) -> Any:
        batch = [dict(f) for f in facts]
        self.calls.append((ruleset, batch))
        return self.run(ruleset, batch, **kwargs)


def bench_raw(args: argparse.Namespace, state: dict[str, Any]) -> list[Row]:
    """durable_rules alone: every fact ``Engine.evaluate`` hands the evaluator (request
    strata, then candidates), captured from real evaluations, asserted into fresh sessions
    with no reuse of verdicts, through durable_rules' ``Host`` API as the engine does on a
    miss."""
    from engine.rules.evaluate import Evaluator

    engine, scenarios = load_scenarios(args.distinct, args.seed + 1)
    evaluator = engine.evaluator
    per_scenario: list[list[tuple[Any, list[dict[str, Any]]]]] = []
    for answers in scenarios:
        recorder = _Recorder(evaluator.run)
        evaluator.run = recorder  # instance attribute shadows the method
        try:
            engine.evaluate(answers, decision_id="capture")
        finally:
            del evaluator.run
        per_scenario.append(recorder.calls)
    calls = args.warm_calls
    asserts = statistics.mean(len(c) for c in per_scenario)
    facts_n = statistics.mean(sum(len(f) for _, f in c) for c in per_scenario)
    rows: list[Row] = []
    runner = Evaluator(engine.compiled, memo=False)
    for recorded in per_scenario[:20]:
        for ruleset, facts in recorded:
            runner.run_session(ruleset, facts, checked=True)
    start = time.perf_counter()
    for i in range(calls):
        for ruleset, facts in per_scenario[i % len(per_scenario)]:
            runner.run_session(ruleset, facts, checked=True)
    raw = (time.perf_counter() - start) / calls
    rows.append((f"raw durable_rules per recommendation, Host API ({asserts:.1f} sessions, "
                 f"{facts_n:.0f} facts; {len(per_scenario)} scenarios cycled)", ms(raw),
                 f"{1 / raw:,.0f}/s"))
    if "warm_per_call" in state:
        full = state["warm_per_call"]
        overhead = max(full - raw, 0.0) / raw
        rows.append(("engine overhead: (full − raw Host API) / raw", f"{overhead:.2f}×",
                     verdict(overhead <= 2, "≤ 2×") + f"; full / raw = {full / raw:.2f}×"))
    return rows


def bench_batch(args: argparse.Namespace, env: dict[str, str], tmp: Path) -> list[Row]:
    n = args.batch_scenarios
    source = tmp / "scenarios.jsonl"
    source.write_text("".join(f"{line}\n" for line in scenario_lines(n, args.seed)),
                      encoding="utf-8")
    rows: list[Row] = []
    times: dict[int, float] = {}
    cpu: dict[int, float] = {}
    outputs: dict[int, bytes] = {}
    for workers in (1, 2):
        out = tmp / f"batch-{workers}.jsonl"
        before = child_cpu()
        times[workers] = timed_run([*gpu_advisor(), "batch", str(source), "--out", str(out),
                                    "--workers", str(workers)], env)
        cpu[workers] = child_cpu() - before
        outputs[workers] = out.read_bytes()
        rows.append((f"batch {n:,} scenarios, {workers} worker(s)",
                     f"{times[workers]:.1f} s", f"{n / times[workers]:,.0f} lines/s; "
                     f"{cpu[workers]:.1f} CPU s (all processes)"))
    speedup = times[1] / times[2]
    target = "≥ 1.6× on 10,000 lines" + ("" if n >= 10_000 else f"; measured on {n:,}")
    rows.append(("batch speed-up, 2 workers vs 1", f"{speedup:.2f}×",
                 verdict(speedup >= 1.6, target)))
    # What the speed-up would be on otherwise idle cores: total work over 2 cores (an upper
    # bound that ignores the parent's serial part), to tell overhead from contention.
    rows.append(("batch CPU overhead of 2 workers (CPU s 2 / CPU s 1)",
                 f"{cpu[2] / cpu[1]:.2f}×",
                 f"idle-core bound on the speed-up: {2 * cpu[1] / cpu[2]:.2f}×"))
    rows.append(("batch output identical for 1 and 2 workers",
                 "yes" if outputs[1] == outputs[2] else "NO", ""))
    return rows


def bench_audit(args: argparse.Namespace, tmp: Path) -> list[Row]:
    """Bytes per audit record and ``audit verify`` records/s on distinct generated decisions,
    here and (``--baseline REV``) on the same decisions recorded by REV's code."""
    n = args.audit_records
    here = audit_child_run(None, n, args.seed, tmp / "here")
    rows: list[Row] = [
        (f"bytes per audit record, {n:,} distinct decisions", kb(here["bytes_per_record"]),
         verdict(here["bytes_per_record"] <= 10 * 1024, "≤ 10 KB")),
        ("`audit verify` on them (in-process `chain.verify`)",
         f"{here['verify_per_s']:,.0f} records/s", f"append {here['append_per_s']:,.0f}/s"),
    ]
    if not args.baseline:
        return [*rows, ("verify speed-up vs schema 1", "n/a", "give --baseline REV (a "
                        "revision that writes schema 1, e.g. i17)")]
    tree = tmp / "baseline"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", args.baseline, "engine", "rules", "catalog"],
                             cwd=ROOT, capture_output=True, check=True).stdout
    (tmp / "baseline.tar").write_bytes(archive)
    with tarfile.open(tmp / "baseline.tar") as tar:
        tar.extractall(tree, filter="data")
    old = audit_child_run(tree, n, args.seed, tmp / "old")
    speed = here["verify_per_s"] / old["verify_per_s"]
    return [*rows,
            (f"bytes per audit record, same decisions, {args.baseline}",
             kb(old["bytes_per_record"]),
             f"{old['bytes_per_record'] / here['bytes_per_record']:.1f}× this checkout's"),
            (f"verify speed-up vs {args.baseline} ({old['verify_per_s']:,.0f} records/s)",
             f"{speed:.2f}×", verdict(speed >= 5, "≥ 5× schema 1"))]


def audit_child_run(tree: Path | None, n: int, seed: int, folder: Path) -> dict[str, float]:
    """:func:`audit_child` in a fresh interpreter on ``tree``'s engine (None: this one)."""
    folder.mkdir()
    env = {**os.environ, "GPU_ADVISOR_CACHE_DIR": str(folder / "cache")}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--audit-child",
                           str(n), "--seed", str(seed), "--store", str(folder / "a.sqlite3")],
                          cwd=tree or ROOT, env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        sys.exit(f"audit benchmark failed:\n{proc.stderr}")
    found: dict[str, float] = json.loads(proc.stdout)
    return found


def audit_child(n: int, seed: int, store_path: Path) -> None:
    """Append ``n`` distinct decisions to a new store, then verify it; JSON on stdout."""
    from engine.audit.chain import verify
    from engine.audit.store import AuditStore

    engine, scenarios = load_scenarios(n + 1, seed)
    decisions = [engine.recommend(a) for a in scenarios]
    texts = (engine.rulebook.texts, engine.catalog.texts)
    with AuditStore(store_path) as store:
        store.append(decisions[0], *texts)  # the policy texts, stored once
    first = store_bytes(store_path)
    with AuditStore(store_path) as store:
        start = time.perf_counter()
        for decision in decisions[1:]:
            store.append(decision, *texts)
        append = time.perf_counter() - start
    with AuditStore(store_path) as store:
        start = time.perf_counter()
        verify(store)
        checked = time.perf_counter() - start
    print(json.dumps({"bytes_per_record": (store_bytes(store_path) - first) / n,
                      "append_per_s": n / append, "verify_per_s": (n + 1) / checked}))


def store_bytes(path: Path) -> int:
    """The store and its -wal/-shm files, after a checkpoint."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def bench_memory(args: argparse.Namespace, env: dict[str, str]) -> list[Row]:
    """In a fresh interpreter, so other parts do not colour the numbers."""
    marks = ",".join(str(m) for m in args.mem_evals)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--memory-child",
                           marks, "--seed", str(args.seed), "--mem-distinct",
                           str(args.mem_distinct)],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"memory benchmark failed:\n{proc.stderr}")
    data = json.loads(proc.stdout)
    rows: list[Row] = [("RSS after warm-up (engine loaded, 200 recommendations)",
                        f"{data['baseline']:,.1f} MB", "")]
    for mark, value in data["marks"]:
        rows.append((f"RSS after {mark:,} recommendations", f"{value:,.1f} MB",
                     f"{value - data['baseline']:+,.1f} MB vs warm-up"))
    (first, low), (last, high) = data["marks"][0], data["marks"][-1]
    growth = high / low - 1
    rows.append((f"RSS {first:,} → {last:,} evaluations", f"{growth:+.1%}",
                 verdict(abs(growth) <= 0.05, "flat: within ±5 %")))
    return rows


def memory_child(marks: list[int], seed: int, distinct: int) -> None:
    engine, scenarios = load_scenarios(distinct, seed)
    for i in range(200):
        engine.recommend(scenarios[i % len(scenarios)], decision_id="warmup")
    result: dict[str, Any] = {"baseline": rss_mb(), "marks": []}
    done = 0
    for mark in sorted(marks):
        while done < mark:
            engine.recommend(scenarios[done % len(scenarios)], decision_id="mem")
            done += 1
        result["marks"].append((mark, rss_mb()))
    print(json.dumps(result))


# --------------------------------------------------------------------------------------------
# Main


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def machine(start_load: str) -> str:
    def run(argv: list[str]) -> str:
        try:
            return subprocess.run(argv, capture_output=True, text=True, check=False).stdout
        except OSError:
            return "(unavailable)\n"

    lscpu = "".join(run(["lscpu"]).splitlines(keepends=True)[:10])
    return (f"nproc: {run(['nproc']).strip() or os.cpu_count()}\n"
            f"python: {platform.python_version()} ({platform.python_implementation()}, "
            f"{platform.platform()})\n"
            f"lscpu | head:\n{lscpu}"
            f"load average (1, 5, 15 min): {start_load} at the start, {load_average()} at the end "
            "(other processes share these cores: read timings with that in mind)\n")


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true",
                        help="Scale every part down (defaults below become the quick values).")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"Comma-separated parts to run: {','.join(PARTS)}.")
    parser.add_argument("--baseline", metavar="REV",
                        help="Also record and verify the same decisions with REV's code.")
    parser.add_argument("--runs", type=int, help="Runs per median (7; quick 3).")
    parser.add_argument("--size-decisions", type=int,
                        help="Distinct decisions measured in bytes (1000; quick 50).")
    parser.add_argument("--size-cli", type=int,
                        help="Of them, run through the command line (20; quick 2).")
    parser.add_argument("--warm-calls", type=int,
                        help="Warm calls timed, per half, and raw calls (2000; quick 100).")
    parser.add_argument("--distinct", type=int,
                        help="Distinct scenarios cycled by the raw part (50; quick 20).")
    parser.add_argument("--whatif-examples", type=int,
                        help="Examples the whatif part runs (3; quick 1).")
    parser.add_argument("--whatif-runs", type=int, help="Runs per whatif median (3; quick 1).")
    parser.add_argument("--mem-distinct", type=int,
                        help="Distinct scenarios cycled by the memory part (20000; quick 300).")
    parser.add_argument("--batch-scenarios", type=int,
                        help="Scenarios per batch run (10000; quick 200).")
    parser.add_argument("--audit-records", type=int,
                        help="Distinct decisions recorded, then verified (10000; quick 100).")
    parser.add_argument("--mem-evals", type=lambda s: [int(x) for x in s.split(",")],
                        help="RSS checkpoints, comma-separated (20000,100000; quick 300,900).")
    parser.add_argument("--seed", type=int, default=20261130, help="Scenario seed.")
    parser.add_argument("--memory-child", type=lambda s: [int(x) for x in s.split(",")],
                        help=argparse.SUPPRESS)
    parser.add_argument("--audit-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    defaults = {"runs": (7, 3), "size_decisions": (1000, 50), "size_cli": (20, 2),
                "warm_calls": (2000, 100), "distinct": (50, 20), "whatif_examples": (3, 1),
                "whatif_runs": (3, 1),
                "batch_scenarios": (10_000, 200), "audit_records": (10_000, 100),
                "mem_evals": ([20_000, 100_000], [300, 900]), "mem_distinct": (20_000, 300)}
    for name, (full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.memory_child:
        memory_child(args.memory_child, args.seed, args.mem_distinct)
        return
    if args.audit_child:
        audit_child(args.audit_child, args.seed, args.store)
        return
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        sys.exit(f"unknown part(s): {', '.join(sorted(unknown))}")
    rows: list[Row] = []
    state: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-bench-") as name:
        tmp = Path(name)
        # commands run as an installed package runs: with bytecode (compiled on the warm-up
        # run into a folder of their own, whatever PYTHONDONTWRITEBYTECODE says here)
        env = {**os.environ, "GPU_ADVISOR_AUDIT_DB": str(tmp / "cli-audit.sqlite3"),
               "PYTHONPYCACHEPREFIX": str(tmp / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        steps: dict[str, Callable[[], list[Row]]] = {
            "size": lambda: bench_size(args, tmp, env),
            "audit": lambda: bench_audit(args, tmp),
            "whatif": lambda: bench_whatif(args, env),
            "startup": lambda: bench_startup(args, env),
            "warm": lambda: bench_warm(args, state),
            "raw": lambda: bench_raw(args, state),
            "batch": lambda: bench_batch(args, env, tmp),
            "memory": lambda: bench_memory(args, env),
        }
        started = time.perf_counter()
        start_load = load_average()
        for part in PARTS:
            if part in parts:
                print(f"… {part}", file=sys.stderr, flush=True)
                found = steps[part]()
                for row in found:  # as they come, in case the run is cut short
                    print("  " + " | ".join(row), file=sys.stderr, flush=True)
                rows.extend(found)
        total = time.perf_counter() - started
    print(machine(start_load))
    mode = "--quick" if args.quick else "default"
    print(f"gpu-advisor benchmarks ({mode} run, {total:.0f} s in all)\n")
    width = [max(len(r[i]) for r in [("measure", "value", "target / note"), *rows])
             for i in range(3)]
    print(f"| {'measure':<{width[0]}} | {'value':>{width[1]}} | {'target / note':<{width[2]}} |")
    print(f"|{'-' * (width[0] + 2)}|{'-' * (width[1] + 1)}:|{'-' * (width[2] + 2)}|")
    for measure, value, note in rows:
        print(f"| {measure:<{width[0]}} | {value:>{width[1]}} | {note:<{width[2]}} |")


if __name__ == "__main__":
    main()
