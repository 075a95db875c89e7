"""Partner applications: registering one and rotating its secret, a member's consent, the
authorizations a member (or a company's owner) sees and revokes, the token endpoints, and the
access token's check on every API request (`authenticate_bearer`, which `server.app` hands to
the authentication middleware).

A token acts as one member of one company, in the mode (test or live) of the application that
holds it, with the scopes the member approved that their role allows now. A member removed from
the company, a revoked authorization or an expired token is 401; an application's secret is
shown once and stored hashed.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import OAuth2Error
from authlib.oauth2.rfc6749.errors import InsecureTransportError
from sqlalchemy import delete, func, select

from server.auth import AuthContext, Delegation, Mode, find_member
from server.dashboard.accounts import Actor
from server.dashboard.permissions import allowed
from server.dashboard.tables import Account
from server.db import Database
from server.deps import bearer_error
from server.errors import ApiError
from server.oauth import flow, scopes
from server.oauth.tables import PartnerApp, PartnerAuthorization, PartnerCode, PartnerToken
from server.tables import Company, Member
from server.tokens import hash_token

#: Longest application name, redirect URI, and how many URIs one application registers.
MAX_NAME_CHARS = 100
MAX_URI_CHARS = 2048
MAX_REDIRECT_URIS = 10
#: Longest access token looked at; anything longer is refused without hashing.
MAX_TOKEN_CHARS = 200
TOKEN_PATH = "/v1/account/oauth/token"


class PartnerError(ApiError):
    """A refused operation on applications or authorizations, with a stable code."""


def _refuse(code: str, status: int, description: str) -> PartnerError:
    return PartnerError(code, status, description)


# --- applications (the Developers page) ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppView:
    id: str
    name: str
    mode: str
    redirect_uris: list[str]
    scopes: list[str]
    created_at: datetime
    secret_rotated_at: datetime | None


def _view(row: PartnerApp) -> AppView:
    return AppView(
        row.id,
        row.name,
        row.mode,
        list(row.redirect_uris),
        list(row.scopes),
        row.created_at,
        row.secret_rotated_at,
    )


def _require(actor: Actor, action: str) -> None:
    if not allowed(actor.role, action):
        raise _refuse("forbidden", 403, f"the {actor.role} role may not do {action}")


def redirect_uri_problem(uri: str) -> str | None:
    """Why `uri` cannot be registered (RFC 6749 3.1.2, RFC 9700 2.1), else None: absolute,
    https (http only to a loopback address, RFC 8252 7.3), no fragment."""
    if len(uri) > MAX_URI_CHARS or any(ord(c) < 33 or ord(c) == 127 for c in uri):
        return "is too long or holds spaces or control characters"
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri:
        return "must not hold a fragment (#...)"
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in ("localhost", "127.0.0.1", "::1"):
        return None
    return "must be an https address (http only to localhost)"


def _checked_app_fields(name: str, redirect_uris: list[str], wanted: list[str]) -> list[str]:
    if not name.strip() or len(name) > MAX_NAME_CHARS or any(ord(c) < 32 for c in name):
        raise _refuse("invalid_app_name", 400, "An application needs a name of one short line.")
    uris = [uri.strip() for uri in redirect_uris if uri.strip()]
    if not uris or len(uris) > MAX_REDIRECT_URIS:
        raise _refuse(
            "invalid_app_redirect_uri",
            400,
            f"An application needs 1 to {MAX_REDIRECT_URIS} redirect URIs.",
        )
    for uri in uris:
        why = redirect_uri_problem(uri)
        if why is not None:
            raise _refuse("invalid_app_redirect_uri", 400, f"The redirect URI {uri[:80]!r} {why}.")
    unknown = [name for name in wanted if name not in scopes.SCOPES]
    if not wanted or unknown:
        raise _refuse(
            "invalid_app_scopes", 400, f"Choose scopes among {', '.join(scopes.SCOPE_NAMES)}."
        )
    return list(dict.fromkeys(uris))


def register_app(
    db: Database, actor: Actor, mode: Mode, name: str, redirect_uris: list[str], wanted: list[str]
) -> tuple[AppView, str]:
    """A new application of the actor's company acting on `mode` data, and its secret (shown
    once)."""
    _require(actor, "developers.apps")
    uris = _checked_app_fields(name, redirect_uris, wanted)
    secret = "pas_" + secrets.token_urlsafe(32)
    row = PartnerApp(
        id=f"app_{mode}_{secrets.token_hex(12)}",
        company_id=actor.company_id,
        mode=mode,
        name=name.strip(),
        redirect_uris=uris,
        scopes=[name for name in scopes.SCOPE_NAMES if name in wanted],
        secret_hash=hash_token(secret),
    )
    with db.session() as session:
        session.add(row)
        session.commit()
        return _view(row), secret


def list_apps(db: Database, actor: Actor) -> list[AppView]:
    _require(actor, "developers.apps")
    model = cast(Any, PartnerApp)
    with db.session() as session:
        statement = (
            select(PartnerApp)
            .where(model.company_id == actor.company_id)
            .order_by(model.created_at, model.id)
        )
        return [_view(row) for row in session.execute(statement).scalars()]


def rotate_secret(db: Database, actor: Actor, app_id: str, now: datetime) -> tuple[AppView, str]:
    """A new secret for the application (shown once); the old one stops working at once.
    Tokens already issued stay valid: they are the members' consent, not the secret's."""
    _require(actor, "developers.apps")
    secret = "pas_" + secrets.token_urlsafe(32)
    with db.session() as session:
        row = session.get(PartnerApp, app_id)
        if row is None or row.company_id != actor.company_id:
            raise _refuse("app_not_found", 404, "No application of this company has that id.")
        row.secret_hash = hash_token(secret)
        row.secret_rotated_at = now
        session.add(row)
        session.commit()
        return _view(row), secret


# --- consent --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Consent:
    """What the consent page shows: the application, its company and the scopes asked for."""

    app_id: str
    app_name: str
    app_company: str
    scopes: list[str]
    redirect_uri: str


def _request(
    public_url: str, path: str, data: Mapping[str, str], headers: Mapping[str, str]
) -> flow.Request:
    return flow.Request("POST", public_url.rstrip("/") + path, data, headers)


def check_authorization_request(
    db: Database, public_url: str, query: Mapping[str, str], now: datetime
) -> Consent:
    """Validate an authorization request (RFC 6749 4.1.1) before the member is asked.

    An unknown client or a redirect URI it did not register is `unknown_client` or
    `invalid_redirect_uri` and is never redirected to (RFC 6749 4.1.2.1); other problems are
    `PartnerError`s with the RFC's error code."""
    client_id = query.get("client_id") or ""
    server = flow.PartnerServer(db, now)
    client = server.query_client(client_id)
    if client is None:
        raise _refuse("unknown_client", 400, "No application has this client_id.")
    asked = query.get("redirect_uri")
    if asked is not None and not client.check_redirect_uri(asked):
        raise _refuse(
            "invalid_redirect_uri",
            400,
            "This redirect_uri is not one the application registered (exact match).",
        )
    try:
        grant = server.get_consent_grant(
            _request(public_url, "/dashboard/oauth/authorize", query, {})
        )
    except OAuth2Error as error:
        raise _refuse(error.error, 400, error.get_error_description() or error.error) from None
    with db.session() as session:
        company = session.get(Company, client.company_id)
    return Consent(
        app_id=client.id,
        app_name=client.name,
        app_company=company.name if company is not None else "",
        scopes=scopes.split(grant.request.scope),
        redirect_uri=grant.redirect_uri,
    )


def decide(
    db: Database,
    public_url: str,
    actor: Actor,
    query: Mapping[str, str],
    approved: bool,
    now: datetime,
) -> str:
    """The member's answer: approved, a new authorization and a code; refused, `access_denied`.
    Returns where the browser goes (the application's redirect URI with `code` or `error`)."""
    server = flow.PartnerServer(db, now)
    request = _request(public_url, "/dashboard/oauth/authorize", query, {})
    try:
        grant = server.get_consent_grant(request)
    except OAuth2Error as error:
        raise _refuse(error.error, 400, error.get_error_description() or error.error) from None
    grantee = None
    if approved:
        client = cast(flow.Client, grant.request.client)
        grantee = flow.Grantee(_authorize(db, actor, client, grant.request.scope or "", now))
    answer = cast(flow.Answer, server.create_authorization_response(request, grantee, grant))
    location = answer.headers.get("Location")
    if answer.status != 302 or not location:
        body = answer.body or {}
        raise _refuse(str(body.get("code", "invalid_request")), 400, str(body.get("description")))
    return location


def _authorize(db: Database, actor: Actor, client: flow.Client, scope: str, now: datetime) -> str:
    """A new authorization of the member for the application, with the member's producer row
    (made when missing: `internalId` is their email address)."""
    with db.session(immediate=True) as session:
        account = session.get(Account, actor.account_id)
        if account is None or account.company_id != actor.company_id:
            raise _refuse("forbidden", 403, "This member is no longer in the company.")
        producer = find_member(session, account.company_id, account.email)
        if producer is None:
            producer = Member(
                company_id=account.company_id, internal_id=account.email, email=account.email
            )
            session.add(producer)
            session.flush()
        row = PartnerAuthorization(
            app_id=client.id,
            account_id=account.id,
            company_id=account.company_id,
            producer_id=producer.id,
            scope=scope,
            created_at=now,
        )
        session.add(row)
        session.commit()
        return row.id


# --- authorizations (the member's page, the owner's page) ---------------------------------------


@dataclass(frozen=True, slots=True)
class AuthorizationView:
    id: str
    app_name: str
    app_id: str
    mode: str
    member_email: str
    scopes: list[str]
    created_at: datetime
    last_used_at: datetime | None


def list_authorizations(
    db: Database, actor: Actor, *, whole_company: bool
) -> list[AuthorizationView]:
    """The live authorizations of the member, or (an owner) of every member of the company."""
    if whole_company:
        _require(actor, "authorizations.manage_company")
    model = cast(Any, PartnerAuthorization)
    conditions = [model.company_id == actor.company_id, model.revoked_at.is_(None)]
    if not whole_company:
        conditions.append(model.account_id == actor.account_id)
    tokens = cast(Any, PartnerToken)
    last_issued = (
        select(tokens.authorization_id, func.max(tokens.issued_at).label("last"))
        .group_by(tokens.authorization_id)
        .subquery()
    )
    with db.session() as session:
        statement = (
            select(PartnerAuthorization, PartnerApp, Account, last_issued.c.last)
            .join(PartnerApp, cast(Any, PartnerApp.id) == model.app_id)
            .join(Account, cast(Any, Account.id) == model.account_id)
            .outerjoin(last_issued, last_issued.c.authorization_id == model.id)
            .where(*conditions)
            .order_by(model.created_at.desc(), model.id)
        )
        return [
            AuthorizationView(
                authorization.id,
                app.name,
                app.id,
                app.mode,
                account.email,
                scopes.split(authorization.scope),
                authorization.created_at,
                last,
            )
            for authorization, app, account, last in session.execute(statement).all()
        ]


def revoke_authorization(db: Database, actor: Actor, authorization_id: str, now: datetime) -> None:
    """The member ends one of their authorizations; an owner any of the company's. Every token
    of it stops working at once."""
    with db.session() as session:
        row = session.get(PartnerAuthorization, authorization_id)
        found = row is not None and row.company_id == actor.company_id
        own = found and row is not None and row.account_id == actor.account_id
    if not found or not (own or allowed(actor.role, "authorizations.manage_company")):
        raise _refuse("authorization_not_found", 404, "No such authorization.")
    flow.revoke_family(db, authorization_id, "member" if own else "owner", now)


def purge_spent(db: Database, now: datetime) -> int:
    """Delete what no request can use any more (the worker's chore): codes a day past their
    expiry, and token pairs whose refresh token has expired (their access token expired before).
    A rotated refresh token is kept until then, so its reuse is recognized as one. The
    authorizations stay, revoked ones too: who allowed what, and who ended it."""
    codes = cast(Any, PartnerCode).__table__
    pairs = cast(Any, PartnerToken).__table__
    with db.session() as session:
        gone = session.execute(delete(codes).where(codes.c.expires_at < now - timedelta(days=1)))
        spent = session.execute(delete(pairs).where(pairs.c.refresh_expires_at < now))
        session.commit()
    return int(cast(Any, gone).rowcount or 0) + int(cast(Any, spent).rowcount or 0)


# --- the token endpoints ------------------------------------------------------------------------


#: The RFC endpoints `endpoint_answer` answers, by the name Authlib gives them: their paths.
ENDPOINT_PATHS = {"token": TOKEN_PATH, "revocation": "/v1/account/oauth/revoke"}


def endpoint_answer(
    endpoint: Literal["token", "revocation"],
    db: Database,
    public_url: str,
    data: Mapping[str, str],
    headers: Mapping[str, str],
    now: datetime,
) -> flow.Answer:
    """RFC 6749's token endpoint (authorization_code and refresh_token grants), or RFC 7009's
    revocation of an access or a refresh token (the latter ends its authorization); 400 as the
    RFC's error when the public URL is not HTTPS (`InsecureTransportError`)."""
    server = flow.PartnerServer(db, now)
    try:
        request = _request(public_url, ENDPOINT_PATHS[endpoint], data, headers)
    except InsecureTransportError as error:
        return flow.Answer(400, flow.error_body(error), {})
    if endpoint == "token":
        return cast(flow.Answer, server.create_token_response(request))
    return cast(flow.Answer, server.create_endpoint_response("revocation", request))


def library_form(body: Any, grant_type: str) -> dict[str, str]:
    """The client libraries' JSON (`{code | refresh_token | refreshToken, client_app_id,
    client_secret}`) as the RFC's token request form (`client_secret_post`)."""
    if not isinstance(body, dict):
        raise _refuse("invalid_request", 400, "The body must be a JSON object.")
    form = {"grant_type": grant_type}
    names = {
        "client_app_id": "client_id",
        "client_id": "client_id",
        "client_secret": "client_secret",
        "code": "code",
        "redirect_uri": "redirect_uri",
        "code_verifier": "code_verifier",
        "refresh_token": "refresh_token",
        # autoinspector-php sends the refresh token under this name.
        "refreshToken": "refresh_token",
        "scope": "scope",
    }
    for name, target in names.items():
        value = body.get(name)
        if isinstance(value, str) and value and target not in form:
            form[target] = value
    return form


# --- the access token on API requests ---------------------------------------------------------


def _invalid(description: str, code: str = "invalid_token") -> ApiError:
    return bearer_error(code, description, "invalid_token")


def authenticate_bearer(db: Database, token: str, now: datetime) -> AuthContext:
    """The context of a live access token: its member's company, its application's mode, the
    member's producer row and the scopes usable now. 401 `invalid_token` when it is unknown,
    revoked, or its member left the company; 401 `token_expired` after its lifetime."""
    if not token or len(token) > MAX_TOKEN_CHARS or not token.startswith(flow.ACCESS_PREFIX):
        raise _invalid("The access token is not valid.")
    with db.session() as session:
        row = session.get(PartnerToken, hash_token(token))
        if row is None:
            raise _invalid("The access token is not valid.")
        authorization = session.get(PartnerAuthorization, row.authorization_id)
        app = session.get(PartnerApp, row.app_id)
        account = (
            session.get(Account, authorization.account_id) if authorization is not None else None
        )
        producer = (
            session.get(Member, authorization.producer_id) if authorization is not None else None
        )
        if row.revoked_at is not None or authorization is None or authorization.revoked_at:
            raise _invalid("The access token has been revoked.")
        if app is None or account is None or producer is None:
            raise _invalid("The member or the application of this token no longer exists.")
        if account.company_id != authorization.company_id:
            raise _invalid("The member of this token is no longer in the company.")
        if row.access_expires_at <= now:
            raise _invalid("The access token has expired: refresh it.", "token_expired")
        mode: Mode = "live" if app.mode == "live" else "test"
        delegation = Delegation(
            account_id=account.id,
            authorization_id=authorization.id,
            app_id=app.id,
            producer_id=producer.id,
            producer_internal_id=producer.internal_id,
            scopes=scopes.usable(scopes.split(row.scope), account.role),
        )
        return AuthContext(
            company_id=authorization.company_id,
            mode=mode,
            key_id=f"oauth:{app.id}",
            delegation=delegation,
        )


def _delegation(auth: AuthContext) -> Delegation:
    """The member a request's access token acts for (the routes reading it take only tokens)."""
    if auth.delegation is None:
        raise ApiError.of("unauthorized", "This endpoint needs an access token (Bearer).")
    return auth.delegation


# --- what a token reads about its member --------------------------------------------------------


def memberships(db: Database, auth: AuthContext) -> list[dict[str, Any]]:
    """The member's memberships (`IMembershipItem` of the client libraries): a dashboard account
    belongs to one company, so one item, whose `_id` is the `membershipId` of the lists."""
    delegation = _delegation(auth)
    with db.session() as session:
        account = session.get(Account, delegation.account_id)
        company = session.get(Company, auth.company_id)
        if account is None or company is None:
            raise _invalid("The member of this token no longer exists.")
        return [
            {
                "_id": account.id,
                "role": account.role,
                "email": account.email,
                "mode": auth.mode,
                "company": {"_id": company.id, "societyReason": company.name, "logo": None},
            }
        ]


def producers_of(
    db: Database, auth: AuthContext, scope: str, membership_id: str | None
) -> list[str]:
    """The producer rows whose inspections `GET /v1/inspection/{me|all}` lists: the member's
    (`me`), and those of the members they invited (`all`). 404 `membership_not_found` for a
    `membershipId` that is not the token's member."""
    delegation = _delegation(auth)
    if membership_id != delegation.account_id:
        raise ApiError.of("membership_not_found", "The membershipId is not this token's member's.")
    found = [delegation.producer_id]
    if scope == "all":
        model = cast(Any, Account)
        with db.session() as session:
            invited = session.execute(
                select(model.email).where(
                    model.company_id == auth.company_id,
                    model.invited_by == delegation.account_id,
                )
            ).scalars()
            for email in invited:
                member = find_member(session, auth.company_id, email)
                if member is not None:
                    found.append(member.id)
    return found
