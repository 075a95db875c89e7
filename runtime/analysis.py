"""What an image's analysis needs: which of its validations wait for a result, what the photo
is compared with (the declared plate, color, serial number or identity), and which other photo
of the inspection is its reference (the identity document a selfie's face is compared with).

Pure functions over the inspection state: the server's analysis job (and anyone embedding the
runtime) asks these, runs `runtime.vision` on the bytes, and records each outcome with
`runtime.record_validation`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspectlang.validations import VALIDATIONS
from runtime.engine import validation_options
from runtime.program import Program
from runtime.state import ImageRecord, InspectionState, ProductState

#: The reference role of the identity document's photo (`Analyzer.needs`).
DOCUMENT = "document"
#: Validations that read an identity document (their entries say so): an image that runs one
#: is the document.
DOCUMENT_VALIDATIONS = frozenset(
    name for name, entry in VALIDATIONS.items() if entry.reads_identity_document
)
#: Sides that name an identity document's photo, for templates that validate none of the above.
DOCUMENT_SIDES = frozenset({"dni", "dni_front", "passport", "document", "id", "id_card"})
#: Consumer fields an identity analysis compares with.
IDENTITY_FIELDS = ("identification", "firstName", "lastName", "birthdate", "sex")


@dataclass(frozen=True)
class Pending:
    """An image whose validations wait for results, and where it is in the inspection."""

    product: ProductState
    image: ImageRecord
    #: Validation names that run on this image and have no result yet, in template order.
    names: tuple[str, ...]


def pending(state: InspectionState, image_id: str) -> Pending | None:
    """The image's validations still waiting for a result; None when the image is no longer
    the current photo of its slot (a retake replaced it) or nothing waits."""
    found = state.find_image(image_id)
    if found is None:
        return None
    product, image = found
    names = tuple(v.validation for v in image.validations if v.run and not v.reported)
    return Pending(product, image, names) if names else None


def waiting_images(state: InspectionState) -> list[str]:
    """Ids of every current photo of the inspection with a validation waiting."""
    return [
        image.id
        for product in state.products
        for image in product.images
        if any(v.run and not v.reported for v in image.validations)
    ]


def document_image(state: InspectionState) -> ImageRecord | None:
    """The photo of the identity document: the first current photo that runs a document
    validation, else the first whose side names a document."""
    images = [image for product in state.products for image in product.images]
    for image in images:
        if any(v.validation in DOCUMENT_VALIDATIONS for v in image.validations):
            return image
    return next((image for image in images if image.side.lower() in DOCUMENT_SIDES), None)


def references(state: InspectionState, image: ImageRecord) -> dict[str, ImageRecord]:
    """Other photos this image's analysis may compare with, by role."""
    document = document_image(state)
    if document is not None and document.id != image.id:
        return {DOCUMENT: document}
    return {}


def declared(state: InspectionState, product: ProductState) -> dict[str, Any]:
    """What the customer declared: the product's fields, and for people the consumer's."""
    values = dict(product.data)
    identity = any(image.target == "identity" for image in product.images)
    if state.type == "people" or identity:
        values.update({k: state.consumer[k] for k in IDENTITY_FIELDS if k in state.consumer})
    return values


def country(state: InspectionState) -> str | None:
    """The inspection's country (plate formats): the delivery's `countryISO`, else the
    consumer's `country` when it is a two-letter code."""
    for value in (state.delivery.get("countryISO"), state.consumer.get("country")):
        if isinstance(value, str) and len(value) == 2 and value.isalpha():
            return value.upper()
    return None


def options(program: Program, image: ImageRecord, name: str) -> dict[str, float]:
    """The template's options of validation `name` on this image (thresholds, limits)."""
    return validation_options(program, image.templateImageIdentifier or "", name)
