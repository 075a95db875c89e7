"""The spec's Inspection object from a state, labels in its locale: one typed view.

Each part of the object is a `TypedDict` below, its keys the JSON keys (`docs/api.md`):
`to_api` builds the object the API returns and the server stores (`document` column), the
server's OpenAPI document is generated from these same types (`server.inspections.schemas`),
and the pages and reports read stored documents through them (`mypy` checks every key read).
A key marked `NotRequired` may be absent: left out when it has nothing to say (`label`,
`entities`, `replacedImages`...) or missing from documents stored before it existed.

Why dicts typed by mypy rather than dataclasses written to JSON: the object is rendered at every
change of an inspection and stored as is; building dataclasses and writing them out measured
2.0-3.5x the time of building the dicts (about 200 us to 500-700 us per object, on the vectors
of `tests/runtime/api_view_vectors/`), for the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast

from inspectlang.manifest import InputSpec
from runtime.program import Program
from runtime.routing import pending
from runtime.state import (
    CompletedBy,
    DamageRecord,
    ImageRecord,
    InspectionState,
    Status,
    ValidationRecord,
    Veredict,
)

if TYPE_CHECKING:
    # The state holds a product's type as a text; the document states the spec's types.
    InspectionType = str
else:
    from inspectlang.manifest import InspectionType

#: A validation's value: what it read or measured (a text or a number; null when nothing).
ResultValue = str | int | float | bool | None


class Damage(TypedDict):
    part: str
    percentage: NotRequired[float | None]
    damage: str
    severity: str


class Device(TypedDict, total=False):
    """The camera and the software that wrote the file, as its EXIF says (absent when silent)."""

    make: str
    model: str
    software: str


class Capture(TypedDict):
    """What the photo was judged on (`date`, `distance`, `duplicate`, `edited`): when and where
    it was taken and where each came from (`exif`: the photo's own data; `browser`: what the
    uploading client declared; `upload`: no capture time known, `takenAt` is the upload's),
    and the device."""

    takenAt: str | None
    takenAtSource: Literal["exif", "browser", "upload"]
    latitude: float | None
    longitude: float | None
    locationSource: Literal["exif", "browser"] | None
    device: Device | None


class ImageValidation(TypedDict):
    _id: str
    validation: str
    confidence: float | None
    valid: bool | None
    #: The value behind the verdict: the plate read, the color found, the face distance, the
    #: photo's age in hours, the distance in metres (null when nothing was read).
    result: NotRequired[ResultValue]
    #: `machine`, or `person` when a reviewer recorded it (docs/review.md).
    source: NotRequired[Literal["machine", "person"]]
    reviewedBy: NotRequired[dict[str, str]]
    reviewedAt: NotRequired[str]
    note: NotRequired[str]


class Entity(TypedDict):
    """A field read from an identity document (the spec's Identity image `entities`)."""

    entity: str
    valid: bool
    result: NotRequired[str | int | float | None]


class Image(TypedDict):
    """An image of a product (also the response of an upload)."""

    _id: str
    templateImageIdentifier: NotRequired[str | None]
    side: NotRequired[str | None]
    target: NotRequired[str | None]
    type: NotRequired[str | None]
    processed: NotRequired[bool]
    approved: NotRequired[bool | None]
    uploadedAt: NotRequired[str | None]
    src: NotRequired[str | None]
    label: NotRequired[str]
    productInspectionId: NotRequired[str | None]
    validations: NotRequired[list[ImageValidation]]
    damages: NotRequired[list[Damage]]
    #: This photo's upload number in its slot: 1, then 2, 3... for each retake.
    attempt: NotRequired[int]
    #: What the photo was judged on: capture time, place, their sources, the device.
    capture: NotRequired[Capture]
    #: Identity images: the fields read from the document.
    entities: NotRequired[list[Entity]]
    #: A photo a reviewer's retake replaced (kept in `replacedImages`, docs/review.md).
    replaced: NotRequired[bool]
    replacedAt: NotRequired[str]


class InputValue(TypedDict):
    identifier: str
    value: Any
    label: NotRequired[str]
    type: NotRequired[str]


# A product: its common fields and, under its type's name (`car`, ...), the product data (one
# key per `inspectlang.manifest.INSPECTION_TYPES`; a test holds them equal).
class Product(TypedDict):
    _id: str
    type: InspectionType
    images: list[Image]
    extraImages: list[Image]
    inputs: NotRequired[list[InputValue]]
    damages: NotRequired[list[Damage]]
    #: Photos replaced by a retake, oldest first (docs/review.md).
    replacedImages: NotRequired[list[Image]]
    car: NotRequired[dict[str, Any]]
    moto: NotRequired[dict[str, Any]]
    bike: NotRequired[dict[str, Any]]
    machinery: NotRequired[dict[str, Any]]
    goods: NotRequired[dict[str, Any]]
    people: NotRequired[dict[str, Any]]
    custom: NotRequired[dict[str, Any]]
    cellphone: NotRequired[dict[str, Any]]


class ImagesHolder(TypedDict, total=False):
    images: list[Image]
    extraImages: list[Image]
    inputs: list[InputValue]


# The person inspected: the consumer's fields (`inspectlang.manifest.CONSUMER_FIELDS`, a text, a
# date or a number each; a test holds them equal) beside their photos.
class Identity(ImagesHolder, total=False):
    firstName: str | None
    lastName: str | None
    identification: str | None
    email: str | None
    phone: str | None
    birthdate: str | None
    sex: float | None
    address: str | None
    city: str | None
    state: str | None
    country: str | None


class TemplateReference(TypedDict):
    _id: str
    name: str
    type: str
    inputs: NotRequired[list[InputValue]]


class Producer(TypedDict, total=False):
    companyId: str
    userId: str
    internalId: str


class VariableValue(TypedDict):
    name: str
    value: float | str | None


class GlobalValidation(TypedDict):
    _id: str
    name: str
    description: str
    valid: bool


class Inspection(TypedDict):
    """The spec's Inspection object (`runtime.api_view`)."""

    _id: str
    type: InspectionType
    status: Status
    veredict: Veredict
    template: TemplateReference
    producer: Producer
    metadata: dict[str, str]
    variables: list[VariableValue]
    globalValidations: list[GlobalValidation]
    products: list[Product]
    testing: bool
    reasons: NotRequired[list[str]]
    completedBy: NotRequired[CompletedBy | None]
    #: A person's part (docs/review.md): pending validations, reasons, decisions, audit.
    review: NotRequired[dict[str, Any] | None]
    locale: NotRequired[str]
    identity: NotRequired[Identity]
    custom: NotRequired[ImagesHolder]
    createdAt: NotRequired[str]
    updatedAt: NotRequired[str]
    startedAt: NotRequired[str | None]
    completedAt: NotRequired[str | None]
    expiresAt: NotRequired[str | None]


def every_image(document: Inspection) -> Iterator[tuple[Image, str]]:
    """Every image record of an Inspection object with where it belongs (`product`,
    `identity`, `custom`), in document order: each product's photos, extra photos and photos a
    retake replaced, then the identity's and the custom part's. Tolerates a stored document
    written before a part existed."""
    for product in document.get("products") or []:
        yield from ((image, "product") for image in product.get("images") or [])
        yield from ((image, "product") for image in product.get("extraImages") or [])
        yield from ((image, "product") for image in product.get("replacedImages") or [])
    identity: ImagesHolder = document.get("identity") or {}
    custom: ImagesHolder = document.get("custom") or {}
    for holder, target in ((identity, "identity"), (custom, "custom")):
        for images in (holder.get("images"), holder.get("extraImages")):
            yield from ((image, target) for image in images or [])


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


def damage_view(damage: DamageRecord) -> Damage:
    return {
        "part": damage.part,
        "percentage": damage.percentage,
        "damage": damage.damage,
        "severity": damage.severity,
    }


def capture_view(image: ImageRecord) -> Capture:
    """What the photo was judged on: capture time and place, where each came from, the device
    (`docs/api.md`, "What a photo was judged on")."""
    source = cast(
        Literal["exif", "browser", "upload"],
        image.takenAtSource or ("browser" if image.takenAt else "upload"),
    )
    located = image.latitude is not None and image.longitude is not None
    return {
        "takenAt": image.takenAt if source != "upload" else image.uploadedAt,
        "takenAtSource": source,
        "latitude": image.latitude,
        "longitude": image.longitude,
        "locationSource": cast(Literal["exif", "browser"], image.locationSource or "browser")
        if located
        else None,
        "device": cast(Device, dict(image.device)) if image.device else None,
    }


def image_view(program: Program, image: ImageRecord, locale: str) -> Image:
    view: Image = {
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
        view["entities"] = [cast(Entity, dict(entity)) for entity in image.entities]
    if image.replacedAt is not None:
        view["replaced"] = True
        view["replacedAt"] = image.replacedAt
    label = image_label(program, image.templateImageIdentifier, locale)
    if label is not None:
        view["label"] = label
    return view


def validation_view(record: ValidationRecord) -> ImageValidation:
    """A reported validation: its result, and who decided it (`source`: machine or person)."""
    view: ImageValidation = {
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
        view["reviewedAt"] = cast(str, record.reviewedAt)  # set with reviewedBy
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


def extra_image_view(image: ImageRecord) -> Image:
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


def to_api(program: Program, state: InspectionState) -> Inspection:
    """The spec's Inspection object for this state."""
    locale = state.locale
    manifest = program.manifest
    general = [spec for spec in manifest.inputs if _input_image(program, spec) is None]
    template_inputs: list[InputValue] = [
        {
            "identifier": spec.identifier,
            "label": input_label(program, spec, locale),
            "value": localized_value(program, spec, locale, state.inputs.get(spec.identifier)),
        }
        for spec in general
    ]
    identity_images: list[Image] = []
    identity_extra: list[Image] = []
    custom_images: list[Image] = []
    custom_extra: list[Image] = []
    products: list[Product] = []
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
        # The product data under its type's name: a key mypy cannot name, hence the cast.
        products.append(
            cast(
                Product,
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
                },
            )
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
        "producer": cast(Producer, dict(state.producer)),
        "metadata": dict(state.metadata),
        "locale": state.locale,
        "identity": cast(
            Identity,
            {**state.consumer, "images": identity_images, "extraImages": identity_extra},
        ),
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
