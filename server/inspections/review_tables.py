"""Tables of the review: the queue (one row per inspection in `review`) and the decisions.

Both are written in the transaction that changes the inspection (`server.review.queue.sync`,
called by the inspection service's `save`), so the queue is exactly the inspections in
`review` and every decision has its row; the queue page and the decisions CSV read these
narrow rows instead of the inspections' JSON documents.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, Text
from sqlmodel import Field, SQLModel

from server.tables import timestamp_field


class ReviewQueueRecord(SQLModel, table=True):
    """An inspection waiting for a person: since when, why, who holds it."""

    __tablename__ = "review_queue"
    __table_args__ = (
        # The queue page: a company's cases, oldest first.
        Index("ix_review_queue_oldest", "company_id", "testing", "since", "inspection_id"),
    )

    inspection_id: str = Field(foreign_key="inspections.id", primary_key=True, max_length=24)
    company_id: str = Field(max_length=64)
    testing: bool
    type: str = Field(max_length=16)
    template_name: str = Field(max_length=200)
    #: When the inspection entered `review`.
    since: datetime = timestamp_field()
    #: `review.reasons` as `[{code, message}]` (at most `review_queue.MAX_REASONS`).
    reasons: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON))
    pending: int = 0
    #: What names the case for a reviewer: the declared plate (else the product's first
    #: declared value) and the consumer's name (0012_review_queue_facts).
    product: str | None = Field(default=None, max_length=200)
    consumer_name: str | None = Field(default=None, max_length=200)
    assignee_id: str | None = Field(default=None, max_length=64)
    assignee_name: str | None = Field(default=None, max_length=200)


class ReviewDecisionRecord(SQLModel, table=True):
    """A person's decision on an inspection (the CSV export of decisions reads these)."""

    __tablename__ = "review_decisions"
    __table_args__ = (
        Index("ix_review_decisions_company", "company_id", "testing", "decided_at", "id"),
    )

    id: str = Field(primary_key=True, max_length=24)
    inspection_id: str = Field(foreign_key="inspections.id", index=True, max_length=24)
    company_id: str = Field(max_length=64)
    testing: bool
    type: str = Field(max_length=16)
    template_name: str = Field(max_length=200)
    decided_at: datetime = timestamp_field()
    reviewer_id: str = Field(max_length=64)
    reviewer_name: str = Field(max_length=200)
    veredict: str = Field(max_length=16)
    reason: str = Field(sa_column=Column(Text, nullable=False))
    #: Seconds from entering `review` to the decision.
    waited_seconds: int | None = None
