"""Tables of webhooks: endpoints subscribed to inspection events, one row per delivery attempt
(report callbacks and events alike), and retired signing secrets. The company's current signing
secret is `companies.webhook_secret` (`server.tables`).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Column, Index, Text
from sqlmodel import Field, SQLModel

from server.tables import UtcDateTime, new_id, utcnow


class WebhookSubscriptionRecord(SQLModel, table=True):
    """An endpoint subscribed to inspection events of a company (test or live data)."""

    __tablename__ = "webhook_subscriptions"
    __table_args__ = (Index("ix_webhook_subscriptions_company", "company_id", "testing"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=24)
    company_id: str = Field(max_length=64)
    testing: bool = False
    endpoint: str = Field(max_length=2048)
    events: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
    #: Set when the endpoint answered 410 Gone: no more deliveries.
    disabled_at: datetime | None = Field(
        default=None, sa_column=Column(UtcDateTime(), nullable=True)
    )


class WebhookAttemptRecord(SQLModel, table=True):
    """One HTTP attempt of one delivery (`delivery_id` is the stable `webhook-id`)."""

    __tablename__ = "webhook_attempts"

    id: int | None = Field(default=None, primary_key=True)
    delivery_id: str = Field(max_length=64, index=True)
    company_id: str = Field(max_length=64)
    event: str = Field(max_length=64)
    url: str = Field(max_length=2048)
    attempt: int
    status_code: int | None = None
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    duration_ms: int = 0
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )


class RetiredWebhookSecretRecord(SQLModel, table=True):
    """A company's previous webhook secret: deliveries are also signed with it for a grace
    period after a rotation, so receivers can switch secrets without missing a delivery."""

    __tablename__ = "retired_webhook_secrets"

    id: int | None = Field(default=None, primary_key=True)
    company_id: str = Field(max_length=64, index=True)
    secret: str = Field(max_length=200)
    retired_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
