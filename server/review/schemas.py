"""Bodies of the review routes, for the OpenAPI document (docs/review.md). The runtime checks
each body itself (`runtime.review`), so each refusal has its stable code."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from runtime.review import MAX_REASON_CHARS, MAX_RESULTS, MAX_RETAKE_IMAGES
from server.bodies import JsonSchema, RequestBody, ResponseBody, schema_of
from server.inspections.schemas import DamageFields

#: A reason, note or message: a non-blank text of at most `MAX_REASON_CHARS` characters.
Text = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_REASON_CHARS, pattern=r"\S")]


class PersonResult(RequestBody):
    imageId: str
    validation: str
    valid: bool
    note: Text | msgspec.UnsetType = msgspec.UNSET
    damages: list[DamageFields] | msgspec.UnsetType = msgspec.UNSET


class ReviewBody(RequestBody):
    """`POST /v1/inspection/:id/review`: results recorded as a person's and, with `veredict`,
    the decision (its `reason` is required)."""

    validations: (
        Annotated[list[PersonResult], msgspec.Meta(max_length=MAX_RESULTS)] | msgspec.UnsetType
    ) = msgspec.UNSET
    veredict: Literal["approved", "disapproved"] | msgspec.UnsetType = msgspec.UNSET
    reason: Text | msgspec.UnsetType = msgspec.UNSET


class RetakeBody(RequestBody):
    """`POST /v1/inspection/:id/retake`: the photos to take again and the consumer's message."""

    images: Annotated[
        list[Annotated[str, msgspec.Meta(min_length=1)]],
        msgspec.Meta(min_length=1, max_length=MAX_RETAKE_IMAGES),
    ]
    message: Text


class RetakeRequested(ResponseBody):
    message: str
    status: str
    images: list[str]
    magicLink: str
    delivery: dict[str, Any] | None


class Capabilities(ResponseBody):
    """`GET /v1/capabilities`: who decides each validation in this deployment."""

    validations: dict[str, Literal["local", "provider", "api", "person"]]
    machine: list[str]
    person: list[str]


#: The review body as the API document states it: results to record, a decision with its reason,
#: or both (a body with neither is refused with `invalid_body`).
REVIEW_BODY_SCHEMA: JsonSchema = {
    **schema_of(ReviewBody),
    "anyOf": [
        {"required": ["validations"], "properties": {"validations": {"minItems": 1}}},
        {"required": ["veredict", "reason"]},
    ],
}
