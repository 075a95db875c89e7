"""Reasons with values: `disapprove "Mileage {inputs.km} km is over the limit" when ...`.

A reason's text may hold expressions in braces; each is checked like any expression (unknown
names are errors at their position inside the text) and must give a plain value (a number,
text, boolean, date or a list of those, not a record). `{{` and `}}` write a brace. The reason
compiles to a text-typed IR node: the literal pieces and `text(EXPRESSION)` of each value joined
with `+` (a balanced tree, so a long reason stays shallow); a reason without braces needs none.
"""

from __future__ import annotations

from inspectlang import ast
from inspectlang.diagnostics import Diagnostic
from inspectlang.expression_types import ERROR, ExpressionChecking, describe
from inspectlang.manifest import IRNode
from inspectlang.vocabulary import PLAIN_VALUE, TEXT, accepts, chain_depth

#: A literal piece of a reason, or an expression's source and its index in the reason.
Piece = str | tuple[str, int]


def split(reason: str) -> tuple[list[Piece], list[tuple[str, int]]]:
    """The pieces of a reason and its problems (message, index in the reason)."""
    pieces: list[Piece] = []
    problems: list[tuple[str, int]] = []
    literal: list[str] = []
    index, size = 0, len(reason)
    while index < size:
        char = reason[index]
        if char in "{}" and reason.startswith(char * 2, index):
            literal.append(char)
            index += 2
        elif char == "}":
            problems.append(("a `}` alone: write `}}` for a brace in a text", index))
            index += 1
        elif char == "{":
            end, in_text = index + 1, False
            while end < size and (in_text or reason[end] != "}"):
                in_text = in_text != (reason[end] == '"')
                end += 1
            if end >= size:
                problems.append(("a `{` without its `}`: write `{{` for a brace in a text", index))
                break
            if literal:
                pieces.append("".join(literal))
                literal = []
            pieces.append((reason[index + 1 : end], index + 1))
            index = end + 1
        else:
            literal.append(char)
            index += 1
    if literal:
        pieces.append("".join(literal))
    return pieces, problems


def _column(reason: str, index: int, span: ast.Span) -> int:
    """The source column of `reason[index]`: after the opening quote, counting the escapes
    `\\"` and `\\n` as the two characters they are written with."""
    escapes = sum(1 for char in reason[:index] if char in '"\n')
    return span.column + 1 + index + escapes


def values_in(reason: str, span: ast.Span, filename: str) -> list[ast.Expr]:
    """The expressions of a reason's `{...}` values that parse, placed at their position in the
    file (for the language server's hover, definitions and renames); none without braces."""
    if "{" not in reason:
        return []
    from inspectlang.parser import parse_expression_at

    found: list[ast.Expr] = []
    for piece in split(reason)[0]:
        if isinstance(piece, tuple) and piece[0].strip():
            source, index = piece
            expr, _problems = parse_expression_at(
                source, span.line, _column(reason, index, span), filename
            )
            if expr is not None:
                found.append(expr)
    return found


def message(
    expressions: ExpressionChecking, reason: str, span: ast.Span, filename: str
) -> IRNode | None:
    """The text node of a reason with values (None when it has no braces); diagnostics go to
    the expression checker's list."""
    if "{" not in reason and "}" not in reason:
        return None
    # The parser (and lark) is imported only for a reason with braces: the compile path of a
    # cached template never needs it (tests/language/test_cold_start.py).
    from inspectlang.parser import parse_expression_at

    pieces, problems = split(reason)
    report = expressions.diagnostics.append
    where = span.as_list()
    for text, index in problems:
        column = _column(reason, index, span)
        report(
            Diagnostic("E001", text, ast.Span(span.line, column, span.line, column + 1), filename)
        )
    nodes: list[IRNode] = []
    for piece in pieces:
        if isinstance(piece, str):
            nodes.append({"op": "literal", "value": piece, "type": TEXT, "span": where})
            continue
        source, index = piece
        column = _column(reason, index, span)
        if not source.strip():
            report(
                Diagnostic(
                    "E001",
                    "empty `{}` in a text: write `{{}}` for braces",
                    ast.Span(span.line, column - 1, span.line, column + 1),
                    filename,
                )
            )
            continue
        expr, found = parse_expression_at(source, span.line, column, filename)
        expressions.diagnostics.extend(found)
        if expr is None:
            continue
        # Inside the reason's IR each value sits under the joining `+` tree and `text(...)`:
        # checked that much deeper, as the runtime's verifier will count it.
        saved = expressions.depth
        expressions.depth += chain_depth(len(pieces)) + 1
        try:
            type_, node = expressions.check(expr)
        finally:
            expressions.depth = saved
        if type_ != ERROR and not accepts(PLAIN_VALUE, type_):
            expressions.error(
                "E023",
                f"a reason shows a number, text, boolean, date or list, not {describe(type_)}",
                expr.span,
            )
        nodes.append(
            {"op": "call", "fn": "text", "args": [node], "type": TEXT, "span": expr.span.as_list()}
        )
    if not nodes:
        return {"op": "literal", "value": "", "type": TEXT, "span": where}
    return _joined(nodes, where)


def _joined(nodes: list[IRNode], span: list[int]) -> IRNode:
    if len(nodes) == 1:
        return nodes[0]
    middle = len(nodes) // 2
    return {
        "op": "binary",
        "operator": "+",
        "left": _joined(nodes[:middle], span),
        "right": _joined(nodes[middle:], span),
        "type": TEXT,
        "span": span,
    }
