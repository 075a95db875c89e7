"""Codes read from photos (plates, serial numbers, document numbers): normalization, the
characters OCR confuses, and the one confidence curve every OCR analyzer shares.

OCR confuses shapes, not meanings: `O` and `0`, `I` and `1`, `B` and `8`. Where a format says a
position holds a letter or a digit, the confusion resolves itself (`to_letter`, `to_digit`);
where it does not, two codes that differ only by such shapes are the same code (`same_code`).
"""

from __future__ import annotations

import math
import unicodedata

__all__ = [
    "CONFUSABLE",
    "UNSURE",
    "confidence_from_score",
    "decide",
    "normalize_code",
    "same_code",
    "shape_key",
    "to_digit",
    "to_letter",
]

#: Digit a letter is read as, where a format says the position is a digit.
_AS_DIGIT = {"O": "0", "Q": "0", "D": "0", "U": "0", "I": "1", "L": "1", "J": "1", "T": "7",
             "B": "8", "S": "5", "Z": "2", "G": "6", "A": "4"}  # fmt: skip
#: Letter a digit is read as, where a format says the position is a letter.
_AS_LETTER = {"0": "O", "1": "I", "8": "B", "5": "S", "2": "Z", "6": "G", "4": "A", "7": "T"}
#: Groups of characters OCR reads for one another; each maps to its group's first member.
CONFUSABLE: dict[str, str] = {
    char: group[0] for group in ("0ODQ", "1IL", "8B", "5S", "2Z", "6G") for char in group
}


def normalize_code(text: str) -> str:
    """Upper case, accents dropped, and only letters and digits kept: `ab-123.cd` -> `AB123CD`.
    Idempotent."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed.upper() if c.isascii() and c.isalnum())


def to_digit(char: str) -> str | None:
    """`char` as a digit (itself if it is one, its look-alike otherwise), None if none."""
    return char if char.isdigit() else _AS_DIGIT.get(char)


def to_letter(char: str) -> str | None:
    """`char` as a letter (itself if it is one, its look-alike otherwise), None if none."""
    return char if char.isalpha() else _AS_LETTER.get(char)


def shape_key(code: str) -> str:
    """A normalized code with each confusable character replaced by its group's
    representative: two codes OCR cannot tell apart have the same key."""
    return "".join(CONFUSABLE.get(c, c) for c in normalize_code(code))


def same_code(read: str, declared: str) -> bool:
    """Whether a code read equals the declared one, up to case, separators and look-alikes."""
    return bool(normalize_code(declared)) and shape_key(read) == shape_key(declared)


#: Confidence of a result the machine cannot judge (a field not read, or read differently only
#: where the OCR itself was unsure): under 50 (not valid) but well above a confident refusal's,
#: so that a template's review band (`minimum confidence 50, review below confidence 70`)
#: sends it to a person. On the real specimens such identity fields were the true holder's 6
#: of 8 times (docs/vision.md, "Decide or defer: MRZ fields").
UNSURE = 25.0


def confidence_from_score(score: float, boundary: float = 0.5, steepness: float = 20.0) -> float:
    """Confidence (0-100) that a validation passes, from a score whose decision boundary is
    `boundary`: steep, so a clear pass is >= 95 and a clear failure <= 5, and exactly 50 at the
    boundary (the analyzer's `valid` is `score >= boundary`, which agrees)."""
    exponent = max(-60.0, min(60.0, -steepness * (score - boundary)))
    return round(100.0 / (1.0 + math.exp(exponent)), 2)


def decide(score: float, boundary: float = 0.5) -> tuple[float, bool]:
    """`(confidence, valid)` for a score: valid when `score >= boundary`, and the confidence
    agrees with it (>= 50 exactly when valid) even where rounding meets the boundary."""
    valid = score >= boundary
    confidence = confidence_from_score(score, boundary)
    return (max(confidence, 50.0) if valid else min(confidence, 49.99)), valid
