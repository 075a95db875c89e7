"""The server's half of the phone's outbox (docs/consumer.md, "Offline"): a request of the
consumer's script carrying the client's id is run once, and a repeat gets the first answer.

`offline.js` writes each photo, each set of answers and the final send to the phone's
IndexedDB with an id it makes (a UUID), then sends them one at a time with that id as
`Idempotency-Key`, again after any failure, until the server answers. A retry after a lost
answer (the photo arrived, the network dropped before the 201 came back) must not store a
second image, record a second attempt of the slot, or finish twice. The API's idempotency
(`server.idempotency`: claim before running, one winner among concurrent duplicates, the first
answer replayed with `Idempotent-Replayed: true`, the image's answer stored in the very
transaction that adds it) does exactly that; this middleware puts a consumer's request under
it. The key is the inspection's (`consumer/<inspectionId>/<clientId>`, in the company's
records), so a client id means nothing outside its inspection.

Only JSON requests (`Accept: application/json`) take part: their answers (status and body) are
what a replay gives back, where a page's 303 redirect would lose its `Location`.
"""

from __future__ import annotations

import re
from typing import Any

from litestar import Request, Response
from litestar.enums import ScopeType
from litestar.response import Redirect
from litestar.types import ASGIApp, Receive, Scope, Send

from server.common import in_thread
from server.deps import services
from server.errors import ApiError
from server.idempotency import HEADER, IdempotencyMiddleware
from server.inspections import access
from server.web import sessions

#: A client's id: what `crypto.randomUUID()` makes, or any id of these characters.
CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{8,100}")
KIND = "consumer"


def wants_json(request: Request[Any, Any, Any]) -> bool:
    """The request comes from the page's script (the outbox), which reads JSON answers."""
    return "application/json" in request.headers.get("accept", "")


def outbox_key(inspection_id: str, client_id: str) -> str:
    return f"consumer/{inspection_id}/{client_id}"


class ClientIdMiddleware:
    """Runs a consumer's JSON request with an `Idempotency-Key` (its client id) once, under
    the API's idempotency; any other request passes through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.idempotent = IdempotencyMiddleware(app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = next((value for name, value in scope.get("headers", []) if name == HEADER), None)
        inspection_id = (scope.get("path_params") or {}).get("inspection_id")
        if scope["type"] != ScopeType.HTTP or raw is None or not isinstance(inspection_id, str):
            await self.app(scope, receive, send)
            return
        request: Request[Any, Any, Any] = scope["litestar_app"].request_class(scope, receive)
        if request.method != "POST" or not wants_json(request):
            await self.app(scope, receive, send)
            return
        client_id = raw.decode("latin-1")
        if not CLIENT_ID.fullmatch(client_id):
            raise ApiError.of(
                "invalid_idempotency_key",
                "Idempotency-Key must be 8 to 100 letters, digits, '-' or '_'.",
            )
        shared = services(request)
        row = await in_thread(
            sessions.load_session,
            shared.db,
            sessions.session_token(request, KIND),
            KIND,
            shared.clock(),
        )
        if row is None or row.subject_id != inspection_id:
            await self.app(scope, receive, send)  # no session: the handler answers 404
            return
        scope["auth"] = access.consumer_auth(
            row.company_id, bool(row.data.get("testing", False)), inspection_id
        )
        key = outbox_key(inspection_id, client_id).encode("latin-1")
        scope["headers"] = [
            (name, key if name == HEADER else value) for name, value in scope["headers"]
        ]
        await self.idempotent(scope, receive, send)


def go_to(url: str, request: Request[Any, Any, Any]) -> Response[Any]:
    """Where the consumer goes next: a 303 for a form the browser posted, `{"next": url}` for
    the outbox (whose answer must survive a replay, which keeps no `Location`)."""
    if wants_json(request):
        return Response({"next": url}, status_code=200, media_type="application/json")
    return Redirect(url, status_code=303)


def refusal(
    code: str, message: str, *, status: int, errors: dict[str, str] | None = None
) -> Response[Any]:
    """A refusal the outbox shows beside the item (`message` in the page's language) and does
    not retry: the same request would be refused again."""
    body: dict[str, Any] = {"code": code, "message": message}
    if errors:
        body["errors"] = errors
    return Response(body, status_code=status, media_type="application/json")
