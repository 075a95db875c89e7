"""The report routes' bodies: a report request in, report request objects out."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from server.bodies import RequestBody, ResponseBody

ObjectId = Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{24}$")]
Timestamp = Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]
ReportStatus = Literal["pending", "processing", "completed", "failed"]


class ReportRequestBody(RequestBody):
    """`POST /v1/inspection/:id/report/request`; the body itself is optional."""

    field_codes = {"callbackURL": "invalid_callback_url"}
    field_messages = {"callbackURL": "`callbackURL` must be an http(s) URL."}

    callbackURL: Annotated[
        str | None,
        msgspec.Meta(
            extra_json_schema={"format": "uri"},
            description="http(s) address notified when the report is ready (or failed).",
        ),
    ] = None


class ReportRequestCreated(ResponseBody):
    id: ObjectId = msgspec.field(name="_id")


class ReportResult(ResponseBody):
    url: str
    expiresAt: Timestamp


class ReportRequest(ResponseBody):
    """The spec's Report request object; `result` (a fresh 15-minute link) once completed."""

    id: ObjectId = msgspec.field(name="_id")
    inspectionId: str
    companyId: str
    status: ReportStatus
    callbackURL: str | None
    createdAt: Timestamp
    processingAt: Timestamp | None
    completedAt: Timestamp | None
    failedAt: Timestamp | None
    result: ReportResult | msgspec.UnsetType = msgspec.UNSET


class ReportRequestList(ResponseBody):
    reportRequests: list[ReportRequest]
