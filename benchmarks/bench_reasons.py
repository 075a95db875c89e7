"""A reason's `{values}` are checked in linear time (issue 25: 1,000 values took 0.65 s and 2,000
took 3.1 s, a quadratic cost from placing each value at its column and recounting the escapes
before it).

Checks a template whose one reason holds N values (`{km}` N times) for N = 500, 1,000, 2,000 and
4,000, the fastest of 3 runs each, and prints the time per value and the ratio of each size's
time to the previous one (2.0 is linear; quadratic would be 4.0). The last line printed is ONE
JSON object: `{"seconds": {...}, "doubling_ratios": [...], "max_doubling_ratio": ...}`.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itertools

from inspectlang.compiler import check_source

SIZES = (500, 1000, 2000, 4000)


def template(values: int) -> str:
    reason = " ".join("{km}" for _ in range(values))
    return (
        'template "Reasons"\n    type: car\n\nvariable km: numeric = 0\n\n'
        f'verdict\n    disapprove "{reason}" when km > 1\n'
    )


def fastest(source: str, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        check_source(source, "reasons.insp")
        best = min(best, time.perf_counter() - start)
    return best


def main() -> dict[str, object]:
    check_source(template(10))  # warm the parser's tables
    seconds = {n: fastest(template(n)) for n in SIZES}
    ratios = [round(seconds[b] / seconds[a], 2) for a, b in itertools.pairwise(SIZES)]
    for n in SIZES:
        print(f"{n:>5} values: {seconds[n]:.3f} s ({seconds[n] / n * 1e6:.0f} us per value)")
    print("doubling ratios (2.0 is linear):", ratios)
    return {
        "seconds": {str(n): round(s, 3) for n, s in seconds.items()},
        "doubling_ratios": ratios,
        "max_doubling_ratio": max(ratios),
    }


if __name__ == "__main__":
    print(json.dumps(main()))
