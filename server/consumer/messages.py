"""The validation messages of an input, as the API words them, for the page's own checks.

The page checks each field before sending (`consumer.js`) and the server checks again through
the same service as the API. So that both say the same thing, the messages are not written here:
`rule_messages` asks the runtime's own checks (`runtime.intake`) with values made to break each
rule of the input's `validationSchema`, and keeps the message of each problem code. In locales
other than the API's English, a message is the catalog's wording of the same code and bound.
"""

from __future__ import annotations

from datetime import date, timedelta
from types import SimpleNamespace
from typing import Any

from inspectlang.manifest import InputSpec, Template
from runtime.errors import InspectionError
from runtime.intake import check_input_value, check_inputs
from server.web.templating import gettext

#: A text no option, pattern or email can be expected to accept.
_NOTHING = "\u2400"


def _probes(spec: InputSpec) -> list[Any]:
    rules = spec.validationSchema
    kind = spec.type
    if kind == "numeric":
        low = rules.minimum if rules.minimum is not None else 0
        high = rules.maximum if rules.maximum is not None else low + 10
        return ["x", low - 1, high + 1, low + 0.5 if low + 0.5 < high else (low + high) / 2]
    if kind in ("text", "textarea"):
        longest = rules.maxLength if rules.maxLength is not None else 100_000
        return ["", _NOTHING, "x" * (longest + 1)]
    if kind == "select":
        return [_NOTHING]
    if kind == "multiselect":
        labels = [option.label for option in spec.options or []]
        return [[], [_NOTHING], labels * ((rules.maxItems or len(labels)) + 1)]
    if kind == "date":
        probes: list[Any] = ["x"]
        if rules.minDate:
            probes.append((date.fromisoformat(rules.minDate[:10]) - timedelta(days=1)).isoformat())
        if rules.maxDate:
            probes.append((date.fromisoformat(rules.maxDate[:10]) + timedelta(days=1)).isoformat())
        return probes
    if kind == "check":
        return ["maybe"]
    size = (rules.maxSizeBytes or 0) + 1
    return [{"name": "x.none", "contentType": "application/x-none", "size": size}]


def _required_message(manifest: Template, spec: InputSpec) -> str:
    """The runtime's words for a required input left empty."""
    schema = spec.validationSchema.model_copy(update={"required": True})
    asked = spec.model_copy(update={"stages": ["create"], "validationSchema": schema})
    try:
        check_inputs(SimpleNamespace(inputs=[asked]), {}, stage="create", locale="en_US")  # type: ignore[arg-type]
    except InspectionError as error:
        for problem in error.errors or []:
            return str(problem["message"])
    return "required"


def rule_messages(manifest: Template, spec: InputSpec) -> dict[str, str]:
    """Problem code -> the API's message, for every rule of the input the runtime reports."""
    messages = {"required": _required_message(manifest, spec)}
    for probe in _probes(spec):
        _value, problems = check_input_value(manifest, spec, probe)
        for problem in problems:
            messages.setdefault(str(problem["code"]), str(problem["message"]))
    return messages


def _bounds(spec: InputSpec) -> dict[str, Any]:
    rules = spec.validationSchema
    return {
        "minimum": f"{rules.minimum:g}" if rules.minimum is not None else "",
        "maximum": f"{rules.maximum:g}" if rules.maximum is not None else "",
        "min_length": rules.minLength or "",
        "max_length": rules.maxLength or "",
        "pattern": rules.pattern or "",
        "min_items": rules.minItems or "",
        "max_items": rules.maxItems or "",
        "min_date": (rules.minDate or "")[:10],
        "max_date": (rules.maxDate or "")[:10],
        "media_types": ", ".join(rules.mediaTypes or []),
        "max_size": rules.maxSizeBytes or "",
    }


def _catalog_wording(code: str, locale: str) -> str | None:
    """The catalog's wording of a problem code (placeholders filled by `localized`)."""
    wordings = {
        "required": gettext(locale, "This field is required."),
        "not_a_number": gettext(locale, "Enter a number."),
        "too_large": gettext(locale, "The value is too large."),
        "minimum": gettext(locale, "Must be at least %(minimum)s."),
        "maximum": gettext(locale, "Must be at most %(maximum)s."),
        "integer": gettext(locale, "Must be a whole number."),
        "not_a_text": gettext(locale, "Enter a text."),
        "min_length": gettext(locale, "At least %(min_length)s characters."),
        "max_length": gettext(locale, "At most %(max_length)s characters."),
        "pattern": gettext(locale, "The format is not valid."),
        "email": gettext(locale, "Enter an e-mail address."),
        "option": gettext(locale, "Choose one of the options."),
        "not_a_list": gettext(locale, "Choose one of the options."),
        "min_items": gettext(locale, "Choose at least %(min_items)s."),
        "max_items": gettext(locale, "Choose at most %(max_items)s."),
        "not_a_date": gettext(locale, "Enter a date."),
        "min_date": gettext(locale, "Must be on or after %(min_date)s."),
        "max_date": gettext(locale, "Must be on or before %(max_date)s."),
        "not_before": gettext(locale, "Cannot be earlier than “%(other)s”."),
        "not_after": gettext(locale, "Cannot be later than “%(other)s”."),
        "not_a_boolean": gettext(locale, "Check the box or leave it empty."),
        "not_a_file": gettext(locale, "Choose a file."),
        "media_type": gettext(locale, "Accepted types: %(media_types)s."),
        "file_type": gettext(locale, "Accepted types: %(media_types)s."),
    }
    return wordings.get(code)


def localized(spec: InputSpec, code: str, api_message: str, locale: str, other: str = "") -> str:
    """The message shown for a problem: the catalog's words in the page's language (en_US
    too: "This field is required.", not the API's "input 'Overall condition' is required"),
    the API's own only for a problem the catalog has no words for. `other` is the label, in
    the page's language, of the other date of a broken date order (`not_before`)."""
    wording = _catalog_wording(code, locale)
    if wording is None:
        return api_message
    return wording % {**_bounds(spec), "other": other}


def field_messages(manifest: Template, spec: InputSpec, locale: str) -> dict[str, str]:
    """The messages of every rule of the input, in the page's locale."""
    return {
        code: localized(spec, code, message, locale)
        for code, message in rule_messages(manifest, spec).items()
    }
