"""Downscaled JPEG thumbnails for reports (Pillow), so a report stays small and fast to build.

A JPEG is decoded with `draft()` straight at a reduced DCT scale, which is several times faster
than decoding the full image and resizing it. Anything Pillow cannot read becomes None (the
report then says the image is unavailable) instead of failing the whole report.
"""

from __future__ import annotations

import io
import warnings

from PIL import Image, ImageOps

#: Longest side of a report thumbnail, in pixels.
THUMBNAIL_SIZE = 400
#: JPEG quality of thumbnails.
THUMBNAIL_QUALITY = 72
#: Refuse to decode images with more pixels than this (decompression bombs).
MAX_PIXELS = 60_000_000


def thumbnail(content: bytes, size: int = THUMBNAIL_SIZE) -> Image.Image | None:
    """An RGB image whose longest side is at most `size` pixels, or None when unreadable."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(content))
            if opened.width * opened.height > MAX_PIXELS:
                return None
            if opened.format == "JPEG":
                opened.draft("RGB", (size, size))
            image: Image.Image = ImageOps.exif_transpose(opened).convert("RGB")
            image.thumbnail((size, size), Image.Resampling.BILINEAR)
            image.load()
            return image
    except (
        OSError,
        ValueError,
        SyntaxError,
        Image.DecompressionBombError,
        Image.DecompressionBombWarning,
    ):
        return None


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
