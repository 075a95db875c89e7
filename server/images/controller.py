"""Image routes: upload a photo of a product (API key or upload token), issue upload tokens,
read an image's bytes, and record an analysis service's validation result."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Request, get, post
from litestar.params import FromPath, QueryParameter
from litestar.response import Response

from server import tokens
from server.auth import authenticate_key
from server.bodies import decode_body
from server.common import in_thread
from server.deps import IMAGE_TOKEN_OPT, PUBLIC_OPT, auth_of, services
from server.images import service as images
from server.images.schemas import IMAGE_PART_TYPES, IMAGE_UPLOAD_BODY, UploadToken
from server.inspections import service as inspections
from server.inspections.presign import LinkToken, verify_link
from server.inspections.schemas import Image, Inspection, ValidationResult
from server.multipart import JSON_ONLY_BODY_BYTES, read_body
from server.schemas import (
    DERIVED,
    operation,
)
from server.stored_files import stored_file_response

TAGS = ["images"]


@post(
    "/v1/inspection/image/{product_id:str}",
    tags=TAGS,
    status_code=201,
    opt={IMAGE_TOKEN_OPT: True},
    operation_class=operation(
        status=201,
        response=Image,
        errors=(403, 404, 409),
        multipart_schema=IMAGE_UPLOAD_BODY,
        part_types=IMAGE_PART_TYPES,
    ),
)
async def upload_image(
    request: Request[Any, Any, Any],
    product_id: FromPath[str],
) -> dict[str, Any]:
    """Upload a photo (multipart: `image` file part, `data` JSON part with `side`, ...)."""
    app = services(request)
    auth = auth_of(request)
    body = await read_body(request)
    return await in_thread(
        images.upload_image,
        app.db,
        app.settings,
        app.blobs,
        app.analyzers,
        auth,
        product_id,
        body.files.get("image"),
        body.data,
        app.clock(),
    )


@post(
    "/v1/inspection/image/token/{product_id:str}",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=200,
    operation_class=operation(status=200, response=DERIVED, errors=(403, 404)),
)
async def upload_token(request: Request[Any, Any, Any], product_id: FromPath[str]) -> UploadToken:
    """A short-lived token for header `x-image-token`: uploads of this product, no API key."""
    app = services(request)
    auth = auth_of(request)
    return await in_thread(images.upload_token, app.db, app.settings, auth, product_id, app.clock())


@get(
    "/v1/inspection/image/{image_id:str}/content",
    tags=TAGS,
    sync_to_thread=True,
    opt={PUBLIC_OPT: True},
    media_type="application/octet-stream",
    operation_class=operation(
        write=False, status=200, response=None, errors=(401, 403, 404), public=True
    ),
)
def image_content(
    request: Request[Any, Any, Any],
    image_id: FromPath[str],
    token: Annotated[
        str | None,
        QueryParameter(name="token", schema_extra={"pattern": tokens.TOKEN_PATTERN}),
    ] = None,
) -> Response[bytes]:
    """An image's bytes: with the company's `x-api-key`, or the signed `token` of its `src`."""
    app = services(request)
    api_key = request.headers.get("x-api-key")
    auth = authenticate_key(app.db, api_key) if api_key is not None else None
    data, filename = images.image_content(
        app.db, app.blobs, image_id, auth=auth, token=token, secret=app.settings.secret
    )
    return stored_file_response(data, filename)


@get(
    "/v1/inspection/presign/detail/{inspection_id:str}/file/{file_id:str}",
    tags=TAGS,
    sync_to_thread=True,
    opt={PUBLIC_OPT: True},
    security=[],
    media_type="application/octet-stream",
    operation_id="GetSharedFile",
    summary="A photo or file of an inspection, through its presigned or share link",
    operation_class=operation(
        write=False, status=200, response=None, errors=(403, 404), public=True
    ),
)
def shared_file(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
    file_id: FromPath[str],
    token: LinkToken = "",
    size: Annotated[
        Literal["full", "thumb"],
        QueryParameter(
            name="size",
            description="`thumb`: the photo's JPEG thumbnail (400 px on its long side), as "
            "the share page shows it; a file that is no photo comes whole.",
        ),
    ] = "full",
) -> Response[bytes]:
    """A photo or file of the inspection, for the holder of its presigned detail or share
    link (the links of the `src` values it answers): 403 `link_revoked` or `link_expired` as
    soon as the link is, where an image's own content token lived on for its hour."""
    app = services(request)
    auth = verify_link(app.db, app.settings.secret, inspection_id, token, app.clock())
    data, filename = images.image_content(
        app.db, app.blobs, file_id, auth=auth, token=None, secret=app.settings.secret,
        inspection_id=inspection_id, thumb=size == "thumb",
    )  # fmt: skip
    return stored_file_response(data, filename)


@post(
    "/v1/inspection/{inspection_id:str}/image/{image_id:str}/validation",
    request_max_body_size=JSON_ONLY_BODY_BYTES,
    tags=TAGS,
    status_code=200,
    operation_class=operation(
        status=200, response=Inspection, errors=(404, 409), body=ValidationResult
    ),
)
async def record_validation(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
    image_id: FromPath[str],
) -> dict[str, Any]:
    """An external analysis service reports one validation of an image."""
    app = services(request)
    auth = auth_of(request)
    body = decode_body(await read_body(request), ValidationResult)
    return await in_thread(
        inspections.record_validation,
        app.db,
        app.settings,
        auth,
        inspection_id,
        image_id,
        body,
        app.clock(),
    )


ROUTES: list[Any] = [upload_image, upload_token, image_content, shared_file, record_validation]
