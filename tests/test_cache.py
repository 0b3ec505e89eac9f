"""The policy cache: used when nothing changed, rebuilt on any change, exact when used."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import pickle
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from engine.catalog.load import Catalog, load_catalog
from engine.decide import policy_cache as cache
from engine.decide.engine import _ENGINES, Engine, load_engine
from engine.files.private import Refused
from engine.resources import bundled_dir
from engine.rules.load import Rulebook

ROOT = Path(__file__).resolve().parent.parent
CSV = ("InstanceType,AcceleratorName,AcceleratorCount,Region,Price,SpotPrice\n"
       "p5.48xlarge,H100,8,us-east-1,55.04,20.79\ng6e.xlarge,L40S,1,us-east-1,1.86,0.70\n")


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    rules, catalog, store = tmp_path / "rules", tmp_path / "catalog", tmp_path / "cache"
    shutil.copytree(bundled_dir("rules"), rules)
    shutil.copytree(bundled_dir("catalog"), catalog)
    monkeypatch.setenv("GPU_ADVISOR_CACHE_DIR", str(store))
    monkeypatch.delenv("GPU_ADVISOR_NO_CACHE", raising=False)
    monkeypatch.delenv("GPU_ADVISOR_CACHE_SHARED", raising=False)
    monkeypatch.setattr(cache, "_noticed", False)
    _ENGINES.clear()
    return rules, catalog, store


def _entries(store: Path) -> list[Path]:
    return sorted(store.glob(cache.ENTRIES))


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


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two policies differ in value, type, or the fields a pydantic model was given."""
    if type(a) is not type(b):
        return [f"{where}: {type(a).__name__} vs {type(b).__name__}"]
    if isinstance(a, BaseModel):
        found = ([f"{where}: fields set"] if a.model_fields_set != b.model_fields_set else [])
        return found + [d for name in type(a).model_fields
                        for d in differences(getattr(a, name), getattr(b, name),
                                             f"{where}.{name}")]
    if dataclasses.is_dataclass(a):
        return [d for f in dataclasses.fields(a)
                for d in differences(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")]
    if isinstance(a, dict):
        if list(a) != list(b):
            return [f"{where}: keys"]
        return [d for k in a for d in differences(a[k], b[k], f"{where}[{k!r}]")]
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return [f"{where}: length"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} vs {b!r}"]


def round_trip(engine: Engine) -> cache.Policy:
    value = (engine.catalog, engine.rulebook, engine.compiled)
    return cache.decode(cache.encode("k", value), "k").policy(_compile)


def _compile(book: Rulebook) -> Any:
    from engine.decide.engine import _CANDIDATE_FIELDS
    from engine.rules.compile import compile_rulebook

    return compile_rulebook(book, _CANDIDATE_FIELDS)


@pytest.mark.parametrize("prices", [None, "csv"])
def test_a_policy_reads_back_exactly(tmp_path: Path, prices: str | None) -> None:
    """Every value, type and set field of the catalog and the rulebook, and the rulesets
    compiled again, as loaded (a YAML list kept as a plain list aside)."""
    path = None
    if prices:
        path = tmp_path / "aws" / "vms.csv"
        path.parent.mkdir()
        path.write_text(CSV)
    engine = load_engine(prices=path)
    catalog, rulebook, compiled = round_trip(engine)
    assert compiled == engine.compiled and compiled.built
    assert (catalog.hash, rulebook.hash) == (engine.catalog.hash, engine.rulebook.hash)
    found = differences((engine.catalog, engine.rulebook), (catalog, rulebook))
    assert [d for d in found if not d.endswith("LineList vs list")] == []
    assert (catalog, rulebook) == (engine.catalog, engine.rulebook)


@pytest.mark.slow
def test_first_load_writes_a_private_entry_and_the_next_uses_it(
        policy: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    rules, catalog, store = policy
    first = load_engine(rules, catalog)
    (entry,) = _entries(store)
    assert entry.name == f"policy-{os.getuid()}-{entry.name.split('-')[2]}"
    assert entry.stat().st_mode & 0o777 == 0o600
    assert store.stat().st_mode & 0o777 == 0o700
    _ENGINES.clear()

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("loaded from YAML, or tried again, despite a valid cache entry")

    monkeypatch.setattr("engine.decide.engine.load_catalog", fail)
    monkeypatch.setattr("engine.decide.engine.verified", fail)
    monkeypatch.setattr("engine.rules.evaluate.verified", fail)
    engine = load_engine(rules, catalog)
    assert isinstance(engine.catalog, Catalog) and isinstance(engine.rulebook, Rulebook)
    assert engine.compiled == first.compiled and engine.compiled.built


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
@pytest.mark.parametrize("content", [
    b"", b"garbage", b"{}", b"[]", b'{"key": 1}',
    b"gpu-advisor-policy-cache-2\n" + bytes(32) + b'{"key": "x"}\n' + pickle.dumps(None),
])
def test_a_corrupt_entry_is_rebuilt(policy: tuple[Path, Path, Path], content: bytes,
                                    caplog: pytest.LogCaptureFixture) -> None:
    rules, catalog, store = policy
    load_engine(rules, catalog)
    (entry,) = _entries(store)
    entry.write_bytes(content)
    _ENGINES.clear()
    engine = load_engine(rules, catalog)
    assert len(engine.rulebook.rules) > 50
    assert entry.read_bytes().startswith(b'{"key":')
    assert _notices(caplog) == [
        f"note: ignored an untrusted policy cache entry {entry} (corrupt); rebuilt it"]


@pytest.mark.parametrize("edit", [
    lambda d: d["rulebook"]["rules"][0]["condition"].update(all=None, any=None),
    lambda d: d["rulebook"]["rules"][0].update(condition={"line": 1}),
    lambda d: d["catalog"]["gpus"].update(h100={"id": "h100"}),
    lambda d: d.update(built="maybe"),
])
def test_an_entry_that_is_no_policy_is_corrupt(edit: Any) -> None:
    import json

    engine = load_engine()
    data = json.loads(cache.encode("k", (engine.catalog, engine.rulebook, engine.compiled)))
    edit(data)
    with pytest.raises(Refused, match=r"^corrupt$"):
        cache.decode(json.dumps(data).encode(), "k")


def test_an_entry_for_another_key_is_refused() -> None:
    engine = load_engine()
    data = cache.encode("k", (engine.catalog, engine.rulebook, engine.compiled))
    with pytest.raises(Refused, match=r"^written for another policy$"):
        cache.decode(data, "other")


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666])
def test_an_entry_others_can_write_is_never_read(
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


def test_a_value_json_cannot_hold_is_not_cached(tmp_path: Path) -> None:
    """A question's default may be anything YAML reads, a date too; JSON would make it a
    string, so such a policy is rebuilt each time rather than read back changed."""
    engine = load_engine()
    question = engine.catalog.questions[0].model_copy(update={"default": dt.date(2026, 1, 1)})
    catalog = dataclasses.replace(engine.catalog,
                                  questions=(question, *engine.catalog.questions[1:]))
    store = tmp_path / "cache"
    store.mkdir(mode=0o700)
    dir_fd = os.open(store, os.O_RDONLY)
    try:
        cache._store(dir_fd, "entry.json", "k", (catalog, engine.rulebook, engine.compiled),
                     _compile)
        assert list(store.iterdir()) == []
        cache._store(dir_fd, "entry.json", "k",
                     (engine.catalog, engine.rulebook, engine.compiled), _compile)
        assert [p.name for p in store.iterdir()] == ["entry.json"]
    finally:
        os.close(dir_fd)


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


def test_what_a_catalog_derived_in_this_process_is_not_stored() -> None:
    engine = load_engine()
    catalog = engine.catalog
    assert catalog.derived(("test", 1), lambda x: [x], 7) == [7]
    assert catalog.derived(("test", 1), lambda x: [x, x], 8) == [7]   # remembered
    assert "_derived" in catalog.__dict__
    copy = round_trip(engine)[0]
    assert "_derived" not in copy.__dict__
    assert copy.hash == catalog.hash
    assert copy.derived(("test", 1), lambda x: [x], 9) == [9]


def test_an_edited_engine_module_makes_a_new_key(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install whose code changed must not read what other code wrote."""
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
    old_pickle = store / f"policy-{'e' * 32}.pickle"  # an earlier version's: never read
    old_pickle.write_bytes(b"old")
    for n in range(cache.KEEP + 4):  # older than anything written or read from now on
        stale = store / f"policy-{n:032d}.json"
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
    assert store.joinpath("policy-00000000000000000000000000000000.json") not in kept
    assert not old_pickle.exists()
    assert store.joinpath("unrelated.txt").exists()


@pytest.mark.slow
def test_pruning_leaves_another_users_entries_alone(policy: tuple[Path, Path, Path]) -> None:
    rules, catalog, store = policy
    load_engine(rules, catalog)
    theirs = [store / f"policy-{'f' * 32}.json", store / f"policy-{'f' * 32}.pickle"]
    for path in theirs:
        path.write_bytes(b"not ours")
        os.utime(path, ns=(0, 0))  # the oldest: the first to go, were it ours
        try:
            os.chown(path, os.getuid() + 1, -1)
        except PermissionError:
            pytest.skip("changing a file's owner needs root")
    for n in range(cache.KEEP + 2):
        (store / f"policy-{n:032d}.json").write_bytes(b"old")
    usage = rules / "usage.yaml"
    usage.write_text(usage.read_text().replace("weight: 4}", "weight: 5}"))
    load_engine(rules, catalog)  # writes a new entry, then prunes
    assert all(path.exists() for path in theirs)
    assert len([e for e in _entries(store) if e not in theirs]) == cache.KEEP


def test_the_key_covers_python_and_the_libraries_versions(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgraded pydantic, PyYAML, durable_rules or Python never reads what the old one
    stored."""
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


def test_the_code_fingerprint_covers_every_module_of_the_package() -> None:
    """A cached policy is keyed on the whole engine's code, not the folder the cache lives in:
    an edit to the rule compiler or the facts must miss the cache."""
    found = cache._code_fingerprint().decode()
    for module in ("rules/compile.py", "facts/spec.py", "catalog/load.py", "decide/engine.py",
                   "version.py"):
        assert f"{module}\0" in found.replace("\\", "/"), module
