"""What uploaded bytes are, decided from the bytes, never from what the client declared.

Uploads are served back from the API's own origin, so a file that a browser would run (HTML,
SVG with a script) must never be served as such:

- An image slot takes only a photo that Pillow decodes, in `IMAGE_FORMATS`, of at most
  `runtime.imagemeta.MAX_PIXELS` pixels, its long side at most `MAX_ASPECT_RATIO` times its
  short one (the size is read from the header first, so a decompression bomb or a 200000x250
  strip is refused before it is decoded): anything else is 400 `invalid_image` and nothing is
  stored.
- Whatever is stored, it is served by `server.stored_files.stored_file_response`: the type
  detected from the bytes, inline only for pictures, everything else an attachment, under a
  Content-Security-Policy that allows nothing and `nosniff`.
"""

from __future__ import annotations

from runtime.imagemeta import (
    MAX_ASPECT_RATIO,
    MAX_PIXELS,
    MAX_WHOLE_DECODE_PIXELS,
    ImageMeta,
    read_meta,
    within_limits,
)
from server.errors import ApiError

#: Pillow format name -> media type, for the photos an image slot accepts (what phone cameras
#: and browsers produce). GIF, TIFF, BMP and the rest are refused: no camera makes them.
IMAGE_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}


def invalid_image(description: str) -> ApiError:
    return ApiError.of("invalid_image", description)


def inspect_photo(data: bytes) -> ImageMeta:
    """What a photo for an image slot is; 400 `invalid_image` when it is not an accepted one."""
    meta = read_meta(data)
    if not meta.decoded:
        if meta.width is not None and meta.height is not None:
            if meta.width * meta.height > MAX_PIXELS:
                raise invalid_image(
                    f"The image is {meta.width}x{meta.height} pixels; "
                    f"at most {MAX_PIXELS:,} pixels are accepted."
                )
            if not within_limits(meta.width, meta.height):
                raise invalid_image(
                    f"The image is {meta.width}x{meta.height} pixels; its long side may be at "
                    f"most {MAX_ASPECT_RATIO} times its short side."
                )
            raise invalid_image(
                f"The image is {meta.width}x{meta.height} pixels; in this format (WebP, 16-bit "
                f"or interlaced PNG, progressive JPEG) at most {MAX_WHOLE_DECODE_PIXELS:,} "
                "pixels are accepted: send it as a baseline JPEG."
            )
        raise invalid_image("The file is not an image that can be decoded (JPEG, PNG or WebP).")
    if meta.format not in IMAGE_FORMATS:
        raise invalid_image(
            f"Images must be JPEG, PNG or WebP; this one is {meta.format or 'of no known format'}."
        )
    return meta
