"""Downscaled JPEG thumbnails for reports, the dashboard and share pages, so a page or a report
stays small and fast to build.

Decoded the one bounded way (`runtime.imagemeta.reduced_picture`): a JPEG straight at a reduced
DCT scale (`draft()`), a PNG in strips of rows, nothing over the upload's limits, at most
`DECODE_WORKERS` at once; a 7071x7071 photo's thumbnail no longer decodes all of it (565 MB,
issue 39). Anything that cannot be read becomes None (the report then says the image is
unavailable) instead of failing the whole report.
"""

from __future__ import annotations

import io

from PIL import Image

from runtime.imagemeta import reduced_picture

#: Longest side of a report thumbnail, in pixels.
THUMBNAIL_SIZE = 400
#: JPEG quality of thumbnails.
THUMBNAIL_QUALITY = 72


def thumbnail(content: bytes, size: int = THUMBNAIL_SIZE) -> Image.Image | None:
    """An RGB image whose longest side is at most `size` pixels, upright, or None when
    unreadable (`runtime.imagemeta.reduced_picture`: the upload check's bounded decode)."""
    return reduced_picture(content, size)


def thumbnail_jpeg(
    content: bytes, size: int = THUMBNAIL_SIZE, quality: int = THUMBNAIL_QUALITY
) -> bytes | None:
    """The thumbnail encoded as JPEG bytes, or None when the image is unreadable."""
    image = thumbnail(content, size)
    if image is None:
        return None
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=quality)
    return out.getvalue()
