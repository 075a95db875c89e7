"""The reference evaluation path: the same normalized IR walked node by node, with a trace.

Each leaf operation (arithmetic, comparison, `not`, unary minus, membership) is handed to
simpleeval with its operands as names, so the reference path never runs an operator the
sandbox would refuse. Missing values, three-valued `and`/`or`, limits and rule errors follow
docs/design/ir.md exactly as the compiled path does; every evaluated node is appended to the
trace as `{op, span, value}` for the explanation.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

from simpleeval import SimpleEval

from inspectlang import ir
from inspectlang.vocabulary import ARITHMETIC_OPERATORS, EQUALITY_OPERATORS
from inspectlang.vocabulary import MAX_TEXT_LENGTH as MAX_TEXT
from runtime.cost import body_cost, static_cost
from runtime.errors import StepLimitExceeded
from runtime.statements import semantics_of
from runtime.values import (
    FUNCTIONS,
    MAX_STEPS,
    check_number,
    check_text,
    division_by_zero,
    too_long,
    typed,
)

Env = dict[str, Any]
#: A verdict reason: its text, or (text, text-typed node) when it shows values.
Reason = str | tuple[str, ir.Expression]
Trace = list[dict[str, Any]]

_LEAF_SOURCES: dict[str, str] = {
    "+": "left + right",
    "-": "left - right",
    "*": "left * right",
    "/": "left / right",
    "=": "left == right",
    "!=": "left != right",
    "<": "left < right",
    "<=": "left <= right",
    ">": "left > right",
    ">=": "left >= right",
    "in": "left in right",
    "not": "not operand",
    "-unary": "-operand",
}
#: Each leaf operation parsed once; simpleeval evaluates it with the operands as its names.
_LEAVES: dict[str, ast.expr] = {
    key: ast.parse(source, mode="eval").body for key, source in _LEAF_SOURCES.items()
}


class ReferenceEvaluator(ir.NodeVisitor):
    """Walks normalized IR over the inspection data (one `visit_` method per node kind, each
    taking the node and the inspection data); optionally records a trace."""

    walker = "reference evaluator"

    def __init__(self, trace: Trace | None = None) -> None:
        self.trace = trace
        self.sandbox = SimpleEval(functions={}, names={})
        self.locals: dict[str, Any] = {}

    def leaf(self, key: str, **names: Any) -> Any:
        self.sandbox.names = names
        return self.sandbox.eval("", previously_parsed=_LEAVES[key])

    def charge(self, env: Env, cost: int) -> None:
        env["steps"] += cost
        if env["steps"] > MAX_STEPS:
            raise StepLimitExceeded()

    # -- expressions ----------------------------------------------------------------------------

    def evaluate(self, node: ir.Expression, env: Env) -> Any:
        value = self.visit(node, env)
        if self.trace is not None:
            self.trace.append({"op": node.op, "span": list(node.span), "value": value})
        return value

    def visit_Literal(self, node: ir.Literal, env: Env) -> Any:
        return node.value

    def visit_ListLiteral(self, node: ir.ListLiteral, env: Env) -> Any:
        return [self.evaluate(item, env) for item in node.items]

    def visit_Variable(self, node: ir.Variable, env: Env) -> Any:
        return env["vars"][node.name]

    def visit_InputValue(self, node: ir.InputValue, env: Env) -> Any:
        return env["inputs"].get(node.name)

    def visit_ProductField(self, node: ir.ProductField, env: Env) -> Any:
        return env["product"].get(node.name)

    def visit_ConsumerField(self, node: ir.ConsumerField, env: Env) -> Any:
        return env["consumer"].get(node.name)

    def visit_ImageValue(self, node: ir.ImageValue, env: Env) -> Any:
        return env["images"][node.name]

    def visit_Images(self, node: ir.Images, env: Env) -> Any:
        return env["image_list"]

    def visit_Damages(self, node: ir.Damages, env: Env) -> Any:
        return env["damages"]

    def visit_Validations(self, node: ir.Validations, env: Env) -> Any:
        return env["validations"]

    def visit_CheckValue(self, node: ir.CheckValue, env: Env) -> Any:
        return env["checks"][node.name]

    def visit_EventSubject(self, node: ir.EventSubject, env: Env) -> Any:
        value = env["event"].get(node.name)
        return typed(value, node.type) if node.name == "value" else value

    def visit_Local(self, node: ir.Local, env: Env) -> Any:
        return self.locals[node.name]

    def visit_Now(self, node: ir.Now, env: Env) -> Any:
        return env["now"]

    def visit_RecordField(self, node: ir.RecordField, env: Env) -> Any:
        record_value = self.evaluate(node.value, env)
        return None if record_value is None else record_value.get(node.name)

    def visit_Unary(self, node: ir.Unary, env: Env) -> Any:
        operand = self.evaluate(node.operand, env)
        if operand is None:
            return None
        return self.leaf("not" if node.operator == "not" else "-unary", operand=operand)

    def visit_Binary(self, node: ir.Binary, env: Env) -> Any:
        operator = node.operator
        left = self.evaluate(node.left, env)
        if operator == "and":
            if left is False:
                return False
            right = self.evaluate(node.right, env)
            if left is True:
                return right
            return False if right is False else None
        if operator == "or":
            if left is True:
                return True
            right = self.evaluate(node.right, env)
            if left is False:
                return right
            return True if right is True else None
        right = self.evaluate(node.right, env)
        if operator in EQUALITY_OPERATORS:
            return self.leaf(operator, left=left, right=right)
        if left is None or right is None:
            return None
        span = node.span
        if operator == "/" and right == 0:
            return division_by_zero(env["errors"], span)
        if node.type == "text" and len(left) + len(right) > MAX_TEXT:
            return too_long(env["errors"], span)
        value = self.leaf(operator, left=left, right=right)
        if operator in ARITHMETIC_OPERATORS:
            if node.type == "text":
                return check_text(env["errors"], span, value)
            return check_number(env["errors"], span, value)
        return value

    def visit_Conditional(self, node: ir.Conditional, env: Env) -> Any:
        # missing counts as false, as in every condition; only the chosen side is evaluated
        chosen = node.then if self.evaluate(node.condition, env) is True else node.otherwise
        return self.evaluate(chosen, env)

    def visit_Call(self, node: ir.Call, env: Env) -> Any:
        if node.function == "today":
            return env["now"]
        args = [self.evaluate(arg, env) for arg in node.arguments]
        return FUNCTIONS[node.function](env["errors"], node.span, *args)

    def items(self, node: ir.Quantifier, env: Env) -> list[Any] | None:
        items = self.evaluate(node.collection, env)
        if items is None:
            return None
        self.charge(env, len(items) * body_cost(node))
        return [item for item in items if item is not None]

    def body(self, node: ir.Quantifier, env: Env, item: Any) -> Any:
        """The body's value for one item (the item itself for `sum(L)`, true for `count(L)`)."""
        if node.body is None:
            return item if isinstance(node, ir.SumOf) else True
        saved = dict(self.locals)
        if node.variable is not None:
            self.locals[node.variable] = item
        try:
            return self.evaluate(node.body, env)
        finally:
            self.locals = saved

    def visit_CountOf(self, node: ir.CountOf, env: Env) -> Any:
        items = self.items(node, env)
        if items is None:
            return None
        return sum(1 for item in items if self.body(node, env, item) is True)

    def visit_AnyOf(self, node: ir.AnyOf, env: Env) -> Any:
        items = self.items(node, env)
        if items is None:
            return None
        return any(self.body(node, env, item) is True for item in items)

    def visit_AllOf(self, node: ir.AllOf, env: Env) -> Any:
        items = self.items(node, env)
        if items is None:
            return None
        return all(self.body(node, env, item) is True for item in items)

    def visit_SumOf(self, node: ir.SumOf, env: Env) -> Any:
        items = self.items(node, env)
        if items is None:
            return None
        total: Any = 0
        for item in items:
            value = self.body(node, env, item)
            if value is not None:
                total += value
        return check_number(env["errors"], node.span, total)

    def visit_FilterOf(self, node: ir.FilterOf, env: Env) -> Any:
        items = self.items(node, env)
        if items is None:
            return None
        return [item for item in items if self.body(node, env, item) is True]

    def visit_MapOf(self, node: ir.MapOf, env: Env) -> Any:
        items = self.items(node, env)
        if items is None:
            return None
        values = (self.body(node, env, item) for item in items)
        return [value for value in values if value is not None]

    # -- statements and roots ----------------------------------------------------------------

    def condition(self, node: ir.Expression, env: Env) -> Any:
        self.charge(env, static_cost(node))
        return self.evaluate(node, env)

    def expression(self, node: ir.Expression, env: Env) -> Any:
        return self.condition(node, env)

    def statements(self, nodes: Sequence[ir.Statement], env: Env) -> None:
        """Each statement run by its class of `runtime.statements`."""
        for node in nodes:
            semantics_of(node, self.walker).run(self, node, env)

    def verdict(
        self,
        disapprovals: list[tuple[Reason, ir.Expression]],
        approve_when: ir.Expression | None,
        otherwise: Reason,
        env: Env,
    ) -> tuple[bool, list[str]]:
        reasons = [
            self.reason(reason, env)
            for reason, when in disapprovals
            if self.condition(when, env) is True
        ]
        if reasons:
            return False, reasons
        if approve_when is not None and self.condition(approve_when, env) is not True:
            return False, [self.reason(otherwise, env)]
        return True, []

    def reason(self, reason: Reason, env: Env) -> str:
        """A reason's text: with values, the node's text (the written text when missing)."""
        if isinstance(reason, str):
            return reason
        text, node = reason
        value = self.condition(node, env)
        return text if value is None else str(value)
