"""What every evaluation module yields: one labelled case per photo and validation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.vision import AnalysisSubject


@dataclass(frozen=True)
class Case:
    #: The validation name (`plate`, `face_comparison`...).
    validation: str
    #: A short unique name (`plate/ar-mercosur/dejavu/blur-2`), printed for failures.
    name: str
    subject: AnalysisSubject
    #: The truth: should the validation pass?
    expected_valid: bool
    #: The value the analyzer should read (`"AB123CD"`), when there is one; None otherwise.
    expected_result: Any = None
    #: `clean`, `moderate` or `hard` for the photo's conditions; `wrong` (a declared value that
    #: is not in the photo) and `none` (nothing to read) for the cases that must be refused.
    group: str = "clean"
