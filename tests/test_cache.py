"""The policy cache: used when nothing changed, rebuilt on any change, never trusted blindly."""

from __future__ import annotations

import os
import pickle
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.catalog.load import Catalog, load_catalog
from engine.decide import policy_cache as cache
from engine.decide.engine import _ENGINES, load_engine
from engine.resources import bundled_dir
from engine.rules.load import Rulebook


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    rules, catalog, store = tmp_path / "rules", tmp_path / "catalog", tmp_path / "cache"
    shutil.copytree(bundled_dir("rules"), rules)
    shutil.copytree(bundled_dir("catalog"), catalog)
    monkeypatch.setenv("GPU_ADVISOR_CACHE_DIR", str(store))
    monkeypatch.setenv("GPU_ADVISOR_CACHE_KEY_FILE", str(tmp_path / "key" / "policy-cache.key"))
    monkeypatch.delenv("GPU_ADVISOR_NO_CACHE", raising=False)
    monkeypatch.delenv("GPU_ADVISOR_CACHE_SHARED", raising=False)
    monkeypatch.setattr(cache, "_noticed", False)
    _ENGINES.clear()
    return rules, catalog, store


def _entries(store: Path) -> list[Path]:
    return sorted(store.glob("policy-*.pickle"))


@pytest.mark.slow
def test_first_load_writes_a_private_entry_and_the_next_uses_it(
        policy: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    rules, catalog, store = policy
    load_engine(rules, catalog)
    (entry,) = _entries(store)
    assert entry.stat().st_mode & 0o777 == 0o600
    assert store.stat().st_mode & 0o777 == 0o700
    _ENGINES.clear()

    def fail() -> None:
        raise AssertionError("the policy was loaded from YAML despite a valid cache entry")

    monkeypatch.setattr("engine.decide.engine.load_catalog", lambda *a, **k: fail())
    engine = load_engine(rules, catalog)
    assert isinstance(engine.catalog, Catalog) and isinstance(engine.rulebook, Rulebook)


@pytest.mark.slow
def test_any_change_makes_a_new_key(policy: tuple[Path, Path, Path]) -> None:
    rules, catalog, store = policy
    first = load_engine(rules, catalog)
    usage = rules / "usage.yaml"
    usage.write_text(usage.read_text().replace("weight: 4}", "weight: 5}"))
    second = load_engine(rules, catalog)
    assert first.rulebook.hash != second.rulebook.hash
    assert len(_entries(store)) == 2


@pytest.mark.slow
@pytest.mark.parametrize(("content", "reason"), [
    (b"", "not a policy cache entry"),
    (b"garbage", "not a policy cache entry"),
    (b"gpu-advisor-policy-cache-1\n" + pickle.dumps("old format"), "not a policy cache entry"),
    (cache._MAGIC, "bad signature"),
    (cache._MAGIC + bytes(32) + b"not signed", "bad signature"),
])
def test_a_corrupt_entry_is_rebuilt(policy: tuple[Path, Path, Path], content: bytes,
                                    reason: str, caplog: pytest.LogCaptureFixture) -> None:
    rules, catalog, store = policy
    load_engine(rules, catalog)
    (entry,) = _entries(store)
    entry.write_bytes(content)
    _ENGINES.clear()
    engine = load_engine(rules, catalog)
    assert len(engine.rulebook.rules) > 50
    assert entry.read_bytes().startswith(cache._MAGIC)
    assert entry.read_bytes() != content
    assert _notices(caplog) == [
        f"note: ignored an untrusted policy cache entry {entry} ({reason}); rebuilt it"]


def _notices(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "engine.decide.policy_cache"]


def _count_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every load of the catalog from YAML (a cache miss) appends to the list returned."""
    builds: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Catalog:
        builds.append(1)
        return load_catalog(*args, **kwargs)

    monkeypatch.setattr("engine.decide.engine.load_catalog", counted)
    return builds


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
def test_an_entry_others_can_write_is_never_unpickled(
        policy: tuple[Path, Path, Path], mode: int, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    rules, catalog, store = policy
    load_engine(rules, catalog)
    (entry,) = _entries(store)
    entry.chmod(mode)
    builds = _count_builds(monkeypatch)
    _ENGINES.clear()
    load_engine(rules, catalog)
    assert builds == [1]
    assert entry.stat().st_mode & 0o777 == 0o600  # rebuilt
    assert _notices(caplog) == [f"note: ignored an untrusted policy cache entry {entry} "
                                "(writable by others); rebuilt it"]


@pytest.mark.slow
def test_no_cache_switch(policy: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    rules, catalog, store = policy
    monkeypatch.setenv("GPU_ADVISOR_NO_CACHE", "1")
    load_engine(rules, catalog)
    assert not store.exists() or _entries(store) == []


def test_content_key_tracks_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("x: 1\n")
    before = cache.content_key(tmp_path)
    (tmp_path / "a.yaml").write_text("x: 2\n")
    os.utime(tmp_path / "a.yaml", (0, 0))
    assert cache.content_key(tmp_path) != before


def test_what_a_catalog_derived_in_this_process_is_not_pickled() -> None:
    catalog = load_engine().catalog
    assert catalog.derived(("test", 1), lambda x: [x], 7) == [7]
    assert catalog.derived(("test", 1), lambda x: [x, x], 8) == [7]   # remembered
    assert "_derived" in catalog.__dict__
    copy = pickle.loads(pickle.dumps(catalog))
    assert "_derived" not in copy.__dict__
    assert copy.hash == catalog.hash
    assert copy.derived(("test", 1), lambda x: [x], 9) == [9]


@pytest.mark.slow
def test_the_compiled_rulesets_come_from_the_cache_too(
        policy: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    rules, catalog, _ = policy
    first = load_engine(rules, catalog)
    _ENGINES.clear()

    def fail(*args: object) -> None:
        raise AssertionError("the rulebook was compiled despite a valid cache entry")

    monkeypatch.setattr("engine.decide.engine.compile_rulebook", fail)
    again = load_engine(rules, catalog)
    assert again.compiled == first.compiled
    assert again.compiled is not first.compiled


def test_an_edited_engine_module_makes_a_new_key(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install whose code changed must not unpickle what other code wrote."""
    package = tmp_path / "engine"
    (package / "sub").mkdir(parents=True)
    (package / "__pycache__").mkdir()
    for name in ("cache.py", "sub/model.py", "__pycache__/cache.cpython-311.pyc", "notes.txt"):
        (package / name).write_text("x = 1\n")
    monkeypatch.setattr(cache, "__file__", str(package / "cache.py"))
    fingerprint = cache._code_fingerprint.__wrapped__
    before = fingerprint()
    assert b"model.py" in before and b"__pycache__" not in before and b"notes" not in before
    (package / "notes.txt").write_text("not code")
    (package / "__pycache__" / "cache.cpython-311.pyc").write_text("recompiled")
    assert fingerprint() == before
    os.utime(package / "sub" / "model.py", ns=(0, 10**18))
    assert fingerprint() != before
    key = cache.content_key(tmp_path)
    monkeypatch.setattr(cache, "_code_fingerprint", lambda: b"other code")
    assert cache.content_key(tmp_path) != key


@pytest.mark.slow
def test_only_the_most_recently_used_entries_are_kept(
        policy: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    rules, catalog, store = policy
    load_engine(rules, catalog)
    (used,) = _entries(store)
    store.joinpath("unrelated.txt").write_text("not ours to delete")
    for n in range(cache.KEEP + 4):  # older than anything written or read from now on
        stale = store / f"policy-{n:032d}.pickle"
        stale.write_bytes(b"old")
        os.utime(stale, ns=(n, n))
    os.utime(used, ns=(0, 0))
    _ENGINES.clear()
    load_engine(rules, catalog)  # a cache hit: marks the entry used
    usage = rules / "usage.yaml"
    usage.write_text(usage.read_text().replace("weight: 4}", "weight: 5}"))
    load_engine(rules, catalog)  # a new entry, written: prunes
    kept = _entries(store)
    assert len(kept) == cache.KEEP
    assert used in kept
    assert store.joinpath("policy-00000000000000000000000000000000.pickle") not in kept
    assert store.joinpath("unrelated.txt").exists()


@pytest.mark.slow
def test_pruning_leaves_another_users_entries_alone(policy: tuple[Path, Path, Path]) -> None:
    rules, catalog, store = policy
    load_engine(rules, catalog)
    theirs = store / f"policy-{'f' * 32}.pickle"
    theirs.write_bytes(b"not ours")
    os.utime(theirs, ns=(0, 0))  # the oldest: the first to go, were it ours
    try:
        os.chown(theirs, os.getuid() + 1, -1)
    except PermissionError:
        pytest.skip("changing a file's owner needs root")
    for n in range(cache.KEEP + 2):
        (store / f"policy-{n:032d}.pickle").write_bytes(b"old")
    usage = rules / "usage.yaml"
    usage.write_text(usage.read_text().replace("weight: 4}", "weight: 5}"))
    load_engine(rules, catalog)  # writes a new entry, then prunes
    assert theirs.exists()
    assert len([e for e in _entries(store) if e != theirs]) == cache.KEEP


def test_the_key_covers_python_and_the_libraries_versions(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgraded pydantic, PyYAML, durable_rules or Python never reads what the old one
    pickled."""
    import durable.engine
    import durable_rules_engine
    import pydantic
    import pydantic_core
    import yaml

    fingerprint = cache._dependency_fingerprint.__wrapped__
    before = fingerprint()
    for module, name in ((sys, "version"), (pydantic, "VERSION"),
                         (pydantic_core, "__version__"), (yaml, "__version__")):
        with monkeypatch.context() as patch:
            patch.setattr(module, name, "0.0.0-other")
            assert fingerprint() != before, name
    for module in (durable.engine, durable_rules_engine):  # no version attribute: its files
        copy = tmp_path / Path(module.__file__).name
        shutil.copy(module.__file__, copy)
        with monkeypatch.context() as patch:
            patch.setattr(module, "__file__", str(copy))
            assert fingerprint() != before, module
    assert fingerprint() == before
    key = cache.content_key(tmp_path)
    monkeypatch.setattr(cache, "_dependency_fingerprint", lambda: b"other libraries")
    assert cache.content_key(tmp_path) != key
