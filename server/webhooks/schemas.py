"""The webhook routes' bodies: a subscription request in, subscriptions out."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

import msgspec

from server.bodies import RequestBody, ResponseBody

#: Events a subscription may ask for (`server.webhooks.service.EVENTS` is this list).
WebhookEvent = Literal[
    "inspection_created",
    "inspection_started",
    "image_processed",
    "inspection_blocked",
    "inspection_completed",
    "inspection_review_required",
    "inspection_reviewed",
    "retake_requested",
    "delivery_sent",
    "delivery_failed",
]
EVENT_NAMES: tuple[str, ...] = get_args(WebhookEvent)

ObjectId = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{24}$")]
Timestamp = Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]
Events = Annotated[list[WebhookEvent], msgspec.Meta(min_length=1)]


class SubscriptionRequest(RequestBody):
    """`POST /v1/notification/webhook`."""

    field_codes = {"events": "invalid_events", "endpoint": "invalid_callback_url"}
    field_messages = {
        "events": f"`events` must be a non-empty list of event names: one or more of "
        f"{', '.join(EVENT_NAMES)}.",
        "endpoint": "`endpoint` must be an http(s) URL.",
    }

    events: Events
    endpoint: Annotated[str, msgspec.Meta(extra_json_schema={"format": "uri"})]


class SubscriptionCreated(ResponseBody):
    id: ObjectId = msgspec.field(name="_id")
    secret: Annotated[
        str | msgspec.UnsetType,
        msgspec.Meta(
            description="The company's signing secret, shown only when it was just created."
        ),
    ] = msgspec.UNSET


class Subscription(ResponseBody):
    id: ObjectId = msgspec.field(name="_id")
    endpoint: str
    events: Events
    createdAt: Timestamp
    active: bool


class SubscriptionList(ResponseBody):
    webhooks: list[Subscription]
