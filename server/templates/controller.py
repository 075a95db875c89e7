"""Template routes: list and read templates (the company's and the built-ins), and, for
template authors, create a custom template from `.insp` source and revise it."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request, delete, get, post, put
from litestar.params import FromPath, PathParameter, QueryParameter
from litestar.response import Response

from inspectlang.includes import INCLUDE_NAME
from inspectlang.vocabulary import INSPECTION_TYPES
from server import routing
from server.bodies import decode_body
from server.common import in_thread
from server.deps import Services, auth_of, services
from server.errors import ApiError
from server.multipart import TEMPLATE_BODY_BYTES, read_body
from server.schemas import DERIVED, Message, operation
from server.templates import service as templates
from server.templates.schemas import (
    SOURCE_MESSAGE,
    SharedFile,
    SharedFileSource,
    Template,
    TemplateSource,
)
from server.templates.service import TemplateTests

TAGS = ["templates"]


@get(
    "/v1/inspection/template",
    operation_id="ListTemplates",
    summary="List templates",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(write=False, status=200, response=list[Template], errors=()),
)
def list_templates(
    request: Request[Any, Any, Any],
    inspection_type: Annotated[
        str | None,
        QueryParameter(name="inspectionType", schema_extra={"enum": [*INSPECTION_TYPES, ""]}),
    ] = None,
    kind: Annotated[
        str | None,
        QueryParameter(
            name="type",
            description="`created` or `built-in`",
            schema_extra={"enum": ["created", "built-in", ""]},
        ),
    ] = None,
) -> list[dict[str, Any]]:
    """The company's templates (latest revision of each) and the built-in ones."""
    return _listed(request, inspection_type, kind)


def _listed(
    request: Request[Any, Any, Any], inspection_type: str | None, kind: str | None
) -> list[dict[str, Any]]:
    db = services(request).db
    auth = auth_of(request)
    # An empty value is no filter, as on `GET /v1/inspection` (docs/api.md).
    return templates.list_templates(
        db, auth.company_id, inspection_type=inspection_type or None, kind=kind or None
    )


@get(
    "/v1/inspection/template/preview",
    operation_id="PreviewTemplates",
    summary="List templates (the client libraries' `preview`)",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(write=False, status=200, response=list[Template], errors=()),
)
def preview_templates(
    request: Request[Any, Any, Any],
    inspection_type: Annotated[
        str | None,
        QueryParameter(name="inspectionType", schema_extra={"enum": [*INSPECTION_TYPES, ""]}),
    ] = None,
    kind: Annotated[
        str | None,
        QueryParameter(
            name="type",
            description="`created` or `built-in`",
            schema_extra={"enum": ["created", "built-in", ""]},
        ),
    ] = None,
) -> list[dict[str, Any]]:
    """The same list as `GET /v1/inspection/template`, under the path the clients call."""
    return _listed(request, inspection_type, kind)


@get(
    "/v1/inspection/template/{template_id:str}",
    operation_id="GetTemplate",
    summary="Get a template",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(write=False, status=200, response=Template, errors=(404,)),
)
def get_template(
    request: Request[Any, Any, Any],
    template_id: FromPath[str],
    with_logic: Annotated[
        str | None,
        QueryParameter(name="withLogic", description="`true` adds the compiled `logic`."),
    ] = None,
) -> dict[str, Any]:
    """One template object: a custom template's latest revision, or a built-in."""
    db = services(request).db
    auth = auth_of(request)
    return templates.get_template(
        db, auth.company_id, template_id, with_logic=with_logic in ("true", "1")
    )


@get(
    "/v1/inspection/template/{template_id:str}/source",
    tags=TAGS,
    sync_to_thread=True,
    media_type="text/plain",
    operation_class=operation(write=False, status=200, response=None, errors=(404,)),
)
def get_template_source(
    request: Request[Any, Any, Any], template_id: FromPath[str]
) -> Response[str]:
    """The `.insp` source of a custom template's latest revision (text/plain)."""
    db = services(request).db
    auth = auth_of(request)
    source = templates.get_template_source(db, auth.company_id, template_id)
    return Response(source, media_type="text/plain; charset=utf-8")


async def _source(request: Request[Any, Any, Any]) -> str:
    """The `.insp` source of the body; a missing or blank one (nothing to compile) is 400
    `invalid_body` naming `source`, however it is sent."""
    return (await _template_body(request)).source


async def _template_body(request: Request[Any, Any, Any]) -> TemplateSource:
    """The body as a `TemplateSource` (a text/plain body is its `source` alone); a missing or
    blank source is 400 `invalid_body` naming `source`."""
    body = await read_body(request, allow_text=True, max_json_bytes=TEMPLATE_BODY_BYTES)
    if body.text is None and body.data is None:  # no body, or a blank one
        raise ApiError.of(
            "invalid_body", SOURCE_MESSAGE, [{"field": "source", "message": "missing"}]
        )
    decoded = (
        TemplateSource(source=body.text)
        if body.text is not None
        else decode_body(body, TemplateSource)
    )
    if decoded.source.strip():
        return decoded
    raise ApiError.of(
        "invalid_body", SOURCE_MESSAGE, [{"field": "source", "message": "empty or not text"}]
    )


def _tests(body: TemplateSource) -> TemplateTests:
    """The body's template tests, checked (400 `invalid_body` naming `tests`); without
    `tests`, no cases (a revision then keeps the previous revision's)."""
    sent = None if isinstance(body.tests, msgspec.UnsetType) else body.tests
    return templates.template_tests(sent, must_pass=body.testsMustPass)


@post(
    "/v1/inspection/template",
    request_max_body_size=TEMPLATE_BODY_BYTES,
    tags=TAGS,
    status_code=201,
    operation_class=operation(
        status=201, response=Template, errors=(409, 422), body=TemplateSource, text=True
    ),
)
async def create_template(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """Create a custom template (`type: created`) from its `.insp` source."""
    app = services(request)
    auth = auth_of(request)
    body = await _template_body(request)
    saved = await in_thread(
        templates.create_template, app.db, auth.company_id, body.source, app.clock(), _tests(body)
    )
    return _with_warnings(saved, app)


@put(
    "/v1/inspection/template/{template_id:str}",
    request_max_body_size=TEMPLATE_BODY_BYTES,
    tags=TAGS,
    status_code=200,
    operation_class=operation(
        status=200, response=Template, errors=(404, 409, 422), body=TemplateSource, text=True
    ),
)
async def revise_template(
    request: Request[Any, Any, Any],
    template_id: FromPath[str],
) -> dict[str, Any]:
    """A new revision of a custom template; inspections created before keep their revision."""
    app = services(request)
    auth = auth_of(request)
    body = await _template_body(request)
    saved = await in_thread(
        templates.revise_template,
        app.db,
        auth.company_id,
        template_id,
        body.source,
        app.clock(),
        _tests(body),
    )
    return _with_warnings(saved, app)


def _with_warnings(saved: dict[str, Any], app: Services) -> dict[str, Any]:
    """The saved template with `warnings`: each required validation that goes to a person in
    this deployment (`W900`, docs/review.md)."""
    machine = routing.machine_validations(app.settings, app.analyzers)
    return {**saved, "warnings": routing.person_routed_warnings(saved, machine)}


#: A shared file's name in the path, with its rule in the document (`INCLUDE_NAME`).
SharedName = Annotated[
    str,
    PathParameter(
        description='The name `include "NAME"` gives (no folders, no extension).',
        schema_extra={"pattern": f"^{INCLUDE_NAME.pattern}$"},
    ),
]


@get(
    "/v1/inspection/shared",
    operation_id="ListSharedFiles",
    summary="List the company's shared template files",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(write=False, status=200, response=list[SharedFile], errors=()),
)
def list_shared_files(request: Request[Any, Any, Any]) -> list[dict[str, Any]]:
    """The company's shared files: what its templates may `include "NAME"`."""
    return templates.list_shared_files(services(request).db, auth_of(request).company_id)


@get(
    "/v1/inspection/shared/{name:str}",
    tags=TAGS,
    media_type="text/plain",
    operation_class=operation(write=False, status=200, response=None, errors=(404,)),
)
async def get_shared_file(request: Request[Any, Any, Any], name: SharedName) -> Response[str]:
    """The `.insp` source of one of the company's shared files (text/plain). (Async like the
    PUT on the same path: Litestar mixes up a sync and an async handler of one path.)"""
    db, company_id = services(request).db, auth_of(request).company_id
    source = await in_thread(templates.get_shared_file, db, company_id, name)
    return Response(source, media_type="text/plain; charset=utf-8")


@put(
    "/v1/inspection/shared/{name:str}",
    request_max_body_size=TEMPLATE_BODY_BYTES,
    tags=TAGS,
    status_code=200,
    operation_class=operation(
        status=200, response=SharedFile, errors=(422,), body=SharedFileSource, text=True
    ),
)
async def save_shared_file(request: Request[Any, Any, Any], name: SharedName) -> dict[str, Any]:
    """Create or replace a shared file (lets, checks and inputs the company's templates include).
    Saved templates keep what they included; saving a template again picks up the change."""
    app = services(request)
    auth = auth_of(request)
    source = await _source(request)
    return await in_thread(
        templates.save_shared_file, app.db, auth.company_id, name, source, app.clock()
    )


@delete(
    "/v1/inspection/shared/{name:str}",
    tags=TAGS,
    status_code=200,
    operation_class=operation(status=200, response=DERIVED, errors=(404,)),
)
async def delete_shared_file(request: Request[Any, Any, Any], name: SharedName) -> Message:
    """Delete one of the company's shared files. Saved templates keep what they included (their
    manifests hold it); a template saved again that still includes it gets E043."""
    db, company_id = services(request).db, auth_of(request).company_id
    await in_thread(templates.delete_shared_file, db, company_id, name)
    return Message(message="Shared file deleted")


ROUTES: list[Any] = [
    list_templates,
    preview_templates,
    get_template,
    get_template_source,
    create_template,
    revise_template,
    list_shared_files,
    get_shared_file,
    save_shared_file,
    delete_shared_file,
]
