"""Downscaled JPEG thumbnails for reports, the dashboard and share pages, so a page or a report
stays small and fast to build.

Made once and kept (`kept_thumbnail`): each stored image's thumbnail of each size is derived
the first time it is asked for and stored in the blob store beside it (`thumbnail_key`: local,
S3 and database stores alike), then served from there; a dashboard page of twenty photos, or a
report built again, decodes nothing. A photo's bytes never change under its key (a replaced
photo is a new upload with a new key), so a kept thumbnail never goes stale and a replaced
photo gets its own.

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
from server.blobs import BlobNotFound, BlobStore

#: Longest side of a report thumbnail, in pixels.
THUMBNAIL_SIZE = 400
#: JPEG quality of thumbnails.
THUMBNAIL_QUALITY = 72
#: Top folder of kept thumbnails in the blob store.
THUMBNAIL_FOLDER = "thumbs"
#: What is kept for an image that has no thumbnail (unreadable, or a file input such as a PDF),
#: so that it is not decoded again either: no JPEG is empty.
NO_THUMBNAIL = b""


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


def thumbnail_key(blob_key: str, size: int, quality: int) -> str:
    """Where the thumbnail of the blob `blob_key` at this size and quality is kept."""
    return f"{THUMBNAIL_FOLDER}/{size}-q{quality}/{blob_key}"


def kept_thumbnail(
    blobs: BlobStore,
    blob_key: str,
    size: int = THUMBNAIL_SIZE,
    quality: int = THUMBNAIL_QUALITY,
    *,
    content: bytes | None = None,
) -> bytes | None:
    """The JPEG thumbnail of the stored image `blob_key`, made once and kept in `blobs`
    (module docstring); None when the image has none. `content`: the image's bytes when the
    caller has read them already (else they are read only when the thumbnail is made).
    `BlobNotFound` when the image itself is not stored."""
    key = thumbnail_key(blob_key, size, quality)
    try:
        kept = blobs.get(key)
    except BlobNotFound:
        pass
    else:
        return kept or None
    small = thumbnail_jpeg(blobs.get(blob_key) if content is None else content, size, quality)
    blobs.put(key, small or NO_THUMBNAIL)
    return small
