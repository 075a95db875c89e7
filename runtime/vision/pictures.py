"""Photo bytes to pixels, the one way every analyzer decodes: EXIF orientation applied, RGB,
and the longest side bounded so that a 12 MP phone photo costs what a 2 MP one does (a JPEG is
decoded at reduced size when it can be)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from PIL import Image, ImageOps

from runtime.errors import InspectionRuntimeError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Longest side analyzers work on unless they ask otherwise (pixels).
DEFAULT_MAX_SIDE = 1600


class UnreadablePhoto(InspectionRuntimeError, ValueError):
    """The bytes do not decode as a picture."""


def open_rgb(data: bytes, max_side: int = DEFAULT_MAX_SIDE) -> Image.Image:
    """The photo upright (EXIF orientation applied), in RGB, its longest side <= `max_side`."""
    try:
        with Image.open(io.BytesIO(data)) as opened:
            # A JPEG is decoded straight at 1/2, 1/4 or 1/8 of its size when that still
            # leaves `max_side` pixels (from its DCT coefficients: a 12 MP photo bounded to
            # 1280 px decodes for the cost of a 3 MP one).
            opened.draft("RGB", (max_side, max_side))
            image = ImageOps.exif_transpose(opened)
            image = image.convert("RGB")
    except Exception as error:  # untrusted bytes: any decoder failure is "unreadable"
        raise UnreadablePhoto(str(error)) from None
    longest = max(image.size)
    if longest > max_side:
        scale = max_side / longest
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    return image


def rgb_array(data: bytes, max_side: int = DEFAULT_MAX_SIDE) -> npt.NDArray[np.uint8]:
    """`open_rgb` as an H x W x 3 uint8 array (numpy comes with the vision extra)."""
    import numpy as np

    return np.asarray(open_rgb(data, max_side), dtype=np.uint8)
