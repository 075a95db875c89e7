"""Every text entering the service is checked here, once, before any handler sees it.

Two characters poison records: an unpaired UTF-16 surrogate (`"\\ud800"` is valid JSON, but no
encoder can write it back out, so every later read of the record failed) and NUL (PostgreSQL
refuses it in text columns). Neither has a use in this API, so both are refused at the door:

- the path and the query string, by `BoundaryMiddleware`, before authentication (a NUL in a
  filter was a 500 on PostgreSQL), as 400 `invalid_body` naming the parameter;
- JSON bodies and multipart text (the `data` part, file names), by `check_text_tree`, called
  from `server.multipart` as a body is parsed, as 400 `invalid_body` naming the field's path.

Token headers and query tokens are checked by `server.tokens` (a non-ASCII token is malformed).

Records written before these checks may still hold a lone surrogate: `SafeTextResponse`, the
app's response class, renders one as U+FFFD instead of failing the whole read with a 500.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote_to_bytes

from litestar import Response
from litestar.enums import ScopeType
from litestar.exceptions import ImproperlyConfiguredException
from litestar.handlers import HTTPRouteHandler
from litestar.serialization import default_serializer
from litestar.types import ASGIApp, Receive, Scope, Send, Serializer

from server.allowed import allow_header
from server.errors import ApiError

#: What no text of this API may hold: NUL and the UTF-16 surrogate range (never valid alone).
_FORBIDDEN = re.compile("[\x00\ud800-\udfff]")
#: A surrogate code point in a Python string is always unpaired (JSON decoding joins pairs).
_SURROGATE = re.compile("[\ud800-\udfff]")
#: What no name may hold besides: control characters (C0 with tab and line breaks, DEL, C1)
#: and Unicode's line and paragraph separators. A name goes into one-line places: an email's
#: Subject header (a CR/LF there made every message of a company unbuildable), a page title,
#: a PDF heading, a file name.
_NOT_IN_NAMES = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def name_problem(text: str) -> str | None:
    """Why `text` cannot be a name (a company's, a member's, a template's, a file's), or None.
    The one rule for names, at every entry point: the admin CLI, the API, the dashboard."""
    why = _why(text)
    if why is not None:
        return why
    match = _NOT_IN_NAMES.search(text)
    if match is None:
        return None
    return f"holds the control character U+{ord(match.group()):04X}"


def _why(text: str) -> str | None:
    match = _FORBIDDEN.search(text)
    if match is None:
        return None
    if match.group() == "\x00":
        return "holds a NUL character"
    return "holds an unpaired UTF-16 surrogate"


def refusal(field: str, why: str) -> ApiError:
    """The 400 `invalid_body` for a text that cannot be stored, naming where it is."""
    return ApiError.of(
        "invalid_body",
        f"{field} {why}, which is not accepted in any text.",
        [{"field": field, "message": why}],
    )


def check_text(field: str, text: str) -> None:
    """Refuse one text (a file name, a header value) holding NUL or a lone surrogate."""
    why = _why(text)
    if why is not None:
        raise refusal(field, why)


def check_name(field: str, text: str) -> None:
    """Refuse a name (`name_problem`) with 400 `invalid_body` naming where it is."""
    why = name_problem(text)
    if why is not None:
        raise refusal(field, why)


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def check_text_tree(value: Any, *, root: str = "") -> None:
    """Refuse a parsed JSON value with a bad text anywhere: in a key or in a string value.

    Iterative, so a deep value cannot exhaust the stack (depth is bounded by the parser too).
    """
    stack: list[tuple[str, Any]] = [(root, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            why = _why(item)
            if why is not None:
                raise refusal(path or "The request body", why)
        elif isinstance(item, dict):
            for key, child in item.items():
                why = _why(key)
                if why is not None:
                    raise refusal(f"A key in {path}" if path else "A key of the body", why)
                stack.append((_join(path, key), child))
        elif isinstance(item, list):
            stack.extend((_join(path, index), child) for index, child in enumerate(item))


def _query_refusal(raw_query: bytes) -> ApiError | None:
    """The refusal for a query string with NUL, a lone surrogate or bytes that are not UTF-8."""
    for pair in raw_query.split(b"&"):
        if not pair:
            continue
        raw_name, _, raw_value = pair.partition(b"=")
        name_bytes = unquote_to_bytes(raw_name.replace(b"+", b" "))
        name = name_bytes.decode("utf-8", "replace")[:60]
        for part in (name_bytes, unquote_to_bytes(raw_value.replace(b"+", b" "))):
            try:
                text = part.decode("utf-8")
            except UnicodeDecodeError:
                return refusal(f"The query parameter {name!r}", "is not UTF-8 text")
            why = _why(text)
            if why is not None:
                return refusal(f"The query parameter {name!r}", why)
    return None


def _announced_too_large(scope: Scope) -> ApiError | None:
    """413 `body_too_large` when the announced `content-length` exceeds the route's own body
    limit: also for routes whose handler never reads a body (start, finish), which Litestar
    would otherwise not check."""
    handler = scope["route_handler"]
    if not isinstance(handler, HTTPRouteHandler):
        return None
    limit = handler.resolve_request_max_body_size()
    if limit is None:
        return None
    raw = next((value for name, value in scope["headers"] if name == b"content-length"), None)
    if raw is None or not raw.isdigit() or int(raw) <= limit:
        return None
    return ApiError.of("body_too_large", f"This endpoint accepts bodies of at most {limit} bytes.")


async def _answer_options(allow: str, send: Send) -> None:
    """204 with the `Allow` of every route sharing the path (`server.allowed`): Litestar's own
    answer named only one route's methods (POST was missing on `/v1/inspection/car`)."""
    await send(
        {
            "type": "http.response.start",
            "status": 204,
            "headers": [(b"allow", allow.encode("ascii"))],
        }
    )
    await send({"type": "http.response.body", "body": b"", "more_body": False})


class BoundaryMiddleware:
    """Refuses, before authentication, requests whose path or query string holds text the
    service cannot store, and bodies announced larger than the route accepts; answers OPTIONS
    with the path's real `Allow`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == ScopeType.HTTP and scope["method"] == "OPTIONS":
            allow = allow_header(scope["litestar_app"], scope["path"]).get("Allow")
            if allow is not None:  # None: a `{name:path}` route, answered by Litestar itself
                await _answer_options(allow, send)
                return
        if scope["type"] == ScopeType.HTTP:
            error = _query_refusal(scope.get("query_string", b""))
            if error is None:
                why = _why(scope.get("path", ""))
                if why is not None:
                    error = refusal("The path", why)
            if error is None:
                error = _announced_too_large(scope)
            if error is not None:
                raise error  # rendered by the app's exception handlers, as any ApiError
        await self.app(scope, receive, send)


def without_surrogates(value: Any) -> Any:
    """`value` with every surrogate in its texts (keys included) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {without_surrogates(key): without_surrogates(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_surrogates(item) for item in value]
    return value


class SafeTextResponse(Response[Any]):
    """The app's response class: content that cannot be encoded because a stored text holds a
    lone surrogate is rendered again with U+FFFD in its place (only then: the usual path pays
    nothing), so an old poisoned record stays readable instead of answering 500."""

    def render(
        self, content: Any, media_type: str, enc_hook: Serializer = default_serializer
    ) -> bytes:
        try:
            return super().render(content, media_type, enc_hook)
        except (ImproperlyConfiguredException, UnicodeEncodeError) as error:
            cause = error if isinstance(error, UnicodeEncodeError) else error.__cause__
            if not isinstance(cause, UnicodeEncodeError):
                raise
        return super().render(without_surrogates(content), media_type, enc_hook)
