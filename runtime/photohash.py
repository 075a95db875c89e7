"""A 64-bit perceptual hash of a photo, and how near two hashes are.

The hash is the classic DCT hash (pHash): the picture in grey at 32x32, the 8x8 lowest
frequencies of its 2-D DCT, one bit per coefficient above their median. Resizing, JPEG
recompression and small crops move few bits; another photo differs in about half of them.
`NEAR_BITS` is the Hamming distance up to which two photos count as the same
(`docs/vision.md`, "duplicate", gives the measured distances).

Pure Pillow and Python: about 2 ms a photo on the shared reduced copy
(`runtime.imagemeta.ImageMeta.picture`).
"""

from __future__ import annotations

import math

from PIL import Image

SIZE = 32
LOW = 8
#: Distance (differing bits of 64) up to which two photos are the same photo. Measured on the
#: 106 real photos of `../shared/vision-real` (docs/vision.md, "duplicate"): a resize to a
#: quarter with JPEG quality 60 moves at most 4 bits, a 3-5% crop on every side at most 10
#: (comparing with the central crop below); two different photos differ by 12 or more (the
#: only pair at 10 is a photo and its recapture from a screen: the same picture).
NEAR_BITS = 10
#: Share of each side the central crop leaves out: a photo cropped by a few percent matches
#: the original's central crop (and the other way round).
CENTER_MARGIN = 0.05
#: Bits of each band of the hash for the look-up (`server/images/duplicates.py`): 4 bands of
#: 16 bits, each probed with its 16 one-bit neighbours, find every stored hash within
#: 4 * 2 - 1 = 7 bits (pigeonhole), and one within 8-10 bits when one band is within 1 bit.
BAND_BITS = 16
BANDS = 64 // BAND_BITS

_COS = [[math.cos(math.pi * (2 * x + 1) * u / (2 * SIZE)) for x in range(SIZE)] for u in range(LOW)]


def phash(picture: Image.Image) -> int:
    """The picture's 64-bit DCT hash (an unsigned integer)."""
    grey = picture.convert("L").resize((SIZE, SIZE), Image.Resampling.BOX)
    pixels = list(grey.tobytes())
    rows = [pixels[y * SIZE : (y + 1) * SIZE] for y in range(SIZE)]
    # Separable DCT: along each row (8 frequencies), then down each of those columns.
    across = [
        [sum(c * p for c, p in zip(cosines, row, strict=True)) for cosines in _COS] for row in rows
    ]
    coefficients = [
        sum(_COS[v][y] * across[y][u] for y in range(SIZE)) for v in range(LOW) for u in range(LOW)
    ]
    ordered = sorted(coefficients[1:])  # the DC term says only how bright the photo is
    median = (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2
    value = 0
    for coefficient in coefficients:
        value = (value << 1) | (coefficient > median)
    return value


def center(picture: Image.Image) -> Image.Image:
    """The picture without `CENTER_MARGIN` of each side."""
    width, height = picture.size
    left, top = round(width * CENTER_MARGIN), round(height * CENTER_MARGIN)
    return picture.crop((left, top, width - left, height - top))


def hashes(picture: Image.Image) -> tuple[int, int]:
    """The hash of the whole picture and of its central crop."""
    return phash(picture), phash(center(picture))


def nearest(new: tuple[int, int], stored: tuple[int, int]) -> int:
    """How near two photos are, each given by `hashes`: whole against whole, and each whole
    against the other's central crop (one may be a slightly cropped copy of the other)."""
    return min(
        distance(new[0], stored[0]), distance(new[0], stored[1]), distance(new[1], stored[0])
    )


def probes(value: int) -> list[list[int]]:
    """For each band of `value`, the band's value and its one-bit neighbours."""
    return [[band] + [band ^ (1 << bit) for bit in range(BAND_BITS)] for band in bands(value)]


def distance(a: int, b: int) -> int:
    """Differing bits between two hashes."""
    return (a ^ b).bit_count()


def bands(value: int) -> list[int]:
    """The hash cut in `BANDS` bands of `BAND_BITS` bits, the highest first."""
    mask = (1 << BAND_BITS) - 1
    return [(value >> (BAND_BITS * (BANDS - 1 - index))) & mask for index in range(BANDS)]


def signed(value: int) -> int:
    """The hash as a signed 64-bit integer (what a BIGINT column holds)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def unsigned(value: int) -> int:
    return value + (1 << 64) if value < 0 else value
