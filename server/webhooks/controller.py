"""Webhook subscription routes: subscribe an endpoint to inspection events, list, delete."""

from __future__ import annotations

from typing import Any

from litestar import Request, delete, get, post
from litestar.params import FromPath

from server.bodies import JsonSchema
from server.common import in_thread
from server.deps import auth_of, services
from server.multipart import json_object, read_body
from server.schemas import OBJECT_ID, STRING, TIMESTAMP, operation
from server.webhooks import service as webhooks

TAGS = ["webhooks"]

_EVENTS: JsonSchema = {
    "type": "array",
    "minItems": 1,
    "items": {"enum": list(webhooks.EVENTS)},
}
SUBSCRIPTION_BODY: JsonSchema = {
    "type": "object",
    "required": ["events", "endpoint"],
    "properties": {"events": _EVENTS, "endpoint": {"type": "string", "format": "uri"}},
}
SUBSCRIPTION_CREATED: JsonSchema = {
    "type": "object",
    "required": ["_id"],
    "properties": {
        "_id": OBJECT_ID,
        "secret": {
            "type": "string",
            "description": "The company's signing secret, shown only when it was just created.",
        },
    },
}
SUBSCRIPTION: JsonSchema = {
    "type": "object",
    "required": ["_id", "endpoint", "events", "createdAt", "active"],
    "properties": {
        "_id": OBJECT_ID,
        "endpoint": STRING,
        "events": _EVENTS,
        "createdAt": TIMESTAMP,
        "active": {"type": "boolean"},
    },
}
SUBSCRIPTION_LIST: JsonSchema = {
    "type": "object",
    "required": ["webhooks"],
    "properties": {"webhooks": {"type": "array", "items": SUBSCRIPTION}},
}


@post(
    "/v1/notification/webhook",
    tags=TAGS,
    status_code=201,
    operation_class=operation(
        status=201, response=SUBSCRIPTION_CREATED, errors=(409,), body=SUBSCRIPTION_BODY
    ),
)
async def subscribe(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """Subscribe an endpoint to inspection events (per key mode: test data goes to test hooks)."""
    app = services(request)
    auth = auth_of(request)
    body = json_object(await read_body(request))
    return await in_thread(
        webhooks.create_subscription, app.db, app.settings, auth.company_id, auth.testing, body
    )


@get(
    "/v1/notification/webhook",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(status=200, response=SUBSCRIPTION_LIST, errors=()),
)
def list_subscriptions(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """The company's subscriptions for the calling key's mode."""
    db = services(request).db
    auth = auth_of(request)
    return webhooks.list_subscriptions(db, auth.company_id, auth.testing)


@delete(
    "/v1/notification/webhook/{webhook_id:str}",
    tags=TAGS,
    sync_to_thread=True,
    status_code=200,
    operation_class=operation(
        status=200, response={"type": "object", "properties": {"message": STRING}}, errors=(404,)
    ),
)
def unsubscribe(request: Request[Any, Any, Any], webhook_id: FromPath[str]) -> dict[str, Any]:
    """Delete a subscription: no more deliveries are queued for it."""
    db = services(request).db
    auth = auth_of(request)
    webhooks.delete_subscription(db, auth.company_id, auth.testing, webhook_id)
    return {"message": "Webhook deleted"}


ROUTES: list[Any] = [subscribe, list_subscriptions, unsubscribe]
