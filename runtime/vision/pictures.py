"""Photo bytes to pixels, the one way every analyzer decodes: EXIF orientation applied, RGB,
and the longest side bounded so that a 12 MP phone photo costs what a 2 MP one does (a JPEG is
decoded at reduced size when it can be)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from PIL import ExifTags, Image, ImageOps

from runtime.errors import InspectionRuntimeError
from runtime.imagemeta import reduced_picture, within_limits

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Longest side analyzers work on unless they ask otherwise (pixels).
DEFAULT_MAX_SIDE = 1600


class UnreadablePhoto(InspectionRuntimeError, ValueError):
    """The bytes do not decode as a picture."""


def open_rgb(data: bytes, max_side: int = DEFAULT_MAX_SIDE) -> Image.Image:
    """The photo upright (EXIF orientation applied), in RGB, its longest side <= `max_side`.

    A JPEG is decoded straight at 1/2, 1/4 or 1/8 of its size when that still leaves its fitted
    size (from its DCT coefficients: a 12 MP photo bounded to 1280 px decodes for the cost of a
    3 MP one), then resampled with Lanczos. Anything else goes the upload check's bounded way
    (`runtime.imagemeta.reduced_picture`: a PNG in strips, nothing over the upload's limits),
    so no picture the upload accepted is ever whole in memory (issue 39)."""
    try:
        with Image.open(io.BytesIO(data)) as opened:
            if opened.format != "JPEG" or not within_limits(*opened.size):
                reduced = None
            else:
                width, height = opened.size
                scale = min(1.0, max_side / max(width, height))
                opened.draft("RGB", (max(1, round(width * scale)), max(1, round(height * scale))))
                # Turned only when the EXIF says so: an upright photo (most) is copied once, by
                # convert, not first by exif_transpose too (15 ms of a 1600 px photo's ~45).
                orientation = opened.getexif().get(ExifTags.Base.Orientation, 1)
                upright = ImageOps.exif_transpose(opened) if orientation != 1 else opened
                reduced = upright.convert("RGB")
    except Exception as error:  # untrusted bytes: any decoder failure is "unreadable"
        raise UnreadablePhoto(str(error)) from None
    if reduced is None:
        image = reduced_picture(data, max_side)
        if image is None:
            raise UnreadablePhoto("not a picture within the upload's limits")
        return image
    longest = max(reduced.size)
    if longest > max_side:
        scale = max_side / longest
        size = (max(1, round(reduced.width * scale)), max(1, round(reduced.height * scale)))
        reduced = reduced.resize(size, Image.Resampling.LANCZOS)
    return reduced


def rgb_array(data: bytes, max_side: int = DEFAULT_MAX_SIDE) -> npt.NDArray[np.uint8]:
    """`open_rgb` as an H x W x 3 uint8 array (numpy comes with the vision extra)."""
    import numpy as np

    return np.asarray(open_rgb(data, max_side), dtype=np.uint8)
