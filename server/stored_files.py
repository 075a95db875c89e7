"""How stored bytes (photos, file inputs, reports) are served back, on every route.

Uploads are served from this service's own origin, next to the dashboard's pages, so a file a
browser would run (HTML, SVG, JavaScript) must never be served as such: a consumer holding a
magic link could otherwise upload `x.html` and `a.js` and have them run as a staff member who
opens them (issue 21 §2). Every route that answers stored bytes (the API's content route and
its signed links, the dashboard's photo route, the consumer pages' photos, report downloads)
answers `stored_file_response`:

- The type is detected from the bytes (`filetype`, by magic numbers), never taken from what the
  uploader declared.
- Only a picture that really is one (`INLINE_TYPES`, and Pillow reads its header as that
  format) is served `inline`. Everything else, PDF included (PDF viewers run scripts), is an
  `attachment` (downloaded, never rendered) under its file name, with the detected type, or
  `application/octet-stream` when the bytes match no known format (HTML, SVG, scripts).
- Every such response carries `CONTENT_HEADERS`: a Content-Security-Policy that allows nothing
  and sandboxes the document (so even a rendered file has no origin and runs nothing), and
  `nosniff` (so a script tag pointing at a stored file never runs it: its type is not
  JavaScript).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from urllib.parse import quote

import filetype
from litestar.response import Response
from PIL import Image

#: Types served inline: pictures a browser displays and cannot execute, as Pillow names them.
INLINE_TYPES = {
    "image/jpeg": "JPEG",
    "image/png": "PNG",
    "image/webp": "WEBP",
    "image/gif": "GIF",
}

#: Headers of every response that serves stored bytes. The names are those of the page
#: routers' headers (`server.web.security.PAGE_HEADERS`) so that these replace those, never sit
#: beside them, on the dashboard's routes.
CONTENT_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "same-site",
}

ATTACHMENT_TYPE = "application/octet-stream"
#: How long a browser may keep a stored file (its link is private to the viewer).
PRIVATE_CACHE = "private, max-age=300"


@dataclass(frozen=True, slots=True)
class Served:
    """How stored bytes are served: their media type and Content-Disposition."""

    media_type: str
    disposition: str


def _is_picture(data: bytes, media_type: str) -> bool:
    """Whether Pillow reads the header of `data` as the format its magic number names (the
    header only: no pixel is decoded)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                return image.format == INLINE_TYPES[media_type]
    except Exception:  # whatever Pillow cannot read is no picture
        return False


def served_as(data: bytes, filename: str | None) -> Served:
    """The type detected from `data`, inline when it is a picture, else an attachment."""
    detected = filetype.guess_mime(data)
    if detected in INLINE_TYPES and _is_picture(data, detected):
        return Served(detected, "inline")
    name = (filename or "file").replace("\r", "").replace("\n", "")
    ascii_name = name.encode("ascii", "replace").decode("ascii").replace('"', "")
    return Served(
        detected or ATTACHMENT_TYPE,
        f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}",
    )


def stored_file_response(
    data: bytes, filename: str | None, *, cache_control: str = PRIVATE_CACHE
) -> Response[bytes]:
    """The one answer for stored bytes on every route (see the module's docstring)."""
    served = served_as(data, filename)
    return Response(
        data,
        media_type=served.media_type,
        headers={
            "Cache-Control": cache_control,
            "Content-Disposition": served.disposition,
            **CONTENT_HEADERS,
        },
    )
