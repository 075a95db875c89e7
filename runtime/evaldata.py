"""The inspection data the evaluators read: a plain dict built from the state.

Keys: `vars`, `inputs` (by identifier, typed per docs/design/ir.md), `product`, `consumer`,
`images` (template image identifier -> image record), `image_list`, `damages`, `validations`,
`checks` (check id -> bool), `event` (the rule's subject), `now` (ISO date of the event),
`errors` (rule errors appended during evaluation) and `steps` (node evaluations so far).
Records are dicts with the fields of syntax.md; a validation an image declares is a record
even before its result (`ran` false, its outcome missing), and is listed in `validations` once
reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspectlang.manifest import ValidationSpec
from runtime.program import Program
from runtime.state import DamageRecord, ImageRecord, InspectionState, ValidationRecord


def empty_env(now: str = "2024-01-01") -> dict[str, Any]:
    return {
        "vars": {},
        "inputs": {},
        "product": {},
        "consumer": {},
        "images": {},
        "image_list": [],
        "damages": [],
        "validations": [],
        "checks": {},
        "event": {},
        "now": now,
        "errors": [],
        "steps": 0,
    }


def validation_record(record: ValidationRecord) -> dict[str, Any] | None:
    """A validation as expressions see it; one with no result yet (waiting for a machine or
    routed to a person, docs/review.md) has `ran` false and its other values missing."""
    if not record.reported:
        return {
            "name": record.validation,
            "valid": None,
            "confidence": None,
            "result": None,
            "ran": False,
            "required": record.required,
        }
    result = record.result
    return {
        "name": record.validation,
        "valid": record.valid,
        "confidence": record.confidence,
        "result": result if isinstance(result, str) else None,
        "ran": True,  # a result was recorded
        "required": record.required,
    }


def unreported_record(name: str, required: bool) -> dict[str, Any]:
    """A validation the image declares that has no result yet (or whose photo was never
    uploaded): `ran` is false, what a result would say (`valid`, `confidence`, `result`) is
    missing. So `not images.x.plate.ran or ...` holds before a result instead of being empty."""
    return {
        "name": name,
        "valid": None,
        "confidence": None,
        "result": None,
        "ran": False,
        "required": required,
    }


def damage_record(damage: DamageRecord) -> dict[str, Any]:
    return {
        "part": damage.part,
        "damage": damage.damage,
        "severity": damage.severity,
        "percentage": damage.percentage,
        "declared": damage.declared,
    }


def image_record(
    side: str,
    image: ImageRecord | None,
    attempts: int,
    declared: Sequence[ValidationSpec] = (),
    label: str | None = None,
) -> dict[str, Any]:
    """The record of a template image; a not yet uploaded image is a record too (uploaded
    false), and each validation it `declared` has a record, `ran` false until a result.
    `label` is the image's label as the reader's locale writes it (its side when none)."""
    data: dict[str, Any] = {
        "side": side,
        "label": side if label is None else label,
        "approved": False,
        "processed": False,
        "uploaded": False,
        "attempts": attempts,
        "uploaded_at": None,
        "validations": [],
        "damages": [],
    }
    for spec in declared:
        data[spec.validation] = unreported_record(spec.validation, spec.required)
    if image is None:
        return data
    validations = [validation_record(v) for v in image.validations]
    data.update(
        approved=image.approved,
        processed=image.processed,
        uploaded=True,
        uploaded_at=image.uploadedAt[:10],
        validations=[v for v in validations if v is not None],
        damages=[damage_record(d) for d in image.damages],
    )
    for record, value in zip(image.validations, validations, strict=True):
        data[record.validation] = (
            value if value is not None else unreported_record(record.validation, record.required)
        )
    return data


def input_value(program: Program, identifier: str, value: Any) -> Any:
    """An input's stored value as the expression sees it: a select's option key (or, for a
    manifest compiled before options carried keys, its label; a revision is immutable)."""
    spec = program.input_spec(identifier)
    if spec is None or value is None:
        return None
    if spec.type == "select" and spec.options is not None:
        return _option_value(program, identifier, value)
    if spec.type == "multiselect" and spec.options is not None:
        return [_option_value(program, identifier, item) for item in value]
    return value


def _option_value(program: Program, identifier: str, value: Any) -> Any:
    spec = program.input_spec(identifier)
    if spec is None or spec.options is None:
        return value
    labels = [option.label for option in spec.options]
    if spec.options and spec.options[0].key is not None:
        if value in labels:  # stored as the template's label (runtime.intake)
            return spec.options[labels.index(value)].key
        return value
    logic = program.manifest.logic.inputs.get(identifier)
    keys = logic.optionKeys if logic is not None and logic.optionKeys else None
    if keys is not None and value in keys:
        return labels[keys.index(value)]
    return value


def intake_env(
    program: Program,
    inputs: dict[str, Any],
    product: Any,
    consumer: Any,
    now: str,
) -> dict[str, Any]:
    """The data an `ask when` reads while a creation or update is checked (no state yet)."""
    env = empty_env(now[:10])
    env["inputs"] = {
        identifier: input_value(program, identifier, value) for identifier, value in inputs.items()
    }
    env["product"] = dict(product) if isinstance(product, dict) else {}
    env["consumer"] = dict(consumer) if isinstance(consumer, dict) else {}
    return env


def relabel(program: Program, env: dict[str, Any], locale: str) -> None:
    """Write the images' labels in `locale` into `env` (the verdict's reasons evaluated again
    for a reader of another locale: `i.label` in their words)."""
    labels = program.image_labels(locale)
    for identifier, record in env["images"].items():
        record["label"] = labels.get(identifier, identifier)


def asked_images(program: Program, env: dict[str, Any]) -> list[str]:
    """The template images asked on `env`, in template order: those whose `ask when` holds (or
    that have none). `images` in expressions lists these, less the optional ones not uploaded:
    `all(i in images where i.approved)` does not wait for a photo nobody had to take."""
    return [
        spec.identifier
        for spec in program.manifest.images
        if spec.identifier not in program.asks or program.input_asked(spec.identifier, env)
    ]


def unasked(program: Program, env: dict[str, Any]) -> frozenset[str]:
    """The inputs whose `ask when` does not hold on `env`: not asked, so never required."""
    if not program.asks:
        return frozenset()
    return frozenset(i for i in program.asks if not program.input_asked(i, env))


def build_env(
    program: Program,
    state: InspectionState,
    now: str,
    event: dict[str, Any] | None = None,
) -> dict[str, Any]:
    env = empty_env(now[:10])
    env["vars"] = state.variables
    env["inputs"] = {
        identifier: input_value(program, identifier, value)
        for identifier, value in state.inputs.items()
    }
    product = state.products[0] if state.products else None
    env["product"] = dict(product.data) if product is not None else {}
    env["consumer"] = dict(state.consumer)
    latest: dict[str, ImageRecord] = {}
    damages: list[dict[str, Any]] = []
    for item in state.products:
        for image in item.images:
            if image.templateImageIdentifier is not None:
                latest[image.templateImageIdentifier] = image
        damages.extend(damage_record(d) for d in item.damages)
    images: dict[str, dict[str, Any]] = {}
    labels = program.image_labels(state.locale)
    for spec in program.manifest.images:
        record = image_record(
            spec.side,
            latest.get(spec.identifier),
            state.attempts.get(spec.identifier, 0),
            spec.validations,
            labels[spec.identifier],
        )
        images[spec.identifier] = record
        damages.extend(record["damages"])
        env["validations"].extend(record["validations"])
    env["images"] = images
    env["damages"] = damages
    env["checks"] = {g.id: g.valid for g in state.globalValidations}
    env["event"] = event or {}
    # `ask when` of images reads inputs, product and consumer fields only (the checker's E036):
    # decided on the data above
    env["image_list"] = [
        images[identifier]
        for identifier in asked_images(program, env)
        if images[identifier]["uploaded"] or not program.image_optional(identifier)
    ]
    return env
