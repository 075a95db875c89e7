"""`on EVENT` rules: what each reacts to (an event that can never happen is E035) and its body,
`set` and `if` statements, as typed IR statements."""

from __future__ import annotations

from inspectlang import ast, identifiers, ir
from inspectlang.checker.checked import CheckedRule
from inspectlang.checker.context import Run
from inspectlang.checker.expressions import constant_boolean
from inspectlang.checker.scope import ERROR, compatible, describe
from inspectlang.diagnostics import did_you_mean
from inspectlang.manifest import RULE_EVENTS, VALIDATION_NAMES
from inspectlang.property_values import norm
from inspectlang.vocabulary import INPUT_VALUE_TYPES, MAX_EXPRESSION_DEPTH, MAX_RULES

#: Events in words (as written after `on`) -> the manifest's event names.
EVENTS: dict[str, str] = {event.replace("_", " "): event for event in RULE_EVENTS}


def check_rules(run: Run) -> None:
    """Every rule (at most MAX_RULES), in file order."""
    decls = run.declared(ast.RuleDecl)
    if run.reporter.limit(len(decls), MAX_RULES, "rules", run.last_span(decls)):
        run.template.rules = [_rule(run, index, decl) for index, decl in enumerate(decls)]


def _rule(run: Run, index: int, decl: ast.RuleDecl) -> CheckedRule:
    report, scope, template = run.reporter.report, run.scope, run.template
    spec = decl.event
    event = EVENTS.get(norm(spec.event))
    rule = CheckedRule(
        identifiers.rule_id(template.template_id, index),
        event or "finish",
        None,
        None,
        None,
        (),
        decl.span,
    )
    if event is None:
        report(
            "E010",
            f"unknown event `{spec.event}`",
            spec.span,
            did_you_mean(norm(spec.event), EVENTS),
        )
        rule.body = statements(run, decl.body)
        return rule
    scope.event, scope.value_type, scope.value_input = event, None, None
    target_span = spec.target_span if spec.target_span.line else spec.span
    if spec.of_image is not None and not event.startswith("validation"):
        report("E019", "`of IMAGE` narrows validation events only", spec.span)
    if event == "input_set":
        if spec.target is not None:
            ref = scope.inputs.get(spec.target)
            if ref is None:
                report(
                    "E035",
                    f"no input `{spec.target}`: the rule can never fire",
                    target_span,
                    did_you_mean(spec.target, scope.inputs),
                )
            else:
                rule.input = ref.identifier
                scope.value_type = INPUT_VALUE_TYPES.get(ref.input_type, ERROR)
                scope.value_input = spec.target
                asked = next(i.stages for i in template.inputs if i.identifier == ref.identifier)
                if not asked:
                    report(
                        "E035",
                        f"input `{spec.target}` is asked at no stage: the rule can never fire",
                        target_span,
                    )
        elif not template.inputs:
            report("E035", "the template has no inputs: the rule can never fire", spec.span)
    elif event in ("image_uploaded", "image_processed"):
        rule.image = _rule_image(run, spec.target, target_span, spec.span)
    elif event.startswith("validation"):
        _rule_validation(run, rule, spec, target_span)
    elif spec.target is not None:
        report("E019", f"`on {norm(spec.event)}` takes no name", target_span)
    elif event == "damage_declared":
        feature = template.features.get("damage_declaration")
        damage_validated = any(
            v.name == "damage" and v.run for image in template.images for v in image.validations
        )
        if not (feature and feature[0]) and not damage_validated:
            report(
                "E035",
                "no damage can be declared: turn on "
                "`feature damage_declaration: on` or validate `damage` on an image",
                spec.span,
            )
    rule.body = statements(run, decl.body)
    scope.event = None
    return rule


def _rule_image(run: Run, name: str | None, span: ast.Span, event_span: ast.Span) -> str | None:
    report = run.reporter.report
    if name is None:
        if not run.template.images:
            report("E035", "the template has no images: the rule can never fire", event_span)
        return None
    ref = run.scope.images.get(name)
    if ref is None:
        report(
            "E035",
            f"no image `{name}`: the rule can never fire",
            span,
            did_you_mean(name, run.scope.images),
        )
        return None
    return ref.identifier


def _rule_validation(run: Run, rule: CheckedRule, spec: ast.EventSpec, span: ast.Span) -> None:
    report = run.reporter.report
    images = run.template.images
    if spec.of_image is not None:
        of_span = spec.of_image_span if spec.of_image_span.line else spec.span
        rule.image = _rule_image(run, spec.of_image, of_span, spec.span)
        if rule.image is None:
            return
        images = [i for i in images if i.identifier == rule.image]
    candidates = [v for image in images for v in image.validations]
    name = spec.target
    if name is not None:
        if name not in VALIDATION_NAMES:
            report(
                "E026",
                f"unknown validation `{name}`",
                span,
                did_you_mean(name, VALIDATION_NAMES),
            )
            return
        rule.validation = name
        candidates = [v for v in candidates if v.name == name]
        where = f"image `{spec.of_image}`" if spec.of_image else "any image"
        if not candidates:
            report("E035", f"{where} does not validate `{name}`: the rule can never fire", span)
            return
    if candidates and not any(v.run for v in candidates):
        report("E035", "the validation is `not run`: the rule can never fire", span)
    elif not candidates:
        report("E035", "no image has validations: the rule can never fire", spec.span)


def statements(
    run: Run, body: tuple[ast.Statement, ...], depth: int = 0
) -> tuple[ir.Statement, ...]:
    """A rule body as IR statements."""
    nodes: list[ir.Statement] = []
    if depth > MAX_EXPRESSION_DEPTH and body:
        run.reporter.report("E004", f"`if` nested deeper than {MAX_EXPRESSION_DEPTH}", body[0].span)
        return ()
    for statement in body:
        if isinstance(statement, ast.SetStatement):
            nodes.append(_set_statement(run, statement))
        elif isinstance(statement, ast.IfStatement):
            nodes.append(_if_statement(run, statement, depth))
        else:
            raise ir.UnknownNode(statement, "checker")
    return tuple(nodes)


def _if_statement(run: Run, statement: ast.IfStatement, depth: int) -> ir.IfStatement:
    constant = constant_boolean(statement.condition)
    condition = run.expressions.condition(statement.condition, "the condition")
    if constant is False:
        run.reporter.report(
            "E035",
            "the condition is always false: this branch never runs",
            statement.condition.span,
        )
    elif constant is True:
        run.reporter.warn("W001", "the condition is always true", statement.condition.span)
    return ir.IfStatement(
        condition,
        statements(run, statement.then, depth + 1),
        statements(run, statement.otherwise, depth + 1),
        statement.span.as_tuple(),
    )


def _set_statement(run: Run, statement: ast.SetStatement) -> ir.SetStatement:
    scope = run.scope
    value_type, value = run.expressions.check(statement.value)
    name = statement.name
    span = statement.name_span if statement.name_span.line else statement.span
    variable_type = scope.variables.get(name)
    if variable_type is None:
        run.reporter.report(
            "E025",
            f"`{name}` is not a variable: only variables can be set",
            span,
            did_you_mean(name, scope.variables),
        )
    else:
        scope.set_variables.add(name)
        wanted = "number" if variable_type == "numeric" else "text"
        if not compatible(value_type, wanted):
            run.reporter.report(
                "E023",
                f"cannot set {variable_type} variable `{name}` to a {describe(value_type)}",
                statement.value.span,
            )
    return ir.SetStatement(name, value, statement.span.as_tuple())
