"""engine.memo: every cache of computed values is a bounded Memo owned by the object its
values derive from; none lives for the whole process."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import threading

import pytest

import engine
from engine.catalog.load import Catalog
from engine.estimates.memory import (
    MemoryModel,
    MemoryRequest,
    estimate_memory,
    gpus_needed,
    memory_model,
)
from engine.estimates.shape import shape_for_params
from engine.memo import Memo


def test_no_engine_module_holds_a_memo() -> None:
    """Process-global memos outlive the policy they were derived from; memos belong to a
    catalog, a MemoryModel, an evaluator."""
    found = []
    for info in pkgutil.walk_packages(engine.__path__, "engine."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        found += [f"{info.name}.{name}" for name, value in vars(module).items()
                  if isinstance(value, Memo)]
    assert found == []


def test_remembers_computes_once_and_keeps_none() -> None:
    calls: list[int] = []

    def compute(x: int) -> int | None:
        calls.append(x)
        return None if x < 0 else x * 2

    memo: Memo[int, int | None] = Memo(10)
    assert [memo.remember(x, compute, x) for x in (1, 1, -1, -1)] == [2, 2, None, None]
    assert calls == [1, -1]
    assert memo.get(1) == 2 and memo.get(5) is None


def test_the_catalog_memos_compute_once_keep_none_and_stay_bounded(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Catalog.derived`` and ``per_job`` inline ``Memo.remember`` (``lookup`` with the
    ``MISSING`` sentinel): the same results, None kept, the bound held."""
    import dataclasses

    import engine.memo

    monkeypatch.setattr(engine.memo, "LIMIT", 3)
    monkeypatch.setattr("engine.catalog.load.PER_JOB_LIMIT", 3)
    fresh = dataclasses.replace(catalog)  # its own (empty) memos
    calls: list[tuple[str, int]] = []

    def compute(kind: str, x: int) -> int | None:
        calls.append((kind, x))
        return None if x < 0 else x * 2

    for remember, kind in ((fresh.derived, "derived"), (fresh.per_job, "per_job")):
        assert [remember((kind, x), compute, kind, x) for x in (1, 1, -1, -1)] == [
            2, 2, None, None]
        for x in range(10):
            remember((kind, "many", x), compute, kind, x)
    assert calls[:2] == [("derived", 1), ("derived", -1)]
    assert calls[12:14] == [("per_job", 1), ("per_job", -1)]
    assert len(fresh._derived) <= 3 and len(fresh._per_job) <= 3
    assert engine.memo.MISSING is not None


def test_forgets_everything_when_full_and_never_exceeds_the_limit() -> None:
    memo: Memo[int, int] = Memo(3)
    for x in range(10):
        memo.put(x, x)
        assert 1 <= len(memo) <= 3
    assert memo.get(9) == 9 and memo.get(0) is None
    memo.put(9, 90)  # a key it holds is replaced, nothing forgotten
    assert memo.get(9) == 90 and len(memo) == 1


def test_threads_never_push_a_memo_past_its_limit() -> None:
    memo: Memo[int, int] = Memo(5)
    sizes: list[int] = []

    def worker(offset: int) -> None:
        for i in range(2_000):
            memo.remember((i * 7 + offset) % 40, lambda v: v, i)
            sizes.append(len(memo))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert max(sizes) <= 5


def test_a_memo_pickles_empty() -> None:
    memo: Memo[str, int] = Memo(9)
    memo.put("a", 1)
    copy = pickle.loads(pickle.dumps(memo))
    assert (len(copy), copy.limit, copy.get("a")) == (0, 9, None)


def test_the_catalog_keeps_one_memory_model_whose_memo_is_bounded(
        catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.memo

    assert memory_model(catalog) is memory_model(catalog)
    monkeypatch.setattr(engine.memo, "LIMIT", 8)
    model = MemoryModel(catalog.policy)
    for params_b in range(1, 30):
        req = MemoryRequest(shape_for_params(float(params_b), catalog), "full")
        assert model.estimate(req) == estimate_memory(req, catalog.policy)
        assert model.gpus_needed(req, catalog.gpu("h100-pcie")) == gpus_needed(
            req, catalog.gpu("h100-pcie"), catalog.policy)
        assert len(model._memo) <= 8
