"""Presigned links: a read-only URL to one inspection for people without an API key.

`POST /v1/inspection/presign/detail/:inspectionId` signs a token (kind `inspection_detail`,
subject the inspection id) with the server secret; `GET` of the returned `url` answers the
Inspection object with no key. An expired, altered or foreign token is 403 (JSON).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import quote

import msgspec
from litestar import Request, get, post
from litestar.params import FromPath, QueryParameter
from litestar.response import Redirect
from sqlmodel import Session

from inspectlang.timestamps import utc_timestamp
from server import tokens
from server.auth import AuthContext, find_member
from server.bodies import RequestBody, ResponseBody, decode_body
from server.boundary import SafeTextResponse
from server.common import in_thread, through_link
from server.db import Database
from server.deps import PUBLIC_OPT, auth_of, services
from server.errors import ApiError
from server.inspections import service as inspections
from server.inspections.schemas import Inspection
from server.inspections.tables import ShareLinkRecord
from server.multipart import JSON_ONLY_BODY_BYTES, read_body
from server.schemas import DERIVED, operation
from server.settings import Settings
from server.tables import Member

logger = logging.getLogger("server.inspections.presign")

TAGS = ["presigned links"]

#: Token kind of presigned detail links.
DETAIL_TOKEN_KIND = "inspection_detail"
#: Lifetime of a link when `expiresInSeconds` is not given (1 hour), and the longest (7 days).
DEFAULT_EXPIRES_IN_SECONDS = 3600
MAX_EXPIRES_IN_SECONDS = 7 * 24 * 3600


class PresignIdentity(RequestBody):
    """Who the link is for: a member of the company, by its id (`user`, the inspections'
    `producer.userId`) or by its `internalId` (as `producer.internalId` names one)."""

    type: Literal["user", "internalId"]
    id: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]


class PresignBody(RequestBody):
    """`POST /v1/inspection/presign/detail/:id`; the body itself is optional. A whole number
    may be written as `75643.0` (JSON Schema's `integer` is any number without a fractional
    part; docs/api.md), so the field reads both and keeps whole numbers only. `identity`
    (the Node library's) names the member the link is for: it must exist (404
    `not_found_user`) and is signed into the link."""

    field_codes = {"expiresInSeconds": "invalid_expires_in"}
    field_messages = {
        "expiresInSeconds": "expiresInSeconds must be a whole number from 1 to "
        f"{MAX_EXPIRES_IN_SECONDS}."
    }

    expiresInSeconds: Annotated[
        Annotated[int, msgspec.Meta(ge=1, le=MAX_EXPIRES_IN_SECONDS)]
        | Annotated[float, msgspec.Meta(ge=1, le=MAX_EXPIRES_IN_SECONDS)],
        msgspec.Meta(extra_json_schema={"type": "integer"}),
    ] = DEFAULT_EXPIRES_IN_SECONDS
    identity: PresignIdentity | None = None

    def __post_init__(self) -> None:
        if isinstance(self.expiresInSeconds, float):
            if not self.expiresInSeconds.is_integer():
                # The path written as msgspec writes it, so the refusal names the field.
                raise ValueError("Expected a whole number - at `$.expiresInSeconds`")
            self.expiresInSeconds = int(self.expiresInSeconds)


class PresignedIdentity(ResponseBody):
    """The identity the link was signed for, as sent, with the member's id (`userId`)."""

    type: str
    id: str
    userId: str


class Presigned(ResponseBody):
    accessToken: str
    expiresAt: Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]
    url: str
    identity: PresignedIdentity | msgspec.UnsetType = msgspec.UNSET


def _member_id(session: Session, company_id: str, identity: PresignIdentity) -> str:
    """The id of the company's member the identity names; 404 `not_found_user` otherwise."""
    if identity.type == "internalId":
        member = find_member(session, company_id, identity.id)
    else:
        member = session.get(Member, identity.id)
    if member is None or member.company_id != company_id:
        raise ApiError.of(
            "not_found_user", f"No member of the company has {identity.type} {identity.id!r}."
        )
    return member.id


def presign_link(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    expires_in: int,
    now: datetime,
    *,
    identity: PresignIdentity | None = None,
) -> Presigned:
    """A presigned link to the inspection, valid `expires_in` seconds, for the member
    `identity` names when given (the API route and the dashboard's share button)."""
    holder = None
    with db.session() as session:
        inspections.find_inspection(session, auth, inspection_id, lock=False)
        if identity is not None:
            holder = _member_id(session, auth.company_id, identity)
    token, expires_at = tokens.issue(
        DETAIL_TOKEN_KIND,
        inspection_id,
        auth.company_id,
        auth.mode,
        expires_in,
        secret=settings.secret,
        now=now,
        holder=holder,
    )
    return Presigned(
        accessToken=token,
        expiresAt=utc_timestamp(expires_at),
        url=f"{settings.public_url}/v1/inspection/presign/detail/{inspection_id}?token={token}",
        identity=msgspec.UNSET
        if identity is None or holder is None
        else PresignedIdentity(type=identity.type, id=identity.id, userId=holder),
    )


@post(
    "/v1/inspection/presign/detail/{inspection_id:str}",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=200,
    operation_class=operation(status=200, response=DERIVED, errors=(404,), body=PresignBody),
)
async def presign_detail(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
) -> Presigned:
    """A signed, expiring, read-only link to the inspection."""
    app = services(request)
    auth = auth_of(request)
    body = decode_body(await read_body(request), PresignBody, required=False)
    return await in_thread(
        presign_link,
        app.db,
        app.settings,
        auth,
        inspection_id,
        int(body.expiresInSeconds),  # whole: `__post_init__` refused any other
        app.clock(),
        identity=body.identity,
    )


#: The `token` query parameter of a presigned detail or share link (and of its files).
LinkToken = Annotated[
    str,
    QueryParameter(
        name="token",
        description="The link's accessToken.",
        schema_extra={"pattern": tokens.TOKEN_PATTERN},
    ),
]


@get(
    "/v1/inspection/presign/detail/{inspection_id:str}",
    tags=TAGS,
    sync_to_thread=True,
    opt={PUBLIC_OPT: True},
    security=[],
    operation_class=operation(
        write=False, status=200, response=Inspection, errors=(403, 404), public=True
    ),
)
def read_presigned(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
    token: LinkToken = "",
) -> Any:
    """The Inspection object, for the holder of a valid link (no API key); its photos and
    files are served through the same link (`through_link`). A browser (whose `Accept` puts
    `text/html` before JSON) is sent to the readable page of the same link (`/share/<id>?
    token=…`, which checks the token itself and explains a refusal in words); every client that
    asks for JSON, or states no preference, gets the object as before."""
    app = services(request)
    if prefers_html(request.headers.get("accept")):
        page = f"{SHARE_PAGE_PATH}/{quote(inspection_id, safe='')}?token={quote(token, safe='')}"
        return Redirect(page, status_code=303, headers={"vary": "Accept"})
    auth = verify_link(app.db, app.settings.secret, inspection_id, token, app.clock())
    document = inspections.get_inspection(app.db, app.settings, auth, inspection_id)
    through_link(app.settings.public_url, document, inspection_id, token)
    return SafeTextResponse(document, headers={"vary": "Accept"})


#: The readable page of a detail link (`server.inspections.shares.PAGE_PATH`, served by the
#: dashboard's share pages).
SHARE_PAGE_PATH = "/share"


def prefers_html(accept: str | None) -> bool:
    """Whether an `Accept` header asks for HTML before JSON: `text/html` named with a quality
    above zero and at least that of `application/json` (and, at equal quality, listed first).
    No header, `*/*` alone, or JSON first: False (API clients and the SDKs get JSON)."""
    html, json = _html_and_json(accept)
    if html is None or html[0] <= 0:
        return False
    if json is None:
        return True
    return html[0] > json[0] or (html[0] == json[0] and html[1] < json[1])


def prefers_json(accept: str | None) -> bool:
    """Whether an `Accept` header names `application/json` (quality above zero) and does not
    ask for HTML before it: a client of the API. A browser, no header or `*/*`: False (the
    share page answers them with a page)."""
    json = _html_and_json(accept)[1]
    return json is not None and json[0] > 0 and not prefers_html(accept)


def _html_and_json(accept: str | None) -> tuple[tuple[float, int] | None, ...]:
    """The (quality, position) of `text/html` and of `application/json` in an `Accept` header
    (None where not named; the first 50 entries read)."""
    if not accept:
        return None, None
    ranked: dict[str, tuple[float, int]] = {}
    for position, part in enumerate(accept.split(",")[:50]):
        kind, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        ranked.setdefault(kind.strip().lower(), (quality, position))
    return ranked.get("text/html"), ranked.get("application/json")


def verify_link(
    db: Database, secret: str, inspection_id: str, token: str, now: datetime
) -> AuthContext:
    """Whose view a detail token opens (the JSON here, the dashboard's share page): 403
    `link_expired`, `invalid_link` (altered, missing, another inspection's) or `link_revoked`
    (a share link revoked from the dashboard: `server.inspections.shares`)."""
    try:
        claims = tokens.verify(DETAIL_TOKEN_KIND, token, secret=secret, now=now)
    except tokens.TokenError as error:
        code = "link_expired" if error.code == "token_expired" else "invalid_link"
        raise ApiError(code, 403, error.description) from None
    if claims.subject != inspection_id:
        raise ApiError("invalid_link", 403, "The link is for another inspection.")
    with db.session() as session:
        shared = session.get(ShareLinkRecord, tokens.hash_token(token))
    if shared is not None and shared.revoked_at is not None:
        raise ApiError("link_revoked", 403, "This link was revoked by the company that made it.")
    if claims.holder is not None:
        logger.info("presigned link of member %s read inspection %s", claims.holder, inspection_id)
    return AuthContext(company_id=claims.company_id, mode=claims.mode, key_id="presigned-link")


ROUTES: list[Any] = [presign_detail, read_presigned]
