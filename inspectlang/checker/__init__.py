"""The checker: a parsed module -> a `CheckedTemplate` (names resolved, ids fixed, logic as typed
IR) plus every diagnostic of the file in one run.

The checker is the list of stages below, run in order over one `Run` (`checker.context`): each
stage reads the declarations of its kind, whatever their order in the file, and may resolve
names declared by the stages before it. Expressions are typed and turned into IR by
`checker.expressions.ExpressionChecker`. The checker never raises on bad input: every problem
becomes a `Diagnostic` with a stable code.

A new kind of declaration is a new stage: a function of `Run` in the module of its concept, and
a line here (CONTRIBUTING.md).
"""

from __future__ import annotations

from collections.abc import Callable

from inspectlang import ast
from inspectlang.checker import (
    ask,
    checks,
    date_order,
    declarations,
    header,
    images,
    inputs,
    lets,
    meaning,
    ranges,
    rules,
    totals,
    verdict,
)
from inspectlang.checker.checked import TEMPLATE_KINDS, CheckedTemplate
from inspectlang.checker.context import Run
from inspectlang.diagnostics import Diagnostic

__all__ = ["STAGES", "CheckedTemplate", "check_module"]

Stage = Callable[[Run], None]

#: The checker's stages, in the order they run (each may use what the earlier ones declared).
STAGES: tuple[tuple[str, Stage], ...] = (
    ("includes resolved", header.check_includes_resolved),
    ("header", header.check_header),
    ("blocks given once", header.check_single_blocks),
    ("settings", header.check_settings),
    ("variables", declarations.declare_variables),
    ("product and consumer requirements", declarations.check_requirements),
    ("features", declarations.declare_features),
    ("images", images.declare_images),
    ("inputs", inputs.declare_inputs),
    ("date orders", date_order.check_date_order),
    ("lets", lets.declare_lets),
    ("ask when", ask.check_ask_when),
    ("checks", checks.declare_checks),
    ("rules", rules.check_rules),
    ("verdict", verdict.check_verdict),
    ("divisors that may be 0", ranges.warn_divisors),
    ("meaning", meaning.check_meaning),
    ("check order", checks.order_checks),
    ("unused variables", totals.unused_variables),
    ("unused lets", totals.unused_lets),
    ("logic size", totals.count_nodes),
    ("lets for the manifest", lets.collect_lets),
)


def check_module(
    module: ast.Module, *, template_kind: str = "created"
) -> tuple[CheckedTemplate | None, list[Diagnostic]]:
    """Check a parsed module: the checked template (None when there is any error) and every
    diagnostic (errors and warnings) in source order. `template_kind` is `created` or `built-in`
    (a ValueError otherwise: it is the caller's mistake, not the template's)."""
    if template_kind not in TEMPLATE_KINDS:
        raise ValueError(f"template_kind must be one of {TEMPLATE_KINDS}, not {template_kind!r}")
    run = Run.start(module, template_kind)
    for _name, stage in STAGES:
        stage(run)
    diagnostics = run.reporter.diagnostics
    diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
    if run.reporter.has_errors():
        return None, diagnostics
    return run.template, diagnostics
