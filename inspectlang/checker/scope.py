"""What an expression may refer to (`Scope`) and the type algebra expressions are checked with.

Types are the IR's type names (`number`, `list<text>`, ...) plus two placeholders of the checker:
`ERROR` (the expression already has a diagnostic; fits everything, so one mistake gives one
diagnostic) and `ANY` (the element type of `[]`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from inspectlang import ast, ir
from inspectlang.vocabulary import DAMAGE, IMAGE, TEXT, VALIDATION

#: The type of an expression that already has a diagnostic; compatible with everything.
ERROR = "error"
#: The element type of the empty list literal `[]`; compatible with any element type.
ANY = "any"

#: Event subjects: the name, its type, and the events (normalized) where it exists.
EVENT_SUBJECTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "image": (
        IMAGE,
        ("image_uploaded", "image_processed", "validation_passed", "validation_failed"),
    ),
    "validation": (VALIDATION, ("validation_passed", "validation_failed")),
    "damage": (DAMAGE, ("damage_declared",)),
    "value": (ERROR, ("input_set",)),
}


def list_of(element: str) -> str:
    return f"list<{element}>"


def element_of(type_: str) -> str | None:
    """The element type of a list type, or None when the type is not a list."""
    if type_.startswith("list<"):
        return type_[5:-1]
    return None


def compatible(a: str, b: str) -> bool:
    """Whether two types may meet in `=`, `in`, `set` and friends (errors and `any` fit all)."""
    if a == b or ERROR in (a, b) or ANY in (a, b):
        return True
    ea, eb = element_of(a), element_of(b)
    return ea is not None and eb is not None and compatible(ea, eb)


def describe(type_: str) -> str:
    """A type as an author reads it: `list<image>` is `list of image`."""
    element = element_of(type_)
    return f"list of {describe(element)}" if element is not None else type_


def ir_type(type_: str) -> str:
    """The type written in the IR: the internal placeholders become concrete types."""
    if type_ in (ANY, ERROR):
        return TEXT
    element = element_of(type_)
    return list_of(ir_type(element)) if element is not None else type_


def is_iso_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


@dataclass(slots=True)
class InputRef:
    """An input as expressions see it: its identifier and type, and for a select/multiselect
    its options (key -> default-locale label, in order), which comparisons are checked against."""

    identifier: str
    input_type: str
    options: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class ImageRef:
    """An image as expressions see it: its identifier and the validations it runs."""

    identifier: str
    validations: frozenset[str]


@dataclass(frozen=True, slots=True)
class LetInfo:
    """A checked `let`: its type and IR, and what inlining it adds where it is used."""

    type: str
    node: ir.Expression
    #: Nesting depth of its IR, `count`/`any`/`all`/`sum` nested in it, nodes in it.
    depth: int
    loops: int
    size: int


@dataclass(slots=True)
class Scope:
    """What an expression may refer to: the declarations of the template and the rule's event."""

    inspection_type: str
    product_fields: dict[str, str]
    variables: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, InputRef] = field(default_factory=dict)
    images: dict[str, ImageRef] = field(default_factory=dict)
    #: The same images by identifier (the first image of each), for `images.NAME.VALIDATION`.
    images_by_identifier: dict[str, ImageRef] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)
    #: The normalized event of the rule being checked (None outside rules).
    event: str | None = None
    #: The type of `value` in an `input set NAME` rule.
    value_type: str | None = None
    #: The input named by an `input set NAME` rule (what `value` is).
    value_input: str | None = None
    #: Names bound by quantifiers (and, for standalone expressions, given by the caller).
    locals: dict[str, str] = field(default_factory=dict)
    #: Filled while checking: variables read, variables set, checks referred to (key -> span).
    used_variables: set[str] = field(default_factory=set)
    set_variables: set[str] = field(default_factory=set)
    used_checks: dict[str, ast.Span] = field(default_factory=dict)
    #: Validation names already refused where they were declared (E026): their uses in
    #: expressions are not reported again.
    unknown_validations: set[str] = field(default_factory=set)
    #: `let` declarations by name, and those checked so far (`ExpressionChecker.let`).
    let_sources: dict[str, ast.LetDecl] = field(default_factory=dict)
    lets: dict[str, LetInfo] = field(default_factory=dict)
    lets_in_progress: set[str] = field(default_factory=set)
    #: Lets read somewhere (a check, a rule, the verdict, a reason, an `ask when`, another let).
    used_lets: set[str] = field(default_factory=set)
