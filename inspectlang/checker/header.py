"""The template header (`template "NAME"` with its type, id and locales), the blocks a file may
hold once, and `settings` (the template's parameters)."""

from __future__ import annotations

from inspectlang import ast, identifiers
from inspectlang.checker.context import Run
from inspectlang.checker.properties import DEFAULT_LOCALE, HOURS, LOCALE, METERS
from inspectlang.diagnostics import did_you_mean
from inspectlang.manifest import INSPECTION_TYPES, PRODUCT_FIELDS
from inspectlang.property_values import word

TEMPLATE_PROPERTIES = ("type", "id", "locales")
#: Settings as written -> the manifest's parameter.
SETTINGS: dict[str, str] = {
    "max attempts": "maxAttempts",
    "link expires after": "linkExpiresInHours",
    "inspection expires after": "expiresInHours",
    "minimum confidence": "minConfidence",
    "photo age limit": "maxPhotoAgeHours",
    "photo distance limit": "maxDistanceMeters",
    "minimum photo size": "minImageSize",
}


def check_includes_resolved(run: Run) -> None:
    """`include` lines are inlined before checking (`inspectlang.includes`, by `check_source`
    and `compile_source`); one still here reached the checker unresolved."""
    for decl in run.declared(ast.IncludeDecl):
        run.reporter.report(
            "E043",
            f'`include "{decl.name}"` was not resolved: compile the source with a resolver '
            "(`compile_source(..., includes=...)`)",
            decl.name_span,
        )


def check_header(run: Run) -> None:
    """Name, id, inspection type and locales; the scope learns the product's fields."""
    report, template, properties = run.reporter.report, run.template, run.properties
    headers = run.declared(ast.TemplateDecl)
    if not headers:
        report(
            "E011", 'missing template header: start with `template "NAME"`', ast.Span(1, 1, 1, 1)
        )
        template.template_id = identifiers.template_id("")
        return
    for extra in headers[1:]:
        report("E012", "a file holds one template: second `template` header", extra.span)
    decl = headers[0]
    template.name = decl.name
    if not decl.name.strip():
        report("E019", "the template name cannot be empty", decl.span)
    props = properties.properties(decl.items, TEMPLATE_PROPERTIES, "the template header")
    locales_prop = props.get("locales")
    if locales_prop is not None:
        locales: list[str] = []
        for value in locales_prop.values:
            locale = word(value)
            if locale is None or not LOCALE.match(locale):
                report("E028", "a locale is written `xx_YY`, e.g. `en_US`", value.span)
            elif locale in locales:
                report("E012", f"locale `{locale}` is listed twice", value.span)
            else:
                locales.append(locale)
        properties.locales = template.locales = locales or [DEFAULT_LOCALE]
    type_prop = props.get("type")
    if type_prop is None:
        report("E011", "the template needs `type:` (the inspection type)", decl.span)
    else:
        type_value = properties.single(type_prop, "inspection type")
        type_name = word(type_value) if type_value is not None else None
        if type_value is not None and type_name not in INSPECTION_TYPES:
            report(
                "E016",
                f"unknown inspection type `{type_name or ''}`",
                type_value.span,
                did_you_mean(type_name or "", INSPECTION_TYPES),
            )
        elif type_name is not None:
            template.inspection_type = type_name
    run.scope.inspection_type = template.inspection_type
    run.scope.product_fields = PRODUCT_FIELDS[template.inspection_type]
    template.template_id = properties.identifier(
        props.get("id"),
        identifiers.OBJECT_ID,
        "24 hex digits",
        identifiers.template_id(decl.name),
        decl.span,
    )


def check_single_blocks(run: Run) -> None:
    """`settings`, `product`, `consumer` and `verdict` appear at most once (E012)."""
    once: tuple[type[ast.Declaration], ...] = (
        ast.SettingsDecl,
        ast.ProductDecl,
        ast.ConsumerDecl,
        ast.VerdictDecl,
    )
    for kind in once:
        for extra in run.declared(kind)[1:]:
            run.reporter.report("E012", "this block may appear only once", extra.span)


def check_settings(run: Run) -> None:
    """The template's parameters, defaults first."""
    params, properties = run.template.parameters, run.properties
    params.update(maxAttempts=3, minConfidence=80)
    found = run.declared(ast.SettingsDecl)
    if not found:
        return
    props = properties.properties(found[0].items, tuple(SETTINGS), "settings")
    for key, prop in props.items():
        target = SETTINGS[key]
        if key == "max attempts":
            result = properties.number_value(prop, 1, 1000, integer=True)
        elif key == "minimum confidence":
            result = properties.number_value(prop, 0, 100)
        elif key == "minimum photo size":
            value = properties.single(prop, "size")
            size = properties.size_value(value, prop.span) if value is not None else None
            if size is not None:
                params["minImageWidth"], params["minImageHeight"] = size
            continue
        else:
            value = properties.single(prop, "quantity")
            if value is None:
                continue
            if key == "photo distance limit":
                result = properties.quantity(
                    value, METERS, "a distance such as `500 meters`", prop.span
                )
            else:
                result = properties.quantity(
                    value, HOURS, "a duration such as `48 hours`", prop.span
                )
        if result is not None:
            params[target] = result
