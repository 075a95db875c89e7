"""Tables of the server's shared plumbing: companies, their members and API keys, idempotency
records and the durable job queue, plus the column helpers every table module uses.

Each resource keeps its own tables beside its controller and service (`server/<resource>/
tables.py`); `server.db.TABLE_MODULES` lists them all.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Dialect, Index, LargeBinary, Text, UniqueConstraint
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    """24 random hex characters, the shape of the spec's `_id` values."""
    return secrets.token_hex(12)


class UtcDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime on every backend (SQLite stores it naive; we add the zone back)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given for a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime):
            raise TypeError(f"expected a datetime, got {type(value).__name__}")
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _timestamp(nullable: bool = False, index: bool = False) -> Column[datetime]:
    """A `UtcDateTime` column; a new Column object per field, as SQLAlchemy requires."""
    return Column(UtcDateTime(), nullable=nullable, index=index)


def timestamp_field() -> Any:
    """A required aware UTC timestamp field (`UtcDateTime`: the zone survives SQLite too)."""
    return Field(sa_column=_timestamp())


class Company(SQLModel, table=True):
    __tablename__ = "companies"

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    name: str = Field(max_length=200)
    #: Inspections created with the live key (test inspections are never counted).
    consumed_inspections: int = Field(default=0)
    #: Secret for signing webhook payloads (R's `server.webhooks` rotates it).
    webhook_secret: str | None = Field(default=None, max_length=200)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_timestamp())


class Member(SQLModel, table=True):
    """A company member; `producer.internalId` in a creation request names one."""

    __tablename__ = "members"
    __table_args__ = (UniqueConstraint("company_id", "internal_id", name="uq_members_internal_id"),)

    id: str = Field(default_factory=new_id, primary_key=True, max_length=32)
    company_id: str = Field(foreign_key="companies.id", index=True, max_length=32)
    internal_id: str = Field(max_length=200)
    name: str | None = Field(default=None, max_length=200)
    email: str | None = Field(default=None, max_length=320)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_timestamp())


class ApiKey(SQLModel, table=True):
    """An API key, stored as a SHA-256 hash; `id` is the public part embedded in the key."""

    __tablename__ = "api_keys"

    id: str = Field(primary_key=True, max_length=32)
    company_id: str = Field(foreign_key="companies.id", index=True, max_length=32)
    mode: str = Field(max_length=8)
    key_hash: str = Field(max_length=64)
    created_at: datetime = Field(default_factory=utcnow, sa_column=_timestamp())
    revoked_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))


class IdempotencyRecord(SQLModel, table=True):
    """The first response to an `Idempotency-Key`, claimed before the handler runs."""

    __tablename__ = "idempotency_records"
    __table_args__ = (
        UniqueConstraint("company_id", "mode", "key", name="uq_idempotency_company_mode_key"),
    )

    id: int | None = Field(default=None, primary_key=True)
    company_id: str = Field(max_length=32)
    mode: str = Field(max_length=8)
    key: str = Field(max_length=255)
    #: sha256 of method, path and raw body.
    fingerprint: str = Field(max_length=64)
    #: None while the first request is in flight.
    status_code: int | None = Field(default=None)
    content_type: str | None = Field(default=None, max_length=200)
    body: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    created_at: datetime = Field(default_factory=utcnow, sa_column=_timestamp())
    expires_at: datetime = Field(sa_column=_timestamp(index=True))
    #: The process running the first request (host, pid, a token of its store), while in flight.
    owner: str | None = Field(default=None, max_length=100)
    #: While in flight: until when the owner holds the key; it renews the lease as it runs, so
    #: a lease that lapsed means its owner died and the next retry takes the key over.
    lease_expires_at: datetime | None = Field(default=None, sa_column=_timestamp(nullable=True))


class JobRecord(SQLModel, table=True):
    """A unit of background work (`server.jobs`). `status`: queued, running, done, failed.

    A job is inserted in the same transaction as the row it works on, so a committed request
    always has its job and a rolled back one never."""

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


class BlobChunk(SQLModel, table=True):
    """One chunk of a blob kept in the database (`server.blobs.DatabaseBlobStore`, the
    `postgresql` blob URL): a blob is the chunks of its key in `seq` order."""

    __tablename__ = "blob_chunks"

    key: str = Field(primary_key=True, max_length=512)
    seq: int = Field(primary_key=True)
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class ReadyProbe(SQLModel, table=True):
    """The row the readiness probe writes on PostgreSQL (`Database.check_writable`): an UPSERT
    committed in a short transaction of its own, so `/ready` fails when writes fail (a
    read-only database, a full disk), not only when the database stops answering."""

    __tablename__ = "ready_probe"

    name: str = Field(primary_key=True, max_length=32)
    written_at: datetime = timestamp_field()


class RateLimitCounter(SQLModel, table=True):
    """Requests of one API key (`bucket`) in one fixed window (`server.ratelimit`), shared by
    every API process through the database."""

    __tablename__ = "rate_limit_counters"

    bucket: str = Field(primary_key=True, max_length=96)
    window_start: int = Field(primary_key=True)
    count: int = 0
