"""Short-lived signed tokens (image uploads, signed links) and the service's hashing helpers.

A token is `<payload>.<signature>`, both base64url without padding; the payload is compact JSON
with the kind, subject, company, mode and expiry. Signing and the constant-time check are
itsdangerous's `Signer` (HMAC-SHA256 over the text, keyed with the server secret as is: the
same signatures this module wrote by hand before, so links issued earlier stay valid); this
module adds the claims, the kind and the expiry. Every call names its secret (`secret=`, the
app's `Settings.secret`): nothing is held by the process, so two apps in one process each sign
and check with their own.

This is the service's one signing scheme: `sign`/`signature_matches` give the same signature to
any other signed text (the report links of `server.reports.links` sign `report-link|id|expiry`,
a text no token payload can be, since base64url has no `|`). `hash_token` is the one way a
secret handed out (API key, access code, session or reset token) is stored: its SHA-256 hex;
`hmac_sha256` the one keyed digest for signatures other parties check.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from itsdangerous import BadSignature, Signer

from server.errors import ApiError

Mode = Literal["test", "live"]

#: Longest token accepted by `verify`, so a huge header cannot make us hash megabytes.
MAX_TOKEN_LENGTH = 2048


class TokenError(ApiError):
    """A token that is malformed, forged, of another kind, or expired (HTTP 401)."""

    def __init__(self, code: Literal["invalid_token", "token_expired"], description: str) -> None:
        super().__init__(code, 401, description)


@dataclass(frozen=True, slots=True)
class TokenClaims:
    kind: str
    subject: str
    company_id: str
    mode: Mode
    expires_at: datetime
    #: Who the token was issued for (a member id), when the issuer named one.
    holder: str | None = None


#: What a token looks like: its claims and its signature, each base64url (stated in the API
#: document; anything else is refused by `verify` as `invalid_token`).
TOKEN_PATTERN = r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$"


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signer(key: bytes) -> Signer:
    return Signer(key, sep=".", key_derivation="none", digest_method=hashlib.sha256)


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """The keyed SHA-256 digest every signature of the service is made of."""
    return hmac.new(key, message, hashlib.sha256).digest()


def hash_token(token: str) -> str:
    """How a secret handed out is stored and looked up: its SHA-256, hex (lone surrogates from a
    hostile request are hashed too instead of raising)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def sign(message: str, *, secret: str) -> str:
    """The scheme's signature of `message`: base64url HMAC-SHA256 with the server secret."""
    return _signer(secret.encode("utf-8")).get_signature(message).decode("ascii")


def signature_matches(message: str, given: str, *, secret: str) -> bool:
    """Whether `given` is the signature of `message`, compared in constant time."""
    if not given.isascii():
        return False
    return _signer(secret.encode("utf-8")).verify_signature(message, given)


def issue(
    kind: str,
    subject: str,
    company_id: str,
    mode: Mode,
    ttl_seconds: int,
    *,
    secret: str,
    now: datetime | None = None,
    holder: str | None = None,
) -> tuple[str, datetime]:
    """A token for `kind` (e.g. "image") about `subject`, valid `ttl_seconds`; and its expiry.
    `holder` records who it is for (a presigned link's member), signed with the rest."""
    issued = now or datetime.now(UTC)
    expires_at = (issued + timedelta(seconds=ttl_seconds)).replace(microsecond=0)
    claims = {
        "k": kind,
        "s": subject,
        "c": company_id,
        "m": mode,
        "e": int(expires_at.timestamp()),
    }
    if holder is not None:
        claims["h"] = holder
    payload = _b64encode(json.dumps(claims, separators=(",", ":")).encode("utf-8"))
    return _signer(secret.encode("utf-8")).sign(payload).decode("ascii"), expires_at


def verify(kind: str, token: str, *, secret: str, now: datetime | None = None) -> TokenClaims:
    """The claims of a valid, unexpired token of `kind`; `TokenError` otherwise."""
    if not token or len(token) > MAX_TOKEN_LENGTH or not token.isascii() or token.count(".") != 1:
        raise TokenError("invalid_token", "The token is malformed.")
    try:
        payload = _signer(secret.encode("utf-8")).unsign(token).decode("ascii")
    except BadSignature:
        raise TokenError("invalid_token", "The token signature is not valid.") from None
    try:
        claims = json.loads(_b64decode(payload))
        token_kind, subject, company_id, mode = (
            str(claims["k"]),
            str(claims["s"]),
            str(claims["c"]),
            claims["m"],
        )
        expires_at = datetime.fromtimestamp(int(claims["e"]), UTC)
        holder = None if claims.get("h") is None else str(claims["h"])
    except (ValueError, KeyError, TypeError):
        raise TokenError("invalid_token", "The token is malformed.") from None
    if token_kind != kind or mode not in ("test", "live"):
        raise TokenError("invalid_token", f"This is not a {kind} token.")
    if (now or datetime.now(UTC)) >= expires_at:
        raise TokenError("token_expired", "The token has expired.")
    return TokenClaims(token_kind, subject, company_id, mode, expires_at, holder)
