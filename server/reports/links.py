"""Signed, expiring links to a report's PDF: `/v1/report/file/{id}?expires=..&signature=..`.

The signature is the service's one signing scheme (`server.tokens.sign`: base64url
HMAC-SHA256 with the server secret) over the report request id and the expiry (seconds since
the epoch). Anyone holding the link can fetch the PDF until it expires, so the link is made
fresh (15 minutes) on every read of the report request, and the check is constant-time.
"""

from __future__ import annotations

import time
from urllib.parse import urlencode

from server import tokens
from server.errors import ServerError

#: How long a `result.url` stays valid (the spec: 15 minutes from receipt of the object).
LINK_TTL_SECONDS = 15 * 60

#: Path prefix of the PDF download route.
FILE_PATH = "/v1/report/file/"


class LinkError(ServerError):
    """A link that must be refused: `code` is `report_link_expired` or `report_link_invalid`."""

    def __init__(self, code: str, description: str) -> None:
        super().__init__(description)
        self.code = code
        self.description = description


def _message(report_request_id: str, expires: int) -> str:
    """What a link signs: `report-link|<id>|<expires>` (the prefix keeps it apart from tokens)."""
    return f"report-link|{report_request_id}|{expires}"


def signature(secret: str, report_request_id: str, expires: int) -> str:
    """The link's signature (`server.tokens.sign` of `_message`)."""
    return tokens.sign(_message(report_request_id, expires), secret=secret)


def sign_link(
    public_url: str,
    secret: str,
    report_request_id: str,
    *,
    now: float | None = None,
    ttl_seconds: int = LINK_TTL_SECONDS,
) -> tuple[str, int]:
    """A fresh download URL for the report and its expiry (epoch seconds)."""
    expires = int(time.time() if now is None else now) + ttl_seconds
    query = urlencode(
        {"expires": expires, "signature": signature(secret, report_request_id, expires)}
    )
    return f"{public_url.rstrip('/')}{FILE_PATH}{report_request_id}?{query}", expires


def verify_link(
    secret: str,
    report_request_id: str,
    expires: object,
    given_signature: object,
    *,
    now: float | None = None,
) -> None:
    """Raise `LinkError` unless the signature matches and the link has not expired.

    The signature is checked first, so an altered expiry is `report_link_invalid`, never
    `report_link_expired`.
    """
    if not isinstance(expires, str | int) or not isinstance(given_signature, str):
        raise LinkError("report_link_invalid", "The report link is missing its signature.")
    try:
        expires_at = int(expires)
    except ValueError:
        raise LinkError("report_link_invalid", "The report link is malformed.") from None
    message = _message(report_request_id, expires_at)
    if not tokens.signature_matches(message, given_signature, secret=secret):
        raise LinkError("report_link_invalid", "The report link signature is not valid.")
    if expires_at < int(time.time() if now is None else now):
        raise LinkError(
            "report_link_expired",
            "The report link has expired; read the report request again for a fresh one.",
        )
