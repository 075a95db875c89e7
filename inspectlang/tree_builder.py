"""The AST builder: Lark's callbacks that build `inspectlang.ast` nodes during the LALR parse.

One method per grammar rule (`AstBuilder`), the span helpers they share, the syntax problems
they raise (`SyntaxProblem`), the source lines the comments are read back from
(`SourceLines`), and `ParseState`, what one parse knows: the callbacks are bound to the parser
once per process and hold no state of their own; each parse sets its own `ParseState` in a
context variable (`parsing`), so parses in different threads or tasks never share one and need
no lock. `inspectlang.parser` builds the parser and runs it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from lark import Token

from inspectlang import ast, property_values
from inspectlang.ast import Span
from inspectlang.diagnostics import did_you_mean
from inspectlang.errors import InspectlangError
from inspectlang.vocabulary import (
    CHAIN_OPERATORS,
    MAX_LITERAL_INTEGER_DIGITS,
    MAX_NESTING,
    chain_depth,
)

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
_LOCALE = re.compile(r"[a-z]{2,3}_[A-Z]{2}")
_ESCAPE = re.compile(r'\\(["\\n])')
#: What a source line is (`SourceLines.kinds`).
BLANK, COMMENT, CODE = 0, 1, 2


class SyntaxProblem(InspectlangError):
    """A syntax problem found by the postlexer or the AST builder, turned into a Diagnostic."""

    def __init__(self, code: str, message: str, span: Span) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.span = span


def token_span(token: Token) -> Span:
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
class SourceLines:
    """What each line of the source is (blank, own-line comment, code) and its comment."""

    kinds: list[int]
    comments: dict[int, str]
    trailing: dict[int, str]
    last_code_line: int

    @classmethod
    def scan(cls, lines: Sequence[str]) -> SourceLines:
        kinds = [BLANK] * (len(lines) + 1)
        comments: dict[int, str] = {}
        trailing: dict[int, str] = {}
        last_code = 0
        for number, line in enumerate(lines, start=1):
            stripped = line.lstrip(" \t")
            if not stripped:
                continue
            if stripped[0] == "#":
                kinds[number] = COMMENT
                comments[number] = stripped.rstrip()
                continue
            kinds[number] = CODE
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
        if first == last and kinds[first - 1] == CODE:  # the common case: nothing above
            return (), self.trailing.get(first)
        before: list[str] = []
        number = first - 1
        while number > 0 and kinds[number] != CODE:
            if kinds[number] == COMMENT:
                before.append(self.comments[number])
            number -= 1
        before.reverse()
        if last == first:
            return tuple(before), self.trailing.get(first)
        ends: list[str] = []
        for number in range(first, last + 1):
            if kinds[number] == COMMENT:
                before.append(self.comments[number])
            elif number in self.trailing:
                ends.append(self.trailing[number])
        return tuple(before), " ".join(ends) if ends else None


# --------------------------------------------------------------------------------------------
# AST builder: Lark calls one method per grammar rule while it parses
# --------------------------------------------------------------------------------------------

_Children = list[Any]


def _items_declaration(cls: Any, named: bool) -> Any:
    """The callback of a declaration with an item body (`settings`, `image NAME`, ...)."""

    def build(self: AstBuilder, children: _Children) -> Any:
        keyword, header, items = children[0], children[-2], children[-1] or ()
        end = items[-1].span if items else token_span(header)
        fields: dict[str, Any] = {}
        if named:
            fields = {"name": header.value, "name_span": token_span(header)}
        node = cls(items=items, span=_from_token(keyword, end), **fields)
        return self.with_comments(node, keyword.line, header.end_line)

    return build


#: Tokens whose text is a node's field (a name, a quoted text, a number); every other token of
#: a rule is a keyword (`set`, `to`, `when`) and only marks where the node starts.
_VALUE_TOKENS = frozenset({"NAME", "TEXT", "NUMBER"})
#: Fields every line node has that no child fills.
_LINE_FIELDS = frozenset({"span", "comments", "trailing_comment"})


def line_fields(cls: Any) -> list[str]:
    """The fields of a one-line node its rule's children fill, in order (not its span, comments
    or the spans of its parts)."""
    return [
        item.name
        for item in fields(cls)
        if item.name not in _LINE_FIELDS and not item.name.endswith("_span")
    ]


def _line_node(cls: Any) -> Any:
    """The callback of a one-line node (`set NAME to EXPR`, `disapprove TEXT when EXPR`): its
    rule is a keyword, then one child per field of `cls` in order (keywords between are
    skipped); a name or text also fills `<field>_span` when `cls` has one. Lark's `ast_utils`
    way: a new statement or item needs its rule and its class, no callback of its own."""
    names = [item.name for item in fields(cls)]
    values_of = line_fields(cls)

    def build(self: AstBuilder, children: _Children) -> Any:
        keyword, arguments = children[0], children[1:]
        values = [
            child
            for child in arguments
            if not (isinstance(child, Token) and child.type not in _VALUE_TOKENS)
        ]
        if len(values) != len(values_of):
            raise TypeError(f"{cls.__name__}: rule gives {len(values)} values for {values_of}")
        found: dict[str, Any] = {}
        for name, value in zip(values_of, values, strict=False):
            if isinstance(value, Token):
                text = str(value.value)
                if value.type == "TEXT":
                    found[name] = unescape_text(text)
                else:
                    found[name] = _number(text) if value.type == "NUMBER" else text
                if f"{name}_span" in names:
                    found[f"{name}_span"] = token_span(value)
            else:
                found[name] = value
        last = next(child for child in reversed(arguments) if child is not None)
        end = token_span(last) if isinstance(last, Token) else last.span
        return self.item(cls(**found, span=_from_token(keyword, end)))

    return build


@dataclass(slots=True)
class ParseState:
    """What one parse knows: its file, its source lines (for comments), the line its text
    starts after (the recovery path parses one declaration at a time), and the nesting depth
    of the expression nodes built so far."""

    lines: SourceLines
    filename: str
    line_offset: int = 0
    #: id of an expression node -> its nesting depth (nodes live until the parse ends).
    depth: dict[int, int] = field(default_factory=dict)
    #: `and`/`or` chain node -> (operands, deepest operand's depth).
    chains: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: Whether a `/` or `mod` built so far has a divisor that is no number literal
    #: (`ast.Module.divides`).
    divides: bool = False


#: Sets a field of a frozen node (`with_comments`, on a node no one else holds yet).
_set_field = object.__setattr__

_STATE: ContextVar[ParseState] = ContextVar("inspectlang_parse_state")


@contextmanager
def parsing(state: ParseState) -> Iterator[None]:
    """Make `state` the one the callbacks and the postlexer see while the block runs."""
    token = _STATE.set(state)
    try:
        yield
    finally:
        _STATE.reset(token)


def line_offset() -> int:
    """The line the text of the parse running in this thread or task starts after (0 outside
    one of our parses: the postlexer also serves a plain Lark parser in the benchmark)."""
    state = _STATE.get(None)
    return 0 if state is None else state.line_offset


class AstBuilder:
    """Builds AST nodes inside the LALR parse (method name = grammar rule); what the parse
    knows is its `ParseState`. Helpers are public names so they never clash with `_rule`
    names."""

    def nested(self, node: ast.Expr, *children: ast.Expr) -> ast.Expr:
        """Record the node's depth; refuse it past MAX_NESTING (E004)."""
        state = _STATE.get()
        depth_of = state.depth.get
        if len(children) == 1:
            depth = depth_of(id(children[0]), 1) + 1
        else:
            depth = 1 + max([depth_of(id(child), 1) for child in children])
        if depth > MAX_NESTING:
            message = f"expression nested more than {MAX_NESTING} levels deep"
            raise SyntaxProblem("E004", message, node.span)
        state.depth[id(node)] = depth
        return node

    def with_comments(self, node: Any, first: int, last: int | None = None) -> Any:
        """`node` with the comments above and at the end of its lines. The node was built by
        the calling callback and nothing else holds it yet (no AST class has a
        `__post_init__`), so its two fields are set in place: what `dataclasses.replace`
        would give, without building a second node (issue 26)."""
        lines = _STATE.get().lines
        comments, trailing = lines.attached(first, first if last is None else last)
        if comments or trailing:
            _set_field(node, "comments", comments)
            _set_field(node, "trailing_comment", trailing)
        return node

    def item(self, node: Any) -> Any:
        return self.with_comments(node, node.span.line, node.span.end_line)

    # ---- module and declarations -----------------------------------------------------------
    def start(self, children: _Children) -> ast.Module:
        state = _STATE.get()
        final = state.lines.final_comments()
        return ast.Module(
            tuple(children), final_comments=final, filename=state.filename, divides=state.divides
        )

    def body(self, children: _Children) -> tuple[Any, ...]:
        return tuple(children)

    block = body
    reason_body = body
    settings_decl = _items_declaration(ast.SettingsDecl, named=False)
    product_decl = _items_declaration(ast.ProductDecl, named=False)
    consumer_decl = _items_declaration(ast.ConsumerDecl, named=False)
    verdict_decl = _items_declaration(ast.VerdictDecl, named=False)
    image_decl = _items_declaration(ast.ImageDecl, named=True)
    input_decl = _items_declaration(ast.InputDecl, named=True)
    check_decl = _items_declaration(ast.CheckDecl, named=True)

    def include_decl(self, children: _Children) -> Any:
        keyword, name = children
        node = ast.IncludeDecl(
            unescape_text(name.value), span=_between(keyword, name), name_span=token_span(name)
        )
        return self.with_comments(node, keyword.line)

    def template_decl(self, children: _Children) -> Any:
        keyword, name, items = children[0], children[1], children[2] or ()
        end = items[-1].span if items else token_span(name)
        node = ast.TemplateDecl(unescape_text(name.value), items, span=_from_token(keyword, end))
        return self.with_comments(node, keyword.line, name.end_line)

    def variable_decl(self, children: _Children) -> Any:
        keyword, name, type_name, _equals, initial = children
        span, name_span = _from_token(keyword, initial.span), token_span(name)
        node = ast.VariableDecl(
            name.value, type_name.value, initial, span=span, name_span=name_span
        )
        return self.with_comments(node, keyword.line, initial.span.end_line)

    def let_decl(self, children: _Children) -> Any:
        keyword, name, _equals, value = children
        span, name_span = _from_token(keyword, value.span), token_span(name)
        node = ast.LetDecl(name.value, value, span=span, name_span=name_span)
        return self.with_comments(node, keyword.line, value.span.end_line)

    def feature_decl(self, children: _Children) -> Any:
        keyword, name, state = children
        span, name_span = _between(keyword, state), token_span(name)
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
            raise SyntaxProblem("E001", message, _between(target_words[1], target_words[-1]))
        target = target_words[0] if target_words else None
        return ast.EventSpec(
            event,
            None if target is None else str(target.value),
            None if of_name is None else str(of_name.value),
            span=_between(words[0], of_name if of_name is not None else words[-1]),
            target_span=ast.NO_SPAN if target is None else token_span(target),
            of_image_span=ast.NO_SPAN if of_name is None else token_span(of_name),
        )

    # ---- items -----------------------------------------------------------------------------
    def property(self, children: _Children) -> Any:
        key: Token = children[0]
        words = key.value.split()
        locale = words.pop() if len(words) > 1 and _is_locale(words[-1]) else None
        values = tuple(_size(v) if isinstance(v, Token) else v for v in children[1:])
        span = _from_token(key, values[-1].span)
        node = ast.Property(" ".join(words), values, locale, span=span, key_span=token_span(key))
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
        end = modifiers[-1].span if modifiers else token_span(name)
        span, name_span = _from_token(keyword, end), token_span(name)
        return self.item(ast.Validate(name.value, modifiers, span=span, name_span=name_span))

    def modifier(self, children: _Children) -> ast.Modifier:
        words: list[str] = []
        value: int | float | ast.Quantity | ast.Size | None = None
        end = token_span(children[0])
        for child in children:
            if isinstance(child, ast.Quantity):
                value, end = child, child.span
            elif child is None:
                continue
            elif child.type == "NUMBER":
                value, end = _number(child.value), token_span(child)
            elif child.type == "SIZE":
                value = _size(child)
                end = value.span
            else:
                words.append(child.value)
                end = token_span(child)
        return ast.Modifier(" ".join(words), value, span=_from_token(children[0], end))

    def feature_use(self, children: _Children) -> Any:
        keyword, name = children
        return self.item(ast.FeatureUse(name.value, span=_between(keyword, name)))

    def require(self, children: _Children) -> Any:
        names: list[Token] = children[1:]
        node = ast.Require(
            tuple(str(name.value) for name in names),
            span=_between(children[0], names[-1]),
            field_spans=tuple(token_span(name) for name in names),
        )
        return self.item(node)

    def _reason_line(self, cls: type[ast.Disapprove | ast.Review], children: _Children) -> Any:
        """`disapprove "…" when C` or `review "…" when C`, with its `reason LOCALE:` lines."""
        keyword, reason, _when, condition, translations = children
        node = cls(
            unescape_text(reason.value),
            condition,
            span=_from_token(keyword, condition.span),
            reason_span=token_span(reason),
            translations=translations or (),
        )
        return self.item(node)

    def disapprove(self, children: _Children) -> Any:
        return self._reason_line(ast.Disapprove, children)

    def review(self, children: _Children) -> Any:
        return self._reason_line(ast.Review, children)

    def approve(self, children: _Children) -> Any:
        keyword, _when, condition = children
        return self.item(ast.Approve(condition, span=_from_token(keyword, condition.span)))

    def otherwise(self, children: _Children) -> Any:
        keyword, reason, translations = children
        span = _between(keyword, reason)
        text = unescape_text(reason.value)
        node = ast.Otherwise(
            text, span=span, reason_span=token_span(reason), translations=translations or ()
        )
        return self.item(node)

    # ---- statements ------------------------------------------------------------------------
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
        comments, trailing = _STATE.get().lines.attached(else_keyword.line, else_keyword.line)
        if not comments and trailing is None:
            return tuple(statements)
        first = statements[0]
        moved = (*comments, *([trailing] if trailing else []), *first.comments)
        return (replace(first, comments=moved), *statements[1:])

    # ---- expressions -----------------------------------------------------------------------
    def binary(self, children: _Children) -> ast.Expr:
        left, operator, right = children
        node = ast.Binary(operator.value, left, right, span=_join(left.span, right.span))
        if operator.value == "/" and property_values.number(right) is None:
            _STATE.get().divides = True
        if operator.value in CHAIN_OPERATORS:
            return self.chained(node, left, right)
        return self.nested(node, left, right)

    def chained(self, node: ast.Binary, left: ast.Expr, right: ast.Expr) -> ast.Expr:
        """An `and`/`or` counts as its whole chain (both sides, however grouped) balanced:
        the deepest operand plus `chain_depth(operands)`, as the checker emits it."""
        state = _STATE.get()
        operands, deepest = 0, 0
        for side in (left, right):
            chain = (
                state.chains.get(id(side))
                if isinstance(side, ast.Binary) and side.operator == node.operator
                else None
            )
            count, depth = chain if chain is not None else (1, state.depth.get(id(side), 1))
            operands, deepest = operands + count, max(deepest, depth)
        state.chains[id(node)] = (operands, deepest)
        depth = deepest + chain_depth(operands)
        if depth > MAX_NESTING:
            message = f"expression nested more than {MAX_NESTING} levels deep"
            raise SyntaxProblem("E004", message, node.span)
        state.depth[id(node)] = depth
        return node

    def conditional(self, children: _Children) -> ast.Expr:
        keyword, condition, then_word, then, else_word, otherwise = children
        node = ast.Conditional(
            condition,
            then,
            otherwise,
            span=_from_token(keyword, otherwise.span),
            keyword_spans=(token_span(keyword), token_span(then_word), token_span(else_word)),
        )
        return self.nested(node, condition, then, otherwise)

    def unary(self, children: _Children) -> ast.Expr:
        operator, operand = children
        node = ast.Unary(operator.value, operand, span=_from_token(operator, operand.span))
        return self.nested(node, operand)

    def attribute(self, children: _Children) -> ast.Expr:
        value, name = children
        name_span = token_span(name)
        span = _join(value.span, name_span)
        return self.nested(ast.Attribute(value, name.value, span=span, name_span=name_span), value)

    def number(self, children: _Children) -> ast.Literal:
        return ast.Literal(_number(children[0].value), span=token_span(children[0]))

    def text(self, children: _Children) -> ast.Literal:
        return ast.Literal(unescape_text(children[0].value), span=token_span(children[0]))

    def true(self, children: _Children) -> ast.Literal:
        return ast.Literal(True, span=token_span(children[0]))

    def false(self, children: _Children) -> ast.Literal:
        return ast.Literal(False, span=token_span(children[0]))

    def name(self, children: _Children) -> ast.Name:
        return ast.Name(children[0].value, span=token_span(children[0]))

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
            function_span = token_span(function)
            node = ast.Call(name, tuple(arguments), span=span, function_span=function_span)
            if (
                name == "mod"
                and len(arguments) == 2
                and property_values.number(arguments[1]) is None
            ):
                _STATE.get().divides = True
        return self.nested(node, *arguments) if arguments else node

    def quantifier(self, name: str, count: int, bound: _BoundArgument, span: Span) -> ast.Expr:
        """`count|any|all(x in L where C)` and `sum(x in L of E)`, checked for their shape."""
        keyword = str(bound.keyword.value)
        expected = "of" if name in ("sum", "map") else "where"
        binding = bound.binding
        if name not in ("count", "any", "all", "sum", "filter", "map"):
            message = (
                f"`{keyword}` is only used in count, any, all, filter (where), sum and map (of)"
            )
            close = did_you_mean(name, ("count", "any", "all", "sum", "filter", "map"))
            if close is not None:
                message += f"; did you mean `{close}`?"
            raise SyntaxProblem("E001", message, token_span(bound.keyword))
        if name == "map" and keyword == "where":
            message = (
                "`map` takes `x in LIST of VALUE`; to leave items out, map a filter: "
                "`map(x in filter(x in LIST where CONDITION) of VALUE)`"
            )
            raise SyntaxProblem("E001", message, token_span(bound.keyword))
        if not (
            count == 1
            and keyword == expected
            and isinstance(binding, ast.Binary)
            and binding.operator == "in"
            and isinstance(binding.left, ast.Name)
        ):
            message = f"write `{name}(x in LIST {expected} ...)` with one name before `in`"
            raise SyntaxProblem("E001", message, token_span(bound.keyword))
        variable, collection = binding.left.name, binding.right
        _STATE.get().depth.pop(id(binding), None)  # its id may be reused by a later node
        if keyword == "of":
            node = ast.Quantifier(name, variable, collection, value=bound.body, span=span)
        else:
            node = ast.Quantifier(name, variable, collection, condition=bound.body, span=span)
        return self.nested(node, collection, bound.body)


def rule_name(class_name: str) -> str:
    """`SetStatement` -> `set_statement`: a grammar rule is named as the AST class it builds."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", class_name).lower()


# Every line node of `inspectlang.ast` (a span and comments of its own) without a callback above
# is built by `_line_node` under its rule's name.
for _class in vars(ast).values():
    if (
        isinstance(_class, type)
        and is_dataclass(_class)
        and {item.name for item in fields(_class)} >= _LINE_FIELDS
        and not hasattr(AstBuilder, rule_name(_class.__name__))
    ):
        setattr(AstBuilder, rule_name(_class.__name__), _line_node(_class))


@dataclass(frozen=True, slots=True)
class _BoundArgument:
    """`x in L where C` or `x in L of E` inside a call, before it becomes a Quantifier."""

    keyword: Token
    binding: ast.Expr
    body: ast.Expr


def _number(text: str) -> int | float:
    """The literal's value; one with more than `MAX_LITERAL_INTEGER_DIGITS` digits before the
    point is infinite, never converted (Python refuses integers of over 4,300 digits, and a
    float overflows past 308): the checker refuses it as larger than `MAX_NUMBER` (E019)."""
    whole = text.partition(".")[0].lstrip("0")
    if len(whole) > MAX_LITERAL_INTEGER_DIGITS:
        return math.inf
    return float(text) if "." in text else int(text)


def _size(token: Token) -> ast.Size:
    width, _, height = token.value.partition("x")
    return ast.Size(int(width), int(height), span=token_span(token))
