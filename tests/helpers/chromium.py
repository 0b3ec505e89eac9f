"""A real headless Chromium, driven over the DevTools protocol on a pipe (no library, no
port): open a page, collect its console errors and network requests, read values from it and
take a screenshot.

Chromium runs with the flags a closed sandbox needs (no first run, no background networking,
no component updates, a fresh profile) and ``--remote-debugging-pipe``: commands go out on
file descriptor 3 and replies come back on 4, each a JSON message ended by a NUL byte.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--remote-debugging-pipe")
PATIENCE_S = 180
"""How long to wait for Chromium's reply before calling it hung (not a speed check)."""


def chromium() -> str | None:
    """The Chromium binary, if this machine has one."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Page:
    """One page in a fresh headless Chromium; use as a context manager."""

    def __init__(self, binary: str, width: int = 1100, height: int = 1400) -> None:
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        to_child, self._out = _high(*os.pipe())
        self._in, from_child = _high(*os.pipe())
        command = [binary, *FLAGS, f"--user-data-dir={self.profile}",
                   f"--window-size={width},{height}", "about:blank"]
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=False,
            preexec_fn=_as_fds_3_and_4(to_child, from_child))
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next = 0
        self.console_errors: list[str] = []
        self.requests: list[str] = []
        self.session = ""

    def __enter__(self) -> Page:
        targets = self.call("Target.getTargets")["targetInfos"]
        target = next(t["targetId"] for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable", session=True)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=PATIENCE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self._in)
        os.close(self._out)
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- the protocol ------------------------------------------------------------------
    def call(self, method: str, *, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command and return its result (events seen meanwhile are recorded)."""
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self._event(reply)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._in], [], [], PATIENCE_S)
            if not ready:
                raise RuntimeError("Chromium did not answer")
            chunk = os.read(self._in, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        found: dict[str, Any] = json.loads(raw)
        return found

    def _event(self, event: dict[str, Any]) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.console_errors.append(json.dumps(params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            self.console_errors.append(json.dumps(params.get("exceptionDetails", {})))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            self.console_errors.append(params["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            self.requests.append(params.get("request", {}).get("url", ""))
        elif method == "Page.loadEventFired":
            self._loaded = True

    # -- what a test does ----------------------------------------------------------------
    def open(self, path: Path) -> None:
        """Load a file and wait for its load event."""
        self._loaded = False
        self.call("Page.navigate", session=True, url=path.resolve().as_uri())
        while not self._loaded:
            self._event(self._read())

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True)
        return result["result"].get("value")

    def screenshot(self, path: Path) -> None:
        """The whole page as PNG."""
        data = self.call("Page.captureScreenshot", session=True, format="png",
                         captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))


def _high(*fds: int) -> tuple[int, int]:
    """The pipe ends moved to 10 and up, clear of the 3 and 4 Chromium reads them as."""
    import fcntl

    moved = []
    for fd in fds:
        moved.append(fcntl.fcntl(fd, fcntl.F_DUPFD, 10))
        os.close(fd)
    return moved[0], moved[1]


def _as_fds_3_and_4(to_child: int, from_child: int) -> Any:
    """In the child, before it runs Chromium: its end of each pipe as fd 3 and fd 4 (the
    ends sit at 10 and up, so neither is overwritten before it is copied)."""
    def remap() -> None:
        os.dup2(to_child, 3)
        os.dup2(from_child, 4)
    return remap
