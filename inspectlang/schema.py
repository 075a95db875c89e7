"""The creation body's JSON Schema: the template's `schema` (JSON Schema draft 3, in the spec's
shape) built from the compiled inputs and requirements (`creation_schema`), and
`creation_validator` for the runtime. (Reading an input declaration into its `validationSchema`
is the checker's: `inspectlang.checker.inputs`.)

The spec's creation body sends `inputs` as an ARRAY of `{identifier, value}`, while the schema
keys `inputs` by identifier (the spec's shape). Before validating, the runtime converts the array
to an object with `inputs_to_object` (a later item with the same identifier wins), so that the
schema's `inputs.properties.<identifier>` applies to each value.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from inspectlang.ask_schema import ask_when_schemas
from inspectlang.manifest import (
    CONSUMER_FIELDS,
    PRODUCT_FIELDS,
    InputLogic,
    InputSpec,
)

if TYPE_CHECKING:
    from jsonschema import Draft3Validator

    from inspectlang.manifest import Template

DRAFT3 = "http://json-schema.org/draft-03/schema#"


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
