"""Bodies of the review routes, for the OpenAPI document (docs/review.md). The runtime checks
each body itself (`runtime.review`), so each refusal has its stable code."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from server.bodies import RequestBody, ResponseBody
from server.inspections.schemas import DamageFields


class PersonResult(RequestBody):
    imageId: str
    validation: str
    valid: bool
    note: str | msgspec.UnsetType = msgspec.UNSET
    damages: list[DamageFields] | msgspec.UnsetType = msgspec.UNSET


class ReviewBody(RequestBody):
    """`POST /v1/inspection/:id/review`: results recorded as a person's and, with `veredict`,
    the decision (its `reason` is required)."""

    validations: list[PersonResult] | msgspec.UnsetType = msgspec.UNSET
    veredict: Literal["approved", "disapproved"] | msgspec.UnsetType = msgspec.UNSET
    reason: str | msgspec.UnsetType = msgspec.UNSET


class RetakeBody(RequestBody):
    """`POST /v1/inspection/:id/retake`: the photos to take again and the consumer's message."""

    images: list[str]
    message: str


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
