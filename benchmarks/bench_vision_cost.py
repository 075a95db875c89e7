"""CPU seconds per photo of `plate` and of the document (MRZ) reading, variants side by side.

The real photos (`../shared/vision-real/`, `INSPECTLANG_VISION_REAL`) scaled to the long side
the consumer's page sends (`SIDE`, 1600 px, JPEG 90), each photo read by every variant in turn
(so a busy machine weighs on each alike), with nothing cached between variants. `today` is the
pipeline before 2026-11-28 (onnxruntime's default threads; every line of a document read);
`shipped` is the analyzers' defaults (a plate: `plates.plate_lines`), `rows_first_resample_whole`
the same reading as shipped until 2026-11-29 (`ocr.FRUGAL` off: the whole photo resampled to
576 px and turned to BGR, then cut, and decoded again when the whole photo is read after its
rows; the quick look resampled from every pixel), `rows_first_frugal` the same with
`ocr.FRUGAL` (shipped on 2026-11-29 02:14), `576` the plate reading shipped before the rows
first (one look at 576 px); the others are what was tried on the way. Per variant:
median and p90 CPU seconds (every thread of the process), and the accuracy on the same photos:
plates read exactly with no country given, the true plate accepted and a wrong one refused
(each reading timed from an empty cache, the shipped one depending on what is declared);
MRZ fields right against the transcribed truth, and the true holder's declarations passing.

    python benchmarks/bench_vision_cost.py [--variants today,shipped] [--only plate|document]

The last line printed is one JSON object with every figure and a `targets` object of booleans.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.vision import real
from runtime.vision import AnalysisSubject
from runtime.vision.plates import PLATE_DETECTION_SIDE, PLATE_RECOGNITION_SIDE

#: The long side (px) of the photos the consumer's page uploads.
SIDE = 1600
#: Plate reading variants: keyword arguments of `runtime.vision.ocr.read_lines` (one look at
#: the photo, whatever is declared).
PLATE_VARIANTS: dict[str, dict[str, Any]] = {
    "today": {"threads": 0, "detection_side": 800, "batch": 6},
    "one_thread_800": {"threads": 1, "detection_side": 800, "batch": 6},
    "576_batch_6": {"detection_side": PLATE_DETECTION_SIDE, "batch": 6},
    "576": {"detection_side": PLATE_DETECTION_SIDE},
    "576_decoded_1600": {
        "detection_side": PLATE_DETECTION_SIDE,
        "recognition_side": PLATE_RECOGNITION_SIDE,
    },
}
#: The analyzer's own reading (`plates.plate_lines`: a quick look first, the full one when it
#: does not settle the plate), with these keyword arguments and these module constants of
#: `runtime.vision.plates` set while it reads (then put back).
ROWS_FIRST_VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "rows_first_resample_whole": ({"frugal": False}, {"QUICK_REDUCING_GAP": None}),
    "rows_first_frugal": ({}, {"QUICK_REDUCING_GAP": None}),
    "shipped": ({}, {}),
}
#: Document reading variants: keyword arguments of `runtime.vision.identity.document_reading`.
#: `shipped` looks for the MRZ in its rows only (`mrz_band.mrz_rows`) and recognizes a line at
#: a time (`ocr.RECOGNITION_BATCH`); `mrz_whole_page` is the MRZ-first reading shipped until
#: then (the detector on the whole page at 1280 px first), `mrz_rows_batch_6` the rows alone
#: with RapidOCR's batches of 6.
DOCUMENT_VARIANTS: dict[str, dict[str, Any]] = {
    "today": {"threads": 0, "detection_side": 1280, "mrz_first": False, "batch": 6},
    "one_thread": {"threads": 1, "detection_side": 1280, "mrz_first": False, "batch": 6},
    "shipped": {},
    "mrz_whole_page": {"mrz_band": False, "batch": 6},
    "mrz_rows_batch_6": {"batch": 6},
    "mrz_first_800": {"mrz_side": 800, "mrz_band": False, "batch": 6},
}
PLATE_TARGET_S = 0.2
DOCUMENT_TARGET_S = 1.0


def cpu(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.process_time()
    result = call()
    return time.process_time() - started, result


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_cpu_s": round(statistics.median(ordered), 3),
        "p90_cpu_s": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 3),
    }


def plate_reader(name: str) -> Callable[[bytes, str | None, str | None], Any]:
    """The variant's reading of a photo's lines given (country, declared plate)."""
    from runtime.vision.ocr import read_lines
    from runtime.vision.plates import plate_lines

    if name in ROWS_FIRST_VARIANTS:
        options, constants = ROWS_FIRST_VARIANTS[name]
        return partial(_with_constants, constants, partial(plate_lines, **options))
    options = PLATE_VARIANTS[name]
    return lambda data, country, declared: read_lines(data, **options)


def _with_constants(constants: dict[str, Any], call: Callable[..., Any], *arguments: Any) -> Any:
    """`call(*arguments)` with `constants` of `runtime.vision.plates` set, then put back."""
    from runtime.vision import plates

    before = {name: getattr(plates, name) for name in constants}
    for name, value in constants.items():
        setattr(plates, name, value)
    try:
        return call(*arguments)
    finally:
        for name, value in before.items():
            setattr(plates, name, value)


def _rows_first_options(name: str) -> dict[str, Any]:
    options, constants = ROWS_FIRST_VARIANTS[name]
    return {"plate_lines": options, "plates": constants}


def plates(variants: list[str]) -> dict[str, Any]:
    """Per variant and photo, three readings from an empty cache, each timed: nothing declared
    and no country (`median_cpu_s`, the figure of every earlier run), the true plate declared
    with its country, and a wrong one (one character off): the shipped reading looks twice
    when the quick look does not find the declared plate."""
    from runtime.vision.ocr import forget_lines
    from runtime.vision.plates import compare_plate

    kinds = ("nothing", "true", "wrong")
    times: dict[str, dict[str, list[float]]] = {
        name: {kind: [] for kind in kinds} for name in variants
    }
    exact = dict.fromkeys(variants, 0)
    accepted = dict.fromkeys(variants, 0)
    refused = dict.fromkeys(variants, 0)
    failures: dict[str, list[str]] = {name: [] for name in variants}
    photos = real.entries("plate")
    for entry in photos:
        data = real.resized(entry.data(), SIDE)
        truth, country = entry.truth["text"], entry.truth.get("country")
        wrong = real.wrong_plate(truth)
        for name in variants:
            reader = plate_reader(name)
            outcomes = {}
            for kind, place, declared in (
                ("nothing", None, None),
                ("true", country, truth),
                ("wrong", country, wrong),
            ):
                forget_lines()
                seconds, lines = cpu(partial(reader, data, place, declared))
                times[name][kind].append(seconds)
                outcomes[kind] = compare_plate(lines, place, declared)
            read = outcomes["nothing"].result
            exact[name] += read == truth
            accepted[name] += outcomes["true"].valid
            refused[name] += not outcomes["wrong"].valid
            if read != truth:
                failures[name].append(f"{entry.file}: {read}")
    total = len(photos)
    return {
        name: {
            "options": PLATE_VARIANTS.get(name) or _rows_first_options(name),
            **summary(times[name]["nothing"]),
            "true_declared_median_cpu_s": summary(times[name]["true"])["median_cpu_s"],
            "wrong_declared_median_cpu_s": summary(times[name]["wrong"])["median_cpu_s"],
            "exact_no_country": real.count(exact[name], total),
            "true_plate_accepted": real.count(accepted[name], total),
            "wrong_plate_refused": real.count(refused[name], total),
            "failures": failures[name],
        }
        for name in variants
    }


def documents(variants: list[str]) -> dict[str, Any]:
    from runtime.vision import load_analyzers
    from runtime.vision.identity import document_reading, entities, forget_readings
    from runtime.vision.ocr import forget_lines

    times: dict[str, list[float]] = {name: [] for name in variants}
    right = dict.fromkeys(variants, 0)
    passed = dict.fromkeys(variants, 0)
    failures: dict[str, list[str]] = {name: [] for name in variants}
    photos = real.entries("document")
    for entry in photos:
        data = real.resized(entry.data(), SIDE)
        truth = real._truth_zone(entry)
        for name in variants:
            options = DOCUMENT_VARIANTS[name]
            forget_lines()
            forget_readings()
            seconds, reading = cpu(
                lambda data=data, options=options: document_reading(data, **options)
            )
            times[name].append(seconds)
            hits, wrong = real.fields_right(reading, truth)
            right[name] += hits
            failures[name] += [f"{entry.file} {line}" for line in wrong]
            # The true holder's declarations, judged on this variant's reading (cached).
            declared = real.holder_declarations(truth, reading)
            subject = AnalysisSubject(data=data, declared=declared)
            found = entities(reading, declared, subject.now)
            for validation in real.HOLDER_VALIDATIONS:
                analyzer = load_analyzers()[validation]
                valid = reading is not None and analyzer.judge(reading, subject, found).valid
                passed[name] += valid
    total = len(photos)
    fields = len(real.DOCUMENT_FIELDS) * total
    checks = len(real.HOLDER_VALIDATIONS) * total
    return {
        name: {
            "options": DOCUMENT_VARIANTS[name],
            **summary(times[name]),
            "fields_right": real.count(right[name], fields),
            "true_holder_passes": real.count(passed[name], checks),
            "failures": failures[name],
        }
        for name in variants
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="", help="comma-separated variants (all)")
    parser.add_argument("--only", default="", choices=("", "plate", "document"))
    arguments = parser.parse_args()
    if not real.available():
        print(json.dumps({"missing": str(real.REAL)}))
        return
    chosen = [name for name in arguments.variants.split(",") if name]
    report: dict[str, Any] = {"side": SIDE}
    # Warm up every engine: loading models is not a photo's cost.
    from runtime.vision.ocr import forget_lines, read_lines

    warm = real.resized(real.entries("plate")[0].data(), SIDE)
    for threads in (0, 1):
        read_lines(warm, threads=threads)
    forget_lines()
    if arguments.only in ("", "plate"):
        names = [n for n in (*PLATE_VARIANTS, *ROWS_FIRST_VARIANTS) if not chosen or n in chosen]
        report["plate"] = plates(names)
    if arguments.only in ("", "document"):
        names = [n for n in DOCUMENT_VARIANTS if not chosen or n in chosen]
        report["document"] = documents(names)
    for kind in ("plate", "document"):
        for name, figures in report.get(kind, {}).items():
            shown = {k: v for k, v in figures.items() if k not in ("failures", "options")}
            print(f"{kind} {name}: {json.dumps(shown)}")
            for failure in figures["failures"]:
                print(f"  {failure}")
    report["targets"] = targets(report)
    print(json.dumps(report, separators=(",", ":")))


def _hits(text: str) -> int:
    return int(text.split("/")[0])


#: Per kind: the target's name, its CPU bound, and the accuracy counts that must not drop.
TARGETS = {
    "plate": (
        "plate_median_cpu_le_0_2s",
        PLATE_TARGET_S,
        ("exact_no_country", "true_plate_accepted", "wrong_plate_refused"),
    ),
    "document": ("mrz_median_cpu_le_1s", DOCUMENT_TARGET_S, ("fields_right", "true_holder_passes")),
}


def targets(report: dict[str, Any]) -> dict[str, bool]:
    """The shipped variant's median within the issue's bound, and its accuracy counts at least
    today's, per kind measured."""
    out: dict[str, bool] = {}
    for kind, (name, bound, counts) in TARGETS.items():
        variants = report.get(kind, {})
        if "shipped" not in variants:
            continue
        shipped = variants["shipped"]
        out[name] = shipped["median_cpu_s"] <= bound
        if "today" in variants:
            today = variants["today"]
            kept = all(_hits(shipped[key]) >= _hits(today[key]) for key in counts)
            out[f"{kind}_accuracy_kept"] = kept
    return out


if __name__ == "__main__":
    main()
