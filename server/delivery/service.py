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

from sqlalchemy import JSON, column, insert, table, text, update
from sqlmodel import Session, col, select

from runtime import new_object_id
from server.db import Database
from server.delivery.destinations import Destination, masked
from server.delivery.messages import texts_locale
from server.delivery.tables import LinkDeliveryRecord, OutboxMessageRecord
from server.jobs import enqueue, enqueue_rows, enqueued, job_row

#: The job kind (registered in `server.app.job_kinds`).
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


def view(record: LinkDeliveryRecord | dict[str, Any]) -> dict[str, Any]:
    """The Inspection object's `delivery`, of a delivery record or of its row."""
    get = record.get if isinstance(record, dict) else record.__getattribute__
    status = get("status")
    return {
        "channel": get("channel"),
        "destination": masked(str(get("destination"))),
        "status": status if status != "sending" else "queued",
        "attempts": get("attempts"),
        "sentAt": _timestamp(get("sent_at")),
        "lastError": get("last_error"),
    }


def disabled_view() -> dict[str, Any]:
    return {"status": "disabled", "attempts": 0, "sentAt": None, "lastError": None}


def _timestamp(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_row(
    planned: PlannedDelivery, inspection_id: str, company_id: str, testing: bool, now: datetime
) -> dict[str, Any]:
    """A delivery's `link_deliveries` row, queued (a plain row: creation writes many at once)."""
    return {
        "id": planned.id,
        "inspection_id": inspection_id,
        "company_id": company_id,
        "testing": testing,
        "channel": planned.destination.channel,
        "destination": planned.destination.address,
        "locale": planned.locale,
        "status": "queued",
        "attempts": 0,
        "provider": None,
        "provider_message_id": None,
        "last_error": None,
        "link": planned.link,
        "expires_at": planned.expires_at,
        "created_at": now,
        "sent_at": None,
    }


def new_record(
    planned: PlannedDelivery, inspection_id: str, company_id: str, testing: bool, now: datetime
) -> LinkDeliveryRecord:
    return LinkDeliveryRecord(**new_row(planned, inspection_id, company_id, testing, now))


def add(session: Session, record: LinkDeliveryRecord) -> None:
    """Write the delivery and its job in the caller's transaction (a resend)."""
    session.add(record)
    enqueue(session, DELIVERY_JOB, {"deliveryId": record.id}, max_attempts=MAX_ATTEMPTS)


#: Built once, run with parameter dicts by `add_many` (creations write in batches).
_INSERT_DELIVERIES = insert(LinkDeliveryRecord.__table__)  # type: ignore[attr-defined]


#: PostgreSQL: a batch's deliveries and their jobs in ONE statement (a data-modifying CTE over
#: arrays): a group commit of creations with deliveries pays one more statement, whatever its
#: size, not two, and the job's payload is built by the database, not serialized in Python.
_INSERT_DELIVERIES_AND_JOBS = text(
    """
WITH delivery AS (
    INSERT INTO link_deliveries (id, inspection_id, company_id, testing, channel, destination,
        locale, status, attempts, link, expires_at, created_at)
    SELECT id, inspection_id, company_id, testing, channel, destination, locale, 'queued', 0,
        link, expires_at, created_at
    FROM unnest(CAST(:id AS text[]), CAST(:inspection_id AS text[]),
        CAST(:company_id AS text[]), CAST(:testing AS boolean[]), CAST(:channel AS text[]),
        CAST(:destination AS text[]), CAST(:locale AS text[]), CAST(:link AS text[]),
        CAST(:expires_at AS timestamptz[]), CAST(:created_at AS timestamptz[]))
        AS batch (id, inspection_id, company_id, testing, channel, destination, locale, link,
            expires_at, created_at)
    RETURNING id
)
INSERT INTO jobs (kind, payload, status, attempts, max_attempts, run_at, created_at)
SELECT :kind, json_build_object('deliveryId', id), 'queued', 0, :max_attempts, :now, :now
FROM delivery
"""
)
#: The `new_row` fields `_INSERT_DELIVERIES_AND_JOBS` takes, one array each.
_BATCH_FIELDS = (
    "id",
    "inspection_id",
    "company_id",
    "testing",
    "channel",
    "destination",
    "locale",
    "link",
    "expires_at",
    "created_at",
)


def add_many(session: Session, rows: list[dict[str, Any]]) -> None:
    """Write delivery rows (`new_row`, queued) and their jobs in the caller's transaction (the
    creations' group commit: an ORM object and flush per delivery cost a fifth of a create).

    PostgreSQL: one statement for the whole batch (`_INSERT_DELIVERIES_AND_JOBS`); SQLite, in
    process, has no round trip to save: one executemany per table."""
    if not rows:
        return
    if session.get_bind().dialect.name != "postgresql":
        session.execute(_INSERT_DELIVERIES, rows)
        enqueue_rows(
            session,
            [
                job_row(DELIVERY_JOB, {"deliveryId": row["id"]}, max_attempts=MAX_ATTEMPTS)
                for row in rows
            ],
        )
        return
    job = job_row(DELIVERY_JOB, {}, max_attempts=MAX_ATTEMPTS)
    params: dict[str, Any] = {field: [row[field] for row in rows] for field in _BATCH_FIELDS}
    params.update(kind=job["kind"], max_attempts=job["max_attempts"], now=job["run_at"])
    session.execute(_INSERT_DELIVERIES_AND_JOBS, params)
    enqueued()


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


def latest(session: Session, inspection_id: str) -> LinkDeliveryRecord | None:
    """The inspection's newest delivery: the one whose link works now (a resend replaces the
    access code), or None when its link was never delivered."""
    return (
        session.execute(
            select(LinkDeliveryRecord)
            .where(col(LinkDeliveryRecord.inspection_id) == inspection_id)
            .order_by(col(LinkDeliveryRecord.created_at).desc())
        )
        .scalars()
        .first()
    )


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


def outbox_messages(
    db: Database,
    limit: int = 50,
    *,
    prefix: str | None = None,
    to: str | None = None,
    oldest_first: bool = False,
) -> list[OutboxMessageRecord]:
    """The development outbox, newest first (or oldest first); optionally only the messages
    whose delivery id starts with `prefix` (the dashboard's own) or sent to `to`."""
    order = col(OutboxMessageRecord.id)
    statement = select(OutboxMessageRecord).order_by(order if oldest_first else order.desc())
    if prefix is not None:
        statement = statement.where(col(OutboxMessageRecord.delivery_id).startswith(prefix))
    if to is not None:
        statement = statement.where(col(OutboxMessageRecord.to) == to)
    with db.session() as session:
        return list(session.execute(statement.limit(limit)).scalars())
