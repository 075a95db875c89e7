"""The photo quality check at upload: `runtime.vision.quality` measures blur, exposure and size
while the upload waits (well under 300 ms), and this module words its problems in the
inspection's language for the upload answer's `quality` (the consumer's page asks for a
retake with these messages). A photo that fails is still stored: the check advises, the
validations decide."""

from __future__ import annotations

import dataclasses
from typing import Any

from runtime.imagemeta import ImageMeta
from server.web.templating import gettext


def messages(locale: str) -> dict[str, str]:
    """Each problem's message in `locale` (the catalog domain `images`)."""
    return {
        "too_blurry": gettext(locale, "The photo is blurry: hold the phone still and retake it."),
        "too_dark": gettext(locale, "The photo is too dark: turn on a light or move to one."),
        "too_bright": gettext(locale, "The photo is too bright: avoid direct light and glare."),
        "too_small": gettext(locale, "The photo is too small: use the camera at full size."),
        "blank": gettext(locale, "The photo shows nothing: point the camera at the subject."),
    }


def check(data: bytes, locale: str, meta: ImageMeta | None = None) -> dict[str, Any]:
    """`{passed, problems: [{code, message}], measures}` for the upload answer; `meta` is the
    upload's one decode of `data` (`runtime.imagemeta.read_meta`), shared, not repeated."""
    from runtime.vision.quality import assess

    report = assess(data, meta)
    words = messages(locale)
    measures = report.measures
    if dataclasses.is_dataclass(measures) and not isinstance(measures, type):
        measures = dataclasses.asdict(measures)
    return {
        "passed": report.passed,
        "problems": [
            {"code": problem.code, "message": words.get(problem.code, problem.message)}
            for problem in report.problems
        ],
        "measures": measures,
    }
