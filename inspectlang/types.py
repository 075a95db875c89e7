"""Expression types and the expression checker: AST expression -> (type, IR node) plus diagnostics.

One pass over each expression resolves names against the declared context (`Scope`), checks the
types of operators and library calls (`FUNCTIONS`), and builds the IR node of `docs/design/ir.md`
at the same time, so the compiler never walks an expression twice. A node that has an error gets
the type `ERROR`, which every operator accepts silently: one mistake gives one diagnostic.

The type tables and `Scope` are in `inspectlang.expression_types`, the property value readers in
`inspectlang.property_values`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspectlang import ast, calls, choices, lets
from inspectlang.diagnostics import Diagnostic, did_you_mean
from inspectlang.expression_types import (
    ANY,
    ARITHMETIC,
    COMPARISONS,
    ERROR,
    EVENT_SUBJECTS,
    Scope,
    compatible,
    describe,
    element_of,
    ir_type,
    is_iso_date,
    list_of,
)
from inspectlang.manifest import CONSUMER_FIELDS, IRNode
from inspectlang.vocabulary import (
    BOOLEAN,
    CHAIN_OPERATORS,
    DAMAGE,
    DATE,
    IMAGE,
    INPUT_VALUE_TYPES,
    MAX_EXPRESSION_DEPTH,
    MAX_LIST_ITEMS,
    MAX_NUMBER,
    MAX_QUANTIFIER_DEPTH,
    MAX_TEXT_LENGTH,
    NAME,
    NUMBER,
    RECORD_FIELDS,
    TEXT,
    VALIDATION,
    chain_depth,
)

Report = Callable[..., None]


class ExpressionChecker:
    """Types expressions in a `Scope` and emits IR; diagnostics go to `report(code, message, span,
    suggestion=None)`."""

    def __init__(self, scope: Scope, diagnostics: list[Diagnostic], filename: str) -> None:
        self.scope = scope
        self.diagnostics = diagnostics
        self.filename = filename
        self.depth = 0
        #: Quantifier bodies the checked expression stands in (each is a loop at run time).
        self.loops = 0

    def error(
        self,
        code: str,
        message: str,
        span: ast.Span,
        suggestion: str | None = None,
        notes: tuple[str, ...] = (),
    ) -> tuple[str, IRNode]:
        self.diagnostics.append(
            Diagnostic(code, message, span, self.filename, suggestion=suggestion, notes=notes)
        )
        return ERROR, {"op": "literal", "value": None, "type": TEXT, "span": span.as_list()}

    def _report(
        self, code: str, message: str, span: ast.Span, suggestion: str | None = None
    ) -> None:
        self.error(code, message, span, suggestion)

    def condition(self, expr: ast.Expr, what: str) -> IRNode:
        """Check an expression used as a condition: it must be boolean."""
        type_, node = self.check(expr)
        if type_ not in (BOOLEAN, ERROR):
            self.error("E023", f"{what} must be a boolean, not {describe(type_)}", expr.span)
        return node

    def check(self, expr: ast.Expr) -> tuple[str, IRNode]:
        self.depth += 1
        try:
            if self.depth > MAX_EXPRESSION_DEPTH:
                return self.error(
                    "E004", f"expression nested deeper than {MAX_EXPRESSION_DEPTH}", expr.span
                )
            method = _DISPATCH.get(type(expr))
            if method is None:
                return self.error("E001", f"not an expression: {type(expr).__name__}", expr.span)
            return method(self, expr)
        finally:
            self.depth -= 1

    # -- leaves ------------------------------------------------------------------------------

    def _literal(self, expr: ast.Literal) -> tuple[str, IRNode]:
        value = expr.value
        if isinstance(value, bool):
            type_ = BOOLEAN
        elif isinstance(value, int | float):
            type_ = NUMBER
            if not abs(value) <= MAX_NUMBER:  # also refuses NaN
                return self.error("E019", f"numbers are limited to {MAX_NUMBER:g}", expr.span)
        else:
            type_ = TEXT
            if len(value) > MAX_TEXT_LENGTH:
                return self.error(
                    "E037", f"text longer than {MAX_TEXT_LENGTH} characters", expr.span
                )
        return type_, {"op": "literal", "value": value, "type": type_, "span": expr.span.as_list()}

    def _listexpr(self, expr: ast.ListExpr) -> tuple[str, IRNode]:
        if len(expr.items) > MAX_LIST_ITEMS:
            return self.error("E037", f"a list has at most {MAX_LIST_ITEMS} items", expr.span)
        element = ANY
        items: list[IRNode] = []
        for item in expr.items:
            type_, node = self.check(item)
            items.append(node)
            if element in (ANY, ERROR):
                element = type_
            elif not compatible(element, type_):
                self.error(
                    "E023",
                    f"list items must have one type: {describe(element)} and {describe(type_)}",
                    item.span,
                )
        type_ = list_of(element)
        return type_, {
            "op": "list",
            "items": items,
            "type": ir_type(type_),
            "span": expr.span.as_list(),
        }

    def _name(self, expr: ast.Name) -> tuple[str, IRNode]:
        name, span, scope = expr.name, expr.span.as_list(), self.scope
        if name in scope.locals:
            type_ = scope.locals[name]
            return type_, {"op": "local", "name": name, "type": ir_type(type_), "span": span}
        if name in EVENT_SUBJECTS:
            subject_type, events = EVENT_SUBJECTS[name]
            if scope.event in events:
                if name == "value":
                    if scope.value_type is None:
                        return self.error(
                            "E036",
                            "`value` needs a specific input: write `on input set NAME`",
                            expr.span,
                        )
                    subject_type = scope.value_type
                return subject_type, {
                    "op": "event",
                    "field": name,
                    "type": ir_type(subject_type),
                    "span": span,
                }
            if name not in scope.variables:
                where = " or ".join(f"`on {e.replace('_', ' ')}`" for e in events)
                return self.error("E036", f"`{name}` exists only inside a rule {where}", expr.span)
        if name in scope.let_sources and name not in scope.variables:
            return lets.use_let(self, expr)
        if name in scope.variables:
            scope.used_variables.add(name)
            type_ = NUMBER if scope.variables[name] == "numeric" else TEXT
            return type_, {"op": "var", "name": name, "type": type_, "span": span}
        if name == "images":
            return list_of(IMAGE), {"op": "images", "type": "list<image>", "span": span}
        if name == "damages":
            return list_of(DAMAGE), {"op": "damages", "type": "list<damage>", "span": span}
        if name == "validations":
            return list_of(VALIDATION), {
                "op": "validations",
                "type": "list<validation>",
                "span": span,
            }
        if name in self._namespaces():
            return self.error("E020", f"`{name}` needs a field: `{name}.NAME`", expr.span)
        return self.error(
            "E020",
            f"unknown name `{name}`",
            expr.span,
            did_you_mean(name, self._known_names()),
        )

    def _namespaces(self) -> set[str]:
        names = {"inputs", "checks", "consumer"}
        if self.scope.product_fields:
            names.update({self.scope.inspection_type, "product"})
        return names

    def _known_names(self) -> list[str]:
        scope = self.scope
        names = [*scope.locals, *scope.variables, "images", "damages", "validations"]
        names.extend(self._namespaces())
        names.extend(n for n, (_, events) in EVENT_SUBJECTS.items() if scope.event in events)
        return names

    # -- member access -----------------------------------------------------------------------

    def _attribute(self, expr: ast.Attribute) -> tuple[str, IRNode]:
        scope, span = self.scope, expr.span.as_list()
        name_span = expr.name_span if expr.name_span.line else expr.span
        base = expr.value
        if isinstance(base, ast.Name) and base.name not in scope.locals:
            namespace = base.name
            if namespace == "inputs":
                ref = scope.inputs.get(expr.name)
                if ref is None:
                    return self.error(
                        "E020",
                        f"unknown input `{expr.name}`",
                        name_span,
                        did_you_mean(expr.name, scope.inputs),
                    )
                type_ = INPUT_VALUE_TYPES.get(ref.input_type, ERROR)
                return type_, {"op": "input", "id": ref.identifier, "type": type_, "span": span}
            if namespace == "images" and not (
                expr.name in RECORD_FIELDS[IMAGE] and expr.name not in scope.images
            ):
                image = scope.images.get(expr.name)
                if image is None:
                    return self.error(
                        "E020",
                        f"unknown image `{expr.name}`",
                        name_span,
                        did_you_mean(expr.name, scope.images),
                    )
                return IMAGE, {"op": "image", "id": image.identifier, "type": IMAGE, "span": span}
            if namespace == "checks":
                check_id = scope.checks.get(expr.name)
                if check_id is None:
                    return self.error(
                        "E020",
                        f"unknown check `{expr.name}`",
                        name_span,
                        did_you_mean(expr.name, scope.checks),
                    )
                scope.used_checks.setdefault(expr.name, expr.span)
                return BOOLEAN, {"op": "check", "id": check_id, "type": BOOLEAN, "span": span}
            if namespace == "consumer":
                return self._field_of_table("consumer", CONSUMER_FIELDS, expr.name, name_span, span)
            if namespace in (scope.inspection_type, "product") and (
                namespace not in scope.variables
            ):
                if not scope.product_fields:
                    return self.error(
                        "E021",
                        f"a {scope.inspection_type} inspection has no product fields",
                        expr.span,
                    )
                return self._field_of_table(
                    "product", scope.product_fields, expr.name, name_span, span
                )
        base_type, base_node = self.check(base)
        if base_type == ERROR:
            return base_type, base_node
        fields = RECORD_FIELDS.get(base_type)
        if fields is None:
            return self.error(
                "E021", f"a {describe(base_type)} has no field `{expr.name}`", name_span
            )
        field_type = fields.get(expr.name)
        if field_type is None and expr.name in scope.unknown_validations:
            return ERROR, {"op": "literal", "value": None, "type": TEXT, "span": span}
        if field_type is None:
            return self.error(
                "E021",
                f"unknown field `{expr.name}` of {base_type}",
                name_span,
                did_you_mean(expr.name, fields),
            )
        if base_node["op"] == "image" and field_type == VALIDATION:
            declared = next(
                (i.validations for i in scope.images.values() if i.identifier == base_node["id"]),
                frozenset(),
            )
            if expr.name not in declared:
                return self.error(
                    "E021",
                    f"the image does not validate `{expr.name}`",
                    name_span,
                    did_you_mean(expr.name, declared),
                )
        return field_type, {
            "op": "field",
            "of": base_node,
            "name": expr.name,
            "type": field_type,
            "span": span,
        }

    def _field_of_table(
        self, op: str, table: dict[str, str], name: str, name_span: ast.Span, span: list[int]
    ) -> tuple[str, IRNode]:
        type_ = table.get(name)
        if type_ is None:
            what = "consumer" if op == "consumer" else self.scope.inspection_type
            return self.error(
                "E021", f"unknown {what} field `{name}`", name_span, did_you_mean(name, table)
            )
        return type_, {"op": op, "field": name, "type": type_, "span": span}

    # -- operators ---------------------------------------------------------------------------

    def _unary(self, expr: ast.Unary) -> tuple[str, IRNode]:
        type_, operand = self.check(expr.operand)
        wanted = BOOLEAN if expr.operator == "not" else NUMBER
        if type_ not in (wanted, ERROR):
            self.error(
                "E023",
                f"`{expr.operator}` needs a {wanted}, not {describe(type_)}",
                expr.operand.span,
            )
        return wanted, {
            "op": "unary",
            "operator": expr.operator,
            "operand": operand,
            "type": wanted,
            "span": expr.span.as_list(),
        }

    def _chain(self, expr: ast.Binary) -> tuple[str, IRNode]:
        """An `and`/`or` chain (both sides, however grouped): its operands are checked one
        level below `chain_depth(operands)` and joined as a balanced tree, so a flat chain of
        64 conditions is as shallow as the parser and the runtime's verifier count it."""
        op = expr.operator
        operands: list[ast.Expr] = []
        pending: list[ast.Expr] = [expr]
        while pending:  # left to right, without recursion: a chain may be long
            node = pending.pop()
            if isinstance(node, ast.Binary) and node.operator == op:
                pending.extend((node.right, node.left))
            else:
                operands.append(node)
        saved = self.depth
        self.depth += chain_depth(len(operands)) - 1
        try:
            checked = [self.check(operand) for operand in operands]
        finally:
            self.depth = saved
        for (type_, _), operand in zip(checked, operands, strict=True):
            if type_ not in (BOOLEAN, ERROR):
                self.error("E023", f"`{op}` needs booleans, not {describe(type_)}", operand.span)
        return BOOLEAN, _balanced(op, [node for _, node in checked], operands)

    def _binary(self, expr: ast.Binary) -> tuple[str, IRNode]:
        op = expr.operator
        if op in CHAIN_OPERATORS:
            return self._chain(expr)
        left_type, left = self.check(expr.left)
        right_type, right = self.check(expr.right)
        result = self._binary_type(expr, left_type, right_type)
        if op in ("=", "!=", "in"):
            choices.check_comparison(self._report, self.scope, expr, left, right)
        if op == "/" and constant_number(expr.right) == 0:
            self.error("E030", "division by zero", expr.right.span)
        return result, {
            "op": "binary",
            "operator": op,
            "left": left,
            "right": right,
            "type": ir_type(result),
            "span": expr.span.as_list(),
        }

    @staticmethod
    def _date_hint(expr: ast.Binary, left: str, right: str) -> tuple[str, ...]:
        """A note when a date meets a text that looks like a date: `date("...")` was meant."""
        for type_, other, side in ((left, right, expr.right), (right, left, expr.left)):
            if (
                type_ == DATE
                and other == TEXT
                and isinstance(side, ast.Literal)
                and isinstance(side.value, str)
                and is_iso_date(side.value)
            ):
                return (f'write `date("{side.value}")` for a date',)
        return ()

    def _binary_type(self, expr: ast.Binary, left: str, right: str) -> str:
        op = expr.operator
        both = f"{describe(left)} and {describe(right)}"
        if op in ("and", "or"):
            for type_, side in ((left, expr.left), (right, expr.right)):
                if type_ not in (BOOLEAN, ERROR):
                    self.error("E023", f"`{op}` needs booleans, not {describe(type_)}", side.span)
            return BOOLEAN
        if op in ("=", "!="):
            if not compatible(left, right):
                self.error(
                    "E023",
                    f"cannot compare {both} with `{op}`",
                    expr.span,
                    notes=self._date_hint(expr, left, right),
                )
            return BOOLEAN
        if op in COMPARISONS:
            if not compatible(left, right) or (
                left not in (NUMBER, DATE, TEXT, ERROR) or right not in (NUMBER, DATE, TEXT, ERROR)
            ):
                self.error(
                    "E023",
                    f"`{op}` compares two numbers, dates or texts, not {both}",
                    expr.span,
                    notes=self._date_hint(expr, left, right),
                )
            return BOOLEAN
        if op == "in":
            element = element_of(right)
            if right != ERROR and element is None:
                self.error(
                    "E023",
                    f"`in` needs a list on its right, not {describe(right)}",
                    expr.right.span,
                )
            elif element is not None and not compatible(left, element):
                self.error(
                    "E023", f"cannot look for a {describe(left)} in a {describe(right)}", expr.span
                )
            return BOOLEAN
        if op == "+":
            if left == ERROR or right == ERROR:
                return right if left == ERROR else left
            if left == right and left in (NUMBER, TEXT):
                return left
            self.error("E023", f"`+` adds two numbers or joins two texts, not {both}", expr.span)
            return ERROR
        if op in ARITHMETIC:
            for type_, side in ((left, expr.left), (right, expr.right)):
                if type_ not in (NUMBER, ERROR):
                    self.error("E023", f"`{op}` needs numbers, not {describe(type_)}", side.span)
            return NUMBER
        self.error("E001", f"unknown operator `{op}`", expr.span)
        return ERROR

    # -- calls and quantifiers ---------------------------------------------------------------

    def _call(self, expr: ast.Call) -> tuple[str, IRNode]:
        return calls.check_call(self, expr)

    def _quantifier(self, expr: ast.Quantifier) -> tuple[str, IRNode]:
        kind = expr.kind
        if self.loops >= MAX_QUANTIFIER_DEPTH:
            return self.error(
                "E004",
                f"more than {MAX_QUANTIFIER_DEPTH} count/any/all/sum nested in each other",
                expr.span,
            )
        collection_type, over = self.check(expr.collection)
        element = element_of(collection_type)
        if collection_type != ERROR and element is None:
            self.error(
                "E023",
                f"`{kind}` needs a list, not {describe(collection_type)}",
                expr.collection.span,
            )
        element = element or ERROR
        if expr.variable is not None and NAME.fullmatch(expr.variable) is None:
            return self.error(
                "E038",
                f"`{expr.variable}` cannot name an item: a name starts with a letter, then "
                "letters, digits or `_`, at most 64 characters",
                expr.span,
            )
        node: IRNode = {"op": kind, "var": expr.variable, "over": over}
        if expr.variable is None and kind in ("any", "all"):
            self.error("E022", f"`{kind}` needs `x in LIST where CONDITION`", expr.span)
        saved = self.scope.locals.get(expr.variable) if expr.variable else None
        if expr.variable is not None:
            self.scope.locals[expr.variable] = element
        self.loops += 1
        try:
            if kind == "sum":
                if expr.value is None:
                    if element not in (NUMBER, ERROR):
                        self.error(
                            "E022",
                            "`sum(LIST)` adds a list of numbers; write `sum(x in LIST of VALUE)`",
                            expr.span,
                        )
                    node["value"] = None
                else:
                    value_type, node["value"] = self.check(expr.value)
                    if value_type not in (NUMBER, ERROR):
                        self.error(
                            "E023",
                            f"`sum` adds numbers, not {describe(value_type)}",
                            expr.value.span,
                        )
            else:
                node["where"] = (
                    self.condition(expr.condition, f"the condition of `{kind}`")
                    if expr.condition is not None
                    else None
                )
        finally:
            self.loops -= 1
            if expr.variable is not None:
                if saved is None:
                    del self.scope.locals[expr.variable]
                else:
                    self.scope.locals[expr.variable] = saved
        result = BOOLEAN if kind in ("any", "all") else NUMBER
        node["type"] = result
        node["span"] = expr.span.as_list()
        return result, node


def _balanced(op: str, nodes: list[IRNode], operands: list[ast.Expr]) -> IRNode:
    """`nodes` joined by `op` as a balanced tree (left half, right half), left to right."""
    if len(nodes) == 1:
        return nodes[0]
    middle = len(nodes) // 2
    span = ast.Span(
        operands[0].span.line,
        operands[0].span.column,
        operands[-1].span.end_line,
        operands[-1].span.end_column,
    )
    return {
        "op": "binary",
        "operator": op,
        "left": _balanced(op, nodes[:middle], operands[:middle]),
        "right": _balanced(op, nodes[middle:], operands[middle:]),
        "type": BOOLEAN,
        "span": span.as_list(),
    }


#: Expression node type -> the ExpressionChecker method that checks it (one dict lookup per node).
_DISPATCH: dict[type, Callable[[ExpressionChecker, Any], tuple[str, IRNode]]] = {
    ast.Literal: ExpressionChecker._literal,
    ast.ListExpr: ExpressionChecker._listexpr,
    ast.Name: ExpressionChecker._name,
    ast.Attribute: ExpressionChecker._attribute,
    ast.Call: ExpressionChecker._call,
    ast.Quantifier: ExpressionChecker._quantifier,
    ast.Unary: ExpressionChecker._unary,
    ast.Binary: ExpressionChecker._binary,
}


def constant_boolean(expr: ast.Expr, depth: int = 0) -> bool | None:
    """The value of a condition that does not depend on the inspection, when it has one
    (None past MAX_EXPRESSION_DEPTH: such expressions are refused anyway)."""
    if depth > MAX_EXPRESSION_DEPTH:
        return None
    if isinstance(expr, ast.Literal) and isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.Unary) and expr.operator == "not":
        inner = constant_boolean(expr.operand, depth + 1)
        return None if inner is None else not inner
    if isinstance(expr, ast.Binary) and expr.operator in ("and", "or"):
        left = constant_boolean(expr.left, depth + 1)
        right = constant_boolean(expr.right, depth + 1)
        if expr.operator == "and":
            if left is False or right is False:
                return False
            return True if left is True and right is True else None
        if left is True or right is True:
            return True
        return False if left is False and right is False else None
    return None


def constant_number(expr: ast.Expr) -> float | None:
    """The value of a number written with literals only (`0`, `-0`, `(1 - 1)`, `2 * 0.5`),
    or None when it depends on anything else."""
    if isinstance(expr, ast.Literal):
        value = expr.value
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    if isinstance(expr, ast.Unary) and expr.operator == "-":
        inner = constant_number(expr.operand)
        return None if inner is None else -inner
    if isinstance(expr, ast.Binary) and expr.operator in ("+", "-", "*"):
        left, right = constant_number(expr.left), constant_number(expr.right)
        if left is None or right is None:
            return None
        if expr.operator == "+":
            return left + right
        return left - right if expr.operator == "-" else left * right
    return None
