"""Review routes: a person's results and decision, a retake, and what this deployment decides
by itself (docs/review.md)."""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.params import FromPath

from server import routing
from server.common import in_thread
from server.deps import auth_of, services
from server.inspections.schemas import Inspection
from server.multipart import JSON_ONLY_BODY_BYTES, json_object, read_body
from server.review import service
from server.review.schemas import (
    REVIEW_BODY_SCHEMA,
    Capabilities,
    RetakeBody,
    RetakeRequested,
    decoded_or_refusal,
    retake_request,
    review_request,
)
from server.schemas import operation

TAGS = ["review"]


@post(
    "/v1/inspection/{inspection_id:str}/review",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=200,
    operation_id="ReviewInspection",
    summary="Record a person's results and decide",
    operation_class=operation(
        status=200, response=Inspection, errors=(404, 409), body=REVIEW_BODY_SCHEMA
    ),
)
async def review_inspection(
    request: Request[Any, Any, Any], inspection_id: FromPath[str]
) -> dict[str, Any]:
    """Each result as a person's (confidence 100 or 0, `source: person`); with `veredict`
    (and its `reason`) the inspection completes, `completedBy: reviewer`."""
    app = services(request)
    auth = auth_of(request)
    body = decoded_or_refusal(review_request, json_object(await read_body(request)))
    return await in_thread(
        service.review,
        app.db,
        app.settings,
        auth,
        inspection_id,
        body,
        service.api_actor(auth),
        app.clock(),
    )


@post(
    "/v1/inspection/{inspection_id:str}/retake",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=202,
    operation_id="RequestRetake",
    summary="Ask the consumer to take some photos again",
    operation_class=operation(
        status=202, response=RetakeRequested, errors=(404, 409), body=RetakeBody
    ),
)
async def retake_inspection(
    request: Request[Any, Any, Any], inspection_id: FromPath[str]
) -> dict[str, Any]:
    """The named photos' slots reopen and a new link with the message goes through the
    inspection's channel; 409 `retake_not_possible` once completed."""
    app = services(request)
    auth = auth_of(request)
    body = decoded_or_refusal(retake_request, json_object(await read_body(request)))
    return await in_thread(
        service.retake,
        app.db,
        app.settings,
        auth,
        inspection_id,
        body,
        service.api_actor(auth),
        app.clock(),
    )


@get(
    "/v1/capabilities",
    tags=TAGS,
    sync_to_thread=True,
    operation_id="GetCapabilities",
    summary="Which validations this deployment decides by itself",
    operation_class=operation(write=False, status=200, response=Capabilities, errors=()),
)
def get_capabilities(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """Each validation's route here: `local`, `provider`, `api` or `person` (status review)."""
    return routing.capabilities(services(request).settings, services(request).analyzers)


ROUTES: list[Any] = [review_inspection, retake_inspection, get_capabilities]
