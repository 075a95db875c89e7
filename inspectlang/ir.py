"""The logic IR as typed nodes, their JSON form, and the visitor every walker is written as.

The checker produces these nodes; the compiler writes them into the manifest as JSON
(`to_json`, docs/design/ir.md: the manifest is a public artifact and its format does not change);
the runtime reads that JSON back with `Decoder` (structure only: kinds, field shapes, spans,
depth and size limits) and its verifier checks names and types on the nodes. Code generation,
the reference evaluator, the explanation, the decompiler and the creation schema's `ask when`
translation are `NodeVisitor`s: one `visit_<Class>` method per node kind, and a node no method
is written for is refused with `UnknownNode`, never guessed at.

The nodes are plain classes with `__slots__` and a hand-written `__init__`, not dataclasses:
a frozen dataclass costs about 0.4 ms to define at import and three times a plain object to
build, and a compile builds thousands of nodes (benchmarks/bench_compile.py, cold start).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from inspectlang.errors import InspectlangError
from inspectlang.vocabulary import MAX_EXPRESSION_DEPTH, MAX_LIST_ITEMS, MAX_NODES

#: `[line, column, end_line, end_column]`, 1-based, the end exclusive; (0, 0, 0, 0) for nodes the
#: program made rather than read from a file.
Span = tuple[int, int, int, int]
NO_SPAN: Span = (0, 0, 0, 0)


class Node:
    """The base of every IR node. `op` is its kind's op in the JSON form; `fields` lists its
    attributes in the order of its JSON keys; `children` names those holding nodes (or tuples
    of nodes), for generic walks."""

    __slots__ = ()
    op: ClassVar[str]
    fields: ClassVar[tuple[str, ...]] = ()
    children: ClassVar[tuple[str, ...]] = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, name) == getattr(other, name) for name in self.fields
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.fields)
        return f"{type(self).__name__}({shown})"


# --------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------


class Expression(Node):
    """An expression: its checked `type` (docs/design/ir.md), `span`, and `let`, the name of
    the `let` this node is a use of (a copy of the let's expression; evaluators ignore it)."""

    __slots__ = ("let", "span", "type")
    type: str
    span: Span
    let: str | None


class Literal(Expression):
    """A number, text or boolean; for `type` `date` an ISO date text."""

    __slots__ = ("value",)
    fields = ("value", "type", "span", "let")
    op: ClassVar[str] = "literal"
    value: Any

    def __init__(self, value: Any, type: str, span: Span, *, let: str | None = None) -> None:
        self.value, self.type, self.span, self.let = value, type, span, let


class ListLiteral(Expression):
    """`[a, b, c]`."""

    __slots__ = ("items",)
    fields = ("items", "type", "span", "let")
    children = ("items",)
    op: ClassVar[str] = "list"
    items: tuple[Expression, ...]

    def __init__(
        self, items: tuple[Expression, ...], type: str, span: Span, *, let: str | None = None
    ) -> None:
        self.items, self.type, self.span, self.let = items, type, span, let


class _Named(Expression):
    """A leaf read by one name (`name`, `id` or `field` in JSON, kept as `name`)."""

    __slots__ = ("name",)
    fields = ("name", "type", "span", "let")
    name: str

    def __init__(self, name: str, type: str, span: Span, *, let: str | None = None) -> None:
        self.name, self.type, self.span, self.let = name, type, span, let


class Variable(_Named):
    """A template variable's current value."""

    __slots__ = ()
    op: ClassVar[str] = "var"


class InputValue(_Named):
    """An input's value; `name` is its identifier (`input_<uuid>`)."""

    __slots__ = ()
    op: ClassVar[str] = "input"


class ProductField(_Named):
    """A product field (`car.plate`); `name` is the field."""

    __slots__ = ()
    op: ClassVar[str] = "product"


class ConsumerField(_Named):
    """A consumer field; `name` is the field."""

    __slots__ = ()
    op: ClassVar[str] = "consumer"


class ImageValue(_Named):
    """The record of one template image; `name` is its identifier (`image_<uuid>`)."""

    __slots__ = ()
    op: ClassVar[str] = "image"


class CheckValue(_Named):
    """A global validation's current `valid`; `name` is the check's id."""

    __slots__ = ()
    op: ClassVar[str] = "check"


class EventSubject(_Named):
    """The rule's event subject: `name` is `image`, `validation`, `damage` or `value`."""

    __slots__ = ()
    op: ClassVar[str] = "event"


class Local(_Named):
    """The item bound by `count`/`any`/`all`/`sum`."""

    __slots__ = ()
    op: ClassVar[str] = "local"


class _Source(Expression):
    """A leaf with no name: a whole list of the inspection, or the event's date."""

    __slots__ = ()
    fields = ("type", "span", "let")

    def __init__(self, type: str, span: Span, *, let: str | None = None) -> None:
        self.type, self.span, self.let = type, span, let


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


class RecordField(Expression):
    """`of.name`: a field of an image, validation or damage record."""

    __slots__ = ("name", "of")
    fields = ("of", "name", "type", "span", "let")
    children = ("of",)
    op: ClassVar[str] = "field"
    of: Expression
    name: str

    def __init__(
        self, of: Expression, name: str, type: str, span: Span, *, let: str | None = None
    ) -> None:
        self.of, self.name, self.type, self.span, self.let = of, name, type, span, let


class Unary(Expression):
    """`not operand` or `-operand`."""

    __slots__ = ("operand", "operator")
    fields = ("operator", "operand", "type", "span", "let")
    children = ("operand",)
    op: ClassVar[str] = "unary"
    operator: str
    operand: Expression

    def __init__(
        self, operator: str, operand: Expression, type: str, span: Span, *, let: str | None = None
    ) -> None:
        self.operator, self.operand, self.type, self.span, self.let = (
            operator,
            operand,
            type,
            span,
            let,
        )


class Binary(Expression):
    """`left operator right`: `+ - * / = != < <= > >= and or in`."""

    __slots__ = ("left", "operator", "right")
    fields = ("operator", "left", "right", "type", "span", "let")
    children = ("left", "right")
    op: ClassVar[str] = "binary"
    operator: str
    left: Expression
    right: Expression

    def __init__(
        self,
        operator: str,
        left: Expression,
        right: Expression,
        type: str,
        span: Span,
        *,
        let: str | None = None,
    ) -> None:
        self.operator, self.left, self.right = operator, left, right
        self.type, self.span, self.let = type, span, let


class Conditional(Expression):
    """`if condition then then else otherwise`: `then` when the condition is true, `otherwise`
    when it is false or missing; only the chosen side is evaluated."""

    __slots__ = ("condition", "otherwise", "then")
    fields = ("condition", "then", "otherwise", "type", "span", "let")
    children = ("condition", "then", "otherwise")
    op: ClassVar[str] = "conditional"
    condition: Expression
    then: Expression
    otherwise: Expression

    def __init__(
        self,
        condition: Expression,
        then: Expression,
        otherwise: Expression,
        type: str,
        span: Span,
        *,
        let: str | None = None,
    ) -> None:
        self.condition, self.then, self.otherwise = condition, then, otherwise
        self.type, self.span, self.let = type, span, let


class Call(Expression):
    """A library function call (`fn` in JSON)."""

    __slots__ = ("args", "function")
    fields = ("function", "args", "type", "span", "let")
    children = ("args",)
    op: ClassVar[str] = "call"
    function: str
    args: tuple[Expression, ...]

    def __init__(
        self,
        function: str,
        args: tuple[Expression, ...],
        type: str,
        span: Span,
        *,
        let: str | None = None,
    ) -> None:
        self.function, self.args, self.type, self.span, self.let = function, args, type, span, let


class Quantifier(Expression):
    """A quantifier over a list (its kind is its class, one per JSON op). `variable` names the
    bound item (None only for a plain `count(L)` or `sum(L)`); `body` is the `where` condition
    (count, any, all) or the summed `value` (sum), None when absent."""

    __slots__ = ("body", "over", "variable")
    fields = ("variable", "over", "body", "type", "span", "let")
    children = ("over", "body")
    variable: str | None
    over: Expression
    body: Expression | None

    def __init__(
        self,
        variable: str | None,
        over: Expression,
        body: Expression | None,
        type: str,
        span: Span,
        *,
        let: str | None = None,
    ) -> None:
        self.variable, self.over, self.body = variable, over, body
        self.type, self.span, self.let = type, span, let


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


class SumOf(Quantifier):
    """`sum(L)`, `sum(x in L of E)`."""

    __slots__ = ()
    op: ClassVar[str] = "sum"


# -- lists (issue 25, construct 6) ------------------------------------------------------------


class FilterOf(Quantifier):
    """`filter(x in L where C)`: the items that hold C, in order (a list of L's type)."""

    __slots__ = ()
    op: ClassVar[str] = "filter"


class MapOf(Quantifier):
    """`map(x in L of E)`: E for each item, in order; a missing E is left out (a list of E's
    type: number or text)."""

    __slots__ = ()
    op: ClassVar[str] = "map"


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

    __slots__ = ("span",)
    span: Span


class SetStatement(Statement):
    """`set name to value`."""

    __slots__ = ("name", "value")
    fields = ("name", "value", "span")
    children = ("value",)
    op: ClassVar[str] = "set"
    name: str
    value: Expression

    def __init__(self, name: str, value: Expression, span: Span) -> None:
        self.name, self.value, self.span = name, value, span


class IfStatement(Statement):
    """`if condition` with its two branches (`otherwise` is empty when there is no `else`; an
    `else if` is an `if` alone in `otherwise`)."""

    __slots__ = ("condition", "otherwise", "then")
    fields = ("condition", "then", "otherwise", "span")
    children = ("condition", "then", "otherwise")
    op: ClassVar[str] = "if"
    condition: Expression
    then: tuple[Statement, ...]
    otherwise: tuple[Statement, ...]

    def __init__(
        self,
        condition: Expression,
        then: tuple[Statement, ...],
        otherwise: tuple[Statement, ...],
        span: Span,
    ) -> None:
        self.condition, self.then, self.otherwise, self.span = condition, then, otherwise, span


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
# The JSON form (docs/design/ir.md)
# --------------------------------------------------------------------------------------------

#: An IR node as JSON: an object with an `op` key.
JsonNode = dict[str, Any]


class _JsonWriter(NodeVisitor):
    """Typed nodes -> the manifest's JSON, keys in the order docs/design/ir.md shows them (the
    order is part of `logic.revision`'s content hash).

    Every node of a manifest's logic passes here (about 2,000 in a large template, issue 26):
    `visit` takes no extra arguments and each expression's common keys (`type`, `span`, `let`)
    are written in its own method, one call per node."""

    walker = "JSON writer"

    def visit(self, node: Any, *args: Any) -> Any:
        method = self._methods.get(node.__class__)
        if method is None or args:
            return super().visit(node, *args)
        return method(self, node)

    def expression(self, node: Expression, body: JsonNode) -> JsonNode:
        body["type"] = node.type
        body["span"] = list(node.span)
        if node.let is not None:
            body["let"] = node.let
        return body

    def visit_Literal(self, node: Literal) -> JsonNode:
        body = {"op": "literal", "value": node.value, "type": node.type, "span": list(node.span)}
        if node.let is not None:
            body["let"] = node.let
        return body

    def visit_ListLiteral(self, node: ListLiteral) -> JsonNode:
        return self.expression(node, {"op": "list", "items": [self.visit(i) for i in node.items]})

    def named(self, node: _Named, key: str) -> JsonNode:
        body = {"op": node.op, key: node.name, "type": node.type, "span": list(node.span)}
        if node.let is not None:
            body["let"] = node.let
        return body

    def visit_Variable(self, node: Variable) -> JsonNode:
        return self.named(node, "name")

    def visit_Local(self, node: Local) -> JsonNode:
        return self.named(node, "name")

    def visit_InputValue(self, node: InputValue) -> JsonNode:
        return self.named(node, "id")

    def visit_ImageValue(self, node: ImageValue) -> JsonNode:
        return self.named(node, "id")

    def visit_CheckValue(self, node: CheckValue) -> JsonNode:
        return self.named(node, "id")

    def visit_ProductField(self, node: ProductField) -> JsonNode:
        return self.named(node, "field")

    def visit_ConsumerField(self, node: ConsumerField) -> JsonNode:
        return self.named(node, "field")

    def visit_EventSubject(self, node: EventSubject) -> JsonNode:
        return self.named(node, "field")

    def source(self, node: _Source) -> JsonNode:
        return self.expression(node, {"op": node.op})

    visit_Images = visit_Damages = visit_Validations = visit_Now = source

    def visit_RecordField(self, node: RecordField) -> JsonNode:
        body = {
            "op": "field",
            "of": self.visit(node.of),
            "name": node.name,
            "type": node.type,
            "span": list(node.span),
        }
        if node.let is not None:
            body["let"] = node.let
        return body

    def visit_Unary(self, node: Unary) -> JsonNode:
        body = {
            "op": "unary",
            "operator": node.operator,
            "operand": self.visit(node.operand),
            "type": node.type,
            "span": list(node.span),
        }
        if node.let is not None:
            body["let"] = node.let
        return body

    def visit_Binary(self, node: Binary) -> JsonNode:
        body = {
            "op": "binary",
            "operator": node.operator,
            "left": self.visit(node.left),
            "right": self.visit(node.right),
            "type": node.type,
            "span": list(node.span),
        }
        if node.let is not None:
            body["let"] = node.let
        return body

    def visit_Conditional(self, node: Conditional) -> JsonNode:
        return self.expression(
            node,
            {
                "op": "conditional",
                "cond": self.visit(node.condition),
                "then": self.visit(node.then),
                "else": self.visit(node.otherwise),
            },
        )

    def visit_Call(self, node: Call) -> JsonNode:
        args = [self.visit(arg) for arg in node.args]
        return self.expression(node, {"op": "call", "fn": node.function, "args": args})

    def quantifier(self, node: Quantifier) -> JsonNode:
        body = None if node.body is None else self.visit(node.body)
        key = "value" if node.op in VALUE_QUANTIFIERS else "where"
        return self.expression(
            node, {"op": node.op, "var": node.variable, "over": self.visit(node.over), key: body}
        )

    visit_CountOf = visit_AnyOf = visit_AllOf = visit_SumOf = quantifier
    visit_FilterOf = visit_MapOf = quantifier

    def visit_SetStatement(self, node: SetStatement) -> JsonNode:
        return {
            "op": "set",
            "name": node.name,
            "value": self.visit(node.value),
            "span": list(node.span),
        }

    def visit_IfStatement(self, node: IfStatement) -> JsonNode:
        return {
            "op": "if",
            "cond": self.visit(node.condition),
            "then": [self.visit(s) for s in node.then],
            "else": [self.visit(s) for s in node.otherwise],
            "span": list(node.span),
        }


_WRITER = _JsonWriter()


def to_json(node: Node) -> JsonNode:
    """The JSON form of a node (docs/design/ir.md)."""
    result: JsonNode = _WRITER.visit(node)
    return result


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


def _text(value: Any, message: str, where: str) -> str:
    if not isinstance(value, str):
        raise MalformedIR(message.format(value), where)
    return value


class Decoder:
    """Reads the JSON form back into nodes, checking its structure only: known ops, fields of
    the right JSON kind, spans of four integers, and the vocabulary's limits on depth, list
    length and node count (so nothing after it recurses past them). Names and types are for
    the reader to check (the runtime's verifier). One decoder counts the nodes of one logic."""

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
        read = _EXPRESSIONS.get(op) if isinstance(op, str) else None
        if read is None:
            raise MalformedIR(f"unknown expression op {op!r}", where)
        type_ = node.get("type")
        if type_ is not None and not isinstance(type_, str):
            raise MalformedIR(f"unknown type {type_!r}", where)
        let = node.get("let")
        result: Expression = read(self, node, where, depth + 1)
        result.type, result.span = type_ or "", read_span(node, where)
        result.let = let if isinstance(let, str) else None
        return result

    def optional(self, node: Any, where: str, depth: int) -> Expression | None:
        return None if node is None else self.expression(node, where, depth)

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
            read = _STATEMENTS.get(op) if isinstance(op, str) else None
            if read is None:
                raise MalformedIR(f"unknown statement op {op!r}", here)
            result.append(read(self, node, here, depth))
        return tuple(result)

    # -- one reader per statement op, as for expressions (`_STATEMENTS`) ------------------------

    def set_statement(self, node: JsonNode, where: str, depth: int) -> Statement:
        name = _text(node.get("name"), "invalid name {!r}", where)
        value = self.expression(node.get("value"), f"{where}.value", depth)
        return SetStatement(name, value, read_span(node, where))

    def if_statement(self, node: JsonNode, where: str, depth: int) -> Statement:
        condition = self.expression(node.get("cond"), f"{where}.cond", depth)
        then = self.statements(node.get("then"), f"{where}.then", depth + 1)
        otherwise = self.statements(node.get("else") or [], f"{where}.else", depth + 1)
        return IfStatement(condition, then, otherwise, read_span(node, where))

    # -- one reader per op: the node with its fields; type, span and let are set after ---------

    def literal(self, node: JsonNode, where: str, depth: int) -> Expression:
        return Literal(node.get("value"), "", NO_SPAN)

    def list_literal(self, node: JsonNode, where: str, depth: int) -> Expression:
        items = node.get("items")
        if not isinstance(items, list) or len(items) > MAX_LIST_ITEMS:
            raise MalformedIR(f"a list needs at most {MAX_LIST_ITEMS} items", where)
        return ListLiteral(
            tuple(
                self.expression(item, f"{where}.items[{i}]", depth) for i, item in enumerate(items)
            ),
            "",
            NO_SPAN,
        )

    def field(self, node: JsonNode, where: str, depth: int) -> Expression:
        of = self.expression(node.get("of"), f"{where}.of", depth)
        return RecordField(of, _text(node.get("name"), "invalid name {!r}", where), "", NO_SPAN)

    def unary(self, node: JsonNode, where: str, depth: int) -> Expression:
        operator = _text(node.get("operator"), "unknown operator {!r}", where)
        return Unary(
            operator, self.expression(node.get("operand"), f"{where}.operand", depth), "", NO_SPAN
        )

    def binary(self, node: JsonNode, where: str, depth: int) -> Expression:
        operator = _text(node.get("operator"), "unknown operator {!r}", where)
        left = self.expression(node.get("left"), f"{where}.left", depth)
        right = self.expression(node.get("right"), f"{where}.right", depth)
        return Binary(operator, left, right, "", NO_SPAN)

    def conditional(self, node: JsonNode, where: str, depth: int) -> Expression:
        return Conditional(
            self.expression(node.get("cond"), f"{where}.cond", depth),
            self.expression(node.get("then"), f"{where}.then", depth),
            self.expression(node.get("else"), f"{where}.else", depth),
            "",
            NO_SPAN,
        )

    def call(self, node: JsonNode, where: str, depth: int) -> Expression:
        function = _text(node.get("fn"), "no function {!r}", where)
        args = node.get("args")
        if not isinstance(args, list):
            raise MalformedIR("call arguments must be a list", where)
        return Call(
            function,
            tuple(self.expression(arg, f"{where}.args[{i}]", depth) for i, arg in enumerate(args)),
            "",
            NO_SPAN,
        )

    def quantifier(self, node: JsonNode, where: str, depth: int) -> Expression:
        kind = QUANTIFIERS[str(node["op"])]
        variable = node.get("var")
        if variable is not None:
            _text(variable, "invalid name {!r}", where)
        over = self.expression(node.get("over"), f"{where}.over", depth)
        key = "value" if kind.op in VALUE_QUANTIFIERS else "where"
        body = self.optional(node.get(key), f"{where}.{key}", depth)
        return kind(variable, over, body, "", NO_SPAN)


def _named(kind: type[_Named], key: str, message: str) -> Any:
    def read(decoder: Decoder, node: JsonNode, where: str, depth: int) -> Expression:
        return kind(_text(node.get(key), message, where), "", NO_SPAN)

    return read


def _source(kind: type[_Source]) -> Any:
    def read(decoder: Decoder, node: JsonNode, where: str, depth: int) -> Expression:
        return kind("", NO_SPAN)

    return read


_EXPRESSIONS: dict[str, Any] = {
    "literal": Decoder.literal,
    "list": Decoder.list_literal,
    "var": _named(Variable, "name", "invalid name {!r}"),
    "local": _named(Local, "name", "invalid name {!r}"),
    "input": _named(InputValue, "id", "invalid identifier {!r}"),
    "image": _named(ImageValue, "id", "invalid identifier {!r}"),
    "check": _named(CheckValue, "id", "invalid identifier {!r}"),
    "product": _named(ProductField, "field", "unknown product field {!r}"),
    "consumer": _named(ConsumerField, "field", "unknown consumer field {!r}"),
    "event": _named(EventSubject, "field", "unknown event subject {!r}"),
    "images": _source(Images),
    "damages": _source(Damages),
    "validations": _source(Validations),
    "now": _source(Now),
    "field": Decoder.field,
    "unary": Decoder.unary,
    "binary": Decoder.binary,
    "call": Decoder.call,
    "conditional": Decoder.conditional,
    **dict.fromkeys(QUANTIFIERS, Decoder.quantifier),
}

#: The statement readers by op, as `_EXPRESSIONS` for expressions.
_STATEMENTS: dict[str, Callable[[Decoder, JsonNode, str, int], Statement]] = {
    SetStatement.op: Decoder.set_statement,
    IfStatement.op: Decoder.if_statement,
}


def from_json(node: Any, where: str = "expression") -> Expression:
    """One JSON expression as a node (structure checked; raises `MalformedIR`)."""
    return Decoder().expression(node, where)
