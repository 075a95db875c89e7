"""The simulate panel's first script, made for the template being edited so that it passes:
create with the template's locale, a delivery, every input required at creation and every
product and consumer field the template requires, each with a value its rules accept; start;
an update with the inputs required before finishing; finish. (A fixed script missed required
create inputs, and the panel then said "the first event must be create".)"""

from __future__ import annotations

import datetime as dt
import re._parser as _parser  # type: ignore[import-not-found]  # the stdlib regex parser
from typing import Any

from inspectlang.manifest import PRODUCT_FIELDS, InputSpec, Template
from runtime.intake import check_input_value

#: Sample values of product fields by name (other fields: by type).
PRODUCT_SAMPLES: dict[str, Any] = {
    "plate": "AB123CD",
    "make": "Toyota",
    "model": "Corolla",
    "year": 2020,
    "color": "white",
    "vin": "9BWZZZ377VT004251",
}
#: Sample values of consumer fields by name.
CONSUMER_SAMPLES: dict[str, Any] = {
    "firstName": "Ana",
    "lastName": "Pérez",
    "identification": "20111222",
    "email": "ana@example.com",
    "phone": "+5491155554444",
    "birthdate": "1990-05-17",
    "sex": 1,
}


def _candidates(spec: InputSpec, today: dt.date) -> list[Any]:
    rules = spec.validationSchema
    options = [option.key or option.label for option in spec.options or []]
    if spec.type == "select":
        return options[:1]
    if spec.type == "multiselect":
        return [options[: max(1, rules.minItems or 1)]]
    if spec.type == "numeric":
        low = rules.minimum if rules.minimum is not None else 1
        high = rules.maximum if rules.maximum is not None else low + 1
        middle = (low + high) / 2
        return [int(low), int(middle), middle, low, high]
    if spec.type == "check":
        return [True, False]
    if spec.type in ("file", "video"):
        kind = (rules.mediaTypes or ["image/png"])[0]
        size = min(rules.maxSizeBytes or 20480, 20480)
        extension = kind.rsplit("/", 1)[-1].replace("*", "bin")
        return [{"name": f"{spec.type}.{extension}", "contentType": kind, "size": size}]
    if spec.type == "date":
        return [rules.minDate[:10] if rules.minDate else today.isoformat(), today.isoformat()]
    length = max(rules.minLength or 0, 7)
    texts = ["example@example.com" if rules.email else "example", "x" * length, "1" * length]
    if rules.pattern:
        matching = matching_text(rules.pattern)
        if matching is not None:
            texts.insert(0, matching)
    return texts


def matching_text(pattern: str) -> str | None:
    """A short text matching a simple regular expression (literals, classes, counted repeats,
    groups, anchors), or None for what this does not cover: the runtime's check still decides."""
    try:
        parsed = _parser.parse(pattern)
    except Exception:
        return None
    return _build(list(parsed))


def _build(items: list[Any]) -> str | None:
    out = []
    for op, arg in items:
        name = str(op)
        if name in ("AT", "AT_BEGINNING", "AT_END"):
            continue
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "IN":
            char = _class_char(arg)
            if char is None:
                return None
            out.append(char)
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, _high, body = arg
            piece = _build(list(body))
            if piece is None:
                return None
            out.append(piece * max(low, 1 if low else 0))
        elif name == "SUBPATTERN":
            piece = _build(list(arg[-1]))
            if piece is None:
                return None
            out.append(piece)
        elif name == "BRANCH":
            piece = _build(list(arg[1][0]))
            if piece is None:
                return None
            out.append(piece)
        elif name == "ANY":
            out.append("a")
        else:
            return None
    return "".join(out)


def _class_char(items: list[Any]) -> str | None:
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            return chr(arg)
        if name == "RANGE":
            return chr(arg[0])
        if name == "CATEGORY":
            return {"CATEGORY_DIGIT": "1", "CATEGORY_WORD": "a", "CATEGORY_SPACE": " "}.get(
                str(arg)
            )
    return None


def sample_value(manifest: Template, spec: InputSpec, today: dt.date) -> Any:
    """A value of the input that its rules accept (the runtime's own check decides), or None.
    A date in a declared order (`not before` / `not after`) tries today first: dates of one day
    keep every order, where each one's own `earliest` could break it."""
    candidates = _candidates(spec, today)
    if spec.type == "date" and _ordered(manifest, spec.identifier):
        candidates.insert(0, today.isoformat())
    for candidate in candidates:
        _value, problems = check_input_value(manifest, spec, candidate)
        if not problems:
            return candidate
    return None


def _ordered(manifest: Template, identifier: str) -> bool:
    """Whether the input is on either side of a date order."""
    for spec in manifest.inputs:
        others = [*(spec.validationSchema.notBefore or ()), *(spec.validationSchema.notAfter or ())]
        if others and (spec.identifier == identifier or identifier in others):
            return True
    return False


def _field_sample(name: str, kind: str) -> Any:
    if name in PRODUCT_SAMPLES:
        return PRODUCT_SAMPLES[name]
    return 1 if kind in ("number", "numeric") else "example"


def _inputs(manifest: Template, stage: str, today: dt.date) -> list[dict[str, Any]]:
    names = {identifier: logic.name for identifier, logic in manifest.logic.inputs.items()}
    found = []
    for spec in manifest.inputs:
        if stage in spec.stages and spec.validationSchema.required:
            value = sample_value(manifest, spec, today)
            if value is not None:
                name = names.get(spec.identifier)
                key = {"input": name} if name else {"identifier": spec.identifier}
                found.append({**key, "value": value})
    return found


def starter_events(manifest: Template, today: dt.date) -> dict[str, Any]:
    """The events script the simulate panel starts from for this template."""
    kind = manifest.inspectionType
    body: dict[str, Any] = {
        "locale": manifest.logic.locales[0],
        "delivery": {"channel": "email", "destination": "someone@example.com"},
    }
    created = _inputs(manifest, "create", today)
    if created:
        body["inputs"] = created
    fields = PRODUCT_FIELDS.get(kind, {})
    product = {
        name.rsplit(".", 1)[-1]: _field_sample(name.rsplit(".", 1)[-1], fields.get(name, "text"))
        for name in manifest.logic.requirements.product
    }
    if product:
        body[kind] = product
    consumer = {
        name.rsplit(".", 1)[-1]: CONSUMER_SAMPLES.get(name.rsplit(".", 1)[-1], "example")
        for name in manifest.logic.requirements.consumer
    }
    if consumer:
        body["consumer"] = consumer
    events: list[dict[str, Any]] = [{"event": "create", "body": body}, {"event": "start"}]
    updated = _inputs(manifest, "update", today)
    if updated:
        events.append({"event": "update", "body": {"inputs": updated}})
    events.append({"event": "finish"})
    return {"events": events}
