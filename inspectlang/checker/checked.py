"""What the checker produces: `CheckedTemplate` and its parts, every value already valid. The
stages fill one `CheckedTemplate` in turn; the compiler builds the manifest from it alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspectlang import ast, ir

#: `template_kind`: a template a company wrote, or one of the built-ins (used by alias).
TEMPLATE_KINDS = ("created", "built-in")


@dataclass(slots=True)
class CheckedValidation:
    """A `validate` line of an image, with its thresholds and validator options."""

    name: str
    id: str
    run: bool
    required: bool
    min_confidence: float
    options: dict[str, float]
    #: `review below confidence N`: a machine result under N goes to a person (None: never).
    review_below: float | None = None


@dataclass(slots=True)
class CheckedImage:
    """An `image` declaration: its labels per locale, validations and features."""

    name: str
    side: str
    identifier: str
    labels: dict[str, str]
    validations: list[CheckedValidation]
    features: list[str]
    #: `optional`: a photo the consumer may leave out.
    optional: bool = False
    #: `ask when: CONDITION` as written, checked with the inputs' (`inspectlang.checker.ask`).
    ask_when_source: ast.Expr | None = None
    ask_when: ir.Expression | None = None


@dataclass(slots=True)
class CheckedRule:
    """An `on EVENT` rule: what it reacts to and its body as IR statements."""

    id: str
    event: str
    input: str | None
    image: str | None
    validation: str | None
    body: tuple[ir.Statement, ...]
    span: ast.Span


@dataclass(slots=True)
class CheckedCheck:
    """A `check` (global validation) with its condition and the checks it refers to."""

    id: str
    key: str
    name: str
    description: str
    valid: ir.Expression
    depends: list[str]
    span: ast.Span
    #: locale -> {"name"?, "description"?} written with `name LOCALE:`/`description LOCALE:`.
    translations: dict[str, dict[str, str]] = field(default_factory=dict)
    #: Marked `for information`: shown, deciding nothing on purpose (W017 does not report it).
    informational: bool = False


#: A verdict line's translated reasons: locale -> (text as written, its text node when it shows
#: values), from `reason LOCALE: "TEXT"` lines under it.
Translations = dict[str, tuple[str, ir.Expression | None]]
#: A `disapprove`/`review` line: (reason as written, condition, span, the reason's text node when
#: it shows values, its translations).
CheckedReason = tuple[str, ir.Expression, ast.Span, ir.Expression | None, Translations]


@dataclass(slots=True)
class CheckedVerdict:
    """The `verdict`: disapprovals in order, the approval condition, the fallback reason, and
    the lines that send an inspection to a person."""

    approve_when: ir.Expression | None = None
    disapprove: list[CheckedReason] = field(default_factory=list)
    otherwise: str | None = None
    otherwise_message: ir.Expression | None = None
    otherwise_translations: Translations = field(default_factory=dict)
    #: `review "REASON" when CONDITION` lines, as `disapprove`'s.
    review: list[CheckedReason] = field(default_factory=list)
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
    ask_when: ir.Expression | None = None


@dataclass(slots=True)
class CheckedTemplate:
    """Everything the compiler needs, already valid: the manifest is built from this alone.
    The checker's stages fill it in turn (`inspectlang.checker.STAGES`)."""

    name: str = ""
    template_id: str = ""
    inspection_type: str = "car"
    template_kind: str = "created"
    filename: str = "<template>"
    locales: list[str] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    variables: list[tuple[str, str, int | float | str]] = field(default_factory=list)
    images: list[CheckedImage] = field(default_factory=list)
    inputs: list[CheckedInput] = field(default_factory=list)
    #: Feature name -> (turned on, feature id), in declaration order.
    features: dict[str, tuple[bool, str]] = field(default_factory=dict)
    product_required: list[str] = field(default_factory=list)
    consumer_required: list[str] = field(default_factory=list)
    rules: list[CheckedRule] = field(default_factory=list)
    #: In dependency order: a check comes after every check it refers to.
    checks: list[CheckedCheck] = field(default_factory=list)
    verdict: CheckedVerdict = field(default_factory=CheckedVerdict)
    #: `let` declarations: (name, IR, span), in file order.
    lets: list[tuple[str, ir.Expression, ast.Span]] = field(default_factory=list)
