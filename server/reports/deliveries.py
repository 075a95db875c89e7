"""Recent webhook deliveries (event deliveries and report callbacks) of a company, for the
dashboard's developers page, and retrying one.

A delivery is a job (`webhook` for event deliveries, `report_callback` for report callbacks)
whose payload names its `deliveryId`; each HTTP attempt is a `webhook_attempts` row. Which data
(test or live) a delivery belongs to follows from what it is about: its subscription, its report
request, or the inspection in its body. A retry queues the same job payload again, so the
receiver sees the same `webhook-id` (and can deduplicate) with a fresh signature.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from sqlalchemy import select
from sqlmodel import Session

from server.db import Database
from server.inspections.tables import InspectionRecord
from server.jobs import enqueue
from server.reports.service import CALLBACK_JOB
from server.reports.tables import ReportRequestRecord
from server.tables import JobRecord
from server.webhooks.service import DELIVERY_MAX_ATTEMPTS, WEBHOOK_JOB, attempts_of
from server.webhooks.tables import WebhookAttemptRecord, WebhookSubscriptionRecord

DELIVERY_KINDS = (WEBHOOK_JOB, CALLBACK_JOB)
#: Jobs looked at, newest first, to find a company's recent deliveries.
SCAN_LIMIT = 500


@dataclass
class Delivery:
    delivery_id: str
    event: str
    url: str
    status: str  # queued, running, done, failed
    created_at: datetime
    attempts: list[WebhookAttemptRecord] = field(default_factory=list)

    @property
    def last_status_code(self) -> int | None:
        return self.attempts[-1].status_code if self.attempts else None

    @property
    def last_error(self) -> str | None:
        return self.attempts[-1].error if self.attempts else None


def _testing_of(session: Session, payload: dict[str, Any]) -> bool | None:
    subscription_id = payload.get("subscriptionId")
    if isinstance(subscription_id, str):
        subscription = session.get(WebhookSubscriptionRecord, subscription_id)
        return subscription.testing if subscription is not None else None
    report_id = payload.get("reportRequestId")
    if isinstance(report_id, str):
        report = session.get(ReportRequestRecord, report_id)
        return report.testing if report is not None else None
    body = payload.get("body")
    inner = body.get("payload") if isinstance(body, dict) else None
    inspection_id = inner.get("_id") if isinstance(inner, dict) else None
    if isinstance(inspection_id, str):
        inspection = session.get(InspectionRecord, inspection_id)
        return inspection.testing if inspection is not None else None
    return None


def _jobs(session: Session, company_id: str, testing: bool) -> list[JobRecord]:
    model = cast(Any, JobRecord)
    rows = session.execute(
        select(JobRecord)
        .where(model.kind.in_(DELIVERY_KINDS))
        .order_by(model.id.desc())
        .limit(SCAN_LIMIT)
    ).scalars()
    return [
        job
        for job in rows
        if job.payload.get("companyId") == company_id
        and _testing_of(session, job.payload) is testing
    ]


def recent_deliveries(
    db: Database, company_id: str, testing: bool, limit: int = 20
) -> list[Delivery]:
    """The company's latest deliveries in this mode, newest first, one per delivery id."""
    with db.session() as session:
        jobs = _jobs(session, company_id, testing)
    found: dict[str, Delivery] = {}
    for job in jobs:
        delivery_id = str(job.payload.get("deliveryId"))
        if delivery_id in found:
            continue
        found[delivery_id] = Delivery(
            delivery_id=delivery_id,
            event=str(job.payload.get("event")),
            url=str(job.payload.get("url")),
            status=job.status,
            created_at=job.created_at,
        )
        if len(found) >= limit:
            break
    for delivery in found.values():
        delivery.attempts = attempts_of(db, delivery.delivery_id)
    return list(found.values())


def retry(db: Database, company_id: str, testing: bool, delivery_id: str) -> bool:
    """Queue the delivery again (False when it is not this company's in this mode, or still
    queued or running)."""
    with db.session() as session:
        jobs = [
            job
            for job in _jobs(session, company_id, testing)
            if job.payload.get("deliveryId") == delivery_id
        ]
        if not jobs or jobs[0].status in ("queued", "running"):
            return False
        enqueue(session, jobs[0].kind, dict(jobs[0].payload), max_attempts=DELIVERY_MAX_ATTEMPTS)
        session.commit()
    return True
