"""Photos with the EXIF a phone camera writes (capture time and its offset, GPS, make, model,
software, exposure tags, an embedded thumbnail), made with Pillow, for the capture-evidence
and `edited` tests."""

from __future__ import annotations

import datetime as dt
import io
from typing import Literal

from PIL import Image, ImageDraw, ImageFilter

EXIF_IFD = 0x8769
GPS_IFD = 0x8825


def scene(width: int = 1600, height: int = 1200, seed: int = 0) -> Image.Image:
    """Something worth photographing: shapes and texture (sharp, exposed, not blank)."""
    picture = Image.new("RGB", (width, height), (90 + seed * 17 % 100, 120, 150))
    draw = ImageDraw.Draw(picture)
    for index in range(12):
        x = (index * 131 + seed * 71) % width
        y = (index * 89 + seed * 37) % height
        colour = ((index * 40 + seed * 13) % 255, (index * 90) % 255, (200 - index * 15) % 255)
        draw.rectangle((x, y, x + width // 5, y + height // 6), fill=colour)
        draw.ellipse((y % width, x % height, y % width + 120, x % height + 90), fill=colour[::-1])
    noise = Image.effect_noise((width, height), 25).convert("RGB")
    return Image.blend(picture, noise, 0.12).filter(ImageFilter.SHARPEN)


def _dms(value: float) -> tuple[float, float, float]:
    value = abs(value)
    degrees = int(value)
    minutes = int((value - degrees) * 60)
    seconds = (value - degrees - minutes / 60) * 3600
    return (float(degrees), float(minutes), round(seconds, 4))


def camera_jpeg(
    picture: Image.Image | None = None,
    *,
    taken: dt.datetime | None = None,
    offset: str | None = None,
    gps: tuple[float, float] | None = None,
    make: str | None = "Motorola",
    model: str | None = "moto g(8)",
    software: str | None = None,
    exposure: bool = True,
    thumbnail: Image.Image | bool = True,
    quality: int = 88,
) -> bytes:
    """A JPEG as a phone writes it. `thumbnail`: True embeds the picture's own (160 px),
    an image embeds that one instead, False none."""
    picture = picture if picture is not None else scene()
    exif = Image.Exif()
    if make:
        exif[271] = make
    if model:
        exif[272] = model
    if software:
        exif[305] = software
    detail = exif.get_ifd(EXIF_IFD)
    if taken is not None:
        detail[36867] = taken.strftime("%Y:%m:%d %H:%M:%S")
        if offset is not None:
            detail[36881] = offset
    if exposure:
        detail[33434] = 1 / 120
        detail[33437] = 1.8
        detail[34855] = 100
    if gps is not None:
        gps_ifd = exif.get_ifd(GPS_IFD)
        gps_ifd[1] = "N" if gps[0] >= 0 else "S"
        gps_ifd[2] = _dms(gps[0])
        gps_ifd[3] = "E" if gps[1] >= 0 else "W"
        gps_ifd[4] = _dms(gps[1])
    data = io.BytesIO()
    picture.save(data, "JPEG", quality=quality, exif=exif)
    if thumbnail is False:
        return data.getvalue()
    small = picture.copy() if thumbnail is True else thumbnail.copy()
    small.thumbnail((160, 160))
    return with_thumbnail(data.getvalue(), small)


def with_thumbnail(jpeg: bytes, small: Image.Image) -> bytes:
    """The JPEG with `small` embedded as its EXIF thumbnail (IFD1), as cameras do."""
    with Image.open(io.BytesIO(jpeg)) as opened:
        exif = opened.getexif()
        pixels = opened.copy()
    thumb = io.BytesIO()
    small.convert("RGB").save(thumb, "JPEG", quality=80)
    raw = thumb.getvalue()
    # Pillow writes IFD1 from the tags it holds; the thumbnail's bytes go after the IFDs.
    body = exif.tobytes()  # b"Exif\0\0" + TIFF, without a thumbnail
    tiff = bytearray(body[6:])
    order: Literal["little", "big"] = "little" if tiff[:2] == b"II" else "big"

    def number(value: int, size: int) -> bytes:
        return value.to_bytes(size, order)

    offset = len(tiff) + 2 + 3 * 12 + 4  # IFD1 (3 entries) right after, then the JPEG
    ifd0_offset = int.from_bytes(tiff[4:8], order)
    entries = int.from_bytes(tiff[ifd0_offset : ifd0_offset + 2], order)
    next_pointer = ifd0_offset + 2 + entries * 12
    tiff[next_pointer : next_pointer + 4] = number(len(tiff), 4)
    ifd1 = bytearray(number(3, 2))
    ifd1 += number(259, 2) + number(3, 2) + number(1, 4) + number(6, 2) + b"\0\0"  # JPEG
    ifd1 += number(513, 2) + number(4, 2) + number(1, 4) + number(offset, 4)
    ifd1 += number(514, 2) + number(4, 2) + number(1, 4) + number(len(raw), 4)
    ifd1 += number(0, 4)
    tiff += ifd1 + raw
    out = io.BytesIO()
    pixels.save(out, "JPEG", quality=88, exif=b"Exif\x00\x00" + bytes(tiff))
    return out.getvalue()


def screenshot_png(width: int = 1170, height: int = 2532) -> bytes:
    """A phone screenshot: screen-sized, no EXIF."""
    out = io.BytesIO()
    scene(width, height, seed=3).save(out, "PNG")
    return out.getvalue()
