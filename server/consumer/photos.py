"""The JSON endpoints `offline.js` calls on a photo step: the upload (through the same images
service as `POST /v1/inspection/image/:productId`) and the photos' validation results as they
complete (polled)."""

from __future__ import annotations

import re
from typing import Any

from litestar import Request, get, post
from litestar.params import FromPath
from litestar.response import Response

from runtime.engine import attempts_left
from runtime.state import ValidationRecord
from server.common import in_thread
from server.consumer.visits import Visit, visit_of
from server.errors import ApiError
from server.images import service as images
from server.multipart import read_body
from server.web.templating import gettext
from server.web.validations import HIDDEN_FROM_CONSUMERS, validation_help, validation_label


def _json_error(visit: Visit | None, error: ApiError) -> Response[Any]:
    locale = visit.locale if visit else "en_US"
    words = {
        "max_attempts_exceeded": gettext(
            locale, "No more retakes are allowed for this photo; your last photo is kept."
        ),
        "inspection_not_editable": gettext(locale, "This inspection can no longer be changed."),
        "invalid_image": gettext(locale, "That file is not a photo we can read. Try again."),
    }
    return Response(
        {"code": error.code, "message": words.get(error.code, error.description)},
        status_code=error.status,
        media_type="application/json",
    )


def location_declined(visit: Visit, denied: bool) -> frozenset[str]:
    """`{"location"}` when the consumer declined to share their position (left the welcome's
    location box unticked, or the browser refused it): the checks that need it are not run
    and, where required, a person decides them (docs/consumer.md, "Declining the location")."""
    return frozenset({"location"}) if denied or not visit.flags.get("location") else frozenset()


@post("/{inspection_id:str}/photo", status_code=201)
async def upload_photo(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    """A photo from `offline.js` (multipart: `image`, `data` JSON with `identifier` or
    `side`, `coordinates`). Answers the image as the API does, plus `attemptsLeft`."""
    visit = await in_thread(visit_of, request, inspection_id)
    if visit is None:
        return Response({"code": "inspection_not_found"}, status_code=404)
    try:
        body = await read_body(request)
        data = dict(body.data) if isinstance(body.data, dict) else {}
        # The page's own word that the browser refused the position (not the API's field).
        denied = data.pop("locationDenied", None) is True
        products = visit.view.state.products
        if not products:
            raise ApiError.of("product_not_found", "The inspection has no product.")
        view = await in_thread(
            images.upload_image,
            visit.shared.db,
            visit.shared.settings,
            visit.shared.blobs,
            visit.shared.analyzers,
            visit.auth,
            products[0].id,
            body.files.get("image"),
            data,
            visit.shared.clock(),
            declined=location_declined(visit, denied),
        )
    except ApiError as error:
        return _json_error(visit, error)
    identifier = data.get("identifier")
    left = None
    if isinstance(identifier, str):
        fresh = await in_thread(visit_of, request, inspection_id)
        if fresh is not None:
            left = attempts_left(fresh.view.program, fresh.view.state, identifier)
    return Response({**view, "attemptsLeft": left}, status_code=201, media_type="application/json")


def spaced_plate(text: str) -> str:
    """A plate as people write it: letters and digits in groups (`AB123CD` -> `AB 123 CD`)."""
    compact = "".join(text.split()).upper()
    return re.sub(r"(?<=[A-Z])(?=\d)|(?<=\d)(?=[A-Z])", " ", compact)


def what_was_read(record: ValidationRecord, declared: dict[str, Any], locale: str) -> str:
    """What a reading check read, beside what was declared, in the consumer's words ("" for a
    check that reads nothing a person can compare): `plate` says the plate it read."""
    if record.validation != "plate" or not record.reported:
        return ""
    read = record.result if isinstance(record.result, str) and record.result.strip() else None
    expected = declared.get("plate")
    expected = expected if isinstance(expected, str) and expected.strip() else None
    if read is None:
        return gettext(locale, "We could not read a plate in this photo.")
    if expected is None:
        return gettext(locale, "We read %(read)s.") % {"read": spaced_plate(read)}
    return gettext(locale, "We read %(read)s; the declared plate is %(declared)s.") % {
        "read": spaced_plate(read),
        "declared": spaced_plate(expected),
    }


@get("/{inspection_id:str}/status", sync_to_thread=True)
def photo_status(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    """Each photo's validations as they complete (`offline.js` polls this)."""
    visit = visit_of(request, inspection_id)
    if visit is None:
        return Response({"code": "inspection_not_found"}, status_code=404)
    found = []
    for product in visit.view.state.products:
        for image in product.images:
            found.append(
                {
                    "_id": image.id,
                    "identifier": image.templateImageIdentifier,
                    "processed": image.processed,
                    "approved": image.approved,
                    "validations": [
                        {
                            "validation": v.validation,
                            "label": validation_label(v.validation, visit.locale),
                            "help": validation_help(v.validation, visit.locale),
                            "done": v.reported or not v.run,
                            "valid": v.valid,
                            "required": v.required,
                            "read": what_was_read(v, product.data, visit.locale),
                        }
                        for v in image.validations
                        # One a person decides later is not "Checking…" on the phone forever.
                        if v.run
                        and (v.reported or v.route == "machine")
                        and v.validation not in HIDDEN_FROM_CONSUMERS
                    ],
                }
            )
    return Response(
        {"status": visit.view.state.status, "images": found},
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )
