"""The image routes' own bodies (an image record is `server.inspections.schemas.Image`)."""

from __future__ import annotations

from typing import Annotated

import msgspec

from server.bodies import ResponseBody


class UploadToken(ResponseBody):
    """A token for header `x-image-token`: uploads of one product, for 15 minutes."""

    token: str
    expiresAt: Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]
