"""Request and response bodies of the partner-application endpoints (the OpenAPI document is
built from them)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from server.bodies import RequestBody, ResponseBody
from server.inspections.schemas import Inspection


class ExchangeCodeBody(RequestBody):
    """`POST /v1/account/oauth/exchange_code`, as the client libraries send it."""

    code: str
    client_app_id: str
    client_secret: str
    #: Required when the authorization request named a redirect_uri (RFC 6749 4.1.3).
    redirect_uri: str | msgspec.UnsetType = msgspec.UNSET
    #: PKCE (RFC 7636), when the authorization request carried a code_challenge.
    code_verifier: str | msgspec.UnsetType = msgspec.UNSET


class RefreshTokenBody(RequestBody):
    """`POST /v1/account/oauth/refresh_token` (`refreshToken` is autoinspector-php's name)."""

    client_app_id: str
    client_secret: str
    refresh_token: str | msgspec.UnsetType = msgspec.UNSET
    refreshToken: str | msgspec.UnsetType = msgspec.UNSET
    scope: str | msgspec.UnsetType = msgspec.UNSET


class TokenAnswer(ResponseBody):
    """RFC 6749 5.1: a new access token and the refresh token that replaces the one used."""

    access_token: str
    token_type: str
    expires_in: Annotated[int, msgspec.Meta(description="Seconds the access token lives.")]
    refresh_token: str
    scope: str | msgspec.UnsetType = msgspec.UNSET


class Company(ResponseBody):
    id: str = msgspec.field(name="_id")
    societyReason: str
    logo: str | None


class Membership(ResponseBody):
    """One membership of the token's member (`_id` is the `membershipId` of the lists)."""

    id: str = msgspec.field(name="_id")
    role: str
    email: str
    mode: str
    company: Company


class Pagination(ResponseBody):
    """The client libraries' `IPaginationOutput`."""

    hasNextPage: bool
    hasPrevPage: bool
    limit: int
    nextPage: int | None
    page: int
    pagingCounter: int
    prevPage: int | None
    totalDocs: int
    totalPages: int


class MemberInspectionPage(ResponseBody):
    """A page of `GET /v1/inspection/{me|all}`."""

    inspections: list[Inspection]
    pagination: Pagination
