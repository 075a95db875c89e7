"""The table of uploaded images and file inputs: where their bytes are in the blob store."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from server.tables import timestamp_field


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
