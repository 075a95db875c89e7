"""The checker: a parsed module -> a `CheckedTemplate` (names resolved, ids fixed, logic as IR)
plus every diagnostic of the file in one run.

Declarations are read in dependency order (header, settings, variables, features, images, inputs,
checks, rules, verdict) so that each stage can resolve names declared by the earlier ones, whatever
their order in the file. Expressions are typed and turned into IR by `types.ExpressionChecker`;
input properties are read by `schema.read_input_property`. The checker never raises on bad input:
every problem becomes a `Diagnostic` with a stable code.

The checker is built in layers: `check_properties.PropertyChecker` (diagnostics, property
readers), `check_declarations.DeclarationChecker` (header to inputs) and `Checker` here (checks,
rules, verdict and the whole run); `checked` holds what it produces.
"""

from __future__ import annotations

from typing import Any

from inspectlang import ast, identifiers, lets, reasons
from inspectlang.check_ask import check_ask_when
from inspectlang.check_declarations import DeclarationChecker, first_declared
from inspectlang.checked import (
    CHECK_PROPERTIES,
    EVENTS,
    MAX_CHECKS,
    MAX_IMAGES,
    MAX_INPUTS,
    MAX_RULES,
    TEMPLATE_KINDS,
    CheckedCheck,
    CheckedRule,
    CheckedTemplate,
    CheckedVerdict,
)
from inspectlang.diagnostics import Diagnostic, did_you_mean
from inspectlang.expression_types import (
    ERROR,
    compatible,
    describe,
)
from inspectlang.ir import UnknownNode
from inspectlang.manifest import (
    VALIDATION_NAMES,
    IRNode,
)
from inspectlang.property_values import first_given, norm, span_of
from inspectlang.types import constant_boolean
from inspectlang.vocabulary import (
    INPUT_VALUE_TYPES,
    MAX_EXPRESSION_DEPTH,
    MAX_NODES,
    MAX_TEXT_LENGTH,
)

__all__ = ["CheckedTemplate", "Checker", "check_module"]


class Checker(DeclarationChecker):
    """Checks one module; `run()` returns the checked template (None on errors) and diagnostics."""

    # -- the whole module --------------------------------------------------------------------

    def run(self) -> tuple[CheckedTemplate | None, list[Diagnostic]]:
        by_kind: dict[type, list[Any]] = {}
        for declaration in self.module.declarations:
            by_kind.setdefault(type(declaration), []).append(declaration)
        headers = by_kind.get(ast.TemplateDecl, [])
        self.header(headers)
        for kind in (ast.SettingsDecl, ast.ProductDecl, ast.ConsumerDecl, ast.VerdictDecl):
            for extra in by_kind.get(kind, [])[1:]:
                self.report("E012", "this block may appear only once", extra.span)
        settings = by_kind.get(ast.SettingsDecl, [])
        self.settings(settings[0] if settings else None)
        self.declare_variables(by_kind.get(ast.VariableDecl, []))
        product = by_kind.get(ast.ProductDecl, [])
        consumer = by_kind.get(ast.ConsumerDecl, [])
        product_required = self.requirements(product[0] if product else None, "product")
        consumer_required = self.requirements(consumer[0] if consumer else None, "consumer")
        self.declare_features(by_kind.get(ast.FeatureDecl, []))
        images = by_kind.get(ast.ImageDecl, [])
        if self.limit(
            len(images), MAX_IMAGES, "images", images[-1].span if images else ast.NO_SPAN
        ):
            self.declare_images(images)
        inputs = by_kind.get(ast.InputDecl, [])
        if self.limit(
            len(inputs), MAX_INPUTS, "inputs", inputs[-1].span if inputs else ast.NO_SPAN
        ):
            self.declare_inputs(inputs)
        let_decls: list[ast.LetDecl] = by_kind.get(ast.LetDecl, [])
        lets.declare_lets(self.expressions, let_decls, set(self.scope.variables))
        check_ask_when(self.inputs, self.expressions, self.report)
        check_decls = by_kind.get(ast.CheckDecl, [])
        checks: list[CheckedCheck] = []
        if self.limit(
            len(check_decls),
            MAX_CHECKS,
            "checks",
            check_decls[-1].span if check_decls else ast.NO_SPAN,
        ):
            checks = self.declare_checks(check_decls)
        rule_decls = by_kind.get(ast.RuleDecl, [])
        rules: list[CheckedRule] = []
        if self.limit(
            len(rule_decls), MAX_RULES, "rules", rule_decls[-1].span if rule_decls else ast.NO_SPAN
        ):
            rules = [self.rule(index, decl) for index, decl in enumerate(rule_decls)]
        verdicts = by_kind.get(ast.VerdictDecl, [])
        verdict = self.verdict(verdicts[0] if verdicts else None, headers)
        checks = self.order_checks(checks)
        self.unused_variables(by_kind.get(ast.VariableDecl, []))
        self.count_nodes(rules, checks, verdict)
        self.diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
        if any(d.severity == "error" for d in self.diagnostics):
            return None, self.diagnostics
        checked = CheckedTemplate(
            name=self.name,
            template_id=self.template_id,
            inspection_type=self.inspection_type,
            template_kind=self.template_kind,
            filename=self.filename,
            locales=self.locales,
            parameters=self.parameters,
            variables=self.variables,
            images=self.images,
            inputs=self.inputs,
            features=[(name, active, id_) for name, (active, id_) in self.features.items()],
            product_required=product_required,
            consumer_required=consumer_required,
            rules=rules,
            checks=checks,
            verdict=verdict,
            lets=[
                (let.name, self.scope.lets[let.name].node, let.span)
                for let in let_decls
                if let.name in self.scope.lets and self.scope.let_sources.get(let.name) is let
            ],
        )
        return checked, self.diagnostics

    def count_nodes(
        self, rules: list[CheckedRule], checks: list[CheckedCheck], verdict: CheckedVerdict
    ) -> None:
        """E037 past MAX_NODES logic nodes, counted as the runtime's verifier counts them (or a
        few more: statements too), with every use of a let counted in full: a template the
        checker accepts must load (a flat chain of 20,000 conditions is short to write)."""
        parts: list[Any] = [rule.body for rule in rules]
        parts += [check.valid for check in checks]
        parts += [verdict.approve_when, verdict.otherwise_message]
        parts += [[when, message] for _, when, _, message in verdict.disapprove]
        parts += [checked.ask_when for checked in self.inputs]
        total = sum(lets.measure(part, self.scope.lets)[2] for part in parts)
        if total > MAX_NODES:
            span = verdict.span or (rules[0].span if rules else ast.Span(1, 1, 1, 2))
            self.report(
                "E037",
                f"the template's logic has {total} expression nodes; the limit is {MAX_NODES}",
                span,
            )

    # -- checks, rules and verdict -----------------------------------------------------------

    def declare_checks(self, decls: list[ast.CheckDecl]) -> list[CheckedCheck]:
        unique: list[ast.CheckDecl] = []
        for decl in decls:
            if decl.name in self.scope.checks:
                self.report(
                    "E012",
                    f"check `{decl.name}` is declared twice",
                    span_of(decl),
                    notes=(first_declared(decls, decl),),
                )
                continue
            self.scope.checks[decl.name] = identifiers.check_id(self.template_id, decl.name)
            unique.append(decl)
        checks: list[CheckedCheck] = []
        for decl in unique:
            props = self.properties(decl.items, CHECK_PROPERTIES, f"check `{decl.name}`")
            condition = props.get("valid when")
            self.scope.used_checks = {}
            if condition is None:
                self.report(
                    "E011", f"check `{decl.name}` needs `valid when: CONDITION`", span_of(decl)
                )
                continue
            value = self.single(condition, "condition")
            if value is None or isinstance(value, ast.Quantity | ast.Size):
                continue
            node = self.expressions.condition(value, "`valid when`")
            if constant_boolean(value) is not None:
                self.warn(
                    "W001",
                    f"check `{decl.name}` is always "
                    f"{'valid' if constant_boolean(value) else 'invalid'}",
                    value.span,
                )
            checks.append(
                CheckedCheck(
                    self.scope.checks[decl.name],
                    decl.name,
                    first_given(self.text_value(props.get("name")), default=decl.name),
                    self.text_value(props.get("description")) or "",
                    node,
                    list(self.scope.used_checks),
                    decl.span,
                )
            )
        return checks

    def order_checks(self, checks: list[CheckedCheck]) -> list[CheckedCheck]:
        """Checks in dependency order (source order otherwise); cycles are reported (E033)."""
        by_key = {check.key: check for check in checks}
        ordered: list[CheckedCheck] = []
        state: dict[str, int] = {}  # 1: being visited, 2: done
        reported: set[frozenset[str]] = set()

        def visit(key: str, path: list[str]) -> None:
            state[key] = 1
            for dependency in by_key[key].depends:
                if dependency not in by_key:
                    continue
                if state.get(dependency) == 1:
                    cycle = [*path[path.index(dependency) :], dependency]
                    if frozenset(cycle) not in reported:
                        reported.add(frozenset(cycle))
                        self.report(
                            "E033",
                            "checks refer to each other in a cycle: " + " -> ".join(cycle),
                            span_of(by_key[dependency]),
                        )
                elif dependency not in state:
                    visit(dependency, [*path, dependency])
            state[key] = 2
            ordered.append(by_key[key])

        for check in checks:
            if check.key not in state:
                visit(check.key, [check.key])
        return ordered

    def rule(self, index: int, decl: ast.RuleDecl) -> CheckedRule:
        spec = decl.event
        event = EVENTS.get(norm(spec.event))
        rule = CheckedRule(
            identifiers.rule_id(self.template_id, index),
            event or "finish",
            None,
            None,
            None,
            [],
            decl.span,
        )
        if event is None:
            self.report(
                "E010",
                f"unknown event `{spec.event}`",
                spec.span,
                did_you_mean(norm(spec.event), EVENTS),
            )
            rule.body = self.statements(decl.body)
            return rule
        self.scope.event, self.scope.value_type, self.scope.value_input = event, None, None
        target_span = spec.target_span if spec.target_span.line else spec.span
        if spec.of_image is not None and not event.startswith("validation"):
            self.report("E019", "`of IMAGE` narrows validation events only", spec.span)
        if event == "input_set":
            if spec.target is not None:
                ref = self.scope.inputs.get(spec.target)
                if ref is None:
                    self.report(
                        "E035",
                        f"no input `{spec.target}`: the rule can never fire",
                        target_span,
                        did_you_mean(spec.target, self.scope.inputs),
                    )
                else:
                    rule.input = ref.identifier
                    self.scope.value_type = INPUT_VALUE_TYPES.get(ref.input_type, ERROR)
                    self.scope.value_input = spec.target
                    asked = next(i.stages for i in self.inputs if i.identifier == ref.identifier)
                    if not asked:
                        self.report(
                            "E035",
                            f"input `{spec.target}` is asked at no stage: the rule can never fire",
                            target_span,
                        )
            elif not self.inputs:
                self.report(
                    "E035", "the template has no inputs: the rule can never fire", spec.span
                )
        elif event in ("image_uploaded", "image_processed"):
            rule.image = self.rule_image(spec.target, target_span, spec.span)
        elif event.startswith("validation"):
            self.rule_validation(rule, spec, target_span)
        elif spec.target is not None:
            self.report("E019", f"`on {norm(spec.event)}` takes no name", target_span)
        elif event == "damage_declared":
            feature = self.features.get("damage_declaration")
            damage_validated = any(
                v.name == "damage" and v.run for image in self.images for v in image.validations
            )
            if not (feature and feature[0]) and not damage_validated:
                self.report(
                    "E035",
                    "no damage can be declared: turn on "
                    "`feature damage_declaration: on` or validate `damage` on an image",
                    spec.span,
                )
        rule.body = self.statements(decl.body)
        self.scope.event = None
        return rule

    def rule_image(self, name: str | None, span: ast.Span, event_span: ast.Span) -> str | None:
        if name is None:
            if not self.images:
                self.report(
                    "E035", "the template has no images: the rule can never fire", event_span
                )
            return None
        ref = self.scope.images.get(name)
        if ref is None:
            self.report(
                "E035",
                f"no image `{name}`: the rule can never fire",
                span,
                did_you_mean(name, self.scope.images),
            )
            return None
        return ref.identifier

    def rule_validation(self, rule: CheckedRule, spec: ast.EventSpec, span: ast.Span) -> None:
        images = self.images
        if spec.of_image is not None:
            of_span = spec.of_image_span if spec.of_image_span.line else spec.span
            rule.image = self.rule_image(spec.of_image, of_span, spec.span)
            if rule.image is None:
                return
            images = [i for i in self.images if i.identifier == rule.image]
        candidates = [v for image in images for v in image.validations]
        name = spec.target
        if name is not None:
            if name not in VALIDATION_NAMES:
                self.report(
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
                self.report(
                    "E035", f"{where} does not validate `{name}`: the rule can never fire", span
                )
                return
        if candidates and not any(v.run for v in candidates):
            self.report("E035", "the validation is `not run`: the rule can never fire", span)
        elif not candidates:
            self.report("E035", "no image has validations: the rule can never fire", spec.span)

    def statements(self, body: tuple[ast.Statement, ...], depth: int = 0) -> list[IRNode]:
        nodes: list[IRNode] = []
        if depth > MAX_EXPRESSION_DEPTH and body:
            self.report("E004", f"`if` nested deeper than {MAX_EXPRESSION_DEPTH}", body[0].span)
            return nodes
        for statement in body:
            if isinstance(statement, ast.SetStatement):
                nodes.append(self.set_statement(statement))
            elif isinstance(statement, ast.IfStatement):
                constant = constant_boolean(statement.condition)
                condition = self.expressions.condition(statement.condition, "the condition")
                if constant is False:
                    self.report(
                        "E035",
                        "the condition is always false: this branch never runs",
                        statement.condition.span,
                    )
                elif constant is True:
                    self.warn("W001", "the condition is always true", statement.condition.span)
                nodes.append(
                    {
                        "op": "if",
                        "cond": condition,
                        "then": self.statements(statement.then, depth + 1),
                        "else": self.statements(statement.otherwise, depth + 1),
                        "span": statement.span.as_list(),
                    }
                )
            else:
                raise UnknownNode(statement, "checker")
        return nodes

    def set_statement(self, statement: ast.SetStatement) -> IRNode:
        value_type, value = self.expressions.check(statement.value)
        name = statement.variable
        span = statement.variable_span if statement.variable_span.line else statement.span
        variable_type = self.scope.variables.get(name)
        if variable_type is None:
            self.report(
                "E025",
                f"`{name}` is not a variable: only variables can be set",
                span,
                did_you_mean(name, self.scope.variables),
            )
        else:
            self.set_variables.add(name)
            wanted = "number" if variable_type == "numeric" else "text"
            if not compatible(value_type, wanted):
                self.report(
                    "E023",
                    f"cannot set {variable_type} variable `{name}` to a {describe(value_type)}",
                    statement.value.span,
                )
        return {"op": "set", "name": name, "value": value, "span": statement.span.as_list()}

    def verdict(
        self, decl: ast.VerdictDecl | None, headers: list[ast.TemplateDecl]
    ) -> CheckedVerdict:
        verdict = CheckedVerdict()
        if decl is None:
            span = headers[0].span if headers else ast.Span(1, 1, 1, 1)
            self.report("E034", "the template has no `verdict`", span)
            return verdict
        verdict.span = decl.span
        always_disapproved = False
        approve_seen: ast.Approve | None = None
        for item in decl.items:
            if isinstance(item, ast.Disapprove):
                node = self.expressions.condition(item.condition, "a disapproval condition")
                verdict.disapprove.append(
                    (
                        self.reason(item.reason, item.span),
                        node,
                        item.span,
                        reasons.message(
                            self.expressions, item.reason, item.reason_span, self.filename
                        ),
                    )
                )
                constant = constant_boolean(item.condition)
                if constant is False:
                    self.warn("W003", "this disapproval can never match", item.condition.span)
                elif constant is True:
                    always_disapproved = True
                    self.report(
                        "E034",
                        "this disapproval always matches: every inspection is disapproved",
                        item.condition.span,
                    )
            elif isinstance(item, ast.Approve):
                if approve_seen is not None:
                    self.report("E012", "`approve` is given twice", item.span)
                    continue
                approve_seen = item
                verdict.approve_when = self.expressions.condition(
                    item.condition, "the approval condition"
                )
                constant = constant_boolean(item.condition)
                if constant is False and not always_disapproved:
                    self.report(
                        "E034",
                        "`approve when` is always false: no inspection can be approved",
                        item.condition.span,
                    )
                elif constant is True:
                    self.warn(
                        "W001",
                        "`approve when` is always true: write nothing instead",
                        item.condition.span,
                    )
            elif isinstance(item, ast.Otherwise):
                if verdict.otherwise is not None:
                    self.report("E012", "`otherwise` is given twice", item.span)
                verdict.otherwise = self.reason(item.reason, item.span)
                verdict.otherwise_message = reasons.message(
                    self.expressions, item.reason, item.reason_span, self.filename
                )
            else:
                written = getattr(item, "key", None) or getattr(item, "words", "")
                first = written.split()[0] if written else ""
                self.report(
                    "E010",
                    f"{self.describe_item(item)} is not allowed in `verdict`",
                    item.span,
                    did_you_mean(first, ("approve", "disapprove", "otherwise")),
                )
        if not decl.items:
            self.warn(
                "W004",
                "the verdict is empty: every inspection is approved as soon as it is finished",
                decl.span,
            )
        return verdict

    def reason(self, reason: str, span: ast.Span) -> str:
        if len(reason) > MAX_TEXT_LENGTH:
            self.report("E037", f"text longer than {MAX_TEXT_LENGTH} characters", span)
        return reason

    def unused_variables(self, decls: list[ast.VariableDecl]) -> None:
        used = self.scope.used_variables | self.set_variables
        for decl in decls:
            if decl.name not in used and decl.name in self.scope.variables:
                self.warn("W002", f"variable `{decl.name}` is never set nor read", span_of(decl))


def check_module(
    module: ast.Module, *, template_kind: str = "created"
) -> tuple[CheckedTemplate | None, list[Diagnostic]]:
    """Check a parsed module: the checked template (None when there is any error) and every
    diagnostic (errors and warnings) in source order. `template_kind` is `created` or `built-in`
    (a ValueError otherwise: it is the caller's mistake, not the template's)."""
    if template_kind not in TEMPLATE_KINDS:
        raise ValueError(f"template_kind must be one of {TEMPLATE_KINDS}, not {template_kind!r}")
    return Checker(module, template_kind).run()
