"""`inspectlang.collector.paused`: no cyclic collection runs during a compile, and the collector
is left as the outermost caller found it."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inspectlang import compiler, parser
from inspectlang.checker import check_module
from inspectlang.collector import paused

ROOT = Path(__file__).resolve().parents[2]


def test_no_collection_runs_during_a_parse_or_a_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse and the checker, watched from inside: the collector is off while they run, and
    no collection starts then (another thread's allocations cannot start one either)."""
    inside: list[str] = []
    seen: list[tuple[str, bool]] = []
    started: list[str] = []

    def watched(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            seen.append((name, gc.isenabled()))
            inside.append(name)
            try:
                return function(*args, **kwargs)
            finally:
                inside.pop()

        return run

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and inside:
            started.append(inside[-1])

    monkeypatch.setattr(parser, "_parse_text", watched("parse", parser._parse_text))
    monkeypatch.setattr(compiler, "check_module", watched("check", check_module))
    source = (ROOT / "inspectlang" / "builtins" / "car_easy.insp").read_text(encoding="utf-8")
    gc.callbacks.append(count)
    try:
        for _ in range(20):  # ~10,000 objects each: the collector would start many times
            compiler.compile_source(source, "car_easy.insp")
            parser.parse_with_diagnostics(source, "car_easy.insp")
    finally:
        gc.callbacks.remove(count)
    assert started == []
    assert {name for name, _ in seen} == {"parse", "check"}
    assert not any(enabled for _, enabled in seen)
    assert gc.isenabled()


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
