"""The checker: a parsed module -> a `CheckedTemplate` (names resolved, ids fixed, logic as IR)
plus every diagnostic of the file in one run.

Declarations are read in dependency order (header, settings, variables, features, images, inputs,
checks, rules, verdict) so that each stage can resolve names declared by the earlier ones, whatever
their order in the file. Expressions are typed and turned into IR by `types.ExpressionChecker`;
input properties are read by `schema.read_input_property`. The checker never raises on bad input:
every problem becomes a `Diagnostic` with a stable code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from inspectlang import ast, identifiers, schema
from inspectlang.diagnostics import Diagnostic, Severity, did_you_mean
from inspectlang.manifest import (
    CONSUMER_FIELDS,
    FEATURE_NAMES,
    INSPECTION_TYPES,
    PRODUCT_FIELDS,
    VALIDATION_NAMES,
    IRNode,
)
from inspectlang.schema import CheckedInput
from inspectlang.types import (
    INPUT_VALUE_TYPES,
    MAX_EXPRESSION_DEPTH,
    MAX_NUMBER,
    MAX_TEXT_LENGTH,
    ExpressionChecker,
    ImageRef,
    InputRef,
    Scope,
    compatible,
    constant_boolean,
    describe,
    first_given,
    norm,
    number,
    span_of,
    text,
    word,
)

#: Limits on the size of a template: past them the template is refused (E037), never slow.
MAX_IMAGES = 100
MAX_INPUTS = 200
MAX_RULES = 1000
MAX_CHECKS = 500
MAX_VARIABLES = 500

TEMPLATE_KINDS = ("created", "built-in")
LOCALE = re.compile(r"^[a-z]{2}_[A-Z]{2}$")
DEFAULT_LOCALE = "en_US"

TEMPLATE_PROPERTIES = ("type", "id", "locales")
SETTINGS: dict[str, str] = {
    "max attempts": "maxAttempts",
    "link expires after": "linkExpiresInHours",
    "inspection expires after": "expiresInHours",
    "minimum confidence": "minConfidence",
    "photo age limit": "maxPhotoAgeHours",
    "photo distance limit": "maxDistanceMeters",
    "minimum photo size": "minImageSize",
}
IMAGE_PROPERTIES = ("side", "id", "label")
CHECK_PROPERTIES = ("name", "description", "valid when")
#: Events in words (as written after `on`) -> the manifest's event names.
EVENTS: dict[str, str] = {
    e.replace("_", " "): e
    for e in (
        "inspection_created",
        "inspection_started",
        "input_set",
        "image_uploaded",
        "image_processed",
        "validation_passed",
        "validation_failed",
        "damage_declared",
        "finish",
    )
}
VALIDATION_MODIFIERS = (
    "required",
    "optional",
    "not run",
    "minimum confidence",
    "within",
    "minimum size",
)
#: Hours per time unit and meters per distance unit accepted in quantities.
HOURS = {
    "hour": 1.0,
    "hours": 1.0,
    "h": 1.0,
    "day": 24.0,
    "days": 24.0,
    "week": 168.0,
    "weeks": 168.0,
    "minute": 1 / 60,
    "minutes": 1 / 60,
}
METERS = {
    "meter": 1.0,
    "meters": 1.0,
    "m": 1.0,
    "kilometer": 1000.0,
    "kilometers": 1000.0,
    "km": 1000.0,
}


@dataclass(slots=True)
class CheckedValidation:
    name: str
    id: str
    run: bool
    required: bool
    min_confidence: float
    options: dict[str, float]


@dataclass(slots=True)
class CheckedImage:
    name: str
    side: str
    identifier: str
    labels: dict[str, str]
    validations: list[CheckedValidation]
    features: list[str]


@dataclass(slots=True)
class CheckedRule:
    id: str
    event: str
    input: str | None
    image: str | None
    validation: str | None
    body: list[IRNode]
    span: ast.Span


@dataclass(slots=True)
class CheckedCheck:
    id: str
    key: str
    name: str
    description: str
    valid: IRNode
    depends: list[str]
    span: ast.Span


@dataclass(slots=True)
class CheckedVerdict:
    approve_when: IRNode | None = None
    disapprove: list[tuple[str, IRNode, ast.Span]] = field(default_factory=list)
    otherwise: str | None = None
    span: ast.Span | None = None


@dataclass(slots=True)
class CheckedTemplate:
    """Everything the compiler needs, already valid: the manifest is built from this alone."""

    name: str
    template_id: str
    inspection_type: str
    template_kind: str
    filename: str
    locales: list[str]
    parameters: dict[str, Any]
    variables: list[tuple[str, str, int | float | str]]
    images: list[CheckedImage]
    inputs: list[CheckedInput]
    features: list[tuple[str, bool, str]]
    product_required: list[str]
    consumer_required: list[str]
    rules: list[CheckedRule]
    #: In dependency order: a check comes after every check it refers to.
    checks: list[CheckedCheck]
    verdict: CheckedVerdict


class Checker:
    """Checks one module; `run()` returns the checked template (None on errors) and diagnostics."""

    def __init__(self, module: ast.Module, template_kind: str = "created") -> None:
        self.module = module
        self.filename = module.filename
        self.template_kind = template_kind
        self.diagnostics: list[Diagnostic] = []
        self.locales = [DEFAULT_LOCALE]
        self.template_id = ""
        self.inspection_type = "car"
        self.name = ""
        self.parameters: dict[str, Any] = {}
        self.scope = Scope(inspection_type="car", product_fields=PRODUCT_FIELDS["car"])
        self.expressions = ExpressionChecker(self.scope, self.diagnostics, self.filename)
        self.images: list[CheckedImage] = []
        self.inputs: list[CheckedInput] = []
        self.features: dict[str, tuple[bool, str]] = {}
        self.variables: list[tuple[str, str, int | float | str]] = []
        self.set_variables: set[str] = set()
        self.identifiers: dict[str, ast.Span] = {}

    # -- diagnostics -------------------------------------------------------------------------

    def report(
        self,
        code: str,
        message: str,
        span: ast.Span,
        suggestion: str | None = None,
        severity: Severity = "error",
        notes: tuple[str, ...] = (),
    ) -> None:
        self.diagnostics.append(
            Diagnostic(code, message, span, self.filename, severity, suggestion, notes)
        )

    def warn(self, code: str, message: str, span: ast.Span) -> None:
        self.report(code, message, span, severity="warning")

    def limit(self, count: int, maximum: int, what: str, span: ast.Span) -> bool:
        if count > maximum:
            self.report("E037", f"too many {what}: {count} (at most {maximum})", span)
            return False
        return True

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
        )
        return checked, self.diagnostics

    # -- properties --------------------------------------------------------------------------

    def properties(
        self,
        items: tuple[ast.Item, ...],
        allowed: tuple[str, ...],
        where: str,
        translatable: tuple[str, ...] = (),
    ) -> dict[str, ast.Property]:
        """The block's `key: value` properties by normalized key; other items are reported."""
        found: dict[str, ast.Property] = {}
        for item in items:
            if not isinstance(item, ast.Property):
                self.report(
                    "E010", f"{self.describe_item(item)} is not allowed in {where}", item.span
                )
                continue
            words = item.key.split()
            if item.locale is None and len(words) > 1 and LOCALE.match(words[-1]):
                item = replace(item, key=" ".join(words[:-1]), locale=words[-1])
            key = norm(item.key)
            if key not in allowed:
                self.report(
                    "E010",
                    f"unknown property `{item.key}` in {where}",
                    span_of(item),
                    did_you_mean(key, allowed),
                )
                continue
            if item.locale is not None:
                if key not in translatable:
                    self.report("E019", f"`{key}` cannot have a locale", span_of(item))
                    continue
                self.check_locale(item.locale, item)
                key = f"{key} {item.locale}"
            if key in found:
                self.report("E012", f"`{key}` is given twice in {where}", span_of(item))
                continue
            found[key] = item
        return found

    @staticmethod
    def describe_item(item: ast.Item) -> str:
        if isinstance(item, ast.Flag):
            return f"`{item.words}`"
        names = {
            ast.Validate: "`validate`",
            ast.FeatureUse: "`feature`",
            ast.Require: "`require`",
            ast.Option: "`option`",
            ast.Disapprove: "`disapprove`",
            ast.Approve: "`approve`",
            ast.Otherwise: "`otherwise`",
            ast.Property: "a property",
        }
        return names.get(type(item), type(item).__name__)

    def check_locale(self, locale: str, node: Any) -> bool:
        if locale not in self.locales:
            self.report(
                "E028",
                f"locale `{locale}` is not declared in `locales`",
                span_of(node),
                did_you_mean(locale, self.locales),
            )
            return False
        return True

    def single(self, prop: ast.Property, what: str) -> ast.PropertyValue | None:
        if len(prop.values) != 1:
            self.report("E019", f"`{prop.key}` takes one {what}", prop.span)
            return None
        return prop.values[0]

    def text_value(self, prop: ast.Property | None) -> str | None:
        if prop is None:
            return None
        value = self.single(prop, "text")
        if value is None:
            return None
        result = text(value)
        if result is None:
            self.report("E019", f"`{prop.key}` takes a text in quotes", value.span)
        elif len(result) > MAX_TEXT_LENGTH:
            self.report("E037", f"text longer than {MAX_TEXT_LENGTH} characters", value.span)
            return None
        return result

    def number_value(
        self,
        prop: ast.Property,
        low: float | None = None,
        high: float | None = None,
        integer: bool = False,
    ) -> int | float | None:
        value = self.single(prop, "number")
        if value is None:
            return None
        result = number(value)
        if result is None or (integer and not isinstance(result, int)):
            kind = "whole number" if integer else "number"
            self.report("E019", f"`{prop.key}` takes a {kind}", value.span)
            return None
        if (low is not None and result < low) or (high is not None and result > high):
            bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
            self.report("E019", f"`{prop.key}` must be {bounds}, not {result:g}", value.span)
            return None
        return result

    def quantity(
        self, value: Any, units: dict[str, float], what: str, span: ast.Span
    ) -> float | None:
        if not isinstance(value, ast.Quantity) or value.unit.lower() not in units:
            unit = value.unit.lower() if isinstance(value, ast.Quantity) else ""
            known_elsewhere = unit in HOURS or unit in METERS
            suggestion = None if known_elsewhere else did_you_mean(unit, units)
            self.report("E019", f"expected {what}", getattr(value, "span", span), suggestion)
            return None
        result = value.amount * units[value.unit.lower()]
        if not 0 <= result <= MAX_NUMBER:
            self.report("E019", f"{what} must be from 0 to {MAX_NUMBER:g}", value.span)
            return None
        return result

    def size_value(self, value: Any, span: ast.Span) -> tuple[int, int] | None:
        if not isinstance(value, ast.Size) or value.width <= 0 or value.height <= 0:
            self.report(
                "E019", "expected a size in pixels: `WIDTH x HEIGHT`", getattr(value, "span", span)
            )
            return None
        return value.width, value.height

    def identifier(
        self,
        prop: ast.Property | None,
        pattern: re.Pattern[str],
        form: str,
        derived: str,
        owner: ast.Span,
    ) -> str:
        """The written id when valid and unique, else the derived one (after a diagnostic).
        Derived ids are registered too, so a written id cannot take another declaration's."""
        if prop is None:
            if derived in self.identifiers:
                self.report(
                    "E014",
                    f"the id derived from this name, `{derived}`, is written on line "
                    f"{self.identifiers[derived].line} for another declaration",
                    owner,
                    notes=("write another `id:` for one of them",),
                )
            self.identifiers[derived] = ast.NO_SPAN
            return derived
        value = self.text_value(prop)
        if value is None:
            return derived
        if not pattern.match(value):
            self.report(
                "E015", f"`{value}` is not a valid id: expected {form}", prop.values[0].span
            )
            return derived
        if value in self.identifiers:
            first = self.identifiers[value].line
            self.report(
                "E014",
                f"id `{value}` is used twice",
                prop.values[0].span,
                notes=(f"first used on line {first}",) if first else ("it is derived from a name",),
            )
            return derived
        self.identifiers[value] = prop.values[0].span
        return value

    # -- header and settings -----------------------------------------------------------------

    def header(self, headers: list[ast.TemplateDecl]) -> None:
        if not headers:
            self.report(
                "E011",
                'missing template header: start with `template "NAME"`',
                ast.Span(1, 1, 1, 1),
            )
            self.template_id = identifiers.template_id("")
            return
        for extra in headers[1:]:
            self.report("E012", "a file holds one template: second `template` header", extra.span)
        decl = headers[0]
        self.name = decl.name
        if not decl.name.strip():
            self.report("E019", "the template name cannot be empty", decl.span)
        props = self.properties(decl.items, TEMPLATE_PROPERTIES, "the template header")
        locales_prop = props.get("locales")
        if locales_prop is not None:
            locales: list[str] = []
            for value in locales_prop.values:
                locale = word(value)
                if locale is None or not LOCALE.match(locale):
                    self.report("E028", "a locale is written `xx_YY`, e.g. `en_US`", value.span)
                elif locale in locales:
                    self.report("E012", f"locale `{locale}` is listed twice", value.span)
                else:
                    locales.append(locale)
            self.locales = locales or [DEFAULT_LOCALE]
        type_prop = props.get("type")
        if type_prop is None:
            self.report("E011", "the template needs `type:` (the inspection type)", decl.span)
        else:
            type_value = self.single(type_prop, "inspection type")
            type_name = word(type_value) if type_value is not None else None
            if type_value is not None and type_name not in INSPECTION_TYPES:
                self.report(
                    "E016",
                    f"unknown inspection type `{type_name or ''}`",
                    type_value.span,
                    did_you_mean(type_name or "", INSPECTION_TYPES),
                )
            elif type_name is not None:
                self.inspection_type = type_name
        self.scope.inspection_type = self.inspection_type
        self.scope.product_fields = PRODUCT_FIELDS[self.inspection_type]
        self.template_id = self.identifier(
            props.get("id"),
            identifiers.OBJECT_ID,
            "24 hex digits",
            identifiers.template_id(decl.name),
            decl.span,
        )

    def settings(self, decl: ast.SettingsDecl | None) -> None:
        params = self.parameters
        params.update(maxAttempts=3, minConfidence=80)
        if decl is None:
            return
        props = self.properties(decl.items, tuple(SETTINGS), "settings")
        for key, prop in props.items():
            target = SETTINGS[key]
            if key == "max attempts":
                result = self.number_value(prop, 1, 1000, integer=True)
            elif key == "minimum confidence":
                result = self.number_value(prop, 0, 100)
            elif key == "minimum photo size":
                value = self.single(prop, "size")
                size = self.size_value(value, prop.span) if value is not None else None
                if size is not None:
                    params["minImageWidth"], params["minImageHeight"] = size
                continue
            else:
                value = self.single(prop, "quantity")
                if value is None:
                    continue
                if key == "photo distance limit":
                    result = self.quantity(
                        value, METERS, "a distance such as `500 meters`", prop.span
                    )
                else:
                    result = self.quantity(value, HOURS, "a duration such as `48 hours`", prop.span)
            if result is not None:
                params[target] = result

    def declare_variables(self, decls: list[ast.VariableDecl]) -> None:
        self.limit(len(decls), MAX_VARIABLES, "variables", decls[-1].span if decls else ast.NO_SPAN)
        for decl in decls[:MAX_VARIABLES]:
            if decl.name in self.scope.variables:
                self.report("E012", f"variable `{decl.name}` is declared twice", span_of(decl))
                continue
            if decl.variable_type not in ("numeric", "text"):
                self.report(
                    "E019",
                    f"a variable is `numeric` or `text`, not `{decl.variable_type}`",
                    decl.span,
                    did_you_mean(decl.variable_type, ("numeric", "text")),
                )
                continue
            self.scope.variables[decl.name] = decl.variable_type
            initial: int | float | str | None = (
                number(decl.initial) if decl.variable_type == "numeric" else text(decl.initial)
            )
            if initial is None:
                self.report(
                    "E024",
                    f"the initial value of a {decl.variable_type} variable must "
                    f"be a {'number' if decl.variable_type == 'numeric' else 'text'}",
                    decl.initial.span,
                )
                initial = 0 if decl.variable_type == "numeric" else ""
            self.variables.append((decl.name, decl.variable_type, initial))

    def requirements(self, decl: ast.ProductDecl | ast.ConsumerDecl | None, kind: str) -> list[str]:
        if decl is None:
            return []
        table = CONSUMER_FIELDS if kind == "consumer" else PRODUCT_FIELDS[self.inspection_type]
        required: list[str] = []
        for item in decl.items:
            if not isinstance(item, ast.Require):
                self.report(
                    "E010",
                    f"{self.describe_item(item)} is not allowed in `{kind}`: "
                    "use `require FIELD, ...`",
                    item.span,
                )
                continue
            for index, name in enumerate(item.fields):
                span = item.field_spans[index] if index < len(item.field_spans) else item.span
                if name not in table:
                    what = "consumer" if kind == "consumer" else self.inspection_type
                    self.report(
                        "E021", f"unknown {what} field `{name}`", span, did_you_mean(name, table)
                    )
                elif name in required:
                    self.report("E012", f"`{name}` is required twice", span)
                else:
                    required.append(name)
        return required

    def declare_features(self, decls: list[ast.FeatureDecl]) -> None:
        for decl in decls:
            if decl.name not in FEATURE_NAMES:
                self.report(
                    "E027",
                    f"unknown feature `{decl.name}`",
                    span_of(decl),
                    did_you_mean(decl.name, FEATURE_NAMES),
                )
            elif decl.name in self.features:
                self.report("E012", f"feature `{decl.name}` is declared twice", span_of(decl))
            else:
                self.features[decl.name] = (
                    decl.active,
                    identifiers.feature_id(self.template_id, decl.name),
                )

    # -- images ------------------------------------------------------------------------------

    def declare_images(self, decls: list[ast.ImageDecl]) -> None:
        sides: dict[str, int] = {}
        for decl in decls:
            if decl.name in self.scope.images:
                self.report("E012", f"image `{decl.name}` is declared twice", span_of(decl))
                continue
            props = self.properties(
                tuple(i for i in decl.items if not isinstance(i, (ast.Validate, ast.FeatureUse))),
                IMAGE_PROPERTIES,
                f"image `{decl.name}`",
                translatable=("label",),
            )
            side = self.text_value(props.get("side"))
            side = decl.name if side is None else side
            if side in sides:
                self.report(
                    "E013",
                    f"side `{side}` is used by two images",
                    span_of(props.get("side") or decl),
                    notes=(f"first used on line {sides[side]}",),
                )
            sides.setdefault(side, decl.span.line)
            identifier = self.identifier(
                props.get("id"),
                identifiers.IMAGE_IDENTIFIER,
                "`image_<uuid>`",
                identifiers.image_identifier(self.template_id, decl.name),
                span_of(decl),
            )
            labels: dict[str, str] = {}
            for key, prop in props.items():
                if key.startswith("label"):
                    label = self.text_value(prop)
                    if label is not None:
                        locale = prop.locale if prop.locale != self.locales[0] else None
                        labels[locale or ""] = label
            validations: list[CheckedValidation] = []
            features: list[str] = []
            for item in decl.items:
                if isinstance(item, ast.Validate):
                    checked = self.validation(decl.name, item, validations)
                    if checked is not None:
                        validations.append(checked)
                elif isinstance(item, ast.FeatureUse):
                    if item.name not in FEATURE_NAMES:
                        self.report(
                            "E027",
                            f"unknown feature `{item.name}`",
                            item.span,
                            did_you_mean(item.name, FEATURE_NAMES),
                        )
                    elif item.name in features:
                        self.report("E012", f"feature `{item.name}` is given twice", item.span)
                    else:
                        features.append(item.name)
            self.scope.images[decl.name] = ImageRef(
                identifier, frozenset(v.name for v in validations)
            )
            self.images.append(
                CheckedImage(decl.name, side, identifier, labels, validations, features)
            )

    def validation(
        self, image: str, item: ast.Validate, earlier: list[CheckedValidation]
    ) -> CheckedValidation | None:
        span = span_of(item)
        if item.name not in VALIDATION_NAMES:
            self.report(
                "E026",
                f"unknown validation `{item.name}`",
                span,
                did_you_mean(item.name, VALIDATION_NAMES),
            )
            return None
        if any(v.name == item.name for v in earlier):
            self.report(
                "E012", f"validation `{item.name}` is given twice for image `{image}`", span
            )
            return None
        run, required = True, True
        confidence = float(self.parameters.get("minConfidence", 80))
        options: dict[str, float] = {}
        seen: set[str] = set()
        for modifier in item.modifiers:
            words = norm(modifier.words)
            if words not in VALIDATION_MODIFIERS:
                self.report(
                    "E010",
                    f"unknown validation option `{modifier.words}`",
                    modifier.span,
                    did_you_mean(words, VALIDATION_MODIFIERS),
                )
                continue
            group = "required" if words == "optional" else words
            if group in seen:
                self.report(
                    "E012", f"`{modifier.words}` conflicts with an earlier option", modifier.span
                )
                continue
            seen.add(group)
            value = modifier.value
            if words == "optional":
                required = False
            elif words == "not run":
                run = False
            elif words == "minimum confidence":
                if (
                    isinstance(value, int | float)
                    and not isinstance(value, bool)
                    and 0 <= value <= 100
                ):
                    confidence = float(value)
                else:
                    self.report(
                        "E019", "`minimum confidence` takes a number from 0 to 100", modifier.span
                    )
            elif words == "within":
                unit = value.unit.lower() if isinstance(value, ast.Quantity) else ""
                if unit in HOURS:
                    hours = self.quantity(value, HOURS, "a duration", modifier.span)
                    if hours is not None:
                        options["maxAgeHours"] = hours
                else:
                    meters = self.quantity(
                        value, METERS, "`within N hours` or `within N meters`", modifier.span
                    )
                    if meters is not None:
                        options["maxDistanceMeters"] = meters
            elif words == "minimum size":
                size = self.size_value(value, modifier.span)
                if size is not None:
                    options["minWidth"], options["minHeight"] = float(size[0]), float(size[1])
        return CheckedValidation(
            item.name,
            identifiers.validation_id(self.template_id, image, item.name),
            run,
            required,
            confidence,
            options,
        )

    # -- inputs ------------------------------------------------------------------------------

    def declare_inputs(self, decls: list[ast.InputDecl]) -> None:
        for decl in decls:
            if decl.name in self.scope.inputs:
                self.report("E012", f"input `{decl.name}` is declared twice", span_of(decl))
                continue
            checked = schema.read_input(self, decl)
            if checked is not None:
                self.scope.inputs[decl.name] = InputRef(checked.identifier, checked.input_type)
                self.inputs.append(checked)

    # -- checks, rules and verdict -----------------------------------------------------------

    def declare_checks(self, decls: list[ast.CheckDecl]) -> list[CheckedCheck]:
        unique: list[ast.CheckDecl] = []
        for decl in decls:
            if decl.name in self.scope.checks:
                self.report("E012", f"check `{decl.name}` is declared twice", span_of(decl))
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
        self.scope.event, self.scope.value_type = event, None
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
                    self.scope.value_type = INPUT_VALUE_TYPES[ref.input_type]
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
            else:
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
                verdict.disapprove.append((self.reason(item.reason, item.span), node, item.span))
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
            else:
                self.report(
                    "E010",
                    f"{self.describe_item(item)} is not allowed in `verdict`",
                    item.span,
                    did_you_mean(getattr(item, "key", ""), ("approve", "disapprove", "otherwise")),
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
