"""The OAuth 2.0 authorization-code flow, server side, on authlib's server components.

authlib's `AuthorizationServer`, `AuthorizationCodeGrant`, `RefreshTokenGrant`, the PKCE
extension (`CodeChallenge`, RFC 7636) and the `RevocationEndpoint` (RFC 7009) do the protocol:
parameter checks, client authentication (`client_secret_basic` or `client_secret_post`), exact
redirect URI match, scope checks, PKCE verification, token generation. This module gives them
storage (`server.oauth.tables`) and the rules of RFC 9700 authlib leaves to the server:

- a code is used once: the first exchange marks it used in one conditional UPDATE; a second
  exchange is `authorization_code_used` and revokes the authorization, so every token issued
  from the code ends (RFC 6749 4.1.2, RFC 9700 4.5);
- a code lives `CODE_LIFETIME`, an access token `ACCESS_LIFETIME`, a refresh token
  `REFRESH_LIFETIME`;
- refresh tokens rotate: each refresh marks the old one used and issues a new pair; a used
  refresh token presented again is `refresh_token_reused` and revokes the authorization (the
  family), since one of the two holders is not the application (RFC 9700 4.14.2);
- every secret is stored as `server.tokens.hash_token` of it.

Errors are the RFC's `{"error", "error_description"}` with the service's `{"code", "status",
"description", "detail"}` beside them (`code` names the exact refusal).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from authlib.oauth2.rfc6749 import (
    AuthorizationCodeMixin,
    AuthorizationServer,
    ClientMixin,
    OAuth2Error,
    OAuth2Request,
    TokenMixin,
)
from authlib.oauth2.rfc6749.errors import InvalidGrantError
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, RefreshTokenGrant
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from sqlalchemy import update
from sqlmodel import Session, select

from server.db import Database
from server.errors import ServerError
from server.oauth import scopes
from server.oauth.tables import PartnerApp, PartnerAuthorization, PartnerCode, PartnerToken
from server.tokens import hash_token

#: RFC 6749 4.1.2 recommends at most 10 minutes; a redirect and an exchange take seconds.
CODE_LIFETIME = timedelta(minutes=2)
ACCESS_LIFETIME = timedelta(hours=1)
#: A refresh token unused this long expires; each refresh gives a new one for as long again.
REFRESH_LIFETIME = timedelta(days=30)
#: Client authentication at the token and revocation endpoints (RFC 6749 2.3.1).
CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]
ACCESS_PREFIX = "pat_"
REFRESH_PREFIX = "prt_"


# --- refusals with the service's codes ----------------------------------------------------------


class CodeUsed(InvalidGrantError, ServerError):  # type: ignore[misc]
    service_code = "authorization_code_used"


class CodeExpired(InvalidGrantError, ServerError):  # type: ignore[misc]
    service_code = "authorization_code_expired"


class RedirectMismatch(InvalidGrantError, ServerError):  # type: ignore[misc]
    service_code = "redirect_uri_mismatch"


class RefreshReused(InvalidGrantError, ServerError):  # type: ignore[misc]
    service_code = "refresh_token_reused"


class RefreshExpired(InvalidGrantError, ServerError):  # type: ignore[misc]
    service_code = "refresh_token_expired"


class AuthorizationRevoked(InvalidGrantError, ServerError):  # type: ignore[misc]
    service_code = "authorization_revoked"


def error_body(error: OAuth2Error) -> dict[str, Any]:
    """The RFC's error fields and the service's beside them."""
    description = error.get_error_description() or error.error
    return {
        "error": error.error,
        "error_description": description,
        "code": getattr(error, "service_code", error.error),
        "status": error.status_code,
        "description": description,
        "detail": description,
    }


# --- what authlib asks of the storage -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Client(ClientMixin):  # type: ignore[misc]
    """A registered application (`PartnerApp`) as authlib sees it."""

    id: str
    company_id: str
    mode: str
    name: str
    redirect_uris: tuple[str, ...]
    scopes: tuple[str, ...]
    secret_hash: str

    @classmethod
    def of(cls, row: PartnerApp) -> Client:
        return cls(
            row.id,
            row.company_id,
            row.mode,
            row.name,
            tuple(row.redirect_uris),
            tuple(row.scopes),
            row.secret_hash,
        )

    def get_client_id(self) -> str:
        return self.id

    def get_default_redirect_uri(self) -> str | None:
        # RFC 6749 3.1.2.3: with several registered, the request must name one.
        return self.redirect_uris[0] if len(self.redirect_uris) == 1 else None

    def get_allowed_scope(self, scope: str | None) -> str | None:
        """The scope asked for (or, when none is, all the application's); None when it asks for
        one it was not registered with (`invalid_scope`)."""
        asked = scopes.split(scope) or list(self.scopes)
        return " ".join(asked) if all(name in self.scopes for name in asked) else None

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.redirect_uris  # exact string match (RFC 9700 2.1)

    def check_client_secret(self, client_secret: str) -> bool:
        given = hash_token(client_secret).encode("ascii")
        return hmac.compare_digest(self.secret_hash.encode("ascii"), given)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method in CLIENT_AUTH_METHODS

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in ("authorization_code", "refresh_token")


@dataclass(frozen=True, slots=True)
class Grantee:
    """The resource owner authlib hands around: one member's authorization."""

    authorization_id: str

    def get_user_id(self) -> str:
        return self.authorization_id


@dataclass(frozen=True, slots=True)
class Code(AuthorizationCodeMixin):  # type: ignore[misc]
    authorization_id: str
    redirect_uri: str | None
    scope: str
    code_challenge: str | None
    code_challenge_method: str | None

    def get_redirect_uri(self) -> str | None:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass(frozen=True, slots=True)
class Issued(TokenMixin):  # type: ignore[misc]
    """A stored token pair, for the refresh grant and the revocation endpoint."""

    access_hash: str
    authorization_id: str
    app_id: str
    scope: str
    expires_at: datetime
    revoked: bool
    now: datetime
    #: Which of the pair a revocation request named (`access_token` or `refresh_token`).
    kind: str = "refresh_token"

    def check_client(self, client: Client) -> bool:
        return client.id == self.app_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return max(0, int((self.expires_at - self.now).total_seconds()))

    def is_expired(self) -> bool:
        return self.expires_at <= self.now

    def is_revoked(self) -> bool:
        return self.revoked


class Request(OAuth2Request):  # type: ignore[misc]
    """An HTTP request as authlib reads it: method, URI, headers, and its form or query."""

    def __init__(
        self, method: str, uri: str, data: Mapping[str, str], headers: Mapping[str, str]
    ) -> None:
        super().__init__(method=method, uri=uri, headers=dict(headers))
        self._data = dict(data)
        self.payload = BasicOAuth2Payload(self._data)

    @property
    def args(self) -> dict[str, str]:
        return self._data

    @property
    def form(self) -> dict[str, str]:
        return self._data


@dataclass(frozen=True, slots=True)
class Answer:
    """What an endpoint answers: status, JSON body (or None for a redirect) and headers."""

    status: int
    body: dict[str, Any] | None
    headers: dict[str, str]


def revoke_family(db: Database, authorization_id: str, reason: str, now: datetime) -> bool:
    """End an authorization and every token of it (committed at once, whatever the request
    answers); whether it was live until now."""
    with db.session() as session:
        table = cast(Any, PartnerAuthorization).__table__
        ended = session.execute(
            update(table)
            .where(table.c.id == authorization_id, table.c.revoked_at.is_(None))
            .values(revoked_at=now, revoked_reason=reason)
        )
        tokens = cast(Any, PartnerToken).__table__
        session.execute(
            update(tokens)
            .where(tokens.c.authorization_id == authorization_id, tokens.c.revoked_at.is_(None))
            .values(revoked_at=now)
        )
        session.commit()
    return bool(cast(Any, ended).rowcount)


def live_authorization(session: Session, authorization_id: str) -> PartnerAuthorization | None:
    found = session.get(PartnerAuthorization, authorization_id)
    return found if found is not None and found.revoked_at is None else None


class CodeGrant(AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS
    server: PartnerServer

    def save_authorization_code(self, code: str, request: Request) -> None:
        server = self.server
        grantee = cast(Grantee, request.user)
        with server.db.session() as session:
            session.add(
                PartnerCode(
                    code_hash=hash_token(code),
                    authorization_id=grantee.authorization_id,
                    app_id=request.client.id,
                    # Only when the request named one: then the exchange must name it too.
                    redirect_uri=request.payload.redirect_uri or None,
                    scope=request.scope or "",
                    code_challenge=request.payload.data.get("code_challenge") or None,
                    code_challenge_method=request.payload.data.get("code_challenge_method") or None,
                    expires_at=server.now + CODE_LIFETIME,
                )
            )
            session.commit()

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        server = self.server
        code_hash = hash_token(code)
        with server.db.session() as session:
            row = session.get(PartnerCode, code_hash)
            if row is None or row.app_id != client.id:
                return None
            table = cast(Any, PartnerCode).__table__
            claimed = session.execute(
                update(table)
                .where(table.c.code_hash == code_hash, table.c.used_at.is_(None))
                .values(used_at=server.now)
            )
            session.commit()
            found = Code(
                row.authorization_id,
                row.redirect_uri,
                row.scope,
                row.code_challenge,
                row.code_challenge_method,
            )
            expires_at = row.expires_at
        if not cast(Any, claimed).rowcount:
            revoke_family(server.db, found.authorization_id, "code_reused", server.now)
            raise CodeUsed(
                "This authorization code was used already: every token issued from it is revoked."
            )
        if expires_at <= server.now:
            raise CodeExpired("This authorization code has expired: ask the member again.")
        if found.redirect_uri and self.request.payload.redirect_uri != found.redirect_uri:
            raise RedirectMismatch(
                "redirect_uri is not the one of the authorization request (RFC 6749 4.1.3)."
            )
        return found

    def delete_authorization_code(self, authorization_code: Code) -> None:
        """Nothing left to do: `query_authorization_code` marked it used (kept, so a second
        use is recognized as one)."""

    def authenticate_user(self, authorization_code: Code) -> Grantee | None:
        with self.server.db.session() as session:
            if live_authorization(session, authorization_code.authorization_id) is None:
                raise AuthorizationRevoked("The member withdrew this authorization.")
        return Grantee(authorization_code.authorization_id)


class RefreshGrant(RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = CLIENT_AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation (RFC 9700 4.14.2)
    server: PartnerServer

    def authenticate_refresh_token(self, refresh_token: str) -> Issued | None:
        server = self.server
        client = cast(Client, self.request.client)
        with server.db.session() as session:
            statement = select(PartnerToken).where(
                cast(Any, PartnerToken.refresh_hash) == hash_token(refresh_token)
            )
            row = session.execute(statement).scalars().first()
            if row is None or row.app_id != client.id:
                return None
            authorization = live_authorization(session, row.authorization_id)
            issued = Issued(
                row.access_hash,
                row.authorization_id,
                row.app_id,
                row.scope,
                row.refresh_expires_at,
                row.revoked_at is not None,
                server.now,
            )
            refreshed = row.refreshed_at is not None
        if refreshed:
            revoke_family(server.db, issued.authorization_id, "refresh_token_reused", server.now)
            raise RefreshReused(
                "This refresh token was used already: the authorization is revoked, ask the "
                "member again."
            )
        if authorization is None or issued.revoked:
            raise AuthorizationRevoked("This authorization was revoked.")
        if issued.is_expired():
            raise RefreshExpired("This refresh token has expired: ask the member again.")
        return issued

    def authenticate_user(self, refresh_token: Issued) -> Grantee:
        return Grantee(refresh_token.authorization_id)

    def revoke_old_credential(self, refresh_token: Issued) -> None:
        """Mark the old refresh token used, in one conditional UPDATE: of two refreshes with
        the same token at once, the second finds it used and is a reuse."""
        server = self.server
        with server.db.session() as session:
            table = cast(Any, PartnerToken).__table__
            marked = session.execute(
                update(table)
                .where(table.c.access_hash == refresh_token.access_hash)
                .where(table.c.refreshed_at.is_(None))
                .values(refreshed_at=server.now)
            )
            session.commit()
        if not cast(Any, marked).rowcount:
            revoke_family(
                server.db, refresh_token.authorization_id, "refresh_token_reused", server.now
            )
            raise RefreshReused(
                "This refresh token was used already: the authorization is revoked."
            )


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    """RFC 7009: a refresh token revokes its authorization (every token of it), an access
    token itself. An unknown token is answered 200 as the RFC says."""

    CLIENT_AUTH_METHODS = CLIENT_AUTH_METHODS
    server: PartnerServer

    def query_token(self, token_string: str, token_type_hint: str | None) -> Issued | None:
        server = self.server
        digest = hash_token(token_string)
        model = cast(Any, PartnerToken)
        with server.db.session() as session:
            row = session.get(PartnerToken, digest)
            kind = "access_token"
            if row is None:
                row = (
                    session.execute(select(PartnerToken).where(model.refresh_hash == digest))
                    .scalars()
                    .first()
                )
                kind = "refresh_token"
            if row is None:
                return None
            return Issued(
                row.access_hash,
                row.authorization_id,
                row.app_id,
                row.scope,
                row.access_expires_at,
                row.revoked_at is not None,
                server.now,
                kind,
            )

    def revoke_token(self, token: Issued, request: Request) -> None:
        server = self.server
        if token.kind == "refresh_token":
            revoke_family(server.db, token.authorization_id, "client", server.now)
            return
        with server.db.session() as session:
            table = cast(Any, PartnerToken).__table__
            session.execute(
                update(table)
                .where(table.c.access_hash == token.access_hash, table.c.revoked_at.is_(None))
                .values(revoked_at=server.now)
            )
            session.commit()


def _access_token(**_: Any) -> str:
    return ACCESS_PREFIX + secrets.token_urlsafe(32)


def _refresh_token(**_: Any) -> str:
    return REFRESH_PREFIX + secrets.token_urlsafe(32)


class PartnerServer(AuthorizationServer):  # type: ignore[misc]
    """authlib's authorization server over this service's tables, for one request at `now`."""

    def __init__(self, db: Database, now: datetime) -> None:
        super().__init__(scopes_supported=list(scopes.SCOPE_NAMES))
        self.db = db
        self.now = now
        self.register_grant(CodeGrant, [CodeChallenge(required=False)])
        self.register_grant(RefreshGrant)
        self.register_endpoint(Revocation)
        self.register_token_generator(
            "default",
            BearerTokenGenerator(
                _access_token, _refresh_token, int(ACCESS_LIFETIME.total_seconds())
            ),
        )

    def query_client(self, client_id: str) -> Client | None:
        if not isinstance(client_id, str) or len(client_id) > 64:
            return None
        with self.db.session() as session:
            row = session.get(PartnerApp, client_id)
            return Client.of(row) if row is not None else None

    def save_token(self, token: dict[str, Any], request: Request) -> None:
        grantee = cast(Grantee, request.user)
        expires_in = int(token.get("expires_in") or ACCESS_LIFETIME.total_seconds())
        with self.db.session() as session:
            session.add(
                PartnerToken(
                    access_hash=hash_token(token["access_token"]),
                    refresh_hash=hash_token(token["refresh_token"]),
                    authorization_id=grantee.authorization_id,
                    app_id=request.client.id,
                    scope=token.get("scope") or "",
                    issued_at=self.now,
                    access_expires_at=self.now + timedelta(seconds=expires_in),
                    refresh_expires_at=self.now + REFRESH_LIFETIME,
                )
            )
            session.commit()

    def create_oauth2_request(self, request: Request) -> Request:
        return request

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        """No listeners: what happens is in the tables."""

    def handle_response(self, status: int, body: Any, headers: Any) -> Answer:
        pairs = dict(headers or [])
        return Answer(status, body if isinstance(body, dict) else None, pairs)

    def handle_error_response(self, request: Request, error: OAuth2Error) -> Answer:
        if getattr(error, "redirect_uri", None):  # a checked redirect URI: tell the client there
            return self.handle_response(*error())
        headers = dict(error.get_headers())
        headers.pop("Content-Type", None)
        return Answer(error.status_code, error_body(error), headers)
