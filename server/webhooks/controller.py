"""Webhook subscription routes: subscribe an endpoint to inspection events, list, delete."""

from __future__ import annotations

from typing import Any

from litestar import Request, delete, get, post
from litestar.params import FromPath

from server.bodies import decode_body
from server.common import in_thread
from server.deps import auth_of, services
from server.multipart import JSON_ONLY_BODY_BYTES, read_body
from server.schemas import DERIVED, Message, operation
from server.webhooks import service as webhooks
from server.webhooks.schemas import SubscriptionCreated, SubscriptionList, SubscriptionRequest

TAGS = ["webhooks"]


@post(
    "/v1/notification/webhook",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=201,
    operation_class=operation(
        status=201, response=DERIVED, errors=(409,), body=SubscriptionRequest
    ),
)
async def subscribe(request: Request[Any, Any, Any]) -> SubscriptionCreated:
    """Subscribe an endpoint to inspection events (per key mode: test data goes to test hooks)."""
    app = services(request)
    auth = auth_of(request)
    body = decode_body(await read_body(request), SubscriptionRequest)
    return await in_thread(
        webhooks.create_subscription, app.db, app.settings, auth.company_id, auth.testing, body
    )


@get(
    "/v1/notification/webhook",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(status=200, response=DERIVED, errors=()),
)
def list_subscriptions(request: Request[Any, Any, Any]) -> SubscriptionList:
    """The company's subscriptions for the calling key's mode."""
    db = services(request).db
    auth = auth_of(request)
    return webhooks.list_subscriptions(db, auth.company_id, auth.testing)


@delete(
    "/v1/notification/webhook/{webhook_id:str}",
    tags=TAGS,
    sync_to_thread=True,
    status_code=200,
    operation_class=operation(status=200, response=DERIVED, errors=(404,)),
)
def unsubscribe(request: Request[Any, Any, Any], webhook_id: FromPath[str]) -> Message:
    """Delete a subscription: no more deliveries are queued for it."""
    db = services(request).db
    auth = auth_of(request)
    webhooks.delete_subscription(db, auth.company_id, auth.testing, webhook_id)
    return Message(message="Webhook deleted")


ROUTES: list[Any] = [subscribe, list_subscriptions, unsubscribe]
