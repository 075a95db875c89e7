"""Storage tables of the server's resources: templates and their revisions, inspections, products
and images.

An inspection keeps its whole runtime state as JSON (`state`), the Inspection object rendered
from it (`document`, what reads return), and one plain, indexed column for every list filter,
so listing and counting never parse documents. Each filter has a composite
index `(company_id, testing, <filter>, created_at, id)` that serves both the `WHERE` and the
chronological `ORDER BY`, so a deep page costs an index walk, not a sort.

Template revisions are immutable: a changed template is a new `template_revisions` row, and the
manifest an inspection runs on is referenced by its content key in `template_manifests` (built-in
manifests are stored there too, the first time an inspection uses them), so a later revision or a
code upgrade never changes an existing inspection.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from server.tables import UtcDateTime


def _timestamp() -> Any:
    """An aware UTC timestamp column (S1's `UtcDateTime`: the zone survives SQLite too)."""
    return Field(sa_column=Column(UtcDateTime(), nullable=False))


class TemplateManifestRecord(SQLModel, table=True):
    """A compiled manifest, stored once per content key (a hash of its JSON form)."""

    __tablename__ = "template_manifests"

    key: str = Field(primary_key=True, max_length=64)
    template_id: str = Field(max_length=64)
    manifest: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = _timestamp()


class TemplateRecord(SQLModel, table=True):
    """A company's custom template: its stable id, current name and latest revision."""

    __tablename__ = "templates"
    __table_args__ = (
        UniqueConstraint("company_id", "name_key", name="uq_templates_company_name"),
        Index("ix_templates_company_type", "company_id", "inspection_type"),
    )

    id: str = Field(primary_key=True, max_length=24)
    company_id: str = Field(max_length=64)
    name: str = Field(max_length=500)
    #: The name folded to lower case with spaces collapsed: names are unique per company on this.
    name_key: str = Field(max_length=500)
    inspection_type: str = Field(max_length=16)
    latest_revision: int = 1
    manifest_key: str = Field(foreign_key="template_manifests.key", max_length=64)
    created_at: datetime = _timestamp()
    updated_at: datetime = _timestamp()


class TemplateRevisionRecord(SQLModel, table=True):
    """One revision of a custom template: the source as written and the manifest it compiled to."""

    __tablename__ = "template_revisions"
    __table_args__ = (
        UniqueConstraint("template_id", "number", name="uq_template_revisions_number"),
    )

    pk: int | None = Field(default=None, primary_key=True)
    template_id: str = Field(foreign_key="templates.id", max_length=24)
    number: int
    source: str
    manifest_key: str = Field(foreign_key="template_manifests.key", max_length=64)
    created_at: datetime = _timestamp()


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
        # The expiry sweep's query: `status IN (expirable) AND expires_at <= now`.
        Index("ix_inspections_expiry", "status", "expires_at"),
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
    manifest_key: str = Field(foreign_key="template_manifests.key", max_length=64)
    #: SHA-256 hex of the magic link's access code (the code itself is never stored).
    access_code_hash: str = Field(max_length=64)
    #: The creation request's `callbackURL` (events of this inspection are sent there).
    callback_url: str | None = Field(default=None, max_length=2048)
    created_at: datetime = _timestamp()
    updated_at: datetime = _timestamp()
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
    created_at: datetime = _timestamp()
