"""Every check of the policy cache: the directory and the open entry. A failed check costs a
rebuild (or a run without the cache), never trust."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from engine.catalog.load import Catalog, load_catalog
from engine.decide import policy_cache as cache
from engine.decide.engine import _ENGINES, Engine, load_engine

ROOT = Path(__file__).resolve().parent.parent
OTHER_UID = os.getuid() + 1


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cache"
    monkeypatch.setenv("GPU_ADVISOR_CACHE_DIR", str(path))
    monkeypatch.delenv("GPU_ADVISOR_NO_CACHE", raising=False)
    monkeypatch.delenv("GPU_ADVISOR_CACHE_SHARED", raising=False)
    monkeypatch.setattr(cache, "_noticed", False)
    _ENGINES.clear()
    return path


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every load of the catalog from YAML (a cache miss) appends to this list."""
    found: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Catalog:
        found.append(1)
        return load_catalog(*args, **kwargs)

    monkeypatch.setattr("engine.decide.engine.load_catalog", counted)
    return found


def load_fresh() -> Engine:
    """load_engine on the bundled policy as a new process would."""
    _ENGINES.clear()
    return load_engine()


def notices(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "engine.decide.policy_cache"]


def entries(store: Path) -> list[Path]:
    return sorted(store.glob(cache.ENTRIES))


def chown_or_skip(path: Path, uid: int) -> None:
    try:
        os.chown(path, uid, -1, follow_symlinks=False)
    except PermissionError:
        pytest.skip("changing a file's owner needs root")


# --------------------------------------------------------------------------------------------
# The directory


@pytest.mark.slow
def test_a_directory_of_another_user_needs_the_opt_in(
        store: Path, builds: list[int], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    load_fresh()
    chown_or_skip(store, OTHER_UID)
    load_fresh()
    assert builds == [1, 1]
    assert notices(caplog) == [
        f"note: not using the policy cache directory {store} (owned by uid {OTHER_UID}; "
        "set GPU_ADVISOR_CACHE_SHARED=1 to use it anyway)"]
    monkeypatch.setenv("GPU_ADVISOR_CACHE_SHARED", "1")
    load_fresh()
    assert builds == [1, 1]


@pytest.mark.slow
@pytest.mark.parametrize("value", ["0", "yes", ""])
def test_only_shared_1_opts_in(store: Path, builds: list[int], value: str,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    load_fresh()
    store.chmod(0o775)
    monkeypatch.setenv("GPU_ADVISOR_CACHE_SHARED", value)
    load_fresh()
    assert builds == [1, 1]


@pytest.mark.slow
def test_a_shared_directory_still_checks_every_entry(
        store: Path, builds: list[int], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("GPU_ADVISOR_CACHE_SHARED", "1")
    store.mkdir()
    store.chmod(0o1777)
    load_fresh()
    (entry,) = entries(store)
    entry.chmod(0o664)
    load_fresh()
    assert builds == [1, 1]
    assert notices(caplog) == [f"note: ignored an untrusted policy cache entry {entry} "
                               "(writable by others); rebuilt it"]


def test_an_unusable_cache_location_is_skipped_quietly(
        tmp_path: Path, store: Path, builds: list[int], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    monkeypatch.setenv("GPU_ADVISOR_CACHE_DIR", str(not_a_dir / "cache"))
    load_fresh()
    assert builds == [1]
    assert notices(caplog) == []


# --------------------------------------------------------------------------------------------
# The open entry


@pytest.mark.slow
def test_users_sharing_a_directory_have_entries_of_their_own(
        store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_ADVISOR_CACHE_SHARED", "1")
    load_fresh()
    (mine,) = entries(store)
    key = next(iter(_ENGINES))
    with monkeypatch.context() as patch:
        patch.setattr(os, "getuid", lambda: OTHER_UID)
        theirs = cache.entry_name(key)
    assert mine.name == cache.entry_name(key) != theirs
    assert mine.name.replace(f"-{os.getuid()}-", f"-{OTHER_UID}-") == theirs


@pytest.mark.slow
def test_an_entry_of_another_user_is_refused(store: Path, builds: list[int],
                                             caplog: pytest.LogCaptureFixture) -> None:
    load_fresh()
    (entry,) = entries(store)
    chown_or_skip(entry, OTHER_UID)
    load_fresh()
    assert builds == [1, 1]
    assert entry.stat().st_uid == os.getuid()  # rebuilt
    assert notices(caplog) == [f"note: ignored an untrusted policy cache entry {entry} "
                               f"(owned by uid {OTHER_UID}); rebuilt it"]


@pytest.mark.slow
def test_a_fifo_entry_does_not_block(store: Path, builds: list[int],
                                     caplog: pytest.LogCaptureFixture) -> None:
    load_fresh()
    (entry,) = entries(store)
    entry.unlink()
    os.mkfifo(entry, 0o600)
    loader = threading.Thread(target=load_fresh, daemon=True)
    loader.start()
    loader.join(60)
    assert not loader.is_alive(), "opening a FIFO entry blocked"
    assert builds == [1, 1]
    assert entry.is_file()
    assert notices(caplog) == [f"note: ignored an untrusted policy cache entry {entry} "
                               "(not a regular file); rebuilt it"]


# --------------------------------------------------------------------------------------------
# The notice, as a library


@pytest.mark.slow
def test_as_a_library_the_notice_is_one_line_on_stderr_without_logging_set_up(
        tmp_path: Path) -> None:
    env = {**os.environ, "GPU_ADVISOR_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GPU_ADVISOR_NO_CACHE", None)
    script = ("from engine.decide.engine import _ENGINES, load_engine\n"
              "import pathlib, sys\n"
              "load_engine()\n"
              "for _ in range(3):  # tampered three times, refused three times: one notice\n"
              "    for entry in pathlib.Path(sys.argv[1]).glob('policy-*.json'):\n"
              "        entry.write_bytes(b'tampered')\n"
              "    _ENGINES.clear()\n"
              "    load_engine()\n"
              "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "cache")],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
                          check=False)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    (entry,) = entries(tmp_path / "cache")
    assert done.stderr == (f"note: ignored an untrusted policy cache entry {entry} "
                           "(corrupt); rebuilt it\n")
