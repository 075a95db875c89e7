"""The `serialNumber` analyzer (goods, bikes, cellphones): the serial printed on a label,
compared with the declared one.

Labels put a caption before the number (`S/N:`, `Serial No.`, `IMEI`), and OCR may merge the
two; so every window of a line with the declared serial's length is compared, up to the
look-alikes OCR confuses (`codes.same_code`). With nothing declared, the longest code on a
line that holds digits is the serial read.
"""

from __future__ import annotations

import re
from typing import ClassVar

from runtime.validators import ValidationOutcome
from runtime.vision import AnalysisSubject, register
from runtime.vision.codes import decide, normalize_code, same_code
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


def serial_candidates(lines: list[TextLine]) -> list[tuple[str, float]]:
    """Serial-like codes in the lines (caption removed, at least `MIN_SERIAL` characters,
    some digits), with their OCR confidence, best first."""
    found = []
    for line in lines:
        code = normalize_code(CAPTION.sub("", line.text))
        if len(code) >= MIN_SERIAL and any(c.isdigit() for c in code):
            found.append((code, line.confidence))
    return sorted(found, key=lambda item: (-item[1], -len(item[0])))


def _row_texts(lines: list[TextLine]) -> list[tuple[str, float]]:
    """Each line's code, and each pair of lines on one row joined (a caption in its own box)."""
    texts = [(normalize_code(line.text), line.confidence) for line in lines]
    for first in lines:
        for second in lines:
            same_row = abs(first.top - second.top) < 0.5 * max(first.height, 1.0)
            if first is not second and same_row and first.left < second.left:
                joined = normalize_code(first.text) + normalize_code(second.text)
                texts.append((joined, min(first.confidence, second.confidence)))
    return texts


def compare_serial(lines: list[TextLine], declared: str | None) -> ValidationOutcome:
    """The `serialNumber` verdict on OCR lines. The result is the serial read that matched
    (look-alikes resolved as the declared serial has them), else the best serial-like code."""
    candidates = serial_candidates(lines)
    best = candidates[0] if candidates else None
    target = normalize_code(declared or "")
    if not target:
        confidence, valid = decide(best[1] if best else 0.0, READ_BOUNDARY)
        return ValidationOutcome(confidence, valid, best[0][:MAX_RESULT] if best else None)
    scores = []
    for code, line_confidence in _row_texts(lines):
        left_out = len(code) - len(target)
        for start in range(left_out + 1):
            if same_code(code[start : start + len(target)], target):
                penalty = min(MAX_LEFT_OUT_PENALTY, LEFT_OUT_PENALTY * left_out)
                scores.append(line_confidence - penalty)
    if scores:
        confidence, valid = decide(max(scores), READ_BOUNDARY)
        return ValidationOutcome(confidence, valid, target)
    confidence, _ = decide(0.0, READ_BOUNDARY)
    return ValidationOutcome(confidence, False, best[0][:MAX_RESULT] if best else None)


@register
class SerialAnalyzer:
    """`serialNumber`: whether the declared serial is printed in the photo (a label, a box,
    a phone's settings screen); with nothing declared, whether a serial-like code shows."""

    name: ClassVar[str] = "serialNumber"
    needs: ClassVar[frozenset[str]] = frozenset()

    def analyze(self, subject: AnalysisSubject) -> ValidationOutcome:
        try:
            lines = read_lines(subject.data)
        except UnreadablePhoto:
            return ValidationOutcome(0.0, False, None)
        declared = subject.declared.get("serialNumber")
        return compare_serial(lines, str(declared) if declared is not None else None)
