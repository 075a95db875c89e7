"""Images: uploads (bytes to the blob store, the record through the runtime), upload tokens,
validation results, and reading an image's bytes back.

An image's `src` is `{public_url}/v1/inspection/image/{imageId}/content`. That endpoint answers
to the company's API key, or to a signed `token` query parameter: every Inspection object the
API returns carries `src` values with a fresh token (valid `CONTENT_TOKEN_TTL_SECONDS`), so a
browser can show the photos without a key, and a leaked link stops working soon.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlmodel import Session

import runtime
from inspectlang.manifest import Template
from inspectlang.timestamps import utc_timestamp
from runtime import ImageUpload, InspectionState, new_object_id
from runtime.api_view import Inspection, every_image
from runtime.imagemeta import ImageMeta
from server import tokens
from server.auth import AuthContext
from server.blobs import BlobNotFound, BlobStore
from server.bodies import decode
from server.common import CONTENT_TOKEN_KIND, content_url, run_runtime
from server.db import Database
from server.errors import ApiError
from server.idempotency import StoredResponse, current_claim, store_with
from server.images import analysis, duplicates
from server.images import quality as photo_quality
from server.images.content import IMAGE_FORMATS, inspect_photo
from server.images.schemas import UNSET, Coordinates, ImageData, UploadToken
from server.inspections import service as inspections
from server.inspections.tables import ImageRecord
from server.multipart import UploadedFile
from server.routing import Analyzers
from server.settings import Settings
from server.thumbnails import kept_thumbnail

#: Lifetime of an upload token (`POST /v1/inspection/image/token/:productId`).
UPLOAD_TOKEN_TTL_SECONDS = 15 * 60
#: Token kind of upload tokens (`server.tokens`; the auth middleware verifies this kind).
UPLOAD_TOKEN_KIND = "image"


def _check_scope(auth: AuthContext, product_id: str) -> None:
    """An upload token is good for its own product only (a consumer's scope is checked
    against the product's inspection by `_check_consumer`)."""
    if (
        auth.scope is not None
        and auth.scope.startswith("image:")
        and auth.scope != f"image:{product_id}"
    ):
        raise ApiError("forbidden", 403, "This upload token is for another product.")


def _check_consumer(auth: AuthContext, inspection_id: str) -> None:
    """A consumer (magic-link session) reaches the products of its own inspection only."""
    scope = auth.scope
    if scope is not None and scope.startswith("consumer:") and scope != f"consumer:{inspection_id}":
        raise ApiError.of("product_not_found", "No product with that id.")


def _upload_fields(data: Any) -> dict[str, Any]:
    """The `data` part (`ImageData`) as `ImageUpload` arguments; `invalid_body` 400 naming the
    field when it does not fit."""
    if data is None:
        raise _invalid_image_data(
            "data",
            'the upload has no `data` part: send one holding JSON such as {"side": "front"} '
            "(or a template image's `identifier`) beside the `image` file part",
        )
    fields = decode(data, ImageData)
    if fields.side in (None, UNSET) and fields.identifier in (None, UNSET):
        raise _invalid_image_data("side", "`side` (or a template image `identifier`) is required")
    arguments: dict[str, Any] = {
        name: getattr(fields, name) for name in ("side", "identifier", "date", "target")
    }
    if isinstance(fields.coordinates, Coordinates):
        arguments["latitude"] = fields.coordinates.latitude
        arguments["longitude"] = fields.coordinates.longitude
    return {name: value for name, value in arguments.items() if value is not UNSET}


def _invalid_image_data(field: str, message: str) -> ApiError:
    return ApiError.of(
        "invalid_body", f"{field}: {message}", [{"field": field, "message": message}]
    )


def _image_by_id(state: InspectionState, image_id: str) -> Any | None:
    for product in state.products:
        for image in [*product.images, *product.extraImages]:
            if image.id == image_id:
                return image
    return None


def upload_image(
    db: Database,
    settings: Settings,
    blobs: BlobStore,
    analyzers: Analyzers,
    auth: AuthContext,
    product_id: str,
    image: UploadedFile | None,
    data: Any,
    now: datetime,
    *,
    declined: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Store an uploaded photo and add it to its product's inspection; the image record.
    `declined`: evidence the consumer declined to give (`location`, from the consumer's pages:
    `runtime.validators.declined_evidence`)."""
    _check_scope(auth, product_id)
    if image is None or not image.data:
        raise ApiError.of(
            "invalid_body", "A non-empty multipart file part named `image` is required."
        )
    fields = _upload_fields(data)
    meta = inspect_photo(image.data)
    content_type = IMAGE_FORMATS[str(meta.format)]
    with db.session() as session:
        product = inspections.find_product(session, auth, product_id)
    _check_consumer(auth, product.inspection_id)
    blob_key = f"images/{auth.company_id}/{new_object_id()}"
    image_id = new_object_id()
    hashes = (
        (meta.phash, meta.phash_center)
        if meta.phash is not None and meta.phash_center is not None
        else None
    )
    found: list[Any] = []

    def find_duplicates(session: Session, loaded: inspections.Loaded) -> None:
        """In the change's transaction, under a lock on the company's photo hashes held until
        it commits (with this photo's row): two uploads of one photo at the same moment cannot
        both miss each other, the second waits for the first's row (issue 23). Only for a
        template that runs `duplicate`: an upload that checks nothing needs no look-up, and
        its row, committed before or after a concurrent check, is one serial order or the
        other (so the company's uploads are not serialized for templates that never ask)."""
        if hashes is not None and loaded.program.runs_validation("duplicate"):
            duplicates.lock(session, auth.company_id, auth.testing)
            found[:] = duplicates.find(
                session, auth.company_id, auth.testing, loaded.record.id, hashes
            )

    added: list[str] = []

    def operation(loaded: inspections.Loaded) -> InspectionState:
        upload = ImageUpload(
            data=image.data,
            content_type=content_type,
            meta=meta,
            duplicates=tuple(found),
            declined=declined,
            src=content_url(settings.public_url, image_id),
            **{name: value for name, value in fields.items() if value is not None},
        )
        fresh = iter([image_id])
        state, record = run_runtime(
            runtime.add_image,
            loaded.program,
            loaded.state,
            product_id,
            upload,
            now=now,
            ids=lambda: next(fresh, None) or new_object_id(),
            machine=analysis.machine_validations(settings, analyzers),
        )
        if record.id != image_id:  # the runtime named it otherwise: point src at its id
            stored = _image_by_id(state, record.id)
            if stored is not None:
                stored.src = content_url(settings.public_url, record.id)
        added.append(record.id)
        return state

    def events(
        loaded: inspections.Loaded, state: InspectionState
    ) -> list[tuple[str, dict[str, Any]]]:
        stored = _image_by_id(state, added[0])
        if stored is not None and stored.processed:
            return [("image_processed", {"imageId": added[0], "productId": product_id})]
        return []

    claim = current_claim()
    answers: list[dict[str, Any]] = []

    def add_row(session: Session, loaded: inspections.Loaded, state: InspectionState) -> None:
        if claim is not None:
            # The 201 stored with the photo's row in one transaction, as a creation's: a process
            # killed after the commit leaves the answer to replay, not a key to run again (a
            # second upload of the same request, tests/server/test_multiprocess.py).
            answers.append(_answer(settings, loaded, state, added[0], image.data, meta))
            store_with(session, claim, StoredResponse.json(201, answers[0]))
        analyse = analysis.jobs_after_upload(settings, analyzers, state, added[0])
        if analyse:
            analysis.enqueue_analysis(session, auth, loaded.record.id, analyse)
        session.add(
            ImageRecord(
                id=added[0],
                inspection_id=loaded.record.id,
                product_id=product_id,
                company_id=auth.company_id,
                testing=auth.testing,
                kind="image",
                blob_key=blob_key,
                content_type=content_type,
                size=len(image.data),
                filename=image.filename[:500],
                created_at=now,
            )
        )
        if hashes is not None:
            session.add(
                duplicates.row(
                    auth.company_id, auth.testing, loaded.record.id, added[0], *hashes, now
                )
            )

    blobs.put(blob_key, image.data)
    try:
        loaded, state = inspections.change(
            db,
            auth,
            product.inspection_id,
            operation,
            now,
            events=events,
            after=add_row,
            before=find_duplicates,
        )
    except BaseException:
        blobs.delete(blob_key)
        raise
    if answers:
        return answers[0]
    return _answer(settings, loaded, state, added[0], image.data, meta)


def _answer(
    settings: Settings,
    loaded: inspections.Loaded,
    state: InspectionState,
    image_id: str,
    data: bytes,
    meta: ImageMeta,
) -> dict[str, Any]:
    """The upload's answer: the image as the inspection now shows it, its quality and, for a
    side no image of the template has, a warning."""
    document = inspections.to_document(loaded.program, state, loaded.record, settings)
    view = _find_view(document, image_id)
    if view is None:
        raise ApiError.of("internal_error", "The uploaded image is missing from the inspection.")
    view["quality"] = photo_quality.check(data, state.locale, meta)
    warning = _unknown_side(loaded.manifest, view)
    if warning is not None:
        view["warnings"] = [warning]
    return view


def _unknown_side(manifest: Template, view: dict[str, Any]) -> dict[str, str] | None:
    """The warning of a photo whose `side` names no image of the template (`"frnt"`): it is
    kept as an extra image (clients label extra photos freely), and the answer says so, with
    the template's sides, so a misspelt slot does not stay empty unnoticed (docs/api.md)."""
    if view.get("templateImageIdentifier") is not None or not manifest.images:
        return None
    sides = ", ".join(image.side for image in manifest.images)
    return {
        "code": "unknown_side",
        "message": f"No image of the template has side {str(view.get('side'))[:100]!r}: the "
        f"photo was kept as an extra image. The template's sides: {sides}.",
    }


def _find_view(document: dict[str, Any], image_id: str) -> dict[str, Any] | None:
    """The image record with this id in an Inspection object (products, identity, custom)."""
    found = (image for image, _target in every_image(cast(Inspection, document)))
    return next((cast(dict[str, Any], i) for i in found if i["_id"] == image_id), None)


def upload_token(
    db: Database, settings: Settings, auth: AuthContext, product_id: str, now: datetime
) -> UploadToken:
    """A short-lived token that lets a device upload images of this product without the key."""
    _check_scope(auth, product_id)
    with db.session() as session:
        inspections.find_product(session, auth, product_id)
    token, expires_at = tokens.issue(
        UPLOAD_TOKEN_KIND,
        product_id,
        auth.company_id,
        auth.mode,
        UPLOAD_TOKEN_TTL_SECONDS,
        secret=settings.secret,
        now=now,
    )
    return UploadToken(token=token, expiresAt=utc_timestamp(expires_at))


# --- reading images ----------------------------------------------------------------------------


def _image_record(session: Session, image_id: str) -> ImageRecord | None:
    return session.get(ImageRecord, image_id)


def image_content(
    db: Database,
    blobs: BlobStore,
    image_id: str,
    *,
    auth: AuthContext | None,
    token: str | None,
    secret: str,
    inspection_id: str | None = None,
    thumb: bool = False,
) -> tuple[bytes, str | None]:
    """The bytes of an image or file input and its upload's file name (served by
    `server.stored_files.stored_file_response`), for its company's key or a valid content
    token; with `inspection_id`, only a file of that inspection (the dashboard's photo route).
    `thumb`: its JPEG thumbnail instead (`server.thumbnails.kept_thumbnail`: made once and
    kept) when it has one, the file itself when not (a PDF file input)."""
    if auth is None:
        if not token:
            raise ApiError.of("unauthorized", "Send the x-api-key header or a `token` parameter.")
        try:
            claims = tokens.verify(CONTENT_TOKEN_KIND, token, secret=secret)
        except tokens.TokenError as error:
            code = "link_expired" if error.code == "token_expired" else "invalid_link"
            raise ApiError(code, 403, error.description) from None
        if claims.subject != image_id:
            raise ApiError("invalid_link", 403, "The link is for another file.")
        company_id, testing = claims.company_id, claims.mode == "test"
    else:
        company_id, testing = auth.company_id, auth.testing
    with db.session() as session:
        record = _image_record(session, image_id)
    if (
        record is None
        or record.company_id != company_id
        or record.testing != testing
        or (inspection_id is not None and record.inspection_id != inspection_id)
    ):
        raise ApiError.of("image_not_found", "No image with that id.")
    try:
        small = kept_thumbnail(blobs, record.blob_key) if thumb else None
        if small is not None:
            return small, None
        return blobs.get(record.blob_key), record.filename
    except BlobNotFound:
        raise ApiError.of("image_not_found", "The image's bytes are no longer stored.") from None
