"""Report request routes: request a PDF, read its status (with a fresh signed link), download it.

The download route is public: the signed `expires`/`signature` query is the credential.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, Operation, Schema
from litestar.openapi.spec.enums import OpenAPIFormat, OpenAPIType
from litestar.params import FromPath, FromQuery

from server.bodies import JsonSchema
from server.common import in_thread
from server.deps import PUBLIC_OPT, auth_of, services
from server.multipart import json_object, read_body
from server.reports import service
from server.schemas import OBJECT_ID, STRING, TIMESTAMP, operation

TAGS = ["reports"]

_NULLABLE_TIMESTAMP: JsonSchema = {"type": ["string", "null"], "format": "date-time"}

REPORT_REQUEST_BODY: JsonSchema = {
    "type": "object",
    "properties": {
        "callbackURL": {
            "type": "string",
            "format": "uri",
            "description": "http(s) address notified when the report is ready (or failed).",
        }
    },
}
REPORT_REQUEST_CREATED: JsonSchema = {
    "type": "object",
    "required": ["_id"],
    "properties": {"_id": OBJECT_ID},
}
REPORT_REQUEST: JsonSchema = {
    "type": "object",
    "required": ["_id", "inspectionId", "companyId", "status"],
    "properties": {
        "_id": OBJECT_ID,
        "inspectionId": STRING,
        "companyId": STRING,
        "status": {"enum": ["pending", "processing", "completed", "failed"]},
        "callbackURL": {"type": ["string", "null"]},
        "createdAt": TIMESTAMP,
        "processingAt": _NULLABLE_TIMESTAMP,
        "completedAt": _NULLABLE_TIMESTAMP,
        "failedAt": _NULLABLE_TIMESTAMP,
        "result": {
            "type": "object",
            "required": ["url"],
            "properties": {"url": STRING, "expiresAt": TIMESTAMP},
        },
    },
}
REPORT_REQUEST_LIST: JsonSchema = {
    "type": "object",
    "required": ["reportRequests"],
    "properties": {"reportRequests": {"type": "array", "items": REPORT_REQUEST}},
}


def pdf_operation() -> type[Operation]:
    """The download's Operation: a PDF body on 200, JSON errors otherwise."""
    base = operation(status=200, response=None, errors=(403, 404), public=True)

    def init(self: Operation, *args: Any, **kwargs: Any) -> None:
        base.__init__(self, *args, **kwargs)
        responses = dict(self.responses or {})
        responses["200"] = OpenAPIResponse(
            description="The report PDF",
            content={
                "application/pdf": OpenAPIMediaType(
                    schema=Schema(type=OpenAPIType.STRING, format=OpenAPIFormat.BINARY)
                )
            },
        )
        self.responses = responses

    return type("PdfOperation", (base,), {"__init__": init})


@post(
    "/v1/inspection/{inspection_id:str}/report/request",
    tags=TAGS,
    status_code=201,
    operation_class=operation(
        status=201,
        response=REPORT_REQUEST_CREATED,
        errors=(404, 409, 503),
        body=REPORT_REQUEST_BODY,
    ),
)
async def request_report(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
) -> dict[str, Any]:
    """Queue a PDF report of a completed inspection."""
    app = services(request)
    auth = auth_of(request)
    body = json_object(await read_body(request), required=False)
    return await in_thread(
        service.create_report_request, app.db, app.settings, auth, inspection_id, body
    )


@get(
    "/v1/inspection/{inspection_id:str}/report/request/{report_request_id:str}",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(status=200, response=REPORT_REQUEST, errors=(404,)),
)
def read_report_request(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
    report_request_id: FromPath[str],
) -> dict[str, Any]:
    """The report request; when completed, `result.url` is a fresh link valid for 15 minutes."""
    app = services(request)
    auth = auth_of(request)
    return service.get_report_request(app.db, app.settings, auth, inspection_id, report_request_id)


@get(
    "/v1/inspection/{inspection_id:str}/report/request",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(status=200, response=REPORT_REQUEST_LIST, errors=(404,)),
)
def list_report_requests(
    request: Request[Any, Any, Any], inspection_id: FromPath[str]
) -> dict[str, Any]:
    """Every report request of the inspection, oldest first."""
    app = services(request)
    auth = auth_of(request)
    return service.list_report_requests(app.db, app.settings, auth, inspection_id)


@get(
    "/v1/report/file/{report_request_id:str}",
    tags=TAGS,
    sync_to_thread=True,
    opt={PUBLIC_OPT: True},
    security=[],
    operation_class=pdf_operation(),
)
def download_report(
    request: Request[Any, Any, Any],
    report_request_id: FromPath[str],
    expires: FromQuery[str | None] = None,
    signature: FromQuery[str | None] = None,
) -> Response[bytes]:
    """The PDF behind a signed link from `result.url`."""
    app = services(request)
    pdf = service.report_file(
        app.db, app.blobs, app.settings, report_request_id, expires, signature
    )
    return Response(
        content=pdf,
        media_type="application/pdf",
        headers={
            "content-disposition": f'inline; filename="report-{report_request_id}.pdf"',
            "cache-control": "private, no-store",
        },
    )


ROUTES: list[Any] = [request_report, read_report_request, list_report_requests, download_report]
