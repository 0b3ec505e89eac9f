"""A stand-in for the Hugging Face Hub on 127.0.0.1, in a thread: point ``HF_ENDPOINT`` at it.

``GET /{owner}/{name}/resolve/main/{file}`` serves what :attr:`FakeHub.files` holds for that
path, and a few repositories misbehave on purpose:

- ``big/declared``: declares a 200 MB ``Content-Length`` (and would send that much);
- ``big/undeclared``: sends 200 MB with no length, until the client hangs up;
- ``slow/never``: reads the request and never answers (until the server stops);
- anything else: 404.

:attr:`FakeHub.sent` counts the body bytes each path was sent, so a test can show a download
stopped early (a count of work, not a time).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BIG = 200 * 1024 * 1024
PIECE = b"x" * 65_536


class FakeHub:
    """The server's state: what it serves, what it sent, who asked."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.sent: dict[str, int] = {}
        self.requests: list[tuple[str, str | None]] = []
        """(path, Authorization header) of every request."""
        self.stop = threading.Event()
        self.finished = threading.Event()
        """Set when a misbehaving (big) response has ended and ``sent`` holds its count."""
        self.url = ""

    def serve(self, repo_id: str, path: Path, filename: str = "config.json") -> None:
        self.files[f"/{repo_id}/resolve/main/{filename}"] = path.read_bytes()


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            hub.requests.append((self.path, self.headers.get("Authorization")))
            if self.path.startswith("/slow/never/"):
                hub.stop.wait()
                return
            if self.path.startswith("/big/"):
                self._big(declared=self.path.startswith("/big/declared/"))
                return
            body = hub.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            hub.sent[self.path] = len(body)

        def _big(self, *, declared: bool) -> None:
            self.send_response(200)
            if declared:
                self.send_header("Content-Length", str(BIG))
            self.end_headers()
            sent = 0
            try:
                while sent < BIG and not hub.stop.is_set():
                    self.wfile.write(PIECE)
                    sent += len(PIECE)
            except OSError:  # the client hung up
                pass
            hub.sent[self.path] = sent
            hub.finished.set()

    return Handler


@contextmanager
def fake_hub() -> Iterator[FakeHub]:
    """A running stand-in Hub; ``hub.url`` is its ``HF_ENDPOINT``."""
    hub = FakeHub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        hub.stop.set()
        server.shutdown()
        server.server_close()
