"""Tables of reports, background jobs and webhooks (created by `Database.create_all`).

- `report_requests`: one row per report request, with the blob key of its PDF once completed.
- `jobs`: the durable job queue (`server.jobs`); a job is inserted in the same transaction as
  the row it works on, so a committed request always has its job and a rolled back one never.
- `webhook_subscriptions` and `webhook_attempts`: endpoints subscribed to inspection events, and
  one row per delivery attempt (report callbacks and events alike). The company's signing
  secret is `companies.webhook_secret` (`server.tables`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Text
from sqlmodel import Field, SQLModel

from server.tables import UtcDateTime, new_id


def utcnow() -> datetime:
    return datetime.now(UTC)


class ReportRequestRecord(SQLModel, table=True):
    """A report request: `pending` -> `processing` -> `completed` | `failed`."""

    __tablename__ = "report_requests"
    __table_args__ = (
        Index("ix_report_requests_inspection", "company_id", "testing", "inspection_id"),
    )

    id: str = Field(default_factory=new_id, primary_key=True, max_length=24)
    inspection_id: str = Field(max_length=24)
    company_id: str = Field(max_length=64)
    testing: bool = False
    status: str = Field(default="pending", max_length=16)
    callback_url: str | None = Field(default=None, max_length=2048)
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
    processing_at: datetime | None = Field(
        default=None, sa_column=Column(UtcDateTime(), nullable=True)
    )
    completed_at: datetime | None = Field(
        default=None, sa_column=Column(UtcDateTime(), nullable=True)
    )
    failed_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime(), nullable=True))
    #: Where the PDF is in the blob store (set on completion).
    blob_key: str | None = Field(default=None, max_length=500)
    size: int | None = None
    #: Why the last attempt failed (kept for operators; not part of the API object).
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class JobRecord(SQLModel, table=True):
    """A unit of background work. `status`: queued, running, done, failed."""

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_claim", "status", "run_at"),
        Index("ix_jobs_lease", "status", "locked_until"),
    )

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=32)
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    status: str = Field(default="queued", max_length=16)
    attempts: int = 0
    max_attempts: int = 5
    run_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
    #: Lease: a running job whose lease is in the past belongs to a dead worker.
    locked_until: datetime | None = Field(
        default=None, sa_column=Column(UtcDateTime(), nullable=True)
    )
    #: Claim token of the current holder; every write of a holder checks it (fencing).
    locked_by: str | None = Field(default=None, max_length=64)
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(
        default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False)
    )
    finished_at: datetime | None = Field(
        default=None, sa_column=Column(UtcDateTime(), nullable=True)
    )


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
