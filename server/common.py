"""Helpers every service shares: runtime errors as API errors, signed file links, threads."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import anyio.to_thread

from runtime import InspectionError
from server import tokens
from server.errors import ApiError, from_inspection_error
from server.settings import Settings

T = TypeVar("T")


def retry_after_seconds(
    value: str | None, *, cap: float, now: datetime | None = None
) -> float | None:
    """A `Retry-After` header from a server we call, as seconds to wait: delta-seconds or an
    HTTP date (RFC 9110 10.2.3), at most `cap`, never negative; None when absent or unreadable.
    The one parser for webhooks, link delivery providers and analysis providers."""
    text = (value or "").strip()
    if not text:
        return None
    if text.isdigit():
        return min(float(text), cap)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    waited = (moment - (now or datetime.now(UTC))).total_seconds()
    return min(max(0.0, waited), cap)


def run_runtime(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call a runtime function; its refusals become `ApiError`s with the runtime's code."""
    try:
        return function(*args, **kwargs)
    except InspectionError as error:
        raise from_inspection_error(error) from None


#: Token kind of the signed links in image `src` values.
CONTENT_TOKEN_KIND = "image_content"
#: A stored file's id (24 hex characters).
_FILE_ID = re.compile(r"[0-9a-f]{24}")
#: Lifetime of the token in an image `src` link.
CONTENT_TOKEN_TTL_SECONDS = 60 * 60


def content_url(public_url: str, image_id: str) -> str:
    """Where an image's bytes are served (`GET /v1/inspection/image/:imageId/content`)."""
    return f"{public_url}/v1/inspection/image/{image_id}/content"


def _relink_stored_files(
    public_url: str, document: Any, relink: Callable[[str, str], str | None]
) -> Any:
    """Replace, in place, every link to this server's stored files in a document (image `src`
    values and file input values) by `relink(file_id, link)`, when that is not None."""
    prefix = content_url(public_url, "")[: -len("/content")]
    stack = [document]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in ("src", "value"):
                link = item.get(key)
                if isinstance(link, str) and link.startswith(prefix):
                    file_id = link[len(prefix) :].split("/content", 1)[0]
                    replaced = relink(file_id, link) if _FILE_ID.fullmatch(file_id) else None
                    if replaced is not None:
                        item[key] = replaced
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return document


def sign_sources(settings: Settings, document: Any, company_id: str, testing: bool) -> Any:
    """Add a fresh content token (signed with the app's secret) to every link to this server's
    stored files in a document (image `src` values and file input values), in place; returns
    the document."""
    mode: tokens.Mode = "test" if testing else "live"

    def signed(file_id: str, link: str) -> str | None:
        if not link.endswith("/content"):
            return None
        token, _ = tokens.issue(
            CONTENT_TOKEN_KIND,
            file_id,
            company_id,
            mode,
            CONTENT_TOKEN_TTL_SECONDS,
            secret=settings.secret,
        )
        return f"{link}?token={token}"

    return _relink_stored_files(settings.public_url, document, signed)


def shared_file_url(public_url: str, inspection_id: str, file_id: str, token: str) -> str:
    """Where a stored file of an inspection is served to the holder of its presigned detail
    or share link, with that link's own token
    (`GET /v1/inspection/presign/detail/:inspectionId/file/:fileId?token=`)."""
    return f"{public_url}/v1/inspection/presign/detail/{inspection_id}/file/{file_id}?token={token}"


def through_link(public_url: str, document: Any, inspection_id: str, token: str) -> Any:
    """The document of a presigned detail or share link with every stored file link (each
    signed with its own hour-long content token by `sign_sources`) served through that link's
    `token` instead (`shared_file_url`): a shared photo's URL then dies with its link, revoked
    or expired. In place; returns the document."""
    return _relink_stored_files(
        public_url,
        document,
        lambda file_id, _link: shared_file_url(public_url, inspection_id, file_id, token),
    )


def not_found_inspection() -> ApiError:
    return ApiError.of("inspection_not_found", "No inspection with that id.")


async def in_thread(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run a blocking service call in a worker thread (async handlers read bodies first)."""
    return await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs))
