"""Fraud signals that run while the upload waits (issue 23 §2): `duplicate` and `edited`.

Both look at what the upload's one decode found (`runtime.imagemeta.ImageMeta`): the
perceptual hashes, the EXIF camera and software, the embedded thumbnail, the size.

- `duplicate`: the same or a near-same photo (`runtime.photohash`, within `NEAR_BITS`: resized,
  recompressed, cropped by a few percent) is already in this inspection (another slot) or, as
  the server found in its history (`ImageUpload.duplicates`), in another inspection of the
  company. `result` names the inspection that already has it (this inspection's own id when it
  is here twice); null when the photo is new.
- `edited`: the first signal found, as `result`: an image editor named in EXIF Software
  (`software: Adobe Photoshop 25.0`, confidence 0), an embedded thumbnail that shows another
  picture than the photo (`thumbnail differs`, 0), a screen's exact size with no camera data
  (`screenshot 1170x2532`, 0), a camera capture without camera data (EXIF exposure or capture
  time but no make or model: `camera data removed`, 0), no camera data at all (`no camera data`,
  confidence 30: below the default minimum confidence, so it fails, but a template may accept
  it with `minimum confidence 25` and still refuse the others). Null when nothing was found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from PIL import Image, ImageChops, ImageStat

from runtime.imagemeta import ImageMeta
from runtime.photohash import NEAR_BITS, nearest
from runtime.validators import (
    ImageUpload,
    ValidationContext,
    ValidationOutcome,
    _meta,
    register,
)


@dataclass(frozen=True)
class DuplicateMatch:
    """An earlier photo near this one: where it is and how near (differing bits of 64)."""

    inspection_id: str
    image_id: str
    bits: int


#: Lower-case fragments of EXIF Software values written by image editors (not by cameras or
#: phones, whose firmware versions look like `G991BXXU5CVLL`, `17.1.2`, `Ver.1.00`).
EDITOR_SOFTWARE = (
    "photoshop",
    "lightroom",
    "adobe",
    "gimp",
    "snapseed",
    "picsart",
    "pixelmator",
    "affinity photo",
    "canva",
    "facetune",
    "meitu",
    "vsco",
    "paint.net",
    "photopea",
    "polarr",
    "airbrush",
    "photodirector",
    "photoscape",
    "fotor",
    "picasa",
    "luminar",
    "capture one",
    "darktable",
    "rawtherapee",
    "befunky",
    "pixlr",
    "acdsee",
    "corel",
    "krita",
    "faceapp",
    "remini",
    "lensa",
    "inshot",
    "photo editor",
)

#: Screen sizes (pixels, portrait) of phones, tablets and computer displays: a picture of
#: exactly one of these sizes, in either orientation, without camera data, is a screenshot.
SCREEN_SIZES = frozenset(
    {
        (640, 1136), (750, 1334), (828, 1792), (1080, 1920), (1125, 2436), (1170, 2532),
        (1179, 2556), (1242, 2208), (1242, 2688), (1284, 2778), (1290, 2796), (1206, 2622),
        (1320, 2868), (720, 1280), (720, 1520), (720, 1600), (1080, 2160), (1080, 2280),
        (1080, 2340), (1080, 2400), (1080, 2408), (1440, 2560), (1440, 2960), (1440, 3040),
        (1440, 3088), (1440, 3120), (1440, 3200), (1536, 2048), (1620, 2160), (1640, 2360),
        (1668, 2224), (1668, 2388), (2048, 2732), (768, 1366), (900, 1440), (900, 1600),
        (1050, 1680), (1080, 1920), (1200, 1920), (1440, 2560), (1600, 2560), (1800, 2880),
        (2160, 3840), (1600, 2560), (1664, 2560), (1964, 3024), (2234, 3456),
    }
)  # fmt: skip
#: Mean grey difference (0-255) over 16x16 above which the embedded thumbnail shows another
#: picture. A photo's own thumbnail differs by under 1 (drawn photos) to 3 (real camera
#: photos of ../shared/vision-real); another picture, or an area of a tenth of the frame
#: painted over, by 8 or more.
THUMBNAIL_MAX_DIFFERENCE = 6.0
#: Confidence of `edited` when the photo carries no camera data at all (see the module).
NO_CAMERA_DATA_CONFIDENCE = 30.0


def _outcome(valid: bool, result: Any, confidence: float | None = None) -> ValidationOutcome:
    score = confidence if confidence is not None else (100.0 if valid else 0.0)
    return ValidationOutcome(confidence=score, valid=valid, result=result)


def _without_bars(grey: Image.Image) -> Image.Image:
    """The thumbnail without the black bars a camera adds when its frame has another shape."""
    columns = grey.resize((grey.width, 1), Image.Resampling.BOX).tobytes()
    rows = grey.resize((1, grey.height), Image.Resampling.BOX).tobytes()
    lit_columns = [index for index, level in enumerate(columns) if level > 8]
    lit_rows = [index for index, level in enumerate(rows) if level > 8]
    if not lit_columns or not lit_rows:
        return grey
    box = (lit_columns[0], lit_rows[0], lit_columns[-1] + 1, lit_rows[-1] + 1)
    cropped = grey.crop(box)
    return cropped if cropped.width * cropped.height >= grey.width * grey.height // 2 else grey


def _comparable(picture: Image.Image) -> Image.Image:
    """Grey at 16x16: what a thumbnail and its photo are compared on."""
    return picture.resize((16, 16), Image.Resampling.BOX)


def thumbnail_differs(meta: ImageMeta) -> bool:
    """Whether the embedded EXIF thumbnail shows another picture than the photo."""
    if meta.thumbnail is None or meta.picture is None:
        return False
    small = _comparable(_without_bars(meta.thumbnail.convert("L")))
    big = _comparable(meta.picture.convert("L"))
    difference = ImageStat.Stat(ImageChops.difference(small, big)).mean[0]
    return difference > THUMBNAIL_MAX_DIFFERENCE


def edited_signal(meta: ImageMeta) -> tuple[str, float] | None:
    """The first sign of editing found (the result text, the confidence), or None."""
    software = (meta.software or "").lower()
    if any(name in software for name in EDITOR_SOFTWARE):
        return f"software: {meta.software}", 0.0
    if thumbnail_differs(meta):
        return "thumbnail differs", 0.0
    camera = bool(meta.make or meta.model)
    size = meta.upright_size
    if not camera and size is not None and (min(size), max(size)) in SCREEN_SIZES:
        return f"screenshot {size[0]}x{size[1]}", 0.0
    if not camera and (meta.camera_exposure or meta.taken_at is not None):
        return "camera data removed", 0.0
    if not camera:
        return "no camera data", NO_CAMERA_DATA_CONFIDENCE
    return None


@register
class EditedValidator:
    """The photo shows no sign of editing (see the module for the signs and their results)."""

    name: ClassVar[str] = "edited"

    def validate(self, image: ImageUpload, context: ValidationContext) -> ValidationOutcome:
        meta = _meta(image, context)
        if not meta.decoded:
            return _outcome(False, "not an image")
        found = edited_signal(meta)
        if found is None:
            return _outcome(True, None)
        result, confidence = found
        return _outcome(False, result, confidence)


@register
class DuplicateValidator:
    """The photo is not already in this inspection (another slot) nor in another inspection
    of the company; `result` names the inspection that has it."""

    name: ClassVar[str] = "duplicate"

    def validate(self, image: ImageUpload, context: ValidationContext) -> ValidationOutcome:
        meta = _meta(image, context)
        if not meta.decoded or meta.phash is None or meta.phash_center is None:
            return _outcome(False, "not an image")
        new = (meta.phash, meta.phash_center)
        here = [
            bits for stored in context.photo_hashes if (bits := nearest(new, stored)) <= NEAR_BITS
        ]
        if here and context.inspection_id is not None:
            return _outcome(False, context.inspection_id)
        elsewhere = sorted(image.duplicates, key=lambda match: match.bits)
        if elsewhere:
            return _outcome(False, elsewhere[0].inspection_id)
        return _outcome(True, None)
