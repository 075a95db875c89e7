"""The formatter: an AST back to canonical `.insp` text (what `inspectlang fmt` writes).

Canonical means: 4-space indentation, one blank line between declarations (consecutive one-line
`variable` or `feature` declarations stay together), every comment kept where the parser attached
it, the fewest parentheses that keep the meaning, texts re-escaped and numbers written back the
way they were read. It only looks at node values, never spans, so it formats trees built by
programs (the decompiler) as well as parsed ones. `format_module` is idempotent through the
parser: `format_module(parse(format_module(m))) == format_module(m)`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from inspectlang import ast
from inspectlang.diagnostics import Diagnostic, TemplateError
from inspectlang.ir import UnknownNode
from inspectlang.parser import line_rule, parse
from inspectlang.tree_builder import line_fields, rule_name
from inspectlang.vocabulary import MAX_LITERAL_INTEGER_DIGITS

__all__ = ["format_expression", "format_module", "format_source", "quote_text"]

INDENT = "    "

#: Binding strength of each operator, loosest first (docs/design/syntax.md, Expressions).
_BINARY_PRECEDENCE = {
    "or": 1,
    "and": 2,
    "=": 4,
    "!=": 4,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "in": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
}
_NOT, _SUM, _UNARY_MINUS, _POSTFIX, _ATOM = 3, 5, 7, 8, 9
#: `if C then A else B` binds loosest: as an operand it is always bracketed.
_CONDITIONAL = 0


def format_source(source: str, filename: str = "<template>") -> str:
    """Parse then format; raises TemplateError when the source has syntax errors or a number
    too long to write back (E019, which `check` reports too)."""
    module = parse(source, filename)
    too_long = [
        Diagnostic(
            "E019",
            f"a number of more than {MAX_LITERAL_INTEGER_DIGITS} digits cannot be written back "
            "(and is too large for any property or expression)",
            span,
            filename,
        )
        for span in _infinite_numbers(module)
    ]
    if too_long:
        raise TemplateError(too_long, source)
    return format_module(module)


def _infinite_numbers(module: ast.Module) -> list[ast.Span]:
    """The spans of the literals the parser read as infinite (written with too many digits:
    `inspectlang.tree_builder`), walking the tree without recursion."""
    found: list[ast.Span] = []
    pending: list[Any] = [module]
    while pending:
        node = pending.pop()
        if isinstance(node, tuple | list):
            pending.extend(node)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            for item in dataclasses.fields(node):
                value = getattr(node, item.name)
                if isinstance(value, float) and math.isinf(value):
                    found.append(getattr(node, "span", ast.NO_SPAN))
                elif isinstance(value, tuple | list) or dataclasses.is_dataclass(value):
                    pending.append(value)
    return sorted(found, key=lambda span: (span.line, span.column))


def format_module(module: ast.Module) -> str:
    """The canonical text of a whole module, ending with one newline."""
    out: list[str] = []
    previous: ast.Declaration | None = None
    for declaration in module.declarations:
        if previous is not None and not _stays_together(previous, declaration):
            out.append("")
        out.extend(_declaration(declaration))
        previous = declaration
    if module.final_comments:
        if out:
            out.append("")
        out.extend(_comment(text) for text in module.final_comments)
    return "\n".join(out) + "\n" if out else ""


def _stays_together(previous: ast.Declaration, current: ast.Declaration) -> bool:
    one_liners = (ast.IncludeDecl, ast.VariableDecl, ast.LetDecl, ast.FeatureDecl)
    return (
        isinstance(current, one_liners) and type(previous) is type(current) and not current.comments
    )


# --------------------------------------------------------------------------------------------
# Declarations, items and statements
# --------------------------------------------------------------------------------------------


def _comment(text: str) -> str:
    text = text.rstrip()
    return text if text.startswith("#") else f"# {text}"


def _lines(node: Any, text: str, indent: str) -> list[str]:
    """`text` at `indent` after the node's own-line comments, ended by its trailing comment."""
    lines = [indent + _comment(comment) for comment in node.comments]
    trailing = node.trailing_comment
    lines.append(indent + text + (f"  {_comment(trailing)}" if trailing else ""))
    return lines


def _header(declaration: ast.Declaration) -> str:
    match declaration:
        case ast.IncludeDecl(name=name):
            return f"include {quote_text(name)}"
        case ast.TemplateDecl(name=name):
            return f"template {quote_text(name)}"
        case ast.SettingsDecl():
            return "settings"
        case ast.ProductDecl():
            return "product"
        case ast.ConsumerDecl():
            return "consumer"
        case ast.VerdictDecl():
            return "verdict"
        case ast.ImageDecl(name=name):
            return f"image {name}"
        case ast.InputDecl(name=name):
            return f"input {name}"
        case ast.CheckDecl(name=name):
            return f"check {name}"
        case ast.VariableDecl(name=name, variable_type=kind, initial=initial):
            return f"variable {name}: {kind} = {format_expression(initial)}"
        case ast.LetDecl(name=name, value=value):
            return f"let {name} = {format_expression(value)}"
        case ast.FeatureDecl(name=name, active=active):
            return f"feature {name}: {'on' if active else 'off'}"
        case ast.RuleDecl(event=event):
            return "on " + _event(event)
    raise TypeError(f"not a declaration: {declaration!r}")


def _declaration(declaration: ast.Declaration) -> list[str]:
    lines = _lines(declaration, _header(declaration), "")
    if isinstance(declaration, ast.RuleDecl):
        lines.extend(_statements(declaration.body, INDENT))
    elif not isinstance(
        declaration, ast.IncludeDecl | ast.VariableDecl | ast.LetDecl | ast.FeatureDecl
    ):
        for item in declaration.items:
            lines.extend(_lines(item, _item(item), INDENT))
            # a verdict line's translations (`reason es_AR: "..."`), indented under it
            for nested in getattr(item, "translations", ()):
                lines.extend(_lines(nested, _item(nested), INDENT * 2))
    return lines


def _event(event: ast.EventSpec) -> str:
    text = event.event
    if event.target is not None:
        text += f" {event.target}"
    if event.of_image is not None:
        text += f" of {event.of_image}"
    return text


def _item(item: ast.Item) -> str:
    match item:
        case ast.Property(key=key, values=values, locale=locale):
            values_text = ", ".join(_property_value(value) for value in values)
            return f"{key}{'' if locale is None else ' ' + locale}: {values_text}"
        case ast.Flag(words=words):
            return words
        case ast.Option(key=key, label=label, locale=locale):
            return f"option {key}{'' if locale is None else ' ' + locale}: {quote_text(label)}"
        case ast.Validate(name=name, modifiers=modifiers):
            return ", ".join([f"validate {name}", *(_modifier(m) for m in modifiers)])
        case ast.FeatureUse(name=name):
            return f"feature {name}"
        case ast.Require(fields=fields):
            return "require " + ", ".join(fields)
        case ast.Disapprove(reason=reason, condition=condition):
            return f"disapprove {quote_text(reason)} when {format_expression(condition)}"
        case ast.Review(reason=reason, condition=condition):
            return f"review {quote_text(reason)} when {format_expression(condition)}"
        case ast.Approve(condition=condition):
            return f"approve when {format_expression(condition)}"
        case ast.Otherwise(reason=reason):
            return f"otherwise {quote_text(reason)}"
    return _line(item)


def _line(node: Any) -> str:
    """A one-line node (`disapprove "..." when ...`, `set x to ...`) written as its grammar rule
    spells it: the rule named as its class, its keywords as written there, its fields in the
    rule's order. A node with no such rule is refused (`UnknownNode`)."""
    parts = line_rule(rule_name(type(node).__name__))
    if parts is None:
        raise UnknownNode(node, "formatter")
    values = iter([getattr(node, name) for name in line_fields(type(node))])
    words: list[str] = []
    for kind, text in parts:
        if kind == "keyword":
            words.append(text)
        elif kind == "expr":
            words.append(format_expression(next(values)))
        elif text == "TEXT":
            words.append(quote_text(next(values)))
        elif text == "NUMBER":
            words.append(_number(next(values)))
        else:
            words.append(str(next(values)))
    return " ".join(words)


def _property_value(value: ast.PropertyValue) -> str:
    if isinstance(value, ast.Quantity):
        return f"{_number(value.amount)} {value.unit}"
    if isinstance(value, ast.Size):
        return f"{value.width} x {value.height}"
    return format_expression(value)


def _modifier(modifier: ast.Modifier) -> str:
    value = modifier.value
    if value is None:
        return modifier.words
    if isinstance(value, ast.Quantity | ast.Size):
        return f"{modifier.words} {_property_value(value)}"
    return f"{modifier.words} {_number(value)}"


def _statements(statements: tuple[ast.Statement, ...], indent: str) -> list[str]:
    lines: list[str] = []
    for statement in statements:
        if isinstance(statement, ast.IfStatement):
            lines.extend(_if(statement, indent, "if"))
        else:
            lines.extend(_lines(statement, _line(statement), indent))
    return lines


def _if(statement: ast.IfStatement, indent: str, keyword: str) -> list[str]:
    text = f"{keyword} {format_expression(statement.condition)}"
    lines = _lines(statement, text, indent)
    lines.extend(_statements(statement.then, indent + INDENT))
    otherwise = statement.otherwise
    if (
        len(otherwise) == 1
        and isinstance(otherwise[0], ast.IfStatement)
        and otherwise[0].is_else_if
    ):
        lines.extend(_if(otherwise[0], indent, "else if"))
    elif otherwise:
        lines.append(indent + "else")
        lines.extend(_statements(otherwise, indent + INDENT))
    return lines


# --------------------------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------------------------


def quote_text(value: str) -> str:
    """A text literal that reads back as `value`. A backslash is doubled only where it would
    otherwise start an escape, so `"\\d+"` stays readable."""
    out: list[str] = []
    size = len(value)
    for index, char in enumerate(value):
        if char == '"':
            out.append('\\"')
        elif char == "\n":
            out.append("\\n")
        elif char == "\\":
            following = value[index + 1] if index + 1 < size else ""
            out.append("\\\\" if following in ('"', "\\", "n", "\n", "") else "\\")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _number(value: int | float) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        raise ValueError(f"{value!r} cannot be written in a template")
    text = repr(value)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    return text if "." in text else text + ".0"


def _precedence(expression: ast.Expr) -> int:
    match expression:
        case ast.Conditional():
            return _CONDITIONAL
        case ast.Binary(operator=operator):
            return _BINARY_PRECEDENCE.get(operator, 0)
        case ast.Unary(operator="not"):
            return _NOT
        case ast.Unary():
            return _UNARY_MINUS
        case ast.Attribute():
            return _POSTFIX
        case ast.Literal(value=value) if not isinstance(value, bool | str) and value < 0:
            return _UNARY_MINUS
    return _ATOM


def _wrapped(expression: ast.Expr, minimum: int) -> str:
    text = format_expression(expression)
    return f"({text})" if _precedence(expression) < minimum else text


def _format_literal(expression: ast.Literal) -> str:
    value = expression.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote_text(value)
    return _number(value)


def _format_binary(expression: ast.Binary) -> str:
    level = _BINARY_PRECEDENCE.get(expression.operator)
    if level is None:
        raise ValueError(f"unknown operator {expression.operator!r}")
    rights = [expression.right]
    left: ast.Expr = expression.left
    while isinstance(left, ast.Binary) and left.operator == expression.operator:
        rights.append(left.right)  # a long chain is walked, not recursed into
        left = left.left
    parts = [_wrapped(left, level)]
    parts.extend(_wrapped(right, level + 1) for right in reversed(rights))  # left-associative
    return f" {expression.operator} ".join(parts)


def _format_unary(expression: ast.Unary) -> str:
    if expression.operator == "not":
        return "not " + _wrapped(expression.operand, _NOT)
    if expression.operator == "-":
        return "-" + _wrapped(expression.operand, _UNARY_MINUS)
    raise ValueError(f"unknown operator {expression.operator!r}")


def _format_conditional(expression: ast.Conditional) -> str:
    # Its parts may be any expression; a conditional inside the first two is bracketed to read.
    condition = _wrapped(expression.condition, _CONDITIONAL + 1)
    then = _wrapped(expression.then, _CONDITIONAL + 1)
    return f"if {condition} then {then} else {format_expression(expression.otherwise)}"


def _format_quantifier(expression: ast.Quantifier) -> str:
    if expression.variable is None:
        return f"{expression.kind}({format_expression(expression.collection)})"
    collection = _wrapped(expression.collection, _SUM)
    head = f"{expression.kind}({expression.variable} in {collection}"
    if expression.value is not None:
        return f"{head} of {format_expression(expression.value)})"
    condition = expression.condition if expression.condition is not None else ast.Literal(True)
    return f"{head} where {format_expression(condition)})"


_EXPRESSION_FORMATTERS: dict[type, Callable[[Any], str]] = {
    ast.Literal: _format_literal,
    ast.Name: lambda e: e.name,
    ast.Attribute: lambda e: f"{_wrapped(e.value, _POSTFIX)}.{e.name}",
    ast.Call: lambda e: f"{e.function}({', '.join(map(format_expression, e.arguments))})",
    ast.ListExpr: lambda e: f"[{', '.join(map(format_expression, e.items))}]",
    ast.Binary: _format_binary,
    ast.Unary: _format_unary,
    ast.Quantifier: _format_quantifier,
    ast.Conditional: _format_conditional,
}


def format_expression(expression: ast.Expr) -> str:
    """One expression on one line, with the parentheses its precedence needs."""
    return _EXPRESSION_FORMATTERS[type(expression)](expression)
