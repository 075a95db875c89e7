"""The parser: `.insp` source text to the AST of `inspectlang.ast`, with syntax diagnostics.

One Lark LALR(1) parser is built from `grammar.lark` (and kept on disk ready to use, its lexers
compiled: `inspectlang.parser_cache`) and builds the AST *during* the parse through the
callbacks of `inspectlang.tree_builder.AstBuilder`, so no intermediate parse tree exists.
`inspectlang.parse_loop` runs its table and lexers on a text that parses (a quarter fewer
instructions than Lark's own parse);
a text that does not is parsed again by Lark's loop, whose error the diagnostics word. The
callbacks and the postlexer hold no state: each parse has its own `ParseState`, so parses run
concurrently.
A postlexer turns indentation into block tokens and refuses tabs and deep nesting before the
parser sees them. When a file has syntax errors it is parsed again
declaration by declaration (every declaration starts at column 0), so one bad declaration gives
one diagnostic and the others still parse. Comments never reach the grammar: they are read back
from the source lines and attached to the node they precede or end the line of, stored with
their leading `#`.

The wording of syntax errors is `inspectlang.syntax_errors`'s.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from lark import Lark, Token
from lark.exceptions import UnexpectedInput
from lark.lark import PostLex

from inspectlang import ast, parser_cache
from inspectlang.ast import Span
from inspectlang.diagnostics import Diagnostic, TemplateError
from inspectlang.parse_loop import NotParsed, ParseLoop
from inspectlang.syntax_errors import diagnostic_for
from inspectlang.tree_builder import (
    CODE,
    AstBuilder,
    ParseState,
    SourceLines,
    SyntaxProblem,
    line_offset,
    parsing,
    token_span,
)
from inspectlang.vocabulary import MAX_NESTING, MAX_SOURCE_BYTES

__all__ = ["MAX_NESTING", "MAX_SOURCE_BYTES", "parse", "parse_with_diagnostics"]

#: Declarations parsed together on the recovery path before falling back to one at a time.
_RECOVERY_GROUP = 32


# --------------------------------------------------------------------------------------------
# Indentation postlexer
# --------------------------------------------------------------------------------------------


class Indentation(PostLex):
    """Indentation to `_INDENT`/`_DEDENT`; newlines inside brackets are ignored. Refuses tabs in
    indentation (E002), a dedent to no open level (E002) and nesting past MAX_NESTING (E004).
    Token lines are shifted by the parse's `line_offset` (the recovery path parses one
    declaration at a time)."""

    always_accept = ("_NL",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        offset = line_offset()
        if offset:
            stream = _shifted(stream, offset)
        levels = [0]
        opened: list[Token] = []  # the brackets still open
        unary_run = 0
        last: Token | None = None
        for token in stream:
            last = token
            kind = token.type
            if kind == "_NL":
                if opened:
                    continue
                yield token
                value = token.value
                cut = value.rfind("\n")
                indentation = value[cut + 1 :] if cut >= 0 else ""
                line = token.end_line
                assert line is not None
                where = Span(line, 1, line, len(indentation) + 1)
                if "\t" in indentation:
                    raise SyntaxProblem("E002", "indent with 4 spaces, not tabs", where)
                width = len(indentation)
                if width > levels[-1]:
                    levels.append(width)
                    if len(levels) > MAX_NESTING:
                        message = f"blocks nested more than {MAX_NESTING} levels deep"
                        raise SyntaxProblem("E004", message, where)
                    yield Token("_INDENT", indentation, 0, line, 1, line, width + 1)
                    continue
                while width < levels[-1]:
                    levels.pop()
                    yield Token("_DEDENT", indentation, 0, line, 1, line, width + 1)
                if width != levels[-1]:
                    raise SyntaxProblem(
                        "E002",
                        f"this line is indented by {width} spaces, which matches no enclosing "
                        f"block (indent blocks by 4 spaces)",
                        where,
                    )
                continue
            yield token
            if kind == "LPAR" or kind == "LSQB":
                opened.append(token)
            elif (kind == "RPAR" or kind == "RSQB") and opened:
                opened.pop()
            if kind == "NOT" or kind == "MINUS":
                unary_run += 1
            else:
                unary_run = 0
            if len(opened) + unary_run > MAX_NESTING:
                raise SyntaxProblem(
                    "E004",
                    f"expression nested more than {MAX_NESTING} levels deep",
                    token_span(token),
                )
        if opened:  # clearer than the parser's "unexpected end of block"
            message = f"`{opened[-1].value}` is never closed"
            raise SyntaxProblem("E001", message, token_span(opened[-1]))
        if last is not None:
            while len(levels) > 1:
                levels.pop()
                yield Token.new_borrow_pos("_DEDENT", "", last)


def _shifted(stream: Iterator[Token], offset: int) -> Iterator[Token]:
    for token in stream:
        token.line += offset  # type: ignore[operator]
        token.end_line += offset  # type: ignore[operator]
        yield token


# --------------------------------------------------------------------------------------------
# The parser, built once per process
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The LALR parser with the AST builder as its callbacks, kept on disk ready to use
    (`inspectlang.parser_cache`)."""
    return parser_cache.parser(
        "inspectlang",
        "grammar.lark",
        parser="lalr",
        lexer="contextual",
        postlex=Indentation(),
        transformer=AstBuilder(),
        maybe_placeholders=True,
    )


@lru_cache(maxsize=1)
def _loop() -> ParseLoop:
    """The parser's table run by `inspectlang.parse_loop` (valid texts; Lark's loop words the
    errors)."""
    return ParseLoop(_parser())


#: A keyword terminal's pattern: one lower-case word ending at a word boundary (`/set\b/`);
#: compiled by `re` (its own cache) when the formatter first needs it.
_KEYWORD_PATTERN = r"([a-z]+)\\b"


@lru_cache(maxsize=64)
def line_rule(name: str) -> tuple[tuple[str, str], ...] | None:
    """How the one-line rule `name` is written, for the formatter: its parts in order, each
    `("keyword", word)`, `("value", "NAME" | "TEXT" | "NUMBER")` or `("expr", "expr")`; None when
    the grammar has no such rule, or it has alternatives or parts of another kind. The block of
    translations a verdict line may have under it (`reason_body`) is no part of the line: the
    rule's two alternatives (with and without it) are the same line."""
    rules = [rule for rule in _parser().rules if rule.origin.name == name]
    lines = {_line_parts(rule.expansion) for rule in rules}
    return lines.pop() if len(lines) == 1 else None


def _line_parts(expansion: Sequence[Any]) -> tuple[tuple[str, str], ...] | None:
    terminals = {terminal.name: terminal.pattern for terminal in _parser().terminals}
    parts: list[tuple[str, str]] = []
    for symbol in expansion:
        if not symbol.is_term:
            if symbol.name == "reason_body":
                continue
            if symbol.name != "expr":
                return None
            parts.append(("expr", "expr"))
        elif symbol.name in ("NAME", "TEXT", "NUMBER"):
            parts.append(("value", symbol.name))
        elif symbol.name.startswith("_"):
            continue  # the newline
        else:
            pattern = terminals[symbol.name]
            keyword = re.fullmatch(_KEYWORD_PATTERN, pattern.value)
            if pattern.type == "str" and pattern.value.isalpha():
                parts.append(("keyword", pattern.value))
            elif pattern.type == "re" and keyword is not None:
                parts.append(("keyword", keyword[1]))
            else:
                return None
    return tuple(parts)


@lru_cache(maxsize=1)
def terminal_literals() -> dict[str, str]:
    """Terminal name -> the literal it stands for (`COLON` -> `:`), for error messages."""
    patterns: dict[str, str] = {}
    for terminal in _parser().terminals:
        value = terminal.pattern.value
        if terminal.pattern.type == "str":
            patterns[terminal.name] = value
        elif value.endswith("\\b") and value[:-2].isalpha():  # a keyword: /set\b/
            patterns[terminal.name] = value[:-2]
    return patterns


def _parse_text(text: str, filename: str, lines: SourceLines, offset: int) -> ast.Module:
    module: ast.Module
    try:
        with parsing(ParseState(lines, filename, offset)):
            module = _loop().parse(text)
    except NotParsed:
        # Again by Lark's own loop, in a new state, for the error it raises (`diagnostic_for`
        # reads its expected tokens and interactive parser).
        with parsing(ParseState(lines, filename, offset)):
            module = _parser().parse(text)  # type: ignore[assignment]
    return module


def _try_parse(
    text: str, filename: str, lines: SourceLines, source_lines: Sequence[str], offset: int = 0
) -> tuple[ast.Module | None, Diagnostic | None]:
    """Parse `text`, whose first line is line `offset + 1` of the file."""
    try:
        return _parse_text(text, filename, lines, offset), None
    except SyntaxProblem as problem:
        return None, Diagnostic(problem.code, problem.message, problem.span, filename)
    except UnexpectedInput as error:
        return None, diagnostic_for(
            error, filename, source_lines, text, offset, terminal_literals()
        )


def parse_with_diagnostics(
    source: str, filename: str = "<template>"
) -> tuple[ast.Module | None, list[Diagnostic]]:
    """Parse `source`: the module (with every declaration that parsed) and all syntax problems.

    The module is None only when nothing could be read at all (file too large)."""
    if len(source) * 4 > MAX_SOURCE_BYTES and len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
        size = len(source.encode("utf-8"))
        message = f"the template is {size} bytes; the limit is {MAX_SOURCE_BYTES} bytes"
        return None, [Diagnostic("E005", message, Span(1, 1, 1, 2), filename)]
    if (surrogate := _lone_surrogate(source, filename)) is not None:
        return None, [surrogate]
    if source.startswith("\ufeff"):  # a byte order mark some editors write
        source = source[1:]
    if "\r" in source:  # Windows (CRLF) and old Mac (CR only) line endings
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    text = source if source.endswith("\n") else source + "\n"
    source_lines = text.split("\n")[:-1]
    lines = SourceLines.scan(source_lines)
    first_code = next((n for n, kind in enumerate(lines.kinds) if kind == CODE), 0)
    if first_code == 0 or source_lines[first_code - 1][0] not in " \t":
        module, _ = _try_parse(text, filename, lines, source_lines)
        if module is not None:
            return module, []
    return _parse_by_declaration(filename, lines, source_lines, first_code)


def _lone_surrogate(source: str, filename: str) -> Diagnostic | None:
    """A text from the Python API may hold a lone surrogate (`"\\ud800"`), which no file can:
    it is no character, cannot be written as UTF-8, and would fail far from here (hashing ids,
    writing the manifest). Refused at the entry, where its position is known."""
    if source.isascii():
        return None
    try:
        source.encode("utf-8")  # fails at the first lone surrogate, the only character it cannot
    except UnicodeEncodeError as error:
        start = error.start
    else:
        return None
    before = source[:start]
    line = before.count("\n") + 1
    column = start - (before.rfind("\n") + 1) + 1
    code = f"U+{ord(source[start]):04X}"
    message = f"{code} is a lone surrogate, not a character: the text is not valid Unicode"
    return Diagnostic("E001", message, Span(line, column, line, column + 1), filename)


def decode_source(data: bytes, filename: str = "<template>") -> tuple[str, Diagnostic | None]:
    """A file's bytes as text. Bytes that are not UTF-8 give the text with each bad byte read as
    U+FFFD (so a diagnostic can show its line) and an E001 at the first of them, by line and
    column (columns counted in characters, as every diagnostic's are)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as error:
        start = error.start
    text = data.decode("utf-8", errors="replace")
    before = data[:start]
    line_start = before.rfind(b"\n") + 1
    line = before.count(b"\n") + 1
    column = len(before[line_start:].decode("utf-8", errors="replace")) + 1
    message = (
        f"byte 0x{data[start]:02X} is not UTF-8: a template is a UTF-8 text file (save it as "
        "UTF-8 in the editor)"
    )
    return text, Diagnostic("E001", message, Span(line, column, line, column + 1), filename)


def _parse_by_declaration(
    filename: str, lines: SourceLines, source_lines: list[str], first_code: int
) -> tuple[ast.Module, list[Diagnostic]]:
    """The recovery path: each column-0 declaration parsed on its own, with real positions."""
    diagnostics: list[Diagnostic] = []
    declarations: list[ast.Declaration] = []
    divides = False
    if first_code and source_lines[first_code - 1][0] in " \t":
        width = len(source_lines[first_code - 1]) - len(source_lines[first_code - 1].lstrip())
        diagnostics.append(
            Diagnostic(
                "E002",
                "a declaration must start at column 1 (no indentation)",
                Span(first_code, 1, first_code, width + 1),
                filename,
            )
        )
    starts = [
        n
        for n in range(1, len(source_lines) + 1)
        if lines.kinds[n] == CODE and source_lines[n - 1][0] not in " \t"
    ]
    bounds = [*starts, len(source_lines) + 1]

    def attempt(begin: int, end: int) -> tuple[ast.Module | None, Diagnostic | None]:
        first, last = bounds[begin], bounds[end]
        chunk = "\n".join(source_lines[first - 1 : last - 1]) + "\n"
        return _try_parse(chunk, filename, lines, source_lines, first - 1)

    # Declarations are tried in groups; only a group that fails is retried one by one, so a
    # large file with a few errors costs about two parses, not one Lark call per declaration.
    for group in range(0, len(starts), _RECOVERY_GROUP):
        end = min(group + _RECOVERY_GROUP, len(starts))
        module, _ = attempt(group, end) if end - group > 1 else (None, None)
        if module is not None:
            declarations.extend(module.declarations)
            divides = divides or module.divides
            continue
        for index in range(group, end):
            module, diagnostic = attempt(index, index + 1)
            if module is not None:
                declarations.extend(module.declarations)
                divides = divides or module.divides
            if diagnostic is not None:
                diagnostics.append(diagnostic)
    result = ast.Module(tuple(declarations), lines.final_comments(), filename, divides=divides)
    return result, diagnostics


def parse(source: str, filename: str = "<template>") -> ast.Module:
    """Parse a `.insp` source; raises TemplateError with every syntax diagnostic of the file."""
    module, diagnostics = parse_with_diagnostics(source, filename)
    if diagnostics or module is None:
        raise TemplateError(diagnostics, source)
    return module


#: The property key the expressions of reasons are parsed behind (`parse_expression_at`).
_FRAGMENT_KEY = "v: "


def parse_expression_at(
    text: str, line: int, column: int, filename: str = "<template>"
) -> tuple[ast.Expr | None, list[Diagnostic]]:
    """Parse one expression written at `line`:`column` of a file (inside a reason's `{...}`):
    its nodes and diagnostics carry the file's positions. It is parsed as the value of a
    synthetic check's property, near the start of the text, then its spans are moved where it
    stands: the cost is the expression's, not its position's (a reason with 2,000 values is
    parsed in linear time)."""
    if line < 1 or column < 1 or "\n" in text:
        span = Span(max(line, 1), max(column, 1), max(line, 1), max(column, 1) + max(len(text), 1))
        return None, [Diagnostic("E001", "a value in a text is one expression", span, filename)]
    source = "check e\n" + _FRAGMENT_INDENT + _FRAGMENT_KEY + text + "\n"
    module, diagnostics = parse_with_diagnostics(source, filename)
    delta = column - _FRAGMENT_COLUMN
    if diagnostics or module is None:
        return None, [_moved(d, line, delta) for d in diagnostics]
    declaration = module.declarations[0] if module.declarations else None
    items = declaration.items if isinstance(declaration, ast.CheckDecl) else ()
    if (
        len(items) == 1
        and isinstance(items[0], ast.Property)
        and len(items[0].values) == 1
        and not isinstance(items[0].values[0], ast.Quantity | ast.Size)
    ):
        return _moved(items[0].values[0], line, delta), []
    span = Span(line, column, line, column + max(len(text), 1))
    return None, [Diagnostic("E001", "a value in a text is one expression", span, filename)]


_FRAGMENT_INDENT = "    "
#: The column where `parse_expression_at` places the expression in its synthetic source.
_FRAGMENT_COLUMN = len(_FRAGMENT_INDENT) + len(_FRAGMENT_KEY) + 1
#: The synthetic source's line of the expression.
_FRAGMENT_LINE = 2

_Moved = TypeVar("_Moved")


def _moved(node: _Moved, line: int, delta: int) -> _Moved:
    """`node` (an expression or a diagnostic) with every span on the synthetic line moved to
    `line`, `delta` columns along. Expressions nest at most MAX_NESTING deep: the recursion is
    bounded."""
    if isinstance(node, Span):
        if node.line != _FRAGMENT_LINE:
            return node
        moved = Span(line, node.column + delta, line, node.end_column + delta)
        return moved  # type: ignore[return-value]
    if isinstance(node, tuple):
        return tuple(_moved(item, line, delta) for item in node)  # type: ignore[return-value]
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {
            item.name: _moved(getattr(node, item.name), line, delta)
            for item in dataclasses.fields(node)
            if item.init
        }
        return dataclasses.replace(node, **changes)
    return node
