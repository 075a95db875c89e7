"""Validation of request bodies: locale, metadata, inputs, product and consumer data.

The one place a creation or update body is checked: each check raises `InspectionError` with a
stable code and one `errors[]` entry per problem (`field`, `code`, `message`), reporting every
problem of its part at once. Values come back normalized (numbers from numeric texts, select
keys as their option label, an input named by its name as its identifier) so the engine stores
one form only. The body comes in the API's one shape: the client libraries' shapes (PHP's `[]`
for `{}`, `goods: [...]`) are read by the server before (`server/inspections/client_shapes.py`).
The template's JSON Schema (`Template.schema_`) describes the same body to clients; these checks
are what enforces it (`tests/runtime/test_runtime_schema_agreement.py` keeps the two agreeing).
"""

from __future__ import annotations

import math
import mimetypes
import re
from collections.abc import Callable
from typing import Any

from inspectlang.manifest import (
    CONSUMER_FIELDS,
    PRODUCT_CHOICES,
    PRODUCT_FIELDS,
    InputSpec,
    Template,
)
from inspectlang.patterns import pattern_search
from inspectlang.vocabulary import (
    MAX_METADATA_KEY_LENGTH,
    MAX_METADATA_PAIRS,
    MAX_METADATA_VALUE_LENGTH,
    MAX_NUMBER,
)
from inspectlang.vocabulary import (
    MAX_TEXT_LENGTH as MAX_TEXT,
)
from runtime.errors import InspectionError
from runtime.state import INITIAL_STATUSES, DamageRecord
from runtime.values import parse_date

LOCALE = re.compile(r"[a-z]{2}_[A-Z]{2}")
#: `consumer.sex` as the client libraries send it, stored as the spec's number (the codes of
#: ISO/IEC 5218: 1 male, 2 female, 9 not applicable).
SEX_CODES: dict[str, int] = {"male": 1, "female": 2, "not_applicable": 9}

Problem = dict[str, Any]


def problem(field: str, code: str, message: str) -> Problem:
    return {"field": field, "code": code, "message": message}


def email_address(text: str) -> str:
    """`text` as a normalized email address (the domain lower-cased); `ValueError` saying why
    when it is not one. The one email check of the service: email inputs here, the delivery's
    destination and the dashboard's addresses in the server (`email-validator`, syntax only,
    no DNS lookup; imported on first use, so a compile never pays for it)."""
    from email_validator import EmailNotValidError, validate_email

    try:
        return str(validate_email(text, check_deliverability=False).normalized)
    except EmailNotValidError as error:
        raise ValueError(str(error)) from None


def check_locale(body: dict[str, Any]) -> str:
    locale = body.get("locale")
    if not isinstance(locale, str) or LOCALE.fullmatch(locale) is None:
        shown = "it is missing" if locale is None else f"got {str(locale)[:40]!r}"
        raise InspectionError(
            "invalid_locale",
            f"locale is required and looks like en_US (a language and a country); {shown}",
            [problem("locale", "format", "expected xx_YY, e.g. en_US or es_AR")],
        )
    return locale


def check_initial_status(body: dict[str, Any]) -> str:
    status = body.get("initialStatus", "created")
    if status not in INITIAL_STATUSES:
        raise InspectionError(
            "invalid_initial_status",
            f"initialStatus must be created or started, got {status!r}",
            [problem("initialStatus", "enum", "expected created or started")],
        )
    return str(status)


def _metadata_problem(field: str, code: str, message: str) -> Problem:
    return problem(field[:120], code, message)


def check_metadata(value: Any, existing: dict[str, str] | None = None) -> dict[str, str]:
    """Metadata merged over `existing` (existing keys win); the spec's limits
    (`MAX_METADATA_*` in the vocabulary) apply to what is sent and to the merged result. Every
    breach is one `errors[]` entry of 400 `invalid_metadata`, its `code` naming the rule:
    `not_an_object`, `key_too_long`, `value_not_string`, `value_too_long`, `too_many_pairs`."""
    if value is None:
        return dict(existing or {})
    if not isinstance(value, dict):
        raise InspectionError(
            "invalid_metadata",
            "metadata: metadata must be an object of strings",
            [
                _metadata_problem(
                    "metadata", "not_an_object", "metadata must be an object of strings"
                )
            ],
        )
    problems: list[Problem] = []
    if len(value) > MAX_METADATA_PAIRS:
        problems.append(
            _metadata_problem(
                "metadata",
                "too_many_pairs",
                f"metadata has {len(value)} pairs; at most {MAX_METADATA_PAIRS} are allowed",
            )
        )
    for key, item in value.items():
        where = f"metadata.{str(key)[:60]}"
        if len(key) > MAX_METADATA_KEY_LENGTH:
            problems.append(
                _metadata_problem(
                    where,
                    "key_too_long",
                    f"the key has {len(key)} characters; "
                    f"at most {MAX_METADATA_KEY_LENGTH} are allowed",
                )
            )
        if not isinstance(item, str):
            problems.append(_metadata_problem(where, "value_not_string", "values must be strings"))
        elif len(item) > MAX_METADATA_VALUE_LENGTH:
            problems.append(
                _metadata_problem(
                    where,
                    "value_too_long",
                    f"the value has {len(item)} characters; "
                    f"at most {MAX_METADATA_VALUE_LENGTH} are allowed",
                )
            )
    merged = {**value, **(existing or {})}
    if not problems and len(merged) > MAX_METADATA_PAIRS:
        problems.append(
            _metadata_problem(
                "metadata",
                "too_many_pairs",
                f"with the keys already set the inspection would have {len(merged)} metadata "
                f"pairs; at most {MAX_METADATA_PAIRS} are allowed",
            )
        )
    if problems:
        first = problems[0]
        raise InspectionError(
            "invalid_metadata", f"{first['field']}: {first['message']}", problems[:50]
        )
    return merged


def _identifiers_by_name(manifest: Template) -> dict[str, str]:
    """Input name (as the template's source writes it, `mileage`) -> its identifier."""
    return {logic.name: identifier for identifier, logic in manifest.logic.inputs.items()}


def input_identifier(manifest: Template, sent: str) -> str:
    """The identifier of the input `sent` names: its identifier, or its name in the template
    (`mileage`, as `simulate` takes it). Anything else is returned as sent (refused later)."""
    if any(spec.identifier == sent for spec in manifest.inputs):
        return sent
    return _identifiers_by_name(manifest).get(sent, sent)


def inputs_by_identifier(value: Any, manifest: Template | None = None) -> dict[str, Any]:
    """The spec's `inputs: [{identifier, value}]` as an object keyed by identifier; with the
    `manifest`, an `identifier` may also be the input's name (`input_identifier`)."""
    if value is None:
        return {}
    if not isinstance(value, list):
        raise InspectionError(
            "invalid_body",
            "inputs must be an array of {identifier, value}",
            [problem("inputs", "type", "expected an array")],
        )
    result: dict[str, Any] = {}
    problems: list[Problem] = []
    for index, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("identifier"), str):
            problems.append(problem(f"inputs[{index}]", "type", "expected {identifier, value}"))
            continue
        identifier = item["identifier"]
        if manifest is not None:
            identifier = input_identifier(manifest, identifier)
        result[identifier] = item.get("value")  # a later item wins (docs/design/ir.md)
    if problems:
        raise InspectionError("invalid_body", "inputs are malformed", problems)
    return result


def check_inputs(
    manifest: Template,
    given: dict[str, Any],
    *,
    stage: str,
    locale: str,
    unasked: Callable[[dict[str, Any]], frozenset[str]] | None = None,
    known: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Validate input values (unknown inputs, required ones at this stage, each input's rules,
    then the date orders between them and the `known` values already stored).

    `unasked(values)` names the inputs whose `ask when` does not hold on the valid values
    given: those are not required."""
    specs = {spec.identifier: spec for spec in manifest.inputs}
    missing = [
        problem(spec.identifier, "required", f"input {spec.label!r} is required")
        for spec in manifest.inputs
        if stage == "create"
        and "create" in spec.stages
        and spec.validationSchema.required
        and given.get(spec.identifier) is None
    ]
    if missing and unasked is not None:
        valid = {}
        for identifier, raw in given.items():
            spec = specs.get(identifier)
            if spec is not None and raw is not None:
                value, found = check_input_value(manifest, spec, raw)
                if not found:
                    valid[identifier] = value
        skipped = unasked(valid)
        missing = [p for p in missing if p["field"] not in skipped]
    if missing:
        names = ", ".join(
            spec.label
            for spec in manifest.inputs
            if spec.identifier in {p["field"] for p in missing}
        )
        raise InspectionError("input_value_not_provided", f"missing inputs: {names}", missing)
    values: dict[str, Any] = {}
    problems: list[Problem] = []
    for identifier, raw in given.items():
        spec = specs.get(identifier)
        if spec is None:
            problems.append(
                problem(identifier[:120], "unknown_input", _unknown_input(manifest, identifier))
            )
            continue
        if raw is None:
            continue
        value, found = check_input_value(manifest, spec, raw)
        problems.extend(found)
        if not found:
            values[identifier] = value
    if not problems:
        problems = order_problems(manifest, values, known or {})
    if problems:
        labels = {spec.identifier: spec.label for spec in manifest.inputs}
        summary = "; ".join(f"{labels.get(p['field'], p['field'])}: {p['code']}" for p in problems)
        raise InspectionError("invalid_input_value", f"invalid inputs: {summary}", problems)
    return values


def order_problems(
    manifest: Template, values: dict[str, Any], known: dict[str, Any]
) -> list[Problem]:
    """The date orders (`not before: OTHER`, `not after: OTHER`; `validationSchema.notBefore`
    and `notAfter`) the new `values` break, with each other or with the `known` values already
    stored. An order applies only when both dates are there; a problem is reported on the date
    sent now (the one declaring the order when both are new), its `code` saying where that date
    must be against the other (`not_before`: it may not be before `other`; `not_after`: it may
    not be after), its `other` naming the other input, its message naming both."""
    specs = {spec.identifier: spec for spec in manifest.inputs}
    found: list[Problem] = []
    for spec in manifest.inputs:
        rules = spec.validationSchema
        pairs = [(o, "not_before") for o in rules.notBefore or ()]
        pairs += [(o, "not_after") for o in rules.notAfter or ()]
        for other, code in pairs:
            if spec.identifier not in values and other not in values:
                continue  # nothing sent now: what is stored was checked when it was sent
            mine, theirs = (values.get(i, known.get(i)) for i in (spec.identifier, other))
            if not isinstance(mine, str) or not isinstance(theirs, str) or other not in specs:
                continue  # a date missing: the order does not apply
            if (mine[:10] < theirs[:10]) if code == "not_before" else (mine[:10] > theirs[:10]):
                field, against, here, there = spec, specs[other], mine[:10], theirs[:10]
                if spec.identifier not in values:  # the other date is the one sent now
                    field, against, here, there = against, field, there, here
                    code = SWAPPED_ORDER[code]
                where = "on or after" if code == "not_before" else "on or before"
                found.append(
                    {
                        **problem(
                            field.identifier,
                            code,
                            f"{field.label!r} ({here}) must be {where} {against.label!r} ({there})",
                        ),
                        "other": against.identifier,
                    }
                )
    return found


#: A date order said from the other date's side.
SWAPPED_ORDER = {"not_before": "not_after", "not_after": "not_before"}


def _unknown_input(manifest: Template, sent: str) -> str:
    """Why `sent` names no input, with the template's inputs (name and identifier) to choose
    from: a client that copied a label or a misspelt name learns which identifier to send."""
    names = {identifier: name for name, identifier in _identifiers_by_name(manifest).items()}
    known = ", ".join(
        f"{names.get(spec.identifier, spec.label)} ({spec.identifier})"
        for spec in manifest.inputs[:20]
    )
    return (
        f"the template has no input {sent[:60]!r}; send an input's identifier or name: {known}"
        if known
        else "the template has no inputs"
    )


def check_input_value(manifest: Template, spec: InputSpec, raw: Any) -> tuple[Any, list[Problem]]:
    """The normalized value of one input and the rules it breaks."""
    rules = spec.validationSchema
    field = spec.identifier

    def bad(code: str, message: str) -> tuple[Any, list[Problem]]:
        return None, [problem(field, code, message)]

    kind = spec.type
    if kind == "numeric":
        number = _number(raw)
        if number is None:
            return bad("not_a_number", "expected a number")
        found: list[Problem] = []
        if abs(number) > MAX_NUMBER:
            return bad("too_large", f"numbers are limited to {MAX_NUMBER:g}")
        if rules.minimum is not None and number < rules.minimum:
            found.append(problem(field, "minimum", f"must be at least {rules.minimum:g}"))
        if rules.maximum is not None and number > rules.maximum:
            found.append(problem(field, "maximum", f"must be at most {rules.maximum:g}"))
        if rules.integer and number != int(number):
            found.append(problem(field, "integer", "must be a whole number"))
        elif rules.integer:
            number = int(number)
        return number, found
    if kind in ("text", "textarea"):
        if not isinstance(raw, str):
            return bad("not_a_text", "expected a text")
        found = []
        limit = rules.maxLength if rules.maxLength is not None else MAX_TEXT
        if len(raw) > min(limit, MAX_TEXT):
            found.append(problem(field, "max_length", f"at most {min(limit, MAX_TEXT)} characters"))
        if rules.minLength is not None and len(raw) < rules.minLength:
            found.append(problem(field, "min_length", f"at least {rules.minLength} characters"))
        if rules.pattern is not None:
            matched = pattern_search(rules.pattern, raw)  # RE2: linear in the text, no ReDoS
            if matched is None:
                found.append(problem(field, "pattern", "the template's pattern cannot be used"))
            elif not matched:
                found.append(problem(field, "pattern", f"must match {rules.pattern}"))
        if rules.email:
            try:
                email_address(raw)
            except ValueError as error:
                found.append(problem(field, "email", f"must be an email address: {error}"))
        return raw, found
    if kind == "select":
        label = _option(manifest, spec, raw)
        if label is None:
            return bad("option", "not one of the options")
        return label, []
    if kind == "multiselect":
        if not isinstance(raw, list):
            return bad("not_a_list", "expected a list of options")
        labels = [_option(manifest, spec, item) for item in raw]
        found = []
        if any(label is None for label in labels):
            found.append(problem(field, "option", "not one of the options"))
        if rules.minItems is not None and len(raw) < rules.minItems:
            found.append(problem(field, "min_items", f"choose at least {rules.minItems}"))
        if rules.maxItems is not None and len(raw) > rules.maxItems:
            found.append(problem(field, "max_items", f"choose at most {rules.maxItems}"))
        return labels, found
    if kind == "date":
        day = parse_date(raw[:10] if isinstance(raw, str) and len(raw) >= 10 else raw)
        if day is None:
            return bad("not_a_date", "expected a date YYYY-MM-DD")
        iso = day.isoformat()
        found = []
        if rules.minDate is not None and iso < rules.minDate[:10]:
            found.append(problem(field, "min_date", f"must be on or after {rules.minDate[:10]}"))
        if rules.maxDate is not None and iso > rules.maxDate[:10]:
            found.append(problem(field, "max_date", f"must be on or before {rules.maxDate[:10]}"))
        return iso, found
    if kind == "check":
        if isinstance(raw, bool):
            return raw, []
        if raw in ("true", "false"):
            return raw == "true", []
        return bad("not_a_boolean", "expected true or false")
    # file, video: a stored file name, or {name, contentType, size}
    return _file(spec, raw)


def _number(raw: Any) -> float | int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return raw if math.isfinite(raw) else None
    if isinstance(raw, str) and len(raw) < 40:
        try:
            number = float(raw)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        return (
            int(number)
            if number.is_integer() and "." not in raw and "e" not in raw.lower()
            else number
        )
    return None


def _option(manifest: Template, spec: InputSpec, raw: Any) -> str | None:
    """The option label (default locale) for a label, an option key, or a translated label.

    A client of an `es_AR` inspection may send the option as its end user saw it ("Uso
    particular"); it is stored as the template's own label, so filters and rules see one value.
    """
    if not isinstance(raw, str) or spec.options is None:
        return None
    labels = [option.label for option in spec.options]
    if raw in labels:
        return raw
    logic = manifest.logic.inputs.get(spec.identifier)
    if logic is None:
        return None
    keys = logic.optionKeys or []
    if raw in keys:
        return labels[keys.index(raw)]
    for translation in logic.translations.values():
        translated = translation.options or []
        if raw in translated and len(translated) == len(labels):
            return labels[translated.index(raw)]
    return None


def _file(spec: InputSpec, raw: Any) -> tuple[Any, list[Problem]]:
    field = spec.identifier
    rules = spec.validationSchema
    name: Any
    if isinstance(raw, str):
        name, content_type, size = raw, mimetypes.guess_type(raw)[0], None
    elif isinstance(raw, dict) and isinstance(raw.get("name") or raw.get("src"), str):
        name = raw.get("name") or raw.get("src")
        content_type = raw.get("contentType") or mimetypes.guess_type(str(name))[0]
        size = raw.get("size")
    else:
        return None, [
            problem(field, "not_a_file", "expected a file name or {name, contentType, size}")
        ]
    if len(str(name)) > 1000:
        return None, [problem(field, "max_length", "file names have at most 1000 characters")]
    found: list[Problem] = []
    if rules.mediaTypes and content_type not in rules.mediaTypes:
        found.append(problem(field, "media_type", f"accepted: {', '.join(rules.mediaTypes)}"))
    if rules.maxSizeBytes is not None and isinstance(size, int) and size > rules.maxSizeBytes:
        found.append(problem(field, "too_large", f"at most {rules.maxSizeBytes} bytes"))
    return str(name), found


def check_fields(
    value: Any,
    allowed: dict[str, str],
    prefix: str,
    *,
    replace_with: dict[str, Any] | None = None,
    choices: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """Product or consumer data: known fields only, each of its type (a text field listed in
    `choices` takes one of its values)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InspectionError(
            "invalid_body",
            f"{prefix} must be an object",
            [problem(prefix, "type", "expected an object")],
        )
    problems: list[Problem] = []
    result: dict[str, Any] = {}
    for key, item in value.items():
        kind = allowed.get(key)
        where = f"{prefix}.{key}"
        if kind is None:
            problems.append(problem(where[:120], "unknown_field", f"{prefix} has no field {key!r}"))
        elif item is None:
            continue
        elif kind == "number":
            number = _number(SEX_CODES.get(item, item) if where == "consumer.sex" else item)
            if number is None or abs(number) > MAX_NUMBER:
                problems.append(problem(where, "not_a_number", "expected a number"))
            else:
                result[key] = number
        elif kind == "date":
            day = parse_date(item[:10] if isinstance(item, str) else item)
            if day is None:
                problems.append(problem(where, "not_a_date", "expected a date YYYY-MM-DD"))
            else:
                result[key] = day.isoformat()
        elif not isinstance(item, str) or len(item) > MAX_TEXT:
            problems.append(problem(where, "not_a_text", f"expected a text of at most {MAX_TEXT}"))
        elif choices and key in choices and item not in choices[key]:
            problems.append(
                problem(where, "not_a_choice", f"expected one of {', '.join(choices[key])}")
            )
        else:
            result[key] = item
    if problems:
        raise InspectionError("invalid_body", f"invalid {prefix} data", problems)
    return result


def refuse_unknown_keys(body: dict[str, Any], allowed: dict[str, dict[str, str]]) -> None:
    """`unknown_field` naming every key of `body` not in `allowed`, then every key of each
    allowed object not among its fields (`car.colour`); a body with none passes."""
    problems = [
        problem(str(key)[:120], "unknown_field", f"the body has no key {str(key)[:60]!r}")
        for key in body
        if key not in allowed
    ]
    for key, fields in allowed.items():
        value = body.get(key)
        if isinstance(value, dict):
            problems += [
                problem(f"{key}.{name}"[:120], "unknown_field", f"{key} has no field {name!r}")
                for name in value
                if name not in fields
            ]
    if problems:
        names = ", ".join(item["field"] for item in problems[:10])
        raise InspectionError("unknown_field", f"unknown fields: {names}", problems[:50])


def product_fields(inspection_type: str) -> dict[str, str]:
    return PRODUCT_FIELDS.get(inspection_type, {})


def _numbers_of(value: Any, fields: dict[str, str], prefix: str) -> Any:
    """`value` with its numeric texts as numbers (see `normalize_numbers`)."""
    if not isinstance(value, dict):
        return value
    result = dict(value)
    for key, item in value.items():
        if fields.get(key) != "number":
            continue
        if f"{prefix}.{key}" == "consumer.sex" and isinstance(item, str):
            item = SEX_CODES.get(item, item)
        number = _number(item) if isinstance(item, str) else None
        if number is not None and abs(number) <= MAX_NUMBER:
            result[key] = number
        elif isinstance(item, int) and not isinstance(item, bool):
            result[key] = item
    return result


def normalize_numbers(body: dict[str, Any], inspection_type: str) -> dict[str, Any]:
    """The body with numbers the client libraries send as texts (`year: "2020"`,
    `price: "14400"`, `sex: "male"`) turned into the numbers they stand for, in the product
    and consumer objects, before the template's schema sees them. Anything that is not such a
    text stays as it is, for the schema and `check_fields` to refuse with their codes."""
    fields = product_fields(inspection_type)
    result = dict(body)
    if inspection_type in result:
        result[inspection_type] = _numbers_of(result[inspection_type], fields, inspection_type)
    if "consumer" in result:
        result["consumer"] = _numbers_of(result["consumer"], CONSUMER_FIELDS, "consumer")
    return result


#: The keys of one validation's setting in a product's `configuration`.
SETTING_KEYS = ("run", "required")


def split_configuration(
    manifest: Template, value: Any, prefix: str
) -> tuple[Any, dict[str, dict[str, bool]]]:
    """A product object without its `configuration`, and that configuration checked:
    `{<validation>: {run?, required?}}` over the template's settings for this inspection only.
    A validation the template does not run on any image is `unknown_validation`, naming it."""
    if not isinstance(value, dict) or "configuration" not in value:
        return value, {}
    rest = {key: item for key, item in value.items() if key != "configuration"}
    raw = value["configuration"]
    if raw is None:
        return rest, {}
    where = f"{prefix}.configuration"
    if not isinstance(raw, dict):
        raise InspectionError(
            "invalid_body",
            f"{where} must be an object",
            [problem(where, "type", "expected {<validation>: {run, required}}")],
        )
    known = {v.validation for image in manifest.images for v in image.validations}
    unknown = [str(name) for name in raw if name not in known]
    if unknown:
        names = ", ".join(name[:60] for name in unknown[:10])
        raise InspectionError(
            "unknown_validation",
            f"the template does not validate {names}",
            [
                problem(f"{where}.{name}"[:120], "unknown_validation", "not in the template")
                for name in unknown[:50]
            ],
        )
    settings: dict[str, dict[str, bool]] = {}
    problems: list[Problem] = []
    for name, setting in raw.items():
        if not isinstance(setting, dict) or any(
            key not in SETTING_KEYS or not isinstance(flag, bool) for key, flag in setting.items()
        ):
            problems.append(
                problem(
                    f"{where}.{name}", "type", "expected {run: true|false, required: true|false}"
                )
            )
            continue
        settings[name] = dict(setting)
    if problems:
        raise InspectionError("invalid_body", f"invalid {where}", problems)
    return rest, settings


def check_product(value: Any, inspection_type: str, prefix: str) -> dict[str, Any]:
    """A product's data: its type's fields, closed vocabularies included."""
    return check_fields(
        value,
        product_fields(inspection_type),
        prefix,
        choices=PRODUCT_CHOICES.get(inspection_type),
    )


def consumer_fields() -> dict[str, str]:
    return CONSUMER_FIELDS


def check_requirements(
    manifest: Template, product: dict[str, Any], consumer: dict[str, Any]
) -> None:
    kind = manifest.inspectionType
    problems = [
        problem(f"{kind}.{name}", "required", f"{kind}.{name} is required by the template")
        for name in manifest.logic.requirements.product
        if product.get(name.rsplit(".", 1)[-1]) is None
    ] + [
        problem(f"consumer.{name}", "required", f"consumer.{name} is required by the template")
        for name in manifest.logic.requirements.consumer
        if consumer.get(name.rsplit(".", 1)[-1]) is None
    ]
    if problems:
        raise InspectionError(
            "invalid_body", "required product or consumer data is missing", problems
        )


def read_damage(body: Any, ids: Callable[[], str], *, declared: bool) -> DamageRecord:
    """A damage `{part, damage, severity, percentage?}` as a record with a new id (`ids()`):
    declared by the consumer or found by a reviewer (`declared`, and a bad one is
    `invalid_body`), or reported by a damage validation (`invalid_validation_result`)."""
    if not isinstance(body, dict):
        raise InspectionError("invalid_body", "a damage is an object {part, damage, severity}")
    problems = [
        problem(key, "required", f"{key} must be a text of 1 to 100 characters")
        for key in ("part", "damage", "severity")
        if not isinstance(body.get(key), str) or not 0 < len(body[key]) <= 100
    ]
    percentage = body.get("percentage")
    if percentage is not None and (
        isinstance(percentage, bool)
        or not isinstance(percentage, int | float)
        or not 0 <= percentage <= 100
    ):
        problems.append(problem("percentage", "range", "a number from 0 to 100"))
    if problems:
        code = "invalid_body" if declared else "invalid_validation_result"
        raise InspectionError(code, "invalid damage", problems)
    return DamageRecord(
        id=ids(),
        part=body["part"],
        damage=body["damage"],
        severity=body["severity"],
        percentage=None if percentage is None else float(percentage),
        declared=declared,
    )
