"""Inspection routes: create, read, list, update, update a product, start, finish, declare a
damage. Bodies may be JSON or multipart (a `data` part with the JSON, file inputs as parts)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, get, post, put
from litestar.params import FromPath, PathParameter, QueryParameter

from inspectlang.vocabulary import INSPECTION_TYPES
from server.bodies import decode_body, decode_shape
from server.common import in_thread
from server.deps import OAUTH_SCOPE_OPT, auth_of, delegated, services
from server.errors import ApiError
from server.inspections import client_shapes, creation, explanation, goods, listing
from server.inspections import service as inspections
from server.inspections.listing import (
    MAX_FILTER_CHARS,
    MAX_LIMIT,
    MAX_PAGE,
    STATUSES,
    VEREDICTS,
)
from server.inspections.schemas import (
    CreatedInspection,
    CreateInspectionBody,
    DamageBody,
    FinishedInspection,
    GoodsAdded,
    GoodsBody,
    Inspection,
    InspectionPage,
    UpdateInspectionBody,
    UpdateProductBody,
    VerdictExplanation,
)
from server.multipart import JSON_ONLY_BODY_BYTES, json_object, read_body
from server.schemas import (
    FINISH_BODY,
    Message,
    operation,
)


def _whole(maximum: int) -> dict[str, Any]:
    """The document's view of a whole-number query value (the server parses ASCII digits)."""
    return {"type": "integer", "minimum": 1, "maximum": maximum}


def _one_of(values: tuple[str, ...]) -> dict[str, Any]:
    """A filter with a closed set of values; empty is no filter (docs/api.md)."""
    return {"enum": [*values, ""]}


#: Free-text filters: exact matches of at most `MAX_FILTER_CHARS` characters.
_FILTER_TEXT: dict[str, Any] = {"maxLength": MAX_FILTER_CHARS}

TAGS = ["inspections"]


@post(
    "/v1/inspection/{inspection_type:str}",
    tags=TAGS,
    status_code=201,
    # A partner application's access token creates for its member (docs/api.md).
    opt={OAUTH_SCOPE_OPT: "inspections:create"},
    operation_class=operation(
        status=201, response=CreatedInspection, errors=(404,), body=CreateInspectionBody
    ),
)
async def create_inspection(
    request: Request[Any, Any, Any],
    inspection_type: Annotated[
        str,
        PathParameter(
            description="car, moto, bike, ...", schema_extra={"enum": list(INSPECTION_TYPES)}
        ),
    ],
) -> dict[str, Any]:
    """Create an inspection of a type from a template (id or alias)."""
    app = services(request)
    auth = auth_of(request)
    body = await read_body(request)
    fields = json_object(body)
    token = fields.pop("access_token", None) if isinstance(fields, dict) else None
    if isinstance(token, str) and token and auth.delegation is None:
        # The client libraries send a partner application's access token in the body, beside
        # the application's own key: the inspection is then the token's member's.
        auth = await delegated(request, token, "inspections:create")
    return await in_thread(
        creation.create_inspection,
        app.db,
        app.settings,
        app.blobs,
        auth,
        inspection_type,
        fields,
        body.files,
        app.clock(),
    )


@get(
    "/v1/inspection",
    tags=TAGS,
    sync_to_thread=True,
    operation_class=operation(write=False, status=200, response=InspectionPage, errors=()),
)
def list_inspections(
    request: Request[Any, Any, Any],
    page: Annotated[
        str | None,
        QueryParameter(name="page", description="1-based page", schema_extra=_whole(MAX_PAGE)),
    ] = None,
    limit: Annotated[
        str | None,
        QueryParameter(
            name="limit", description="1..100, default 10", schema_extra=_whole(MAX_LIMIT)
        ),
    ] = None,
    limite: Annotated[
        str | None,
        QueryParameter(name="limite", description="alias of limit", schema_extra=_whole(MAX_LIMIT)),
    ] = None,
    status: Annotated[
        str | None, QueryParameter(name="status", schema_extra=_one_of(STATUSES))
    ] = None,
    veredict: Annotated[
        str | None, QueryParameter(name="veredict", schema_extra=_one_of(VEREDICTS))
    ] = None,
    inspection_type: Annotated[
        str | None, QueryParameter(name="type", schema_extra=_one_of(INSPECTION_TYPES))
    ] = None,
    consumer_identification: Annotated[
        str | None, QueryParameter(name="consumerIdentification", schema_extra=_FILTER_TEXT)
    ] = None,
    plate: Annotated[str | None, QueryParameter(name="plate", schema_extra=_FILTER_TEXT)] = None,
    template_id: Annotated[
        str | None, QueryParameter(name="templateId", schema_extra=_FILTER_TEXT)
    ] = None,
) -> dict[str, Any]:
    """The caller's inspections, oldest first, one page at a time."""
    app = services(request)
    auth = auth_of(request)
    params = {
        "page": page,
        "limit": limit,
        "limite": limite,
        "status": status,
        "veredict": veredict,
        "type": inspection_type,
        "consumerIdentification": consumer_identification,
        "plate": plate,
        "templateId": template_id,
    }
    return listing.list_inspections(app.db, app.settings, auth, params)


@get(
    "/v1/inspection/{inspection_id:str}",
    tags=TAGS,
    sync_to_thread=True,
    opt={OAUTH_SCOPE_OPT: "inspections:read"},
    operation_id="GetInspection",
    summary="Get an inspection",
    operation_class=operation(write=False, status=200, response=Inspection, errors=(404,)),
)
def get_inspection(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
    explain: Annotated[
        str | None,
        QueryParameter(
            description="`true` adds `explanation` (as `GET .../explanation` answers it).",
            schema_extra={"enum": ["true", "false", ""]},
        ),
    ] = None,
) -> dict[str, Any]:
    """The Inspection object."""
    app = services(request)
    auth = auth_of(request)
    document = inspections.get_inspection(app.db, app.settings, auth, inspection_id)
    if explain == "true":
        document["explanation"] = explanation.explain_inspection(app.db, auth, inspection_id)
    elif explain not in (None, "", "false"):
        raise ApiError(
            "invalid_filter",
            400,
            "explain must be true or false.",
            [{"field": "explain", "message": f"got {explain[:40]!r}"}],
        )
    return document


@get(
    "/v1/inspection/{inspection_id:str}/explanation",
    tags=TAGS,
    sync_to_thread=True,
    operation_id="ExplainInspection",
    summary="Why the verdict is what it is",
    operation_class=operation(write=False, status=200, response=VerdictExplanation, errors=(404,)),
)
def explain_inspection(
    request: Request[Any, Any, Any], inspection_id: FromPath[str]
) -> dict[str, Any]:
    """Each verdict line, check and rule with the values it saw and its template line."""
    app = services(request)
    return explanation.explain_inspection(app.db, auth_of(request), inspection_id)


@post(
    # Under the product PUT's path (a static `goods` segment here would hide the create route):
    # only `goods` is served, any other type is 404 `not_found`.
    "/v1/inspection/{inspection_type:str}/{product_id:str}",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=201,
    operation_id="PostGoods",
    summary="Add goods to an inspection, or update one good (the client libraries' POST)",
    operation_class=operation(status=201, response=GoodsAdded, errors=(404, 409), body=GoodsBody),
)
async def post_goods(
    request: Request[Any, Any, Any],
    inspection_type: Annotated[str, PathParameter(schema_extra={"enum": ["goods"]})],
    product_id: Annotated[
        str, PathParameter(description="An inspection id (add goods) or a goods product id.")
    ],
) -> Response[Any]:
    """`{goods: [...]}` to an inspection id adds goods (201 `productIds`); `{good: {...}}` to
    a goods product id updates it (200)."""
    if inspection_type != "goods":
        raise ApiError.of("not_found", "No resource at this path.")
    target_id = product_id
    app = services(request)
    auth = auth_of(request)
    body = json_object(await read_body(request), required=True)
    status, answer = await in_thread(
        goods.post_goods, app.db, app.settings, app.blobs, auth, target_id, body, app.clock()
    )
    return Response(answer, status_code=status)


@put(
    "/v1/inspection/{inspection_id:str}",
    tags=TAGS,
    operation_class=operation(
        status=200, response=Message, errors=(404, 409), body=UpdateInspectionBody
    ),
)
async def update_inspection(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
) -> dict[str, Any]:
    """Set consumer, metadata and inputs not yet defined (created or started only); file
    inputs as multipart parts named by their identifier, stored as at creation."""
    app = services(request)
    auth = auth_of(request)
    body = await read_body(request)
    shaped = client_shapes.update_body(json_object(body, required=False))
    decode_shape(shaped, UpdateInspectionBody)
    return await in_thread(
        inspections.update_inspection,
        app.db,
        app.settings,
        app.blobs,
        auth,
        inspection_id,
        shaped,
        body.files,
        app.clock(),
    )


@put(
    # The app's body limit, not JSON_ONLY_BODY_BYTES: file inputs come as multipart parts.
    "/v1/inspection/{inspection_type:str}/{product_id:str}",
    tags=TAGS,
    operation_class=operation(
        status=200, response=Message, errors=(404, 409), body=UpdateProductBody
    ),
)
async def update_product(
    request: Request[Any, Any, Any],
    inspection_type: Annotated[
        str, PathParameter(schema_extra={"enum": [t for t in INSPECTION_TYPES if t != "people"]})
    ],
    product_id: FromPath[str],
) -> dict[str, Any]:
    """Set product fields (not for `people`: update the inspection), and inputs not yet
    defined, file inputs as multipart parts named by their identifier (as the inspection's
    PUT takes them)."""
    app = services(request)
    auth = auth_of(request)
    body = await read_body(request)
    shaped = client_shapes.product_update_body(
        json_object(body, required=False), inspection_type, product_id
    )
    decode_shape(shaped, UpdateProductBody)
    return await in_thread(
        inspections.update_product,
        app.db,
        app.settings,
        app.blobs,
        auth,
        inspection_type,
        product_id,
        shaped,
        body.files,
        app.clock(),
    )


@post(
    "/v1/inspection/finish/{inspection_id:str}",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=200,
    operation_class=operation(
        status=200, response=FinishedInspection, errors=(404, 409), body=FINISH_BODY
    ),
)
async def finish_inspection(
    request: Request[Any, Any, Any], inspection_id: FromPath[str]
) -> dict[str, Any]:
    """The client finishes the inspection: verdict computed, `completedBy: client`. The
    answer is the Inspection object with a `message` beside its fields."""
    app = services(request)
    auth = auth_of(request)
    return await in_thread(
        inspections.finish_inspection, app.db, app.settings, auth, inspection_id, app.clock()
    )


@post(
    "/v1/inspection/{inspection_id:str}/start",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=200,
    operation_class=operation(status=200, response=Inspection, errors=(404, 409), body=FINISH_BODY),
)
async def start_inspection(
    request: Request[Any, Any, Any], inspection_id: FromPath[str]
) -> dict[str, Any]:
    """Move a `created` inspection to `started` (the consumer opened it)."""
    app = services(request)
    auth = auth_of(request)
    return await in_thread(
        inspections.start_inspection, app.db, app.settings, auth, inspection_id, app.clock()
    )


@post(
    "/v1/inspection/{inspection_id:str}/damage",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=200,
    operation_class=operation(status=200, response=Inspection, errors=(404, 409), body=DamageBody),
)
async def declare_damage(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
) -> dict[str, Any]:
    """A damage declared by the consumer (template feature `damage_declaration`)."""
    app = services(request)
    auth = auth_of(request)
    body = decode_body(await read_body(request), DamageBody)
    return await in_thread(
        inspections.declare_damage, app.db, app.settings, auth, inspection_id, body, app.clock()
    )


ROUTES: list[Any] = [
    create_inspection,
    list_inspections,
    get_inspection,
    explain_inspection,
    post_goods,
    update_inspection,
    update_product,
    finish_inspection,
    start_inspection,
    declare_damage,
]
