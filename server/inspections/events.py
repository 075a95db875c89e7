"""Inspection events for subscribed webhook endpoints, enqueued in the caller's transaction.

`publish(session, company_id=, testing=, event=, payload=)` is called by the inspection
services right where the change happens, so an event is delivered exactly when its change
committed. The body is `{"event", "payload"}` where payload is the inspection: `_id, type,
status, producer, metadata`, plus `veredict, products, template` on `inspection_completed`.
A payload that is only a reference (`{"inspectionId": ...}`) is completed from the inspection
row in the same session; other keys of the payload (e.g. `previousStatus`) are kept. An
inspection created with a `callbackURL` also gets every one of its events delivered there.

The dependencies go one way: the inspection services import this module, this module imports
the inspection tables, the template cache and `server.webhooks` (which knows nothing of
inspections), so no import cycle runs through the events.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from sqlmodel import Session

import runtime
from inspectlang.timestamps import utc_timestamp
from runtime import InspectionState
from server.errors import ServerError
from server.inspections.tables import InspectionRecord
from server.templates import service as templates
from server.webhooks.service import EVENTS, active_subscriptions, enqueue_delivery
from server.webhooks.tables import WebhookSubscriptionRecord

logger = logging.getLogger("server.inspections.events")

#: Inspection fields every event carries.
BASE_FIELDS: tuple[str, ...] = ("_id", "type", "status", "producer", "metadata")
#: Extra inspection fields of `inspection_completed`.
COMPLETION_FIELDS: tuple[str, ...] = ("veredict", "completedBy", "products", "template")
#: Keys of a reference payload that the inspection document replaces.
REFERENCE_KEYS: frozenset[str] = frozenset(
    {"inspectionId", "type", "status", "veredict", "callbackURL"}
)


class UnknownEventError(ServerError, ValueError):
    """`publish` was called with an event name that is not in `EVENTS`."""


#: Extra inspection fields of the review's events (docs/review.md).
REVIEW_FIELDS: dict[str, tuple[str, ...]] = {
    "inspection_review_required": ("review",),
    "inspection_reviewed": ("veredict", "completedBy", "review"),
    "retake_requested": ("review",),
}


def event_payload(event: str, inspection: dict[str, Any]) -> dict[str, Any]:
    """The part of the inspection an event carries."""
    fields = BASE_FIELDS + (COMPLETION_FIELDS if event == "inspection_completed" else ())
    fields += REVIEW_FIELDS.get(event, ())
    return {name: inspection.get(name) for name in fields}


def _inspection_document(session: Session, inspection_id: str) -> dict[str, Any] | None:
    """The spec's Inspection object of a row in this session (pending changes included): the
    document rendered at its last change, or rendered from its state for a row stored without
    one."""
    record = session.get(InspectionRecord, inspection_id)
    if record is None:
        return None
    if record.document is not None:
        return dict(record.document)
    manifest = templates.load_manifest(session, record.manifest_key)
    program = templates.program_for(record.manifest_key, manifest)
    state = InspectionState.model_validate(record.state)
    return dict(runtime.to_api(program, state))


def _inspection_callback(session: Session, payload: dict[str, Any]) -> str | None:
    """The `callbackURL` the inspection was created with, if any (it gets all its events)."""
    inspection_id = payload.get("inspectionId") or payload.get("_id")
    if not isinstance(inspection_id, str):
        return None
    record = session.get(InspectionRecord, inspection_id)  # in the session already: no query
    callback = getattr(record, "callback_url", None) if record is not None else None
    return callback if isinstance(callback, str) and callback else None


def publish(
    session: Session,
    *,
    company_id: str,
    testing: bool,
    event: str,
    payload: dict[str, Any],
    inspection: dict[str, Any] | None = None,
    callback_url: str | None = None,
    subscriptions: list[WebhookSubscriptionRecord] | None = None,
) -> int:
    """Queue one delivery per active subscription to `event`, and one to the inspection's own
    `callbackURL` when it was created with one; returns how many were queued.

    A caller that has the Inspection object at hand (creation) passes it as `inspection`, with
    the inspection's `callback_url`: nothing is then read back from the session. A caller
    publishing many events in one transaction may pass the `active_subscriptions` it read."""
    if event not in EVENTS:
        raise UnknownEventError(f"unknown event {event!r}; known: {', '.join(EVENTS)}")
    if subscriptions is None:
        subscriptions = active_subscriptions(session, company_id, testing, event)
    callback = callback_url if inspection is not None else _inspection_callback(session, payload)
    if not subscriptions and callback is None:
        return 0
    if inspection is None and "_id" not in payload and isinstance(payload.get("inspectionId"), str):
        inspection = _inspection_document(session, payload["inspectionId"])
    document = payload
    if inspection is not None:
        extras = {k: v for k, v in payload.items() if k not in REFERENCE_KEYS}
        document = {**inspection, **extras}
    body = {
        "event": event,
        "createdAt": utc_timestamp(datetime.now(UTC)),
        "payload": {
            **event_payload(event, document),
            **{
                k: v
                for k, v in document.items()
                if k in ("previousStatus", "imageId", "productId", "delivery")
            },
        },
    }
    for subscription in subscriptions:
        enqueue_delivery(
            session,
            company_id=company_id,
            event=event,
            url=subscription.endpoint,
            body=body,
            subscription_id=subscription.id,
        )
    if callback is not None:
        enqueue_delivery(session, company_id=company_id, event=event, url=callback, body=body)
    return len(subscriptions) + (callback is not None)
