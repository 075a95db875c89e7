"""Partner-application routes: the token endpoints (the client libraries' JSON ones and the RFC's
form ones), revocation, and what an access token reads about its member (memberships, the
member's inspections, the company's templates). Creating and reading an inspection with a token
are the inspection routes themselves (`oauth_scope` in their `opt`)."""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Annotated, Any, Literal

from litestar import Request, Response, get, post
from litestar.params import QueryParameter

from server.common import in_thread
from server.deps import OAUTH_ONLY_OPT, OAUTH_SCOPE_OPT, PUBLIC_OPT, auth_of, services
from server.errors import ApiError
from server.inspections import listing
from server.inspections.searchtext import terms
from server.multipart import json_object, read_body
from server.oauth import flow, service
from server.oauth.schemas import (
    ExchangeCodeBody,
    MemberInspectionPage,
    Membership,
    RefreshTokenBody,
    TokenAnswer,
)
from server.schemas import operation
from server.templates import service as templates
from server.templates.schemas import Template

TAGS = ["partner applications"]
#: The RFC's token answers must not be cached (RFC 6749 5.1).
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
_FORM_BODY = {
    "type": "object",
    "properties": {
        "grant_type": {"enum": ["authorization_code", "refresh_token"]},
        "code": {"type": "string"},
        "redirect_uri": {"type": "string"},
        "code_verifier": {"type": "string"},
        "refresh_token": {"type": "string"},
        "client_id": {"type": "string"},
        "client_secret": {"type": "string"},
        "scope": {"type": "string"},
    },
}
_REVOKE_BODY = {
    "type": "object",
    "required": ["token"],
    "properties": {
        "token": {"type": "string"},
        "token_type_hint": {"enum": ["access_token", "refresh_token"]},
        "client_id": {"type": "string"},
        "client_secret": {"type": "string"},
    },
}


def _answer(answer: flow.Answer) -> Response[Any]:
    headers = {k: v for k, v in answer.headers.items() if k.lower() != "content-type"}
    return Response(
        content=answer.body if answer.body is not None else {},
        status_code=answer.status,
        headers={**headers, **NO_STORE},
    )


async def _library_token(request: Request[Any, Any, Any], grant_type: str) -> Response[Any]:
    app = services(request)
    form = service.library_form(json_object(await read_body(request)), grant_type)
    answer = await in_thread(
        service.endpoint_answer, "token", app.db, app.settings.public_url, form, {}, app.clock()
    )
    return _answer(answer)


@post(
    "/v1/account/oauth/exchange_code",
    tags=TAGS,
    status_code=200,
    opt={PUBLIC_OPT: True},
    operation_class=operation(
        status=200,
        response=TokenAnswer,
        errors=(401,),
        body=ExchangeCodeBody,
        multipart=False,
        public=True,
    ),
)
async def exchange_code(request: Request[Any, Any, Any]) -> Response[Any]:
    """An authorization code for an access token and a refresh token (the client libraries'
    `exchangeCodeForAccessToken`; the RFC's `POST /v1/account/oauth/token` does the same)."""
    return await _library_token(request, "authorization_code")


@post(
    "/v1/account/oauth/refresh_token",
    tags=TAGS,
    status_code=200,
    opt={PUBLIC_OPT: True},
    operation_class=operation(
        status=200,
        response=TokenAnswer,
        errors=(401,),
        body=RefreshTokenBody,
        multipart=False,
        public=True,
    ),
)
async def refresh_token(request: Request[Any, Any, Any]) -> Response[Any]:
    """A refresh token for a new access token and a new refresh token (the old one is used up:
    presenting it again revokes the authorization)."""
    return await _library_token(request, "refresh_token")


async def _rfc_endpoint(
    request: Request[Any, Any, Any], endpoint: Literal["token", "revocation"]
) -> Response[Any]:
    """An RFC endpoint's answer (`service.endpoint_answer`) to its form and the client's
    credentials."""
    app = services(request)
    answer = await in_thread(
        service.endpoint_answer,
        endpoint,
        app.db,
        app.settings.public_url,
        await _form(request),
        _client_headers(request),
        app.clock(),
    )
    return _answer(answer)


async def _form(request: Request[Any, Any, Any]) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


def _client_headers(request: Request[Any, Any, Any]) -> dict[str, str]:
    given = request.headers.get("authorization")
    return {"Authorization": given} if given else {}


@post(
    "/v1/account/oauth/token",
    tags=TAGS,
    status_code=200,
    opt={PUBLIC_OPT: True},
    operation_class=operation(
        status=200,
        response=TokenAnswer,
        errors=(401,),
        body=_FORM_BODY,
        multipart=False,
        public=True,
    ),
)
async def token(request: Request[Any, Any, Any]) -> Response[Any]:
    """RFC 6749's token endpoint: `application/x-www-form-urlencoded`, the client authenticated
    by HTTP Basic or by `client_id` and `client_secret` in the form."""
    return await _rfc_endpoint(request, "token")


@post(
    "/v1/account/oauth/revoke",
    tags=TAGS,
    status_code=200,
    opt={PUBLIC_OPT: True},
    operation_class=operation(
        status=200, response=None, errors=(401,), body=_REVOKE_BODY, multipart=False, public=True
    ),
)
async def revoke(request: Request[Any, Any, Any]) -> Response[Any]:
    """RFC 7009: revoke a token. A refresh token ends its whole authorization; an unknown token
    is answered 200 as the RFC says."""
    return await _rfc_endpoint(request, "revocation")


@get(
    "/v1/account/membership/authenticated",
    tags=TAGS,
    operation_id="ListMemberships",
    summary="The token's member's memberships",
    sync_to_thread=True,
    opt={OAUTH_SCOPE_OPT: "", OAUTH_ONLY_OPT: True},
    operation_class=operation(write=False, status=200, response=list[Membership], errors=()),
)
def memberships(request: Request[Any, Any, Any]) -> list[dict[str, Any]]:
    """The token's member's memberships."""
    return service.memberships(services(request).db, auth_of(request))


def _moment(raw: str | None, name: str, *, end: bool) -> datetime | None:
    """`from`/`to`: an ISO date (the whole day) or date-time (what `Date` serializes to)."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    try:
        if len(text) == 10:
            day = datetime.fromisoformat(text).date()
            return datetime.combine(day, time.max if end else time.min, UTC)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError(
            "invalid_filter",
            400,
            f"{name} must be an ISO 8601 date or date-time.",
            [{"field": name, "message": f"got {raw[:40]!r}"}],
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _text(description: str) -> Any:
    return QueryParameter(description=description, schema_extra={"maxLength": 200})


def _scoped_operation_id(handler: Any, method: Any, path: list[str | Any]) -> str:
    """One name per path of the one handler: `ListInspectionsMe`, `ListInspectionsAll`."""
    return f"ListInspections{str(path[-1]).capitalize()}"


@get(
    ["/v1/inspection/me", "/v1/inspection/all"],
    tags=TAGS,
    operation_id=_scoped_operation_id,
    summary="List the member's inspections",
    sync_to_thread=True,
    opt={OAUTH_SCOPE_OPT: "inspections:read", OAUTH_ONLY_OPT: True},
    operation_class=operation(
        write=False, status=200, response=MemberInspectionPage, errors=(404,)
    ),
)
def member_inspections(
    request: Request[Any, Any, Any],
    membership_id: Annotated[str | None, QueryParameter(name="membershipId")] = None,
    page: Annotated[str | None, QueryParameter(name="page")] = None,
    limit: Annotated[str | None, QueryParameter(name="limit")] = None,
    status: Annotated[str | None, QueryParameter(name="status")] = None,
    veredict: Annotated[str | None, QueryParameter(name="veredict")] = None,
    inspection_type: Annotated[str | None, QueryParameter(name="type")] = None,
    search: Annotated[str | None, _text("words of the consumer, plate, ids")] = None,
    since: Annotated[str | None, QueryParameter(name="from", description="ISO date")] = None,
    until: Annotated[str | None, QueryParameter(name="to", description="ISO date")] = None,
) -> dict[str, Any]:
    """The inspections the member produced (`me`), or also those of the members they invited
    (`all`), newest filters of the list, in the client libraries' pagination shape."""
    app = services(request)
    auth = auth_of(request)
    scope = request.url.path.rstrip("/").rsplit("/", 1)[-1]
    producers = service.producers_of(app.db, auth, scope, membership_id)
    narrowing = listing.Narrowing(
        producers=tuple(producers),
        since=_moment(since, "from", end=False),
        until=_moment(until, "to", end=True),
        terms=tuple(terms(search or "")[:10]),
    )
    params = {
        "page": page,
        "limit": limit,
        "status": status,
        "veredict": veredict,
        "type": inspection_type,
    }
    found = listing.list_inspections(app.db, app.settings, auth, params, narrowing)
    return {
        "inspections": found["inspections"],
        "pagination": {
            "hasNextPage": found["hasNextPage"],
            "hasPrevPage": found["hasPrevPage"],
            "limit": found["limit"],
            "nextPage": found["nextPage"],
            "page": found["page"],
            "pagingCounter": found["pagingCounter"],
            "prevPage": found["prevPage"],
            "totalDocs": found["totalInspections"],
            "totalPages": found["totalPages"],
        },
    }


@get(
    "/v1/inspection/template/oauth/list/all",
    tags=TAGS,
    operation_id="ListMemberTemplates",
    summary="The templates of the token's member's company",
    sync_to_thread=True,
    opt={OAUTH_SCOPE_OPT: "templates:read", OAUTH_ONLY_OPT: True},
    operation_class=operation(write=False, status=200, response=list[Template], errors=()),
)
def member_templates(request: Request[Any, Any, Any]) -> list[dict[str, Any]]:
    """The templates of the token's member's company (the client libraries' `listWithOAuth`)."""
    auth = auth_of(request)
    return templates.list_templates(
        services(request).db, auth.company_id, inspection_type=None, kind=None
    )


ROUTES = [
    exchange_code,
    refresh_token,
    token,
    revoke,
    memberships,
    member_inspections,
    member_templates,
]
