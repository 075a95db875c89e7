"""Tables of inspections, their products and their stored files.

An inspection keeps its whole runtime state as JSON (`state`), the Inspection object rendered
from it (`document`, what reads return), and one plain, indexed column for every list filter,
so listing and counting never parse documents. Each filter has a composite
index `(company_id, testing, <filter>, created_at, id)` that serves both the `WHERE` and the
chronological `ORDER BY`, so a deep page costs an index walk, not a sort.

The files of an inspection (`ImageRecord`: uploaded images and file inputs) are here too, not in
`server/images/`: creating an inspection writes its file inputs, and uploads (`server/images/`)
change inspections, so the inspections package must not import the images package.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, Index, Text
from sqlmodel import Field, SQLModel

from server.tables import UtcDateTime, timestamp_field


def _filter_index(column: str) -> Index:
    return Index(f"ix_inspections_{column}", "company_id", "testing", column, "created_at", "id")


class InspectionRecord(SQLModel, table=True):
    """An inspection: its runtime state as JSON and the columns the list endpoint filters on."""

    __tablename__ = "inspections"
    __table_args__ = (
        Index("ix_inspections_chronological", "company_id", "testing", "created_at", "id"),
        _filter_index("status"),
        _filter_index("veredict"),
        _filter_index("type"),
        _filter_index("consumer_identification"),
        _filter_index("plate"),
        _filter_index("template_id"),
        _filter_index("producer_id"),
        # The expiry sweep's query: `status IN (expirable) AND expires_at <= now`.
        Index("ix_inspections_expiry", "status", "expires_at"),
        # The dashboard's search has a trigram index on PostgreSQL, made by its migration
        # (0006_search: it needs the pg_trgm extension): `migrate.MIGRATION_ONLY_INDEXES`.
    )

    id: str = Field(primary_key=True, max_length=24)
    company_id: str = Field(max_length=64)
    #: Created with the company's test key: visible only to the test key.
    testing: bool
    type: str = Field(max_length=16)
    status: str = Field(max_length=16)
    veredict: str = Field(max_length=16)
    consumer_identification: str | None = Field(default=None, max_length=200)
    plate: str | None = Field(default=None, max_length=200)
    template_id: str = Field(max_length=64)
    #: `producer.userId`: the member (`members.id`) the inspection was made for, when named;
    #: a partner application lists a member's inspections by it.
    producer_id: str | None = Field(default=None, max_length=32)
    manifest_key: str = Field(foreign_key="template_manifests.key", max_length=64)
    #: SHA-256 hex of the magic link's access code (the code itself is never stored).
    access_code_hash: str = Field(max_length=64)
    #: The creation request's `callbackURL` (events of this inspection are sent there).
    callback_url: str | None = Field(default=None, max_length=2048)
    created_at: datetime = timestamp_field()
    updated_at: datetime = timestamp_field()
    #: The state's `expiresAt` (None when the template sets no expiry): the worker's expiry
    #: sweep blocks inspections still open past it.
    expires_at: datetime | None = Field(
        default=None, sa_column=Column(UtcDateTime(), nullable=True)
    )
    state: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    #: The spec's Inspection object of `state` (`runtime.to_api`), rendered at each change so
    #: reads and lists never parse the state or run the runtime. None on rows written without
    #: it (they are rendered from `state` when read).
    document: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: The Inspection object's `delivery` (channel, masked destination, status, attempts,
    #: sentAt, lastError), written by the delivery job in one statement (server/delivery).
    delivery: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    #: What the dashboard's search matches: plate, consumer name, identification, email, id and
    #: metadata values, accent- and case-folded (`server.inspections.search.search_text`),
    #: written with the filter columns. None on rows written before it (they match no search).
    search_text: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class ProductRecord(SQLModel, table=True):
    """Maps a product id to its inspection, for the routes addressed by product id."""

    __tablename__ = "inspection_products"

    id: str = Field(primary_key=True, max_length=24)
    inspection_id: str = Field(foreign_key="inspections.id", max_length=24, index=True)
    company_id: str = Field(max_length=64)
    testing: bool
    type: str = Field(max_length=16)


class ImageRecord(SQLModel, table=True):
    """An uploaded image or file input: where its bytes are in the blob store, and whose it is."""

    __tablename__ = "inspection_images"

    id: str = Field(primary_key=True, max_length=24)
    inspection_id: str = Field(foreign_key="inspections.id", max_length=24, index=True)
    product_id: str | None = Field(default=None, max_length=24)
    company_id: str = Field(max_length=64)
    testing: bool
    #: `image` (an image record of the inspection) or `input` (a file input's stored file).
    kind: str = Field(default="image", max_length=16)
    blob_key: str = Field(max_length=500)
    content_type: str = Field(max_length=200)
    size: int
    filename: str | None = Field(default=None, max_length=500)
    created_at: datetime = timestamp_field()


class InspectionCountRecord(SQLModel, table=True):
    """How many inspections have these company, key mode, status, veredict and type (summed
    over `shard`): kept exact by triggers on `inspections` (`server.inspections.counts`)."""

    __tablename__ = "inspection_counts"

    company_id: str = Field(primary_key=True, max_length=64)
    testing: bool = Field(primary_key=True)
    status: str = Field(primary_key=True, max_length=16)
    veredict: str = Field(primary_key=True, max_length=16)
    type: str = Field(primary_key=True, max_length=16)
    shard: int = Field(primary_key=True)
    count: int = 0


class InspectionHourCountRecord(SQLModel, table=True):
    """How many inspections of a company and key mode were created in an hour (epoch hours,
    UTC) with these status, veredict and type (summed over `shard`): kept exact by triggers on
    `inspections` (`server.inspections.hour_counts`); deep list pages skip whole hours."""

    __tablename__ = "inspection_hour_counts"

    company_id: str = Field(primary_key=True, max_length=64)
    testing: bool = Field(primary_key=True)
    hour: int = Field(primary_key=True, sa_type=BigInteger)
    status: str = Field(primary_key=True, max_length=16)
    veredict: str = Field(primary_key=True, max_length=16)
    type: str = Field(primary_key=True, max_length=16)
    shard: int = Field(primary_key=True)
    count: int = 0


class ShareLinkRecord(SQLModel, table=True):
    """A share link made from the dashboard (a presigned detail token), kept so it can be
    listed and revoked before it expires: `id` is the token's hash (`tokens.hash_token`), never
    the token. Links made through the API's presign have no row and expire on their own."""

    __tablename__ = "inspection_share_links"

    id: str = Field(primary_key=True, max_length=64)
    inspection_id: str = Field(foreign_key="inspections.id", max_length=24, index=True)
    company_id: str = Field(max_length=64)
    testing: bool
    #: The dashboard account that made it.
    created_by: str = Field(max_length=32)
    created_at: datetime = timestamp_field()
    expires_at: datetime = timestamp_field()
    revoked_at: datetime | None = Field(
        default=None, sa_column=Column(UtcDateTime(), nullable=True)
    )
