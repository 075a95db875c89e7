"""What is judged on the whole template once everything is checked: variables never used
(W002), lets never used (W006) and the size of the logic against the runtime's node limit (E037)."""

from __future__ import annotations

from inspectlang import ast, ir
from inspectlang.checker.context import Run
from inspectlang.checker.scope import LetInfo
from inspectlang.property_values import span_of
from inspectlang.vocabulary import MAX_NODES


def unused_variables(run: Run) -> None:
    used = run.scope.used_variables | run.scope.set_variables
    for decl in run.declared(ast.VariableDecl):
        if decl.name not in used and decl.name in run.scope.variables:
            run.reporter.warn(
                "W002", f"variable `{decl.name}` is never set nor read", span_of(decl)
            )


def size_of(node: ir.Node | None, lets: dict[str, LetInfo]) -> int:
    """The nodes under `node` (itself included), a let's copy counted as the let measured."""
    size = 0
    pending = [] if node is None else [node]
    while pending:
        current = pending.pop()
        let = current.let if isinstance(current, ir.Expression) else None
        if let is not None and let in lets:
            size += lets[let].size
            continue
        size += 1
        for name in current.children:  # ir.child_nodes, inline: every node of the logic
            value = getattr(current, name)
            if isinstance(value, tuple):
                pending.extend(value)
            elif value is not None:
                pending.append(value)
    return size


def unused_lets(run: Run) -> None:
    """W006: a `let` nothing reads (a check, a rule, the verdict, a reason, an `ask when` or
    another let that is read)."""
    scope = run.scope
    for decl in run.declared(ast.LetDecl):
        if scope.let_sources.get(decl.name) is decl and decl.name not in scope.used_lets:
            where = decl.name_span if decl.name_span.line else decl.span
            run.reporter.warn("W006", f"`let {decl.name}` is never used", where)


def count_nodes(run: Run) -> None:
    """E037 past MAX_NODES logic nodes, counted as the runtime's verifier counts them (or a
    few more: statements too), with every use of a let counted in full: a template the
    checker accepts must load (a flat chain of 20,000 conditions is short to write)."""
    template = run.template
    verdict = template.verdict
    parts: list[ir.Node | None] = [s for rule in template.rules for s in rule.body]
    parts += [check.valid for check in template.checks]
    parts += [verdict.approve_when, verdict.otherwise_message]
    parts += [node for _, node in verdict.otherwise_translations.values()]
    parts += [
        node
        for _, when, _, message, translated in (*verdict.disapprove, *verdict.review)
        for node in (when, message, *(node for _, node in translated.values()))
    ]
    parts += [checked.ask_when for checked in template.inputs]
    total = sum(size_of(part, run.scope.lets) for part in parts)
    if total > MAX_NODES:
        rules = template.rules
        span = verdict.span or (rules[0].span if rules else ast.Span(1, 1, 1, 2))
        run.reporter.report(
            "E037",
            f"the template's logic has {total} expression nodes; the limit is {MAX_NODES}",
            span,
        )
