"""The image routes' own bodies (an image record is `server.inspections.schemas.Image`)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from server.bodies import JsonSchema, RequestBody, ResponseBody, schema_of
from server.images.content import IMAGE_FORMATS

Unset = msgspec.UnsetType
UNSET = msgspec.UNSET


class UploadToken(ResponseBody):
    """A token for header `x-image-token`: uploads of one product, for 15 minutes."""

    token: str
    expiresAt: Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]


Latitude = Annotated[float, msgspec.Meta(ge=-90, le=90)]
Longitude = Annotated[float, msgspec.Meta(ge=-180, le=180)]


class Coordinates(RequestBody):
    latitude: Latitude
    longitude: Longitude


DATE = "When the photo was taken: ISO 8601 date and time."


class ImageData(RequestBody, forbid_unknown_fields=False):
    """The upload's `data` part: which slot (`side`, or a template image's `identifier`; one of
    them is required), when and where the photo was taken, and which holder it belongs to.
    Keys it does not name are ignored, as they always were (clients send their own)."""

    side: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] | Unset | None = UNSET
    identifier: Annotated[str, msgspec.Meta(max_length=100)] | Unset | None = UNSET
    date: (
        Annotated[str, msgspec.Meta(max_length=40, description="ISO 8601 date and time.")]
        | Unset
        | None
    ) = UNSET
    coordinates: Coordinates | Unset | None = UNSET
    target: Literal["product", "identity", "custom"] | Unset | None = UNSET


#: A slot must be named: by `side`, or by a template image `identifier`.
SLOT_NAMED: JsonSchema = {
    "anyOf": [
        {"required": ["side"], "properties": {"side": {"type": "string"}}},
        {"required": ["identifier"], "properties": {"identifier": {"type": "string"}}},
    ]
}

#: The multipart body of an upload: the photo, and the `data` part holding JSON (`ImageData`).
IMAGE_UPLOAD_BODY: JsonSchema = {
    "type": "object",
    "required": ["image", "data"],
    "properties": {
        "image": {"type": "string", "format": "binary"},
        "data": {**schema_of(ImageData), **SLOT_NAMED},
    },
    "additionalProperties": False,
}
#: The media types of the upload's file part: the formats the server decodes.
IMAGE_PART_TYPES = {"image": ", ".join(sorted(set(IMAGE_FORMATS.values())))}
