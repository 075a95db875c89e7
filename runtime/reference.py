"""The reference evaluation path: the same normalized IR walked node by node, with a trace.

Each leaf operation (arithmetic, comparison, `not`, unary minus, membership) is handed to
simpleeval with its operands as names, so the reference path never runs an operator the
sandbox would refuse. Missing values, three-valued `and`/`or`, limits and rule errors follow
docs/design/ir.md exactly as the compiled path does; every evaluated node is appended to the
trace as `{op, span, value}` for the explanation.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any, cast

from simpleeval import SimpleEval

from inspectlang.ir import IfStatement, SetStatement, Statement, UnknownNode
from inspectlang.vocabulary import (
    MAX_TEXT_LENGTH as MAX_TEXT,
)
from runtime.errors import StepLimitExceeded
from runtime.values import (
    FUNCTIONS,
    MAX_STEPS,
    Span,
    check_number,
    check_text,
    division_by_zero,
    record,
    too_long,
    typed,
)
from runtime.verify import body_cost, static_cost

Node = dict[str, Any]
Env = dict[str, Any]
#: A verdict reason: its text, or (text, text-typed node) when it shows values.
Reason = str | tuple[str, Node]
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


class ReferenceEvaluator:
    """Walks normalized IR over the inspection data; optionally records a trace."""

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

    def evaluate(self, node: Node, env: Env) -> Any:
        value = self._evaluate(node, env)
        if self.trace is not None:
            self.trace.append({"op": node["op"], "span": node["span"], "value": value})
        return value

    def _evaluate(self, node: Node, env: Env) -> Any:
        op = node["op"]
        handler: Callable[[Node, Env], Any] | None = getattr(self, f"op_{op}", None)
        if handler is None:
            raise UnknownNode(node, "reference evaluator")
        return handler(node, env)

    def op_literal(self, node: Node, env: Env) -> Any:
        return node["value"]

    def op_list(self, node: Node, env: Env) -> Any:
        return [self.evaluate(item, env) for item in node["items"]]

    def op_var(self, node: Node, env: Env) -> Any:
        return env["vars"][node["name"]]

    def op_input(self, node: Node, env: Env) -> Any:
        return env["inputs"].get(node["id"])

    def op_product(self, node: Node, env: Env) -> Any:
        return env["product"].get(node["field"])

    def op_consumer(self, node: Node, env: Env) -> Any:
        return env["consumer"].get(node["field"])

    def op_image(self, node: Node, env: Env) -> Any:
        return env["images"][node["id"]]

    def op_images(self, node: Node, env: Env) -> Any:
        return env["image_list"]

    def op_damages(self, node: Node, env: Env) -> Any:
        return env["damages"]

    def op_validations(self, node: Node, env: Env) -> Any:
        return env["validations"]

    def op_check(self, node: Node, env: Env) -> Any:
        return env["checks"][node["id"]]

    def op_event(self, node: Node, env: Env) -> Any:
        value = env["event"].get(node["field"])
        return typed(value, node["type"]) if node["field"] == "value" else value

    def op_local(self, node: Node, env: Env) -> Any:
        return self.locals[node["name"]]

    def op_now(self, node: Node, env: Env) -> Any:
        return env["now"]

    def op_field(self, node: Node, env: Env) -> Any:
        record_value = self.evaluate(node["of"], env)
        return None if record_value is None else record_value.get(node["name"])

    def op_unary(self, node: Node, env: Env) -> Any:
        operand = self.evaluate(node["operand"], env)
        if operand is None:
            return None
        return self.leaf("not" if node["operator"] == "not" else "-unary", operand=operand)

    def op_binary(self, node: Node, env: Env) -> Any:
        operator = node["operator"]
        left = self.evaluate(node["left"], env)
        if operator == "and":
            if left is False:
                return False
            right = self.evaluate(node["right"], env)
            if left is True:
                return right
            return False if right is False else None
        if operator == "or":
            if left is True:
                return True
            right = self.evaluate(node["right"], env)
            if left is False:
                return right
            return True if right is True else None
        right = self.evaluate(node["right"], env)
        if operator in ("=", "!="):
            return self.leaf(operator, left=left, right=right)
        if left is None or right is None:
            return None
        span = tuple(node["span"])
        if operator == "/" and right == 0:
            return division_by_zero(env["errors"], span)
        if node["type"] == "text" and len(left) + len(right) > MAX_TEXT:
            return too_long(env["errors"], span)
        value = self.leaf(operator, left=left, right=right)
        if operator in ("+", "-", "*", "/"):
            if node["type"] == "text":
                return check_text(env["errors"], span, value)
            return check_number(env["errors"], span, value)
        return value

    def op_call(self, node: Node, env: Env) -> Any:
        if node["fn"] == "today":
            return env["now"]
        args = [self.evaluate(arg, env) for arg in node["args"]]
        return FUNCTIONS[node["fn"]](env["errors"], tuple(node["span"]), *args)

    def _items(self, node: Node, env: Env) -> list[Any] | None:
        items = self.evaluate(node["over"], env)
        if items is None:
            return None
        self.charge(env, len(items) * body_cost(node))
        return [item for item in items if item is not None]

    def _body(self, node: Node, env: Env, item: Any, key: str) -> Any:
        body = node.get(key)
        if body is None:
            return item if key == "value" else True
        saved = dict(self.locals)
        if node.get("var") is not None:
            self.locals[node["var"]] = item
        try:
            return self.evaluate(body, env)
        finally:
            self.locals = saved

    def op_count(self, node: Node, env: Env) -> Any:
        items = self._items(node, env)
        if items is None:
            return None
        return sum(1 for item in items if self._body(node, env, item, "where") is True)

    def op_any(self, node: Node, env: Env) -> Any:
        items = self._items(node, env)
        if items is None:
            return None
        return any(self._body(node, env, item, "where") is True for item in items)

    def op_all(self, node: Node, env: Env) -> Any:
        items = self._items(node, env)
        if items is None:
            return None
        return all(self._body(node, env, item, "where") is True for item in items)

    def op_sum(self, node: Node, env: Env) -> Any:
        items = self._items(node, env)
        if items is None:
            return None
        total: Any = 0
        for item in items:
            value = self._body(node, env, item, "value")
            if value is not None:
                total += value
        return check_number(env["errors"], tuple(node["span"]), total)

    # -- statements and roots ----------------------------------------------------------------

    def condition(self, node: Node, env: Env) -> Any:
        self.charge(env, static_cost(node))
        return self.evaluate(node, env)

    def expression(self, node: Node, env: Env) -> Any:
        return self.condition(node, env)

    def statements(self, nodes: Sequence[Statement], env: Env) -> None:
        for node in nodes:
            if isinstance(node, SetStatement):
                self.charge(env, 1 + static_cost(node.value))
                value = self.evaluate(node.value, env)
                if value is None:
                    record(env["errors"], "missing_value", cast(Span, tuple(node.span)))
                else:
                    env["vars"][node.name] = value
                if self.trace is not None:
                    self.trace.append(
                        {"op": "set", "span": node.span, "value": value, "name": node.name}
                    )
            elif isinstance(node, IfStatement):
                self.charge(env, 1 + static_cost(node.condition))
                cond = self.evaluate(node.condition, env)
                self.statements(node.then if cond is True else node.otherwise, env)
            else:
                raise UnknownNode(node, "reference evaluator")

    def verdict(
        self,
        disapprovals: list[tuple[Reason, Node]],
        approve_when: Node | None,
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
