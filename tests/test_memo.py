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


def test_a_full_memo_forgets_everything_and_stays_within_its_limit() -> None:
    memo: Memo[int, int] = Memo(3)
    for key in range(3):
        assert memo.remember(key, lambda k: k * 10, key) == key * 10
    assert memo.remember(1, lambda: -1) == 10  # remembered: not computed again
    memo.put(7, 70)
    assert len(memo) == 1 and memo.get(7) == 70 and memo.get(0) is None


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
