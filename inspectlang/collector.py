"""`paused`: the cyclic garbage collector held off while a template is read and compiled.

A parse and a compile allocate tens of thousands of small objects (tokens, AST nodes, checked
nodes, the manifest's dicts and lists) that hold no reference cycles: reference counting frees
those that do not last, and the collector, which runs every 700 allocations and walks every young
container each time, finds nothing to collect among them. Holding it off for the duration of the
work saves that walking (3.3 ms of a cold compile of `car_easy.insp`, measured in fresh processes
with `benchmarks/bench_compile.py`'s cold start code); the objects that outlive the compile are
walked once by the next collection after it. Mercurial does the same around its large
structures (`util.nogc`).

The collector is process-wide: while it is held off no thread's cycles are collected (they are
at the next collection), and nested or concurrent pauses leave it as the outermost found it: a
pause that found it disabled (by the application) never enables it.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")


def paused(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """`function`, run with the cyclic garbage collector disabled."""

    @functools.wraps(function)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not gc.isenabled():
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return run
