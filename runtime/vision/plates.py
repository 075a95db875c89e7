"""The `plate` analyzer: the licence plate a photo shows, compared with the declared one.

A plate is read in three steps. OCR gives text lines; every window of a line (and of two
stacked lines, for two-row plates) whose length fits a plate format is a candidate; a country's
formats (`L` letter, `D` digit) then resolve look-alikes position by position (`0` where a digit
must be, `O` where a letter must), and the candidate needing the fewest such fixes wins. With a
declared plate, a window matches when it differs from it only by look-alikes
(`codes.same_code`): a wrong plate differs by at least one real character and is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, ClassVar

from runtime.validators import ValidationOutcome
from runtime.vision import AnalysisSubject, register
from runtime.vision.codes import decide, normalize_code, same_code, to_digit, to_letter
from runtime.vision.ocr import FRUGAL, TextLine, find_boxes, read_lines, same_row
from runtime.vision.pictures import UnreadablePhoto

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "PLATE_FORMATS",
    "PlateAnalyzer",
    "PlateRead",
    "coerce",
    "plate_candidates",
    "plate_lines",
    "plate_rows",
]

#: Plate formats by ISO 3166 alpha-2 country: `L` a letter, `D` a digit, most common first.
PLATE_FORMATS: dict[str, tuple[str, ...]] = {
    "AR": ("LLDDDLL", "LLLDDD"),  # Mercosur since 2016; the 1995 series
    "BR": ("LLLDLDD", "LLLDDDD"),  # Mercosur since 2018; the older grey plates
    "UY": ("LLLDDDD",),
    "PY": ("LLLLDDD", "LLLDDD"),
    "CL": ("LLLLDD", "LLDDDD"),
    "CO": ("LLLDDD",),
    "PE": ("LLLDDD", "LDLDDD"),
    "BO": ("DDDDLLL",),
    "MX": ("LLLDDDD", "LLLDDDL"),
    "ES": ("DDDDLLL",),
}
#: Penalty on a candidate's score per look-alike fixed by the format.
FIX_PENALTY = 0.06
#: Penalty per `O`/`0` or `I`/`1` fixed: less than `GENERIC_PENALTY`.
SAME_GLYPH_PENALTY = 0.01
#: Penalty per character of the line left out of a candidate window (a border read as `I`).
LEFT_OUT_PENALTY = 0.03
#: Penalty on a candidate fitting no known format (unknown country): below a left-out
#: character's, so that `7KQ4521` is not cut to the Chilean-looking `KQ4521`.
GENERIC_PENALTY = 0.02
#: Share of the thinner row's text height by which a two-row plate's boxes (or the boxes of
#: groups side by side) may overlap.
STACK_OVERLAP = 0.4
#: Candidates needing more fixes than this are not plates but words.
MAX_FIXES = 2
#: Score (OCR confidence minus penalties) at and above which a plate counts as read.
READ_BOUNDARY = 0.5
#: Longest side (pixels) the text detector sees on a plate photo: its cost grows with the
#: square of it. At 576 a plate's characters on a whole car from 5 m are ~11 px high, still
#: found; the real plates read as at `ocr.DETECTION_SIDE` (800) for about half the CPU
#: (benchmarks/bench_vision_cost.py, docs/vision.md "Cost per photo"). At 544 they did too,
#: but the drawn Mercosur plate whose `CD` runs off the plate was read `AB123CL`.
PLATE_DETECTION_SIDE = 576
#: Longest side (pixels) of a first, quick look for where the text is (`plate_rows`): the
#: detector alone, nothing read, for about half its CPU at 576. The rows it finds text in are
#: then detected again at `PLATE_DETECTION_SIDE`'s scale and read, so the boxes read are the
#: ones the whole photo at 576 would give; a plate too small for the quick look, or read
#: unsure in those rows, is read from the whole photo.
QUICK_DETECTION_SIDE = 416
#: The quick look's copy is resampled with PIL's `reducing_gap` at this: a 1600 px photo is first
#: reduced 2 x 2 by averaging, then resampled bilinearly to `QUICK_DETECTION_SIDE` (~6 ms against
#: ~10 ms), and the 134 tuning plates read as before (`benchmarks/vision/plate_tuning.py`); 1.0,
#: a 3 x 3 reduction (~5 ms), left the whole photo to read for 13 of them against 11. None
#: resamples every source pixel, as until 2026-11-29.
QUICK_REDUCING_GAP: float | None = 1.5
#: Rows of margin above the highest and below the lowest text the quick look finds, in the
#: tallest box's heights. 0.75 and 0.5 would cut the band detected again at 576 px by 17% and
#: 24% on the 25 shared real photos at 1600 px, but both read the drawn `PI852MA` `PL852MA`.
ROW_MARGIN = 1.0
#: The rows' reading settles the plate when its plate, fitting a known format, scores at
#: least this (with a declared plate: the declared one, matched).
QUICK_SURE = 0.9
#: Longest side (pixels) of the photo a plate's lines are recognized from: the consumer's page
#: sends 1600 px photos, which are then decoded as they are, with no Lanczos resampling to
#: `ocr.RECOGNITION_SIDE` (about 60 ms of CPU a photo); the recognizer scales each line to 48 px
#: high either way.
PLATE_RECOGNITION_SIDE = 1600


@dataclass(frozen=True)
class PlateRead:
    """A plate candidate: its text (format applied), the OCR confidence minus penalties, and
    the format it fits (None for the generic fallback)."""

    text: str
    score: float
    plate_format: str | None


def coerce(code: str, plate_format: str) -> tuple[str, int] | None:
    """`code` forced into `plate_format` (`L`/`D` per position) and the number of look-alikes
    that took; None when a position cannot be fixed (a `C` where a digit must be)."""
    if len(code) != len(plate_format):
        return None
    chars: list[str] = []
    fixes = 0
    for char, kind in zip(code, plate_format, strict=True):
        fixed = to_letter(char) if kind == "L" else to_digit(char)
        if fixed is None:
            return None
        fixes += fixed != char
        chars.append(fixed)
    return "".join(chars), fixes


#: Lengths of a plate of a country with no format here (two-row plates of 9 characters too).
GENERIC_LENGTHS = range(5, 10)


def _generic(code: str) -> bool:
    """A plausible plate anywhere: 5 to 9 characters with letters and at least two digits."""
    return (
        len(code) in GENERIC_LENGTHS
        and bool(re.search("[A-Z]", code))
        and len(re.findall("[0-9]", code)) >= 2
    )


def _penalty(read: str, fixed: str) -> float:
    """What the look-alikes a format fixed cost: `O`/`0` and `I`/`1` are one glyph in most
    plate fonts (`AY09034` is `AYO9034` in a format with letters first), cheaper than a
    generic reading; other shapes cost `FIX_PENALTY` each."""
    penalty = 0.0
    for before, after in zip(read, fixed, strict=True):
        if before != after:
            same_glyph = {before, after} in ({"O", "0"}, {"I", "1"})
            penalty += SAME_GLYPH_PENALTY if same_glyph else FIX_PENALTY
    return penalty


def _word(window: str, plate_format: str) -> bool:
    """Whether a window is a word forced into a format rather than a plate: its digits would
    be mostly letters read as digits (`EMISIO` as `EMIS10`, `PASSAT` as `PASS47`). A plate's
    digits are printed as digits: OCR mistakes at most one of them for a letter."""
    digit_places = [char for char, kind in zip(window, plate_format, strict=True) if kind == "D"]
    letters_there = sum(not char.isdigit() for char in digit_places)
    return letters_there > 1 or letters_there >= len(digit_places) / 2


#: Most OCR boxes one plate row is split into (`AB`, `123`, `CD` boxed apart).
MAX_PIECES = 4


def _beside(first: TextLine, second: TextLine) -> bool:
    """Whether `second` continues `first`'s row just to its right (a plate's groups boxed
    apart): the gap under two text heights, or the loose boxes overlapping by a few pixels."""
    gap = second.left - first.right
    return same_row(first, second) and -STACK_OVERLAP * first.thickness <= gap < 2 * first.thickness


def _stacked(first: TextLine, second: TextLine) -> bool:
    """Whether `second` is the lower row of a two-row plate whose upper row is `first`: it
    starts under the first, their boxes touching or overlapping by a few pixels (OCR's boxes
    are drawn loose), and the two overlap across."""
    gap = second.top - first.bottom
    return (
        -STACK_OVERLAP * min(first.thickness, second.thickness) <= gap <= first.height
        and second.middle > first.bottom
        and second.left < first.right
        and first.left < second.right
    )


def _row_runs(lines: list[TextLine]) -> list[list[TextLine]]:
    """Every run of one to `MAX_PIECES` lines side by side, left to right: a plate printed
    `AB 123 CD` may come out of OCR as three boxes, and only the whole run is the plate."""
    runs: list[list[TextLine]] = []
    frontier = [[line] for line in lines]
    while frontier:
        runs.extend(frontier)
        frontier = [
            [*run, after]
            for run in frontier
            if len(run) < MAX_PIECES
            for after in lines
            if after not in run and _beside(run[-1], after)
        ]
    return runs


#: Most characters of a piece that can be a plate's group (`1234`); a longer neighbour is
#: another text (a dealer's name), not part of the plate left out.
GROUP_LENGTH = 4


def _run_text(run: list[TextLine], lines: list[TextLine]) -> tuple[str, float]:
    """A run's code and confidence: its characters' mean OCR confidence, less
    `LEFT_OUT_PENALTY` per character of a plate group just beside it that it leaves out (so
    that `AB` + `123` is not the plate when `CD` follows)."""
    codes = [normalize_code(line.text) for line in run]
    code = "".join(codes)
    weights = [max(1, len(piece)) for piece in codes]
    confidence = sum(
        line.confidence * weight for line, weight in zip(run, weights, strict=True)
    ) / sum(weights)
    left_out = 0
    for neighbours in (
        [line for line in lines if line not in run and _beside(line, run[0])],
        [line for line in lines if line not in run and _beside(run[-1], line)],
    ):
        groups = [len(normalize_code(line.text)) for line in neighbours]
        left_out += max([size for size in groups if size <= GROUP_LENGTH], default=0)
    return code, confidence - LEFT_OUT_PENALTY * left_out


def _line_texts(lines: list[TextLine]) -> list[tuple[str, float]]:
    """Each run of lines side by side (a single line, or a plate whose groups OCR boxed
    apart) and each pair of stacked lines (a two-row plate), with its confidence."""
    texts = [_run_text(run, lines) for run in _row_runs(lines)]
    for first in lines:
        for second in lines:
            if first is not second and _stacked(first, second):
                code = normalize_code(first.text) + normalize_code(second.text)
                texts.append((code, min(first.confidence, second.confidence)))
    return [(code, confidence) for code, confidence in texts if code]


def _windows(code: str, lengths: set[int]) -> list[tuple[str, int]]:
    """Every substring of `code` with a length in `lengths`, with how many characters of
    `code` it leaves out (a window of a longer text is a weaker candidate)."""
    return [
        (code[start : start + size], len(code) - size)
        for size in sorted(lengths)
        for start in range(len(code) - size + 1)
    ]


#: Every format known here.
ALL_FORMATS = tuple(sorted({f for fs in PLATE_FORMATS.values() for f in fs}))
#: Penalty on a candidate fitting another country's format than the one said: more than one
#: character left out plus a look-alike fixed, so that a Brazilian `ABC1D23` seen with country
#: AR is read whole rather than cut to the Argentine-looking `ABC102`, while the country's own
#: format still wins a tie.
FOREIGN_PENALTY = 0.04


def plate_candidates(lines: list[TextLine], country: str | None) -> list[PlateRead]:
    """Plate candidates in the lines, best first: the country's formats first, then every
    other known format (at `FOREIGN_PENALTY`), plus the generic one when the country has none
    here."""
    formats = PLATE_FORMATS.get((country or "").upper(), ())
    lengths = {len(f) for f in ALL_FORMATS} | (set() if formats else set(GENERIC_LENGTHS))
    found: dict[str, PlateRead] = {}
    for code, confidence in _line_texts(lines):
        for window, left_out in _windows(code, lengths):
            base = confidence - LEFT_OUT_PENALTY * left_out
            reads = []
            for plate_format in ALL_FORMATS:
                coerced = coerce(window, plate_format)
                if (
                    coerced is not None
                    and coerced[1] <= MAX_FIXES
                    and not _word(window, plate_format)
                ):
                    foreign = FOREIGN_PENALTY if formats and plate_format not in formats else 0.0
                    score = base - _penalty(window, coerced[0]) - foreign
                    reads.append(PlateRead(coerced[0], score, plate_format))
            if not formats and _generic(window):
                reads.append(PlateRead(window, base - GENERIC_PENALTY, None))
            for read in reads:
                if read.text not in found or found[read.text].score < read.score:
                    found[read.text] = read
    return sorted(found.values(), key=lambda read: -read.score)


def compare_plate(
    lines: list[TextLine], country: str | None, declared: str | None
) -> ValidationOutcome:
    """The `plate` verdict on OCR lines (separate from the OCR so that tests need no model)."""
    candidates = plate_candidates(lines, country)
    best = candidates[0] if candidates else None
    if declared is None or not normalize_code(declared):
        score = best.score if best is not None else 0.0
        confidence, valid = decide(score, READ_BOUNDARY)
        return ValidationOutcome(confidence, valid, best.text if best is not None else None)
    target = normalize_code(declared)
    matching = [read for read in candidates if same_code(read.text, target)]
    if not matching:
        # Also a window that fits no format (a declared plate of another country).
        for code, line_confidence in _line_texts(lines):
            for window, left_out in _windows(code, {len(target)}):
                if same_code(window, target):
                    matching.append(PlateRead(window, line_confidence - 0.01 * left_out, None))
        matching.sort(key=lambda read: -read.score)
    if matching:
        confidence, valid = decide(matching[0].score, READ_BOUNDARY)
        return ValidationOutcome(confidence, valid, matching[0].text)
    confidence, _ = decide(0.0, READ_BOUNDARY)
    return ValidationOutcome(confidence, False, best.text if best is not None else None)


def _sure(lines: list[TextLine], country: str | None, declared: str | None) -> bool:
    """Whether the lines of the plate's rows settle the reading: its best plate (with
    `declared`, the best one matching it) fits a known format and scores at least
    `QUICK_SURE`."""
    candidates = plate_candidates(lines, country)
    target = normalize_code(declared or "")
    if target:
        candidates = [read for read in candidates if same_code(read.text, target)]
    return bool(
        candidates and candidates[0].plate_format is not None and candidates[0].score >= QUICK_SURE
    )


def plate_rows(pixels: npt.NDArray[np.uint8]) -> tuple[int, int] | None:
    """The rows of the photo holding its text, as the detector finds it at
    `QUICK_DETECTION_SIDE` (from the top of the highest box to the bottom of the lowest,
    `ROW_MARGIN` of the tallest box's height of margin each side), or None when it finds none."""
    boxes = find_boxes(pixels, QUICK_DETECTION_SIDE, reducing_gap=QUICK_REDUCING_GAP)
    if not boxes:
        return None
    tops = [min(y for _, y in box) for box in boxes]
    bottoms = [max(y for _, y in box) for box in boxes]
    margin = ROW_MARGIN * max(bottom - top for top, bottom in zip(tops, bottoms, strict=True))
    return max(0, int(min(tops) - margin)), min(pixels.shape[0], int(max(bottoms) + margin) + 1)


def plate_lines(
    data: bytes, country: str | None, declared: str | None, *, frugal: bool = FRUGAL
) -> list[TextLine]:
    """The lines a plate is read from: those of the rows holding the photo's text
    (`plate_rows`) when they settle the reading (`_sure`), else the whole photo's, as every
    plate was read before (`PLATE_DETECTION_SIDE`). A plate the quick look misses, read unsure,
    or another than the declared one costs both. `frugal` is `ocr.read_lines`' (the cost
    benchmark compares both)."""
    read = partial(
        read_lines,
        data,
        detection_side=PLATE_DETECTION_SIDE,
        recognition_side=PLATE_RECOGNITION_SIDE,
        frugal=frugal,
    )
    rows = read(rows=plate_rows)
    if _sure(rows, country, declared):
        return rows
    return read()


@register
class PlateAnalyzer:
    """`plate`: the plate read (normalized, look-alikes resolved by the country's formats) and
    whether it is the declared one; with nothing declared, whether a plausible plate shows."""

    name: ClassVar[str] = "plate"
    needs: ClassVar[frozenset[str]] = frozenset()

    def analyze(self, subject: AnalysisSubject) -> ValidationOutcome:
        found = subject.declared.get("plate")
        declared = str(found) if found is not None else None
        try:
            lines = plate_lines(subject.data, subject.country, declared)
        except UnreadablePhoto:
            return ValidationOutcome(0.0, False, None)
        return compare_plate(lines, subject.country, declared)
