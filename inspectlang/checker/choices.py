"""Comparisons of select/multiselect inputs with literal texts: the text must be an option key.

Expressions see a choice input's value as its option key; a literal compared with it that is a
label is refused with the key to write, and one that is neither a key nor a label is refused with
the closest key (E040).
"""

from __future__ import annotations

from collections.abc import Sequence

from inspectlang import ast, ir
from inspectlang.checker.scope import InputRef, Scope
from inspectlang.diagnostics import Reporter, did_you_mean


def choice_input(scope: Scope, node: ir.Expression) -> tuple[str, InputRef] | None:
    """The (name, input) a checked node reads, when it is a select/multiselect input."""
    if isinstance(node, ir.EventSubject) and node.name == "value" and scope.value_input:
        ref = scope.inputs[scope.value_input]
        return (scope.value_input, ref) if ref.options else None
    if not isinstance(node, ir.InputValue):
        return None
    for name, ref in scope.inputs.items():
        if ref.identifier == node.name and ref.options:
            return name, ref
    return None


def check_literal(reporter: Reporter, name: str, ref: InputRef, literal: ast.Expr) -> None:
    """Refuse a text literal that is not an option key of `ref` (E040)."""
    if not isinstance(literal, ast.Literal) or not isinstance(literal.value, str):
        return
    text = literal.value
    if text in ref.options:
        return
    keys = list(ref.options)
    label_of = [key for key, label in ref.options.items() if label == text]
    if label_of:
        reporter.report(
            "E040",
            f'"{text}" is the label of option `{label_of[0]}` of `inputs.{name}`: '
            "expressions compare option keys",
            literal.span,
            suggestion=f'"{label_of[0]}"',
        )
        return
    folded = {label.casefold(): key for key, label in ref.options.items()}
    close = folded.get(text.casefold()) or did_you_mean(text, keys)
    reporter.report(
        "E040",
        f'"{text}" is not an option of `inputs.{name}` (its keys: {", ".join(keys)})',
        literal.span,
        suggestion=None if close is None else f'"{close}"',
    )


def check_comparison(
    reporter: Reporter, scope: Scope, expr: ast.Binary, left: ir.Expression, right: ir.Expression
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
                    check_literal(reporter, *found, item)
    elif op == "in":
        found = choice_input(scope, right)
        if found is not None:
            check_literal(reporter, *found, expr.left)
        found = choice_input(scope, left)
        if found is not None and isinstance(expr.right, ast.ListExpr):
            for item in expr.right.items:
                check_literal(reporter, *found, item)


def check_call(
    reporter: Reporter, scope: Scope, expr: ast.Call, args: Sequence[ir.Expression]
) -> None:
    """`contains(inputs.multi, "key")`."""
    if expr.function == "contains" and len(args) == 2:
        found = choice_input(scope, args[0])
        if found is not None:
            check_literal(reporter, *found, expr.arguments[1])
