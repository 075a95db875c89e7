"""`image NAME` declarations: side, id, labels per locale, the validations each photo runs
(with their thresholds and options) and the features it asks for."""

from __future__ import annotations

from inspectlang import ast, identifiers
from inspectlang.checker.checked import CheckedImage, CheckedValidation
from inspectlang.checker.context import Run
from inspectlang.checker.declarations import first_declared
from inspectlang.checker.properties import HOURS, METERS
from inspectlang.checker.scope import ImageRef
from inspectlang.diagnostics import did_you_mean
from inspectlang.manifest import FEATURE_NAMES, VALIDATION_NAMES
from inspectlang.property_values import norm, span_of
from inspectlang.vocabulary import MAX_IMAGES, VALIDATION_NUMBER_OPTIONS

IMAGE_PROPERTIES = ("side", "id", "label", "ask when")
VALIDATION_MODIFIERS = (
    "required",
    "optional",
    "not run",
    "minimum confidence",
    "review below confidence",
    "within",
    "minimum size",
    *VALIDATION_NUMBER_OPTIONS,
)


def declare_images(run: Run) -> None:
    """Every image (at most MAX_IMAGES): into the scope and the template."""
    images = run.declared(ast.ImageDecl)
    if run.reporter.limit(len(images), MAX_IMAGES, "images", run.last_span(images)):
        _declare(run, images)


def _declare(run: Run, decls: list[ast.ImageDecl]) -> None:
    report, properties, scope = run.reporter.report, run.properties, run.scope
    sides: dict[str, int] = {}
    for decl in decls:
        if decl.name in scope.images:
            report(
                "E012",
                f"image `{decl.name}` is declared twice",
                span_of(decl),
                notes=(first_declared(decls, decl),),
            )
            continue
        optional = any(isinstance(i, ast.Flag) and norm(i.words) == "optional" for i in decl.items)
        props = properties.properties(
            tuple(
                i
                for i in decl.items
                if not isinstance(i, (ast.Validate, ast.FeatureUse))
                and not (isinstance(i, ast.Flag) and norm(i.words) == "optional")
            ),
            IMAGE_PROPERTIES,
            f"image `{decl.name}`",
            translatable=("label",),
        )
        side = properties.text_value(props.get("side"))
        side = decl.name if side is None else side
        if side in sides:
            report(
                "E013",
                f"side `{side}` is used by two images",
                span_of(props.get("side") or decl),
                notes=(f"first used on line {sides[side]}",),
            )
        sides.setdefault(side, decl.span.line)
        identifier = properties.identifier(
            props.get("id"),
            identifiers.IMAGE_IDENTIFIER,
            "`image_<uuid>`",
            identifiers.image_identifier(run.template.template_id, decl.name),
            span_of(decl),
        )
        labels: dict[str, str] = {}
        for key, prop in props.items():
            if key.startswith("label"):
                label = properties.text_value(prop)
                if label is not None:
                    locale = prop.locale if prop.locale != properties.locales[0] else None
                    labels[locale or ""] = label
        validations: list[CheckedValidation] = []
        features: list[str] = []
        for item in decl.items:
            if isinstance(item, ast.Validate):
                checked = _validation(run, decl.name, item, validations)
                if checked is not None:
                    validations.append(checked)
            elif isinstance(item, ast.FeatureUse):
                if item.name not in FEATURE_NAMES:
                    report(
                        "E027",
                        f"unknown feature `{item.name}`",
                        item.span,
                        did_you_mean(item.name, FEATURE_NAMES),
                    )
                elif item.name in features:
                    report("E012", f"feature `{item.name}` is given twice", item.span)
                else:
                    features.append(item.name)
        ask_when: ast.Expr | None = None
        ask_prop = props.get("ask when")
        if ask_prop is not None:
            value = properties.single(ask_prop, "condition")
            if isinstance(value, ast.Quantity | ast.Size):
                report("E019", "`ask when` takes a condition", value.span)
            elif value is not None:
                ask_when = value
        ref = ImageRef(identifier, frozenset(v.name for v in validations))
        scope.images[decl.name] = ref
        scope.images_by_identifier.setdefault(identifier, ref)
        run.template.images.append(
            CheckedImage(
                decl.name,
                side,
                identifier,
                labels,
                validations,
                features,
                optional=optional,
                ask_when_source=ask_when,
            )
        )


def _validation(
    run: Run, image: str, item: ast.Validate, earlier: list[CheckedValidation]
) -> CheckedValidation | None:
    report, properties = run.reporter.report, run.properties
    span = span_of(item)
    if item.name not in VALIDATION_NAMES:
        report(
            "E026",
            f"unknown validation `{item.name}`",
            span,
            did_you_mean(item.name, VALIDATION_NAMES),
            notes=("validations: " + ", ".join(VALIDATION_NAMES),),
        )
        run.scope.unknown_validations.add(item.name)
        return None
    if any(v.name == item.name for v in earlier):
        report("E012", f"validation `{item.name}` is given twice for image `{image}`", span)
        return None
    runs, required = True, True
    confidence = float(run.template.parameters.get("minConfidence", 80))
    options: dict[str, float] = {}
    review_below: float | None = None
    seen: set[str] = set()
    for modifier in item.modifiers:
        words = norm(modifier.words)
        if words not in VALIDATION_MODIFIERS:
            report(
                "E010",
                f"unknown validation option `{modifier.words}`",
                modifier.span,
                did_you_mean(words, VALIDATION_MODIFIERS),
            )
            continue
        group = "required" if words == "optional" else words
        if group in seen:
            report("E012", f"`{modifier.words}` conflicts with an earlier option", modifier.span)
            continue
        seen.add(group)
        value = modifier.value
        if words == "optional":
            required = False
        elif words == "not run":
            runs = False
        elif words == "minimum confidence":
            if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 100:
                confidence = float(value)
            else:
                report("E019", "`minimum confidence` takes a number from 0 to 100", modifier.span)
        elif words == "review below confidence":
            if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 100:
                review_below = float(value)
            else:
                report(
                    "E019",
                    "`review below confidence` takes a number above 0, at most 100: a machine "
                    "result under it is decided by a person",
                    modifier.span,
                )
        elif words == "within":
            unit = value.unit.lower() if isinstance(value, ast.Quantity) else ""
            if unit in HOURS:
                hours = properties.quantity(value, HOURS, "a duration", modifier.span)
                if hours is not None:
                    options["maxAgeHours"] = hours
            else:
                meters = properties.quantity(
                    value, METERS, "`within N hours` or `within N meters`", modifier.span
                )
                if meters is not None:
                    options["maxDistanceMeters"] = meters
        elif words == "minimum size":
            size = properties.size_value(value, modifier.span)
            if size is not None:
                options["minWidth"], options["minHeight"] = float(size[0]), float(size[1])
        elif words in VALIDATION_NUMBER_OPTIONS:
            validation, key, low, high = VALIDATION_NUMBER_OPTIONS[words]
            if item.name != validation:
                report(
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
                report(
                    "E019",
                    f"`{modifier.words}` takes a number from {low:g} to {high:g}",
                    modifier.span,
                )
    return CheckedValidation(
        item.name,
        identifiers.validation_id(run.template.template_id, image, item.name),
        runs,
        required,
        confidence,
        options,
        review_below,
    )
