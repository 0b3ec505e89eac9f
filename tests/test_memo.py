"""engine.memo.Memo: remembered results, bounded."""

from __future__ import annotations

from engine.memo import Memo


def test_remembers_computes_once_and_keeps_none() -> None:
    calls: list[int] = []

    def compute(x: int) -> int | None:
        calls.append(x)
        return None if x < 0 else x * 2

    memo: Memo[int, int | None] = Memo(10)
    assert [memo.remember(x, compute, x) for x in (1, 1, -1, -1)] == [2, 2, None, None]
    assert calls == [1, -1]
    assert memo.get(1) == 2 and memo.get(5) is None


def test_forgets_everything_when_full_and_never_exceeds_the_limit() -> None:
    memo: Memo[int, int] = Memo(3)
    for x in range(10):
        memo.put(x, x)
        assert 1 <= len(memo) <= 3
    assert memo.get(9) == 9 and memo.get(0) is None
