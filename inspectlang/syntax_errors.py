"""Syntax errors in plain words: a Lark error -> a Diagnostic with position, expected words,
a "did you mean" and hints for common mistakes. Split from `inspectlang.parser`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from inspectlang.ast import Span
from inspectlang.diagnostics import Diagnostic, did_you_mean

#: Plain words for the terminals an error message may list as expected.
_TERMINAL_WORDS = {
    "NAME": "a name",
    "KEY": "a property (`key: value`)",
    "TEXT": 'a text in quotes ("...")',
    "NUMBER": "a number",
    "SIZE": "a size (`800 x 600`)",
    "_NL": "the end of the line",
    "_INDENT": "an indented block",
    "_DEDENT": "the end of the block",
    "$END": "the end of the file",
}


def _describe_terminal(name: str, literals: Mapping[str, str]) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    literal = literals.get(name)
    return f"`{literal}`" if literal is not None else name.lower()


def _describe_token(token: Token) -> str:
    words = {"_NL": "end of line", "_DEDENT": "end of block", "$END": "end of file"}
    return words.get(token.type, f"`{token.value}`")


def _diagnostic_for(
    error: UnexpectedInput,
    filename: str,
    lines: Sequence[str],
    text: str,
    offset: int,
    literals: Mapping[str, str],
) -> Diagnostic:
    """A Lark syntax error in plain words, with its position. `text` starts at line
    `offset + 1`; the lexer's own errors carry lines within `text`, not yet shifted.
    `literals` maps the grammar's terminal names to the words they stand for (the parser's
    `terminal_literals`)."""
    line, column = max(error.line, 1), max(error.column, 1)
    if isinstance(error, UnexpectedCharacters):
        line += offset
        text = lines[line - 1] if line <= len(lines) else ""
        char = text[column - 1] if column <= len(text) else error.char
        if char == '"':
            end = len(text) + 1
            return Diagnostic(
                "E003",
                'unterminated text: close it with `"` on the same line',
                Span(line, column, line, max(end, column + 1)),
                filename,
            )
        notes: tuple[str, ...] = (_CHARACTER_HINTS[char],) if char in _CHARACTER_HINTS else ()
        span = Span(line, column, line, column + 1)
        return Diagnostic("E001", f"unexpected character `{char}`", span, filename, notes=notes)
    assert isinstance(error, UnexpectedToken)
    token = error.token
    if token.type not in ("_INDENT", "_DEDENT", "$END"):  # a token read from `text`
        line = offset + text.count("\n", 0, token.start_pos) + 1
    span = Span(line, column, line, column + 1)
    if token.type != "_NL" and "\n" not in token.value and token.value:
        span = Span(line, column, line, column + len(token.value))
    if token.type == "_INDENT":
        return Diagnostic("E002", "unexpected indentation", span, filename)
    expected = sorted(
        {_describe_terminal(name, literals) for name in (error.accepts or error.expected)}
    )
    if expected == [_TERMINAL_WORDS["_INDENT"]]:
        return Diagnostic(
            "E002", "expected an indented block (indent it by 4 spaces)", span, filename
        )
    message = f"unexpected {_describe_token(token)}; expected " + (
        expected[0] if len(expected) == 1 else "one of: " + ", ".join(expected)
    )
    keywords = [
        word
        for name in (error.accepts or error.expected)
        if (word := literals.get(name, "")).isalpha()
    ]
    suggestion = did_you_mean(str(token.value), keywords) if token.type == "NAME" else None
    before = text[token.start_pos - 1] if token.start_pos else ""
    notes = _token_hints(token, set(error.accepts or error.expected), before)
    return Diagnostic("E001", message, span, filename, suggestion=suggestion, notes=notes)


#: A hint for characters people bring from other languages.
_CHARACTER_HINTS = {
    "&": "write `and` instead of `&&`",
    "|": "write `or` instead of `||`",
    "!": "write `not x` to negate, and `!=` for different",
    "'": 'texts are written in double quotes: "like this"',
    ";": "no `;` is needed: one statement per line",
    "{": "blocks are made by indentation, not braces",
}


def _token_hints(token: Token, expected: set[str], before: str) -> tuple[str, ...]:
    """A hint for the mistakes a template author makes most: a property without `:`, a `:`
    after a block header, `==`."""
    if token.type in ("NUMBER", "TEXT", "SIZE", "LSQB") and expected <= {"NAME", "_NL"}:
        return ("a property needs `:` between its name and its value (`maximum: 5`)",)
    if token.type == "COLON" and "_NL" in expected:
        return ("no `:` after a block header: the indented lines below make the block",)
    if token.type == "EQ" and before == "=":
        return ("`=` already compares: there is no `==`",)
    return ()
