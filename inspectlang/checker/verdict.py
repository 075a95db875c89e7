"""The `verdict`: `disapprove "REASON" when CONDITION` lines in order, `approve when`, and the
`otherwise` reason; a reason's `{...}` values become a text-typed IR node (the literal pieces
and `text(VALUE)` of each value joined with `+` as a balanced tree, so a long reason stays
shallow)."""

from __future__ import annotations

from inspectlang import ast, ir
from inspectlang.checker.checked import CheckedVerdict, Translations
from inspectlang.checker.context import Run
from inspectlang.checker.expressions import constant_boolean
from inspectlang.checker.scope import ERROR, describe
from inspectlang.diagnostics import did_you_mean
from inspectlang.property_values import span_of
from inspectlang.reasons import Columns, split
from inspectlang.vocabulary import MAX_TEXT_LENGTH, PLAIN_VALUE, TEXT, accepts, chain_depth


def check_verdict(run: Run) -> None:
    report, warn = run.reporter.report, run.reporter.warn
    expressions = run.expressions
    verdict = run.template.verdict = CheckedVerdict()
    found = run.declared(ast.VerdictDecl)
    if not found:
        headers = run.declared(ast.TemplateDecl)
        span = headers[0].span if headers else ast.Span(1, 1, 1, 1)
        report("E034", "the template has no `verdict`", span)
        return
    decl = found[0]
    verdict.span = decl.span
    always_disapproved = False
    approve_seen: ast.Approve | None = None
    for item in decl.items:
        if isinstance(item, ast.Disapprove):
            node = expressions.condition(item.condition, "a disapproval condition")
            verdict.disapprove.append(
                (
                    _reason(run, item.reason, item.span),
                    node,
                    item.span,
                    message(run, item.reason, item.reason_span),
                    translations(run, item),
                )
            )
            constant = constant_boolean(item.condition)
            if constant is False:
                warn("W003", "this disapproval can never match", item.condition.span)
            elif constant is True:
                always_disapproved = True
                report(
                    "E034",
                    "this disapproval always matches: every inspection is disapproved",
                    item.condition.span,
                )
        elif isinstance(item, ast.Review):
            node = expressions.condition(item.condition, "a review condition")
            verdict.review.append(
                (
                    _reason(run, item.reason, item.span),
                    node,
                    item.span,
                    message(run, item.reason, item.reason_span),
                    translations(run, item),
                )
            )
            if constant_boolean(item.condition) is False:
                warn("W003", "this review can never match", item.condition.span)
        elif isinstance(item, ast.Approve):
            if approve_seen is not None:
                report("E012", "`approve` is given twice", item.span)
                continue
            approve_seen = item
            verdict.approve_when = expressions.condition(item.condition, "the approval condition")
            constant = constant_boolean(item.condition)
            if constant is False and not always_disapproved:
                report(
                    "E034",
                    "`approve when` is always false: no inspection can be approved",
                    item.condition.span,
                )
            elif constant is True:
                warn(
                    "W001",
                    "`approve when` is always true: write nothing instead",
                    item.condition.span,
                )
        elif isinstance(item, ast.Otherwise):
            if verdict.otherwise is not None:
                report("E012", "`otherwise` is given twice", item.span)
            verdict.otherwise = _reason(run, item.reason, item.span)
            verdict.otherwise_message = message(run, item.reason, item.reason_span)
            verdict.otherwise_translations = translations(run, item)
        else:
            written = getattr(item, "key", None) or getattr(item, "words", "")
            first = written.split()[0] if written else ""
            report(
                "E010",
                f"{run.properties.describe_item(item)} is not allowed in `verdict`",
                item.span,
                did_you_mean(first, ("approve", "disapprove", "review", "otherwise")),
            )
    if not decl.items:
        warn(
            "W004",
            "the verdict is empty: every inspection is approved as soon as it is finished",
            decl.span,
        )


def translations(run: Run, item: ast.Disapprove | ast.Review | ast.Otherwise) -> Translations:
    """The `reason LOCALE: "TEXT"` lines under a verdict line: locale -> (text, its text node
    when it shows values). Each is checked as the line's own reason is (its `{...}` values at
    their positions), in a locale the header declares (`E028`); values that differ from the
    default reason's are `W007` (a translation that shows something else is likely a slip)."""
    found: Translations = {}
    if not item.translations:
        return found
    reader, reporter = run.properties, run.reporter
    props = reader.properties(
        item.translations, ("reason",), "a verdict line (only `reason LOCALE:`)", ("reason",)
    )
    default = run.properties.locales[0]
    expected = _values(item.reason)
    for key, prop in props.items():
        locale = key.partition(" ")[2]
        if not locale:
            reporter.report(
                "E019",
                "the reason is the text on the line: under it, write its translations as "
                '`reason LOCALE: "TEXT"`',
                span_of(prop),
            )
            continue
        if locale not in reader.locales:  # E028 already reported
            continue
        if locale == default:
            reporter.report(
                "E012",
                f"the reason in the default locale `{default}` is the text on the line",
                span_of(prop),
            )
            continue
        text = reader.text_value(prop)
        if text is None:
            continue
        value_span = prop.values[0].span
        found[locale] = (text, message(run, text, value_span))
        if _values(text) != expected:
            reporter.warn(
                "W007",
                f"the `{locale}` reason shows other values than the line's "
                f"({_listed(_values(text))} instead of {_listed(expected)})",
                value_span,
            )
    return found


def _values(reason: str) -> list[str]:
    """The sources of a reason's `{...}` values, without spaces, sorted: what W007 compares."""
    if "{" not in reason:
        return []
    pieces = split(reason)[0]
    return sorted("".join(p[0].split()) for p in pieces if isinstance(p, tuple))


def _listed(values: list[str]) -> str:
    return ", ".join(f"`{{{value}}}`" for value in values) if values else "no values"


def _reason(run: Run, reason: str, span: ast.Span) -> str:
    if len(reason) > MAX_TEXT_LENGTH:
        run.reporter.report("E037", f"text longer than {MAX_TEXT_LENGTH} characters", span)
    return reason


def message(run: Run, reason: str, span: ast.Span) -> ir.Expression | None:
    """The text node of a reason with values (None when it has no braces). Each value is
    checked like any expression (unknown names are errors at their position inside the text)
    and must give a plain value (a number, text, boolean, date or a list of those)."""
    if "{" not in reason and "}" not in reason:
        return None
    # The parser (and lark) is imported only for a reason with braces: the compile path of a
    # cached template never needs it (tests/language/test_cold_start.py).
    from inspectlang.parser import parse_expression_at

    expressions, reporter = run.expressions, run.reporter
    filename = reporter.filename
    pieces, problems = split(reason)
    column_of = Columns(reason, span)
    where = span.as_tuple()
    for text, index in problems:
        column = column_of(index)
        reporter.report("E001", text, ast.Span(span.line, column, span.line, column + 1))
    nodes: list[ir.Expression] = []
    for piece in pieces:
        if isinstance(piece, str):
            nodes.append(ir.Literal(piece, TEXT, where))
            continue
        source, index = piece
        column = column_of(index)
        if not source.strip():
            reporter.report(
                "E001",
                "empty `{}` in a text: write `{{}}` for braces",
                ast.Span(span.line, column - 1, span.line, column + 1),
            )
            continue
        expr, found = parse_expression_at(source, span.line, column, filename)
        reporter.diagnostics.extend(found)
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
        nodes.append(ir.Call("text", (node,), TEXT, expr.span.as_tuple()))
    if not nodes:
        return ir.Literal("", TEXT, where)
    return _joined(nodes, where)


def _joined(nodes: list[ir.Expression], span: ir.Span) -> ir.Expression:
    if len(nodes) == 1:
        return nodes[0]
    middle = len(nodes) // 2
    return ir.Binary("+", _joined(nodes[:middle], span), _joined(nodes[middle:], span), TEXT, span)
