"""Link deliveries as records: planned at creation (or resend), written with their job, shown
on the Inspection object. Sending them is `server.inspections.deliveries` (it publishes the
inspection's events); the providers are `server.delivery.providers`.

One delivery is one `link_deliveries` row and one `link_delivery` job, both written in the
transaction that creates the inspection (or records the resend), so a delivery exists exactly
when its inspection does. The job's attempt marks the row `sending` before it hands the message
to the provider and `sent` in the transaction that completes the job; a worker that dies in
between leaves `sending`, and the next attempt first asks the provider whether it accepted the
message (`find_sent`) before sending again. docs/delivery.md states the guarantee per provider.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import JSON, column, table, update
from sqlmodel import Session, col, select

from runtime import new_object_id
from server.db import Database
from server.delivery.destinations import Destination, masked
from server.delivery.messages import texts_locale
from server.delivery.tables import LinkDeliveryRecord, OutboxMessageRecord
from server.jobs import enqueue

#: The job kind (`server.jobs.HANDLERS`).
DELIVERY_JOB = "link_delivery"
#: Attempts before a delivery fails for good (about two hours of backoff with the defaults).
MAX_ATTEMPTS = 8
#: Resends allowed per inspection in `RESEND_WINDOW` (the creation's delivery not counted).
MAX_RESENDS = 3
RESEND_WINDOW = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class PlannedDelivery:
    """A delivery decided by a request, written in its transaction by `add`."""

    id: str
    destination: Destination
    locale: str
    link: str
    expires_at: datetime | None


def plan(
    destination: Destination, locale: str | None, link: str, expires_at: datetime | None
) -> PlannedDelivery:
    return PlannedDelivery(new_object_id(), destination, texts_locale(locale), link, expires_at)


def view(record: LinkDeliveryRecord) -> dict[str, Any]:
    """The Inspection object's `delivery`."""
    return {
        "channel": record.channel,
        "destination": masked(record.destination),
        "status": record.status if record.status != "sending" else "queued",
        "attempts": record.attempts,
        "sentAt": _timestamp(record.sent_at),
        "lastError": record.last_error,
    }


def disabled_view() -> dict[str, Any]:
    return {"status": "disabled", "attempts": 0, "sentAt": None, "lastError": None}


def _timestamp(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_record(
    planned: PlannedDelivery, inspection_id: str, company_id: str, testing: bool, now: datetime
) -> LinkDeliveryRecord:
    return LinkDeliveryRecord(
        id=planned.id,
        inspection_id=inspection_id,
        company_id=company_id,
        testing=testing,
        channel=planned.destination.channel,
        destination=planned.destination.address,
        locale=planned.locale,
        status="queued",
        attempts=0,
        link=planned.link,
        expires_at=planned.expires_at,
        created_at=now,
    )


def add(session: Session, record: LinkDeliveryRecord) -> None:
    """Write the delivery and its job in the caller's transaction (creation, resend)."""
    session.add(record)
    enqueue(session, DELIVERY_JOB, {"deliveryId": record.id}, max_attempts=MAX_ATTEMPTS)


#: The inspections table's columns this module writes (named here: resources below
#: `server.inspections` do not import it).
_INSPECTIONS = table("inspections", column("id"), column("delivery", JSON))


def set_view(session: Session, record: LinkDeliveryRecord) -> None:
    """The inspection row's `delivery` view, in one statement (no read-modify-write)."""
    session.execute(
        update(_INSPECTIONS)
        .where(_INSPECTIONS.c.id == record.inspection_id)
        .values(delivery=view(record))
    )


# --- the job ------------------------------------------------------------------------------------


# --- resends --------------------------------------------------------------------------------------


def resend_wait(session: Session, inspection_id: str, now: datetime) -> float | None:
    """Seconds until another resend is allowed, or None when one is allowed now: at most
    `MAX_RESENDS` in any `RESEND_WINDOW` (the creation's own delivery is not a resend)."""
    rows = session.execute(
        select(LinkDeliveryRecord.created_at)
        .where(col(LinkDeliveryRecord.inspection_id) == inspection_id)
        .order_by(col(LinkDeliveryRecord.created_at))
    ).all()
    resends = [created for (created,) in rows[1:] if created > now - RESEND_WINDOW]
    if len(resends) < MAX_RESENDS:
        return None
    oldest: datetime = resends[-MAX_RESENDS]
    return float(max(1.0, (oldest + RESEND_WINDOW - now).total_seconds()))


# --- the outbox ---------------------------------------------------------------------------------


def outbox_messages(db: Database, limit: int = 50) -> list[OutboxMessageRecord]:
    """The development outbox, newest first."""
    with db.session() as session:
        rows = session.execute(
            select(OutboxMessageRecord).order_by(col(OutboxMessageRecord.id).desc()).limit(limit)
        ).scalars()
        return list(rows)
