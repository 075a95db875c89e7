"""What an uploaded photo says about itself, from ONE bounded decode: size, format, EXIF capture
time, GPS position and camera, and a reduced copy of its pixels that every upload check shares.

Memory is bounded whatever the file claims (issue 21 §3: a 205 KB one-colour 7060x7060 PNG used
to cost ~400 MB, decoded whole three times):

- The size is read from the header first; over `MAX_PIXELS`, or longer than `MAX_ASPECT_RATIO`
  times its width (or the reverse), nothing is decoded.
- A JPEG is decoded at 1/2, 1/4 or 1/8 of its size straight from its DCT coefficients
  (`Image.draft`), never above about twice `DECODE_SIDE`.
- A non-interlaced PNG of 8 bits or less per channel is decoded in strips of rows
  (`_png_reduced`): each strip is inflated, unfiltered by Pillow's own decoder, reduced and
  pasted into the small copy, so the whole picture never exists at full size.
- Other pictures (WebP, 16-bit or interlaced PNG, progressive JPEG) are decoded whole only up to
  `MAX_WHOLE_DECODE_PIXELS`; larger ones count as not decodable (400 `invalid_image`).
- Decodes run on one small pool (`DECODE_WORKERS` threads): concurrent uploads wait their turn
  instead of adding up, and only those threads' allocator arenas ever hold decode buffers.

The reduced copy (`ImageMeta.picture`, RGB, longest side at most `DECODE_SIDE`) is what the
upload's quality check (`runtime.vision.quality`), the blank rule (`runtime.validators.
near_uniform`) and the perceptual hash (`runtime.photohash`) look at. Bad bytes give
`decoded=False` rather than an exception, so a bad upload is a failed validation, not a crash.
"""

from __future__ import annotations

import datetime as dt
import io
import struct
import warnings
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

#: Largest picture accepted (width x height, read from the header); larger ones are not decoded.
MAX_PIXELS = 50_000_000
#: Most a picture's long side may be of its short side (a phone's panorama is about 8:1). A
#: 142 KB PNG of 200000x250 (issue 39) is under `MAX_PIXELS` yet one of its rows alone is 600 KB
#: and each whole copy 150 MB; refused from its header, nothing decoded.
MAX_ASPECT_RATIO = 20
#: Most bytes of PNG rows inflated at a time (whole strips of `PNG_STRIP_ROWS` or fewer rows):
#: a 31,600 px wide RGBA strip of 16 rows times the reduction would be 30 MB, held in copies.
PNG_STRIP_BYTES = 4_000_000
#: Largest picture of a format without a reduced decode (WebP, 16-bit or interlaced PNG,
#: progressive JPEG) that is decoded whole: 16 MP is 64 MB of RGBA. Cameras write baseline JPEG;
#: larger files of those formats are refused.
MAX_WHOLE_DECODE_PIXELS = 16_000_000
#: Longest side of the shared reduced copy (the quality check measures blur at this size).
DECODE_SIDE = 1024
#: Decodes at once in a process (the others wait their turn): each holds at most about
#: 40 MB (a JPEG's reduced decode, a PNG's strips) or, for a whole decode, 16 MP x 7 bytes.
DECODE_WORKERS = 2
#: Rows of a PNG inflated at a time (times the vertical reduction): a 7060 px RGBA strip of
#: 16 x 3 rows is 1.4 MB, held in a few copies while it is unfiltered and reduced.
PNG_STRIP_ROWS = 16

EXIF_IFD = 0x8769
GPS_IFD = 0x8825
IFD1 = -1  # Pillow's key of the thumbnail's IFD (ExifTags.IFD.IFD1)
DATETIME_ORIGINAL = 36867
OFFSET_TIME_ORIGINAL = 36881
DATETIME = 306
MAKE = 271
MODEL = 272
SOFTWARE = 305
ORIENTATION = 0x0112
#: EXIF tags only a camera writes (exposure time, f-number, ISO, focal length).
CAMERA_EXPOSURE_TAGS = (33434, 33437, 34855, 37386)
THUMBNAIL_OFFSET = 513
THUMBNAIL_LENGTH = 514


@dataclass(frozen=True)
class ImageMeta:
    decoded: bool
    width: int | None = None
    height: int | None = None
    format: str | None = None
    taken_at: dt.datetime | None = None
    #: Whether `taken_at` carried its own UTC offset (EXIF OffsetTimeOriginal); without one the
    #: EXIF time is the camera's local clock, read in the upload's declared offset
    #: (`runtime.validators.taken_at`).
    taken_at_has_offset: bool = False
    latitude: float | None = None
    longitude: float | None = None
    #: The camera (EXIF Make, Model) and the software that wrote the file (EXIF Software).
    make: str | None = None
    model: str | None = None
    software: str | None = None
    #: The file carries EXIF at all, and tags only a camera writes (exposure, f-number, ISO).
    has_exif: bool = False
    camera_exposure: bool = False
    #: EXIF orientation (1-8); 5-8 are turned by 90 degrees.
    orientation: int = 1
    #: The EXIF thumbnail (IFD1 JPEG), decoded small, when the file has one.
    thumbnail: Image.Image | None = field(default=None, compare=False, repr=False)
    #: The shared reduced copy: RGB, longest side at most `DECODE_SIDE`, not rotated.
    picture: Image.Image | None = field(default=None, compare=False, repr=False)
    #: 64-bit perceptual hashes of `picture` and of its central crop (`runtime.photohash`).
    phash: int | None = None
    phash_center: int | None = None

    @property
    def upright_size(self) -> tuple[int, int] | None:
        if self.width is None or self.height is None:
            return None
        if self.orientation in (5, 6, 7, 8):
            return self.height, self.width
        return self.width, self.height


#: The decodes run on this pool's threads only: at most `DECODE_WORKERS` at once in a process,
#: and the memory allocator's arenas that hold their buffers are those threads' only (a decode
#: on each request thread left every thread's arena holding the high-water mark of its own).
_DECODER = ThreadPoolExecutor(max_workers=DECODE_WORKERS, thread_name_prefix="photo-decode")


def read_meta(data: bytes) -> ImageMeta:
    """Decode `data` once, bounded, and read its EXIF; never raises on bad input. The decode
    runs on the decoding pool (the caller waits for it)."""
    return _DECODER.submit(_read_meta, data).result()


def _read_meta(data: bytes) -> ImageMeta:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                if not within_limits(width, height):
                    return ImageMeta(decoded=False, width=width, height=height)
                exif = _exif_of(image)
                picture = _reduced(data, image)
                if picture is None:
                    return ImageMeta(decoded=False, width=width, height=height)
                from runtime.photohash import hashes

                whole, central = hashes(picture)
                return ImageMeta(
                    decoded=True,
                    width=width,
                    height=height,
                    format=image.format,
                    picture=picture,
                    phash=whole,
                    phash_center=central,
                    **_exif_fields(exif, image.info.get("exif")),
                )
    except Exception:  # any decoding failure of untrusted bytes is "not an image"
        return ImageMeta(decoded=False)


def within_limits(width: int, height: int) -> bool:
    """Whether a picture of this size is decoded at all (`MAX_PIXELS`, `MAX_ASPECT_RATIO`)."""
    return width * height <= MAX_PIXELS and max(width, height) <= MAX_ASPECT_RATIO * max(
        1, min(width, height)
    )


#: EXIF orientation -> the transposition that makes the picture upright (as `ImageOps.
#: exif_transpose`, applied to the reduced copy instead of the whole picture).
_UPRIGHT = {
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}


def reduced_picture(data: bytes, side: int) -> Image.Image | None:
    """The picture upright (EXIF orientation applied), RGB, its longest side at most `side`,
    decoded the bounded way of the upload check, on the decoding pool: what a thumbnail (the
    dashboard's, a share page's, a report's) and an analyzer start from. None when the bytes
    are no picture or one outside the limits (the upload refused those: 400 `invalid_image`)."""
    return _DECODER.submit(_reduced_upright, data, side).result()


def _reduced_upright(data: bytes, side: int) -> Image.Image | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                if not within_limits(*image.size):
                    return None
                orientation = _exif_of(image).get(ORIENTATION, 1)
                picture = _reduced(data, image, side)
        if picture is None:
            return None
        turn = _UPRIGHT.get(orientation)
        return picture if turn is None else picture.transpose(turn)
    except Exception:  # any decoding failure of untrusted bytes is "not a picture"
        return None


# --- the bounded decode ------------------------------------------------------------------------


def _reduced(data: bytes, image: Any, side: int = DECODE_SIDE) -> Image.Image | None:
    """The picture in RGB at most `side` long, decoded bounded; None when its format has no
    reduced decode and it is over `MAX_WHOLE_DECODE_PIXELS`."""
    width, height = image.size
    if image.format == "JPEG" and "progression" in image.info:
        # A progressive JPEG keeps every DCT coefficient of the whole picture while it decodes,
        # at whatever scale (a 50 Mpx one: 240 MB): decoded only as small as other formats.
        return _small_rgb(image, side) if width * height <= MAX_WHOLE_DECODE_PIXELS else None
    if image.format == "JPEG":
        # The DCT scale that still leaves the fitted size on both sides: asking for a square
        # (side, side) kept a wide panorama at full size, its short side being under `side`.
        image.draft("RGB", _fit(width, height, side))
        return _small_rgb(image, side)
    if image.format == "PNG":
        strips = _png_layout(data, image)
        if strips is not None:
            return _png_reduced(data, image, strips, side)
    if width * height > MAX_WHOLE_DECODE_PIXELS:
        return None
    return _small_rgb(image, side)


def _factors(size: tuple[int, int], target: tuple[int, int]) -> tuple[int, int]:
    """The integer box reduction (per axis) `Image.resize` applies before resampling with a
    `reducing_gap` of 2: reducing strip by strip this way gives the same picture."""
    return (max(1, int(size[0] / target[0] / 2.0)), max(1, int(size[1] / target[1] / 2.0)))


def _fit(width: int, height: int, side: int = DECODE_SIDE) -> tuple[int, int]:
    """The size at most `side` long with the picture's proportions."""
    scale = side / max(width, height)
    if scale >= 1:
        return width, height
    return max(1, round(width * scale)), max(1, round(height * scale))


def _small_rgb(image: Any, side: int = DECODE_SIDE) -> Image.Image:
    """A new RGB picture at most `side` long (as `Image.thumbnail` reduces: a box
    reduction within a gap of 2, then bilinear), the opened file left alone."""
    image.load()
    if image.mode not in ("RGB", "L"):  # palette, alpha, CMYK: resampled as colours
        image = image.convert("RGB")
    width, height = image.size
    picture: Image.Image = image.resize(
        _fit(width, height, side), Image.Resampling.BILINEAR, reducing_gap=2.0
    )
    return picture if picture.mode == "RGB" else picture.convert("RGB")


@dataclass(frozen=True)
class _PngLayout:
    """A PNG's rows as its IDAT stream holds them."""

    stride: int  # bytes of one unfiltered row
    filter_bpp: int  # the filter's byte distance (bytes per complete pixel, at least 1)
    chunks: tuple[tuple[int, int], ...]  # (start, end) of each IDAT chunk's data


#: Carrier image (mode and raw mode) whose pixels are exactly `filter_bpp` raw bytes: Pillow's
#: zip decoder unfilters rows with the byte distance of the mode it decodes into.
_CARRIERS = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def _png_layout(data: bytes, image: Any) -> _PngLayout | None:
    """Where a non-interlaced PNG of at most 8 bits a channel keeps its rows; None otherwise."""
    if data[12:16] != b"IHDR" or len(image.tile) != 1:
        return None
    width, _, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", data[16:29])
    channels = _CHANNELS.get(color)
    if channels is None or depth > 8 or interlace:
        return None
    bits = channels * depth
    chunks = []
    position = 8
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        start = position + 8
        if kind == b"IDAT":
            chunks.append((start, min(start + length, len(data))))
        elif kind == b"IEND" or (chunks and kind != b"IDAT"):
            break
        position = start + length + 4
    if not chunks:
        return None
    return _PngLayout((width * bits + 7) // 8, max(1, bits // 8), tuple(chunks))


def _inflated(data: bytes, layout: _PngLayout, size: int) -> Iterator[bytes]:
    """The IDAT stream inflated in pieces of `size` bytes (the last one shorter), never more
    than about two pieces held at once."""
    inflater = zlib.decompressobj()
    pending = bytearray()
    view = memoryview(data)
    for start, end in layout.chunks:
        compressed: Any = view[start:end]
        while compressed:
            pending += inflater.decompress(compressed, size)
            compressed = inflater.unconsumed_tail
            while len(pending) >= size:
                yield bytes(pending[:size])
                del pending[:size]
        if inflater.eof:
            break
    if pending:
        yield bytes(pending)


def _png_reduced(
    data: bytes, image: Any, layout: _PngLayout, side: int = DECODE_SIDE
) -> Image.Image:
    """The PNG box-reduced strip by strip, then resampled: what `_small_rgb` gives."""
    width, height = image.size
    mode, rawmode = image.mode, image.tile[0].args
    rawmode = rawmode[0] if isinstance(rawmode, tuple) else rawmode
    carrier = _CARRIERS[layout.filter_bpp]
    carrier_width = layout.stride // layout.filter_bpp
    row = layout.stride + 1
    target = _fit(width, height, side)
    across, down = _factors((width, height), target)
    rows_per_strip = down * max(1, min(PNG_STRIP_ROWS, PNG_STRIP_BYTES // (row * down)))
    small = Image.new("RGB", (-(-width // across), -(-height // down)))
    previous = bytes(layout.stride)
    y = 0
    for piece in _inflated(data, layout, rows_per_strip * row):
        count = min(len(piece) // row, height - y)
        if count <= 0:
            break
        # A first row, filter 0, holding the previous strip's last unfiltered row: the strip's
        # own first row may be filtered against it (Up, Average, Paeth).
        filtered = b"\x00" + previous + piece[: count * row]
        unfiltered = Image.frombytes(
            carrier, (carrier_width, count + 1), zlib.compress(filtered, 0), "zip", carrier
        ).tobytes()
        previous = unfiltered[-layout.stride :]
        strip = Image.frombytes(mode, (width, count), unfiltered[layout.stride :], "raw", rawmode)
        if mode == "P":
            strip.putpalette(image.getpalette() or [])
            if "transparency" in image.info:
                strip.info["transparency"] = image.info["transparency"]
        strip = strip.convert("RGB")
        reduced = strip.reduce((across, down)) if across * down > 1 else strip
        small.paste(reduced, (0, y // down))
        y += count
        if y >= height:
            break
    if y < height:
        raise ValueError("the PNG's rows end early")
    if small.size == target:
        return small
    box = (0.0, 0.0, width / across, height / down)
    return small.resize(target, Image.Resampling.BILINEAR, box=box)


# --- EXIF --------------------------------------------------------------------------------------


def _exif_of(image: Any) -> Any:
    """The file's EXIF without decoding its pixels (Pillow's `getexif` loads a whole PNG to
    look for an eXIf chunk after its pixels: only one before them is read here)."""
    if image.format != "PNG":
        return image.getexif()
    exif = Image.Exif()
    raw = image.info.get("exif")
    if isinstance(raw, bytes):
        exif.load(raw)
    return exif


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        value = value.decode("latin-1", "replace")
    if not isinstance(value, str):
        return None
    value = value.strip("\x00 ").replace("\x00", "")
    return value[:100] or None


def _exif_fields(exif: Any, raw: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"has_exif": bool(exif)}
    if not exif:
        return fields
    detail = exif.get_ifd(EXIF_IFD)
    taken, has_offset = _taken_at(exif, detail)
    latitude, longitude = _gps(exif)
    orientation = exif.get(ORIENTATION, 1)
    fields.update(
        taken_at=taken,
        taken_at_has_offset=has_offset,
        latitude=latitude,
        longitude=longitude,
        make=_text(exif.get(MAKE)),
        model=_text(exif.get(MODEL)),
        software=_text(exif.get(SOFTWARE)),
        camera_exposure=any(tag in detail for tag in CAMERA_EXPOSURE_TAGS),
        orientation=orientation if isinstance(orientation, int) and 1 <= orientation <= 8 else 1,
        thumbnail=_thumbnail(exif, raw),
    )
    return fields


def _taken_at(exif: Any, detail: Any) -> tuple[dt.datetime | None, bool]:
    text = detail.get(DATETIME_ORIGINAL) or exif.get(DATETIME)
    if not isinstance(text, str):
        return None, False
    try:
        moment = dt.datetime.strptime(text.strip("\x00 "), "%Y:%m:%d %H:%M:%S")
    except ValueError:
        return None, False
    offset = _text(detail.get(OFFSET_TIME_ORIGINAL))
    if offset is not None:
        try:
            zone = dt.datetime.strptime(offset, "%z").tzinfo
        except ValueError:
            zone = None
        if zone is not None:
            return moment.replace(tzinfo=zone).astimezone(dt.UTC), True
    return moment.replace(tzinfo=dt.UTC), False


def _thumbnail(exif: Any, raw: Any) -> Image.Image | None:
    """The JPEG thumbnail EXIF's IFD1 points to, decoded (a few KB), or None."""
    if not isinstance(raw, bytes):
        return None
    try:
        ifd1 = exif.get_ifd(IFD1)
    except Exception:  # a broken IFD1 offset: no thumbnail
        return None
    offset, length = ifd1.get(THUMBNAIL_OFFSET), ifd1.get(THUMBNAIL_LENGTH)
    if not isinstance(offset, int) or not isinstance(length, int) or not 0 < length <= 65536:
        return None
    tiff = raw[6:] if raw.startswith(b"Exif\x00\x00") else raw
    try:
        with Image.open(io.BytesIO(tiff[offset : offset + length])) as small:
            if small.size[0] * small.size[1] > 1_000_000:
                return None
            return small.convert("RGB")
    except Exception:  # bytes that are no picture: no thumbnail
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
