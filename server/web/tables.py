"""The browser sessions table: one row per signed-in browser (a consumer bound to one
inspection, or a dashboard member). Only the SHA-256 of the cookie's token is stored."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column
from sqlmodel import Field, SQLModel

from server.tables import UtcDateTime, utcnow


class WebSession(SQLModel, table=True):
    __tablename__ = "web_sessions"

    #: SHA-256 hex of the cookie's random token (the token itself is never stored).
    token_hash: str = Field(primary_key=True, max_length=64)
    #: What the session may reach: `consumer` (one inspection) or `member` (one company).
    kind: str = Field(max_length=16)
    company_id: str = Field(foreign_key="companies.id", index=True, max_length=32)
    #: The inspection (consumer) or member (dashboard) the session is bound to.
    subject_id: str = Field(index=True, max_length=32)
    #: Small per-session state a page keeps (e.g. the consumer's current step).
    data: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
    #: After this the cookie is refused and the row may be deleted.
    expires_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False, index=True))
