"""Every check of the policy cache: the key file, the directory, the open entry and what an
entry holds. A failed check costs a rebuild (or a run without the cache), never trust."""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from engine.catalog.load import Catalog, load_catalog
from engine.decide import policy_cache as cache
from engine.decide.engine import _ENGINES, Engine, load_engine
from engine.files import private as private_files

ROOT = Path(__file__).resolve().parent.parent
OTHER_UID = os.getuid() + 1


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cache"
    monkeypatch.setenv("GPU_ADVISOR_CACHE_DIR", str(path))
    monkeypatch.setenv("GPU_ADVISOR_CACHE_KEY_FILE", str(tmp_path / "key" / "policy-cache.key"))
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
    return sorted(store.glob("policy-*.pickle"))


def chown_or_skip(path: Path, uid: int) -> None:
    try:
        os.chown(path, uid, -1, follow_symlinks=False)
    except PermissionError:
        pytest.skip("changing a file's owner needs root")


# --------------------------------------------------------------------------------------------
# The key file


@pytest.mark.slow
def test_the_key_is_created_private_on_first_use(store: Path) -> None:
    key = cache.key_file()
    assert not key.exists()
    load_fresh()
    assert key.stat().st_mode & 0o777 == 0o600
    assert key.parent.stat().st_mode & 0o777 == 0o700
    assert len(key.read_bytes()) == cache.SECRET_BYTES
    assert sorted(p.name for p in key.parent.iterdir()) == [key.name]  # no temporary left
    secret = key.read_bytes()
    load_fresh()
    assert key.read_bytes() == secret


def test_concurrent_first_uses_agree_on_one_key(store: Path) -> None:
    store.mkdir(mode=0o700)
    dir_fd = os.open(store, os.O_RDONLY | os.O_DIRECTORY)
    found: list[bytes] = []
    try:
        threads = [threading.Thread(target=lambda: found.append(private_files.load_secret(
                       cache.key_file(), cache.SECRET_BYTES, outside=dir_fd)))
                   for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        os.close(dir_fd)
    assert len(found) == 8 and set(found) == {cache.key_file().read_bytes()}


@pytest.mark.slow
def test_a_new_key_ignores_entries_signed_with_the_old_one(
        store: Path, builds: list[int], caplog: pytest.LogCaptureFixture) -> None:
    load_fresh()
    cache.key_file().write_bytes(os.urandom(cache.SECRET_BYTES))
    load_fresh()
    assert builds == [1, 1]
    assert len(entries(store)) == 2  # entry names are keyed too: nothing to refuse
    assert notices(caplog) == []


def symlinked_key(key: Path) -> str:
    target = key.parent / "elsewhere.key"
    target.write_bytes(bytes(cache.SECRET_BYTES))
    target.chmod(0o600)
    key.symlink_to(target)
    return "a symbolic link"


def readable_key(key: Path) -> str:
    key.write_bytes(bytes(cache.SECRET_BYTES))
    key.chmod(0o640)
    return "readable or writable by others"


def short_key(key: Path) -> str:
    key.write_bytes(b"short")
    key.chmod(0o600)
    return f"not {cache.SECRET_BYTES} bytes long"


def directory_key(key: Path) -> str:
    key.mkdir()
    return "not a regular file"


def foreign_key(key: Path) -> str:
    key.write_bytes(bytes(cache.SECRET_BYTES))
    key.chmod(0o600)
    chown_or_skip(key, OTHER_UID)
    return f"owned by uid {OTHER_UID}"


@pytest.mark.slow
@pytest.mark.parametrize("plant", [symlinked_key, readable_key, short_key, directory_key,
                                   foreign_key])
def test_an_untrusted_key_file_turns_the_cache_off(
        store: Path, builds: list[int], caplog: pytest.LogCaptureFixture, plant: Any) -> None:
    key = cache.key_file()
    key.parent.mkdir(mode=0o700)
    reason = plant(key)
    planted = key.lstat()
    load_fresh()
    load_fresh()
    assert builds == [1, 1]
    assert entries(store) == []
    assert key.lstat() == planted  # left alone
    assert notices(caplog) == [
        f"note: not using the policy cache: its key file {key} is {reason}"]


@pytest.mark.slow
def test_a_key_file_in_the_cache_directory_turns_the_cache_off(
        store: Path, builds: list[int], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    key = store / "policy-cache.key"
    monkeypatch.setenv("GPU_ADVISOR_CACHE_KEY_FILE", str(key))
    load_fresh()
    assert builds == [1]
    assert entries(store) == [] and not key.exists()
    assert notices(caplog) == [
        f"note: not using the policy cache: its key file {key} is inside the cache directory"]


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
# What a signed entry holds


def write_signed(store: Path, engine: Engine, **replaced: Any) -> Path:
    """Sign, with the user's real key, an entry for the bundled key that holds ``engine``'s
    policy with some parts replaced."""
    parts = {"key": next(iter(_ENGINES)), "value": (engine.catalog, engine.rulebook,
                                                    engine.compiled), **replaced}
    secret = cache.key_file().read_bytes()
    (entry,) = entries(store)
    entry.write_bytes(cache.encode(parts["key"], parts["value"], secret))
    return entry


def swapped_texts(obj: Any) -> Any:
    """A copy whose texts differ but which claims (carries) the original hash."""
    name = next(iter(obj.texts))
    copy = dataclasses.replace(obj, texts={**obj.texts, name: obj.texts[name] + "\n# swapped"})
    copy.__dict__["hash"] = obj.hash
    return copy


@pytest.mark.slow
@pytest.mark.parametrize("part", ["catalog", "rulebook"])
def test_a_signed_entry_whose_texts_do_not_match_its_hash_is_refused(
        store: Path, builds: list[int], part: str, caplog: pytest.LogCaptureFixture) -> None:
    engine = load_fresh()
    catalog, rulebook = engine.catalog, engine.rulebook
    value = ((swapped_texts(catalog), rulebook) if part == "catalog"
             else (catalog, swapped_texts(rulebook)))
    entry = write_signed(store, engine, value=(*value, engine.compiled))
    again = load_fresh()
    assert builds == [1, 1]
    assert (again.catalog.hash, again.rulebook.hash) == (catalog.hash, rulebook.hash)
    assert notices(caplog) == [f"note: ignored an untrusted policy cache entry {entry} "
                               f"(its {part} does not match its hash); rebuilt it"]


@pytest.mark.slow
def test_a_signed_entry_for_another_key_is_refused(
        store: Path, builds: list[int], caplog: pytest.LogCaptureFixture) -> None:
    engine = load_fresh()
    entry = write_signed(store, engine, key="0" * 64)
    load_fresh()
    assert builds == [1, 1]
    assert notices(caplog) == [f"note: ignored an untrusted policy cache entry {entry} "
                               "(written for another policy); rebuilt it"]


@pytest.mark.parametrize(("header", "payload", "reason"), [
    (b'{"key": "KEY"}', pickle.dumps(None), "not a policy"),
    (b'{"key": "KEY"}', pickle.dumps(("a", "b", "c")), "not a policy"),
    (b'{"key": "KEY"}', b"not a pickle", "corrupt"),
    (b'["KEY"]', pickle.dumps(None), "corrupt"),
    (b"{not json", pickle.dumps(None), "corrupt"),
    (b'{"key": "other"}', pickle.dumps(None), "written for another policy"),
])
def test_what_a_signed_entry_holds_is_checked(header: bytes, payload: bytes,
                                              reason: str) -> None:
    secret, key = os.urandom(cache.SECRET_BYTES), "f" * 64
    signed = header.replace(b"KEY", key.encode()) + b"\n" + payload
    data = cache._MAGIC + cache._mac(secret, signed) + signed
    with pytest.raises(private_files.Refused, match=f"^{reason}$"):
        cache.decode(data, key, secret)
    with pytest.raises(private_files.Refused, match=r"^bad signature$"):
        cache.decode(data, key, os.urandom(cache.SECRET_BYTES))


@pytest.mark.slow
def test_a_valid_entry_round_trips(store: Path) -> None:
    engine = load_fresh()
    key, secret = next(iter(_ENGINES)), cache.key_file().read_bytes()
    value = (engine.catalog, engine.rulebook, engine.compiled)
    catalog, rulebook, compiled = cache.decode(cache.encode(key, value, secret), key, secret)
    assert (catalog.hash, rulebook.hash, compiled) == (
        engine.catalog.hash, engine.rulebook.hash, engine.compiled)


# --------------------------------------------------------------------------------------------
# The notice, as a library


@pytest.mark.slow
def test_as_a_library_the_notice_is_one_line_on_stderr_without_logging_set_up(
        tmp_path: Path) -> None:
    env = {**os.environ, "GPU_ADVISOR_CACHE_DIR": str(tmp_path / "cache"),
           "GPU_ADVISOR_CACHE_KEY_FILE": str(tmp_path / "key" / "policy-cache.key")}
    env.pop("GPU_ADVISOR_NO_CACHE", None)
    script = ("from engine.decide.engine import _ENGINES, load_engine\n"
              "import pathlib, sys\n"
              "load_engine()\n"
              "for _ in range(3):  # tampered three times, refused three times: one notice\n"
              "    for entry in pathlib.Path(sys.argv[1]).glob('policy-*.pickle'):\n"
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
                           "(not a policy cache entry); rebuilt it\n")


def test_the_code_fingerprint_covers_every_module_of_the_package() -> None:
    """A cached policy is keyed on the whole engine's code, not the folder the cache lives in:
    an edit to the rule compiler or the facts must miss the cache."""
    from engine.decide.policy_cache import _code_fingerprint

    found = _code_fingerprint().decode()
    for module in ("rules/compile.py", "facts/spec.py", "catalog/load.py", "decide/engine.py",
                   "version.py"):
        assert f"{module}\0" in found.replace("\\", "/"), module
