"""Tables of partner applications (OAuth 2.0): the registered applications, the authorizations
members give them, the short-lived authorization codes and the tokens.

Every secret handed out (client secret, code, access token, refresh token) is stored as its
SHA-256 (`server.tokens.hash_token`), as API keys are; the plain value is shown once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index
from sqlmodel import Field, SQLModel

from server.tables import UtcDateTime, new_id, utcnow


def _moment(nullable: bool = False) -> Any:
    return Field(default=None, sa_column=Column(UtcDateTime(), nullable=nullable))


class PartnerApp(SQLModel, table=True):
    """An application a company registered on its Developers page (an OAuth 2.0 client).

    `id` is the public `client_id` (`app_test_...` / `app_live_...`): the mode is the data its
    tokens act on, whatever company the authorizing member belongs to."""

    __tablename__ = "partner_apps"

    id: str = Field(primary_key=True, max_length=64)
    company_id: str = Field(foreign_key="companies.id", index=True, max_length=32)
    mode: str = Field(max_length=8)
    name: str = Field(max_length=100)
    #: Exact redirect URIs (RFC 9700 2.1: compared as strings, no pattern).
    redirect_uris: list[str] = Field(sa_column=Column(JSON, nullable=False))
    #: The scopes the application may ask for.
    scopes: list[str] = Field(sa_column=Column(JSON, nullable=False))
    secret_hash: str = Field(max_length=64)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
    secret_rotated_at: datetime | None = _moment(nullable=True)


class PartnerAuthorization(SQLModel, table=True):
    """A member's consent to one application: the family every code and token of it belongs to.

    Revoking it (the member, an owner, a reused code or refresh token) ends every token of the
    family at once."""

    __tablename__ = "partner_authorizations"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    app_id: str = Field(foreign_key="partner_apps.id", index=True, max_length=64)
    #: The dashboard account (no foreign key: removing a member leaves the row, and its tokens
    #: fail at once, since their member is gone).
    account_id: str = Field(index=True, max_length=32)
    company_id: str = Field(foreign_key="companies.id", index=True, max_length=32)
    #: The member's producer row (`members`): inspections the token creates are theirs.
    producer_id: str = Field(foreign_key="members.id", max_length=32)
    scope: str = Field(max_length=500)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
    revoked_at: datetime | None = _moment(nullable=True)
    #: Why it ended: `member`, `owner`, `code_reused`, `refresh_token_reused`, `client`.
    revoked_reason: str | None = Field(default=None, max_length=32)


class PartnerCode(SQLModel, table=True):
    """An authorization code: single use, short-lived, bound to its application and to the
    redirect URI the authorization request named (None when it named none)."""

    __tablename__ = "partner_codes"

    code_hash: str = Field(primary_key=True, max_length=64)
    authorization_id: str = Field(
        foreign_key="partner_authorizations.id", index=True, max_length=32
    )
    app_id: str = Field(max_length=64)
    redirect_uri: str | None = Field(default=None, max_length=2048)
    scope: str = Field(max_length=500)
    code_challenge: str | None = Field(default=None, max_length=128)
    code_challenge_method: str | None = Field(default=None, max_length=16)
    expires_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    used_at: datetime | None = _moment(nullable=True)


class PartnerToken(SQLModel, table=True):
    """An access token and the refresh token issued with it. A refresh token is used once:
    refreshing marks it `refreshed_at` and issues a new pair in the same authorization."""

    __tablename__ = "partner_tokens"
    __table_args__ = (Index("ix_partner_tokens_refresh", "refresh_hash", unique=True),)

    access_hash: str = Field(primary_key=True, max_length=64)
    refresh_hash: str = Field(max_length=64)
    authorization_id: str = Field(
        foreign_key="partner_authorizations.id", index=True, max_length=32
    )
    app_id: str = Field(max_length=64)
    scope: str = Field(max_length=500)
    issued_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    access_expires_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    refresh_expires_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    refreshed_at: datetime | None = _moment(nullable=True)
    revoked_at: datetime | None = _moment(nullable=True)
