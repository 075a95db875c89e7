"""The security headers of every page, and CSRF protection for their forms.

- Content-Security-Policy: same-origin scripts, styles, images (plus `blob:`/`data:` images for
  photo previews made in the page) and requests; no inline script or style, no framing, no
  plugins, forms post only here. Pages therefore load only `.js`/`.css` files served by the app.
- Referrer-Policy `no-referrer`: the consumer's link carries a secret code, and no page of ours
  should leak its URL to anyone.
- CSRF protection (`PageCSRFMiddleware`) on every page router (`page_router`), and only there:
  the API (`/v1/...`) is keyed by `x-api-key`, never by a cookie, so it has nothing to forge.
  Forms carry `{{ csrf_input | safe }}`; scripts send the page's `<meta name="csrf-token">` as
  `x-csrftoken`. The token is bound to the session (issue 21 §4): a router of signed-in pages
  names its session kind, and a request with a live session of that kind must carry the token
  stored with that session (a synchronizer token, `server.web.sessions.csrf_token_of`), so a
  cookie and token pair planted by someone else (a sibling subdomain can set cookies) is worth
  nothing against the victim's session. Only a request without a session (signing in, asking
  for a reset link) uses a pre-session token: an HMAC of a random `HttpOnly` cookie. Every
  unsafe request whose `Origin` names another site, or whose `Sec-Fetch-Site` says
  `cross-site`, is refused as well.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import Any
from urllib.parse import urlsplit

from litestar import Request, Router
from litestar.config.csrf import CSRFConfig
from litestar.datastructures import Cookie, MutableScopeHeaders, ResponseHeader
from litestar.enums import RequestEncodingType, ScopeType
from litestar.exceptions import PermissionDeniedException
from litestar.middleware import DefineMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from litestar.utils.scope.state import ScopeState

from server.common import in_thread
from server.deps import PUBLIC_OPT, services
from server.errors import EXCEPTION_HANDLERS, api_error_for, infrastructure_fault
from server.settings import Settings
from server.web.i18n import negotiate
from server.web.sessions import (
    COOKIE_NAMES,
    cookie_is_secure,
    csrf_token_of,
    load_session,
    session_token,
)
from server.web.templating import gettext, page

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


def policy_sending_forms_to(target: str) -> str:
    """The page policy with `target`'s origin added to `form-action`: a page whose form is
    answered with a redirect to another site (a partner application's consent page: its answer
    sends the browser back to the application), since browsers check each redirect of a form
    submission against `form-action`. Only a plain `scheme://host[:port]` origin is added."""
    parts = urlsplit(target)
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.scheme not in ("http", "https") or not re.fullmatch(
        r"[A-Za-z0-9.\-]+(:\d+)?", parts.netloc
    ):
        return CONTENT_SECURITY_POLICY
    return CONTENT_SECURITY_POLICY.replace("form-action 'self'", f"form-action 'self' {origin}")


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


#: The pre-session token's HMAC domain (no other token of the service is made with it).
_PRESESSION = b"csrf-presession:"


class PageCSRFMiddleware:
    """CSRF protection of a page router (see the module's docstring). `session_kind` is the
    kind of browser session its pages run under (`member`, `consumer`), or None for pages that
    have none. The secret and cookie options are `app.state.csrf_config` (`csrf_config`)."""

    def __init__(self, app: ASGIApp, session_kind: str | None = None) -> None:
        self.app = app
        self.session_kind = session_kind

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope["route_handler"].opt.get(EXCLUDE_FROM_CSRF_OPT):
            await self.app(scope, receive, send)
            return
        litestar_app = scope["litestar_app"]
        config: CSRFConfig = litestar_app.state.csrf_config
        request: Request[Any, Any, Any] = litestar_app.request_class(scope=scope, receive=receive)
        state = ScopeState.from_scope(scope)
        bound = await self._session_token(request)
        cookie = request.cookies.get(config.cookie_name)
        new_cookie: str | None = None
        if bound is not None:
            expected = bound
        else:
            if not cookie or len(cookie) > 128:
                cookie = new_cookie = secrets.token_urlsafe(32)
            expected = _presession_token(config.secret, cookie)
        if request.method in config.safe_methods:
            state.csrf_token = expected
            if new_cookie is not None:
                send = _setting_cookie(send, config, new_cookie, cookie_is_secure(request))
            await self.app(scope, receive, send)
            return
        if _cross_site(request):
            raise PermissionDeniedException("Cross-site form posts are refused")
        given = request.headers.get(config.header_name)
        content_type, _ = request.content_type
        if not given and content_type in (
            RequestEncodingType.URL_ENCODED,
            RequestEncodingType.MULTI_PART,
        ):
            given = (await request.form()).get("_csrf_token")
        if not isinstance(given, str) or not hmac.compare_digest(given, expected):
            raise PermissionDeniedException("CSRF token verification failed")
        state.csrf_token = expected
        await self.app(scope, receive, send)

    async def _session_token(self, request: Request[Any, Any, Any]) -> str | None:
        """The token stored with the request's live session: of this router's kind, or, for a
        router that names none, of any kind whose cookie the request carries (the member
        cookie is sent under `/dashboard`, the consumer's under `/i/<id>`), so pages that
        other areas mount under those paths are bound to the session too."""
        kinds = [self.session_kind] if self.session_kind else list(COOKIE_NAMES)
        app = services(request)
        for kind in kinds:
            token = session_token(request, kind)
            if not token:
                continue
            row = await in_thread(load_session, app.db, token, kind, app.clock())
            if row is not None:
                return csrf_token_of(row)
        return None


def _presession_token(secret: str, cookie: str) -> str:
    return hmac.new(secret.encode(), _PRESESSION + cookie.encode(), hashlib.sha256).hexdigest()


def _cross_site(request: Request[Any, Any, Any]) -> bool:
    """Whether the browser says the request comes from another site."""
    if request.headers.get("sec-fetch-site") == "cross-site":
        return True
    origin = request.headers.get("origin")
    if not origin or origin == "null":
        return False  # `null`: what browsers send under `Referrer-Policy: no-referrer`
    own = {
        f"{request.url.scheme}://{request.url.netloc}",
        services(request).settings.public_url.rstrip("/"),
    }
    return origin.rstrip("/") not in own


def _setting_cookie(send: Send, config: CSRFConfig, value: str, secure: bool) -> Send:
    """`send` that adds the pre-session cookie to the response."""
    cookie = Cookie(
        key=config.cookie_name,
        value=value,
        path="/",
        httponly=True,
        samesite="lax",
        secure=secure,
    )

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableScopeHeaders.from_message(message)
            headers.add("set-cookie", cookie.to_header(header=""))
        await send(message)

    return wrapped


def unavailable_page(request: Request[Any, Any, Any], exc: Exception) -> Any:
    """A page's failure: the storage or a service unavailable is a 503 page (with
    `Retry-After`) in the browser's language for a navigation (`Accept: text/html`), where the
    API's 503s are JSON; anything else, and the pages' scripts' requests, are answered as by
    the app (`server.errors`)."""
    navigation = "text/html" in request.headers.get("accept", "")
    if infrastructure_fault(exc) is None or not navigation:  # the pages' scripts read JSON
        return EXCEPTION_HANDLERS[Exception](request, exc)
    error = api_error_for(exc)  # logs it as such
    locale = negotiate(request.headers.get("accept-language"))
    return page(
        "web/message.html",
        locale=locale,
        status_code=error.status,
        headers=error.headers,
        context={
            "heading": gettext(locale, "This service is briefly unavailable"),
            "text": gettext(locale, "Try again in a minute. What you saved before is kept."),
            "tone": "bad",
        },
    )


def page_router(
    path: str, route_handlers: list[Any], *, session_kind: str | None = None, **options: Any
) -> Router:
    """A router of pages: no API key (pages use browser sessions), CSRF protection bound to
    the `session_kind` session when there is one, the page headers on every response, a 503
    page when the storage or a service is unavailable, left out of the OpenAPI document."""
    middleware = [
        DefineMiddleware(PageCSRFMiddleware, session_kind=session_kind),
        *options.pop("middleware", []),
    ]
    options["exception_handlers"] = {
        Exception: unavailable_page,
        **options.pop("exception_handlers", {}),
    }
    return Router(
        path=path,
        route_handlers=route_handlers,
        opt={PUBLIC_OPT: True, **options.pop("opt", {})},
        response_headers=[ResponseHeader(name=k, value=v) for k, v in PAGE_HEADERS.items()],
        include_in_schema=False,
        middleware=middleware,
        **options,
    )
