"""Reading declaration property values: words, texts, constant numbers, spans, normalized
keys; shared by the checker and the decompiler."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from inspectlang import ast


def first_given(*values: str | None, default: str) -> str:
    """The first value that was given (an empty text counts as given), else `default`."""
    return next((value for value in values if value is not None), default)


@lru_cache(maxsize=1024)
def norm(words: str) -> str:
    """Property keys and event words compare lowercased with single spaces (kept per text: a
    template repeats a few, 1,091 reads of 24 texts in the compile benchmark's)."""
    return " ".join(words.replace("_", " ").lower().split())


def span_of(node: Any) -> ast.Span:
    for attribute in ("key_span", "name_span"):
        span = getattr(node, attribute, None)
        if isinstance(span, ast.Span) and span.line:
            return span
    span = getattr(node, "span", None)
    return span if isinstance(span, ast.Span) else ast.NO_SPAN


def word(value: ast.PropertyValue) -> str | None:
    """A bare word (`car`, `en_US`, `create`) written as a name or a text."""
    if isinstance(value, ast.Name):
        return value.name
    if isinstance(value, ast.Literal) and isinstance(value.value, str):
        return value.value
    return None


def text(value: ast.PropertyValue) -> str | None:
    if isinstance(value, ast.Literal) and isinstance(value.value, str):
        return value.value
    return None


def number(value: ast.PropertyValue | None) -> int | float | None:
    """A constant number: a literal, possibly negated."""
    if isinstance(value, ast.Literal):
        literal = value.value
        if isinstance(literal, int | float) and not isinstance(literal, bool):
            return literal
    if isinstance(value, ast.Unary) and value.operator == "-":
        inner = number(value.operand)
        return None if inner is None else -inner
    return None
