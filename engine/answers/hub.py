"""A Hub model's ``config.json``, fetched over HTTP(S) with bounds on time and size.

A config is a few KB; what the Hub (or anything answering at ``HF_ENDPOINT``) sends is held
to the limit of every input file (:data:`engine.files.yamlio.MAX_FILE_BYTES`): a declared
``Content-Length`` over it is refused before the body is read, and the body is read in pieces
and dropped the moment it passes the limit. Every wait on the network (connecting, each read)
ends after ``HF_HUB_DOWNLOAD_TIMEOUT`` seconds (10 by default, as huggingface_hub has it), and
the whole download after :data:`TOTAL_TIMEOUTS` of them, so a server that never answers, or
answers a byte at a time, costs seconds, not minutes.

The variables huggingface_hub reads are honoured: ``HF_ENDPOINT`` (http or https only),
``HF_HUB_OFFLINE`` (nothing is fetched) and ``HF_TOKEN`` (sent to the endpoint only, never
along a redirect to another host). No other file and no library cache is read.
"""

from __future__ import annotations

import functools
import http.client
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import IO, Any

from engine.errors import InputError
from engine.files.yamlio import MAX_FILE_BYTES

ENDPOINT = "https://huggingface.co"
DEFAULT_TIMEOUT_S = 10.0
TOTAL_TIMEOUTS = 6
"""The whole download may take this many timeouts (60 s by default)."""
CHUNK_BYTES = 65_536
_TRUE = ("1", "on", "yes", "true")


def hub_config_text(repo_id: str, filename: str, *, limit: int = MAX_FILE_BYTES) -> str:
    """The text of ``filename`` in Hub model ``repo_id``, or one InputError line naming it."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE:
        raise _refused(repo_id, filename, "HF_HUB_OFFLINE is set: nothing is fetched")
    url = f"{_endpoint(repo_id)}/{repo_id}/resolve/main/{filename}"
    timeout = _timeout()
    try:
        body = _fetched(url, limit, timeout, os.environ.get("HF_TOKEN"))
    except TooLarge as exc:
        raise _refused(repo_id, filename, str(exc)) from None
    except (OSError, http.client.HTTPException, ValueError) as exc:  # URLError, timeouts
        raise _refused(repo_id, filename, _reason(exc, timeout)) from None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{filename} from the Hub is not valid UTF-8 (byte {exc.start})",
                         path=repo_id) from None


@functools.lru_cache(maxsize=32)
def _fetched(url: str, limit: int, timeout_s: float, token: str | None) -> bytes:
    """One download per URL in a process (a batch naming one Hub model on many lines);
    a failure is not remembered."""
    return fetch(url, limit=limit, timeout_s=timeout_s, token=token)


class TooLarge(Exception):
    """The response is (or declares itself) larger than the limit."""


def fetch(url: str, *, limit: int, timeout_s: float, token: str | None = None) -> bytes:
    """The body at ``url``: at most ``limit`` bytes, each network wait at most ``timeout_s``
    and the whole at most :data:`TOTAL_TIMEOUTS` times that."""
    request = urllib.request.Request(url, headers={"User-Agent": "gpu-advisor"})
    if token:
        request.add_unredirected_header("Authorization", f"Bearer {token}")
    deadline = time.monotonic() + timeout_s * TOTAL_TIMEOUTS
    with _opener().open(request, timeout=timeout_s) as response:
        declared = response.headers.get("Content-Length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            raise TooLarge(f"the server declares {int(declared):,} bytes; the limit is "
                           f"{limit:,}")
        return _read_bounded(response, limit, deadline)


def _read_bounded(response: IO[bytes], limit: int, deadline: float) -> bytes:
    pieces: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError("the download did not finish in time")
        piece = response.read(min(CHUNK_BYTES, limit + 1 - size))
        if not piece:
            return b"".join(pieces)
        size += len(piece)
        if size > limit:
            raise TooLarge(f"stopped after {limit:,} bytes: the limit for a config")
        pieces.append(piece)


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects to http and https only (never ``file:`` or ``ftp:``)."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int,
                         msg: str, headers: Any, newurl: str) -> urllib.request.Request | None:
        if urllib.parse.urlsplit(newurl).scheme not in ("http", "https"):
            raise urllib.error.URLError(f"refused a redirect to {newurl[:80]}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _opener() -> urllib.request.OpenerDirector:
    """HTTP and HTTPS (with the environment's proxies), nothing else: no ``file:`` URLs."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.HTTPHandler(),
                    urllib.request.HTTPSHandler(), _HttpOnlyRedirects(),
                    urllib.request.HTTPDefaultErrorHandler(),
                    urllib.request.HTTPErrorProcessor()):
        opener.add_handler(handler)
    return opener


def _endpoint(repo_id: str) -> str:
    endpoint = (os.environ.get("HF_ENDPOINT") or ENDPOINT).rstrip("/")
    if urllib.parse.urlsplit(endpoint).scheme not in ("http", "https"):
        raise InputError(f"HF_ENDPOINT must be an http or https address, not "
                         f"{endpoint[:80]!r}", path=repo_id)
    return endpoint


def _timeout() -> float:
    raw = os.environ.get("HF_HUB_DOWNLOAD_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= 600:
        raise InputError(f"expected seconds from 0 to 600, got {raw[:40]!r}",
                         path="HF_HUB_DOWNLOAD_TIMEOUT")
    return seconds


def _refused(repo_id: str, filename: str, reason: str) -> InputError:
    return InputError(f"not a local file or folder, and its {filename} could not be fetched "
                      f"from the Hugging Face Hub ({reason}); download it and give its path",
                      path=repo_id)


def _reason(exc: BaseException, timeout: float) -> str:
    """A short reason: an HTTP status, no answer in time, or what the network said."""
    if isinstance(exc, urllib.error.HTTPError):
        hint = {401: "; a gated or private model needs HF_TOKEN",
                403: "; a gated model needs HF_TOKEN with access to it",
                404: ": no such model or file"}.get(exc.code, "")
        return f"HTTP {exc.code}{hint}"
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, TimeoutError) or "timed out" in str(reason):
        return f"no answer within {timeout:g} s (HF_HUB_DOWNLOAD_TIMEOUT)"
    text = (str(reason).strip().splitlines() or [type(reason).__name__])[0]
    return text if len(text) <= 120 else text[:119] + "…"
