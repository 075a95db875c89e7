"""The parser: `.insp` source text to the AST of `inspectlang.ast`, with syntax diagnostics.

One Lark LALR(1) parser is built per process from `grammar.lark` (its tables cached on disk by
Lark) and builds the AST *during* the parse through the callbacks of `_AstBuilder`, so no
intermediate parse tree exists. A postlexer turns indentation into block tokens and refuses tabs
and deep nesting before the parser sees them. When a file has syntax errors it is parsed again
declaration by declaration (every declaration starts at column 0), so one bad declaration gives
one diagnostic and the others still parse. Comments never reach the grammar: they are read back
from the source lines and attached to the node they precede or end the line of, stored with
their leading `#`.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import lark
from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lark import PostLex

from inspectlang import ast
from inspectlang.ast import Span
from inspectlang.diagnostics import Diagnostic, TemplateError, did_you_mean

__all__ = ["MAX_NESTING", "MAX_SOURCE_BYTES", "parse", "parse_with_diagnostics"]

#: Deepest nesting of parentheses, brackets, unary operators and operator chains in one
#: expression. Deeper input is refused (E004) so no later pass can hit Python's recursion limit.
MAX_NESTING = 64
#: Largest template accepted (E005): a real template is a few kilobytes.
MAX_SOURCE_BYTES = 1_000_000

#: Two-word events a rule can react to; the word after them (if any) is the event's target.
EVENTS = (
    "inspection created",
    "inspection started",
    "input set",
    "image uploaded",
    "image processed",
    "validation passed",
    "validation failed",
    "damage declared",
)
#: Declarations parsed together on the recovery path before falling back to one at a time.
_RECOVERY_GROUP = 32
_LOCALE = re.compile(r"[a-z]{2,3}_[A-Z]{2}")
_ESCAPE = re.compile(r'\\(["\\n])')
_BLANK, _COMMENT, _CODE = 0, 1, 2


class _SyntaxProblem(Exception):
    """A syntax problem found by the postlexer or the AST builder, turned into a Diagnostic."""

    def __init__(self, code: str, message: str, span: Span) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.span = span


def _token_span(token: Token) -> Span:
    return Span(token.line, token.column, token.end_line, token.end_column)  # type: ignore[arg-type]


def _from_token(token: Token, end: Span) -> Span:
    return Span(token.line, token.column, end.end_line, end.end_column)  # type: ignore[arg-type]


def _between(token: Token, last: Token) -> Span:
    return Span(token.line, token.column, last.end_line, last.end_column)  # type: ignore[arg-type]


def _line(token: Token) -> int:
    return token.line or 0


def _join(start: Span, end: Span) -> Span:
    return Span(start.line, start.column, end.end_line, end.end_column)


def unescape_text(token_text: str) -> str:
    """The value of a quoted text: `\\"`, `\\\\` and `\\n` are escapes; any other backslash is
    kept as written, so regular expressions such as `"\\d+"` read naturally."""
    body = token_text[1:-1]
    if "\\" not in body:
        return body
    return _ESCAPE.sub(lambda match: "\n" if match[1] == "n" else match[1], body)


def _is_locale(word: str) -> bool:
    """`en_US`, `es_AR`: two or three lowercase letters, `_`, two uppercase letters."""
    return _LOCALE.fullmatch(word) is not None


# --------------------------------------------------------------------------------------------
# Source lines: where the comments are
# --------------------------------------------------------------------------------------------


def _trailing_comment_of(line: str) -> str | None:
    """The `# ...` that ends a code line, ignoring `#` inside quoted texts."""
    in_text = False
    index, size = 0, len(line)
    while index < size:
        char = line[index]
        if in_text:
            if char == "\\":
                index += 1
            elif char == '"':
                in_text = False
        elif char == '"':
            in_text = True
        elif char == "#":
            return line[index:].rstrip()
        index += 1
    return None


@dataclass(slots=True)
class _SourceLines:
    """What each line of the source is (blank, own-line comment, code) and its comment."""

    kinds: list[int]
    comments: dict[int, str]
    trailing: dict[int, str]
    last_code_line: int

    @classmethod
    def scan(cls, lines: Sequence[str]) -> _SourceLines:
        kinds = [_BLANK] * (len(lines) + 1)
        comments: dict[int, str] = {}
        trailing: dict[int, str] = {}
        last_code = 0
        for number, line in enumerate(lines, start=1):
            stripped = line.lstrip(" \t")
            if not stripped:
                continue
            if stripped[0] == "#":
                kinds[number] = _COMMENT
                comments[number] = stripped.rstrip()
                continue
            kinds[number] = _CODE
            last_code = number
            if "#" in stripped:
                comment = _trailing_comment_of(stripped)
                if comment is not None:
                    trailing[number] = comment
        return cls(kinds, comments, trailing, last_code)

    def final_comments(self) -> tuple[str, ...]:
        return tuple(self.comments[n] for n in sorted(self.comments) if n > self.last_code_line)

    def attached(self, first: int, last: int) -> tuple[tuple[str, ...], str | None]:
        """Own-line comments just above line `first` (and inside a node spread over several
        lines), and the end-of-line comments of lines `first..last`."""
        kinds = self.kinds
        if first == last and kinds[first - 1] == _CODE:  # the common case: nothing above
            return (), self.trailing.get(first)
        before: list[str] = []
        number = first - 1
        while number > 0 and kinds[number] != _CODE:
            if kinds[number] == _COMMENT:
                before.append(self.comments[number])
            number -= 1
        before.reverse()
        if last == first:
            return tuple(before), self.trailing.get(first)
        ends: list[str] = []
        for number in range(first, last + 1):
            if kinds[number] == _COMMENT:
                before.append(self.comments[number])
            elif number in self.trailing:
                ends.append(self.trailing[number])
        return tuple(before), " ".join(ends) if ends else None


# --------------------------------------------------------------------------------------------
# Indentation postlexer
# --------------------------------------------------------------------------------------------


class _Indentation(PostLex):
    """Indentation to `_INDENT`/`_DEDENT`; newlines inside brackets are ignored. Refuses tabs in
    indentation (E002), a dedent to no open level (E002) and nesting past MAX_NESTING (E004)."""

    always_accept = ("_NL",)
    #: Added to every token's line: the recovery path parses one declaration at a time.
    line_offset = 0

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        if self.line_offset:
            stream = _shifted(stream, self.line_offset)
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
                    raise _SyntaxProblem("E002", "indent with 4 spaces, not tabs", where)
                width = len(indentation)
                if width > levels[-1]:
                    levels.append(width)
                    if len(levels) > MAX_NESTING:
                        message = f"blocks nested more than {MAX_NESTING} levels deep"
                        raise _SyntaxProblem("E004", message, where)
                    yield Token("_INDENT", indentation, 0, line, 1, line, width + 1)
                    continue
                while width < levels[-1]:
                    levels.pop()
                    yield Token("_DEDENT", indentation, 0, line, 1, line, width + 1)
                if width != levels[-1]:
                    raise _SyntaxProblem(
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
                raise _SyntaxProblem(
                    "E004",
                    f"expression nested more than {MAX_NESTING} levels deep",
                    _token_span(token),
                )
        if opened:  # clearer than the parser's "unexpected end of block"
            message = f"`{opened[-1].value}` is never closed"
            raise _SyntaxProblem("E001", message, _token_span(opened[-1]))
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
# AST builder: Lark calls one method per grammar rule while it parses
# --------------------------------------------------------------------------------------------

_Children = list[Any]


def _items_declaration(cls: Any, named: bool) -> Any:
    """The callback of a declaration with an item body (`settings`, `image NAME`, ...)."""

    def build(self: _AstBuilder, children: _Children) -> Any:
        keyword, header, items = children[0], children[-2], children[-1] or ()
        end = items[-1].span if items else _token_span(header)
        fields: dict[str, Any] = {}
        if named:
            fields = {"name": header.value, "name_span": _token_span(header)}
        node = cls(items=items, span=_from_token(keyword, end), **fields)
        return self.with_comments(node, keyword.line, header.end_line)

    return build


class _AstBuilder:
    """Builds AST nodes inside the LALR parse (method name = grammar rule). The per-parse state
    (`lines`, `depth`) is set by `_parse_text` under `_PARSE_LOCK`: Lark binds the callbacks
    once per process. Helpers are public names so they never clash with `_rule` names."""

    def __init__(self) -> None:
        self.lines = _SourceLines([_BLANK], {}, {}, 0)
        self.filename = "<template>"
        self.depth: dict[int, int] = {}

    def nested(self, node: ast.Expr, *children: ast.Expr) -> ast.Expr:
        """Record the node's depth; refuse it past MAX_NESTING (E004)."""
        depth_of = self.depth.get
        if len(children) == 1:
            depth = depth_of(id(children[0]), 1) + 1
        else:
            depth = 1 + max([depth_of(id(child), 1) for child in children])
        if depth > MAX_NESTING:
            message = f"expression nested more than {MAX_NESTING} levels deep"
            raise _SyntaxProblem("E004", message, node.span)
        self.depth[id(node)] = depth
        return node

    def with_comments(self, node: Any, first: int, last: int | None = None) -> Any:
        comments, trailing = self.lines.attached(first, first if last is None else last)
        if comments or trailing:
            return replace(node, comments=comments, trailing_comment=trailing)
        return node

    def item(self, node: Any) -> Any:
        return self.with_comments(node, node.span.line, node.span.end_line)

    # ---- module and declarations -----------------------------------------------------------
    def start(self, children: _Children) -> ast.Module:
        final = self.lines.final_comments()
        return ast.Module(tuple(children), final_comments=final, filename=self.filename)

    def body(self, children: _Children) -> tuple[Any, ...]:
        return tuple(children)

    block = body
    settings_decl = _items_declaration(ast.SettingsDecl, named=False)
    product_decl = _items_declaration(ast.ProductDecl, named=False)
    consumer_decl = _items_declaration(ast.ConsumerDecl, named=False)
    verdict_decl = _items_declaration(ast.VerdictDecl, named=False)
    image_decl = _items_declaration(ast.ImageDecl, named=True)
    input_decl = _items_declaration(ast.InputDecl, named=True)
    check_decl = _items_declaration(ast.CheckDecl, named=True)

    def template_decl(self, children: _Children) -> Any:
        keyword, name, items = children[0], children[1], children[2] or ()
        end = items[-1].span if items else _token_span(name)
        node = ast.TemplateDecl(unescape_text(name.value), items, span=_from_token(keyword, end))
        return self.with_comments(node, keyword.line, name.end_line)

    def variable_decl(self, children: _Children) -> Any:
        keyword, name, type_name, _equals, initial = children
        span, name_span = _from_token(keyword, initial.span), _token_span(name)
        node = ast.VariableDecl(
            name.value, type_name.value, initial, span=span, name_span=name_span
        )
        return self.with_comments(node, keyword.line, initial.span.end_line)

    def feature_decl(self, children: _Children) -> Any:
        keyword, name, state = children
        span, name_span = _between(keyword, state), _token_span(name)
        node = ast.FeatureDecl(name.value, state.type == "ON", span=span, name_span=name_span)
        return self.with_comments(node, keyword.line)

    def rule_decl(self, children: _Children) -> Any:
        keyword, event, body = children[0], children[1], children[2] or ()
        end = body[-1].span if body else event.span
        node = ast.RuleDecl(event, body, span=_from_token(keyword, end))
        return self.with_comments(node, keyword.line, event.span.end_line)

    def event_spec(self, children: _Children) -> ast.EventSpec:
        of_name: Token | None = children[-1]
        words: list[Token] = children[:-2]
        values = [str(word.value) for word in words]
        event, target_words = " ".join(values), []
        if len(values) >= 2 and f"{values[0]} {values[1]}" in EVENTS:
            event, target_words = f"{values[0]} {values[1]}", words[2:]
        elif values[0] == "finish":
            event, target_words = "finish", words[1:]
        if len(target_words) > 1:
            message = f"`on {event}` takes at most one name after it"
            raise _SyntaxProblem("E001", message, _between(target_words[1], target_words[-1]))
        target = target_words[0] if target_words else None
        return ast.EventSpec(
            event,
            None if target is None else str(target.value),
            None if of_name is None else str(of_name.value),
            span=_between(words[0], of_name if of_name is not None else words[-1]),
            target_span=ast.NO_SPAN if target is None else _token_span(target),
            of_image_span=ast.NO_SPAN if of_name is None else _token_span(of_name),
        )

    # ---- items -----------------------------------------------------------------------------
    def property(self, children: _Children) -> Any:
        key: Token = children[0]
        words = key.value.split()
        locale = words.pop() if len(words) > 1 and _is_locale(words[-1]) else None
        values = tuple(_size(v) if isinstance(v, Token) else v for v in children[1:])
        span = _from_token(key, values[-1].span)
        node = ast.Property(" ".join(words), values, locale, span=span, key_span=_token_span(key))
        return self.item(node)

    def quantity(self, children: _Children) -> ast.Quantity:
        amount, unit = children
        return ast.Quantity(_number(amount.value), unit.value, span=_between(amount, unit))

    def flag(self, children: _Children) -> Any:
        words = " ".join(str(word.value) for word in children)
        return self.item(ast.Flag(words, span=_between(children[0], children[-1])))

    def option(self, children: _Children) -> Any:
        keyword, key, locale, label = children
        locale_name = None if locale is None else locale.value
        span = _between(keyword, label)
        return self.item(ast.Option(key.value, unescape_text(label.value), locale_name, span=span))

    def validate(self, children: _Children) -> Any:
        keyword, name, modifiers = children[0], children[1], tuple(children[2:])
        end = modifiers[-1].span if modifiers else _token_span(name)
        span, name_span = _from_token(keyword, end), _token_span(name)
        return self.item(ast.Validate(name.value, modifiers, span=span, name_span=name_span))

    def modifier(self, children: _Children) -> ast.Modifier:
        words: list[str] = []
        value: int | float | ast.Quantity | ast.Size | None = None
        end = _token_span(children[0])
        for child in children:
            if isinstance(child, ast.Quantity):
                value, end = child, child.span
            elif child is None:
                continue
            elif child.type == "NUMBER":
                value, end = _number(child.value), _token_span(child)
            elif child.type == "SIZE":
                value = _size(child)
                end = value.span
            else:
                words.append(child.value)
                end = _token_span(child)
        return ast.Modifier(" ".join(words), value, span=_from_token(children[0], end))

    def feature_use(self, children: _Children) -> Any:
        keyword, name = children
        return self.item(ast.FeatureUse(name.value, span=_between(keyword, name)))

    def require(self, children: _Children) -> Any:
        names: list[Token] = children[1:]
        node = ast.Require(
            tuple(str(name.value) for name in names),
            span=_between(children[0], names[-1]),
            field_spans=tuple(_token_span(name) for name in names),
        )
        return self.item(node)

    def disapprove(self, children: _Children) -> Any:
        keyword, reason, _when, condition = children
        span = _from_token(keyword, condition.span)
        return self.item(ast.Disapprove(unescape_text(reason.value), condition, span=span))

    def approve(self, children: _Children) -> Any:
        keyword, _when, condition = children
        return self.item(ast.Approve(condition, span=_from_token(keyword, condition.span)))

    def otherwise(self, children: _Children) -> Any:
        keyword, reason = children
        span = _between(keyword, reason)
        return self.item(ast.Otherwise(unescape_text(reason.value), span=span))

    # ---- statements ------------------------------------------------------------------------
    def set_statement(self, children: _Children) -> Any:
        keyword, name, _to, value = children
        span, name_span = _from_token(keyword, value.span), _token_span(name)
        return self.item(ast.SetStatement(name.value, value, span=span, variable_span=name_span))

    def make_if(
        self, keyword: Token, condition: Any, then: Any, otherwise: Any, else_if: bool
    ) -> Any:
        otherwise = otherwise or ()
        span = _from_token(keyword, (otherwise or then)[-1].span)
        node = ast.IfStatement(condition, then, otherwise, else_if, span=span)
        return self.with_comments(node, _line(keyword), condition.span.end_line)

    def if_statement(self, children: _Children) -> Any:
        keyword, condition, then = children[:3]
        otherwise = children[3] if len(children) > 3 else None
        return self.make_if(keyword, condition, then, otherwise, False)

    def else_if(self, children: _Children) -> tuple[Any, ...]:
        else_keyword, _if_keyword, condition, then = children[:4]
        otherwise = children[4] if len(children) > 4 else None
        return (self.make_if(else_keyword, condition, then, otherwise, True),)

    def else_block(self, children: _Children) -> tuple[Any, ...]:
        """A plain `else` has no node of its own: its comments move to its first statement."""
        else_keyword, statements = children
        comments, trailing = self.lines.attached(else_keyword.line, else_keyword.line)
        if not comments and trailing is None:
            return tuple(statements)
        first = statements[0]
        moved = (*comments, *([trailing] if trailing else []), *first.comments)
        return (replace(first, comments=moved), *statements[1:])

    # ---- expressions -----------------------------------------------------------------------
    def binary(self, children: _Children) -> ast.Expr:
        left, operator, right = children
        node = ast.Binary(operator.value, left, right, span=_join(left.span, right.span))
        return self.nested(node, left, right)

    def unary(self, children: _Children) -> ast.Expr:
        operator, operand = children
        node = ast.Unary(operator.value, operand, span=_from_token(operator, operand.span))
        return self.nested(node, operand)

    def attribute(self, children: _Children) -> ast.Expr:
        value, name = children
        name_span = _token_span(name)
        span = _join(value.span, name_span)
        return self.nested(ast.Attribute(value, name.value, span=span, name_span=name_span), value)

    def number(self, children: _Children) -> ast.Literal:
        return ast.Literal(_number(children[0].value), span=_token_span(children[0]))

    def text(self, children: _Children) -> ast.Literal:
        return ast.Literal(unescape_text(children[0].value), span=_token_span(children[0]))

    def true(self, children: _Children) -> ast.Literal:
        return ast.Literal(True, span=_token_span(children[0]))

    def false(self, children: _Children) -> ast.Literal:
        return ast.Literal(False, span=_token_span(children[0]))

    def name(self, children: _Children) -> ast.Name:
        return ast.Name(children[0].value, span=_token_span(children[0]))

    def group(self, children: _Children) -> Any:
        return children[1]

    def argument(self, children: _Children) -> Any:
        return children[0]

    def list_expr(self, children: _Children) -> ast.Expr:
        items = tuple(item for item in children[1:-1] if item is not None)
        node = ast.ListExpr(items, span=_between(children[0], children[-1]))
        return self.nested(node, *items) if items else node

    def where_argument(self, children: _Children) -> _BoundArgument:
        return _BoundArgument(children[1], children[0], children[2])

    of_argument = where_argument

    def call(self, children: _Children) -> ast.Expr:
        function: Token = children[0]
        arguments = [argument for argument in children[2:-1] if argument is not None]
        span, name = _between(function, children[-1]), str(function.value)
        bound = [argument for argument in arguments if isinstance(argument, _BoundArgument)]
        if bound:
            return self.quantifier(name, len(arguments), bound[0], span)
        if name == "count" and len(arguments) == 1:
            node: ast.Expr = ast.Quantifier("count", None, arguments[0], span=span)
        else:
            function_span = _token_span(function)
            node = ast.Call(name, tuple(arguments), span=span, function_span=function_span)
        return self.nested(node, *arguments) if arguments else node

    def quantifier(self, name: str, count: int, bound: _BoundArgument, span: Span) -> ast.Expr:
        """`count|any|all(x in L where C)` and `sum(x in L of E)`, checked for their shape."""
        keyword = str(bound.keyword.value)
        expected = "of" if name == "sum" else "where"
        binding = bound.binding
        if name not in ("count", "any", "all", "sum"):
            message = f"`{keyword}` is only used in count, any, all (where) and sum (of)"
            raise _SyntaxProblem("E001", message, _token_span(bound.keyword))
        if not (
            count == 1
            and keyword == expected
            and isinstance(binding, ast.Binary)
            and binding.operator == "in"
            and isinstance(binding.left, ast.Name)
        ):
            message = f"write `{name}(x in LIST {expected} ...)` with one name before `in`"
            raise _SyntaxProblem("E001", message, _token_span(bound.keyword))
        variable, collection = binding.left.name, binding.right
        self.depth.pop(id(binding), None)  # dropped: its id may be reused by a later node
        if keyword == "of":
            node = ast.Quantifier(name, variable, collection, value=bound.body, span=span)
        else:
            node = ast.Quantifier(name, variable, collection, condition=bound.body, span=span)
        return self.nested(node, collection, bound.body)


@dataclass(frozen=True, slots=True)
class _BoundArgument:
    """`x in L where C` or `x in L of E` inside a call, before it becomes a Quantifier."""

    keyword: Token
    binding: ast.Expr
    body: ast.Expr


def _number(text: str) -> int | float:
    return float(text) if "." in text else int(text)


def _size(token: Token) -> ast.Size:
    width, _, height = token.value.partition("x")
    return ast.Size(int(width), int(height), span=_token_span(token))


# --------------------------------------------------------------------------------------------
# The parser, built once per process
# --------------------------------------------------------------------------------------------

_BUILDER = _AstBuilder()
_POSTLEX = _Indentation()
_PARSE_LOCK = threading.Lock()

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


def _cache_file() -> str | bool:
    """Where Lark keeps the analysed grammar between processes: a directory private to the
    user (Lark's default is a predictable name in the shared temp directory, and the cache is a
    pickle). Lark checks the grammar's hash stored in the file, so a stale cache is rebuilt."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "inspectlang")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return False  # no cache: a slower first parse, nothing else
    return os.path.join(directory, f"grammar-lark-{lark.__version__}.cache")


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The LALR parser with the AST builder as its callbacks, its tables cached on disk."""
    return Lark.open_from_package(
        "inspectlang",
        "grammar.lark",
        parser="lalr",
        lexer="contextual",
        postlex=_POSTLEX,
        transformer=_BUILDER,
        maybe_placeholders=True,
        cache=_cache_file(),
    )


@lru_cache(maxsize=1)
def _terminal_patterns() -> dict[str, str]:
    """Terminal name -> the literal it stands for (`COLON` -> `:`), for error messages."""
    patterns: dict[str, str] = {}
    for terminal in _parser().terminals:
        value = terminal.pattern.value
        if terminal.pattern.type == "str":
            patterns[terminal.name] = value
        elif value.endswith("\\b") and value[:-2].isalpha():  # a keyword: /set\b/
            patterns[terminal.name] = value[:-2]
    return patterns


def _describe_terminal(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    literal = _terminal_patterns().get(name)
    return f"`{literal}`" if literal is not None else name.lower()


def _describe_token(token: Token) -> str:
    words = {"_NL": "end of line", "_DEDENT": "end of block", "$END": "end of file"}
    return words.get(token.type, f"`{token.value}`")


def _diagnostic_for(
    error: UnexpectedInput, filename: str, lines: Sequence[str], text: str, offset: int
) -> Diagnostic:
    """A Lark syntax error in plain words, with its position. `text` starts at line
    `offset + 1`; the lexer's own errors carry lines within `text`, not yet shifted."""
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
    expected = sorted({_describe_terminal(name) for name in (error.accepts or error.expected)})
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
        if (word := _terminal_patterns().get(name, "")).isalpha()
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


def _parse_text(text: str, filename: str, lines: _SourceLines, offset: int) -> ast.Module:
    parser = _parser()
    with _PARSE_LOCK:
        _BUILDER.lines = lines
        _BUILDER.filename = filename
        _BUILDER.depth = {}
        _POSTLEX.line_offset = offset
        try:
            module: ast.Module = parser.parse(text)  # type: ignore[assignment]
        finally:
            _BUILDER.depth = {}
            _POSTLEX.line_offset = 0
    return module


def _try_parse(
    text: str, filename: str, lines: _SourceLines, source_lines: Sequence[str], offset: int = 0
) -> tuple[ast.Module | None, Diagnostic | None]:
    """Parse `text`, whose first line is line `offset + 1` of the file."""
    try:
        return _parse_text(text, filename, lines, offset), None
    except _SyntaxProblem as problem:
        return None, Diagnostic(problem.code, problem.message, problem.span, filename)
    except UnexpectedInput as error:
        return None, _diagnostic_for(error, filename, source_lines, text, offset)


def parse_with_diagnostics(
    source: str, filename: str = "<template>"
) -> tuple[ast.Module | None, list[Diagnostic]]:
    """Parse `source`: the module (with every declaration that parsed) and all syntax problems.

    The module is None only when nothing could be read at all (file too large)."""
    if len(source) * 4 > MAX_SOURCE_BYTES and len(source.encode("utf-8")) > MAX_SOURCE_BYTES:
        size = len(source.encode("utf-8"))
        message = f"the template is {size} bytes; the limit is {MAX_SOURCE_BYTES} bytes"
        return None, [Diagnostic("E005", message, Span(1, 1, 1, 2), filename)]
    if source.startswith("\ufeff"):  # a byte order mark some editors write
        source = source[1:]
    if "\r" in source:
        source = source.replace("\r\n", "\n")
    text = source if source.endswith("\n") else source + "\n"
    source_lines = text.split("\n")[:-1]
    lines = _SourceLines.scan(source_lines)
    first_code = next((n for n, kind in enumerate(lines.kinds) if kind == _CODE), 0)
    if first_code == 0 or source_lines[first_code - 1][0] not in " \t":
        module, _ = _try_parse(text, filename, lines, source_lines)
        if module is not None:
            return module, []
    return _parse_by_declaration(filename, lines, source_lines, first_code)


def _parse_by_declaration(
    filename: str, lines: _SourceLines, source_lines: list[str], first_code: int
) -> tuple[ast.Module, list[Diagnostic]]:
    """The recovery path: each column-0 declaration parsed on its own, with real positions."""
    diagnostics: list[Diagnostic] = []
    declarations: list[ast.Declaration] = []
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
        if lines.kinds[n] == _CODE and source_lines[n - 1][0] not in " \t"
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
            continue
        for index in range(group, end):
            module, diagnostic = attempt(index, index + 1)
            if module is not None:
                declarations.extend(module.declarations)
            if diagnostic is not None:
                diagnostics.append(diagnostic)
    result = ast.Module(tuple(declarations), lines.final_comments(), filename)
    return result, diagnostics


def parse(source: str, filename: str = "<template>") -> ast.Module:
    """Parse a `.insp` source; raises TemplateError with every syntax diagnostic of the file."""
    module, diagnostics = parse_with_diagnostics(source, filename)
    if diagnostics or module is None:
        raise TemplateError(diagnostics, source)
    return module
