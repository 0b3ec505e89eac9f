"""Run ``python -m engine`` under a 1 GB address-space limit and read its own peak RSS.

The peak RSS the kernel reports for a process survives ``exec`` and starts at the resident
size of the process it was forked from; forked from a test runner that has grown to 200 MB it
would start at 200 MB. So a small launcher (a fresh interpreter) sets the limit, forks and
execs the engine, and reports that child's ``ru_maxrss`` from ``os.wait4`` in a file: the
engine's figure then starts from the launcher's few MB. It reports the child's CPU time too:
what a bound on work is checked against (wall-clock time depends on how busy the machine is;
it is never asserted).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

AS_LIMIT = 1024 * 1024 * 1024

_LAUNCHER = """
import os, resource, sys
limit, report, *argv = sys.argv[1:]
resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, *argv])
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as out:
    out.write(f"{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
code = os.waitstatus_to_exitcode(status)
if code < 0:
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


@dataclass(frozen=True)
class Measured:
    returncode: int
    cpu_seconds: float
    """User + system CPU time of the engine process (not of the launcher)."""
    max_rss_kb: int


def run_engine(args: list[str], report: Path, *, env: dict[str, str], timeout: float,
               cwd: Path | None = None, stdout: IO[Any] | int = subprocess.DEVNULL,
               stderr: IO[Any] | int = subprocess.PIPE) -> tuple[Measured, bytes]:
    """``python -m engine ARGS`` limited to 1 GB of address space; (measure, stderr bytes when
    ``stderr`` is a pipe). A run past ``timeout`` seconds is killed and fails the test: a
    guard against a hang only, far beyond any load."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _LAUNCHER, str(AS_LIMIT), str(report), "-m", "engine", *args],
        cwd=cwd, env=env, stdout=stdout, stderr=stderr, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"hung for more than {timeout} s: {args}") from None
    rss, cpu = report.read_text().split() if report.exists() else ("0", "0")
    return Measured(proc.returncode, float(cpu), int(rss)), err or b""
