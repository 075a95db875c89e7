"""The table of report requests: one row per request, with the blob key of its PDF once
completed.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Index, Text
from sqlmodel import Field, SQLModel

from server.tables import UtcDateTime, new_id, utcnow


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
