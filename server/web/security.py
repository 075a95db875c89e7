"""The security headers of every page, and CSRF protection for their forms.

- Content-Security-Policy: same-origin scripts, styles, images (plus `blob:`/`data:` images for
  photo previews made in the page) and requests; no inline script or style, no framing, no
  plugins, forms post only here. Pages therefore load only `.js`/`.css` files served by the app.
- Referrer-Policy `no-referrer`: the consumer's link carries a secret code, and no page of ours
  should leak its URL to anyone.
- Litestar's CSRF middleware on every page router (`page_router`), and only there: the API
  (`/v1/...`) is keyed by `x-api-key`, never by a cookie, so it has nothing to forge. Forms carry
  `{{ csrf_input | safe }}`; scripts send the page's `<meta name="csrf-token">` as `x-csrftoken`.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from litestar import Router
from litestar.config.csrf import CSRFConfig
from litestar.datastructures import ResponseHeader
from litestar.middleware import DefineMiddleware
from litestar.middleware.csrf import CSRFMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from server.deps import PUBLIC_OPT
from server.settings import Settings

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' blob: data:",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
        "manifest-src 'self'",
    ]
)

#: Headers on every page response.
PAGE_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Permissions-Policy": "camera=(self), geolocation=(self), microphone=(), payment=()",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
}

CSRF_COOKIE = "inspectlang_csrf"
CSRF_HEADER = "x-csrftoken"
#: Route option to exempt one handler (e.g. an API-keyed route outside `/v1`).
EXCLUDE_FROM_CSRF_OPT = "exclude_from_csrf"


def csrf_config(settings: Settings) -> CSRFConfig:
    """Litestar's CSRF protection with a secret derived from the server secret."""
    secret = hmac.new(settings.secret.encode(), b"csrf", hashlib.sha256).hexdigest()
    return CSRFConfig(
        secret=secret,
        cookie_name=CSRF_COOKIE,
        header_name=CSRF_HEADER,
        cookie_secure=settings.public_url.startswith("https://"),
        cookie_httponly=True,
        cookie_samesite="lax",
        exclude_from_csrf_key=EXCLUDE_FROM_CSRF_OPT,
    )


class PageCSRFMiddleware:
    """Litestar's `CSRFMiddleware` with the app's `CSRFConfig` (`app.state.csrf_config`, set
    by `create_app` from the settings), for page routers only."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.inner: CSRFMiddleware | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.inner is None:
            config: CSRFConfig = scope["litestar_app"].state.csrf_config
            self.inner = CSRFMiddleware(self.app, config)
        await self.inner(scope, receive, send)


def page_router(path: str, route_handlers: list[Any], **options: Any) -> Router:
    """A router of pages: no API key (pages use browser sessions), CSRF protection, the page
    headers on every response, left out of the OpenAPI document."""
    middleware = [DefineMiddleware(PageCSRFMiddleware), *options.pop("middleware", [])]
    return Router(
        path=path,
        route_handlers=route_handlers,
        opt={PUBLIC_OPT: True, **options.pop("opt", {})},
        response_headers=[ResponseHeader(name=k, value=v) for k, v in PAGE_HEADERS.items()],
        include_in_schema=False,
        middleware=middleware,
        **options,
    )
