"""The review queue and the decisions as rows, kept in step with the inspections.

`sync` is called by the inspection service's `save`, in the transaction of every change: an
inspection entering `review` gets its queue row, one leaving it loses it, a claim updates its
assignee, and each new decision gets a `review_decisions` row. Nothing else writes these rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import func, select
from sqlmodel import Session

from runtime import InspectionState, Program, new_object_id
from runtime.routing import pending
from runtime.wording import REVIEW_REASON_FIELDS
from server.auth import AuthContext
from server.db import Database
from server.inspections.review_tables import ReviewDecisionRecord, ReviewQueueRecord

#: Reasons kept on a queue row: the queue page shows them all (a case has a reason per
#: photo and validation that waits, and the retake's; more than this is not a real template).
MAX_REASONS = 50
#: Longest reason message kept on a queue row.
MAX_REASON_CHARS = 300


def _moment(value: str | None, default: datetime) -> datetime:
    if not value:
        return default
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def _queued_reason(reason: dict[str, Any]) -> dict[str, Any]:
    """A reason as the queue keeps it: its code, message and the fields its message is made of
    (bounded), so the queue page re-words it in the reviewer's language."""
    kept: dict[str, Any] = {"code": reason["code"], "message": str(reason["message"])}
    for name in REVIEW_REASON_FIELDS.get(str(reason["code"]), ()):
        if name in reason:
            value = reason[name]
            kept[name] = value if isinstance(value, (int, float)) else str(value)
    return {
        key: value[:MAX_REASON_CHARS] if isinstance(value, str) else value
        for key, value in kept.items()
    }


def _names(state: InspectionState) -> tuple[str | None, str | None]:
    """The plate (else the first declared value) and the consumer's name, bounded."""
    data = state.products[0].data if state.products else {}
    plate = data.get("plate") or next(
        (v for v in data.values() if isinstance(v, (str, int)) and v not in ("", None)), None
    )
    consumer = state.consumer or {}
    name = " ".join(str(consumer.get(k) or "") for k in ("firstName", "lastName")).strip()
    return (str(plate)[:200] if plate not in (None, "") else None), (name[:200] or None)


def sync(
    session: Session,
    *,
    program: Program,
    inspection_id: str,
    company_id: str,
    testing: bool,
    before: InspectionState,
    after: InspectionState,
    now: datetime,
) -> None:
    """Bring the queue row and the decision rows of one inspection in line with `after`."""
    row = session.get(ReviewQueueRecord, inspection_id) if before.status == "review" else None
    review = after.review
    if after.status == "review" and review is not None:
        if row is None:
            row = ReviewQueueRecord(
                inspection_id=inspection_id,
                company_id=company_id,
                testing=testing,
                type=after.type,
                template_name=after.template.name[:200],
                since=_moment(review.since, now),
            )
        row.since = _moment(review.since, now)
        row.reasons = [_queued_reason(r) for r in review.reasons[:MAX_REASONS]]
        row.pending = len(pending(program, after))
        row.product, row.consumer_name = _names(after)
        row.assignee_id = review.assignee["id"] if review.assignee else None
        row.assignee_name = review.assignee["name"][:200] if review.assignee else None
        session.add(row)
    elif row is not None:
        session.delete(row)
    old = len(before.review.decisions) if before.review is not None else 0
    for decision in review.decisions[old:] if review is not None else []:
        decided = _moment(decision["at"], now)
        first = (review.firstSince or review.since) if review is not None else None
        since = _moment(first, decided)
        session.add(
            ReviewDecisionRecord(
                id=new_object_id(),
                inspection_id=inspection_id,
                company_id=company_id,
                testing=testing,
                type=after.type,
                template_name=after.template.name[:200],
                decided_at=decided,
                reviewer_id=decision["by"]["id"][:64],
                reviewer_name=decision["by"]["name"][:200],
                veredict=decision["veredict"],
                reason=decision["reason"],
                waited_seconds=max(0, int((decided - since).total_seconds())),
            )
        )


def count_waiting(db: Database, auth: AuthContext) -> int:
    """How many of the company's inspections (in the key mode) wait in `review`."""
    table = ReviewQueueRecord.__table__  # type: ignore[attr-defined]
    with db.engine.connect() as connection:
        return int(
            connection.execute(
                select(func.count()).where(
                    table.c.company_id == auth.company_id, table.c.testing == auth.testing
                )
            ).scalar_one()
        )


@dataclass(frozen=True, slots=True)
class QueuePage:
    """One page of the queue, oldest first, with the totals the page shows."""

    items: list[ReviewQueueRecord]
    total: int
    mine: int
    page: int
    pages: int


def _mine(auth: AuthContext) -> Any:
    return (
        cast(Any, ReviewQueueRecord.company_id) == auth.company_id,
        cast(Any, ReviewQueueRecord.testing) == auth.testing,
    )


def queue_page(db: Database, auth: AuthContext, who_id: str, page: int, size: int) -> QueuePage:
    """The company's inspections in `review`, oldest first (index `ix_review_queue_oldest`)."""
    table = cast(Any, ReviewQueueRecord)
    total = count_waiting(db, auth)
    pages = max(1, -(-total // size))
    page = min(max(page, 1), pages)
    with db.session() as session:
        held = session.execute(
            select(func.count()).where(*_mine(auth), table.assignee_id == who_id)
        ).scalar_one()
        items = list(
            session.execute(
                select(ReviewQueueRecord)
                .where(*_mine(auth))
                .order_by(table.since, table.inspection_id)
                .offset((page - 1) * size)
                .limit(size)
            )
            .scalars()
            .all()
        )
    return QueuePage(items, total, int(held), page, pages)


def decisions(db: Database, auth: AuthContext, limit: int) -> Iterator[ReviewDecisionRecord]:
    """The company's decisions, newest first (streamed while the caller reads them)."""
    table = cast(Any, ReviewDecisionRecord)
    with db.session() as session:
        yield from session.execute(
            select(ReviewDecisionRecord)
            .where(table.company_id == auth.company_id, table.testing == auth.testing)
            .order_by(table.decided_at.desc(), table.id.desc())
            .limit(limit)
        ).scalars()
