"""The logic IR as typed nodes, their JSON form, and the visitor every walker is written as.

The checker produces these nodes; the compiler writes them into the manifest as JSON
(`to_json`, docs/design/ir.md: the manifest is a public artifact and its format does not change);
the runtime reads that JSON back with `Decoder` (structure only: kinds, field shapes, spans,
depth and size limits) and its verifier checks names and types on the nodes. Code generation,
the reference evaluator, the explanation, the decompiler and the creation schema's `ask when`
translation are `NodeVisitor`s: one `visit_<Class>` method per node kind, and a node no method
is written for is refused with `UnknownNode`, never guessed at.

A node is a plain `@_node`, as the AST's are, and declares its
fields once: in the order of its JSON keys, each field's JSON key (when it is not the field's
name) and what the decoder says of a value of the wrong kind stated as the field's metadata
(`_json`). The JSON writer and the decoder are one generic pair driven by those fields
(`dataclasses.fields`), so a new node is its class and nothing else here. The JSON is stored
and hashed (`logic.revision`): `tests/language/golden_ir.json` holds its bytes as written before
the nodes were dataclasses, and the writer and the decoder must give them back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, Self, TypeVar, dataclass_transform

from inspectlang.errors import InspectlangError
from inspectlang.vocabulary import MAX_EXPRESSION_DEPTH, MAX_LIST_ITEMS, MAX_NODES

#: `[line, column, end_line, end_column]`, 1-based, the end exclusive; (0, 0, 0, 0) for nodes the
#: program made rather than read from a file.
Span = tuple[int, int, int, int]
NO_SPAN: Span = (0, 0, 0, 0)


_KEEP = object()


def _json(
    key: str | None = None,
    *,
    refused: str = "invalid name {!r}",
    at_most: int | None = None,
    absent: Any = _KEEP,
    omitted_when_none: bool = False,
) -> dict[str, Any]:
    """How a node's field is said in JSON, as the field's metadata (`field(metadata=...)`); a
    field declared without it is written under its name, and a text of the wrong kind is an
    invalid name:

    - `key`: the JSON key (default: the field's name);
    - `refused`: what the decoder says of a text or a list of the wrong kind (`{!r}`: it);
    - `at_most`: the most items a list may hold;
    - `absent`: the value of a key absent or null (default: None, checked as any value);
    - `omitted_when_none`: the key is written only when the value is not None, and a value of
      the wrong kind reads as None (the `let` annotation, which the evaluators ignore).
    """
    return {
        "key": key,
        "refused": refused,
        "at_most": at_most,
        "absent": absent,
        "omitted_when_none": omitted_when_none,
    }


#: An expression's checked type; absent or null in the JSON it reads as "" (unchecked).
_TYPE = _json(refused="unknown type {!r}", absent="")


def _let() -> Any:
    """The `let` a node is a use of (keyword only, None for none)."""
    return field(default=None, kw_only=True, metadata=_json(omitted_when_none=True))


_Kind = TypeVar("_Kind")


#: How every node class with fields of its own is declared: a frozen dataclass with slots whose
#: `__eq__` and `__repr__` are `Node`'s, one for all (`dataclass` compiles each method it writes
#: for each class with `exec`: the IR's ~20 classes with their own equality and repr cost about
#: 10% more instructions of a cold start, measured with cachegrind; docs/design/changes.md).
@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _node(kind: type[_Kind]) -> type[_Kind]:
    return dataclass(frozen=True, slots=True, eq=False, repr=False)(kind)


class Node:
    """The base of every IR node. `op` is its kind's op in the JSON form; `children` names the
    fields holding nodes (or tuples of nodes), in field order, for generic walks (set for each
    node class from its fields, `_shape_of`). Two nodes are equal when they are of one class
    with equal fields; nodes are not hashable."""

    __slots__ = ()
    op: ClassVar[str]
    children: ClassVar[tuple[str, ...]] = ()
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, name) == getattr(other, name) for name in self.__dataclass_fields__
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__dataclass_fields__)
        return f"{type(self).__name__}({shown})"


# --------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------


class Expression(Node):
    """An expression: its checked `type` (docs/design/ir.md), `span`, and `let`, the name of
    the `let` this node is a use of (a copy of the let's expression; evaluators ignore it).
    Each expression class declares the three last, after its own fields, as its JSON has them."""

    __slots__ = ()
    type: str
    span: Span
    let: str | None

    def used_as(self, let: str) -> Self:
        """A copy of this expression marked as a use of `let` (the nodes are frozen)."""
        return dataclasses.replace(self, let=let)


@_node
class Literal(Expression):
    """A number, text or boolean; for `type` `date` an ISO date text."""

    op: ClassVar[str] = "literal"
    value: Any
    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


@_node
class ListLiteral(Expression):
    """`[a, b, c]`."""

    op: ClassVar[str] = "list"
    items: tuple[Expression, ...] = field(
        metadata=_json(
            refused=f"a list needs at most {MAX_LIST_ITEMS} items", at_most=MAX_LIST_ITEMS
        )
    )
    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


@_node
class _Named(Expression):
    """A leaf read by one name (`name`, `id` or `field` in JSON, kept as `name`)."""

    name: str
    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


class Variable(_Named):
    """A template variable's current value."""

    __slots__ = ()
    op: ClassVar[str] = "var"


@_node
class InputValue(_Named):
    """An input's value; `name` is its identifier (`input_<uuid>`)."""

    op: ClassVar[str] = "input"
    name: str = field(metadata=_json("id", refused="invalid identifier {!r}"))


@_node
class ProductField(_Named):
    """A product field (`car.plate`); `name` is the field."""

    op: ClassVar[str] = "product"
    name: str = field(metadata=_json("field", refused="unknown product field {!r}"))


@_node
class ConsumerField(_Named):
    """A consumer field; `name` is the field."""

    op: ClassVar[str] = "consumer"
    name: str = field(metadata=_json("field", refused="unknown consumer field {!r}"))


@_node
class ImageValue(_Named):
    """The record of one template image; `name` is its identifier (`image_<uuid>`)."""

    op: ClassVar[str] = "image"
    name: str = field(metadata=_json("id", refused="invalid identifier {!r}"))


@_node
class CheckValue(_Named):
    """A global validation's current `valid`; `name` is the check's id."""

    op: ClassVar[str] = "check"
    name: str = field(metadata=_json("id", refused="invalid identifier {!r}"))


@_node
class EventSubject(_Named):
    """The rule's event subject: `name` is `image`, `validation`, `damage` or `value`."""

    op: ClassVar[str] = "event"
    name: str = field(metadata=_json("field", refused="unknown event subject {!r}"))


class Local(_Named):
    """The item bound by `count`/`any`/`all`/`sum`."""

    __slots__ = ()
    op: ClassVar[str] = "local"


@_node
class _Source(Expression):
    """A leaf with no name: a whole list of the inspection, or the event's date."""

    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


class Images(_Source):
    """Every template image's record, in template order."""

    __slots__ = ()
    op: ClassVar[str] = "images"


class Damages(_Source):
    """Every damage, declared and reported."""

    __slots__ = ()
    op: ClassVar[str] = "damages"


class Validations(_Source):
    """Every validation result of every image."""

    __slots__ = ()
    op: ClassVar[str] = "validations"


class Now(_Source):
    """The date of the event being processed."""

    __slots__ = ()
    op: ClassVar[str] = "now"


@_node
class RecordField(Expression):
    """`value.name`: a field of an image, validation or damage record (`value`, the record, as
    the AST's `Attribute`)."""

    op: ClassVar[str] = "field"
    value: Expression = field(metadata=_json("of"))
    name: str
    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


@_node
class Unary(Expression):
    """`not operand` or `-operand`."""

    op: ClassVar[str] = "unary"
    operator: str = field(metadata=_json(refused="unknown operator {!r}"))
    operand: Expression
    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


@_node
class Binary(Expression):
    """`left operator right`: `+ - * / = != < <= > >= and or in`."""

    op: ClassVar[str] = "binary"
    operator: str = field(metadata=_json(refused="unknown operator {!r}"))
    left: Expression
    right: Expression
    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


@_node
class Conditional(Expression):
    """`if condition then then else otherwise`: `then` when the condition is true, `otherwise`
    when it is false or missing; only the chosen side is evaluated."""

    op: ClassVar[str] = "conditional"
    condition: Expression = field(metadata=_json("cond"))
    then: Expression
    otherwise: Expression = field(metadata=_json("else"))
    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


@_node
class Call(Expression):
    """A library function call."""

    op: ClassVar[str] = "call"
    function: str = field(metadata=_json("fn", refused="no function {!r}"))
    arguments: tuple[Expression, ...] = field(
        metadata=_json("args", refused="call arguments must be a list")
    )
    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


@_node
class Quantifier(Expression):
    """A quantifier over a list (its kind is its class, one per JSON op). `variable` names the
    bound item (None only for a plain `count(L)` or `sum(L)`); `body` is the `where` condition
    (count, any, all, filter) or the `value` (sum, map: their JSON key), None when absent."""

    variable: str | None = field(metadata=_json("var"))
    collection: Expression = field(metadata=_json("over"))
    body: Expression | None = field(metadata=_json("where"))
    type: str = field(metadata=_TYPE)
    span: Span
    let: str | None = _let()


class CountOf(Quantifier):
    """`count(L)`, `count(x in L where C)`: how many items (that hold C)."""

    __slots__ = ()
    op: ClassVar[str] = "count"


class AnyOf(Quantifier):
    """`any(x in L where C)`."""

    __slots__ = ()
    op: ClassVar[str] = "any"


class AllOf(Quantifier):
    """`all(x in L where C)`."""

    __slots__ = ()
    op: ClassVar[str] = "all"


@_node
class SumOf(Quantifier):
    """`sum(L)`, `sum(x in L of E)`."""

    op: ClassVar[str] = "sum"
    body: Expression | None = field(metadata=_json("value"))


# -- lists (issue 25, construct 6) ------------------------------------------------------------


class FilterOf(Quantifier):
    """`filter(x in L where C)`: the items that hold C, in order (a list of L's type)."""

    __slots__ = ()
    op: ClassVar[str] = "filter"


@_node
class MapOf(Quantifier):
    """`map(x in L of E)`: E for each item, in order; a missing E is left out (a list of E's
    type: number or text)."""

    op: ClassVar[str] = "map"
    body: Expression | None = field(metadata=_json("value"))


#: The quantifier classes by JSON op (and by the word written in the language).
QUANTIFIERS: dict[str, type[Quantifier]] = {
    kind.op: kind for kind in (CountOf, AnyOf, AllOf, SumOf, FilterOf, MapOf)
}
#: Quantifiers whose body is a value (`of E`, JSON key `value`); the others' is a condition
#: (`where C`, JSON key `where`).
VALUE_QUANTIFIERS = frozenset({"sum", "map"})


# --------------------------------------------------------------------------------------------
# Statements
# --------------------------------------------------------------------------------------------


class Statement(Node):
    """A statement of a rule body."""

    __slots__ = ()
    span: Span


@_node
class SetStatement(Statement):
    """`set name to value`."""

    op: ClassVar[str] = "set"
    name: str
    value: Expression
    span: Span


@_node
class IfStatement(Statement):
    """`if condition` with its two branches (`otherwise` is empty when there is no `else`; an
    `else if` is an `if` alone in `otherwise`)."""

    op: ClassVar[str] = "if"
    condition: Expression = field(metadata=_json("cond"))
    then: tuple[Statement, ...]
    otherwise: tuple[Statement, ...] = field(metadata=_json("else", absent=()))
    span: Span


# --------------------------------------------------------------------------------------------
# Walking
# --------------------------------------------------------------------------------------------


class UnknownNode(InspectlangError, ValueError):
    """A walker met a node that is none of the kinds it knows: a program it must refuse, never
    guess at. `node` is the node met, `walker` names the walker. Also a `ValueError`, as for
    any other malformed input (the `decompile` command reports it as one)."""

    def __init__(self, node: object, walker: str) -> None:
        self.node = node
        self.walker = walker
        super().__init__(f"{walker}: unknown IR node {describe(node)}")


def describe(node: object) -> str:
    """A JSON node by its op, any other value by its class."""
    if isinstance(node, dict):
        return f"op {node.get('op')!r}"
    return type(node).__qualname__


class NodeVisitor:
    """Walks IR nodes: `visit(node, *args)` calls `visit_<ClassName>(node, *args)` (jinja's
    `NodeVisitor`). A node without a method is refused with `UnknownNode`. The method found for
    a node class is kept per visitor class, so a visit costs one dict lookup (the reference
    evaluator visits every node of every evaluation)."""

    #: How `UnknownNode` names this walker.
    walker: ClassVar[str] = "IR walker"
    _methods: ClassVar[dict[type, Callable[..., Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._methods = {}

    def visit(self, node: Any, *args: Any) -> Any:
        method = self._methods.get(node.__class__)
        if method is None:
            method = getattr(type(self), f"visit_{type(node).__name__}", None)
            if method is None:
                raise UnknownNode(node, self.walker)
            self._methods[node.__class__] = method
        return method(self, node, *args)


def child_nodes(node: Node) -> Iterator[Node]:
    """The nodes directly under `node`, in field order."""
    for name in node.children:
        value = getattr(node, name)
        if isinstance(value, tuple):
            yield from value
        elif value is not None:
            yield value


def walk(node: Node | None) -> Iterator[Node]:
    """Every node under `node` (itself included), parents before children."""
    pending = [] if node is None else [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(reversed(list(child_nodes(current))))


# --------------------------------------------------------------------------------------------
# The JSON form (docs/design/ir.md), driven by the nodes' fields
# --------------------------------------------------------------------------------------------

#: An IR node as JSON: an object with an `op` key.
JsonNode = dict[str, Any]

#: How a field's value is written and read, told by its annotation: a node, a node or None, a
#: tuple of expressions (a JSON list), a tuple of statements, a span, a text, a text or None,
#: or any JSON value as it is (a literal's).
NODE, OPTIONAL_NODE, NODES, STATEMENTS, SPAN, TEXT, OPTIONAL_TEXT, VALUE = range(8)
_HOW = {
    "Expression": NODE,
    "Expression | None": OPTIONAL_NODE,
    "tuple[Expression, ...]": NODES,
    "tuple[Statement, ...]": STATEMENTS,
    "Span": SPAN,
    "str": TEXT,
    "str | None": OPTIONAL_TEXT,
    "Any": VALUE,
}


#: How the writer writes each: a node, a list of nodes, a span as a list; any other as it is.
_WRITTEN_AS = {NODE: NODE, OPTIONAL_NODE: NODE, NODES: NODES, STATEMENTS: NODES, SPAN: SPAN}


class _JsonField(NamedTuple):
    """One field of a node class as its JSON has it (from the field and its `_json` metadata)."""

    name: str
    key: str
    how: int
    refused: str
    at_most: int | None
    absent: Any
    omitted_when_none: bool


class _Shape(NamedTuple):
    """A node class's JSON: its op and its fields in key order; `written` is what the writer
    needs of each, `(name, key, how, omitted_when_none)`."""

    op: str
    fields: tuple[_JsonField, ...]
    written: tuple[tuple[str, str, int, bool], ...]


def _shape_of(kind: type[Node]) -> _Shape:
    """A node class's shape, from `dataclasses.fields` and their metadata; sets its `children`.
    An annotation the writer cannot say is refused here, at import."""
    shown: list[_JsonField] = []
    for item in dataclasses.fields(kind):
        how = _HOW.get(str(item.type))
        if how is None:
            raise TypeError(f"{kind.__name__}.{item.name}: no JSON form for {item.type}")
        said = item.metadata
        shown.append(
            _JsonField(
                item.name,
                said.get("key") or item.name,
                how,
                said.get("refused", "invalid name {!r}"),
                said.get("at_most"),
                said.get("absent", _KEEP),
                said.get("omitted_when_none", False),
            )
        )
    kind.children = tuple(f.name for f in shown if f.how in _WRITTEN_AS and f.how != SPAN)
    written = tuple(
        (f.name, f.key, _WRITTEN_AS.get(f.how, VALUE), f.omitted_when_none) for f in shown
    )
    return _Shape(kind.op, tuple(shown), written)


def _node_classes(base: type[Node]) -> list[type[Node]]:
    """Every class under `base` with an op of its own (the kinds the JSON names). A class
    `dataclass(slots=True)` rebuilt is counted once: the class it was built from stays among
    the subclasses until collected, without the `__slots__` of its own."""
    found: list[type[Node]] = []
    pending = [base]
    while pending:
        kind = pending.pop()
        pending.extend(kind.__subclasses__())
        if "op" in vars(kind) and "__slots__" in vars(kind):
            found.append(kind)
    return found


#: Every node class the JSON names, by op: expressions and statements.
EXPRESSION_CLASSES: dict[str, type[Node]] = {kind.op: kind for kind in _node_classes(Expression)}
STATEMENT_CLASSES: dict[str, type[Node]] = {kind.op: kind for kind in _node_classes(Statement)}
#: Each node class's JSON shape.
_SHAPES: dict[type[Node], _Shape] = {
    kind: _shape_of(kind) for kind in (*EXPRESSION_CLASSES.values(), *STATEMENT_CLASSES.values())
}


def to_json(node: Node) -> JsonNode:
    """The JSON form of a node (docs/design/ir.md): `op`, then each field under its key in
    field order (the order is part of `logic.revision`'s content hash). Every node of a
    manifest's logic passes here (about 2,000 in a large template, issue 26)."""
    shape = _SHAPES.get(node.__class__)
    if shape is None:
        raise UnknownNode(node, "JSON writer")
    body: JsonNode = {"op": shape.op}
    for name, key, how, omitted_when_none in shape.written:
        value = getattr(node, name)
        if value is None:
            if omitted_when_none:
                continue
        elif how == NODE:
            value = to_json(value)
        elif how == SPAN:
            value = list(value)
        elif how == NODES:
            value = [to_json(item) for item in value]
        body[key] = value
    return body


class MalformedIR(InspectlangError, ValueError):
    """JSON that is not IR: `where` is the place in the logic (`logic.rules[0].body[1].cond`)."""

    def __init__(self, message: str, where: str) -> None:
        super().__init__(f"{where}: {message}")
        self.message = message
        self.where = where


def read_span(node: JsonNode, where: str) -> Span:
    """The `span` of a JSON object of the logic (absent: `NO_SPAN`), checked."""
    span = node.get("span", NO_SPAN)
    if (
        not isinstance(span, list | tuple)
        or len(span) != 4
        or not all(type(part) is int and 0 <= part < 10_000_000 for part in span)
    ):
        raise MalformedIR(f"invalid span {span!r}", where)
    return (span[0], span[1], span[2], span[3])


class Decoder:
    """Reads the JSON form back into nodes, checking its structure only: known ops, fields of
    the right JSON kind (in field order, as their metadata says), spans of four integers, and
    the vocabulary's limits on depth, list length and node count (so nothing after it recurses
    past them). Names and types are for the reader to check (the runtime's verifier). One
    decoder counts the nodes of one logic."""

    def __init__(self, max_nodes: int = MAX_NODES) -> None:
        self.nodes = 0
        self.max_nodes = max_nodes

    def expression(self, node: Any, where: str, depth: int = 0) -> Expression:
        if not isinstance(node, dict):
            raise MalformedIR("an expression must be an object", where)
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise MalformedIR(f"more than {self.max_nodes} nodes", where)
        if depth > MAX_EXPRESSION_DEPTH:
            raise MalformedIR(f"expressions nested deeper than {MAX_EXPRESSION_DEPTH}", where)
        op = node.get("op")
        kind = EXPRESSION_CLASSES.get(op) if isinstance(op, str) else None
        if kind is None:
            raise MalformedIR(f"unknown expression op {op!r}", where)
        result: Expression = self.node(kind, node, where, depth + 1)
        return result

    def statements(self, nodes: Any, where: str, depth: int = 0) -> tuple[Statement, ...]:
        if not isinstance(nodes, list):
            raise MalformedIR("statements must be a list", where)
        if depth > MAX_EXPRESSION_DEPTH:
            raise MalformedIR(f"statements nested deeper than {MAX_EXPRESSION_DEPTH}", where)
        result: list[Statement] = []
        for index, node in enumerate(nodes):
            here = f"{where}[{index}]"
            if not isinstance(node, dict):
                raise MalformedIR("a statement must be an object", here)
            op = node.get("op")
            kind = STATEMENT_CLASSES.get(op) if isinstance(op, str) else None
            if kind is None:
                raise MalformedIR(f"unknown statement op {op!r}", here)
            result.append(self.node(kind, node, here, depth))
        return tuple(result)

    def node(self, kind: type[Node], node: JsonNode, where: str, depth: int) -> Any:
        """A node of `kind` from its JSON object, field by field: expressions under it at
        `depth`, statements one deeper."""
        values: dict[str, Any] = {}
        for name, key, how, refused, at_most, absent, omitted_when_none in _SHAPES[kind].fields:
            value = node.get(key)
            if value is None and absent is not _KEEP:
                value = absent
            elif how == NODE:
                value = self.expression(value, f"{where}.{key}", depth)
            elif how == SPAN:
                value = read_span(node, where)
            elif how in (TEXT, OPTIONAL_TEXT):
                if not isinstance(value, str) and (how == TEXT or value is not None):
                    if not omitted_when_none:
                        raise MalformedIR(refused.format(value), where)
                    value = None
            elif how == OPTIONAL_NODE:
                if value is not None:
                    value = self.expression(value, f"{where}.{key}", depth)
            elif how == NODES:
                if not isinstance(value, list) or (at_most is not None and len(value) > at_most):
                    raise MalformedIR(refused.format(value), where)
                value = tuple(
                    self.expression(item, f"{where}.{key}[{index}]", depth)
                    for index, item in enumerate(value)
                )
            elif how == STATEMENTS:
                value = self.statements(value, f"{where}.{key}", depth + 1)
            values[name] = value
        return kind(**values)


def from_json(node: Any, where: str = "expression") -> Expression:
    """One JSON expression as a node (structure checked; raises `MalformedIR`)."""
    return Decoder().expression(node, where)
