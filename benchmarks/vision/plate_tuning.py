"""The plate reading's tuning photos, each read by the `plate` analyzer as shipped: the
parameters of `plates.plate_lines` (the quick look's side, `QUICK_SURE`, the rows' band) and of
its pixels (`ocr.FRUGAL`) are chosen on these, never on the registry's held-out plates.

134 plates: the 25 shared real photos (`../shared/vision-real`) at the consumer's 1600 px and as
they are (1280 px), the 81 drawn photos of `benchmarks/vision/plates.py` with a plate, and the
three drawn Mercosur photos of the regression tests; each read with nothing declared and no
country, with its country, with the true plate declared (must pass) and a wrong one (one real
character changed: must fail). Then the 10 drawn photos without a plate, with and without a
declared plate (must fail). Also counted: how many of the 134, nothing declared, the rows did
not settle (`plates._sure`), so the whole photo was read too.

    python -m benchmarks.vision.plate_tuning [--quick-side 416] [--row-margin 0.5]
        [--quick-gap 1.5|none]

The last line printed is one JSON object with every count and the failures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.vision import plates as drawn
from benchmarks.vision import real
from runtime.vision import AnalysisSubject


def photos() -> dict[str, list[tuple[str, bytes, str | None, str | None]]]:
    """(name, JPEG, plate or None, country) by group."""
    groups: dict[str, list[tuple[str, bytes, str | None, str | None]]] = {
        "real_1600": [],
        "real_as_is": [],
        "drawn": [],
        "regression": [],
        "none": [],
    }
    for entry in real.entries("plate"):
        truth, country = entry.truth["text"], entry.truth.get("country")
        groups["real_1600"].append((entry.file, real.resized(entry.data(), 1600), truth, country))
        groups["real_as_is"].append((entry.file, entry.data(), truth, country))
    seen: set[bytes] = set()
    with tempfile.TemporaryDirectory() as workdir:
        for case in drawn.cases(Path(workdir)):
            data = case.subject.data
            if data in seen:
                continue
            seen.add(data)
            group = "drawn" if case.expected_result is not None else "none"
            groups[group].append((case.name, data, case.expected_result, case.subject.country))
    groups["regression"] = [
        (name, data, truth, country) for name, data, truth, country in drawn.regression_photos()
    ]
    return groups


def check(parameters: dict[str, Any]) -> dict[str, Any]:
    """The counts with `parameters` (module constants of `runtime.vision.plates`) set."""
    from runtime.vision import plates
    from runtime.vision.ocr import read_lines

    for name, value in parameters.items():
        setattr(plates, name, value)
    analyzer = plates.PlateAnalyzer()
    report: dict[str, Any] = {
        "quick_side": plates.QUICK_DETECTION_SIDE,
        "quick_gap": plates.QUICK_REDUCING_GAP,
        "row_margin": plates.ROW_MARGIN,
    }
    failures: list[str] = []
    for group, found in photos().items():
        exact = exact_country = accepted = refused = whole = 0
        for name, data, truth, country in found:
            if truth is None:  # no plate: nothing read, a declared one refused
                for declared in ({}, {"plate": "AB123CD"}):
                    subject = AnalysisSubject(data=data, declared=declared, country="AR")
                    outcome = analyzer.analyze(subject)
                    refused += not outcome.valid
                    if outcome.valid:
                        failures.append(f"{group} {name} {declared}: {outcome.result}")
                continue
            read = analyzer.analyze(AnalysisSubject(data=data))
            with_country = analyzer.analyze(AnalysisSubject(data=data, country=country))
            right = analyzer.analyze(
                AnalysisSubject(data=data, country=country, declared={"plate": truth})
            )
            wrong = analyzer.analyze(
                AnalysisSubject(
                    data=data, country=country, declared={"plate": real.wrong_plate(truth)}
                )
            )
            exact += read.result == truth
            exact_country += with_country.result == truth
            accepted += right.valid
            refused += not wrong.valid
            rows = read_lines(
                data,
                detection_side=plates.PLATE_DETECTION_SIDE,
                recognition_side=plates.PLATE_RECOGNITION_SIDE,
                rows=plates.plate_rows,
            )
            whole += not plates._sure(rows, None, None)
            if read.result != truth or with_country.result != truth:
                failures.append(f"{group} {name}: {read.result} / {with_country.result}")
            if not right.valid or wrong.valid:
                failures.append(f"{group} {name}: true {right.valid}, wrong {wrong.valid}")
        total = len(found)
        if group == "none":
            report[group] = {"refused": real.count(refused, 2 * total)}
        else:
            report[group] = {
                "exact_no_country": real.count(exact, total),
                "exact_with_country": real.count(exact_country, total),
                "true_plate_accepted": real.count(accepted, total),
                "wrong_plate_refused": real.count(refused, total),
                "whole_photo_read": real.count(whole, total),
            }
    report["failures"] = failures
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick-side", type=int, default=None, help="QUICK_DETECTION_SIDE")
    parser.add_argument("--row-margin", type=float, default=None, help="ROW_MARGIN")
    parser.add_argument("--quick-gap", default=None, help="QUICK_REDUCING_GAP (none: None)")
    arguments = parser.parse_args()
    if not real.available():
        print(json.dumps({"missing": str(real.REAL)}))
        return
    parameters: dict[str, Any] = {}
    if arguments.quick_side is not None:
        parameters["QUICK_DETECTION_SIDE"] = arguments.quick_side
    if arguments.row_margin is not None:
        parameters["ROW_MARGIN"] = arguments.row_margin
    if arguments.quick_gap is not None:
        gap = arguments.quick_gap
        parameters["QUICK_REDUCING_GAP"] = None if gap == "none" else float(gap)
    report = check(parameters)
    for group, figures in report.items():
        if group != "failures":
            print(group, json.dumps(figures))
    for failure in report["failures"]:
        print(" ", failure)
    print(json.dumps(report, separators=(",", ":")))


if __name__ == "__main__":
    main()
