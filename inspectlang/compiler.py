"""The compiler: source text or a parsed module -> the Template manifest (`inspectlang.manifest`).

Parsing is `inspectlang.parser`'s, checking `inspectlang.checker`'s; this module only turns a
`CheckedTemplate` into the manifest: the spec's Template object field for field, the creation
body's JSON Schema (`inspectlang.schema`) and the `logic` the runtime runs (docs/design/ir.md).
`logic.revision` is a content hash, so an unchanged file always compiles to the same revision.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel

from inspectlang import ast, ir
from inspectlang.checker import CheckedTemplate, check_module
from inspectlang.checker.checked import Translations
from inspectlang.checker.expressions import ExpressionChecker
from inspectlang.checker.scope import Scope
from inspectlang.diagnostics import Diagnostic, Reporter, TemplateError
from inspectlang.includes import (
    INCLUDE_LINES,
    DirectoryResolver,
    Expansion,
    IncludeResolver,
    Overlay,
    check_shared_file,
    expand,
    includers,
    is_shared_file,
    resolver_of,
)
from inspectlang.manifest import (
    INSPECTION_TYPES,
    PRODUCT_FIELDS,
    Check,
    CheckTranslation,
    Disapproval,
    EventFilter,
    FeatureLogic,
    FeatureSpec,
    ImageLogic,
    ImageSpec,
    InputLogic,
    InputOption,
    InputSpec,
    InputTranslation,
    InputType,
    InspectionType,
    IRNode,
    LetLogic,
    Logic,
    Parameters,
    ReasonTranslation,
    Requirements,
    Rule,
    Stage,
    Template,
    TemplateKind,
    ValidationLogic,
    ValidationSchema,
    ValidationSpec,
    VariableSpec,
    VariableType,
    Verdict,
    with_revision,
)
from inspectlang.schema import creation_schema
from inspectlang.timestamps import utc_timestamp

#: Diagnostics about something missing are not reported when the file has syntax errors: the
#: missing declaration is most likely the one the parser could not read.
_MISSING = frozenset({"E011", "E020", "E034", "E035"})


def _parse(source: str, filename: str) -> tuple[ast.Module | None, list[Diagnostic]]:
    from inspectlang.parser import parse_with_diagnostics

    return parse_with_diagnostics(source, filename)


Includes = IncludeResolver | Mapping[str, str] | None


def _check(
    source: str, filename: str, template_kind: str, includes: Includes = None
) -> tuple[CheckedTemplate | None, list[Diagnostic], Expansion | None]:
    module, diagnostics = _parse(source, filename)
    if module is None:
        return None, diagnostics, None
    expansion = expand(module, resolver_of(includes), _parse)
    checked, found = check_module(expansion.module, template_kind=template_kind)
    if not expansion.files and not expansion.diagnostics:
        if diagnostics:
            broken = _broken_declarations(source, diagnostics)
            found = [d for d in found if not _hidden_by(d, broken)]
            return None, _in_order([*diagnostics, *found]), None
        return checked, found, expansion
    # Included files: their diagnostics go back to their own files and lines.
    broken = _broken_declarations(source, diagnostics) if diagnostics else set()
    for file in expansion.files:
        if file.filename in expansion.syntax:
            broken |= _broken_declarations(file.source, expansion.syntax[file.filename])
    if any(d.code in ("E043", "E044") for d in expansion.diagnostics):
        broken.add(("?", None))  # what is missing may be what the unread file defines
    # A shared file's let that this template does not read is no warning: other templates
    # that include the file may read it.
    found = [d for d in found if not (d.code == "W006" and d.span.line >= INCLUDE_LINES)]
    found = [*expansion.diagnostics, *found]
    if broken:
        found = [d for d in found if not _hidden_by(d, broken)]
    order = {file.filename: number for number, file in enumerate(expansion.files, 1)}
    placed = [*diagnostics, *(expansion.place(d) for d in found)]
    placed.sort(key=lambda d: (order.get(d.filename, 0), d.span.line, d.span.column))
    if diagnostics or any(d.severity == "error" for d in placed):
        return None, placed, expansion
    return checked, placed, expansion


def _in_order(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.span.line, d.span.column))


#: Compiled by `re` (its own cache) when first used: only files with syntax errors need it.
_HEADER = r"^(?P<keyword>[a-z]+)\b(?:\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*))?"


def _broken_declarations(source: str, syntax: list[Diagnostic]) -> set[tuple[str, str | None]]:
    """The (keyword, name) of each declaration a syntax error broke: the header at the left
    margin at or above the error's line. (`?`, None) when no header can be found."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    broken: set[tuple[str, str | None]] = set()
    for diagnostic in syntax:
        line = min(max(diagnostic.span.line, 1), len(lines))
        header = None
        for index in range(line - 1, -1, -1):
            text = lines[index]
            if text and not text[0].isspace() and not text.startswith("#"):
                header = re.match(_HEADER, text)
                break
        broken.add((header["keyword"], header["name"]) if header else ("?", None))
    return broken


#: What a declaration of each keyword could have defined, for the "missing" diagnostics.
_DEFINES = {"E034": "verdict", "E011": "template"}


def _hidden_by(diagnostic: Diagnostic, broken: set[tuple[str, str | None]]) -> bool:
    """A "missing" diagnostic the broken declarations may explain: a name one of them would
    have defined, the verdict or template header when that is what broke, rules that cannot
    fire when an input or image broke. Every other diagnostic is still reported."""
    if diagnostic.code not in _MISSING:
        return False
    if ("?", None) in broken:
        return True
    keywords = {keyword for keyword, _ in broken}
    if _DEFINES.get(diagnostic.code) in keywords:
        return True
    if diagnostic.code == "E035" and keywords & {"input", "image"}:
        return True
    return any(name and f"`{name}`" in diagnostic.message for _, name in broken)


def check_source(
    source: str,
    filename: str = "<template>",
    *,
    template_kind: str = "created",
    includes: Includes = None,
) -> list[Diagnostic]:
    """Every diagnostic of a template (syntax, then names, types and logic), errors and
    warnings, in source order (an included file's after the template's, in its own file and
    lines). An empty list means the file compiles without warnings. `includes` resolves the
    names of `include` lines (a mapping name -> source, or an `IncludeResolver`)."""
    return _check(source, filename, template_kind, includes)[1]


def check_file(source: str, path: str, *, template_kind: str = "created") -> list[Diagnostic]:
    """What `inspectlang check` and the editor report for a file on disk. A template is checked
    with its includes resolved in its folder. A shared file (`is_shared_file`) is checked as
    part of the first template of its folder that includes it (its own problems only, names
    included), else on its own (`check_shared_file`)."""
    file = Path(path)
    folder = DirectoryResolver(file.parent)
    module, syntax = _parse(source, path)
    if module is None or syntax or not is_shared_file(module):
        return check_source(source, path, template_kind=template_kind, includes=folder)
    for includer in includers(file):
        text = folder.source(includer.stem)
        if text is None:
            continue
        overlay = Overlay(folder, file.stem, source)
        found = check_source(text, str(includer), template_kind=template_kind, includes=overlay)
        own = [d for d in found if d.filename == folder.filename(file.stem)]
        return [dataclasses.replace(d, filename=path) for d in own]
    return [dataclasses.replace(d, filename=path) for d in check_shared_file(source, file.stem)]


def compile_source(
    source: str,
    filename: str = "<template>",
    *,
    template_kind: str = "created",
    now: datetime | None = None,
    includes: Includes = None,
) -> Template:
    """Compile `.insp` text to a Template manifest; raises `TemplateError` with every error.

    `includes` resolves `include` lines (see `check_source`). The manifest is self-contained:
    the included lets, checks and inputs are in it as if written in the file, and the spans
    it records for them are the span of the `include` line that brought them in."""
    checked, diagnostics, expansion = _check(source, filename, template_kind, includes)
    if checked is None:
        sources = {file.filename: file.source for file in expansion.files} if expansion else {}
        errors = [d for d in diagnostics if d.severity == "error"]
        raise TemplateError(errors, source, {filename: source, **sources})
    template = _unhashed_manifest(checked, now)
    if expansion is not None and expansion.files:
        _respan(template.logic, expansion)
    return with_revision(template)  # once, on the spans the manifest keeps


def _respan(value: Any, expansion: Expansion) -> None:
    """Replace, in place, every span of an included file in the manifest's logic (freshly built
    by `_unhashed_manifest`, so nothing else holds these lists) by `Expansion.manifest_span`."""
    if isinstance(value, BaseModel):
        items: Any = value.__dict__.items()
    elif isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        for item in value:
            _respan(item, expansion)
        return
    else:
        return
    for key, item in items:
        if key == "span" and isinstance(item, list) and len(item) == 4:
            item[:] = expansion.manifest_span(item)
        else:
            _respan(item, expansion)


def compile_module(
    module: ast.Module, *, template_kind: str = "created", now: datetime | None = None
) -> Template:
    """Compile an already parsed module (e.g. one built by the decompiler)."""
    checked, diagnostics = check_module(module, template_kind=template_kind)
    if checked is None:
        raise TemplateError([d for d in diagnostics if d.severity == "error"])
    return build_manifest(checked, now=now)


def timestamp(now: datetime | None = None) -> str:
    """ISO 8601 in UTC with milliseconds and `Z`, the spec's timestamp form (default: now)."""
    return utc_timestamp(now or datetime.now(UTC), milliseconds=True)


_Model = TypeVar("_Model", bound=BaseModel)


@cache
def _float_fields(model: type[BaseModel]) -> tuple[frozenset[str], frozenset[str]]:
    """The fields of `model` that hold a float, and those that hold a dict of floats."""
    floats: set[str] = set()
    float_dicts: set[str] = set()
    for name, info in model.__pydantic_fields__.items():
        annotation = info.annotation
        arguments = get_args(annotation)
        if annotation is float or (float in arguments and int not in arguments):
            floats.add(name)
        elif get_origin(annotation) is dict and get_args(annotation)[1] is float:
            float_dicts.add(name)
    return frozenset(floats), frozenset(float_dicts)


#: Defaults `_construct` may share between instances, as pydantic's own copy would return them.
_IMMUTABLE = (type(None), bool, int, float, str)

#: In `_plan`: a required field (left out when not given, as `model_construct` does) and a
#: field with a default factory (not given: `model_construct` itself is called).
_REQUIRED: Any = object()
_FACTORY: Any = object()
#: In `_plan`: what a given value goes through (whole numbers made floats, as validation would).
_AS_IS, _FLOAT, _FLOAT_DICT = 0, 1, 2

#: A field's step in `_plan`: (name, default or `_REQUIRED`/`_FACTORY`, conversion).
_Step = tuple[str, Any, int]


@dataclass(frozen=True, slots=True)
class _Shape:
    """What `_construct` needs of a model, kept per model in `_SHAPES`."""

    #: The fields' names in order: a call giving exactly these, in this order, has its
    #: keyword arguments in the order `model_construct` would write the `__dict__`.
    names: tuple[str, ...]
    floats: tuple[str, ...]
    float_dicts: tuple[str, ...]
    #: The steps for any other call (see `_plan`).
    plan: tuple[_Step, ...] | None


def _shape(model: type[BaseModel]) -> _Shape:
    floats, float_dicts = _float_fields(model)
    names = tuple(model.__pydantic_fields__)
    return _Shape(
        names,
        tuple(name for name in names if name in floats),
        tuple(name for name in names if name in float_dicts),
        _plan(model),
    )


def _plan(model: type[BaseModel]) -> tuple[_Step, ...] | None:
    """Per field of `model`, in order, what `_construct` puts in the instance's `__dict__`:
    the given value (converted) or the default. None when a default is mutable (`_construct`
    then calls `model_construct`, which copies it)."""
    floats, float_dicts = _float_fields(model)
    steps: list[_Step] = []
    for name, info in model.__pydantic_fields__.items():
        conversion = _FLOAT if name in floats else _FLOAT_DICT if name in float_dicts else _AS_IS
        if info.default_factory is not None:
            steps.append((name, _FACTORY, conversion))
        elif info.is_required():
            steps.append((name, _REQUIRED, conversion))
        elif isinstance(info.default, _IMMUTABLE):
            steps.append((name, info.default, conversion))
        else:
            return None
    return tuple(steps)


_SHAPES: dict[type[BaseModel], _Shape] = {}

_new = object.__new__
# The slots `model_construct` sets, through their own setters (cheaper than
# `object.__setattr__`, which looks the name up first; ~1,100 models in a large manifest).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _construct(model: type[_Model], **values: Any) -> _Model:
    """`model.model_construct(**values)` with whole numbers in float fields made floats, as
    validation would: the manifest is then the same object as when validated from its JSON.

    Built as `model_construct` builds it (the same `__dict__` in field order, the given names
    as the fields set, no extra, no private) without its per-field alias and default lookups:
    the compiler builds thousands of these for a large template (issue 26). A call that gives
    every field in field order (most of the compiler's) has its keyword arguments, a dict of
    its own, taken as the `__dict__`; any other goes through the model's `_plan`. A field left
    to its default factory, or a name that is no field, goes through `model_construct` itself."""
    try:
        shape = _SHAPES[model]
    except KeyError:
        shape = _SHAPES[model] = _shape(model)
    data: dict[str, Any] | None = None
    if tuple(values) == shape.names:
        data = values
        for name in shape.floats:
            if type(values[name]) is int:
                values[name] = float(values[name])
        for name in shape.float_dicts:
            values[name] = {key: float(item) for key, item in values[name].items()}
    elif shape.plan is not None:
        data = {}
        given = 0
        for name, default, conversion in shape.plan:
            if name in values:
                value = values[name]
                if conversion:
                    if conversion == _FLOAT:
                        if type(value) is int:
                            value = float(value)
                    else:
                        value = {key: float(item) for key, item in value.items()}
                data[name] = value
                given += 1
            elif default is _FACTORY:
                data = None
                break
            elif default is not _REQUIRED:
                data[name] = default
        if given != len(values):
            data = None
    if data is not None:
        instance = _new(model)
        _set_dict(instance, data)
        _set_fields_set(instance, set(values))
        _set_extra(instance, None)
        _set_private(instance, None)
        return instance
    floats, float_dicts = _float_fields(model)
    for name in floats:
        if type(values.get(name)) is int:
            values[name] = float(values[name])
    for name in float_dicts:
        if name in values:
            values[name] = {key: float(item) for key, item in values[name].items()}
    return model.model_construct(**values)


def build_manifest(checked: CheckedTemplate, *, now: datetime | None = None) -> Template:
    """The Template manifest of a checked template (no further checks: the input is valid).

    The models are built with `model_construct` (the checker already validated every value) and
    the manifest models defer building their pydantic schemas, so compiling never pays for
    pydantic's schema build: that happens on first validation or serialization (`to_api`)."""
    return with_revision(_unhashed_manifest(checked, now))


def _unhashed_manifest(checked: CheckedTemplate, now: datetime | None) -> Template:
    """`build_manifest` without `logic.revision` (empty): `compile_source` first moves an
    included file's spans, then hashes once."""
    moment = timestamp(now)
    inputs = [
        _construct(
            InputSpec,
            identifier=i.identifier,
            label=i.label,
            type=cast(InputType, i.input_type),
            options=[
                _construct(InputOption, key=key, label=label)
                for key, label in zip(i.option_keys or [], i.option_labels, strict=True)
            ]
            if i.option_labels is not None
            else None,
            stages=cast(list[Stage], i.stages),
            validationSchema=_construct(ValidationSchema, required=i.required, **i.checks),
            helperMessage=i.help,
        )
        for i in checked.inputs
    ]
    logic = _construct(
        Logic,
        sourceName=checked.filename,
        locales=checked.locales,
        images={
            image.identifier: _construct(
                ImageLogic,
                name=image.name,
                labels=image.labels,
                validations={
                    v.name: _construct(
                        ValidationLogic,
                        minConfidence=v.min_confidence,
                        reviewBelow=v.review_below,
                        options=v.options,
                    )
                    for v in image.validations
                },
                features=image.features,
                optional=image.optional or None,
                askWhen=_json(image.ask_when),
            )
            for image in checked.images
        },
        inputs={
            i.identifier: _construct(
                InputLogic,
                name=i.name,
                optionKeys=i.option_keys,
                image=i.image,
                translations={
                    locale: _construct(InputTranslation, **values)
                    for locale, values in i.translations.items()
                },
                askWhen=_json(i.ask_when),
            )
            for i in checked.inputs
        },
        features=[
            _construct(FeatureLogic, feature=name, active=active)
            for name, (active, _) in checked.features.items()
        ],
        requirements=_construct(
            Requirements, product=checked.product_required, consumer=checked.consumer_required
        ),
        rules=[
            _construct(
                Rule,
                id=rule.id,
                on=_construct(
                    EventFilter,
                    event=rule.event,
                    input=rule.input,
                    image=rule.image,
                    validation=rule.validation,
                ),
                body=[ir.to_json(statement) for statement in rule.body],
                span=rule.span.as_list(),
            )
            for rule in checked.rules
        ],
        checks=[
            _construct(
                Check,
                id=check.id,
                key=check.key,
                name=check.name,
                description=check.description,
                valid=ir.to_json(check.valid),
                span=check.span.as_list(),
                translations={
                    locale: _construct(CheckTranslation, **texts)
                    for locale, texts in check.translations.items()
                }
                or None,
                informational=True if check.informational else None,
            )
            for check in checked.checks
        ],
        lets=[
            _construct(LetLogic, name=name, value=ir.to_json(node), span=span.as_list())
            for name, node, span in checked.lets
        ],
        verdict=_construct(
            Verdict,
            approveWhen=_json(checked.verdict.approve_when),
            disapprove=[
                _construct(
                    Disapproval,
                    reason=reason,
                    when=ir.to_json(when),
                    span=span.as_list(),
                    message=_json(message),
                    translations=_translations(translated),
                )
                for reason, when, span, message, translated in checked.verdict.disapprove
            ],
            otherwise=checked.verdict.otherwise,
            otherwiseMessage=_json(checked.verdict.otherwise_message),
            review=[
                _construct(
                    Disapproval,
                    reason=reason,
                    when=ir.to_json(when),
                    span=span.as_list(),
                    message=_json(message),
                    translations=_translations(translated),
                )
                for reason, when, span, message, translated in checked.verdict.review
            ]
            or None,
            span=checked.verdict.span.as_list() if checked.verdict.span else None,
            otherwiseTranslations=_translations(checked.verdict.otherwise_translations),
        ),
    )
    return _construct(
        Template,
        id=checked.template_id,
        type=cast(TemplateKind, checked.template_kind),
        inspectionType=cast(InspectionType, checked.inspection_type),
        name=checked.name,
        createdAt=moment,
        updatedAt=moment,
        parameters=_construct(Parameters, **checked.parameters),
        variables=[
            _construct(
                VariableSpec, name=name, type=cast(VariableType, type_), initialValue=initial
            )
            for name, type_, initial in checked.variables
        ],
        images=[
            _construct(
                ImageSpec,
                side=image.side,
                identifier=image.identifier,
                validations=[
                    _construct(
                        ValidationSpec, id=v.id, run=v.run, required=v.required, validation=v.name
                    )
                    for v in image.validations
                ],
            )
            for image in checked.images
        ],
        inputs=inputs,
        features=[
            _construct(FeatureSpec, id=feature_id, feature=name)
            for name, (active, feature_id) in checked.features.items()
            if active
        ],
        schema_=creation_schema(
            checked.inspection_type,
            inputs,
            checked.product_required,
            checked.consumer_required,
            logic.inputs,
        ),
        logic=logic,
    )


def _json(node: ir.Expression | None) -> IRNode | None:
    return None if node is None else ir.to_json(node)


def _translations(translated: Translations) -> dict[str, ReasonTranslation] | None:
    """A verdict line's translated reasons for the manifest (None when none: the manifest and
    its revision stay those of a template compiled before translations)."""
    if not translated:
        return None
    return {
        locale: _construct(ReasonTranslation, reason=text, message=_json(node))
        for locale, (text, node) in translated.items()
    }


# -- standalone expressions -------------------------------------------------------------------

_EXPRESSION_PREFIX = "    valid when: "


def _shift(span: ast.Span, columns: int) -> ast.Span:
    if span.line != 2:
        return span
    return ast.Span(1, span.column - columns, 1, span.end_column - columns)


def _shift_ir(node: Any, columns: int) -> None:
    if isinstance(node, dict):
        span = node.get("span")
        if isinstance(span, list) and len(span) == 4 and span[0] == 2:
            node["span"] = [1, span[1] - columns, 1, span[3] - columns]
        for value in node.values():
            _shift_ir(value, columns)
    elif isinstance(node, list):
        for value in node:
            _shift_ir(value, columns)


def compile_expression(
    source: str,
    *,
    variables: Mapping[str, str] | None = None,
    inspection_type: str = "car",
    locals: Mapping[str, str] | None = None,
) -> IRNode:
    """Check one expression against a small declared context and return its IR node.

    `variables` maps variable names to `numeric` or `text`; `locals` maps bound names to types
    (`number`, `image`, `list<text>`...). The expression is parsed with the template grammar by
    wrapping it in a synthetic check; spans are then made relative to the expression (line 1).
    Raises `TemplateError` with every error.
    """
    columns = len(_EXPRESSION_PREFIX)
    if "\n" in source or "\r" in source:
        diagnostic = Diagnostic("E001", "an expression is one line", ast.Span(1, 1, 1, 2))
        raise TemplateError([diagnostic], source)
    module, diagnostics = _parse(
        f"check expression\n{_EXPRESSION_PREFIX}{source}\n", "<expression>"
    )
    expression: ast.Expr | None = None
    if module is not None and module.declarations:
        declaration = module.declarations[0]
        if isinstance(declaration, ast.CheckDecl) and declaration.items:
            item = declaration.items[0]
            if isinstance(item, ast.Property) and len(item.values) == 1:
                value = item.values[0]
                if not isinstance(value, ast.Quantity | ast.Size):
                    expression = value
    if expression is None and not diagnostics:
        diagnostics = [Diagnostic("E001", "not an expression", ast.Span(2, columns + 1, 2, 0))]
    node: IRNode = {}
    reporter = Reporter("<expression>")
    reporter.diagnostics = diagnostics
    if expression is not None and not diagnostics:
        if inspection_type not in INSPECTION_TYPES:
            inspection_type = "car"
        scope = Scope(
            inspection_type=inspection_type,
            product_fields=PRODUCT_FIELDS[inspection_type],
            variables={
                name: "numeric" if kind in ("numeric", "number") else "text"
                for name, kind in (variables or {}).items()
            },
            locals=dict(locals or {}),
        )
        node = ir.to_json(ExpressionChecker(scope, reporter).check(expression)[1])
    errors = [
        Diagnostic(d.code, d.message, _shift(d.span, columns), d.filename, d.severity, d.suggestion)
        for d in diagnostics
        if d.severity == "error"
    ]
    if errors:
        raise TemplateError(errors, source)
    _shift_ir(node, columns)
    return node
