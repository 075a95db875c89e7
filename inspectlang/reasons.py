"""Reasons with values: `disapprove "Mileage {inputs.km} km is over the limit" when ...`.

A reason's text may hold expressions in braces; `{{` and `}}` write a brace. This module reads a
reason's pieces and places each value's expression at its position in the file (`values_in`,
for the language server); the checker's verdict stage checks them (`inspectlang.checker.verdict`).
"""

from __future__ import annotations

import itertools

from inspectlang import ast

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


def column_of(reason: str, index: int, span: ast.Span) -> int:
    """The source column of `reason[index]`: after the opening quote, counting the escapes
    `\\"` and `\\n` as the two characters they are written with."""
    return Columns(reason, span)(index)


class Columns:
    """`column_of` for every index of one reason, each in constant time (the escapes before
    each character counted once): a reason with many values stays linear."""

    def __init__(self, reason: str, span: ast.Span) -> None:
        self.start = span.column + 1
        self.escapes = [0, *itertools.accumulate(char in '"\n' for char in reason)]

    def __call__(self, index: int) -> int:
        return self.start + index + self.escapes[index]


def values_in(reason: str, span: ast.Span, filename: str) -> list[ast.Expr]:
    """The expressions of a reason's `{...}` values that parse, placed at their position in the
    file (for the language server's hover, definitions and renames); none without braces."""
    if "{" not in reason:
        return []
    from inspectlang.parser import parse_expression_at

    found: list[ast.Expr] = []
    column_of = Columns(reason, span)
    for piece in split(reason)[0]:
        if isinstance(piece, tuple) and piece[0].strip():
            source, index = piece
            expr, _problems = parse_expression_at(source, span.line, column_of(index), filename)
            if expr is not None:
                found.append(expr)
    return found
