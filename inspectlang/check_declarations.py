"""Checking declarations: header, settings, variables, product and consumer requirements,
features, images with their validations, and inputs. Split from `inspectlang.checker`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspectlang import ast, identifiers, schema
from inspectlang.check_properties import PropertyChecker
from inspectlang.checked import (
    DEFAULT_LOCALE,
    HOURS,
    IMAGE_PROPERTIES,
    LOCALE,
    MAX_VARIABLES,
    METERS,
    SETTINGS,
    TEMPLATE_PROPERTIES,
    VALIDATION_MODIFIERS,
    VALIDATION_NUMBER_OPTIONS,
    CheckedImage,
    CheckedValidation,
)
from inspectlang.diagnostics import did_you_mean
from inspectlang.expression_types import ImageRef, InputRef
from inspectlang.manifest import (
    CONSUMER_FIELDS,
    FEATURE_NAMES,
    INSPECTION_TYPES,
    PRODUCT_FIELDS,
    VALIDATION_NAMES,
)
from inspectlang.property_values import norm, number, span_of, text, word
from inspectlang.vocabulary import NAME


class DeclarationChecker(PropertyChecker):
    """The declaration stages of the checker: they fill the scope the logic is checked in."""

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
            if NAME.fullmatch(decl.name) is None:
                self.report(
                    "E038",
                    f"`{decl.name}` cannot name a variable: a name starts with a letter, then "
                    "letters, digits or `_`, at most 64 characters",
                    span_of(decl),
                )
                continue
            if decl.name in self.scope.variables:
                self.report(
                    "E012",
                    f"variable `{decl.name}` is declared twice",
                    span_of(decl),
                    notes=(first_declared(decls, decl),),
                )
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
                self.report(
                    "E012",
                    f"feature `{decl.name}` is declared twice",
                    span_of(decl),
                    notes=(first_declared(decls, decl),),
                )
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
                self.report(
                    "E012",
                    f"image `{decl.name}` is declared twice",
                    span_of(decl),
                    notes=(first_declared(decls, decl),),
                )
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
                notes=("validations: " + ", ".join(VALIDATION_NAMES),),
            )
            self.scope.unknown_validations.add(item.name)
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
            elif words in VALIDATION_NUMBER_OPTIONS:
                validation, key, low, high = VALIDATION_NUMBER_OPTIONS[words]
                if item.name != validation:
                    self.report(
                        "E010",
                        f"`{modifier.words}` is an option of `validate {validation}`",
                        modifier.span,
                    )
                elif (
                    isinstance(value, int | float)
                    and not isinstance(value, bool)
                    and low <= value <= high
                ):
                    options[key] = float(value)
                else:
                    self.report(
                        "E019",
                        f"`{modifier.words}` takes a number from {low:g} to {high:g}",
                        modifier.span,
                    )
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
                self.report(
                    "E012",
                    f"input `{decl.name}` is declared twice",
                    span_of(decl),
                    notes=(first_declared(decls, decl),),
                )
                continue
            checked = schema.read_input(self, decl)
            if checked is not None:
                options = dict(
                    zip(checked.option_keys or [], checked.option_labels or [], strict=False)
                )
                self.scope.inputs[decl.name] = InputRef(
                    checked.identifier, checked.input_type, options
                )
                self.inputs.append(checked)


def first_declared(decls: Sequence[Any], decl: Any) -> str:
    """Where the first declaration of `decl`'s name is, for an E012 note."""
    first = next(d for d in decls if d.name == decl.name)
    return f"first declared at line {first.span.line}"
