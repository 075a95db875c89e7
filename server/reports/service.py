"""Report requests: create, read, list, serve the PDF, and the job that renders it.

A request for a completed inspection inserts the `report_requests` row and its `report` job in
one transaction. The job (any worker) renders the PDF from plain data (`ReportData`), stores it
in the blob store under a key derived from the request id (so a re-run after a crash overwrites
rather than duplicates), then marks the request completed and queues the callback in one
transaction fenced by its job lease: two workers can never both complete it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast

import msgspec
from sqlalchemy import select
from sqlmodel import Session, col

import runtime
from inspectlang.timestamps import utc_timestamp
from runtime.api_view import every_image
from server.auth import AuthContext
from server.blobs import BlobNotFound, BlobStore
from server.db import Database
from server.errors import ApiError
from server.inspections.service import find_inspection, load
from server.inspections.tables import ImageRecord, InspectionRecord
from server.jobs import JobContext, enqueue
from server.reports.links import LinkError, sign_link, verify_link
from server.reports.renderer import (
    ReportData,
    ReportImage,
    ReportRenderer,
    default_renderer,
    reports_available,
)
from server.reports.schemas import (
    ReportRequest,
    ReportRequestBody,
    ReportRequestCreated,
    ReportRequestList,
    ReportResult,
    ReportStatus,
)
from server.reports.tables import ReportRequestRecord
from server.settings import Settings
from server.tables import Company, JobRecord, Member
from server.thumbnails import kept_thumbnail
from server.urlsafety import check_endpoint
from server.web import history
from server.webhooks.service import deliver, enqueue_delivery

logger = logging.getLogger("server.reports")

#: The job kind of a report's callback: a webhook delivery whose body is built at each attempt.
#: The job kinds of a report and of its callback (registered in `server.app.job_kinds`).
REPORT_JOB = "report"
CALLBACK_JOB = "report_callback"
#: Makes the renderer a report job uses (tests swap in a slow one to kill a worker mid-job).
RENDERER_FACTORY: Callable[[], ReportRenderer] = default_renderer
#: Attempts of a report job before the request is marked failed.
REPORT_MAX_ATTEMPTS = 4
#: JPEG quality of the thumbnails a report draws (the dashboard's: 72).
REPORT_QUALITY = 90
#: Inspection statuses a report may be requested for.
REPORTABLE_STATUSES = frozenset({"completed"})


def iso(moment: datetime | None) -> str | None:
    return None if moment is None else utc_timestamp(moment)


def blob_key(record: ReportRequestRecord) -> str:
    return f"reports/{record.company_id}/{record.id}.pdf"


def report_object(record: ReportRequestRecord, settings: Settings) -> ReportRequest:
    """The spec's Report request object; `result.url` (fresh, 15 minutes) only when completed."""
    result: ReportResult | msgspec.UnsetType = msgspec.UNSET
    if record.status == "completed":
        url, expires = sign_link(settings.public_url, settings.secret, record.id)
        result = ReportResult(
            url=url, expiresAt=utc_timestamp(datetime.fromtimestamp(expires, UTC))
        )
    return ReportRequest(
        id=record.id,
        inspectionId=record.inspection_id,
        companyId=record.company_id,
        status=cast(ReportStatus, record.status),
        callbackURL=record.callback_url,
        createdAt=utc_timestamp(record.created_at),
        processingAt=iso(record.processing_at),
        completedAt=iso(record.completed_at),
        failedAt=iso(record.failed_at),
        result=result,
    )


def _unavailable() -> ApiError:
    return ApiError(
        "reports_unavailable",
        503,
        "PDF reports are not available on this server (the `reports` extra is not installed).",
    )


def _find_inspection(session: Session, auth: AuthContext, inspection_id: str) -> InspectionRecord:
    return find_inspection(session, auth, inspection_id, lock=False)


def _find_report(
    session: Session, auth: AuthContext, inspection_id: str, report_id: str
) -> ReportRequestRecord:
    record = session.get(ReportRequestRecord, report_id)
    if (
        record is None
        or record.company_id != auth.company_id
        or record.testing != auth.testing
        or record.inspection_id != inspection_id
    ):
        raise ApiError("report_request_not_found", 404, "No report request with that id.")
    return record


def create_report_request(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    body: ReportRequestBody,
) -> ReportRequestCreated:
    """Queue a report of a completed inspection: `{_id}` (201)."""
    callback = body.callbackURL
    callback_url = None if callback in (None, "") else check_endpoint(callback, settings)
    with db.session(immediate=True) as session:
        inspection = _find_inspection(session, auth, inspection_id)
        if not reports_available():
            raise _unavailable()
        if inspection.status not in REPORTABLE_STATUSES:
            raise ApiError(
                "inspection_not_completed",
                409,
                f"A report can be requested only for a completed inspection; this one is "
                f"{inspection.status}.",
            )
        record = ReportRequestRecord(
            inspection_id=inspection_id,
            company_id=auth.company_id,
            testing=auth.testing,
            callback_url=callback_url,
        )
        session.add(record)
        enqueue(
            session, REPORT_JOB, {"reportRequestId": record.id}, max_attempts=REPORT_MAX_ATTEMPTS
        )
        session.commit()
    return ReportRequestCreated(id=record.id)


def get_report_request(
    db: Database, settings: Settings, auth: AuthContext, inspection_id: str, report_id: str
) -> ReportRequest:
    with db.session() as session:
        record = _find_report(session, auth, inspection_id, report_id)
    return report_object(record, settings)


def list_report_requests(
    db: Database, settings: Settings, auth: AuthContext, inspection_id: str
) -> ReportRequestList:
    with db.session() as session:
        _find_inspection(session, auth, inspection_id)
        records = session.execute(
            select(ReportRequestRecord)
            .where(col(ReportRequestRecord.company_id) == auth.company_id)
            .where(col(ReportRequestRecord.testing) == auth.testing)
            .where(col(ReportRequestRecord.inspection_id) == inspection_id)
            .order_by(col(ReportRequestRecord.created_at), col(ReportRequestRecord.id))
        ).scalars()
        found = list(records)
    return ReportRequestList(reportRequests=[report_object(record, settings) for record in found])


def report_file(
    db: Database,
    blobs: BlobStore,
    settings: Settings,
    report_id: str,
    expires: str | None,
    signature: str | None,
) -> bytes:
    """The PDF behind a signed link; 403 when the link is expired or altered."""
    try:
        verify_link(settings.secret, report_id, expires, signature)
    except LinkError as error:
        raise ApiError(error.code, 403, error.description) from None
    with db.session() as session:
        record = session.get(ReportRequestRecord, report_id)
    if record is None or record.status != "completed" or record.blob_key is None:
        raise ApiError("report_not_found", 404, "The report does not exist anymore.")
    try:
        return blobs.get(record.blob_key)
    except BlobNotFound:
        raise ApiError("report_not_found", 404, "The report file is no longer stored.") from None


def callback_body(db: Database, settings: Settings, report_id: str, event: str) -> dict[str, Any]:
    """The notification sent to `callbackURL`: the report request object (fresh link)."""
    with db.session() as session:
        record = session.get(ReportRequestRecord, report_id)
    if record is None:
        return {"event": event, "payload": {"_id": report_id, "status": "deleted"}}
    return {"event": event, "payload": msgspec.to_builtins(report_object(record, settings))}


# --- the job -----------------------------------------------------------------------------------


def _plain(value: Any) -> dict[str, Any]:
    if hasattr(value, "model_dump"):
        dumped: dict[str, Any] = value.model_dump(mode="json", by_alias=True)
        return dumped
    if isinstance(value, dict):
        return value
    return {"reasons": [str(value)]} if value else {}


def _retakes(events: list[Any]) -> dict[str, tuple[str, str]]:
    """Image id -> (who asked for its retake, the message they wrote), from the retake events."""
    found: dict[str, tuple[str, str]] = {}
    for event in events:
        if event.kind != "retake":
            continue
        data = event.data or {}
        who = str((data.get("by") or {}).get("name") or "")
        for image_id in data.get("images") or []:
            found[str(image_id)] = (who, str(data.get("message") or ""))
    return found


def build_report_data(
    db: Database,
    blobs: BlobStore,
    record: ReportRequestRecord,
    now: datetime,
    time_zone: str = "UTC",
) -> ReportData:
    """Everything the report shows, read from the inspection as it is now."""
    with db.session() as session:
        inspection = session.get(InspectionRecord, record.inspection_id)
        if inspection is None:
            raise LookupError(f"inspection {record.inspection_id} no longer exists")
        loaded = load(session, inspection)
        company = session.get(Company, record.company_id)
        producer_id = (loaded.state.producer or {}).get("userId")
        producer = session.get(Member, producer_id) if isinstance(producer_id, str) else None
        stored = {
            row.id: row
            for row in session.execute(
                select(ImageRecord).where(col(ImageRecord.inspection_id) == inspection.id)
            ).scalars()
        }
    document = runtime.to_api(loaded.program, loaded.state)
    explanation = _plain(runtime.explain(loaded.program, loaded.state))
    locale = str(document.get("locale") or loaded.state.locale)
    retakes = _retakes(loaded.state.events)
    images: list[ReportImage] = []
    for image, target in every_image(document):
        row = stored.get(str(image.get("_id")))
        content: bytes | None = None
        if row is not None:
            try:
                # only a thumbnail is held: memory stays small however many photos there are;
                # made once and kept, so a report built again decodes no photo
                content = kept_thumbnail(blobs, row.blob_key, quality=REPORT_QUALITY)
            except BlobNotFound:
                content = None
        by, because = (
            retakes.get(str(image.get("_id")), ("", "")) if image.get("replaced") else ("", "")
        )
        images.append(
            ReportImage(
                record=image,
                content=content,
                target=target,
                replaced_by=by,
                replaced_because=because,
            )
        )
    return ReportData(
        inspection=document,
        template=loaded.manifest.to_api(),
        explanation=explanation,
        company_name=company.name if company is not None else record.company_id,
        producer_name=(producer.name or producer.email or "") if producer is not None else "",
        images=images,
        generated_at=iso(now) or "",
        report_request_id=record.id,
        time_zone=time_zone,
        history=history.steps(
            loaded.state.events, history.photo_names(document, locale), locale, time_zone
        ),
    )


def run_report_job(ctx: JobContext) -> None:
    """Render one report; the completion and its callback commit together, fenced by the lease."""
    report_id = str(ctx.payload["reportRequestId"])
    now = datetime.now(UTC)
    with ctx.db.session(immediate=True) as session:
        record = session.get(ReportRequestRecord, report_id)
        if record is None or record.status == "completed":
            return
        record.status = "processing"
        record.processing_at = record.processing_at or now
        session.add(record)
        session.commit()
    blobs = ctx.blobs  # the store the worker was started with
    data = build_report_data(ctx.db, blobs, record, now, ctx.settings.time_zone)
    pdf = RENDERER_FACTORY().render(data)
    key = blob_key(record)
    blobs.put(key, pdf)
    with ctx.db.session(immediate=True) as session:
        if not ctx.complete_in(session):
            session.rollback()
            logger.warning("report %s: lease lost; the new holder completes it", report_id)
            return
        current = session.get(ReportRequestRecord, report_id, with_for_update=True)
        if current is not None and current.status != "completed":
            current.status = "completed"
            current.completed_at = datetime.now(UTC)
            current.blob_key = key
            current.size = len(pdf)
            current.error = None
            session.add(current)
            if current.callback_url:
                _enqueue_callback(session, current, "report_completed")
        session.commit()


def report_job_given_up(session: Session, job: JobRecord, error: str) -> None:
    """Mark the request failed (in the transaction that fails the job) and notify its callback."""
    record = session.get(ReportRequestRecord, str(job.payload.get("reportRequestId")))
    if record is None or record.status == "completed":
        return
    record.status = "failed"
    record.failed_at = datetime.now(UTC)
    record.error = error[:2000]
    session.add(record)
    if record.callback_url:
        _enqueue_callback(session, record, "report_failed")


def _enqueue_callback(session: Session, record: ReportRequestRecord, event: str) -> None:
    """Queue the notification of the request's `callbackURL` (in the caller's transaction)."""
    assert record.callback_url is not None
    enqueue_delivery(
        session,
        company_id=record.company_id,
        event=event,
        url=record.callback_url,
        kind=CALLBACK_JOB,
        fields={"reportRequestId": record.id},
    )


def run_callback_job(ctx: JobContext) -> None:
    """One attempt of a callback: a webhook delivery of the request object as it is now (its
    `result.url` is signed afresh at each attempt)."""
    deliver(
        ctx,
        lambda ctx: callback_body(
            ctx.db, ctx.settings, str(ctx.payload["reportRequestId"]), str(ctx.payload["event"])
        ),
    )
