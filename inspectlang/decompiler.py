"""The decompiler: a Template manifest (JSON) -> AST -> `.insp` text, so templates that exist only
as JSON become files.

For a manifest this package compiled, `compile_source(decompile(m))` gives `m` back (modulo the
timestamps, spans, `sourceName` and so `revision`): every id that compiling would derive anyway is
left out, every other id is written. Manifests from elsewhere may lack `logic` (the spec's plain
Template object); their images, inputs, variables, features and parameters are decompiled with
explicit image, input and template ids. Validation and feature `_id`s have no place in the syntax:
they are derived again on compiling.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any, cast

from pydantic import BaseModel

from inspectlang import ast, identifiers, ir
from inspectlang.manifest import (
    PRODUCT_FIELDS,
    ImageSpec,
    InputSpec,
    IRNode,
    ReasonTranslation,
    Template,
    ValidationSchema,
    ValidationSpec,
)
from inspectlang.property_values import norm
from inspectlang.vocabulary import CHAIN_OPERATORS, VALIDATION_NUMBER_OPTIONS

_NAME = re.compile(r"[^A-Za-z0-9_]+")


def _name(text: str, taken: set[str], fallback: str) -> str:
    """A declaration name made from free text (a side, a label), unique among `taken`."""
    base = _NAME.sub("_", text.strip().lower()).strip("_") or fallback
    if base[0].isdigit():
        base = f"{fallback}_{base}"
    name, counter = base, 2
    while name in taken:
        name, counter = f"{base}_{counter}", counter + 1
    taken.add(name)
    return name


def _number(value: float | int) -> int | float:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _literal(value: Any) -> ast.Expr:
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        return ast.Unary("-", ast.Literal(_number(-value)))
    if isinstance(value, float):
        return ast.Literal(_number(value))
    return ast.Literal(value)


#: Fields of an AST node that come from where it is written, not from the IR.
_WRITTEN_FIELDS = frozenset({"span", "comments", "trailing_comment"})


def _prop(key: str, *values: ast.PropertyValue, locale: str | None = None) -> ast.Property:
    return ast.Property(key, tuple(values), locale)


class Decompiler(ir.NodeVisitor):
    """Turns one manifest into a module; names come from `logic` when present."""

    walker = "decompiler"

    def __init__(self, template: Template) -> None:
        #: Reads the manifest's IR (refusing JSON that is not IR: `ir.MalformedIR`).
        self.decoder = ir.Decoder()
        self.template = template
        self.logic = template.logic
        taken: set[str] = set()
        self.image_names = {
            image.identifier: (
                self.logic.images[image.identifier].name
                if image.identifier in self.logic.images
                else _name(image.side, taken, "image")
            )
            for image in template.images
        }
        taken = set()
        self.input_names = {
            spec.identifier: (
                self.logic.inputs[spec.identifier].name
                if spec.identifier in self.logic.inputs
                else _name(spec.label, taken, "input")
            )
            for spec in template.inputs
        }
        self.check_keys = {check.id: check.key for check in self.logic.checks}

    def module(self) -> ast.Module:
        declarations: list[ast.Declaration] = [self.header()]
        settings = self.settings()
        if settings.items:
            declarations.append(settings)
        declarations.extend(
            ast.VariableDecl(v.name, v.type, _literal(v.initialValue))
            for v in self.template.variables
        )
        declarations.extend(
            ast.LetDecl(let.name, self.expression(let.value)) for let in self.logic.lets
        )
        requirements = self.logic.requirements
        if requirements.product:
            declarations.append(ast.ProductDecl((ast.Require(tuple(requirements.product)),)))
        if requirements.consumer:
            declarations.append(ast.ConsumerDecl((ast.Require(tuple(requirements.consumer)),)))
        declarations.extend(self.image(image) for image in self.template.images)
        declarations.extend(self.input(spec) for spec in self.template.inputs)
        declarations.extend(self.features())
        declarations.extend(self.rule(rule) for rule in self.logic.rules)
        declarations.extend(self.check(check) for check in self.logic.checks)
        declarations.append(self.verdict())
        return ast.Module(tuple(declarations), filename=f"{self.template.name}.insp")

    def header(self) -> ast.TemplateDecl:
        template = self.template
        items: list[ast.Item] = [_prop("type", ast.Name(template.inspectionType))]
        if template.id != identifiers.template_id(template.name):
            items.append(_prop("id", ast.Literal(template.id)))
        if self.logic.locales != ["en_US"]:
            items.append(_prop("locales", *(ast.Name(locale) for locale in self.logic.locales)))
        return ast.TemplateDecl(template.name, tuple(items))

    def settings(self) -> ast.SettingsDecl:
        params = self.template.parameters
        items: list[ast.Item] = []
        if params.maxAttempts != 3:
            items.append(_prop("max attempts", ast.Literal(params.maxAttempts)))
        durations = (
            ("link expires after", params.linkExpiresInHours),
            ("inspection expires after", params.expiresInHours),
        )
        for key, hours in durations:
            if hours is not None:
                items.append(_prop(key, ast.Quantity(_number(hours), "hours")))
        if params.minConfidence != 80:
            items.append(_prop("minimum confidence", _literal(params.minConfidence)))
        if params.maxPhotoAgeHours is not None:
            items.append(
                _prop("photo age limit", ast.Quantity(_number(params.maxPhotoAgeHours), "hours"))
            )
        if params.maxDistanceMeters is not None:
            distance = ast.Quantity(_number(params.maxDistanceMeters), "meters")
            items.append(_prop("photo distance limit", distance))
        if params.minImageWidth is not None and params.minImageHeight is not None:
            size = ast.Size(params.minImageWidth, params.minImageHeight)
            items.append(_prop("minimum photo size", size))
        return ast.SettingsDecl(tuple(items))

    def image(self, image: Any) -> ast.ImageDecl:
        name = self.image_names[image.identifier]
        logic = self.logic.images.get(image.identifier)
        items: list[ast.Item] = []
        if image.side != name:
            items.append(_prop("side", ast.Literal(image.side)))
        if image.identifier != identifiers.image_identifier(self.template.id, name):
            items.append(_prop("id", ast.Literal(image.identifier)))
        if logic is not None:
            for locale, label in logic.labels.items():
                items.append(_prop("label", ast.Literal(label), locale=locale or None))
        default_confidence = self.template.parameters.minConfidence
        for validation in image.validations:
            modifiers: list[ast.Modifier] = []
            if not validation.required:
                modifiers.append(ast.Modifier("optional"))
            if not validation.run:
                modifiers.append(ast.Modifier("not run"))
            extra = logic.validations.get(validation.validation) if logic else None
            if extra is not None:
                if extra.minConfidence != default_confidence:
                    confidence = _number(extra.minConfidence)
                    modifiers.append(ast.Modifier("minimum confidence", confidence))
                if extra.reviewBelow is not None:
                    below = _number(extra.reviewBelow)
                    modifiers.append(ast.Modifier("review below confidence", below))
                options = extra.options
                if "maxAgeHours" in options:
                    hours = ast.Quantity(_number(options["maxAgeHours"]), "hours")
                    modifiers.append(ast.Modifier("within", hours))
                if "maxDistanceMeters" in options:
                    meters = ast.Quantity(_number(options["maxDistanceMeters"]), "meters")
                    modifiers.append(ast.Modifier("within", meters))
                if "minWidth" in options and "minHeight" in options:
                    size = ast.Size(int(options["minWidth"]), int(options["minHeight"]))
                    modifiers.append(ast.Modifier("minimum size", size))
                for words, (_name, key, _low, _high) in VALIDATION_NUMBER_OPTIONS.items():
                    if key in options:
                        modifiers.append(ast.Modifier(words, _number(options[key])))
            items.append(ast.Validate(validation.validation, tuple(modifiers)))
        if logic is not None:
            items.extend(ast.FeatureUse(feature) for feature in logic.features)
            if logic.optional:
                items.append(ast.Flag("optional"))
            if logic.askWhen is not None:
                items.append(_prop("ask when", self.expression(logic.askWhen)))
        return ast.ImageDecl(name, tuple(items))

    def input(self, spec: Any) -> ast.InputDecl:
        name = self.input_names[spec.identifier]
        logic = self.logic.inputs.get(spec.identifier)
        items: list[ast.Item] = [
            _prop("type", ast.Name(spec.type)),
            _prop("label", ast.Literal(spec.label)),
        ]
        translations = logic.translations if logic else {}
        for locale, translation in translations.items():
            if translation.label is not None:
                items.append(_prop("label", ast.Literal(translation.label), locale=locale))
        if spec.helperMessage is not None:
            items.append(_prop("help", ast.Literal(spec.helperMessage)))
        for locale, translation in translations.items():
            if translation.helperMessage is not None:
                items.append(_prop("help", ast.Literal(translation.helperMessage), locale=locale))
        if list(spec.stages) != ["create"] and spec.stages:
            items.append(_prop("asked at", *(ast.Name(stage) for stage in spec.stages)))
        if logic is not None and logic.image is not None and logic.image in self.image_names:
            items.append(_prop("for image", ast.Name(self.image_names[logic.image])))
        if spec.identifier != identifiers.input_identifier(self.template.id, name):
            items.append(_prop("id", ast.Literal(spec.identifier)))
        if logic is not None and logic.askWhen is not None:
            items.append(_prop("ask when", self.expression(logic.askWhen)))
        checks = spec.validationSchema
        if checks.required:
            items.append(ast.Flag("required"))
        items.extend(self.input_checks(checks))
        for attribute, key in (("notBefore", "not before"), ("notAfter", "not after")):
            others = getattr(checks, attribute) or []
            if others:
                items.append(_prop(key, *(ast.Name(self.input_names.get(o, o)) for o in others)))
        if spec.options is not None:
            keys = [o.key for o in spec.options if o.key is not None]
            if len(keys) != len(spec.options):
                keys = list(logic.optionKeys or []) if logic else []
            taken = set(keys)
            while len(keys) < len(spec.options):
                keys.append(_name(spec.options[len(keys)].label, taken, "option"))
            items.extend(
                ast.Option(key, option.label)
                for key, option in zip(keys, spec.options, strict=False)
            )
            for locale, translation in translations.items():
                for key, label, option in zip(
                    keys, translation.options or [], spec.options, strict=False
                ):
                    if label != option.label:
                        items.append(ast.Option(key, label, locale))
        return ast.InputDecl(name, tuple(items))

    @staticmethod
    def input_checks(checks: Any) -> list[ast.Item]:
        items: list[ast.Item] = []
        numbers = (
            ("minLength", "minimum length"),
            ("maxLength", "maximum length"),
            ("minimum", "minimum"),
            ("maximum", "maximum"),
            ("minItems", "minimum choices"),
            ("maxItems", "maximum choices"),
        )
        for attribute, key in numbers:
            value = getattr(checks, attribute)
            if value is not None:
                items.append(_prop(key, _literal(value)))
        if checks.pattern is not None:
            items.append(_prop("pattern", ast.Literal(checks.pattern)))
        if checks.email:
            items.append(ast.Flag("email"))
        if checks.integer:
            items.append(ast.Flag("whole number"))
        for attribute, key in (("minDate", "earliest"), ("maxDate", "latest")):
            value = getattr(checks, attribute)
            if value is not None:
                items.append(_prop(key, ast.Call("date", (ast.Literal(value),))))
        if checks.mediaTypes:
            items.append(_prop("accepts", *(ast.Literal(t) for t in checks.mediaTypes)))
        if checks.maxSizeBytes is not None:
            items.append(_prop("maximum size", _bytes(checks.maxSizeBytes)))
        return items

    def features(self) -> list[ast.FeatureDecl]:
        if self.logic.features:
            return [ast.FeatureDecl(f.feature, f.active) for f in self.logic.features]
        return [ast.FeatureDecl(f.feature, True) for f in self.template.features]

    def rule(self, rule: Any) -> ast.RuleDecl:
        on = rule.on
        words = norm(on.event)
        target: str | None = None
        of_image: str | None = None
        if on.input is not None:
            target = self.input_names.get(on.input, on.input)
        elif on.event.startswith("validation"):
            target = on.validation
            if on.image is not None:
                of_image = self.image_names.get(on.image, on.image)
        elif on.image is not None:
            target = self.image_names.get(on.image, on.image)
        event = ast.EventSpec(words, target, of_image)
        body = self.decoder.statements(rule.body, f"rule {rule.id}")
        return ast.RuleDecl(event, tuple(self.statement(node) for node in body))

    def statement(self, node: ir.Statement) -> ast.Statement:
        """A statement back to its AST node. Field by field when the two shapes agree: the AST
        class of the same name, each of its fields the IR node's of the same name (an
        expression decompiled, a body statement by statement); a `visit_` method where they
        differ. A statement with neither is refused (`ir.UnknownNode`)."""
        if hasattr(self, f"visit_{type(node).__name__}"):
            result: ast.Statement = self.visit(node)
            return result
        cls = getattr(ast, type(node).__name__, None)
        if not (isinstance(node, ir.Statement) and isinstance(cls, type) and is_dataclass(cls)):
            raise ir.UnknownNode(node, self.walker)
        values: dict[str, Any] = {}
        for item in fields(cls):
            if item.name in _WRITTEN_FIELDS or item.name.endswith("_span"):
                continue
            if not hasattr(node, item.name):
                raise ir.UnknownNode(node, self.walker)
            values[item.name] = self.field(getattr(node, item.name))
        return cast("ast.Statement", cls(**values))

    def field(self, value: Any) -> Any:
        if isinstance(value, ir.Expression):
            return self.visit(value)
        if isinstance(value, tuple):
            return tuple(self.statement(item) for item in value)
        return value

    def visit_IfStatement(self, node: ir.IfStatement) -> ast.Statement:
        otherwise = tuple(self.statement(n) for n in node.otherwise)
        if len(otherwise) == 1 and isinstance(otherwise[0], ast.IfStatement):
            first = otherwise[0]
            otherwise = (
                ast.IfStatement(first.condition, first.then, first.otherwise, is_else_if=True),
            )
        then = tuple(self.statement(n) for n in node.then)
        return ast.IfStatement(self.visit(node.condition), then, otherwise)

    def check(self, check: Any) -> ast.CheckDecl:
        items: list[ast.Item] = []
        if check.name != check.key:
            items.append(_prop("name", ast.Literal(check.name)))
        if check.description:
            items.append(_prop("description", ast.Literal(check.description)))
        for locale, texts in (check.translations or {}).items():
            if texts.name is not None:
                items.append(_prop("name", ast.Literal(texts.name), locale=locale))
            if texts.description is not None:
                items.append(_prop("description", ast.Literal(texts.description), locale=locale))
        items.append(_prop("valid when", self.expression(check.valid)))
        if check.informational:
            items.append(ast.Flag("for information"))
        return ast.CheckDecl(check.key, tuple(items))

    def verdict(self) -> ast.VerdictDecl:
        verdict = self.logic.verdict
        items: list[ast.Item] = [
            ast.Disapprove(
                _reason(d.reason, d.message),
                self.expression(d.when),
                translations=_reason_translations(d.translations),
            )
            for d in verdict.disapprove
        ]
        items += [
            ast.Review(
                _reason(r.reason, r.message),
                self.expression(r.when),
                translations=_reason_translations(r.translations),
            )
            for r in verdict.review or ()
        ]
        if verdict.approveWhen is not None:
            items.append(ast.Approve(self.expression(verdict.approveWhen)))
        if verdict.otherwise is not None:
            items.append(
                ast.Otherwise(
                    _reason(verdict.otherwise, verdict.otherwiseMessage),
                    translations=_reason_translations(verdict.otherwiseTranslations),
                )
            )
        return ast.VerdictDecl(tuple(items))

    def expression(self, node: IRNode, where: str = "expression") -> ast.Expr:
        """The AST of one JSON expression of the manifest."""
        result: ast.Expr = self.visit(self.decoder.expression(node, where))
        return result

    # -- IR expressions -> AST: a let's copy is written as the let's name -------------------------

    def visit(self, node: Any, *args: Any) -> Any:
        if isinstance(node, ir.Expression) and node.let is not None:
            return ast.Name(node.let)
        return super().visit(node, *args)

    def visit_Literal(self, node: ir.Literal) -> ast.Expr:
        if node.type == "date":
            return ast.Call("date", (ast.Literal(node.value),))
        return _literal(node.value)

    def visit_ListLiteral(self, node: ir.ListLiteral) -> ast.Expr:
        return ast.ListExpr(tuple(self.visit(item) for item in node.items))

    def name(self, node: ir.Variable | ir.Local | ir.EventSubject) -> ast.Expr:
        return ast.Name(node.name)

    visit_Variable = visit_Local = visit_EventSubject = name

    def whole(self, node: ir.Images | ir.Damages | ir.Validations) -> ast.Expr:
        return ast.Name(node.op)

    visit_Images = visit_Damages = visit_Validations = whole

    def visit_Now(self, node: ir.Now) -> ast.Expr:
        return ast.Call("today", ())

    def visit_InputValue(self, node: ir.InputValue) -> ast.Expr:
        return ast.Attribute(ast.Name("inputs"), self.input_names.get(node.name) or node.name)

    def visit_ImageValue(self, node: ir.ImageValue) -> ast.Expr:
        return ast.Attribute(ast.Name("images"), self.image_names.get(node.name) or node.name)

    def visit_CheckValue(self, node: ir.CheckValue) -> ast.Expr:
        return ast.Attribute(ast.Name("checks"), self.check_keys.get(node.name) or node.name)

    def visit_ProductField(self, node: ir.ProductField) -> ast.Expr:
        namespace: str = self.template.inspectionType
        if not PRODUCT_FIELDS.get(namespace):
            namespace = "product"
        return ast.Attribute(ast.Name(namespace), node.name)

    def visit_ConsumerField(self, node: ir.ConsumerField) -> ast.Expr:
        return ast.Attribute(ast.Name("consumer"), node.name)

    def visit_RecordField(self, node: ir.RecordField) -> ast.Expr:
        return ast.Attribute(self.visit(node.value), node.name)

    def visit_Unary(self, node: ir.Unary) -> ast.Expr:
        return ast.Unary(node.operator, self.visit(node.operand))

    def visit_Binary(self, node: ir.Binary) -> ast.Expr:
        if node.operator not in CHAIN_OPERATORS:
            return ast.Binary(node.operator, self.visit(node.left), self.visit(node.right))
        # The checker's balanced tree back to the flat chain it was written as.
        operands: list[ir.Expression] = []
        pending: list[ir.Expression] = [node]
        while pending:
            item = pending.pop()
            if isinstance(item, ir.Binary) and item.operator == node.operator and item.let is None:
                pending.extend((item.right, item.left))
            else:
                operands.append(item)
        chain: ast.Expr = self.visit(operands[0])
        for operand in operands[1:]:
            chain = ast.Binary(node.operator, chain, self.visit(operand))
        return chain

    def visit_Conditional(self, node: ir.Conditional) -> ast.Expr:
        return ast.Conditional(
            self.visit(node.condition), self.visit(node.then), self.visit(node.otherwise)
        )

    def visit_Call(self, node: ir.Call) -> ast.Expr:
        return ast.Call(node.function, tuple(self.visit(a) for a in node.arguments))

    def quantifier(self, node: ir.Quantifier) -> ast.Expr:
        body = None if node.body is None else self.visit(node.body)
        is_sum = node.op in ir.VALUE_QUANTIFIERS
        return ast.Quantifier(
            node.op,
            node.variable,
            self.visit(node.collection),
            None if is_sum else body,
            body if is_sum else None,
        )

    visit_CountOf = visit_AnyOf = visit_AllOf = visit_SumOf = quantifier
    visit_FilterOf = visit_MapOf = quantifier


def _bytes(size: int) -> ast.Quantity:
    for unit, factor in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size % factor == 0:
            return ast.Quantity(size // factor, unit)
    return ast.Quantity(size, "bytes")


def decompile_module(manifest: Template | Mapping[str, Any]) -> ast.Module:
    """The AST of a manifest (a `Template` or its JSON form)."""
    template = manifest if isinstance(manifest, Template) else _load(manifest)
    return Decompiler(template).module()


def _known(data: Any, model: type[BaseModel]) -> Any:
    """`data` without the keys `model` does not know (`__v` on listed images, `templateId` on
    listed inputs, and whatever else other systems add)."""
    if not isinstance(data, Mapping):
        return data
    known = {f.alias or name for name, f in model.model_fields.items()} | set(model.model_fields)
    return {k: v for k, v in data.items() if k in known}


def _load(data: Mapping[str, Any]) -> Template:
    """A manifest from JSON; plain spec objects may lack our fields (timestamps, schema) and
    carry fields we do not keep."""
    filled = dict(_known(data, Template))
    filled["images"] = [
        {
            **_known(image, ImageSpec),
            "validations": [_known(v, ValidationSpec) for v in image.get("validations", [])],
        }
        for image in filled.get("images", [])
        if isinstance(image, Mapping)
    ]
    filled["inputs"] = [
        {
            **_known(spec, InputSpec),
            "validationSchema": _known(spec.get("validationSchema", {}), ValidationSchema),
        }
        for spec in filled.get("inputs", [])
        if isinstance(spec, Mapping)
    ]
    filled.setdefault("createdAt", "")
    filled.setdefault("updatedAt", "")
    filled.setdefault("schema", {})
    if filled.get("type") not in ("created", "built-in"):
        filled["type"] = "created"
    return Template.model_validate(filled)


def decompile(manifest: Template | Mapping[str, Any]) -> str:
    """`.insp` source text for a manifest (formatted by `inspectlang.formatter`)."""
    from inspectlang.formatter import format_module

    text: str = format_module(decompile_module(manifest))
    return text


def _reason_translations(
    translations: dict[str, ReasonTranslation] | None,
) -> tuple[ast.Item, ...]:
    """The `reason LOCALE: "TEXT"` lines under a verdict line."""
    return tuple(
        _prop("reason", ast.Literal(_reason(t.reason, t.message)), locale=locale)
        for locale, t in (translations or {}).items()
    )


def _reason(reason: str, message: IRNode | None) -> str:
    """A reason as written: with a message it is the source text (with its `{...}`); a plain
    one (also every reason of a manifest compiled before values) has its braces escaped."""
    if message is not None:
        return reason
    return reason.replace("{", "{{").replace("}", "}}")
