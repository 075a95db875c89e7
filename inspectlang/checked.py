"""What the checker produces (`CheckedTemplate` and its parts) and the vocabularies and limits
it checks against. Split from `inspectlang.checker`; the compiler reads these dataclasses."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from inspectlang import ast
from inspectlang.manifest import (
    RULE_EVENTS,
    IRNode,
)

#: Limits on the size of a template: past them the template is refused (E037), never slow.
MAX_IMAGES = 100
MAX_INPUTS = 200
MAX_RULES = 1000
MAX_CHECKS = 500
MAX_VARIABLES = 500

TEMPLATE_KINDS = ("created", "built-in")
LOCALE = re.compile(r"^[a-z]{2}_[A-Z]{2}$")
DEFAULT_LOCALE = "en_US"

TEMPLATE_PROPERTIES = ("type", "id", "locales")
SETTINGS: dict[str, str] = {
    "max attempts": "maxAttempts",
    "link expires after": "linkExpiresInHours",
    "inspection expires after": "expiresInHours",
    "minimum confidence": "minConfidence",
    "photo age limit": "maxPhotoAgeHours",
    "photo distance limit": "maxDistanceMeters",
    "minimum photo size": "minImageSize",
}
IMAGE_PROPERTIES = ("side", "id", "label")
CHECK_PROPERTIES = ("name", "description", "valid when")
#: Events in words (as written after `on`) -> the manifest's event names.
EVENTS: dict[str, str] = {event.replace("_", " "): event for event in RULE_EVENTS}
VALIDATION_MODIFIERS = (
    "required",
    "optional",
    "not run",
    "minimum confidence",
    "within",
    "minimum size",
    "minimum age",
    "maximum face distance",
)
#: Validation options that mean something for one validation only: option -> (validation,
#: manifest option key, smallest, largest).
VALIDATION_NUMBER_OPTIONS: dict[str, tuple[str, str, float, float]] = {
    "minimum age": ("age", "minAge", 0, 150),
    "maximum face distance": ("face_comparison", "maxFaceDistance", 0, 2),
}
#: Hours per time unit and meters per distance unit accepted in quantities.
HOURS = {
    "hour": 1.0,
    "hours": 1.0,
    "h": 1.0,
    "day": 24.0,
    "days": 24.0,
    "week": 168.0,
    "weeks": 168.0,
    "minute": 1 / 60,
    "minutes": 1 / 60,
}
METERS = {
    "meter": 1.0,
    "meters": 1.0,
    "m": 1.0,
    "kilometer": 1000.0,
    "kilometers": 1000.0,
    "km": 1000.0,
}


@dataclass(slots=True)
class CheckedValidation:
    """A `validate` line of an image, with its thresholds and validator options."""

    name: str
    id: str
    run: bool
    required: bool
    min_confidence: float
    options: dict[str, float]


@dataclass(slots=True)
class CheckedImage:
    """An `image` declaration: its labels per locale, validations and features."""

    name: str
    side: str
    identifier: str
    labels: dict[str, str]
    validations: list[CheckedValidation]
    features: list[str]


@dataclass(slots=True)
class CheckedRule:
    """An `on EVENT` rule: what it reacts to and its body as IR statements."""

    id: str
    event: str
    input: str | None
    image: str | None
    validation: str | None
    body: list[IRNode]
    span: ast.Span


@dataclass(slots=True)
class CheckedCheck:
    """A `check` (global validation) with its condition and the checks it refers to."""

    id: str
    key: str
    name: str
    description: str
    valid: IRNode
    depends: list[str]
    span: ast.Span


@dataclass(slots=True)
class CheckedVerdict:
    """The `verdict`: disapprovals in order, the approval condition, the fallback reason."""

    approve_when: IRNode | None = None
    #: (reason as written, condition, span, the reason's text node when it shows values).
    disapprove: list[tuple[str, IRNode, ast.Span, IRNode | None]] = field(default_factory=list)
    otherwise: str | None = None
    otherwise_message: IRNode | None = None
    span: ast.Span | None = None


@dataclass(slots=True)
class CheckedInput:
    """An `input` declaration read into what the manifest and the creation schema need."""

    name: str
    identifier: str
    input_type: str
    label: str
    help: str | None
    stages: list[str]
    required: bool
    #: The input type's own checks, in the manifest's `validationSchema` keys.
    checks: dict[str, Any]
    option_keys: list[str] | None
    option_labels: list[str] | None
    #: locale -> {"label", "helperMessage", "options"} for the other locales.
    translations: dict[str, dict[str, Any]]
    image: str | None
    #: `ask when: CONDITION` as written; checked once every input is declared (`ask_when`).
    ask_when_source: ast.Expr | None = None
    #: The checked condition: the input is asked (and required) only while it holds.
    ask_when: IRNode | None = None


@dataclass(slots=True)
class CheckedTemplate:
    """Everything the compiler needs, already valid: the manifest is built from this alone."""

    name: str
    template_id: str
    inspection_type: str
    template_kind: str
    filename: str
    locales: list[str]
    parameters: dict[str, Any]
    variables: list[tuple[str, str, int | float | str]]
    images: list[CheckedImage]
    inputs: list[CheckedInput]
    features: list[tuple[str, bool, str]]
    product_required: list[str]
    consumer_required: list[str]
    rules: list[CheckedRule]
    #: In dependency order: a check comes after every check it refers to.
    checks: list[CheckedCheck]
    verdict: CheckedVerdict
    #: `let` declarations: (name, IR, span), in file order.
    lets: list[tuple[str, IRNode, ast.Span]] = field(default_factory=list)
