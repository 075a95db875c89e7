"""The abstract syntax tree of `.insp` files: frozen dataclasses, one per construct.

Every node has a `span` (where it stands in the source) that takes no part in equality, so that
`parse(format(tree)) == tree` compares structure and values, not positions. Comments are kept on
the node they precede (`comments`) or end the line of (`trailing_comment`), so the formatter can
put them back. Syntax: `docs/design/syntax.md`.

A node is a plain `@dataclass(frozen=True, slots=True)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, TypeAlias


class Span(NamedTuple):
    """A source range: 1-based line and column; the end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    def as_list(self) -> list[int]:
        return [self.line, self.column, self.end_line, self.end_column]

    def as_tuple(self) -> tuple[int, int, int, int]:
        """The span as the IR keeps it (`inspectlang.ir.Span`)."""
        return (self.line, self.column, self.end_line, self.end_column)


#: The span of nodes made by the program rather than read from a file (decompiler, tests).
NO_SPAN = Span(0, 0, 0, 0)


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


def _comments() -> tuple[str, ...]:
    return field(default=(), compare=True, kw_only=True)


# --------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Literal:
    """A number, text or boolean written in the source."""

    value: int | float | str | bool
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ListExpr:
    """`[a, b, c]`: a list written in the source."""

    items: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Name:
    """A bare name: a variable, a bound item, an event subject or a namespace (`car`, `inputs`)."""

    name: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Attribute:
    """`value.name`."""

    value: Expr
    name: str
    span: Span = _span()
    name_span: Span = _span()


@dataclass(frozen=True, slots=True)
class Call:
    """`function(arguments)` for the library functions."""

    function: str
    arguments: tuple[Expr, ...]
    span: Span = _span()
    function_span: Span = _span()


@dataclass(frozen=True, slots=True)
class Quantifier:
    """`count(L)`, `count(x in L where C)`, `any(...)`, `all(...)`, `sum(x in L of E)`.

    `variable` is None only for the plain `count(L)`.
    """

    kind: str
    variable: str | None
    collection: Expr
    condition: Expr | None = None
    value: Expr | None = None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Unary:
    """`not x` or `-x`."""

    operator: str
    operand: Expr
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Conditional:
    """`if CONDITION then A else B`: A when the condition holds, B otherwise (missing too)."""

    condition: Expr
    then: Expr
    otherwise: Expr
    span: Span = _span()
    #: Where the words `if`, `then` and `else` stand (the editor's hover).
    keyword_spans: tuple[Span, Span, Span] = field(
        default=(NO_SPAN, NO_SPAN, NO_SPAN), compare=False, repr=False, kw_only=True
    )


@dataclass(frozen=True, slots=True)
class Binary:
    """`left OP right` with OP one of `or and = != < <= > >= in + - * /`."""

    operator: str
    left: Expr
    right: Expr
    span: Span = _span()


Expr: TypeAlias = (
    Literal | ListExpr | Name | Attribute | Call | Quantifier | Unary | Binary | Conditional
)

# --------------------------------------------------------------------------------------------
# Statements (rule bodies)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SetStatement:
    """`set NAME to VALUE` (`name` as in the IR's `SetStatement`)."""

    name: str
    value: Expr
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class IfStatement:
    """`if C` ... `else if C2` ... `else` ...; an `else if` is an IfStatement alone in
    `otherwise` with `is_else_if=True`, so the formatter writes it back the same way."""

    condition: Expr
    then: tuple[Statement, ...]
    otherwise: tuple[Statement, ...] = ()
    is_else_if: bool = False
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


Statement: TypeAlias = SetStatement | IfStatement

# --------------------------------------------------------------------------------------------
# Items inside declarations
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with a unit: `48 hours`, `7 days`, `500 meters`, `5 MB`."""

    amount: int | float
    unit: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Size:
    """`800 x 600` (width x height in pixels)."""

    width: int
    height: int
    span: Span = _span()


PropertyValue: TypeAlias = Expr | Quantity | Size


@dataclass(frozen=True, slots=True)
class Property:
    """`key: value` or `key LOCALE: value`; `values` holds the comma-separated parts."""

    key: str
    values: tuple[PropertyValue, ...]
    locale: str | None = None
    span: Span = _span()
    key_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Flag:
    """A property without a value: `required`, `whole number`, `email`."""

    words: str
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Option:
    """`option KEY: "Label"` or `option KEY LOCALE: "Etiqueta"` of a select/multiselect."""

    key: str
    label: str
    locale: str | None = None
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Modifier:
    """One part after the name of a `validate` line: `required`, `not run`,
    `minimum confidence 85`, `within 24 hours`, `minimum size 800 x 600`."""

    words: str
    value: int | float | Quantity | Size | None = None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Validate:
    """`validate NAME, modifier, ...` inside an image."""

    name: str
    modifiers: tuple[Modifier, ...] = ()
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class FeatureUse:
    """`feature NAME` inside an image: the feature applies to that image."""

    name: str
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Require:
    """`require FIELD, FIELD` inside `product` or `consumer`."""

    fields: tuple[str, ...]
    span: Span = _span()
    field_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False, kw_only=True)
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Disapprove:
    """`disapprove "REASON" when CONDITION` inside `verdict`."""

    reason: str
    condition: Expr
    span: Span = _span()
    #: Where the reason's text (with its quotes) is: `{...}` values inside it are checked.
    reason_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    #: The items indented under the line: `reason LOCALE: "TEXT"` translations of the reason.
    translations: tuple[Item, ...] = field(default=(), kw_only=True)
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Review:
    """`review "REASON" when CONDITION` inside `verdict`: when it holds at the finish, a person
    decides (the inspection waits in `review`, docs/review.md)."""

    reason: str
    condition: Expr
    span: Span = _span()
    reason_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    #: The items indented under the line: `reason LOCALE: "TEXT"` translations of the reason.
    translations: tuple[Item, ...] = field(default=(), kw_only=True)
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Approve:
    """`approve when CONDITION` inside `verdict`."""

    condition: Expr
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Otherwise:
    """`otherwise "REASON"` inside `verdict`."""

    reason: str
    span: Span = _span()
    reason_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    #: The items indented under the line: `reason LOCALE: "TEXT"` translations of the reason.
    translations: tuple[Item, ...] = field(default=(), kw_only=True)
    trailing_comment: str | None = field(default=None, kw_only=True)


Item: TypeAlias = (
    Property
    | Flag
    | Option
    | Validate
    | FeatureUse
    | Require
    | Disapprove
    | Review
    | Approve
    | Otherwise
)

# --------------------------------------------------------------------------------------------
# Declarations (each starts at column 0)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IncludeDecl:
    """`include "NAME"`: the lets, checks and inputs of another file of the company, inlined
    when the template is compiled (`inspectlang.includes`)."""

    name: str
    span: Span = _span()
    #: Where the name's text (with its quotes) is.
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class TemplateDecl:
    """`template "NAME"` with `type`, `id`, `locales` properties."""

    name: str
    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class SettingsDecl:
    """`settings` with the template's parameters as properties."""

    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class LetDecl:
    """`let NAME = EXPRESSION`: a named derived value, computed from the expression wherever
    the name is used."""

    name: str
    value: Expr
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class VariableDecl:
    """`variable NAME: numeric|text = INITIAL`."""

    name: str
    variable_type: str
    initial: Expr
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class ProductDecl:
    """`product` with the `require` lines of the product fields."""

    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class ConsumerDecl:
    """`consumer` with the `require` lines of the consumer fields."""

    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class ImageDecl:
    """`image NAME` with its labels, `validate` lines and `feature` uses."""

    name: str
    items: tuple[Item, ...] = ()
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class InputDecl:
    """`input NAME` with its type, labels, options and checks."""

    name: str
    items: tuple[Item, ...] = ()
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class FeatureDecl:
    """`feature NAME: on|off`."""

    name: str
    active: bool
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class EventSpec:
    """What a rule reacts to: `event` in words (`validation failed`), optionally narrowed by
    `target` (an input, image or validation name) and `of_image` (`... of IMAGE`)."""

    event: str
    target: str | None = None
    of_image: str | None = None
    span: Span = _span()
    target_span: Span = _span()
    of_image_span: Span = _span()


@dataclass(frozen=True, slots=True)
class RuleDecl:
    """`on EVENT` followed by statements."""

    event: EventSpec
    body: tuple[Statement, ...]
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class CheckDecl:
    """`check KEY` with `name`, `description` and `valid when` properties."""

    name: str
    items: tuple[Item, ...] = ()
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class VerdictDecl:
    """`verdict` with `disapprove`, `approve` and `otherwise` lines."""

    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


Declaration: TypeAlias = (
    IncludeDecl
    | TemplateDecl
    | SettingsDecl
    | VariableDecl
    | LetDecl
    | ProductDecl
    | ConsumerDecl
    | ImageDecl
    | InputDecl
    | FeatureDecl
    | RuleDecl
    | CheckDecl
    | VerdictDecl
)


@dataclass(frozen=True, slots=True)
class Module:
    """A whole `.insp` file. `final_comments` are comments after the last declaration."""

    declarations: tuple[Declaration, ...]
    final_comments: tuple[str, ...] = ()
    filename: str = field(default="<template>", compare=False)
    #: Whether a `/` or a `mod(...)` in it may divide by something else than a number literal:
    #: the checker's W005 walk skips a module without. The parser sets it; a module built by
    #: hand has True, and one given new declarations by `dataclasses.replace` must say True.
    divides: bool = field(default=True, compare=False)
