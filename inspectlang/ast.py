"""The abstract syntax tree of `.insp` files: frozen dataclasses, one per construct.

Every node has a `span` (where it stands in the source) that takes no part in equality, so that
`parse(format(tree)) == tree` compares structure and values, not positions. Comments are kept on
the node they precede (`comments`) or end the line of (`trailing_comment`), so the formatter can
put them back. Syntax: `docs/design/syntax.md`.

The nodes are real dataclasses (`dataclasses.fields`, `replace`, `is_dataclass` and pattern
matching work) that behave as `@dataclass(frozen=True, slots=True)` ones, but are made by `_node`:
`dataclass` compiles six small functions per class, one `exec` each, which made importing this
module the costliest step of a cold compile. Here `dataclass` only reads the fields and makes the
slots; equality, hash, repr and immutability come from the base class `_Node` (the same results as
dataclass's own methods), and `_define_initializers` compiles the `__init__` of all pending
classes, written as `dataclass` writes them, in one `exec`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, FrozenInstanceError, dataclass, field, fields
from operator import attrgetter
from typing import Any, ClassVar, TypeAlias, TypeVar, dataclass_transform

_NodeClass = TypeVar("_NodeClass")

#: Classes made by `_node` whose `__init__` `_define_initializers` has not compiled yet.
_PENDING: list[type] = []


class _Node:
    """What every node shares, as `@dataclass(frozen=True, slots=True)` would write it for each:
    equality and hash over the compared fields, a repr of the shown ones, immutability, and the
    state used to pickle and copy despite it."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]]
    #: The values of the fields that take part in equality and hash, as a tuple.
    _compared: ClassVar[Callable[[Any], tuple[Any, ...]]]
    #: The fields the repr shows.
    _shown: ClassVar[tuple[str, ...]]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self.__class__._compared(self) == self.__class__._compared(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.__class__._compared(self))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{self.__class__.__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self) -> list[object]:
        return [getattr(self, item.name) for item in fields(self)]

    def __setstate__(self, state: list[object]) -> None:
        for item, value in zip(fields(self), state, strict=True):
            object.__setattr__(self, item.name, value)


def _values_of(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function of a node giving the tuple of its `names` fields (`attrgetter` gives a bare
    value for one name)."""
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda node: (get(node),)
    if not names:
        return lambda node: ()
    return attrgetter(*names)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _node(cls: type[_NodeClass]) -> type[_NodeClass]:
    """`@dataclass(frozen=True, slots=True)`, its `__init__` compiled later by
    `_define_initializers`. Every node class has a docstring: for one without, `dataclass`
    writes one from `inspect.signature`, which is slow the first time."""
    made = dataclass(init=False, repr=False, eq=False, slots=True)(cls)
    items = fields(made)  # type: ignore[arg-type]
    made._compared = _values_of(tuple(item.name for item in items if item.compare))  # type: ignore[attr-defined]
    made._shown = tuple(item.name for item in items if item.repr)  # type: ignore[attr-defined]
    _PENDING.append(made)
    return made


def _define_initializers() -> None:
    """Compile the `__init__` of every pending class in one `exec`: the code
    `@dataclass(frozen=True, slots=True)` writes, with the same signature and annotations."""
    lines: list[str] = []
    namespace: dict[str, Any] = {"_set": object.__setattr__}
    for number, cls in enumerate(_PENDING):
        parameters: list[str] = []
        keyword_only: list[str] = []
        body: list[str] = []
        for item in fields(cls):
            if item.default_factory is not MISSING:
                raise TypeError(f"{cls.__name__}.{item.name}: node fields take no factory")
            parameter = item.name
            if item.default is not MISSING:
                namespace[f"_default{number}_{item.name}"] = item.default
                parameter += f"=_default{number}_{item.name}"
            (keyword_only if item.kw_only else parameters).append(parameter)
            body.append(f"    _set(self, {item.name!r}, {item.name})")
        if keyword_only:
            parameters += ["*", *keyword_only]
        lines += [f"def _init{number}(self, {', '.join(parameters)}):", *(body or ["    pass"])]
    exec("\n".join(lines), namespace)
    for number, cls in enumerate(_PENDING):
        function = namespace[f"_init{number}"]
        function.__name__ = "__init__"
        function.__qualname__ = f"{cls.__qualname__}.__init__"
        function.__module__ = cls.__module__
        function.__annotations__ = {item.name: item.type for item in fields(cls)} | {"return": None}
        cls.__init__ = function  # type: ignore[misc]
    _PENDING.clear()


@_node
class Span(_Node):
    """A source range: 1-based line and column; the end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    def as_list(self) -> list[int]:
        return [self.line, self.column, self.end_line, self.end_column]


_define_initializers()

#: The span of nodes made by the program rather than read from a file (decompiler, tests).
NO_SPAN = Span(0, 0, 0, 0)


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


def _comments() -> tuple[str, ...]:
    return field(default=(), compare=True, kw_only=True)


# --------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------


@_node
class Literal(_Node):
    """A number, text or boolean written in the source."""

    value: int | float | str | bool
    span: Span = _span()


@_node
class ListExpr(_Node):
    """`[a, b, c]`: a list written in the source."""

    items: tuple[Expr, ...]
    span: Span = _span()


@_node
class Name(_Node):
    """A bare name: a variable, a bound item, an event subject or a namespace (`car`, `inputs`)."""

    name: str
    span: Span = _span()


@_node
class Attribute(_Node):
    """`value.name`."""

    value: Expr
    name: str
    span: Span = _span()
    name_span: Span = _span()


@_node
class Call(_Node):
    """`function(arguments)` for the library functions."""

    function: str
    arguments: tuple[Expr, ...]
    span: Span = _span()
    function_span: Span = _span()


@_node
class Quantifier(_Node):
    """`count(L)`, `count(x in L where C)`, `any(...)`, `all(...)`, `sum(x in L of E)`.

    `variable` is None only for the plain `count(L)`.
    """

    kind: str
    variable: str | None
    collection: Expr
    condition: Expr | None = None
    value: Expr | None = None
    span: Span = _span()


@_node
class Unary(_Node):
    """`not x` or `-x`."""

    operator: str
    operand: Expr
    span: Span = _span()


@_node
class Binary(_Node):
    """`left OP right` with OP one of `or and = != < <= > >= in + - * /`."""

    operator: str
    left: Expr
    right: Expr
    span: Span = _span()


Expr: TypeAlias = Literal | ListExpr | Name | Attribute | Call | Quantifier | Unary | Binary

# --------------------------------------------------------------------------------------------
# Statements (rule bodies)
# --------------------------------------------------------------------------------------------


@_node
class SetStatement(_Node):
    """`set VARIABLE to VALUE`."""

    variable: str
    value: Expr
    span: Span = _span()
    variable_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class IfStatement(_Node):
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


@_node
class Quantity(_Node):
    """A number with a unit: `48 hours`, `7 days`, `500 meters`, `5 MB`."""

    amount: int | float
    unit: str
    span: Span = _span()


@_node
class Size(_Node):
    """`800 x 600` (width x height in pixels)."""

    width: int
    height: int
    span: Span = _span()


PropertyValue: TypeAlias = Expr | Quantity | Size


@_node
class Property(_Node):
    """`key: value` or `key LOCALE: value`; `values` holds the comma-separated parts."""

    key: str
    values: tuple[PropertyValue, ...]
    locale: str | None = None
    span: Span = _span()
    key_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class Flag(_Node):
    """A property without a value: `required`, `whole number`, `email`."""

    words: str
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class Option(_Node):
    """`option KEY: "Label"` or `option KEY LOCALE: "Etiqueta"` of a select/multiselect."""

    key: str
    label: str
    locale: str | None = None
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class Modifier(_Node):
    """One part after the name of a `validate` line: `required`, `not run`,
    `minimum confidence 85`, `within 24 hours`, `minimum size 800 x 600`."""

    words: str
    value: int | float | Quantity | Size | None = None
    span: Span = _span()


@_node
class Validate(_Node):
    """`validate NAME, modifier, ...` inside an image."""

    name: str
    modifiers: tuple[Modifier, ...] = ()
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class FeatureUse(_Node):
    """`feature NAME` inside an image: the feature applies to that image."""

    name: str
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class Require(_Node):
    """`require FIELD, FIELD` inside `product` or `consumer`."""

    fields: tuple[str, ...]
    span: Span = _span()
    field_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False, kw_only=True)
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class Disapprove(_Node):
    """`disapprove "REASON" when CONDITION` inside `verdict`."""

    reason: str
    condition: Expr
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class Approve(_Node):
    """`approve when CONDITION` inside `verdict`."""

    condition: Expr
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class Otherwise(_Node):
    """`otherwise "REASON"` inside `verdict`."""

    reason: str
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


Item: TypeAlias = (
    Property | Flag | Option | Validate | FeatureUse | Require | Disapprove | Approve | Otherwise
)

# --------------------------------------------------------------------------------------------
# Declarations (each starts at column 0)
# --------------------------------------------------------------------------------------------


@_node
class TemplateDecl(_Node):
    """`template "NAME"` with `type`, `id`, `locales` properties."""

    name: str
    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class SettingsDecl(_Node):
    """`settings` with the template's parameters as properties."""

    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class VariableDecl(_Node):
    """`variable NAME: numeric|text = INITIAL`."""

    name: str
    variable_type: str
    initial: Expr
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class ProductDecl(_Node):
    """`product` with the `require` lines of the product fields."""

    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class ConsumerDecl(_Node):
    """`consumer` with the `require` lines of the consumer fields."""

    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class ImageDecl(_Node):
    """`image NAME` with its labels, `validate` lines and `feature` uses."""

    name: str
    items: tuple[Item, ...] = ()
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class InputDecl(_Node):
    """`input NAME` with its type, labels, options and checks."""

    name: str
    items: tuple[Item, ...] = ()
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class FeatureDecl(_Node):
    """`feature NAME: on|off`."""

    name: str
    active: bool
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class EventSpec(_Node):
    """What a rule reacts to: `event` in words (`validation failed`), optionally narrowed by
    `target` (an input, image or validation name) and `of_image` (`... of IMAGE`)."""

    event: str
    target: str | None = None
    of_image: str | None = None
    span: Span = _span()
    target_span: Span = _span()
    of_image_span: Span = _span()


@_node
class RuleDecl(_Node):
    """`on EVENT` followed by statements."""

    event: EventSpec
    body: tuple[Statement, ...]
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class CheckDecl(_Node):
    """`check KEY` with `name`, `description` and `valid when` properties."""

    name: str
    items: tuple[Item, ...] = ()
    span: Span = _span()
    name_span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


@_node
class VerdictDecl(_Node):
    """`verdict` with `disapprove`, `approve` and `otherwise` lines."""

    items: tuple[Item, ...] = ()
    span: Span = _span()
    comments: tuple[str, ...] = _comments()
    trailing_comment: str | None = field(default=None, kw_only=True)


Declaration: TypeAlias = (
    TemplateDecl
    | SettingsDecl
    | VariableDecl
    | ProductDecl
    | ConsumerDecl
    | ImageDecl
    | InputDecl
    | FeatureDecl
    | RuleDecl
    | CheckDecl
    | VerdictDecl
)


@_node
class Module(_Node):
    """A whole `.insp` file. `final_comments` are comments after the last declaration."""

    declarations: tuple[Declaration, ...]
    final_comments: tuple[str, ...] = ()
    filename: str = field(default="<template>", compare=False)


_define_initializers()
