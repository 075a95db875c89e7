"""The inspection routes' bodies: the Inspection object (`runtime.api_view`'s typed view, with
what only the server adds: the upload's quality and warnings, the delivery, the explanation), a
created inspection, a page of inspections, and the request bodies.

Fields that depend on the vocabulary (one product object per inspection type) are made from
`inspectlang.manifest`'s tables with `msgspec.defstruct`, so a new type needs no edit here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

import msgspec

from inspectlang.manifest import (
    CONSUMER_FIELDS,
    PRODUCT_CHOICES,
    PRODUCT_FIELDS,
)
from inspectlang.vocabulary import (
    MAX_METADATA_KEY_LENGTH,
    MAX_METADATA_PAIRS,
    MAX_METADATA_VALUE_LENGTH,
    MAX_NUMBER,
    MAX_TEXT_LENGTH,
)
from runtime import api_view as view
from server.bodies import RequestBody, ResponseBody
from server.delivery.schemas import DeliveryView

Nullable = str | None
Unset = msgspec.UnsetType
UNSET = msgspec.UNSET


#: A validation's value: what it read or measured (a text of at most 1000 characters or a number).
ResultValue = Annotated[str, msgspec.Meta(max_length=1000)] | int | float | bool | None


class Entity(RequestBody):
    """A field read from an identity document (the spec's Identity image `entities`)."""

    entity: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    valid: bool
    result: Annotated[str, msgspec.Meta(max_length=1000)] | int | float | None = None


class QualityProblem(ResponseBody):
    code: Literal["too_blurry", "too_dark", "too_bright", "too_small", "blank"]
    message: str


class Quality(ResponseBody):
    """The photo quality check at upload (only in the upload's answer)."""

    passed: bool
    problems: list[QualityProblem]
    #: What was measured: sharpness, brightness, contrast, width, height.
    measures: dict[str, float | int]


class UploadWarning(ResponseBody):
    """Something an upload was accepted with but the client should know (upload answers only)."""

    code: Literal["unknown_side"]
    message: str


class Image(view.Image):
    """An image of a product (also the response of an upload)."""

    #: Upload answers only: the photo quality check (blur, exposure, size).
    quality: NotRequired[Quality]
    #: Upload answers only: `unknown_side` when the side names no image of the template.
    warnings: NotRequired[list[UploadWarning]]


class Inspection(view.Inspection):
    """The spec's Inspection object (`runtime.api_view`)."""

    #: The link's delivery (docs/delivery.md), kept in its own column.
    delivery: NotRequired[DeliveryView]
    #: `GET /v1/inspection/:id?explain=true`: the verdict's explanation.
    explanation: NotRequired[dict[str, Any]]


class VerdictExplanation(ResponseBody):
    """`GET /v1/inspection/:id/explanation` (`runtime.explain`): every verdict line, check
    and rule with the values it saw, its span and its template `line`."""

    veredict: str
    reasons: list[str]
    status: str
    missing: list[dict[str, Any]]
    verdict: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    validations: list[dict[str, Any]]
    rules: list[dict[str, Any]]
    variables: dict[str, Any]
    ruleErrors: list[dict[str, Any]]


class GoodsAdded(ResponseBody):
    """Goods added to an inspection (`POST /v1/inspection/goods/:inspectionId`)."""

    message: str
    productIds: list[str]


class InspectionPage(ResponseBody):
    """A page of `GET /v1/inspection` (the spec's paginated list)."""

    inspections: list[Inspection]
    totalInspections: int
    limit: int
    totalPages: int
    page: int
    pagingCounter: int
    hasPrevPage: bool
    hasNextPage: bool
    prevPage: int | None
    nextPage: int | None


class CreatedInspection(ResponseBody):
    inspectionId: str
    productId: str | None
    #: Every product of the inspection, in order (`productId` is the first).
    productIds: list[str]
    message: str
    magicLink: str


class FinishedInspection(Inspection):
    """The answer of `POST /v1/inspection/finish/:id`: the Inspection object and, beside
    its fields, the `message` the client libraries read."""

    message: str


# --- request bodies ----------------------------------------------------------------------------

#: A percentage or confidence: a whole or decimal number from 0 to 100 (a whole one stays whole).
Percent = Annotated[int, msgspec.Meta(ge=0, le=100)] | Annotated[float, msgspec.Meta(ge=0, le=100)]
#: A damage's part, kind and severity: texts of 1 to 100 characters.
DamageText = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class DamageFields(RequestBody):
    """A damage: declared by the consumer, or found by an analysis service."""

    part: DamageText
    damage: DamageText
    severity: DamageText
    percentage: Percent | Unset | None = UNSET


class DamageBody(DamageFields):
    """`POST /v1/inspection/:id/damage`; the first product unless `productId` says otherwise."""

    productId: str | Unset = UNSET


class ValidationResult(RequestBody):
    """`POST /v1/inspection/:id/image/:imageId/validation`: one validation's result."""

    field_codes = {
        "validation": "unknown_validation",
        "confidence": "invalid_validation_result",
        "result": "invalid_validation_result",
        "damages": "invalid_validation_result",
        "entities": "invalid_validation_result",
    }

    validation: str
    confidence: Percent
    result: ResultValue = None
    damages: list[DamageFields] | Unset = UNSET
    #: Fields read from an identity document, shown in the image's `entities`.
    entities: Annotated[list[Entity], msgspec.Meta(max_length=20)] | Unset = UNSET


# --- bodies the runtime validates --------------------------------------------------------------
# Creation and updates are checked field by field by `runtime.intake` (the template's schema,
# its inputs, the product type's fields), with its own codes; these Structs write their
# document schemas (open objects, as the handlers read them).


class Documented(RequestBody, omit_defaults=True):
    """A body documented from its Struct but validated by the runtime (closed, as the
    runtime's intake refuses unknown keys with `unknown_field`)."""


#: JSON type of each expression type of a product or consumer field, as `runtime.intake`
#: checks it: a text of at most MAX_TEXT_LENGTH characters; a date `YYYY-MM-DD`; a number
#: within ±MAX_NUMBER, or the same number written as a text (`"2020"`).
_FIELD_TYPES: dict[str, Any] = {
    "text": Annotated[str, msgspec.Meta(max_length=MAX_TEXT_LENGTH)],
    "date": Annotated[str, msgspec.Meta(extra_json_schema={"format": "date"})],
    "number": Annotated[float, msgspec.Meta(ge=-MAX_NUMBER, le=MAX_NUMBER)]
    | Annotated[str, msgspec.Meta(pattern=r"^-?[0-9]{1,15}(\.[0-9]{1,6})?$")],
}

#: Product data: the product type's fields (`PRODUCT_FIELDS`), e.g. `{"plate": "AB123CD"}`,
#: and its `configuration` (validation name -> `{run, required}`).
ProductData = dict[str, str | float | bool | dict[str, dict[str, bool | None]] | None]
#: The spec's metadata limits, from the vocabulary (checked by `runtime.intake.check_metadata`).
Metadata = Annotated[
    dict[
        Annotated[str, msgspec.Meta(max_length=MAX_METADATA_KEY_LENGTH, pattern="^[^\\u0000]*$")],
        Annotated[str, msgspec.Meta(max_length=MAX_METADATA_VALUE_LENGTH)],
    ],
    msgspec.Meta(max_length=MAX_METADATA_PAIRS),
]


class Delivery(Documented):
    """How the link reaches the consumer (docs/delivery.md): `channel` and `destination`, or
    `disabled: true`."""

    disabled: bool | Unset = UNSET
    channel: Literal["email", "sms", "wsp"] | Unset = UNSET
    destination: Annotated[str, msgspec.Meta(max_length=320)] | Unset = UNSET
    countryISO: Annotated[str, msgspec.Meta(pattern="^[A-Za-z]{2}$")] | Unset = UNSET


class ProducerReference(Documented):
    internalId: str | Unset = UNSET


class FileReference(Documented):
    """A file input's value given as a reference rather than a multipart part."""

    name: Annotated[str, msgspec.Meta(max_length=1000)] | Unset = UNSET
    src: Annotated[str, msgspec.Meta(max_length=1000)] | Unset = UNSET
    contentType: str | Unset = UNSET
    size: Annotated[int, msgspec.Meta(ge=0)] | Unset = UNSET


#: An input's value, by input type: a text (text, textarea, select, date `YYYY-MM-DD`, or a
#: file name), a number, true or false (check), a list of option keys or labels
#: (multiselect), or a file reference. Which one an input takes is the template's schema
#: (`GET /v1/inspection/template/:id`), checked by the runtime with `invalid_input_value`.
InputValueSent = (
    Annotated[str, msgspec.Meta(max_length=MAX_TEXT_LENGTH)]
    | Annotated[float, msgspec.Meta(ge=-MAX_NUMBER, le=MAX_NUMBER)]
    | bool
    | list[Annotated[str, msgspec.Meta(max_length=MAX_TEXT_LENGTH)]]
    | FileReference
    | None
)


class InputAnswer(Documented):
    identifier: Annotated[str, msgspec.Meta(description="An input of the template.")]
    value: InputValueSent


#: The person inspected, as sent: any of `CONSUMER_FIELDS`.
#: `consumer.sex` also takes the client libraries' words (stored as ISO/IEC 5218 codes).
SexWord = Literal["male", "female", "not_applicable"]

Consumer = msgspec.defstruct(
    "Consumer",
    [
        (
            name,
            (_FIELD_TYPES[kind] | SexWord if name == "sex" else _FIELD_TYPES[kind]) | Unset,
            UNSET,
        )
        for name, kind in CONSUMER_FIELDS.items()
    ],
    bases=(Documented,),
    kw_only=True,
    omit_defaults=True,
)


class UpdateInspectionBody(Documented):
    """`PUT /v1/inspection/:id`: consumer, metadata and inputs not yet defined."""

    #: The spec's metadata limits have their own codes (`runtime.intake.check_metadata`).
    typed_later = frozenset({"metadata"})

    consumer: Consumer | Unset = UNSET  # type: ignore[valid-type]
    metadata: Metadata | Unset = UNSET
    inputs: list[InputAnswer] | Unset = UNSET


class CreateInspectionFields(UpdateInspectionBody, kw_only=True):
    field_codes = {"callbackURL": "invalid_callback_url"}

    templateId: Annotated[
        str,
        msgspec.Meta(
            pattern="^([0-9a-f]{24}|easy|deep|damage)$",
            description="A 24-hex template id, or an alias: easy, deep, damage.",
        ),
    ]
    delivery: Delivery | Unset = UNSET
    locale: Annotated[str, msgspec.Meta(pattern="^[a-z]{2}_[A-Z]{2}$", description="e.g. en_US.")]
    producer: ProducerReference | Unset = UNSET
    products: list[ProductData] | Unset = UNSET
    initialStatus: Literal["created", "started"] | Unset = UNSET
    callbackURL: Annotated[str, msgspec.Meta(extra_json_schema={"format": "uri"})] | Unset = UNSET


class ValidationSetting(Documented):
    """One validation's setting for this inspection, over the template's."""

    run: bool | Unset = UNSET
    required: bool | Unset = UNSET


#: `<product>.configuration`: validation name -> its `run`/`required` for this inspection only
#: (a name the template does not validate is 400 `unknown_validation`).
Configuration = dict[Annotated[str, msgspec.Meta(max_length=100)], ValidationSetting]


def _field_type(kind: str, name: str, field_type: str) -> Any:
    choices = PRODUCT_CHOICES.get(kind, {}).get(name)
    return Literal[choices] if choices else _FIELD_TYPES[field_type]


def _product_struct(kind: str, *, configured: bool) -> Any:
    """The product data of one inspection type, as the client libraries send it: its fields
    (`PRODUCT_FIELDS`, closed vocabularies as enums) and, at creation only, the per-inspection
    `configuration`."""
    fields: list[tuple[str, Any, Any]] = [
        (name, _field_type(kind, name, field_type) | Unset, UNSET)
        for name, field_type in PRODUCT_FIELDS[kind].items()
    ]
    if configured:
        fields.append(("configuration", Configuration | Unset, UNSET))
    return msgspec.defstruct(
        f"{kind.capitalize()}{'Data' if configured else 'Fields'}",
        fields,
        bases=(Documented,),
        kw_only=True,
        omit_defaults=True,
    )


#: Product data at creation, by inspection type (fields and `configuration`).
PRODUCT_STRUCTS: dict[str, Any] = {
    kind: _product_struct(kind, configured=True) for kind in PRODUCT_FIELDS
}
#: Product data of a product update and of goods added later (fields only).
PRODUCT_FIELD_STRUCTS: dict[str, Any] = {
    kind: _product_struct(kind, configured=False) for kind in PRODUCT_FIELDS if PRODUCT_FIELDS[kind]
}
GoodsFields = PRODUCT_FIELD_STRUCTS["goods"]


class GoodsBody(Documented):
    """`POST /v1/inspection/goods/:id`: `goods` to add to an inspection, or `good` to update
    one goods product."""

    goods: list[GoodsFields] | Unset = UNSET  # type: ignore[valid-type]
    good: GoodsFields | Unset = UNSET  # type: ignore[valid-type]


def _with_products(name: str, base: type[Documented], *, creation: bool) -> Any:
    """`base` plus one product data field per inspection type (at creation goods may be a
    list, the client libraries' form)."""

    def field_type(kind: str, struct: Any) -> Any:
        return (struct | list[struct] if creation and kind == "goods" else struct) | Unset

    return msgspec.defstruct(
        name,
        [
            (kind, field_type(kind, struct), UNSET)
            for kind, struct in (PRODUCT_STRUCTS if creation else PRODUCT_FIELD_STRUCTS).items()
        ],
        bases=(base,),
        kw_only=True,
        omit_defaults=True,
    )


#: `POST /v1/inspection/:type`.
CreateInspectionBody = _with_products("CreateInspectionBody", CreateInspectionFields, creation=True)


class ProductUpdateFields(Documented):
    """What a product update takes beside the product object: the PHP library's `productId`
    (the path's; 400 `product_id_mismatch` otherwise) and inputs not yet defined (file inputs
    as multipart parts named by their identifier), as `PUT /v1/inspection/:id` takes them."""

    productId: str | Unset = UNSET
    inputs: list[InputAnswer] | Unset = UNSET


#: `PUT /v1/inspection/:type/:productId`: product fields, inputs not yet defined.
UpdateProductBody = _with_products("UpdateProductBody", ProductUpdateFields, creation=False)
