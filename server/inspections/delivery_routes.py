"""`POST /v1/inspection/:inspectionId/delivery`: send the magic link again."""

from __future__ import annotations

import html
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath

from server.bodies import decode_body
from server.common import in_thread
from server.delivery.schemas import UNSET, QueuedDelivery, ResendBody
from server.delivery.service import outbox_messages
from server.deps import PUBLIC_OPT, auth_of, services
from server.errors import ApiError
from server.inspections import deliveries
from server.multipart import JSON_ONLY_BODY_BYTES, read_body
from server.schemas import operation

TAGS = ["inspections"]


@post(
    "/v1/inspection/{inspection_id:str}/delivery",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=202,
    operation_id="ResendDelivery",
    summary="Send the magic link again",
    operation_class=operation(
        status=202, response=QueuedDelivery, errors=(404, 409, 429), body=ResendBody
    ),
)
async def resend_delivery(
    request: Request[Any, Any, Any], inspection_id: FromPath[str]
) -> dict[str, Any]:
    """Queue the link again, optionally over another `channel` or to another `destination`,
    while the inspection is created or started. A resend makes a new access code: the previous
    link stops working (consumer sessions already open go on). At most 3 resends an hour per
    inspection: 429 `too_many_deliveries` with `Retry-After`."""
    app = services(request)
    auth = auth_of(request)
    body = decode_body(await read_body(request), ResendBody, required=False)
    return await in_thread(
        deliveries.resend,
        app.db,
        app.settings,
        auth,
        inspection_id,
        None if body.channel is UNSET else body.channel,
        None if body.destination is UNSET else body.destination,
        None if body.countryISO is UNSET else body.countryISO,
        app.clock(),
    )


@get(
    "/dev/outbox",
    opt={PUBLIC_OPT: True},
    include_in_schema=False,
    sync_to_thread=True,
)
def development_outbox(request: Request[Any, Any, Any]) -> Response[str]:
    """The development outbox: messages kept instead of sent (development only; 404 in
    production). `inspectlang outbox` prints the same."""
    app = services(request)
    if app.settings.env != "development":
        raise ApiError.of("not_found")
    rows = []
    for message in outbox_messages(app.db):
        body = html.escape(message.text)
        rows.append(
            f"<article><h2>{html.escape(message.subject)}</h2>"
            f"<p><b>{html.escape(message.channel)}</b> to <b>{html.escape(message.to)}</b>, "
            f"{message.created_at:%Y-%m-%d %H:%M:%S} UTC</p><pre>{body}</pre></article>"
        )
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Outbox (development)</title></head><body><main>"
        "<h1>Outbox</h1><p>Messages the service would have sent (no provider is configured; "
        "docs/delivery.md).</p>"
        + ("".join(rows) or "<p>No messages yet.</p>")
        + "</main></body></html>"
    )
    return Response(
        page,
        media_type="text/html",
        headers={"Content-Security-Policy": "default-src 'none'", "Cache-Control": "no-store"},
    )


ROUTES: list[Any] = [resend_delivery, development_outbox]
