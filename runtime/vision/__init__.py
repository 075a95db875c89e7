"""Photo analysis on this machine's CPU: what a photo shows, compared with what was declared.

The heavy validators (OCR of plates, ID documents and serial numbers; faces; colors) live here,
separate from the light ones of `runtime.validators` that run while an upload waits (`complete`,
`date`, `distance`). An *analyzer* is one small class with a `name` and
`analyze(subject) -> ValidationOutcome | None`; `@register` adds its class to the catalogue, and
`load_analyzers()` makes a new set of analyzers from it (the server's app holds its own). The
server's worker runs them off the request path (one durable job per image) and records their
outcomes through `runtime.record_validation`, the same path as an external service's results;
anyone embedding the runtime can call `analyze` directly.

The models come inside registry packages (the `inspectlang[vision]` extra): `rapidocr-onnxruntime`
for OCR, `dlib-bin` with `face_recognition_models` for faces. Each model is loaded once per
process, on first use. Without the extra, `available()` is False and these validations wait for
external results (docs/vision.md).
"""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.util
import pkgutil
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from inspectlang.validations import entry_of
from runtime.validators import ValidationOutcome

__all__ = [
    "AnalysisSubject",
    "Analyzer",
    "ValidationOutcome",
    "analyze",
    "available",
    "register",
]


@dataclass(frozen=True)
class AnalysisSubject:
    """One photo to analyse and what it is compared with.

    `declared` holds the product's fields (`plate`, `color`, `serialNumber`...) for products, and
    the consumer's (`identification`, `firstName`, `lastName`, `birthdate` as ISO 8601, `sex` as
    ISO/IEC 5218 code 1/2/9) for people. `references` holds other photos of the same inspection
    an analyzer may compare with, by role: `"document"` is the identity document's photo that
    `face_comparison` compares a selfie with.
    """

    data: bytes
    declared: dict[str, Any] = field(default_factory=dict)
    #: ISO 3166 alpha-2 country of the inspection (plate formats, phone regions), upper case.
    country: str | None = None
    references: dict[str, bytes] = field(default_factory=dict)
    now: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    #: Validation options from the template (thresholds...), as for the light validators.
    options: dict[str, float] = field(default_factory=dict)


class Analyzer(Protocol):
    name: ClassVar[str]
    #: Reference roles this analyzer needs (`{"document"}` for face_comparison): while one is
    #: missing the analysis waits and `analyze` is not called.
    needs: ClassVar[frozenset[str]]

    def analyze(self, subject: AnalysisSubject) -> ValidationOutcome: ...


#: Analyzer classes by validation name: the package's declarations, filled as its modules are
#: imported (`register`). The analyzers themselves are made by `load_analyzers`, per caller.
_CATALOGUE: dict[str, type[Any]] = {}

#: Python packages the models need; all must import for `available()`.
_REQUIRED = ("numpy", "rapidocr_onnxruntime", "dlib", "face_recognition_models")


def register(cls: type[Any]) -> type[Any]:
    """Class decorator: add an analyzer class to the catalogue under its `name`, a validation
    of `inspectlang.validations` (any other name is refused: no template could ask for it)."""
    _CATALOGUE[entry_of(cls.name).name] = cls
    return cls


def available() -> bool:
    """Whether the vision extra is installed (its packages can be found; nothing is loaded)."""
    return all(importlib.util.find_spec(name) is not None for name in _REQUIRED)


def load_analyzers() -> dict[str, Analyzer]:
    """New analyzers, one per validation of the catalogue, after importing every analyzer
    module (cheap: models load on first use, once per process); empty when the vision extra is
    not installed. Each caller gets its own: nothing here is shared but the classes."""
    if not available():
        return {}
    # Every module of this package; those that define analyzers register them on import
    # (one imported on its own before, such as `runtime.vision.faces`, registered only its).
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return {name: cls() for name, cls in _CATALOGUE.items()}


def analyze(name: str, subject: AnalysisSubject) -> ValidationOutcome | None:
    """Run the analyzer for validation `name`; None when there is none here."""
    analyzer = load_analyzers().get(name)
    return analyzer.analyze(subject) if analyzer is not None else None
