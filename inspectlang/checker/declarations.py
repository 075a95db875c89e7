"""Variables, the product and consumer fields a template requires, and template features: the
small declarations the logic refers to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspectlang import ast, identifiers
from inspectlang.checker.context import Run
from inspectlang.diagnostics import did_you_mean
from inspectlang.manifest import CONSUMER_FIELDS, FEATURE_NAMES, PRODUCT_FIELDS
from inspectlang.property_values import number, span_of, text
from inspectlang.vocabulary import MAX_VARIABLES, NAME


def first_declared(decls: Sequence[Any], decl: Any) -> str:
    """Where the first declaration of `decl`'s name is, for an E012 note."""
    first = next(d for d in decls if d.name == decl.name)
    return f"first declared at line {first.span.line}"


def declare_variables(run: Run) -> None:
    """`variable NAME: numeric|text = INITIAL`: into the scope and the template."""
    report, scope = run.reporter.report, run.scope
    decls = run.declared(ast.VariableDecl)
    run.reporter.limit(len(decls), MAX_VARIABLES, "variables", run.last_span(decls))
    for decl in decls[:MAX_VARIABLES]:
        if NAME.fullmatch(decl.name) is None:
            report(
                "E038",
                f"`{decl.name}` cannot name a variable: a name starts with a letter, then "
                "letters, digits or `_`, at most 64 characters",
                span_of(decl),
            )
            continue
        if decl.name in scope.variables:
            report(
                "E012",
                f"variable `{decl.name}` is declared twice",
                span_of(decl),
                notes=(first_declared(decls, decl),),
            )
            continue
        if decl.variable_type not in ("numeric", "text"):
            report(
                "E019",
                f"a variable is `numeric` or `text`, not `{decl.variable_type}`",
                decl.span,
                did_you_mean(decl.variable_type, ("numeric", "text")),
            )
            continue
        scope.variables[decl.name] = decl.variable_type
        initial: int | float | str | None = (
            number(decl.initial) if decl.variable_type == "numeric" else text(decl.initial)
        )
        if initial is None:
            report(
                "E024",
                f"the initial value of a {decl.variable_type} variable must "
                f"be a {'number' if decl.variable_type == 'numeric' else 'text'}",
                decl.initial.span,
            )
            initial = 0 if decl.variable_type == "numeric" else ""
        run.template.variables.append((decl.name, decl.variable_type, initial))


def check_requirements(run: Run) -> None:
    """`product` and `consumer` blocks: `require FIELD, ...` of the known fields."""
    product = run.declared(ast.ProductDecl)
    consumer = run.declared(ast.ConsumerDecl)
    run.template.product_required = _required(run, product[0] if product else None, "product")
    run.template.consumer_required = _required(run, consumer[0] if consumer else None, "consumer")


def _required(run: Run, decl: ast.ProductDecl | ast.ConsumerDecl | None, kind: str) -> list[str]:
    if decl is None:
        return []
    report, inspection_type = run.reporter.report, run.template.inspection_type
    table = CONSUMER_FIELDS if kind == "consumer" else PRODUCT_FIELDS[inspection_type]
    required: list[str] = []
    for item in decl.items:
        if not isinstance(item, ast.Require):
            report(
                "E010",
                f"{run.properties.describe_item(item)} is not allowed in `{kind}`: "
                "use `require FIELD, ...`",
                item.span,
            )
            continue
        for index, name in enumerate(item.fields):
            span = item.field_spans[index] if index < len(item.field_spans) else item.span
            if name not in table:
                what = "consumer" if kind == "consumer" else inspection_type
                report("E021", f"unknown {what} field `{name}`", span, did_you_mean(name, table))
            elif name in required:
                report("E012", f"`{name}` is required twice", span)
            else:
                required.append(name)
    return required


def declare_features(run: Run) -> None:
    """`feature NAME: on|off` at the top level."""
    report, features = run.reporter.report, run.template.features
    decls = run.declared(ast.FeatureDecl)
    for decl in decls:
        if decl.name not in FEATURE_NAMES:
            report(
                "E027",
                f"unknown feature `{decl.name}`",
                span_of(decl),
                did_you_mean(decl.name, FEATURE_NAMES),
            )
        elif decl.name in features:
            report(
                "E012",
                f"feature `{decl.name}` is declared twice",
                span_of(decl),
                notes=(first_declared(decls, decl),),
            )
        else:
            features[decl.name] = (
                decl.active,
                identifiers.feature_id(run.template.template_id, decl.name),
            )
