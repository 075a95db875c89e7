"""Verify the logic IR of a manifest before anything is compiled from it.

The runtime trusts nothing in the manifest. Its JSON is read into typed nodes by
`inspectlang.ir.Decoder` (known ops, fields of the right kind, spans of four integers, depth,
list and node limits); the verifier then walks those nodes and checks that every name is a
declared variable, input, image, check, field or bound item, that literals are finite numbers,
booleans or texts within the limits, and that every operator gets operands of the types it
accepts. It returns *normalized* nodes, each with its verified `type` and no `let` mark, so the
code generator and the reference evaluator never see anything the verifier did not approve.
Anything else raises `InvalidProgram` naming the place in the IR.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from inspectlang import ir
from inspectlang.manifest import Template
from inspectlang.patterns import MAX_PATTERN, compiled_pattern
from inspectlang.vocabulary import (
    ARITHMETIC_OPERATORS,
    BINARY_OPERATORS,
    CONSUMER_FIELDS,
    EQUALITY_OPERATORS,
    EQUALITY_TYPES,
    FUNCTIONS,
    INPUT_VALUE_TYPES,
    MAX_NUMBER,
    MAX_QUANTIFIER_DEPTH,
    MAX_TEXT_LENGTH,
    NAME,
    ORDER_OPERATORS,
    PRODUCT_FIELDS,
    RECORD_FIELDS,
    SIGNATURES,
    accepts,
)
from runtime.errors import InvalidProgram
from runtime.statements import semantics_of
from runtime.values import parse_date

#: Ids of inputs, images and checks: letters, digits, `_` and `-` only.
REFERENCE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")

SCALAR_TYPES = ("number", "text", "boolean", "date")
RECORD_TYPES = ("image", "validation", "damage")
ALL_TYPES = (
    *SCALAR_TYPES,
    *RECORD_TYPES,
    *(f"list<{t}>" for t in ("number", "text", "image", "validation", "damage")),
)
EVENT_FIELDS: dict[str, str] = {"image": "image", "validation": "validation", "damage": "damage"}


@dataclass
class Scope:
    """What names mean where a node stands."""

    variables: dict[str, str]
    inputs: dict[str, str]
    product: dict[str, str]
    images: frozenset[str]
    checks: frozenset[str]
    #: The type of the event subject `value` for the rule being verified (None: any scalar).
    value_type: str | None = None
    locals: dict[str, str] = field(default_factory=dict)


class Verifier(ir.NodeVisitor):
    """Checks and normalizes IR nodes against one manifest's declarations. Each `visit_` method
    takes (node, scope, where, quantifier nesting) and returns the normalized node."""

    walker = "verifier"

    def __init__(self, manifest: Template) -> None:
        self.decoder = ir.Decoder()
        variables: dict[str, str] = {}
        for index, variable in enumerate(manifest.variables):
            where = f"variables[{index}]"
            self.identifier(variable.name, where)
            expected = "number" if variable.type == "numeric" else "text"
            value = variable.initialValue
            if expected == "number" and not _is_number(value):
                raise InvalidProgram("a numeric variable needs a number initialValue", where)
            if expected == "text" and not isinstance(value, str):
                raise InvalidProgram("a text variable needs a text initialValue", where)
            variables[variable.name] = expected
        inputs: dict[str, str] = {}
        for index, spec in enumerate(manifest.inputs):
            self.reference(spec.identifier, f"inputs[{index}]")
            inputs[spec.identifier] = INPUT_VALUE_TYPES[spec.type]
        for index, image in enumerate(manifest.images):
            self.reference(image.identifier, f"images[{index}]")
        self.base = Scope(
            variables=variables,
            inputs=inputs,
            product={
                **PRODUCT_FIELDS.get(manifest.inspectionType, {}),
                **{
                    f"{manifest.inspectionType}.{name}": kind
                    for name, kind in PRODUCT_FIELDS.get(manifest.inspectionType, {}).items()
                },
            },
            images=frozenset(image.identifier for image in manifest.images),
            checks=frozenset(),
        )

    # -- names --------------------------------------------------------------------------------

    def identifier(self, name: Any, where: str) -> str:
        if not isinstance(name, str) or NAME.fullmatch(name) is None:
            raise InvalidProgram(f"invalid name {name!r}", where)
        return name

    def reference(self, name: Any, where: str) -> str:
        if not isinstance(name, str) or REFERENCE_ID.fullmatch(name) is None:
            raise InvalidProgram(f"invalid identifier {name!r}", where)
        return name

    def span(self, node: dict[str, Any], where: str) -> list[int]:
        """The `span` of a JSON object of the logic (a rule's, a check's), checked."""
        try:
            return list(ir.read_span(node, where))
        except ir.MalformedIR as error:
            raise InvalidProgram(error.message, error.where) from None

    # -- entry points: JSON in, verified nodes out ----------------------------------------------

    def expression(self, node: Any, scope: Scope, where: str) -> ir.Expression:
        """The JSON expression `node`, decoded and verified."""
        try:
            decoded = self.decoder.expression(node, where)
        except ir.MalformedIR as error:
            raise InvalidProgram(error.message, error.where) from None
        return self.verify(decoded, scope, where, 0)

    def condition(self, node: Any, scope: Scope, where: str) -> ir.Expression:
        result = self.expression(node, scope, where)
        if result.type != "boolean":
            raise InvalidProgram("a condition must be boolean", where)
        return result

    def statements(self, nodes: Any, scope: Scope, where: str) -> tuple[ir.Statement, ...]:
        """The JSON statements `nodes`, decoded and verified."""
        try:
            decoded = self.decoder.statements(nodes, where)
        except ir.MalformedIR as error:
            raise InvalidProgram(error.message, error.where) from None
        return self.verify_statements(decoded, scope, where)

    # -- statements ---------------------------------------------------------------------------

    def verify_statements(
        self, nodes: tuple[ir.Statement, ...], scope: Scope, where: str
    ) -> tuple[ir.Statement, ...]:
        """Each statement verified by its class of `runtime.statements`."""
        return tuple(
            semantics_of(node, self.walker).verify(self, node, scope, f"{where}[{index}]")
            for index, node in enumerate(nodes)
        )

    # -- expressions --------------------------------------------------------------------------

    def verify(self, node: ir.Expression, scope: Scope, where: str, loops: int) -> ir.Expression:
        """The normalized node with its verified `type`; refuses anything not whitelisted."""
        declared = node.type
        if declared and declared not in ALL_TYPES:
            raise InvalidProgram(f"unknown type {declared!r}", where)
        result: ir.Expression = self.visit(node, scope, where, loops)
        if declared and declared != result.type:
            raise InvalidProgram(
                f"declared type {declared!r} but the node gives {result.type!r}", where
            )
        return result

    def visit_Literal(self, node: ir.Literal, scope: Scope, where: str, q: int) -> ir.Expression:
        value = node.value
        if isinstance(value, bool):
            kind = "boolean"
        elif _is_number(value):
            if not math.isfinite(value) or abs(value) > MAX_NUMBER:
                raise InvalidProgram("a number literal out of range", where)
            kind = "number"
        elif isinstance(value, str):
            if len(value) > MAX_TEXT_LENGTH:
                raise InvalidProgram(f"a text literal longer than {MAX_TEXT_LENGTH}", where)
            kind = "text"
            if node.type == "date":
                if parse_date(value) is None:
                    raise InvalidProgram(f"invalid date literal {value!r}", where)
                kind = "date"
        else:
            raise InvalidProgram(f"invalid literal {value!r}", where)
        return ir.Literal(value, kind, node.span)

    def visit_ListLiteral(
        self, node: ir.ListLiteral, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        items = tuple(
            self.verify(item, scope, f"{where}.items[{i}]", q) for i, item in enumerate(node.items)
        )
        item_types = {item.type for item in items}
        if len(item_types) > 1:
            raise InvalidProgram("list items of different types", where)
        if item_types:
            kind = f"list<{item_types.pop()}>"
        elif node.type.startswith("list<"):
            kind = node.type
        else:
            raise InvalidProgram("an empty list needs a list type", where)
        if kind not in ALL_TYPES:
            raise InvalidProgram(f"no lists of {kind}", where)
        return ir.ListLiteral(items, kind, node.span)

    def visit_Variable(self, node: ir.Variable, scope: Scope, where: str, q: int) -> ir.Expression:
        name = self.identifier(node.name, where)
        if name not in scope.variables:
            raise InvalidProgram(f"unknown variable {name!r}", where)
        return ir.Variable(name, scope.variables[name], node.span)

    def visit_InputValue(
        self, node: ir.InputValue, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        ident = self.reference(node.name, where)
        if ident not in scope.inputs:
            raise InvalidProgram(f"unknown input {ident!r}", where)
        return ir.InputValue(ident, scope.inputs[ident], node.span)

    def visit_ProductField(
        self, node: ir.ProductField, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        if node.name not in scope.product:
            raise InvalidProgram(f"unknown product field {node.name!r}", where)
        return ir.ProductField(node.name.rsplit(".", 1)[-1], scope.product[node.name], node.span)

    def visit_ConsumerField(
        self, node: ir.ConsumerField, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        if node.name not in CONSUMER_FIELDS:
            raise InvalidProgram(f"unknown consumer field {node.name!r}", where)
        return ir.ConsumerField(node.name, CONSUMER_FIELDS[node.name], node.span)

    def visit_ImageValue(
        self, node: ir.ImageValue, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        ident = self.reference(node.name, where)
        if ident not in scope.images:
            raise InvalidProgram(f"unknown image {ident!r}", where)
        return ir.ImageValue(ident, "image", node.span)

    def visit_Images(self, node: ir.Images, scope: Scope, where: str, q: int) -> ir.Expression:
        return ir.Images("list<image>", node.span)

    def visit_Damages(self, node: ir.Damages, scope: Scope, where: str, q: int) -> ir.Expression:
        return ir.Damages("list<damage>", node.span)

    def visit_Validations(
        self, node: ir.Validations, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        return ir.Validations("list<validation>", node.span)

    def visit_Now(self, node: ir.Now, scope: Scope, where: str, q: int) -> ir.Expression:
        return ir.Now("date", node.span)

    def visit_CheckValue(
        self, node: ir.CheckValue, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        ident = self.reference(node.name, where)
        if ident not in scope.checks:
            raise InvalidProgram(f"unknown or later check {ident!r}", where)
        return ir.CheckValue(ident, "boolean", node.span)

    def visit_EventSubject(
        self, node: ir.EventSubject, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        name = node.name
        if name in EVENT_FIELDS:
            kind = EVENT_FIELDS[name]
        elif name == "value":
            kind = scope.value_type or node.type
            if kind not in (*SCALAR_TYPES, "list<text>"):
                raise InvalidProgram("the event value needs a scalar type", where)
        else:
            raise InvalidProgram(f"unknown event subject {name!r}", where)
        return ir.EventSubject(name, kind, node.span)

    def visit_Local(self, node: ir.Local, scope: Scope, where: str, q: int) -> ir.Expression:
        name = self.identifier(node.name, where)
        if name not in scope.locals:
            raise InvalidProgram(f"unbound name {name!r}", where)
        return ir.Local(name, scope.locals[name], node.span)

    def visit_RecordField(
        self, node: ir.RecordField, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        record = self.verify(node.value, scope, f"{where}.of", q)
        name = self.identifier(node.name, where)
        fields = RECORD_FIELDS.get(record.type)
        if fields is None or name not in fields:
            raise InvalidProgram(f"no field {name!r} on {record.type}", where)
        return ir.RecordField(record, name, fields[name], node.span)

    def visit_Unary(self, node: ir.Unary, scope: Scope, where: str, q: int) -> ir.Expression:
        operand = self.verify(node.operand, scope, f"{where}.operand", q)
        operator = node.operator
        if operator == "not" and operand.type == "boolean":
            kind = "boolean"
        elif operator == "-" and operand.type == "number":
            kind = "number"
        else:
            raise InvalidProgram(f"unary {operator!r} on {operand.type}", where)
        return ir.Unary(operator, operand, kind, node.span)

    def visit_Binary(self, node: ir.Binary, scope: Scope, where: str, q: int) -> ir.Expression:
        operator = node.operator
        if operator not in BINARY_OPERATORS:
            raise InvalidProgram(f"unknown operator {operator!r}", where)
        left = self.verify(node.left, scope, f"{where}.left", q)
        right = self.verify(node.right, scope, f"{where}.right", q)
        kind = _binary_type(operator, left.type, right.type)
        if kind is None:
            raise InvalidProgram(f"operator {operator!r} on {left.type} and {right.type}", where)
        return ir.Binary(operator, left, right, kind, node.span)

    def visit_Conditional(
        self, node: ir.Conditional, scope: Scope, where: str, q: int
    ) -> ir.Expression:
        condition = self.verify(node.condition, scope, f"{where}.cond", q)
        if condition.type != "boolean":
            raise InvalidProgram(f"the condition of `if` is {condition.type}", where)
        then = self.verify(node.then, scope, f"{where}.then", q)
        otherwise = self.verify(node.otherwise, scope, f"{where}.else", q)
        if then.type != otherwise.type:
            raise InvalidProgram(f"`if` sides of {then.type} and {otherwise.type}", where)
        return ir.Conditional(condition, then, otherwise, then.type, node.span)

    def visit_Call(self, node: ir.Call, scope: Scope, where: str, q: int) -> ir.Expression:
        name = node.function
        args = tuple(
            self.verify(arg, scope, f"{where}.args[{i}]", q) for i, arg in enumerate(node.arguments)
        )
        kinds = [arg.type for arg in args]
        result = _signature(name, kinds)
        if result is None:
            raise InvalidProgram(f"no function {name!r} taking ({', '.join(kinds)})", where)
        pattern = args[1] if name in ("matches", "extract") else None
        # A literal pattern is checked now (the checker's E029); a computed one when it is
        # evaluated: an invalid one gives missing and the rule error `invalid_pattern`.
        if isinstance(pattern, ir.Literal) and (
            len(pattern.value) > MAX_PATTERN or compiled_pattern(pattern.value) is None
        ):
            raise InvalidProgram("invalid or too long matches pattern", where)
        return ir.Call(name, args, result, node.span)

    def quantifier(self, node: ir.Quantifier, scope: Scope, where: str, q: int) -> ir.Expression:
        op = node.op
        if q >= MAX_QUANTIFIER_DEPTH:
            raise InvalidProgram(f"count/any/all/sum nested deeper than {q}", where)
        over = self.verify(node.collection, scope, f"{where}.over", q)
        if not over.type.startswith("list<"):
            raise InvalidProgram(f"{op} over {over.type}", where)
        item_type = over.type[5:-1]
        name = node.variable
        inner = scope
        if name is not None:
            self.identifier(name, where)
            inner = Scope(**{**scope.__dict__, "locals": {**scope.locals, name: item_type}})
        key = "value" if op in ir.VALUE_QUANTIFIERS else "where"
        body: ir.Expression | None = None
        if node.body is None:
            if isinstance(node, ir.SumOf) and item_type != "number":
                raise InvalidProgram("sum without a value needs a list of numbers", where)
            if isinstance(node, ir.FilterOf | ir.MapOf):
                raise InvalidProgram(f"{op} needs a bound name and a {key}", where)
        else:
            if name is None:
                raise InvalidProgram(f"{op} with a condition needs a bound name", where)
            body = self.verify(node.body, inner, f"{where}.{key}", q + 1)
            if isinstance(node, ir.MapOf):
                if body.type not in ("number", "text"):
                    raise InvalidProgram("map value must be number or text", where)
            else:
                wanted = "number" if isinstance(node, ir.SumOf) else "boolean"
                if body.type != wanted:
                    raise InvalidProgram(f"{op} {key} must be {wanted}", where)
        if isinstance(node, ir.FilterOf):
            kind = over.type
        elif isinstance(node, ir.MapOf) and body is not None:
            kind = f"list<{body.type}>"
        else:
            kind = "boolean" if isinstance(node, ir.AnyOf | ir.AllOf) else "number"
        return type(node)(name, over, body, kind, node.span)

    visit_CountOf = visit_AnyOf = visit_AllOf = visit_SumOf = quantifier
    visit_FilterOf = visit_MapOf = quantifier


def _binary_type(operator: str, left: str, right: str) -> str | None:
    """The type of `left operator right` on operands of these verified types, or None."""
    if operator == "+" and left == right and left in ("number", "text"):
        return left
    if operator in ARITHMETIC_OPERATORS and left == right == "number":
        return "number"
    if operator in EQUALITY_OPERATORS and left == right and left in EQUALITY_TYPES:
        return "boolean"
    if operator in ORDER_OPERATORS and left == right and left in ("number", "text", "date"):
        return "boolean"
    if operator in ("and", "or") and left == right == "boolean":
        return "boolean"
    if operator == "in" and right == f"list<{left}>":
        return "boolean"
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _signature(name: Any, kinds: list[str]) -> str | None:
    """The result type of library function `name` on argument types, or None if refused."""
    one = kinds[0] if len(kinds) == 1 else None
    if name in SIGNATURES:
        wanted, result = SIGNATURES[name]
        fits = all(accepts(w, k) for w, k in zip(wanted, kinds, strict=False))
        enough = FUNCTIONS[name][0] <= len(kinds) <= len(wanted)
        return result if fits and enough else None
    if name in ("lower", "upper", "trim"):
        return "text" if kinds == ["text"] else None
    if name == "length":
        return "number" if one is not None and (one == "text" or one.startswith("list<")) else None
    if name in ("starts_with", "ends_with", "matches"):
        return "boolean" if kinds == ["text", "text"] else None
    if name == "contains":
        if len(kinds) == 2 and (kinds == ["text", "text"] or kinds[0] == f"list<{kinds[1]}>"):
            return "boolean"
        return None
    if name == "round":
        return "number" if kinds in (["number"], ["number", "number"]) else None
    if name == "abs":
        return "number" if kinds == ["number"] else None
    if name in ("min", "max"):
        if kinds == ["list<number>"] or (len(kinds) >= 2 and set(kinds) == {"number"}):
            return "number"
        return None
    if name == "defined":
        return "boolean" if len(kinds) == 1 else None
    if name == "date":
        return "date" if kinds in (["text"], ["date"], ["number"] * 3) else None
    if name == "today":
        return "date" if not kinds else None
    if name == "add_days":
        return "date" if kinds == ["date", "number"] else None
    if name in ("days_between", "years_between"):
        return "number" if kinds == ["date", "date"] else None
    return None
