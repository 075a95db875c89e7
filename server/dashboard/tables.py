"""Tables of the dashboard: member accounts, one-time email-link tokens and the sign-in throttle
(sessions are the web layer's `web_sessions`, kind `member`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from server.tables import UtcDateTime, new_id, utcnow


class Account(SQLModel, table=True):
    """A person who signs in to the dashboard of one company, with one role.

    `password_hash` (argon2id) is None until an invited member chose a password."""

    __tablename__ = "dashboard_accounts"
    __table_args__ = (UniqueConstraint("email", name="uq_dashboard_accounts_email"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    company_id: str = Field(foreign_key="companies.id", index=True, max_length=32)
    #: Lower-cased, normalized by email-validator; one account per address across companies.
    email: str = Field(max_length=320)
    role: str = Field(max_length=16)
    password_hash: str | None = Field(default=None, max_length=200)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
    #: The account that invited this one (None: made by the admin command or the demo); a
    #: partner application's `GET /v1/inspection/all` lists the invited members' inspections.
    invited_by: str | None = Field(default=None, max_length=32)


class PendingInvitation(SQLModel, table=True):
    """An invitation to an address that already has an account with another company (an
    address belongs to one company's dashboard). No account can be made for it, but the inviter
    sees it on the members page like any invitation not yet accepted, and can change its role or
    withdraw it: a missing row would tell them the address is taken elsewhere."""

    __tablename__ = "dashboard_pending_invitations"
    __table_args__ = (
        UniqueConstraint("company_id", "email", name="uq_dashboard_pending_invitations_email"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    company_id: str = Field(foreign_key="companies.id", index=True, max_length=32)
    email: str = Field(max_length=320)
    role: str = Field(max_length=16)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )


class AccountToken(SQLModel, table=True):
    """A one-time link sent by email: an invitation (`kind="invite"`) or a password reset."""

    __tablename__ = "dashboard_tokens"

    id: str = Field(primary_key=True, max_length=64)
    account_id: str = Field(foreign_key="dashboard_accounts.id", index=True, max_length=32)
    kind: str = Field(max_length=16)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
    expires_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    used_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime(), nullable=True))


class LoginThrottle(SQLModel, table=True):
    """Failed sign-ins counted per key (`email:<address>` whether or not an account has it,
    and `ip:<address>`), in a window; a key over the limit is locked until `locked_until`."""

    __tablename__ = "dashboard_login_throttle"
    __table_args__ = (Index("ix_dashboard_login_throttle_locked", "locked_until"),)

    key: str = Field(primary_key=True, max_length=400)
    failures: int = Field(default=0)
    window_started_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    locked_until: datetime | None = Field(
        default=None, sa_column=Column(UtcDateTime(), nullable=True)
    )


class MemberPreference(SQLModel, table=True):
    """What a member chose for their own pages: the language (`en_US`, `es_AR`, `pt_BR`).
    No row: the browser's `Accept-Language` decides."""

    __tablename__ = "dashboard_preferences"

    account_id: str = Field(foreign_key="dashboard_accounts.id", primary_key=True, max_length=32)
    locale: str = Field(max_length=16)
