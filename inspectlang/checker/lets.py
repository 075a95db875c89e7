"""`let NAME = EXPRESSION`: named derived values, defined once and used in checks, rules, the
verdict and reasons. This stage registers every let's name, then checks each one on its own
(`ExpressionChecker.check_let`; a let used earlier is already checked then). Each use becomes a
copy of the let's IR marked with its name (`ExpressionChecker.let`); the mark and `logic.lets`
let the decompiler write the names back."""

from __future__ import annotations

from inspectlang import ast
from inspectlang.checker.context import Run
from inspectlang.checker.scope import EVENT_SUBJECTS
from inspectlang.checker.walk import dependencies_first
from inspectlang.vocabulary import NAME

#: Names a `let` cannot take: they already mean something in expressions.
RESERVED = frozenset(
    {
        "inputs",
        "images",
        "damages",
        "validations",
        "checks",
        "consumer",
        "product",
        "true",
        "false",
        *EVENT_SUBJECTS,
    }
)


def declare_lets(run: Run) -> None:
    """Register every let (names checked), then check each one."""
    scope, report = run.scope, run.reporter.report
    decls = run.declared(ast.LetDecl)
    for decl in decls:
        where = decl.name_span if decl.name_span.line else decl.span
        if NAME.fullmatch(decl.name) is None or decl.name in RESERVED:
            report(
                "E038",
                f"`{decl.name}` cannot name a let: a name starts with a letter, then letters, "
                "digits or `_`, at most 64 characters, and is not a name expressions already use",
                where,
            )
            continue
        if decl.name in scope.let_sources or decl.name in scope.variables:
            report("E012", f"`{decl.name}` is already declared", where)
            continue
        scope.let_sources[decl.name] = decl
    for decl, in_progress in dependencies_first(scope.let_sources, decls):
        if scope.let_sources.get(decl.name) is decl and decl.name not in scope.lets:
            scope.lets_in_progress.update(in_progress)
            try:
                run.expressions.check_let(decl)
            finally:
                scope.lets_in_progress.difference_update(in_progress)


def collect_lets(run: Run) -> None:
    """The template's lets, in file order, for `logic.lets` (those that checked)."""
    scope = run.scope
    run.template.lets = [
        (let.name, scope.lets[let.name].node, let.span)
        for let in run.declared(ast.LetDecl)
        if let.name in scope.lets and scope.let_sources.get(let.name) is let
    ]
