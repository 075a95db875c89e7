"""What handlers use from the app (`services`, `auth_of`), and the authentication middleware.

Handlers take the `request` and read `services(request)` (database, settings, blob store, clock)
and `auth_of(request)`, rather than declaring them as Litestar dependencies: Litestar resolves
two or more dependencies of a handler in an anyio task group, one task each, and that alone cost
a quarter of the throughput of `GET /v1/inspection/:id` (1,232 against 1,689 req/s measured with
wrk). Authentication runs as middleware before the handler: `x-api-key` by
default; on a route with `opt={"image_token": True}` an `x-image-token` header (a token of kind
`"image"` from `server.tokens`) is accepted instead, and then `auth.scope` is
`"image:<productId>"`, which the handler must check. On a route with
`opt={"oauth_scope": SCOPE}` a partner application's access token (`Authorization: Bearer`,
`server.oauth`) is accepted instead, and wins over an `x-api-key` sent beside it (the client
libraries always send their key); the token must carry SCOPE ("" asks for none) or the answer is
403 `insufficient_scope`, and `auth.delegation` names the member it acts for. With
`"oauth_only": True` the route takes only a token. Routes with `opt={"public": True}` (and the
OpenAPI pages) skip authentication; `auth_of` there is a 401.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

import anyio.to_thread
from litestar.connection import ASGIConnection
from litestar.middleware.authentication import (
    AbstractAuthenticationMiddleware,
    AuthenticationResult,
)
from litestar.types import ASGIApp

from server import tokens
from server.auth import AuthContext, authenticate_key, parse_api_key, verify_api_key
from server.blobs import BlobStore
from server.db import Database
from server.errors import ApiError
from server.jobs import Registry
from server.key_lookup import AsyncKeyLookup
from server.routing import Analyzers
from server.settings import Settings

Clock = Callable[[], datetime]

#: Route option that lets a handler be called without any credentials.
PUBLIC_OPT = "public"
#: Route option that lets a handler accept an image upload token instead of an API key.
IMAGE_TOKEN_OPT = "image_token"
#: Route option naming the scope a partner application's access token needs there.
OAUTH_SCOPE_OPT = "oauth_scope"
#: Route option: only an access token is accepted (the member's own lists).
OAUTH_ONLY_OPT = "oauth_only"
#: `app.state` key of the access-token check (`server.oauth.service.authenticate_bearer`, set
#: by `create_app`: the plumbing imports no resource).
BEARER_STATE = "bearer_authenticator"
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
        options = connection.route_handler.opt
        if OAUTH_SCOPE_OPT in options:
            delegated = await _bearer(connection, options[OAUTH_SCOPE_OPT])
            if delegated is not None:
                return AuthenticationResult(user=delegated.company_id, auth=delegated)
            if options.get(OAUTH_ONLY_OPT):
                raise bearer_error(
                    "unauthorized",
                    "This endpoint needs a partner application's access token "
                    "(Authorization: Bearer).",
                    "invalid_request",
                )
        api_key = connection.headers.get("x-api-key")
        image_token = connection.headers.get("x-image-token")
        if api_key is None and image_token is not None:
            if not connection.route_handler.opt.get(IMAGE_TOKEN_OPT):
                raise ApiError.of("unauthorized", "This endpoint needs an x-api-key header.")
            claims = tokens.verify(
                "image", image_token, secret=state.settings.secret, now=state.clock()
            )
            context = AuthContext(
                company_id=claims.company_id,
                mode=claims.mode,
                key_id="image-token",
                scope=f"image:{claims.subject}",
            )
            return AuthenticationResult(user=context.company_id, auth=context)
        database: Database = state.db
        lookup: AsyncKeyLookup | None = state.get("key_lookup")
        if database.dialect == "sqlite":
            # A local file read: cheaper inline than a hop to a worker thread.
            context = authenticate_key(database, api_key)
        elif lookup is not None:  # PostgreSQL, on this event loop: no thread, no pool ping
            mode, key_id = parse_api_key(api_key)
            context = verify_api_key(cast(str, api_key), mode, key_id, await lookup.row(key_id))
        else:  # PostgreSQL before start-up opened the async lookup
            context = await anyio.to_thread.run_sync(authenticate_key, database, api_key)
        return AuthenticationResult(user=context.company_id, auth=context)


def bearer_error(code: str, description: str, error: str, scope: str = "") -> ApiError:
    """An `ApiError` with RFC 6750's `WWW-Authenticate` challenge."""
    failure = ApiError.of(code, description)
    extra = f', scope="{scope}"' if scope else ""
    failure.headers = {"WWW-Authenticate": f'Bearer error="{error}"{extra}'}
    return failure


async def _bearer(connection: ASGIConnection[Any, Any, Any, Any], scope: str) -> AuthContext | None:
    """The context of the request's access token, None when it sends none."""
    header = connection.headers.get("authorization") or ""
    kind, _, token = header.strip().partition(" ")
    if kind.lower() != "bearer":
        return None
    return await delegated(connection, token, scope)


async def delegated(
    connection: ASGIConnection[Any, Any, Any, Any], token: str, scope: str
) -> AuthContext:
    """The context of a partner application's access token that may use `scope` (401
    `invalid_token` / `token_expired`, 403 `insufficient_scope`). The client libraries send it
    in the `Authorization` header, and in a creation body as `access_token` (the handler then
    calls this)."""
    state = connection.app.state
    check: Callable[[Database, str, datetime], AuthContext] | None = state.get(BEARER_STATE)
    if check is None:
        raise bearer_error("unauthorized", "Access tokens are not accepted here.", "invalid_token")
    database: Database = state.db
    if database.dialect == "sqlite":
        context = check(database, token.strip(), state.clock())
    else:
        context = await anyio.to_thread.run_sync(check, database, token.strip(), state.clock())
    delegation = context.delegation
    if delegation is None or (scope and scope not in delegation.scopes):
        raise bearer_error(
            "insufficient_scope",
            f"This access token may not use {scope}: its member did not grant it, or their "
            "role does not allow it.",
            "insufficient_scope",
            scope,
        )
    return context


@dataclass(frozen=True, slots=True)
class Services:
    """The app's shared objects a handler uses, built once by `create_app`: everything an app
    holds that another app in the same process must not see (its secret is `settings.secret`)."""

    db: Database
    settings: Settings
    blobs: BlobStore
    clock: Clock
    #: The photo analyzers this app runs (`server.routing.local_analyzers`).
    analyzers: Analyzers
    #: The job kinds and chores its worker runs (`server.app.job_kinds`).
    jobs: Registry


def services(connection: ASGIConnection[Any, Any, Any, Any]) -> Services:
    """The app's `Services` (kept in `app.state.services`)."""
    found: Services = connection.app.state.services
    return found


def auth_of(connection: ASGIConnection[Any, Any, Any, Any]) -> AuthContext:
    """The caller's `AuthContext`, set by `AuthMiddleware`; 401 on a route that skipped it."""
    context = connection.scope.get("auth")
    if not isinstance(context, AuthContext):
        raise ApiError.of("unauthorized")
    return context
