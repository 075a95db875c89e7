"""Inputs and the creation body's JSON Schema.

Two halves of one concern, what a creation request must carry: reading an input declaration's
properties into the manifest's `validationSchema` (the checker calls `read_input`), and building
the template's `schema` (JSON Schema draft 3, in the spec's shape) from the compiled inputs and
requirements (`creation_schema`), plus `creation_validator` for the runtime.

The spec's creation body sends `inputs` as an ARRAY of `{identifier, value}`, while the schema
keys `inputs` by identifier (the spec's shape). Before validating, the runtime converts the array
to an object with `inputs_to_object` (a later item with the same identifier wins), so that the
schema's `inputs.properties.<identifier>` applies to each value.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from inspectlang import ast, identifiers
from inspectlang.ask_schema import ask_when_schemas
from inspectlang.checked import CheckedInput
from inspectlang.diagnostics import did_you_mean
from inspectlang.expression_types import is_iso_date, regex_problem
from inspectlang.manifest import (
    CONSUMER_FIELDS,
    INPUT_TYPES,
    PRODUCT_FIELDS,
    InputLogic,
    InputSpec,
)
from inspectlang.property_values import first_given, norm, span_of, text, word

if TYPE_CHECKING:
    from jsonschema import Draft3Validator

    from inspectlang.check_properties import PropertyChecker
    from inspectlang.manifest import Template

DRAFT3 = "http://json-schema.org/draft-03/schema#"
#: Bytes per size unit in `maximum size` (binary multiples: 1 MB = 1,048,576 bytes).
BYTES = {"b": 1, "byte": 1, "bytes": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3}

#: Most options a choice input may have.
MAX_OPTIONS = 500

#: Properties every input may have.
COMMON_INPUT_PROPERTIES = (
    "type",
    "label",
    "help",
    "asked at",
    "ask when",
    "for image",
    "id",
)
#: Properties (and flags) each input type adds, with the `validationSchema` key each fills.
TYPE_PROPERTIES: dict[str, dict[str, str]] = {
    "text": {
        "minimum length": "minLength",
        "maximum length": "maxLength",
        "pattern": "pattern",
        "email": "email",
    },
    "numeric": {"minimum": "minimum", "maximum": "maximum", "whole number": "integer"},
    "date": {"earliest": "minDate", "latest": "maxDate"},
    "select": {},
    "multiselect": {"minimum choices": "minItems", "maximum choices": "maxItems"},
    "check": {},
    "file": {"accepts": "mediaTypes", "maximum size": "maxSizeBytes"},
}
TYPE_PROPERTIES["textarea"] = TYPE_PROPERTIES["text"]
TYPE_PROPERTIES["video"] = TYPE_PROPERTIES["file"]
#: Flags (properties without a value) of inputs.
INPUT_FLAGS = ("required", "optional", "whole number", "email")
#: Every key an input may write; the checker uses it for "unknown property" (E010).
INPUT_PROPERTIES: tuple[str, ...] = COMMON_INPUT_PROPERTIES + tuple(
    dict.fromkeys(k for table in TYPE_PROPERTIES.values() for k in table if k not in INPUT_FLAGS)
)
#: (lower bound key, upper bound key, what) pairs that must be ordered (E032).
BOUNDS = (
    ("minLength", "maxLength", "`minimum length` is above `maximum length`"),
    ("minimum", "maximum", "`minimum` is above `maximum`"),
    ("minDate", "maxDate", "`earliest` is after `latest`"),
    ("minItems", "maxItems", "`minimum choices` is above `maximum choices`"),
)


def date_value(value: ast.PropertyValue) -> str | None:
    """`date("2020-01-01")` or `"2020-01-01"` as an ISO date, else None."""
    if isinstance(value, ast.Call) and value.function == "date" and len(value.arguments) == 1:
        value = value.arguments[0]
    result = text(value)
    return result if result is not None and is_iso_date(result) else None


def allowed_note(input_type: str) -> str:
    own = list(TYPE_PROPERTIES[input_type])
    if not own:
        return f"a {input_type} input has no properties of its own"
    return f"a {input_type} input takes: " + ", ".join(f"`{key}`" for key in own)


def read_input_checks(
    checker: PropertyChecker,
    input_type: str,
    props: Mapping[str, ast.Property],
    flags: Iterable[ast.Flag],
    where: str,
) -> dict[str, Any]:
    """The input type's own checks from its properties and flags (`validationSchema` keys)."""
    allowed = TYPE_PROPERTIES[input_type]
    checks: dict[str, Any] = {}
    spans: dict[str, ast.Span] = {}
    for flag in flags:
        words = norm(flag.words)
        if words in ("required", "optional"):
            continue
        if words not in INPUT_FLAGS:
            checker.report(
                "E010",
                f"unknown flag `{flag.words}` in {where}",
                flag.span,
                did_you_mean(words, INPUT_FLAGS),
            )
        elif words not in allowed:
            checker.report(
                "E017",
                f"`{words}` is not allowed for a {input_type} input",
                flag.span,
                notes=(allowed_note(input_type),),
            )
        else:
            checks[allowed[words]] = True
    for key, prop in props.items():
        if key in COMMON_INPUT_PROPERTIES or prop.locale is not None:
            continue
        target = allowed.get(key)
        if target is None:
            checker.report(
                "E017",
                f"`{key}` is not allowed for a {input_type} input",
                span_of(prop),
                notes=(allowed_note(input_type),),
            )
            continue
        value: Any = None
        if target in ("minLength", "maxLength", "minItems", "maxItems"):
            value = checker.number_value(prop, 0, 1_000_000, integer=True)
        elif target in ("minimum", "maximum"):
            value = checker.number_value(prop, -1e15, 1e15)
        elif target == "pattern":
            value = checker.text_value(prop)
            problem = regex_problem(value) if value is not None else None
            if problem is not None:
                checker.report("E029", problem, prop.values[0].span)
                value = None
        elif target in ("minDate", "maxDate"):
            single = checker.single(prop, "date")
            value = date_value(single) if single is not None else None
            if single is not None and value is None:
                checker.report("E019", f'`{key}` takes a date: `date("2024-01-31")`', single.span)
        elif target == "mediaTypes":
            types = [text(v) for v in prop.values]
            bad = [v for v, t in zip(prop.values, types, strict=True) if not t or "/" not in t]
            for item in bad:
                checker.report("E019", 'a media type is a text such as "image/jpeg"', item.span)
            value = None if bad else types
        elif target == "maxSizeBytes":
            single = checker.single(prop, "size")
            unit = single.unit.lower() if isinstance(single, ast.Quantity) else ""
            if isinstance(single, ast.Quantity) and unit in BYTES and single.amount > 0:
                value = int(single.amount * BYTES[unit])
            elif single is not None:
                checker.report(
                    "E019",
                    "`maximum size` takes a size such as `5 MB`",
                    single.span,
                    did_you_mean(unit, BYTES) if unit else None,
                )
        if value is not None:
            checks[target] = value
            spans[target] = span_of(prop)
    for low, high, message in BOUNDS:
        if low in checks and high in checks and checks[low] > checks[high]:
            shown = f"{message}: {_shown(checks[low])} > {_shown(checks[high])}"
            checker.report("E032", shown, spans[high])
    return checks


def _shown(value: Any) -> str:
    """A bound as the author wrote it: `5`, not `5.0`; dates as `2020-01-01`."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


#: The type of an input whose `type:` is missing and cannot be guessed: its uses in
#: expressions are not checked further (the missing `type:` is the one error).
UNKNOWN_TYPE = "unknown"


def guess_type(
    props: Mapping[str, ast.Property], flags: Iterable[ast.Flag], options: list[ast.Option]
) -> str | None:
    """The one input type every written type-specific property and flag fits, if any."""
    specific = {key for table in TYPE_PROPERTIES.values() for key in table}
    written = {key for key in props if key in specific}
    written |= {norm(f.words) for f in flags} & specific
    if options:
        written.add("option")
    if not written:
        return None
    fitting = [
        name
        for name in ("numeric", "text", "date", "select", "multiselect", "file")
        if written <= {*TYPE_PROPERTIES[name], *(["option"] if "select" in name else [])}
    ]
    return fitting[0] if len(fitting) == 1 or fitting[:2] == ["select", "multiselect"] else None


def read_input(checker: PropertyChecker, decl: ast.InputDecl) -> CheckedInput | None:
    where = f"input `{decl.name}`"
    flags = [i for i in decl.items if isinstance(i, ast.Flag)]
    options = [i for i in decl.items if isinstance(i, ast.Option)]
    props = checker.properties(
        tuple(i for i in decl.items if not isinstance(i, (ast.Flag, ast.Option))),
        INPUT_PROPERTIES,
        where,
        translatable=("label", "help"),
    )
    type_prop = props.get("type")
    input_type = "text"
    type_known = True
    if type_prop is None:
        # One error, not one per property the missing type would refuse (a trap authors met):
        # the properties suggest the type when they fit only one, else they are not checked.
        guess = guess_type(props, flags, options)
        checker.report(
            "E011",
            f"{where} needs `type:`",
            span_of(decl),
            suggestion=None if guess is None else f"type: {guess}",
            notes=("types: " + ", ".join(INPUT_TYPES),),
        )
        input_type, type_known = guess or UNKNOWN_TYPE, guess is not None
    else:
        value = checker.single(type_prop, "input type")
        name = word(value) if value is not None else None
        if value is not None and name not in INPUT_TYPES:
            checker.report(
                "E019",
                f"unknown input type `{name or ''}`",
                value.span,
                did_you_mean(name or "", INPUT_TYPES),
            )
            return None
        input_type = name or "text"
    identifier = checker.identifier(
        props.get("id"),
        identifiers.INPUT_IDENTIFIER,
        "`input_<uuid>`",
        identifiers.input_identifier(checker.template_id, decl.name),
        span_of(decl),
    )
    default = checker.locales[0]
    label = first_given(
        checker.text_value(props.get("label")),
        checker.text_value(props.get(f"label {default}")),
        default=decl.name,
    )
    help_text = checker.text_value(props.get("help"))
    help_text = (
        help_text if help_text is not None else checker.text_value(props.get(f"help {default}"))
    )
    translations: dict[str, dict[str, Any]] = {}
    for key, prop in props.items():
        if prop.locale is not None and prop.locale != default:
            value_text = checker.text_value(prop)
            if value_text is not None:
                field_name = "label" if key.startswith("label") else "helperMessage"
                translations.setdefault(prop.locale, {})[field_name] = value_text
    stages = ["create"]
    asked = props.get("asked at")
    if asked is not None:
        stages = []
        for value in asked.values:
            stage = word(value)
            if stage not in ("create", "update"):
                checker.report(
                    "E019",
                    "`asked at` lists `create` and/or `update`",
                    value.span,
                    did_you_mean(stage or "", ("create", "update")),
                )
            elif stage in stages:
                checker.report("E012", f"stage `{stage}` is listed twice", value.span)
            else:
                stages.append(stage)
    image: str | None = None
    image_prop = props.get("for image")
    if image_prop is not None:
        value = checker.single(image_prop, "image name")
        image_name = word(value) if value is not None else None
        if value is not None and image_name not in checker.scope.images:
            checker.report(
                "E020",
                f"unknown image `{image_name or ''}`",
                value.span,
                did_you_mean(image_name or "", checker.scope.images),
            )
        elif image_name is not None:
            image = checker.scope.images[image_name].identifier
    required = False
    for flag in flags:
        words = norm(flag.words)
        if words in ("required", "optional"):
            required = words == "required"
    checks: dict[str, Any] = {}
    option_keys: list[str] | None = None
    option_labels: list[str] | None = None
    if type_known:
        checks = read_input_checks(checker, input_type, props, flags, where)
        option_keys, option_labels = input_options(
            checker, input_type, options, translations, decl, checks
        )
    if required and "create" in stages and checker.template_kind == "built-in":
        checker.report(
            "E031",
            f"{where} is required at create, but a built-in template is "
            "used by alias and nobody sends its inputs",
            span_of(decl),
        )
    ask_when: ast.Expr | None = None
    ask_prop = props.get("ask when")
    if ask_prop is not None:
        value = checker.single(ask_prop, "condition")
        if isinstance(value, ast.Quantity | ast.Size):
            checker.report("E019", "`ask when` takes a condition", value.span)
        elif value is not None:
            ask_when = value
    return CheckedInput(
        decl.name,
        identifier,
        input_type,
        label,
        help_text,
        stages,
        required,
        checks,
        option_keys,
        option_labels,
        translations,
        image,
        ask_when_source=ask_when,
    )


def input_options(
    checker: PropertyChecker,
    input_type: str,
    options: list[ast.Option],
    translations: dict[str, dict[str, Any]],
    decl: ast.InputDecl,
    checks: dict[str, Any],
) -> tuple[list[str] | None, list[str] | None]:
    choice = input_type in ("select", "multiselect")
    if not choice:
        if options:
            checker.report("E018", f"a {input_type} input has no options", options[0].span)
        return None, None
    if not checker.limit(len(options), MAX_OPTIONS, "options", decl.span):
        return None, None
    keys: list[str] = []
    labels: list[str] = []
    translated: dict[str, dict[str, str]] = {}
    for option in options:
        if option.locale is None or option.locale == checker.locales[0]:
            if option.key in keys:
                checker.report("E012", f"option `{option.key}` is given twice", option.span)
                continue
            keys.append(option.key)
            labels.append(option.label)
        elif checker.check_locale(option.locale, option):
            translated.setdefault(option.locale, {})[option.key] = option.label
    if not keys:
        checker.report(
            "E018", f'a {input_type} input needs at least one `option KEY: "Label"`', span_of(decl)
        )
    for locale, by_key in translated.items():
        for key, option in ((k, o) for o in options for k in [o.key] if o.locale == locale):
            if key not in keys:
                checker.report(
                    "E020",
                    f"option `{key}` is not declared in the default locale",
                    option.span,
                    did_you_mean(key, keys),
                )
        translations.setdefault(locale, {})["options"] = [
            by_key.get(k, labels[i]) for i, k in enumerate(keys)
        ]
    most = checks.get("minItems")
    if most is not None and keys and most > len(keys):
        checker.report(
            "E032",
            f"`minimum choices` is {most} but there are only {len(keys)} options",
            span_of(decl),
        )
    return keys, labels


# -- the creation body's JSON Schema (draft 3) -------------------------------------------------


@lru_cache(maxsize=512)
def human_label(name: str) -> str:
    """`firstName` -> `First name`, `milage` -> `Milage`: labels for fixed fields."""
    words: list[str] = []
    current = ""
    for char in name.replace("_", " "):
        if char.isupper() and current:
            words.append(current)
            current = char.lower()
        elif char == " ":
            words.append(current)
            current = ""
        else:
            current += char
    words.append(current)
    joined = " ".join(w for w in words if w)
    return joined[:1].upper() + joined[1:]


def _field_schema(type_: str, required: bool, label: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "number" if type_ == "number" else "string"}
    if type_ == "date":
        schema["format"] = "date"
    schema["required"] = required
    schema["label"] = label
    return schema


def input_schema(spec: InputSpec) -> dict[str, Any]:
    """The JSON Schema of one input's value in the creation body."""
    checks = spec.validationSchema
    schema: dict[str, Any]
    if spec.type == "numeric":
        schema = {"type": "integer" if checks.integer else "number"}
        if checks.minimum is not None:
            schema["minimum"] = checks.minimum
        if checks.maximum is not None:
            schema["maximum"] = checks.maximum
    elif spec.type in ("text", "textarea"):
        schema = {"type": "string"}
        if checks.minLength is not None:
            schema["minLength"] = checks.minLength
        if checks.maxLength is not None:
            schema["maxLength"] = checks.maxLength
        if checks.pattern is not None:
            schema["pattern"] = checks.pattern
        if checks.email:
            schema["format"] = "email"
    elif spec.type == "date":
        schema = {"type": "string", "format": "date"}
    elif spec.type == "select":
        schema = {"type": "string", "enum": _choices(spec)}
    elif spec.type == "multiselect":
        schema = {"type": "array", "items": {"type": "string", "enum": _choices(spec)}}
        if checks.minItems is not None:
            schema["minItems"] = checks.minItems
        if checks.maxItems is not None:
            schema["maxItems"] = checks.maxItems
    elif spec.type == "check":
        schema = {"type": "boolean"}
    else:  # file, video: the stored file's name
        schema = {"type": "string"}
    schema["required"] = bool(checks.required and "create" in spec.stages)
    schema["label"] = spec.label
    return schema


def _choices(spec: InputSpec) -> list[str]:
    """What a client may send for a choice: each option's label, then the keys (the API
    accepts both, and stores the label)."""
    labels = [o.label for o in spec.options or []]
    keys = [o.key for o in spec.options or [] if o.key is not None and o.key not in labels]
    return [*labels, *keys]


def creation_schema(
    inspection_type: str,
    inputs: Iterable[InputSpec],
    product_required: Iterable[str] = (),
    consumer_required: Iterable[str] = (),
    input_logic: dict[str, InputLogic] | None = None,
) -> dict[str, Any]:
    """The template's `schema`: what a creation body must look like (inputs keyed by identifier,
    see the module docstring), in JSON Schema draft 3 with boolean `required` and a `label`;
    inputs with `ask when` are required through `allOf`/`if`/`then` (`inspectlang.ask_schema`)."""
    inputs = list(inputs)
    conditional, entries = ask_when_schemas(inspection_type, inputs, input_logic or {})
    input_properties = {spec.identifier: input_schema(spec) for spec in inputs}
    for identifier in conditional:
        input_properties[identifier]["required"] = False
    properties: dict[str, Any] = {
        "locale": {
            "type": "string",
            "required": True,
            "label": "Locale",
            "pattern": "^[a-z]{2}_[A-Z]{2}$",
        },
        "delivery": {
            "type": "object",
            "required": True,
            "label": "Delivery",
            "properties": {
                "channel": {"type": "string", "required": True, "label": "Channel"},
                "countryISO": {"type": "string", "required": False, "label": "Country"},
                "destination": {"type": "string", "required": True, "label": "Destination"},
                "disabled": {"type": "boolean", "required": False, "label": "Disabled"},
            },
        },
        "inputs": {
            "type": "object",
            "required": any(p["required"] for p in input_properties.values()),
            "label": "Inputs",
            "properties": input_properties,
        },
    }
    product_fields = PRODUCT_FIELDS.get(inspection_type, {})
    if product_fields:
        required = set(product_required)
        properties[inspection_type] = {
            "type": "object",
            "required": bool(required),
            "label": human_label(inspection_type),
            "properties": {
                name: _field_schema(type_, name in required, human_label(name))
                for name, type_ in product_fields.items()
            },
        }
    required = set(consumer_required)
    properties["consumer"] = {
        "type": "object",
        "required": bool(required),
        "label": "Consumer",
        "properties": {
            name: _field_schema(type_, name in required, human_label(name))
            for name, type_ in CONSUMER_FIELDS.items()
        },
    }
    schema: dict[str, Any] = {"$schema": DRAFT3, "type": "object", "properties": properties}
    if entries:
        schema["allOf"] = entries
    return schema


def inputs_to_object(items: Any) -> Any:
    """The creation body's `inputs` array of `{identifier, value}` as the object the schema
    validates (identifier -> value). Anything that is not such an array is returned unchanged,
    so that the schema reports it."""
    if not isinstance(items, list) or not all(
        isinstance(item, dict) and isinstance(item.get("identifier"), str) for item in items
    ):
        return items
    return {item["identifier"]: item.get("value") for item in items}


def creation_validator(template: Template) -> Draft3Validator:
    """A validator of creation bodies for `template` (convert `inputs` with `inputs_to_object`
    first). Formats (`date`, `email`) are checked, and `pattern` runs on RE2 (linear time, the
    same patterns `matches` accepts) instead of Python's backtracking `re`, so no pattern in a
    template can make validating a long value hang. jsonschema is imported here, not at module
    load, to keep compiling free of its import cost."""
    return _re2_draft3()(template.schema_, format_checker=_format_checker())


@lru_cache(maxsize=1)
def _format_checker() -> Any:
    from jsonschema import Draft3Validator

    return Draft3Validator.FORMAT_CHECKER


@lru_cache(maxsize=1)
def _re2_draft3() -> type[Draft3Validator]:
    """Draft3Validator with `pattern` and `patternProperties` matched by RE2."""
    from jsonschema import Draft3Validator, ValidationError, validators

    from inspectlang.patterns import pattern_search

    def pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "string") or not isinstance(patrn, str):
            return
        found = pattern_search(patrn, instance)
        if found is None:
            yield ValidationError(f"the pattern {patrn!r} cannot be used (refused by RE2)")
        elif not found:
            yield ValidationError(f"{instance[:100]!r} does not match {patrn!r}")

    def pattern_properties(
        validator: Any, patterns: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                found = pattern_search(patrn, key) if isinstance(key, str) else False
                if found is None:
                    yield ValidationError(f"the pattern {patrn!r} cannot be used (refused by RE2)")
                    break
                if found:
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    extended: type[Draft3Validator] = validators.extend(
        Draft3Validator, {"pattern": pattern, "patternProperties": pattern_properties}
    )
    return extended
