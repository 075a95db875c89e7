"""What is judged on the whole template once everything is checked: variables never used
(W002) and the size of the logic against the runtime's node limit (E037)."""

from __future__ import annotations

from inspectlang import ast, ir
from inspectlang.checker.context import Run
from inspectlang.checker.expressions import measure
from inspectlang.property_values import span_of
from inspectlang.vocabulary import MAX_NODES


def unused_variables(run: Run) -> None:
    used = run.scope.used_variables | run.scope.set_variables
    for decl in run.declared(ast.VariableDecl):
        if decl.name not in used and decl.name in run.scope.variables:
            run.reporter.warn(
                "W002", f"variable `{decl.name}` is never set nor read", span_of(decl)
            )


def count_nodes(run: Run) -> None:
    """E037 past MAX_NODES logic nodes, counted as the runtime's verifier counts them (or a
    few more: statements too), with every use of a let counted in full: a template the
    checker accepts must load (a flat chain of 20,000 conditions is short to write)."""
    template = run.template
    verdict = template.verdict
    parts: list[ir.Node | None] = [s for rule in template.rules for s in rule.body]
    parts += [check.valid for check in template.checks]
    parts += [verdict.approve_when, verdict.otherwise_message]
    parts += [node for _, when, _, message in verdict.disapprove for node in (when, message)]
    parts += [checked.ask_when for checked in template.inputs]
    total = sum(measure(part, run.scope.lets)[2] for part in parts)
    if total > MAX_NODES:
        rules = template.rules
        span = verdict.span or (rules[0].span if rules else ast.Span(1, 1, 1, 2))
        run.reporter.report(
            "E037",
            f"the template's logic has {total} expression nodes; the limit is {MAX_NODES}",
            span,
        )
