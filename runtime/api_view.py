"""The spec's Inspection object (a JSON-ready dict) from a state, labels in its locale."""

from __future__ import annotations

from typing import Any

from inspectlang.manifest import InputSpec
from runtime.program import Program
from runtime.routing import pending
from runtime.state import DamageRecord, ImageRecord, InspectionState, ValidationRecord


def input_label(program: Program, spec: InputSpec, locale: str) -> str:
    logic = program.manifest.logic.inputs.get(spec.identifier)
    if logic is not None:
        translation = logic.translations.get(locale)
        if translation is not None and translation.label:
            return translation.label
    return spec.label


def localized_value(program: Program, spec: InputSpec, locale: str, value: Any) -> Any:
    """A select/multiselect value (stored as the default option label) in the locale."""
    if spec.options is None or value is None:
        return value
    logic = program.manifest.logic.inputs.get(spec.identifier)
    translation = logic.translations.get(locale) if logic is not None else None
    if translation is None or not translation.options:
        return value
    labels = [option.label for option in spec.options]
    translated = translation.options

    def one(item: Any) -> Any:
        if item in labels and labels.index(item) < len(translated):
            return translated[labels.index(item)]
        return item

    return [one(item) for item in value] if isinstance(value, list) else one(value)


def image_label(program: Program, identifier: str | None, locale: str) -> str | None:
    logic = program.manifest.logic.images.get(identifier or "")
    if logic is None:
        return None
    return logic.labels.get(locale) or logic.labels.get("") or None


def damage_view(damage: DamageRecord) -> dict[str, Any]:
    return {
        "part": damage.part,
        "percentage": damage.percentage,
        "damage": damage.damage,
        "severity": damage.severity,
    }


def capture_view(image: ImageRecord) -> dict[str, Any]:
    """What the photo was judged on: capture time and place, where each came from, the device
    (`docs/api.md`, "What a photo was judged on")."""
    source = image.takenAtSource or ("browser" if image.takenAt else "upload")
    located = image.latitude is not None and image.longitude is not None
    return {
        "takenAt": image.takenAt if source != "upload" else image.uploadedAt,
        "takenAtSource": source,
        "latitude": image.latitude,
        "longitude": image.longitude,
        "locationSource": (image.locationSource or "browser") if located else None,
        "device": dict(image.device) if image.device else None,
    }


def image_view(program: Program, image: ImageRecord, locale: str) -> dict[str, Any]:
    view: dict[str, Any] = {
        "_id": image.id,
        "templateImageIdentifier": image.templateImageIdentifier,
        "side": image.side,
        "target": image.target,
        "type": image.type,
        "processed": image.processed,
        "approved": image.approved,
        "uploadedAt": image.uploadedAt,
        "src": image.src,
        "validations": [validation_view(v) for v in image.validations if v.run and v.reported],
        "damages": [damage_view(d) for d in image.damages],
        "attempt": image.attempt,
        "capture": capture_view(image),
    }
    if image.entities:
        view["entities"] = [dict(entity) for entity in image.entities]
    if image.replacedAt is not None:
        view["replaced"] = True
        view["replacedAt"] = image.replacedAt
    label = image_label(program, image.templateImageIdentifier, locale)
    if label is not None:
        view["label"] = label
    return view


def validation_view(record: ValidationRecord) -> dict[str, Any]:
    """A reported validation: its result, and who decided it (`source`: machine or person)."""
    view: dict[str, Any] = {
        "_id": record.id,
        "validation": record.validation,
        "confidence": record.confidence,
        "valid": record.valid,
        # The value behind the verdict (the plate read, the photo's age in hours...).
        "result": record.result,
        "source": "person" if record.reviewedBy is not None else "machine",
    }
    if record.reviewedBy is not None:
        view["reviewedBy"] = dict(record.reviewedBy)
        view["reviewedAt"] = record.reviewedAt
        if record.note:
            view["note"] = record.note
    return view


def review_view(program: Program, state: InspectionState) -> dict[str, Any] | None:
    """The Inspection object's `review` (docs/review.md); None when no person was involved."""
    review = state.review
    if review is None and state.status != "review":
        return None
    view: dict[str, Any] = {
        "pending": pending(program, state) if state.status == "review" else [],
        "reasons": [dict(r) for r in review.reasons] if review else [],
        "decisions": [dict(d) for d in review.decisions] if review else [],
        "since": review.since if review else None,
        "assignee": dict(review.assignee) if review and review.assignee else None,
        "suggestion": dict(review.machine) if review and review.machine else None,
        "audit": [dict(a) for a in review.audit] if review else [],
    }
    if state.retake is not None:
        view["retake"] = state.retake.model_dump(mode="json")
    return view


def extra_image_view(image: ImageRecord) -> dict[str, Any]:
    return {
        "_id": image.id,
        "target": image.target,
        "uploadedAt": image.uploadedAt,
        "side": image.side,
        "src": image.src,
        "productInspectionId": image.productInspectionId,
        "templateImageIdentifier": image.templateImageIdentifier,
        "capture": capture_view(image),
    }


def to_api(program: Program, state: InspectionState) -> dict[str, Any]:
    """The spec's Inspection object for this state."""
    locale = state.locale
    manifest = program.manifest
    general = [spec for spec in manifest.inputs if _input_image(program, spec) is None]
    template_inputs = [
        {
            "identifier": spec.identifier,
            "label": input_label(program, spec, locale),
            "value": localized_value(program, spec, locale, state.inputs.get(spec.identifier)),
        }
        for spec in general
    ]
    identity_images: list[dict[str, Any]] = []
    identity_extra: list[dict[str, Any]] = []
    custom_images: list[dict[str, Any]] = []
    custom_extra: list[dict[str, Any]] = []
    products: list[dict[str, Any]] = []
    for product in state.products:
        images = []
        for image in product.images:
            view = image_view(program, image, locale)
            if image.target == "identity":
                identity_images.append(view)
            elif image.target == "custom":
                custom_images.append(view)
            else:
                images.append(view)
        extras = [extra_image_view(i) for i in product.extraImages if i.target != "custom"]
        custom_extra += [extra_image_view(i) for i in product.extraImages if i.target == "custom"]
        if product.type == "people":  # a person is the identity, not a product
            identity_extra += extras
            continue
        products.append(
            {
                "_id": product.id,
                "type": product.type,
                product.type: dict(product.data),
                "inputs": [
                    {
                        "label": input_label(program, spec, locale),
                        "type": spec.type,
                        "identifier": spec.identifier,
                        "value": localized_value(
                            program, spec, locale, state.inputs.get(spec.identifier)
                        ),
                    }
                    for spec in manifest.inputs
                    if _input_image(program, spec) is not None
                ],
                "images": images,
                "extraImages": extras,
                "damages": [damage_view(d) for d in product.damages],
                **(
                    {
                        "replacedImages": [
                            image_view(program, i, locale) for i in product.replacedImages
                        ]
                    }
                    if product.replacedImages
                    else {}
                ),
            }
        )
    return {
        "_id": state.id,
        "type": state.type,
        "status": state.status,
        "veredict": state.veredict,
        "reasons": list(state.reasons),
        "completedBy": state.completedBy,
        "review": review_view(program, state),
        "template": {
            "_id": state.template.id,
            "name": state.template.name,
            "type": state.template.type,
            "inputs": template_inputs,
        },
        "producer": dict(state.producer),
        "metadata": dict(state.metadata),
        "locale": state.locale,
        "identity": {
            **state.consumer,
            "images": identity_images,
            "extraImages": identity_extra,
        },
        "custom": {
            "images": custom_images,
            "inputs": [
                {**item, "type": spec.type}
                for item, spec in zip(template_inputs, general, strict=True)
            ],
            "extraImages": custom_extra,
        },
        "variables": [{"name": name, "value": value} for name, value in state.variables.items()],
        "globalValidations": [
            {"_id": g.id, "name": g.name, "description": g.description, "valid": g.valid}
            for g in state.globalValidations
        ],
        "products": products,
        "createdAt": state.createdAt,
        "updatedAt": state.updatedAt,
        "startedAt": state.startedAt,
        "completedAt": state.completedAt,
        "expiresAt": state.expiresAt,
        "testing": state.testing,
    }


def _input_image(program: Program, spec: InputSpec) -> str | None:
    logic = program.manifest.logic.inputs.get(spec.identifier)
    return logic.image if logic is not None else None
