"""Bodies of the review routes (docs/review.md): the Structs the OpenAPI document shows, and the
decoders that turn a parsed body into the runtime's typed request once, at the edge
(`review_request`, `retake_request`), with each refusal's stable code: `invalid_body`, and
`reason_required` for a decision without its reason. `runtime.review` takes the typed values as
they are."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

import msgspec

from runtime import review as typed
from runtime.intake import problem
from runtime.review import MAX_REASON_CHARS, MAX_RESULTS, MAX_RETAKE_IMAGES, Veredict
from server.bodies import JsonSchema, RequestBody, ResponseBody, decode, schema_of
from server.errors import ApiError
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

    unknown_field_code = "invalid_body"

    validations: (
        Annotated[list[PersonResult], msgspec.Meta(max_length=MAX_RESULTS)] | msgspec.UnsetType
    ) = msgspec.UNSET
    veredict: Veredict | msgspec.UnsetType = msgspec.UNSET
    reason: Text | msgspec.UnsetType = msgspec.UNSET


class RetakeBody(RequestBody):
    """`POST /v1/inspection/:id/retake`: the photos to take again and the consumer's message."""

    unknown_field_code = "invalid_body"

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


T = TypeVar("T")


def decoded_or_refusal(decoder: Callable[[Any], T], value: Any) -> T | ApiError:
    """`decoder(value)`, or the 400 it raised, for the service to raise once the inspection is
    found: a body sent to an inspection that does not exist is 404 `inspection_not_found`
    first, as when the runtime checked the body."""
    try:
        return decoder(value)
    except ApiError as refusal:
        return refusal


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def review_request(value: Any) -> typed.ReviewRequest:
    """A parsed review body as the runtime's `ReviewRequest`: `null` or a blank text where a
    text is optional is absent (a note, a reason without a decision), as it always was; a
    decision whose reason is missing, blank or not a text is 400 `reason_required`; anything
    else that does not fit `ReviewBody` is 400 `invalid_body` naming the field."""
    if not isinstance(value, dict):
        raise ApiError.of("invalid_body", "The request body must be a JSON object.")
    decided = value.get("veredict") is not None
    body = {
        key: item
        for key, item in value.items()
        if not (key == "veredict" and item is None)
        and not (key == "reason" and (_blank(item) or (decided and not isinstance(item, str))))
    }
    if isinstance(body.get("validations"), list):
        body["validations"] = [_optional_fields_given(item) for item in body["validations"]]
    decoded = decode(body, ReviewBody)
    decision = None
    if decoded.veredict is not msgspec.UNSET:
        if decoded.reason is msgspec.UNSET:
            raise ApiError.of(
                "reason_required",
                "reason is required",
                [problem("reason", "required", "reason is required")],
            )
        decision = typed.Decision(decoded.veredict, decoded.reason.strip())
    results = tuple(_result(item) for item in decoded.validations or ())
    if not results and decision is None:
        raise ApiError.of(
            "invalid_body", "send validations to record, a veredict with its reason, or both"
        )
    return typed.ReviewRequest(results=results, decision=decision)


def _optional_fields_given(item: Any) -> Any:
    """A result with its `null` or blank note and its `null` damages left out."""
    if not isinstance(item, dict):
        return item
    return {
        key: value
        for key, value in item.items()
        if not (key == "note" and _blank(value)) and not (key == "damages" and value is None)
    }


def _result(item: PersonResult) -> typed.PersonResult:
    return typed.PersonResult(
        image_id=item.imageId,
        validation=item.validation,
        valid=item.valid,
        note=None if item.note is msgspec.UNSET else item.note.strip(),
        damages=tuple(
            typed.FoundDamage(
                part=damage.part,
                damage=damage.damage,
                severity=damage.severity,
                percentage=None
                if damage.percentage is msgspec.UNSET or damage.percentage is None
                else float(damage.percentage),
            )
            for damage in (item.damages or ())
        ),
    )


def retake_request(value: Any) -> typed.RetakeRequest:
    """A parsed retake body as the runtime's `RetakeRequest` (the message trimmed); 400
    `invalid_body` naming the field when it does not fit `RetakeBody`."""
    decoded = decode(value, RetakeBody)
    return typed.RetakeRequest(images=tuple(decoded.images), message=decoded.message.strip())
