"""The delivery route's bodies: a resend request in, the queued delivery out."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from server.bodies import RequestBody, ResponseBody

Unset = msgspec.UnsetType
UNSET = msgspec.UNSET
Nullable = str | None


class DeliveryView(ResponseBody):
    """How the magic link reaches the consumer (server/delivery; docs/delivery.md)."""

    status: Literal["disabled", "queued", "sent", "failed"]
    attempts: int
    sentAt: Nullable
    lastError: Nullable
    channel: Literal["email", "sms", "wsp"] | Unset = UNSET
    #: Masked: `j***@example.com`, `+54*******4455`.
    destination: str | Unset = UNSET


class ResendBody(RequestBody):
    """`POST /v1/inspection/:id/delivery`: send the link again, optionally over another
    channel or to another destination (both default to the last delivery's)."""

    field_codes = {
        "channel": "invalid_delivery_channel",
        "destination": "invalid_delivery_destination",
        "countryISO": "invalid_delivery_destination",
    }

    channel: Literal["email", "sms", "wsp"] | Unset = UNSET
    destination: Annotated[str, msgspec.Meta(min_length=1, max_length=320)] | Unset = UNSET
    countryISO: Annotated[str, msgspec.Meta(pattern="^[A-Za-z]{2}$")] | Unset = UNSET


class QueuedDelivery(ResponseBody):
    message: str
    #: The new magic link: a resend replaces the access code (the previous link stops working).
    magicLink: str
    delivery: DeliveryView
