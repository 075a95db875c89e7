"""The review's operations, shared by the API and the dashboard's review pages.

Each change goes through the inspection service's `change` (one locked transaction: the
runtime's pure function, the saved state, the queue and decision rows, the webhook events);
reads of the queue and of decisions use their own narrow tables (`review_tables`), never the
inspections' documents in bulk.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import func, select
from sqlmodel import Session

from runtime import InspectionState
from runtime import review as runtime_review
from server.auth import AuthContext
from server.common import run_runtime
from server.db import Database
from server.inspections import service as inspections
from server.inspections.deliveries import deliver_retake
from server.inspections.review_tables import ReviewDecisionRecord, ReviewQueueRecord
from server.settings import Settings

#: Cases per page of the review queue.
QUEUE_PAGE_SIZE = 50
#: Most decisions one CSV export holds (newest first).
MAX_CSV_ROWS = 100_000

Who = dict[str, str]


def api_actor(auth: AuthContext) -> Who:
    """Who acts through the API: the key (its id), named as such in the audit trail."""
    return {"id": f"key:{auth.key_id}", "name": f"API key {auth.key_id[:8]}"}


def _document(settings: Settings, loaded: inspections.Loaded, state: InspectionState) -> Any:
    return inspections.to_document(loaded.program, state, loaded.record, settings.public_url)


def review(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    body: Any,
    who: Who,
    now: datetime,
) -> dict[str, Any]:
    """`POST /v1/inspection/:id/review`: the Inspection after the person's results (and
    decision); `inspection_reviewed` is published on a decision."""

    def operation(loaded: inspections.Loaded) -> InspectionState:
        return run_runtime(runtime_review.review, loaded.program, loaded.state, body, who, now=now)

    def events(
        loaded: inspections.Loaded, state: InspectionState
    ) -> list[tuple[str, dict[str, Any]]]:
        if state.status == "completed" and loaded.state.status == "review":
            return [("inspection_reviewed", {"previousStatus": "review"})]
        return []

    loaded, state = inspections.change(db, auth, inspection_id, operation, now, events=events)
    return cast(dict[str, Any], _document(settings, loaded, state))


def retake(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    body: Any,
    who: Who,
    now: datetime,
) -> dict[str, Any]:
    """`POST /v1/inspection/:id/retake`: the slots reopen and a new link carries the message
    through the inspection's channel (202 with the link and the delivery)."""
    sent: dict[str, Any] = {}

    def operation(loaded: inspections.Loaded) -> InspectionState:
        return run_runtime(runtime_review.retake, loaded.program, loaded.state, body, who, now=now)

    def events(
        loaded: inspections.Loaded, state: InspectionState
    ) -> list[tuple[str, dict[str, Any]]]:
        return [("retake_requested", {"previousStatus": loaded.state.status})]

    def deliver(session: Session, loaded: inspections.Loaded, state: InspectionState) -> None:
        assert state.retake is not None
        link, delivery = deliver_retake(session, settings, loaded.record, state.retake.message, now)
        sent.update(magicLink=link, delivery=delivery)

    _loaded, state = inspections.change(
        db, auth, inspection_id, operation, now, events=events, after=deliver
    )
    return {
        "message": "Retake requested",
        "status": state.status,
        "images": list(body["images"]) if isinstance(body, dict) else [],
        **sent,
    }


def claim(
    db: Database,
    auth: AuthContext,
    inspection_id: str,
    who: Who,
    now: datetime,
    *,
    release: bool = False,
) -> InspectionState:
    """Take (or give back) a case of the queue; 409 `review_conflict` when someone holds it."""

    def operation(loaded: inspections.Loaded) -> InspectionState:
        return run_runtime(
            runtime_review.claim, loaded.program, loaded.state, who, release=release, now=now
        )

    return inspections.change(db, auth, inspection_id, operation, now)[1]


# --- reading -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueuePage:
    items: list[ReviewQueueRecord]
    total: int
    mine: int
    page: int
    pages: int


def _queue_filter(auth: AuthContext) -> Any:
    return (
        cast(Any, ReviewQueueRecord.company_id) == auth.company_id,
        cast(Any, ReviewQueueRecord.testing) == auth.testing,
    )


def queue(db: Database, auth: AuthContext, who_id: str, page: int = 1) -> QueuePage:
    """The company's inspections in `review`, oldest first, one page."""
    table = cast(Any, ReviewQueueRecord)
    with db.session() as session:
        total = queue_count(session, auth)
        mine = session.execute(
            select(func.count()).where(*_queue_filter(auth), table.assignee_id == who_id)
        ).scalar_one()
        pages = max(1, -(-total // QUEUE_PAGE_SIZE))
        page = min(max(page, 1), pages)
        items = list(
            session.execute(
                select(ReviewQueueRecord)
                .where(*_queue_filter(auth))
                .order_by(table.since, table.inspection_id)
                .offset((page - 1) * QUEUE_PAGE_SIZE)
                .limit(QUEUE_PAGE_SIZE)
            )
            .scalars()
            .all()
        )
    return QueuePage(items, total, int(mine), page, pages)


def queue_count(session: Session, auth: AuthContext) -> int:
    """How many inspections wait for a person (the navigation's count)."""
    return int(session.execute(select(func.count()).where(*_queue_filter(auth))).scalar_one())


def count_waiting(db: Database, auth: AuthContext) -> int:
    with db.session() as session:
        return queue_count(session, auth)


CSV_COLUMNS = (
    "decided_at",
    "inspection_id",
    "type",
    "template",
    "veredict",
    "reason",
    "reviewer_id",
    "reviewer",
    "waited_seconds",
)


def decisions_csv(db: Database, auth: AuthContext) -> Iterator[str]:
    """Every decision of the company (newest first) as CSV lines, header first."""
    table = cast(Any, ReviewDecisionRecord)
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(values: list[Any]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([_cell(v) for v in values])
        return buffer.getvalue()

    yield line(list(CSV_COLUMNS))
    with db.session() as session:
        rows = session.execute(
            select(ReviewDecisionRecord)
            .where(table.company_id == auth.company_id, table.testing == auth.testing)
            .order_by(table.decided_at.desc(), table.id.desc())
            .limit(MAX_CSV_ROWS)
        ).scalars()
        for row in rows:
            yield line(
                [
                    row.decided_at.isoformat(),
                    row.inspection_id,
                    row.type,
                    row.template_name,
                    row.veredict,
                    row.reason,
                    row.reviewer_id,
                    row.reviewer_name,
                    row.waited_seconds,
                ]
            )


def _cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run as a formula (OWASP CSV injection)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return "" if value is None else value
