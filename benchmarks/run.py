"""Performance benchmarks for gpu-advisor: prints ONE table (Markdown) plus the machine.

Not part of the test suite. Run from the repository root with the project's virtualenv active:

    python benchmarks/run.py            # full run (long: 20k-scenario batches, 100k audit
                                        # records, 100k evaluations for memory)
    python benchmarks/run.py --quick    # every part, scaled down (a couple of minutes)

Each part can be scaled separately (see --help); ``--only`` runs a subset.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "startup-7b-continuous.yaml"
WHATIF_EXAMPLE = ROOT / "examples" / "research-70b-intermittent.yaml"
FLOOR = "import pydantic, yaml, click, durable.engine"
FLOOR_WITH_MODELS = FLOOR + "; from pydantic import BaseModel"
"""What any program defining a pydantic model loads on top of the floor (informational)."""
FLOOR_WITHOUT_PYDANTIC = "import yaml, click, durable.engine"
"""The floor without pydantic (informational: what a pydantic-free recommend path starts at)."""
PARTS = ("cold", "warm", "raw", "json", "batch", "cli", "audit", "memory")

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


def median_run(argv: Sequence[str], env: dict[str, str], runs: int) -> float:
    timed_run(argv, env)  # warm the page cache and .pyc files
    return statistics.median(timed_run(argv, env) for _ in range(runs))


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


def bench_cold(args: argparse.Namespace, env: dict[str, str]) -> list[Row]:
    """The command and the floor alternate run by run, so that drifting load on a shared
    machine colours both medians alike."""
    command = [*gpu_advisor(), "recommend", "--answers", str(EXAMPLE), "--format", "json",
               "--no-audit"]
    floor_cmd = [sys.executable, "-c", FLOOR]
    timed_run(command, env)  # warm the page cache and .pyc files
    timed_run(floor_cmd, env)
    with_models = [sys.executable, "-c", FLOOR_WITH_MODELS]
    without = [sys.executable, "-c", FLOOR_WITHOUT_PYDANTIC]
    colds, floors, models, bare = [], [], [], []
    for _ in range(args.runs):
        colds.append(timed_run(command, env))
        floors.append(timed_run(floor_cmd, env))
        models.append(timed_run(with_models, env))
        bare.append(timed_run(without, env))
    cold, floor = statistics.median(colds), statistics.median(floors)
    ratio = cold / floor
    return [
        (f"cold `recommend --format json --no-audit` (median of {args.runs})", ms(cold),
         f"range {ms(min(colds))}–{ms(max(colds))}"),
        (f"import floor `python -c \"{FLOOR}\"` (median, runs alternating)", ms(floor),
         f"range {ms(min(floors))}–{ms(max(floors))}"),
        ("cold / floor", f"{ratio:.2f}×", verdict(ratio <= 1.5, "≤ 1.5×")),
        ("floor + pydantic's model machinery (`from pydantic import BaseModel`)",
         ms(statistics.median(models)), "informational: loaded by any pydantic model"),
        (f"floor without pydantic `python -c \"{FLOOR_WITHOUT_PYDANTIC}\"`",
         ms(statistics.median(bare)), "informational: where a pydantic-free path would start"),
    ]


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
    with no reuse of verdicts: through durable_rules' own ``Host`` API (its Python actions),
    and driven through the C core as the engine does on a miss."""
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
    timings = {}
    for name, runner in (("Host API", Evaluator(engine.compiled, memo=False,
                                                host_actions=True)),
                         ("C core direct", Evaluator(engine.compiled, memo=False))):
        for recorded in per_scenario[:20]:
            for ruleset, facts in recorded:
                runner.run_session(ruleset, facts, checked=True)
        start = time.perf_counter()
        for i in range(calls):
            for ruleset, facts in per_scenario[i % len(per_scenario)]:
                runner.run_session(ruleset, facts, checked=True)
        timings[name] = raw = (time.perf_counter() - start) / calls
        rows.append((f"raw durable_rules per recommendation, {name} ({asserts:.1f} sessions, "
                     f"{facts_n:.0f} facts; {len(per_scenario)} scenarios cycled)", ms(raw),
                     f"{1 / raw:,.0f}/s"))
    if "warm_per_call" in state:
        full, raw = state["warm_per_call"], timings["Host API"]
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
    target = "≥ 1.6× on 20,000 scenarios" + ("" if n >= 20_000 else f"; measured on {n:,}")
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


def bench_cli(args: argparse.Namespace, env: dict[str, str]) -> list[Row]:
    diff = median_run([*gpu_advisor(), "rules", "diff", "rules", "rules"], env, args.runs)
    whatif = median_run([*gpu_advisor(), "whatif", "--answers", str(WHATIF_EXAMPLE)], env,
                        args.runs)
    return [
        (f"`rules diff rules rules` (median of {args.runs})", ms(diff), ""),
        (f"`whatif --answers {WHATIF_EXAMPLE.relative_to(ROOT)}` (median of {args.runs})",
         ms(whatif), ""),
    ]


def bench_json(args: argparse.Namespace) -> list[Row]:
    """A decision to JSON text: indented (the CLI's ``--format json``, every audit record) and
    compact (each ``batch`` record), through pydantic's compiled serializer as shipped, and
    through the exact Python path that it falls back to (``json.dumps`` of ``model_dump``)."""
    from engine.files import jsonout

    engine, scenarios = load_scenarios(min(args.warm_calls, 500), args.seed)
    decisions = [engine.recommend(answers, decision_id="bench") for answers in scenarios]
    compiled = sum(jsonout._compiled(d, indent=None) is not None for d in decisions)

    def per_call(serialise: Callable[[Any], str]) -> float:
        start = time.perf_counter()
        for decision in decisions:
            serialise(decision)
        return (time.perf_counter() - start) / len(decisions)

    exact_indented = per_call(lambda d: json.dumps(jsonout.to_data(d), indent=2,
                                                   ensure_ascii=False, allow_nan=False))
    exact_compact = per_call(lambda d: json.dumps(jsonout.to_data(d), ensure_ascii=False,
                                                  allow_nan=False, separators=(",", ":")))
    indented, compact = per_call(jsonout.dumps), per_call(jsonout.compact)
    size = sum(len(jsonout.compact(d).encode()) for d in decisions) / len(decisions) / 1024
    return [
        ("decision → JSON, indented (`--format json`, audit record)", ms(indented),
         f"exact Python path {ms(exact_indented)}: {exact_indented / indented:.1f}× slower"),
        ("decision → JSON, compact (`batch` record)", ms(compact),
         f"exact Python path {ms(exact_compact)}: {exact_compact / compact:.1f}× slower; "
         f"{size:,.0f} KiB; compiled path taken for {compiled}/{len(decisions)}"),
    ]


def bench_audit(args: argparse.Namespace, env: dict[str, str], tmp: Path) -> list[Row]:
    from engine.answers.model import load_answers
    from engine.audit.store import AuditStore
    from engine.decide.engine import load_engine

    engine = load_engine()
    decision = engine.recommend(load_answers(EXAMPLE, (), engine.catalog))
    path = tmp / "audit.sqlite3"
    n = args.audit_records
    copies = (decision.model_copy(update={"decision_id": f"bench-{i:012d}"}) for i in range(n))
    with AuditStore(path) as store:
        start = time.perf_counter()
        for copy in copies:
            store.append(copy, engine.rulebook.texts, engine.catalog.texts)
        append = time.perf_counter() - start
    verify = timed_run([*gpu_advisor(), "audit", "verify", "--audit-db", str(path)], env)
    size = sum(p.stat().st_size for p in tmp.glob("audit.sqlite3*")) / 2**20
    return [
        (f"audit append, {n:,} records", f"{n / append:,.0f} records/s",
         f"{append:.1f} s; store {size:,.0f} MB"),
        (f"`audit verify` at {n:,} records", f"{verify:.2f} s", f"{n / verify:,.0f} records/s"),
    ]


def bench_memory(args: argparse.Namespace, env: dict[str, str]) -> list[Row]:
    """In a fresh interpreter, so other parts do not colour the numbers."""
    marks = ",".join(str(m) for m in args.mem_evals)
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--memory-child",
                           marks, "--seed", str(args.seed), "--distinct",
                           str(args.mem_distinct)],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"memory benchmark failed:\n{proc.stderr}")
    data = json.loads(proc.stdout)
    rows: list[Row] = [("RSS after warm-up (engine loaded, 200 evaluations)",
                        f"{data['baseline']:,.1f} MB", "")]
    previous = data["baseline"]
    for mark, value in data["marks"]:
        rows.append((f"RSS after {mark:,} warm evaluations", f"{value:,.1f} MB",
                     f"{value - data['baseline']:+,.1f} MB vs warm-up, "
                     f"{value - previous:+,.1f} MB vs previous"))
        previous = value
    growth = data["marks"][-1][1] - data["marks"][0][1]
    last, first = data["marks"][-1][0], data["marks"][0][0]
    rows.append((f"RSS growth {first:,} → {last:,} evaluations", f"{growth:+,.1f} MB",
                 verdict(growth <= 5, "flat: ≤ +5 MB")))
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
    parser.add_argument("--runs", type=int, help="Subprocess runs per median (7; quick 3).")
    parser.add_argument("--warm-calls", type=int,
                        help="Warm calls timed, per half, and raw calls (2000; quick 100).")
    parser.add_argument("--distinct", type=int, default=50,
                        help="Distinct scenarios cycled by the raw part (50).")
    parser.add_argument("--mem-distinct", type=int,
                        help="Distinct scenarios cycled by the memory part (20000; quick 1000).")
    parser.add_argument("--batch-scenarios", type=int,
                        help="Scenarios per batch run (20000; quick 400).")
    parser.add_argument("--audit-records", type=int,
                        help="Audit records appended, then verified (100000; quick 500).")
    parser.add_argument("--mem-evals", type=lambda s: [int(x) for x in s.split(",")],
                        help="RSS checkpoints, comma-separated (10000,100000; quick 300,1000).")
    parser.add_argument("--seed", type=int, default=20261130, help="Scenario seed.")
    parser.add_argument("--memory-child", type=lambda s: [int(x) for x in s.split(",")],
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    defaults = {"runs": (7, 3), "warm_calls": (2000, 100), "batch_scenarios": (20_000, 400),
                "audit_records": (100_000, 500), "mem_evals": ([10_000, 100_000], [300, 1000]),
                "mem_distinct": (20_000, 1000)}
    for name, (full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.memory_child:
        memory_child(args.memory_child, args.seed, args.distinct)
        return
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        sys.exit(f"unknown part(s): {', '.join(sorted(unknown))}")
    rows: list[Row] = []
    state: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="gpu-advisor-bench-") as name:
        tmp = Path(name)
        env = {**os.environ, "GPU_ADVISOR_AUDIT_DB": str(tmp / "cli-audit.sqlite3")}
        steps: dict[str, Callable[[], list[Row]]] = {
            "cold": lambda: bench_cold(args, env),
            "warm": lambda: bench_warm(args, state),
            "raw": lambda: bench_raw(args, state),
            "json": lambda: bench_json(args),
            "batch": lambda: bench_batch(args, env, tmp),
            "cli": lambda: bench_cli(args, env),
            "audit": lambda: bench_audit(args, env, tmp),
            "memory": lambda: bench_memory(args, env),
        }
        started = time.perf_counter()
        start_load = load_average()
        for part in PARTS:
            if part in parts:
                print(f"… {part}", file=sys.stderr, flush=True)
                rows.extend(steps[part]())
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
