"""The `serialNumber` analyzer (goods, bikes, cellphones): the serial printed on a label,
compared with the declared one.

Labels put a caption before the number (`S/N:`, `Serial No.`, `IMEI`), and OCR may merge the
two; so every window of a line with the declared serial's length is compared, up to the
look-alikes OCR confuses (`codes.same_code`). A serial read differently only in characters
the OCR itself was unsure of (`CHARACTER_FLOOR`) is `UNSURE`, for a person; one differing in
a character read surely is refused. With nothing declared, the longest code on a line that
holds digits is the serial read.
"""

from __future__ import annotations

import re
from typing import ClassVar

from runtime.validators import ValidationOutcome
from runtime.vision import AnalysisSubject, register
from runtime.vision.codes import UNSURE, decide, normalize_code, same_code, shape_key
from runtime.vision.ocr import TextLine, read_lines
from runtime.vision.pictures import UnreadablePhoto

__all__ = ["SerialAnalyzer", "compare_serial", "serial_candidates"]

#: Captions printed before a serial number, removed before it is read.
CAPTION = re.compile(
    r"^\s*(?:S\s*/?\s*N|SERIAL(?:\s*(?:NO|NUMBER|NUM|N[°ºO]))?|IMEI\d?|NO)\s*[.:#]?\s*",
    re.IGNORECASE,
)
#: Longest result reported (the runtime's limit on a result's text).
MAX_RESULT = 1000
#: Serials shorter than this are not told apart from other small print.
MIN_SERIAL = 5
#: Score (OCR confidence minus penalties) at and above which a serial counts as read.
READ_BOUNDARY = 0.5
#: Penalty per character of the line outside the matched window (captions, stray marks),
#: up to `MAX_LEFT_OUT_PENALTY`.
LEFT_OUT_PENALTY = 0.005
MAX_LEFT_OUT_PENALTY = 0.1
#: A character the OCR read under this confidence (0..1) cannot refuse a declared serial: a
#: serial read differently from the declared one only in such characters is `UNSURE`, while
#: one differing in a character read at or above it is refused. `READ_BOUNDARY`, not fitted
#: (`benchmarks/vision/real.py` `serials_selective` chooses it leave one photo out among
#: `CHARACTER_FLOORS` and reports what each fold chose).
CHARACTER_FLOOR = READ_BOUNDARY


def serial_candidates(lines: list[TextLine]) -> list[tuple[str, float]]:
    """Serial-like codes in the lines (caption removed, at least `MIN_SERIAL` characters,
    some digits), with their OCR confidence, best first."""
    found = []
    for line in lines:
        code = normalize_code(CAPTION.sub("", line.text))
        if len(code) >= MIN_SERIAL and any(c.isdigit() for c in code):
            found.append((code, line.confidence))
    return sorted(found, key=lambda item: (-item[1], -len(item[0])))


#: A line's code (`normalize_code`), the line's confidence, and each code character's.
RowText = tuple[str, float, tuple[float, ...]]


def _code_of(line: TextLine) -> tuple[str, tuple[float, ...]]:
    """A line's code with the OCR's confidence in each of its characters."""
    pairs = [
        (char, line.character_confidence(index))
        for index, letter in enumerate(line.text)
        for char in normalize_code(letter)
    ]
    return "".join(char for char, _ in pairs), tuple(confidence for _, confidence in pairs)


def _row_texts(lines: list[TextLine]) -> list[RowText]:
    """Each line's code, and each pair of lines on one row joined (a caption in its own box)."""
    codes = [_code_of(line) for line in lines]
    texts = [(code, line.confidence, each) for line, (code, each) in zip(lines, codes, strict=True)]
    for first, (first_code, first_each) in zip(lines, codes, strict=True):
        for second, (second_code, second_each) in zip(lines, codes, strict=True):
            same_row = abs(first.top - second.top) < 0.5 * max(first.height, 1.0)
            if first is not second and same_row and first.left < second.left:
                confidence = min(first.confidence, second.confidence)
                texts.append((first_code + second_code, confidence, first_each + second_each))
    return texts


def unsure_read(texts: list[RowText], target: str, floor: float = CHARACTER_FLOOR) -> str | None:
    """A window of the lines read differently from `target` only in characters the OCR read
    under `floor` (look-alikes are the same character): what the machine cannot tell from
    the declared serial. None when every window differs in a character read surely."""
    wanted = shape_key(target)
    for code, _, each in texts:
        for start in range(len(code) - len(target) + 1):
            window = shape_key(code[start : start + len(target)])
            differing = [i for i, char in enumerate(window) if char != wanted[i]]
            if differing and all(each[start + i] < floor for i in differing):
                return code[start : start + len(target)]
    return None


def compare_serial(
    lines: list[TextLine], declared: str | None, character_floor: float = CHARACTER_FLOOR
) -> ValidationOutcome:
    """The `serialNumber` verdict on OCR lines. The result is the serial read that matched
    (look-alikes resolved as the declared serial has them), else the window `unsure_read`
    finds (`UNSURE`: a person decides), else the best serial-like code (refused)."""
    candidates = serial_candidates(lines)
    best = candidates[0] if candidates else None
    target = normalize_code(declared or "")
    if not target:
        confidence, valid = decide(best[1] if best else 0.0, READ_BOUNDARY)
        return ValidationOutcome(confidence, valid, best[0][:MAX_RESULT] if best else None)
    scores = []
    texts = _row_texts(lines)
    for code, line_confidence, _ in texts:
        left_out = len(code) - len(target)
        for start in range(left_out + 1):
            if same_code(code[start : start + len(target)], target):
                penalty = min(MAX_LEFT_OUT_PENALTY, LEFT_OUT_PENALTY * left_out)
                scores.append(line_confidence - penalty)
    if scores:
        confidence, valid = decide(max(scores), READ_BOUNDARY)
        return ValidationOutcome(confidence, valid, target)
    if (unsure := unsure_read(texts, target, character_floor)) is not None:
        return ValidationOutcome(UNSURE, False, unsure)
    confidence, _ = decide(0.0, READ_BOUNDARY)
    return ValidationOutcome(confidence, False, best[0][:MAX_RESULT] if best else None)


@register
class SerialAnalyzer:
    """`serialNumber`: whether the declared serial is printed in the photo (a label, a box,
    a phone's settings screen); with nothing declared, whether a serial-like code shows."""

    name: ClassVar[str] = "serialNumber"
    needs: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, character_floor: float = CHARACTER_FLOOR) -> None:
        self.character_floor = character_floor  # the benchmark's leave-one-out tries others

    def analyze(self, subject: AnalysisSubject) -> ValidationOutcome:
        try:
            lines = read_lines(subject.data)
        except UnreadablePhoto:
            return ValidationOutcome(0.0, False, None)
        declared = subject.declared.get("serialNumber")
        serial = str(declared) if declared is not None else None
        return compare_serial(lines, serial, self.character_floor)
