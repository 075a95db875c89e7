"""App-wide dependencies every handler can ask for by parameter name, and the auth middleware.

Handlers declare `db: Database`, `auth: AuthContext`, `settings: Settings`, `blobs: BlobStore`
(and `clock: Clock`). Authentication runs as middleware before the handler: `x-api-key` by
default; on a route with `opt={"image_token": True}` an `x-image-token` header (a token of kind
`"image"` from `server.tokens`) is accepted instead, and then `auth.scope` is
`"image:<productId>"`, which the handler must check. Routes with `opt={"public": True}` (and
the OpenAPI pages) skip authentication; asking for `auth` there is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import anyio.to_thread
from litestar.connection import ASGIConnection, Request
from litestar.datastructures import State
from litestar.di import Provide
from litestar.middleware.authentication import (
    AbstractAuthenticationMiddleware,
    AuthenticationResult,
)
from litestar.types import ASGIApp

from server import tokens
from server.auth import AuthContext, authenticate_key
from server.blobs import BlobStore
from server.db import Database
from server.errors import ApiError
from server.settings import Settings

Clock = Callable[[], datetime]

#: Route option that lets a handler be called without any credentials.
PUBLIC_OPT = "public"
#: Route option that lets a handler accept an image upload token instead of an API key.
IMAGE_TOKEN_OPT = "image_token"
#: Paths that never need a key: the OpenAPI document and its UI, the health check.
PUBLIC_PATHS = ["^/schema", "^/health$"]


def system_clock() -> datetime:
    return datetime.now(UTC)


class AuthMiddleware(AbstractAuthenticationMiddleware):
    """Sets `scope["auth"]` to an `AuthContext`, or answers 401 `unauthorized`."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app, exclude=PUBLIC_PATHS, exclude_from_auth_key=PUBLIC_OPT)

    async def authenticate_request(
        self, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> AuthenticationResult:
        state = connection.app.state
        api_key = connection.headers.get("x-api-key")
        image_token = connection.headers.get("x-image-token")
        if api_key is None and image_token is not None:
            if not connection.route_handler.opt.get(IMAGE_TOKEN_OPT):
                raise ApiError.of("unauthorized", "This endpoint needs an x-api-key header.")
            claims = tokens.verify("image", image_token, now=state.clock())
            context = AuthContext(
                company_id=claims.company_id,
                mode=claims.mode,
                key_id="image-token",
                scope=f"image:{claims.subject}",
            )
            return AuthenticationResult(user=context.company_id, auth=context)
        database: Database = state.db
        if database.dialect == "sqlite":
            # A local file read: cheaper inline than a hop to a worker thread.
            context = authenticate_key(database, api_key)
        else:
            context = await anyio.to_thread.run_sync(authenticate_key, database, api_key)
        return AuthenticationResult(user=context.company_id, auth=context)


def provide_db(state: State) -> Database:
    database: Database = state.db
    return database


def provide_settings(state: State) -> Settings:
    settings: Settings = state.settings
    return settings


def provide_blobs(state: State) -> BlobStore:
    blobs: BlobStore = state.blobs
    return blobs


def provide_clock(state: State) -> Clock:
    clock: Clock = state.clock
    return clock


def provide_auth(request: Request[Any, Any, Any]) -> AuthContext:
    context = request.scope.get("auth")
    if not isinstance(context, AuthContext):
        raise ApiError.of("unauthorized")
    return context


#: Handed to `Litestar(dependencies=...)`.
DEPENDENCIES: dict[str, Provide] = {
    "db": Provide(provide_db, sync_to_thread=False),
    "settings": Provide(provide_settings, sync_to_thread=False),
    "blobs": Provide(provide_blobs, sync_to_thread=False),
    "clock": Provide(provide_clock, sync_to_thread=False),
    "auth": Provide(provide_auth, sync_to_thread=False),
}
