"""The bounded trial build: a compiled policy is built once in a child process first.

durable_rules' C core cannot be interrupted: it holds the GIL and ignores SIGINT, so a ruleset
it never finishes building hangs the process for good. The compiler keeps every shape it knows
of within the measured limits (``engine.rules.limits``); this catches what that misses. A
forked child builds each ruleset exactly as :class:`~engine.rules.evaluate.Evaluator` does and
asserts a fact with no values into it, reporting each step on a pipe. Each step may use
``TRIAL_STEP_CPU_S`` seconds of the child's *CPU time* (``RLIMIT_CPU``, set afresh before each
step): a busy machine makes the trial slower, never a failure. Only a step that gets no CPU
for ``TRIAL_STEP_WALL_S`` of wall-clock time ends the trial, and that is said to be the
machine, not the rules. The compiled policy then records that it built (``Compiled.built``),
so a policy from the cache is not tried again, and the content of every policy that built is
remembered for the process, so another catalog with the same rules is not tried again either.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import durable_rules_engine

from engine.errors import RuleError
from engine.gc_pause import collector_paused
from engine.rules.compile import Compiled, CompiledRuleset
from engine.rules.host import QuietHost, describe_error, host_definitions, ignore

TRIAL_STEP_CPU_S = 2
"""CPU seconds the trial may spend building one ruleset, or asserting one fact into it (a
few milliseconds normally; the bound only ends what would never finish). Whole seconds:
``RLIMIT_CPU`` counts in seconds. The child runs without Python's cyclic garbage collector:
a full collection there walks the whole inherited heap and copies every page it touches,
seconds of CPU time in a large process (6.6 s for six million objects), which is not the
rules' doing."""
TRIAL_STEP_WALL_S = 300.0
"""Wall-clock seconds a step may take before the trial gives up on a machine too busy to run
it: the last guard, far beyond any load that still lets the child run."""
TRIAL_MEMORY_BYTES = 512 * 2**20
"""Address space the trial child may add to what it inherits."""

_built: set[str] = set()
"""Content hashes of the compiled policies that passed the trial in this process."""
_built_lock = threading.Lock()


def verified(compiled: Compiled) -> Compiled:
    """``compiled``, marked as built, once a child process has built each of its rulesets
    with durable_rules and asserted a fact with no values into it, each step within
    ``TRIAL_STEP_CPU_S`` of CPU time (or once a policy of the same content has, in this
    process).

    A step that does not finish (the child is killed), a crash or a durable_rules error code
    becomes a :class:`RuleError` naming the rule when it is known, else the ruleset's rules.
    Without ``os.fork``, or when no child can be started, the policy is returned unmarked
    (built without a bound, as before this trial existed).
    """
    if compiled.built or not hasattr(os, "fork"):
        return compiled
    digest = content_digest(compiled)
    with _built_lock:
        if digest in _built:
            return dataclasses.replace(compiled, built=True)
    import resource  # noqa: F401 - imported here, not first in the child (see _limit_memory)

    try:
        read_end, write_end = os.pipe()
    except OSError:
        return compiled
    # the collector is paused in the child from its first instruction (TRIAL_STEP_CPU_S):
    # the child never leaves this block
    with collector_paused():
        try:
            pid = os.fork()
        except OSError:  # e.g. the process limit
            os.close(read_end)
            os.close(write_end)
            return compiled
        if pid == 0:  # the child: never returns into the caller's code
            code = 1
            try:
                os.close(read_end)
                signal.signal(signal.SIGXCPU, signal.SIG_DFL)
                _limit_memory()
                _trial(compiled, write_end)
                code = 0
            finally:
                os._exit(code)
    os.close(write_end)
    try:
        lines, status = _follow(pid, read_end)
    finally:
        os.close(read_end)
    problem = _verdict(compiled, lines, status)
    if problem is not None:
        raise problem
    with _built_lock:
        _built.add(digest)
    return dataclasses.replace(compiled, built=True)


def content_digest(compiled: Compiled) -> str:
    """What the trial builds, as a hash: every ruleset's name, kind and definitions (the
    rules' origins and what they read do not change what durable_rules is given)."""
    text = json.dumps([[r.name, r.kind, r.definitions] for r in compiled.rulesets],
                      sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _limit_cpu_for_a_step() -> None:
    """Let the child spend at most ``TRIAL_STEP_CPU_S`` more seconds of CPU time from now:
    past it the kernel ends it with SIGXCPU (the hard limit is left as inherited)."""
    import resource  # already imported by the parent (in verified): no import in the child

    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(used.ru_utime + used.ru_stime) + TRIAL_STEP_CPU_S
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _limit_memory() -> None:
    """Cap the child's address space at what it has plus TRIAL_MEMORY_BYTES (Linux)."""
    import resource  # already imported by the parent (in verified): no import in the child

    with contextlib.suppress(OSError, ValueError):
        pages = Path("/proc/self/statm").read_text(encoding="ascii").split()[0]
        size = int(pages) * os.sysconf("SC_PAGE_SIZE")
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        limit = size + TRIAL_MEMORY_BYTES
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _trial(compiled: Compiled, out: int) -> None:
    """In the child: build and probe each ruleset, saying what it starts (``build I``,
    ``probe I``, ``alone I NAME``), then ``error I NAME|- MESSAGE`` or ``ok``."""
    def say(text: str) -> None:
        _limit_cpu_for_a_step()
        os.write(out, (" ".join(text.split()) + "\n").encode())

    for index, ruleset in enumerate(compiled.rulesets):
        say(f"build {index}")
        try:
            host = QuietHost({ruleset.name: host_definitions(ruleset, lambda _: ignore)})
        except Exception as exc:
            say(f"error {index} {_culprit(ruleset, index, say)} {describe_error(exc)}")
            return
        say(f"probe {index}")
        try:
            handle = host.get_ruleset(ruleset.name)._handle
            durable_rules_engine.assert_facts(handle, json.dumps(
                [{"kind": ruleset.kind, "fact_id": "probe", "sid": "probe"}]))
        except Exception as exc:
            say(f"error {index} - {describe_error(exc)}")
            return
    say("ok")


def _culprit(ruleset: CompiledRuleset, index: int, say: Callable[[str], None]) -> str:
    """The first definition of a ruleset durable_rules cannot build alone ('-' if none)."""
    for number, name in enumerate(ruleset.definitions):
        say(f"alone {index} {name}")
        alone = dataclasses.replace(ruleset, name=f"gpu_advisor_trial_{number}",
                                    definitions={name: ruleset.definitions[name]})
        try:
            QuietHost({alone.name: host_definitions(alone, lambda _: ignore)})
        except Exception:
            return name
    return "-"


def _follow(pid: int, stream: int) -> tuple[list[str], int | None]:
    """The child's lines and exit status (None: killed after a step took longer than
    ``TRIAL_STEP_WALL_S`` of wall-clock time)."""
    lines: list[str] = []
    pending = b""
    deadline = time.monotonic() + TRIAL_STEP_WALL_S
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return lines, None
            if not select.select([stream], [], [], remaining)[0]:
                continue
            chunk = os.read(stream, 65536)
            if not chunk:
                return lines, os.waitpid(pid, 0)[1]
            *done, pending = (pending + chunk).split(b"\n")
            lines += [line.decode(errors="replace") for line in done]
            if done:
                deadline = time.monotonic() + TRIAL_STEP_WALL_S
    except BaseException:  # Ctrl-C while waiting: take the child down too
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        raise


def _verdict(compiled: Compiled, lines: list[str], status: int | None) -> RuleError | None:
    """What the child's lines and status say: None when every ruleset built."""
    if lines[-1:] == ["ok"] and status == 0:
        return None
    step, index, name, message = _last_step(lines)
    doing = "building the rules" if step in ("build", "alone") else "evaluating a fact"
    if status is None:
        return RuleError(
            f"the machine is too busy: the trial build of the rules got no answer within "
            f"{TRIAL_STEP_WALL_S:g} s of wall-clock time (it takes well under a second of CPU); "
            "try again when the machine is less loaded")
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU:
        text = f"durable_rules did not finish {doing} within {TRIAL_STEP_CPU_S:g} s of CPU time"
    elif os.WIFSIGNALED(status):
        text = f"durable_rules crashed (signal {os.WTERMSIG(status)}) {doing}"
    elif message is not None:
        text = f"durable_rules failed {doing}: {message}"
    else:
        text = f"the trial build of the rules failed (exit status {os.WEXITSTATUS(status)})"
    if index is None:
        return RuleError(text)
    ruleset = compiled.rulesets[index]
    ids = [ruleset.rule_id(name)] if name not in (None, "-") else list(ruleset.rule_ids)
    if len(ids) == 1:
        path, line = compiled.origins.get(ids[0], (None, None))
        return RuleError(text, path=path, line=line, rule_id=ids[0])
    shown = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "")
    return RuleError(f"{text}: one of the rules {shown}")


def _last_step(lines: list[str]) -> tuple[str | None, int | None, str | None, str | None]:
    """(step, ruleset index, definition name, error message) of the child's last lines."""
    step = name = message = None
    index: int | None = None
    for line in lines:
        word, _, rest = line.partition(" ")
        if word in ("build", "probe"):
            step, index, name = word, int(rest), None
        elif word == "alone":
            number, _, name = rest.partition(" ")
            step, index = word, int(number)
        elif word == "error":
            number, _, rest = rest.partition(" ")
            name, _, message = rest.partition(" ")
            index = int(number)
    return step, index, name, message
