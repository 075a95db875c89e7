"""Report request routes: request a PDF, read its status (with a fresh signed link), download it.

The download route is public: the signed `expires`/`signature` query is the credential.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, Operation, Schema
from litestar.openapi.spec.enums import OpenAPIFormat, OpenAPIType
from litestar.params import FromPath, FromQuery

from server.bodies import decode_body
from server.common import in_thread
from server.deps import PUBLIC_OPT, auth_of, services
from server.multipart import JSON_ONLY_BODY_BYTES, read_body
from server.reports import service
from server.reports.schemas import (
    ReportRequest,
    ReportRequestBody,
    ReportRequestCreated,
    ReportRequestList,
)
from server.schemas import DERIVED, operation
from server.stored_files import stored_file_response

TAGS = ["reports"]


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
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=201,
    operation_class=operation(
        status=201,
        response=DERIVED,
        errors=(404, 409, 503),
        body=ReportRequestBody,
    ),
)
async def request_report(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
) -> ReportRequestCreated:
    """Queue a PDF report of a completed inspection."""
    app = services(request)
    auth = auth_of(request)
    body = decode_body(await read_body(request), ReportRequestBody, required=False)
    return await in_thread(
        service.create_report_request, app.db, app.settings, auth, inspection_id, body
    )


@get(
    "/v1/inspection/{inspection_id:str}/report/request/{report_request_id:str}",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(status=200, response=DERIVED, errors=(404,)),
)
def read_report_request(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
    report_request_id: FromPath[str],
) -> ReportRequest:
    """The report request; when completed, `result.url` is a fresh link valid for 15 minutes."""
    app = services(request)
    auth = auth_of(request)
    return service.get_report_request(app.db, app.settings, auth, inspection_id, report_request_id)


@get(
    "/v1/inspection/{inspection_id:str}/report/request",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(status=200, response=DERIVED, errors=(404,)),
)
def list_report_requests(
    request: Request[Any, Any, Any], inspection_id: FromPath[str]
) -> ReportRequestList:
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
    # A stored file like any other: a PDF is an attachment under the sandboxing CSP.
    return stored_file_response(
        pdf, f"report-{report_request_id}.pdf", cache_control="private, no-store"
    )


ROUTES: list[Any] = [request_report, read_report_request, list_report_requests, download_report]
