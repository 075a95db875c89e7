"""`inspectlang.collector.paused`: no cyclic collection runs during a compile, and the collector
is left as the outermost caller found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspectlang.collector import paused
from inspectlang.compiler import compile_source
from inspectlang.parser import parse_with_diagnostics

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations of the collections that start while the test runs."""
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(count)
    try:
        yield started
    finally:
        gc.callbacks.remove(count)


def test_no_collection_runs_during_a_compile(collections: list[int]) -> None:
    source = (ROOT / "inspectlang" / "builtins" / "car_easy.insp").read_text(encoding="utf-8")
    assert gc.isenabled()
    for _ in range(20):  # ~10,000 objects each: the collector would run many times
        compile_source(source, "car_easy.insp")
        parse_with_diagnostics(source, "car_easy.insp")
    assert collections == []
    assert gc.isenabled()
    garbage = [[] for _ in range(5000)]  # and it runs again afterwards
    assert collections and garbage


def test_the_collector_is_left_as_found() -> None:
    seen: list[bool] = []

    @paused
    def inner() -> None:
        seen.append(gc.isenabled())

    @paused
    def outer() -> None:
        inner()
        seen.append(gc.isenabled())

    outer()
    assert seen == [False, False] and gc.isenabled()

    @paused
    def fails() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert gc.isenabled()

    gc.disable()  # the application's choice is kept
    try:
        outer()
        assert not gc.isenabled()
    finally:
        gc.enable()
