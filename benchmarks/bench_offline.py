"""The consumer's offline flow, each scenario of tests/browser/test_consumer_offline.py run 20
times in Chromium (Debian's, `make system-deps browser-deps`): photos lost and duplicated (both
must be 0) and the seconds from the network's return (or the first try) to the last photo
stored, against the same photo sent on a good network in this run (the baseline).

    python benchmarks/bench_offline.py [--repeat 20]

The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "runs.jsonl"
        env = {**os.environ, "OFFLINE_REPEAT": str(args.repeat), "OFFLINE_RESULTS": str(results)}
        command = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                   "--timeout", "7200", "tests/browser/test_consumer_offline.py"]  # fmt: skip
        finished = subprocess.run(command, cwd=ROOT, env=env, check=False)
        runs = (
            [json.loads(line) for line in results.read_text().splitlines()]
            if results.exists()
            else []
        )
    by_scenario: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        by_scenario[run["scenario"]].append(run)
    baseline = [r["seconds"] for r in by_scenario.get("online (baseline)", [])]
    base = statistics.median(baseline) if baseline else None
    report: dict[str, Any] = {"tests_passed": finished.returncode == 0, "scenarios": {}}
    for name, found in by_scenario.items():
        seconds = [r["seconds"] for r in found]
        report["scenarios"][name] = {
            "runs": len(found),
            "photos": sum(r["photos"] for r in found),
            "lost": sum(r["lost"] for r in found),
            "duplicated": sum(r["duplicated"] for r in found),
            "seconds_median": round(statistics.median(seconds), 2),
            "seconds_max": round(max(seconds), 2),
            "median_ratio_to_baseline": round(statistics.median(seconds) / base, 2)
            if base
            else None,
        }
        print(f"{name}: {json.dumps(report['scenarios'][name])}")
    print(json.dumps(report, separators=(",", ":")))


if __name__ == "__main__":
    main()
