"""The image routes' own bodies (an image record is `server.inspections.schemas.Image`)."""

from __future__ import annotations

import json
from typing import Annotated

import msgspec

from server.bodies import JsonSchema, ResponseBody, schema_of


class UploadToken(ResponseBody):
    """A token for header `x-image-token`: uploads of one product, for 15 minutes."""

    token: str
    expiresAt: Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]


class Coordinates(msgspec.Struct, kw_only=True):
    latitude: float
    longitude: float


class ImageData(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The upload's `data` part (validated by `server.images.service` with its own codes)."""

    side: str
    identifier: str | msgspec.UnsetType = msgspec.UNSET
    date: str | msgspec.UnsetType = msgspec.UNSET
    coordinates: Coordinates | msgspec.UnsetType = msgspec.UNSET


#: The multipart body of an upload: the photo, and the `data` part as JSON text.
IMAGE_UPLOAD_BODY: JsonSchema = {
    "type": "object",
    "required": ["image", "data"],
    "properties": {
        "image": {"type": "string", "format": "binary"},
        "data": {
            "type": "string",
            "description": "JSON text of an object matching: " + json.dumps(schema_of(ImageData)),
        },
    },
}
