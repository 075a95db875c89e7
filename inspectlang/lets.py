"""`let NAME = EXPRESSION`: named derived values, defined once and used in checks, rules, the
verdict and reasons.

A `let` is checked once, on its own (no event subject, no bound item), the first time it is
needed: a use before the declaration works, a `let` that needs itself is E041. Each use is
replaced by a copy of the let's IR marked `"let": NAME`, so the runtime needs nothing new and
both evaluation paths agree by construction; the mark and `logic.lets` let the decompiler write
the names back. Inlining adds depth, loops and nodes where the let is used, so those are checked
against the vocabulary's limits at each use (E004, E037), as the runtime's verifier will count
them.
"""

from __future__ import annotations

from typing import Any

from inspectlang import ast
from inspectlang.expression_types import (
    ERROR,
    EVENT_SUBJECTS,
    QUANTIFIERS,
    ExpressionChecking,
    LetInfo,
)
from inspectlang.manifest import IRNode
from inspectlang.vocabulary import MAX_EXPRESSION_DEPTH, MAX_NODES, MAX_QUANTIFIER_DEPTH, NAME

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


def measure(node: Any, lets: dict[str, LetInfo]) -> tuple[int, int, int]:
    """(depth, quantifier nesting, nodes) of an IR expression; a let's copy counts as the let."""
    if isinstance(node, list):
        found = [measure(item, lets) for item in node]
        return (
            max((d for d, _, _ in found), default=0),
            max((q for _, q, _ in found), default=0),
            sum(n for _, _, n in found),
        )
    if not isinstance(node, dict):
        return 0, 0, 0
    if "let" in node and node["let"] in lets:
        info = lets[node["let"]]
        return info.depth, info.loops, info.size
    depth = loops = 0
    size = 1 if "op" in node else 0
    for key, value in node.items():
        if isinstance(value, dict | list) and key != "span":
            d, q, n = measure(value, lets)
            depth, loops, size = max(depth, d), max(loops, q), size + n
    if "op" in node:
        depth += 1
        if node["op"] in QUANTIFIERS:
            loops += 1
    return depth, loops, size


def check_let(checker: ExpressionChecking, decl: ast.LetDecl) -> LetInfo | None:
    """Check a let on its own; None when it has errors (its uses then report nothing more)."""
    scope = checker.scope
    saved = (checker.depth, checker.loops, dict(scope.locals))
    saved_event = (scope.event, scope.value_type, scope.value_input)
    checker.depth, checker.loops = 0, 0
    scope.locals.clear()
    scope.event, scope.value_type, scope.value_input = None, None, None
    scope.lets_in_progress.add(decl.name)
    try:
        type_, node = checker.check(decl.value)
    finally:
        scope.lets_in_progress.discard(decl.name)
        checker.depth, checker.loops = saved[0], saved[1]
        scope.locals.clear()
        scope.locals.update(saved[2])
        scope.event, scope.value_type, scope.value_input = saved_event
    depth, loops, size = measure(node, scope.lets)
    if type_ != ERROR and size > MAX_NODES:
        checker.error(
            "E037", f"`let {decl.name}` expands to more than {MAX_NODES} nodes", decl.span
        )
        type_ = ERROR
    if type_ == ERROR:  # reported once: its uses are quiet
        scope.lets[decl.name] = LetInfo(ERROR, _nothing(decl.span), 1, 0, 1)
        return None
    info = LetInfo(type_, node, depth, loops, size)
    scope.lets[decl.name] = info
    return info


def _nothing(span: ast.Span) -> IRNode:
    return {"op": "literal", "value": None, "type": "text", "span": span.as_list()}


def use_let(checker: ExpressionChecking, expr: ast.Name) -> tuple[str, IRNode]:
    """The IR of a use of a let: a copy of its IR marked with its name."""
    scope, name = checker.scope, expr.name
    info = scope.lets.get(name)
    if info is None:
        if name in scope.lets_in_progress:
            return checker.error("E041", f"`let {name}` depends on itself", expr.span)
        info = check_let(checker, scope.let_sources[name])
        if info is None:
            return ERROR, _nothing(expr.span)
    if info.type == ERROR:
        return ERROR, _nothing(expr.span)

    if checker.depth - 1 + info.depth > MAX_EXPRESSION_DEPTH:
        return checker.error(
            "E004",
            f"`{name}` here nests its expression deeper than {MAX_EXPRESSION_DEPTH}",
            expr.span,
        )
    if checker.loops + info.loops > MAX_QUANTIFIER_DEPTH:
        return checker.error(
            "E004",
            f"`{name}` here nests more than {MAX_QUANTIFIER_DEPTH} count/any/all/sum",
            expr.span,
        )
    return info.type, {**info.node, "let": name}


def declare_lets(checker: ExpressionChecking, decls: list[ast.LetDecl], taken: set[str]) -> None:
    """Register every let (names checked), then check each one."""
    scope = checker.scope
    for decl in decls:
        if NAME.fullmatch(decl.name) is None or decl.name in RESERVED:
            checker.error(
                "E038",
                f"`{decl.name}` cannot name a let: a name starts with a letter, then letters, "
                "digits or `_`, at most 64 characters, and is not a name expressions already use",
                decl.name_span if decl.name_span.line else decl.span,
            )
            continue
        if decl.name in scope.let_sources or decl.name in taken:
            checker.error(
                "E012",
                f"`{decl.name}` is already declared",
                decl.name_span if decl.name_span.line else decl.span,
            )
            continue
        scope.let_sources[decl.name] = decl
    for decl in decls:
        if scope.let_sources.get(decl.name) is decl and decl.name not in scope.lets:
            check_let(checker, decl)
