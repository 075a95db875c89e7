"""What an uploaded photo says about itself: size, format, EXIF capture time and GPS position.

Pillow decodes the bytes; pictures over `MAX_PIXELS` or that do not decode give `decoded=False`
rather than an exception, so a bad upload is a failed validation, not a crash.
"""

from __future__ import annotations

import datetime as dt
import io
import warnings
from dataclasses import dataclass
from typing import Any

from PIL import Image

#: Largest picture decoded (width x height); larger ones count as not decodable.
MAX_PIXELS = 50_000_000

EXIF_IFD = 0x8769
GPS_IFD = 0x8825
DATETIME_ORIGINAL = 36867
DATETIME = 306


@dataclass(frozen=True)
class ImageMeta:
    decoded: bool
    width: int | None = None
    height: int | None = None
    format: str | None = None
    taken_at: dt.datetime | None = None
    latitude: float | None = None
    longitude: float | None = None


def read_meta(data: bytes) -> ImageMeta:
    """Decode `data` and read its EXIF; never raises on bad input."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                if width * height > MAX_PIXELS:
                    return ImageMeta(decoded=False, width=width, height=height)
                image.load()
                exif = image.getexif()
                taken = _taken_at(exif)
                latitude, longitude = _gps(exif)
                return ImageMeta(
                    decoded=True,
                    width=width,
                    height=height,
                    format=image.format,
                    taken_at=taken,
                    latitude=latitude,
                    longitude=longitude,
                )
    except Exception:  # any decoding failure of untrusted bytes is "not an image"
        return ImageMeta(decoded=False)


def _taken_at(exif: Any) -> dt.datetime | None:
    text = exif.get_ifd(EXIF_IFD).get(DATETIME_ORIGINAL) or exif.get(DATETIME)
    if not isinstance(text, str):
        return None
    try:
        return dt.datetime.strptime(text.strip("\x00 "), "%Y:%m:%d %H:%M:%S").replace(tzinfo=dt.UTC)
    except ValueError:
        return None


def _degrees(value: Any) -> float | None:
    try:
        degrees, minutes, seconds = (float(part) for part in value)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return degrees + minutes / 60 + seconds / 3600


def _gps(exif: Any) -> tuple[float | None, float | None]:
    gps = exif.get_ifd(GPS_IFD)
    if not gps:
        return None, None
    latitude = _degrees(gps.get(2))
    longitude = _degrees(gps.get(4))
    if latitude is None or longitude is None:
        return None, None
    if gps.get(1) == "S":
        latitude = -latitude
    if gps.get(3) == "W":
        longitude = -longitude
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        return None, None
    return latitude, longitude


def parse_timestamp(value: Any) -> dt.datetime | None:
    """An ISO 8601 text (or datetime) as an aware UTC datetime, or None."""
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, str) and len(value) <= 40:
        try:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)
