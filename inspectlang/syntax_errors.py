"""Syntax errors in plain words: a Lark error -> a Diagnostic with position, expected words,
a "did you mean" and hints for common mistakes."""

from __future__ import annotations

import re
import unicodedata
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


def diagnostic_for(
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
        if not char.isascii():
            return _foreign_character(char, text, column, span, filename)
        return Diagnostic("E001", f"unexpected character `{char}`", span, filename, notes=notes)
    assert isinstance(error, UnexpectedToken)
    token = error.token
    if token.type not in ("_INDENT", "_DEDENT", "$END"):  # a token read from `text`
        line = offset + text.count("\n", 0, token.start_pos) + 1
    span = Span(line, column, line, column + 1)
    if token.type != "_NL" and "\n" not in token.value and token.value:
        span = Span(line, column, line, column + len(token.value))
    source_line = lines[line - 1] if 0 < line <= len(lines) else ""
    known = _known_mistake(source_line, line, token, filename)
    if known is not None:
        return known
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
    if token.value == "then" and "_NL" in expected:
        return (
            "a rule's `if` has its statements on the lines below it; `then` belongs to the "
            "expression `if C then A else B`",
        )
    if "ELSE" in expected and "THEN" not in expected:
        return ("an `if` inside an expression needs both parts: `if C then A else B`",)
    if "THEN" in expected:
        return ("an `if` inside an expression is written `if C then A else B`",)
    if token.type == "EQ" and before == "=":
        return ("`=` already compares: there is no `==`",)
    return ()


#: Characters a word processor puts where the language wants plain ones.
_LOOKALIKES = {
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u00ab": '"',
    "\u00bb": '"',
    "\u2033": '"',
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u2013": "-",
    "\u2014": "-",
    "\u2212": "-",
}
#: Spaces that are not the plain space (U+0020).
_SPACES = {"\u00a0", "\u2007", "\u202f", "\u2009", "\u200a", "\u2002", "\u2003", "\u3000"}
_INVISIBLE = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}


#: Cyrillic and Greek letters drawn like a Latin one (what a keyboard layout switch types into a
#: name): the name with the Latin letter is the one meant. Written as escapes so that this file
#: shows which letter is which: Cyrillic a e o p c y x i j s d q w, A B E K M H O P C T X I J S;
#: Greek o a i v k, A B E Z H I K M N O P T Y X.
_LATIN_TWINS = {
    chr(code): latin
    for codes, latins in (
        (
            (
                0x0430,
                0x0435,
                0x043E,
                0x0440,
                0x0441,
                0x0443,
                0x0445,
                0x0456,
                0x0458,
                0x0455,
                0x0501,
                0x051B,
                0x051D,
            ),
            "aeopcyxijsdqw",
        ),
        (
            (
                0x0410,
                0x0412,
                0x0415,
                0x041A,
                0x041C,
                0x041D,
                0x041E,
                0x0420,
                0x0421,
                0x0422,
                0x0425,
                0x0406,
                0x0408,
                0x0405,
            ),
            "ABEKMHOPCTXIJS",
        ),
        ((0x03BF, 0x03B1, 0x03B9, 0x03BD, 0x03BA), "oaivk"),
        (
            (
                0x0391,
                0x0392,
                0x0395,
                0x0396,
                0x0397,
                0x0399,
                0x039A,
                0x039C,
                0x039D,
                0x039F,
                0x03A1,
                0x03A4,
                0x03A5,
                0x03A7,
            ),
            "ABEZHIKMNOPTYX",
        ),
    )
    for code, latin in zip(codes, latins, strict=True)
}


def _ascii_name(word: str) -> str:
    """`word` in ASCII: a look-alike letter as its Latin twin, accents dropped, the rest out."""
    twins = "".join(_LATIN_TWINS.get(c, c) for c in word)
    return "".join(
        c for c in unicodedata.normalize("NFKD", twins) if c.isascii() and (c.isalnum() or c == "_")
    )


def _foreign_character(char: str, text: str, column: int, span: Span, filename: str) -> Diagnostic:
    """A character outside ASCII, named (it may be invisible) with what to type instead."""
    name = unicodedata.name(char, "unnamed character")
    what = f"`{char}` (U+{ord(char):04X} {name})"
    if char in _SPACES:
        message = f"unexpected non-breaking space (U+{ord(char):04X} {name})"
        note = "pasted from a word processor? type a plain space instead"
        return Diagnostic("E001", message, span, filename, notes=(note,))
    if char in _INVISIBLE:
        message = f"unexpected invisible character (U+{ord(char):04X} {name})"
        return Diagnostic("E001", message, span, filename, notes=("delete it",))
    if char in _LOOKALIKES:
        plain = _LOOKALIKES[char]
        note = (
            f"a word processor turned `{plain}` into {what}: type a plain `{plain}`"
            if plain != '"'
            else 'texts are written in straight double quotes: "like this"'
        )
        return Diagnostic("E001", f"unexpected character {what}", span, filename, notes=(note,))
    if unicodedata.category(char).startswith("L"):
        start = column - 1
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        end = column - 1
        while end < len(text) and (text[end].isalnum() or text[end] == "_"):
            end += 1
        word = text[start:end]
        ascii_word = _ascii_name(word)
        note = "names use ASCII letters, digits and `_` (labels and texts may use any letter)"
        twin = _LATIN_TWINS.get(char)
        looks = f": it looks like the Latin `{twin}` but is not" if twin else ""
        return Diagnostic(
            "E001",
            f"unexpected character {what} in the name `{word}`{looks}",
            span,
            filename,
            suggestion=ascii_word if ascii_word and ascii_word != word else None,
            notes=(note,),
        )
    return Diagnostic("E001", f"unexpected character {what}", span, filename)


#: Keywords followed by a text (a reason), for "did you mean" on a misspelt one.
_TEXT_KEYWORDS = ("disapprove", "review", "otherwise")
#: Compiled by `re` (its own cache) when a syntax error first needs it.
_LOCALE_WRITTEN = r"^\s*[a-z][a-z ]*?\s+(?P<locale>[A-Za-z]{2}[-_][A-Za-z]{2})\s*:"


def _known_mistake(source_line: str, line: int, token: Token, filename: str) -> Diagnostic | None:
    """Mistakes with a better message than "unexpected token": `elif`, a misspelt line keyword
    (`disaprove "..."`), a locale written `es-AR`."""
    stripped = source_line.lstrip()
    indent = len(source_line) - len(stripped)
    first = stripped.split(" ", 1)[0] if stripped else ""
    first_span = Span(line, indent + 1, line, indent + 1 + len(first))
    if first == "elif":
        return Diagnostic(
            "E001", "`elif` is written `else if`", first_span, filename, suggestion="else if"
        )
    locale = re.match(_LOCALE_WRITTEN, source_line)
    if locale is not None:
        written = locale.group("locale")
        fixed = f"{written[:2].lower()}_{written[3:].upper()}"
        start = locale.start("locale") + 1
        return Diagnostic(
            "E028",
            f"a locale is written `{fixed}`: the language in lower case, `_`, the country in "
            f"upper case (`{written}` is not)",
            Span(line, start, line, start + len(written)),
            filename,
            suggestion=fixed,
        )
    follows_first = token.column == indent + len(first) + 2
    if indent and first.isalpha() and token.type == "TEXT" and follows_first:
        # `disaprove "reason"`: a misspelt keyword that takes a text reads as a property.
        keyword = did_you_mean(first, _TEXT_KEYWORDS)
        if keyword is not None:
            return Diagnostic(
                "E001", f"unknown keyword `{first}`", first_span, filename, suggestion=keyword
            )
    return None
