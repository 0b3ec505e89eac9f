"""The cyclic garbage collector is paused while a recommendation is made, and only then."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from engine.decide.engine import load_engine
from engine.gc_pause import collector_paused

EXAMPLE = "examples/startup-7b-continuous.yaml"


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_resumed_after_even_when_nested_or_failing() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_collector_the_host_disabled_stays_disabled() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_in_threads_resume_once_the_last_ends() -> None:
    gc.enable()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:  # no timeouts: the order is by events, however slow the machine
        try:
            with collector_paused():
                first_in.set()
                second_in.wait()
        finally:
            first_in.set()
            first_out.set()

    def second() -> None:
        first_in.wait()
        try:
            with collector_paused():
                second_in.set()
                first_out.wait()
                seen.append(gc.isenabled())  # the first pause ended, this one holds
        finally:
            second_in.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [False]
    assert gc.isenabled()


def test_a_recommendation_pauses_the_collector_and_resumes_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.decide.engine as pipeline
    from engine.answers.model import load_answers

    engine = load_engine()
    answers = load_answers(EXAMPLE, (), engine.catalog)
    states: list[bool] = []
    build = pipeline.build_candidates

    def spying(*args: Any) -> Any:
        states.append(gc.isenabled())
        return build(*args)

    monkeypatch.setattr(pipeline, "build_candidates", spying)
    gc.enable()
    engine.recommend(answers, decision_id="x")
    assert states == [False]
    assert gc.isenabled()


def test_one_shot_commands_run_with_the_collector_paused_and_long_ones_without() -> None:
    from engine.cli import ONE_SHOT, _paused_for

    assert {"recommend", "whatif"} <= ONE_SHOT and not {"batch", "audit", "rules"} & ONE_SHOT
    gc.enable()
    for command, paused in (("recommend", True), ("batch", False), ("audit", False),
                            (None, False)):
        with _paused_for(command):
            assert gc.isenabled() is not paused, command
        assert gc.isenabled()
