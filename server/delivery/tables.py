"""Link deliveries (one row per message sent, or to send, to a consumer) and the development
outbox (messages kept instead of sent when no provider is configured)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Text
from sqlmodel import Field, SQLModel

from server.tables import UtcDateTime, timestamp_field


class LinkDeliveryRecord(SQLModel, table=True):
    """One delivery of an inspection's magic link: queued in the creation's (or the resend's)
    transaction, sent by a durable job. The link, which holds the access code, is kept only
    until the provider accepted the message or the delivery failed for good."""

    __tablename__ = "link_deliveries"

    id: str = Field(primary_key=True, max_length=24)
    inspection_id: str = Field(foreign_key="inspections.id", index=True, max_length=24)
    company_id: str = Field(max_length=64)
    testing: bool
    channel: str = Field(max_length=8)
    #: Normalized: an email address, or a phone number in E.164.
    destination: str = Field(max_length=320)
    locale: str = Field(max_length=16)
    #: queued | sending | sent | failed
    status: str = Field(max_length=16)
    attempts: int = 0
    #: The provider that carried it (smtp, twilio, meta, outbox) and its message id.
    provider: str | None = Field(default=None, max_length=16)
    provider_message_id: str | None = Field(default=None, max_length=200)
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    #: The magic link (with its code) while the message still has to be sent; None after.
    link: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    #: A reviewer's message sent with the link (a retake, docs/review.md); None for others.
    note: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    expires_at: datetime | None = Field(
        default=None, sa_column=Column(UtcDateTime(), nullable=True)
    )
    created_at: datetime = timestamp_field()
    sent_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime(), nullable=True))


class OutboxMessageRecord(SQLModel, table=True):
    """A message the development outbox kept (`inspectlang outbox`, `/dev/outbox`)."""

    __tablename__ = "outbox_messages"

    id: int | None = Field(default=None, primary_key=True)
    delivery_id: str = Field(index=True, max_length=24)
    channel: str = Field(max_length=8)
    to: str = Field(max_length=320)
    subject: str = Field(sa_column=Column(Text, nullable=False))
    text: str = Field(sa_column=Column(Text, nullable=False))
    html: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    headers: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = timestamp_field()
