"""Comparisons of select/multiselect inputs with literal texts: the text must be an option key.

`inputs.use = "Commercial"` used to compile and never match (the value was the label, a key was
expected by the author, or the other way round). Expressions see a choice input's value as its
option key; a literal compared with it that is a label is refused with the key to write, and one
that is neither a key nor a label is refused with the closest key (E040).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspectlang import ast
from inspectlang.diagnostics import did_you_mean
from inspectlang.expression_types import InputRef, Scope
from inspectlang.manifest import IRNode

Report = Callable[..., Any]


def choice_input(scope: Scope, node: IRNode) -> tuple[str, InputRef] | None:
    """The (name, input) a checked node reads, when it is a select/multiselect input."""
    if node.get("op") == "event" and node.get("field") == "value" and scope.value_input:
        ref = scope.inputs[scope.value_input]
        return (scope.value_input, ref) if ref.options else None
    if node.get("op") != "input":
        return None
    for name, ref in scope.inputs.items():
        if ref.identifier == node.get("id") and ref.options:
            return name, ref
    return None


def check_literal(report: Report, name: str, ref: InputRef, literal: ast.Expr) -> None:
    """Refuse a text literal that is not an option key of `ref` (E040)."""
    if not isinstance(literal, ast.Literal) or not isinstance(literal.value, str):
        return
    text = literal.value
    if text in ref.options:
        return
    keys = list(ref.options)
    label_of = [key for key, label in ref.options.items() if label == text]
    if label_of:
        report(
            "E040",
            f'"{text}" is the label of option `{label_of[0]}` of `inputs.{name}`: '
            "expressions compare option keys",
            literal.span,
            suggestion=f'"{label_of[0]}"',
        )
        return
    folded = {label.casefold(): key for key, label in ref.options.items()}
    close = folded.get(text.casefold()) or did_you_mean(text, keys)
    report(
        "E040",
        f'"{text}" is not an option of `inputs.{name}` (its keys: {", ".join(keys)})',
        literal.span,
        suggestion=None if close is None else f'"{close}"',
    )


def check_comparison(
    report: Report, scope: Scope, expr: ast.Binary, left: IRNode, right: IRNode
) -> None:
    """`=`/`!=` between a choice input and a text; `in` of a text in a multiselect or of a
    select in a list of texts."""
    op = expr.operator
    if op in ("=", "!="):
        for node, other in ((left, expr.right), (right, expr.left)):
            found = choice_input(scope, node)
            if found is not None:
                # a multiselect compared with a list literal: every item is a key
                for item in other.items if isinstance(other, ast.ListExpr) else (other,):
                    check_literal(report, *found, item)
    elif op == "in":
        found = choice_input(scope, right)
        if found is not None:
            check_literal(report, *found, expr.left)
        found = choice_input(scope, left)
        if found is not None and isinstance(expr.right, ast.ListExpr):
            for item in expr.right.items:
                check_literal(report, *found, item)


def check_call(report: Report, scope: Scope, expr: ast.Call, args: list[IRNode]) -> None:
    """`contains(inputs.multi, "key")`."""
    if expr.function == "contains" and len(args) == 2:
        found = choice_input(scope, args[0])
        if found is not None:
            check_literal(report, *found, expr.arguments[1])
