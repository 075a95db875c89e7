"""Verify the logic IR of a manifest before anything is compiled from it.

The runtime trusts nothing in the manifest: every node must use a whitelisted `op`, every name
must be a declared variable, input, image, check, field or bound item, spans must be four
integers, literals must be finite numbers, booleans or texts within the limits, and every
operator must get operands of the types it accepts. The result is a *normalized* copy of the
tree holding only the keys the evaluators read, each node with its verified `type`, so the code
generator and the reference evaluator never see anything the verifier did not approve.
Anything else raises `InvalidProgram` naming the place in the IR.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from inspectlang.ir import IfStatement, SetStatement, Statement
from inspectlang.manifest import Template
from inspectlang.patterns import MAX_PATTERN, compiled_pattern
from inspectlang.vocabulary import (
    CONSUMER_FIELDS,
    FUNCTIONS,
    INPUT_VALUE_TYPES,
    MAX_EXPRESSION_DEPTH,
    MAX_NODES,
    MAX_NUMBER,
    MAX_QUANTIFIER_DEPTH,
    NAME,
    PRODUCT_FIELDS,
    RECORD_FIELDS,
    SIGNATURES,
    accepts,
)
from inspectlang.vocabulary import (
    MAX_LIST_ITEMS as MAX_LIST,
)
from inspectlang.vocabulary import (
    MAX_TEXT_LENGTH as MAX_TEXT,
)
from runtime.errors import InvalidProgram
from runtime.values import parse_date

#: Ids of inputs, images and checks: letters, digits, `_` and `-` only.
REFERENCE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
#: Names of variables, bound items and fields (the checker refuses others: E038).
IDENTIFIER = NAME
MAX_DEPTH = MAX_EXPRESSION_DEPTH

SCALAR_TYPES = ("number", "text", "boolean", "date")
RECORD_TYPES = ("image", "validation", "damage")
ALL_TYPES = (
    *SCALAR_TYPES,
    *RECORD_TYPES,
    *(f"list<{t}>" for t in ("number", "text", "image", "validation", "damage")),
)
INPUT_TYPES = INPUT_VALUE_TYPES
EVENT_FIELDS: dict[str, str] = {"image": "image", "validation": "validation", "damage": "damage"}

ARITHMETIC = ("+", "-", "*", "/")
COMPARISON = ("<", "<=", ">", ">=")
BINARY_OPERATORS = (*ARITHMETIC, *COMPARISON, "=", "!=", "and", "or", "in")

EXPRESSION_OPS = frozenset(
    {
        "literal", "list", "var", "input", "product", "consumer", "image", "images", "damages",
        "validations", "check", "event", "local", "now", "field", "unary", "binary", "call",
        "count", "any", "all", "sum",
    }
)  # fmt: skip
QUANTIFIERS = ("count", "any", "all", "sum")


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


class Verifier:
    """Checks and normalizes IR nodes against one manifest's declarations."""

    def __init__(self, manifest: Template) -> None:
        self.nodes = 0
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
            inputs[spec.identifier] = INPUT_TYPES[spec.type]
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
        if not isinstance(name, str) or IDENTIFIER.fullmatch(name) is None:
            raise InvalidProgram(f"invalid name {name!r}", where)
        return name

    def reference(self, name: Any, where: str) -> str:
        if not isinstance(name, str) or REFERENCE_ID.fullmatch(name) is None:
            raise InvalidProgram(f"invalid identifier {name!r}", where)
        return name

    def span(self, node: dict[str, Any], where: str) -> list[int]:
        span = node.get("span", [0, 0, 0, 0])
        if (
            not isinstance(span, list)
            or len(span) != 4
            or not all(type(part) is int and 0 <= part < 10_000_000 for part in span)
        ):
            raise InvalidProgram(f"invalid span {span!r}", where)
        return list(span)

    # -- expressions --------------------------------------------------------------------------

    def expression(
        self, node: Any, scope: Scope, where: str, depth: int = 0, loops: int = 0
    ) -> dict[str, Any]:
        """The normalized node with its verified `type`; refuses anything not whitelisted."""
        if not isinstance(node, dict):
            raise InvalidProgram("an expression must be an object", where)
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise InvalidProgram(f"more than {MAX_NODES} nodes", where)
        if depth > MAX_DEPTH:
            raise InvalidProgram(f"expressions nested deeper than {MAX_DEPTH}", where)
        op = node.get("op")
        if op not in EXPRESSION_OPS:
            raise InvalidProgram(f"unknown expression op {op!r}", where)
        out: dict[str, Any] = {"op": op, "span": self.span(node, where)}
        declared = node.get("type")
        if declared is not None and declared not in ALL_TYPES:
            raise InvalidProgram(f"unknown type {declared!r}", where)
        sub = depth + 1
        kind: str
        name: Any
        if op == "literal":
            kind = self.literal(node.get("value"), declared, where)
            out["value"] = node.get("value")
        elif op == "list":
            items = node.get("items")
            if not isinstance(items, list) or len(items) > MAX_LIST:
                raise InvalidProgram(f"a list needs at most {MAX_LIST} items", where)
            out["items"] = [
                self.expression(item, scope, f"{where}.items[{i}]", sub, loops)
                for i, item in enumerate(items)
            ]
            item_types = {item["type"] for item in out["items"]}
            if len(item_types) > 1:
                raise InvalidProgram("list items of different types", where)
            if item_types:
                kind = f"list<{item_types.pop()}>"
            elif isinstance(declared, str) and declared.startswith("list<"):
                kind = declared
            else:
                raise InvalidProgram("an empty list needs a list type", where)
            if kind not in ALL_TYPES:
                raise InvalidProgram(f"no lists of {kind}", where)
        elif op == "var":
            name = self.identifier(node.get("name"), where)
            if name not in scope.variables:
                raise InvalidProgram(f"unknown variable {name!r}", where)
            out["name"], kind = name, scope.variables[name]
        elif op == "input":
            ident = self.reference(node.get("id"), where)
            if ident not in scope.inputs:
                raise InvalidProgram(f"unknown input {ident!r}", where)
            out["id"], kind = ident, scope.inputs[ident]
        elif op == "product":
            name = node.get("field")
            if not isinstance(name, str) or name not in scope.product:
                raise InvalidProgram(f"unknown product field {name!r}", where)
            out["field"], kind = name.rsplit(".", 1)[-1], scope.product[name]
        elif op == "consumer":
            name = node.get("field")
            if not isinstance(name, str) or name not in CONSUMER_FIELDS:
                raise InvalidProgram(f"unknown consumer field {name!r}", where)
            out["field"], kind = name, CONSUMER_FIELDS[name]
        elif op == "image":
            ident = self.reference(node.get("id"), where)
            if ident not in scope.images:
                raise InvalidProgram(f"unknown image {ident!r}", where)
            out["id"], kind = ident, "image"
        elif op in ("images", "damages", "validations"):
            kind = {"images": "list<image>", "damages": "list<damage>"}.get(op, "list<validation>")
        elif op == "check":
            ident = self.reference(node.get("id"), where)
            if ident not in scope.checks:
                raise InvalidProgram(f"unknown or later check {ident!r}", where)
            out["id"], kind = ident, "boolean"
        elif op == "event":
            name = node.get("field")
            if name in EVENT_FIELDS:
                kind = EVENT_FIELDS[name]
            elif name == "value":
                kind = scope.value_type or (declared if declared else "")
                if kind not in (*SCALAR_TYPES, "list<text>"):
                    raise InvalidProgram("the event value needs a scalar type", where)
            else:
                raise InvalidProgram(f"unknown event subject {name!r}", where)
            out["field"] = name
        elif op == "local":
            name = self.identifier(node.get("name"), where)
            if name not in scope.locals:
                raise InvalidProgram(f"unbound name {name!r}", where)
            out["name"], kind = name, scope.locals[name]
        elif op == "now":
            kind = "date"
        elif op == "field":
            record = self.expression(node.get("of"), scope, f"{where}.of", sub, loops)
            name = self.identifier(node.get("name"), where)
            fields = RECORD_FIELDS.get(record["type"])
            if fields is None or name not in fields:
                raise InvalidProgram(f"no field {name!r} on {record['type']}", where)
            out["of"], out["name"], kind = record, name, fields[name]
        elif op == "unary":
            kind = self.unary(node, out, scope, where, sub, loops)
        elif op == "binary":
            kind = self.binary(node, out, scope, where, sub, loops)
        elif op == "call":
            kind = self.call(node, out, scope, where, sub, loops)
        else:
            kind = self.quantifier(node, out, scope, where, sub, loops)
        if declared is not None and declared != kind:
            raise InvalidProgram(f"declared type {declared!r} but the node gives {kind!r}", where)
        out["type"] = kind
        return out

    def literal(self, value: Any, declared: Any, where: str) -> str:
        if isinstance(value, bool):
            return "boolean"
        if _is_number(value):
            if not math.isfinite(value) or abs(value) > MAX_NUMBER:
                raise InvalidProgram("a number literal out of range", where)
            return "number"
        if isinstance(value, str):
            if len(value) > MAX_TEXT:
                raise InvalidProgram(f"a text literal longer than {MAX_TEXT}", where)
            if declared == "date":
                if parse_date(value) is None:
                    raise InvalidProgram(f"invalid date literal {value!r}", where)
                return "date"
            return "text"
        raise InvalidProgram(f"invalid literal {value!r}", where)

    def unary(
        self, node: dict[str, Any], out: dict[str, Any], scope: Scope, where: str, d: int, q: int
    ) -> str:
        operator = node.get("operator")
        operand = self.expression(node.get("operand"), scope, f"{where}.operand", d, q)
        out["operator"], out["operand"] = operator, operand
        if operator == "not" and operand["type"] == "boolean":
            return "boolean"
        if operator == "-" and operand["type"] == "number":
            return "number"
        raise InvalidProgram(f"unary {operator!r} on {operand['type']}", where)

    def binary(
        self, node: dict[str, Any], out: dict[str, Any], scope: Scope, where: str, d: int, q: int
    ) -> str:
        operator = node.get("operator")
        if operator not in BINARY_OPERATORS:
            raise InvalidProgram(f"unknown operator {operator!r}", where)
        left = self.expression(node.get("left"), scope, f"{where}.left", d, q)
        right = self.expression(node.get("right"), scope, f"{where}.right", d, q)
        out["operator"], out["left"], out["right"] = operator, left, right
        lt, rt = str(left["type"]), str(right["type"])
        if operator == "+" and lt == rt and lt in ("number", "text"):
            return lt
        if operator in ARITHMETIC and lt == rt == "number":
            return "number"
        if operator in ("=", "!=") and lt == rt and lt in (*SCALAR_TYPES, "list<text>"):
            return "boolean"
        if operator in COMPARISON and lt == rt and lt in ("number", "text", "date"):
            return "boolean"
        if operator in ("and", "or") and lt == rt == "boolean":
            return "boolean"
        if operator == "in" and rt == f"list<{lt}>":
            return "boolean"
        raise InvalidProgram(f"operator {operator!r} on {lt} and {rt}", where)

    def call(
        self, node: dict[str, Any], out: dict[str, Any], scope: Scope, where: str, d: int, q: int
    ) -> str:
        name = node.get("fn")
        raw_args = node.get("args")
        if not isinstance(raw_args, list):
            raise InvalidProgram("call arguments must be a list", where)
        args = [
            self.expression(arg, scope, f"{where}.args[{i}]", d, q)
            for i, arg in enumerate(raw_args)
        ]
        out["fn"], out["args"] = name, args
        kinds = [arg["type"] for arg in args]
        result = _signature(name, kinds)
        if result is None:
            raise InvalidProgram(f"no function {name!r} taking ({', '.join(kinds)})", where)
        if name in ("matches", "extract") and args[1]["op"] == "literal":
            # A literal pattern is checked now (the checker's E029); a computed one when it is
            # evaluated: an invalid one gives missing and the rule error `invalid_pattern`.
            pattern = args[1]["value"]
            if len(pattern) > MAX_PATTERN or compiled_pattern(pattern) is None:
                raise InvalidProgram("invalid or too long matches pattern", where)
        return result

    def quantifier(
        self, node: dict[str, Any], out: dict[str, Any], scope: Scope, where: str, d: int, q: int
    ) -> str:
        op = node["op"]
        if q >= MAX_QUANTIFIER_DEPTH:
            raise InvalidProgram(f"count/any/all/sum nested deeper than {q}", where)
        over = self.expression(node.get("over"), scope, f"{where}.over", d, q)
        if not over["type"].startswith("list<"):
            raise InvalidProgram(f"{op} over {over['type']}", where)
        item_type = over["type"][5:-1]
        name = node.get("var")
        inner = scope
        if name is not None:
            self.identifier(name, where)
            inner = Scope(**{**scope.__dict__, "locals": {**scope.locals, name: item_type}})
        out["op"], out["var"], out["over"] = op, name, over
        key = "value" if op == "sum" else "where"
        body = node.get(key)
        if body is None:
            if op == "sum" and item_type != "number":
                raise InvalidProgram("sum without a value needs a list of numbers", where)
            out[key] = None
        else:
            if name is None:
                raise InvalidProgram(f"{op} with a condition needs a bound name", where)
            out[key] = self.expression(body, inner, f"{where}.{key}", d, q + 1)
            wanted = "number" if op == "sum" else "boolean"
            if out[key]["type"] != wanted:
                raise InvalidProgram(f"{op} {key} must be {wanted}", where)
        return "boolean" if op in ("any", "all") else "number"

    # -- statements ---------------------------------------------------------------------------

    def statements(
        self, nodes: Any, scope: Scope, where: str, depth: int = 0
    ) -> tuple[Statement, ...]:
        """The JSON statements `nodes`, checked, as typed nodes (`inspectlang.ir`)."""
        if not isinstance(nodes, list):
            raise InvalidProgram("statements must be a list", where)
        if depth > MAX_DEPTH:
            raise InvalidProgram(f"statements nested deeper than {MAX_DEPTH}", where)
        result: list[Statement] = []
        for index, node in enumerate(nodes):
            here = f"{where}[{index}]"
            if not isinstance(node, dict):
                raise InvalidProgram("a statement must be an object", here)
            op = node.get("op")
            if op == "set":
                name = self.identifier(node.get("name"), here)
                if name not in scope.variables:
                    raise InvalidProgram(f"set of unknown variable {name!r}", here)
                value = self.expression(node.get("value"), scope, f"{here}.value", depth)
                if value["type"] != scope.variables[name]:
                    raise InvalidProgram(f"set {name} to a {value['type']}", here)
                result.append(SetStatement(name, value, self.span(node, here)))
            elif op == "if":
                cond = self.expression(node.get("cond"), scope, f"{here}.cond", depth)
                if cond["type"] != "boolean":
                    raise InvalidProgram("an if condition must be boolean", here)
                result.append(
                    IfStatement(
                        cond,
                        self.statements(node.get("then"), scope, f"{here}.then", depth + 1),
                        self.statements(node.get("else") or [], scope, f"{here}.else", depth + 1),
                        self.span(node, here),
                    )
                )
            else:
                raise InvalidProgram(f"unknown statement op {op!r}", here)
        return tuple(result)

    def condition(self, node: Any, scope: Scope, where: str) -> dict[str, Any]:
        result = self.expression(node, scope, where)
        if result["type"] != "boolean":
            raise InvalidProgram("a condition must be boolean", where)
        return result


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
        return "date" if kinds in (["text"], ["date"]) else None
    if name == "today":
        return "date" if not kinds else None
    if name == "add_days":
        return "date" if kinds == ["date", "number"] else None
    if name in ("days_between", "years_between"):
        return "number" if kinds == ["date", "date"] else None
    return None


def static_cost(node: dict[str, Any] | None) -> int:
    """Steps charged for evaluating a normalized expression once, not counting quantifier bodies.

    A quantifier's body is charged when the quantifier runs: items x `static_cost(body)`. Both
    evaluation paths charge exactly this, so the step limit trips at the same place on both.
    """
    if node is None:
        return 0
    cost = 1
    op = node["op"]
    if op == "list":
        cost += sum(static_cost(item) for item in node["items"])
    elif op == "field":
        cost += static_cost(node["of"])
    elif op == "unary":
        cost += static_cost(node["operand"])
    elif op == "binary":
        cost += static_cost(node["left"]) + static_cost(node["right"])
    elif op == "call":
        cost += sum(static_cost(arg) for arg in node["args"])
    elif op in QUANTIFIERS:
        cost += static_cost(node["over"])
    return cost


def body_cost(node: dict[str, Any]) -> int:
    """Steps one item of a quantifier costs (its `where` or `value`, at least 1)."""
    body = node.get("value") if node["op"] == "sum" else node.get("where")
    return max(1, static_cost(body))
