"""What uploaded bytes are, decided from the bytes, never from what the client declared.

Uploads are served back from the API's own origin, so a file that a browser would run (HTML,
SVG with a script) must never be served as such:

- An image slot takes only a photo that Pillow decodes, in `IMAGE_FORMATS`, of at most
  `runtime.imagemeta.MAX_PIXELS` pixels (the size is read from the header first, so a
  decompression bomb is refused before it is decoded): anything else is 400 `invalid_image`
  and nothing is stored.
- Content is served with the type detected from its bytes (`filetype`, by magic numbers).
  Only `INLINE_TYPES`, formats a browser shows and never runs, are served inline; everything
  else, PDF included (PDF viewers run scripts), is served as an `attachment` (downloaded, never
  rendered) under its upload's file name, with the detected type, or
  `application/octet-stream` when the bytes match no known format (HTML and SVG among them).
- Every content response carries `CONTENT_HEADERS`: a Content-Security-Policy that allows
  nothing and sandboxes the document, and `nosniff`.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

import filetype

from runtime.imagemeta import MAX_PIXELS, ImageMeta, read_meta
from server.errors import ApiError

#: Pillow format name -> media type, for the photos an image slot accepts (what phone cameras
#: and browsers produce). GIF, TIFF, BMP and the rest are refused: no camera makes them.
IMAGE_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}

#: Types served inline: pictures and videos a browser displays and cannot execute.
INLINE_TYPES = frozenset(
    {
        "image/jpeg",
        "image/png",
        "image/webp",
        "image/gif",
        "video/mp4",
        "video/webm",
        "video/quicktime",
    }
)

#: Headers of every response that serves uploaded bytes.
CONTENT_HEADERS = {
    "content-security-policy": "default-src 'none'; sandbox",
    "x-content-type-options": "nosniff",
    "cross-origin-resource-policy": "same-site",
}

ATTACHMENT_TYPE = "application/octet-stream"


def invalid_image(description: str) -> ApiError:
    return ApiError.of("invalid_image", description)


def inspect_photo(data: bytes) -> ImageMeta:
    """What a photo for an image slot is; 400 `invalid_image` when it is not an accepted one."""
    meta = read_meta(data)
    if not meta.decoded:
        if meta.width is not None and meta.height is not None:
            raise invalid_image(
                f"The image is {meta.width}x{meta.height} pixels; "
                f"at most {MAX_PIXELS:,} pixels are accepted."
            )
        raise invalid_image("The file is not an image that can be decoded (JPEG, PNG or WebP).")
    if meta.format not in IMAGE_FORMATS:
        raise invalid_image(
            f"Images must be JPEG, PNG or WebP; this one is {meta.format or 'of no known format'}."
        )
    return meta


@dataclass(frozen=True, slots=True)
class Served:
    """How stored bytes are served: their media type and Content-Disposition."""

    media_type: str
    disposition: str


def served_as(data: bytes, filename: str | None) -> Served:
    """The type detected from `data`, inline when it is in `INLINE_TYPES`, else an attachment."""
    detected = filetype.guess_mime(data)
    if detected in INLINE_TYPES:
        return Served(detected, "inline")
    name = (filename or "file").replace("\r", "").replace("\n", "")
    ascii_name = name.encode("ascii", "replace").decode("ascii").replace('"', "")
    return Served(
        detected or ATTACHMENT_TYPE,
        f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}",
    )
