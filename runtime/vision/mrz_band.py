"""Where a document photo's MRZ is, found without OCR: the rows of the photo that hold it.

The classic locator (blackhat morphology, horizontal gradient, closing): an MRZ is two or three
rows of dark OCR-B characters, evenly spaced, each row 30 or 44 characters across most of the
document's width, stacked with gaps under two character heights. Dark text on a light ground
comes out of a blackhat; a horizontal gradient keeps its characters' vertical strokes; a
closing joins a row's characters into one blob. The blobs much longer than high and about as
wide as the widest are text rows; the stacked group of them with the most rows (at most three
counted, then the widest) is the MRZ. About 15 ms on a 1280 px photo, against about 0.7 s for
the text detector on the whole of it: the detector then runs on those rows only
(`ocr.read_lines(..., rows=mrz_rows)`).

A band that holds no MRZ costs little: the reader then reads the whole page
(`identity.document_reading`). Every parameter below was chosen on the drawn documents
(`benchmarks/vision/documents.py`: 24 TD1 cards and TD3 passports, clean to hard, each band
found holding its whole MRZ), none on the real specimens that report the figures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["mrz_rows"]

#: Longest side (px) of the grey copy the locator works on (the kernels below are sized for it).
WORK_SIDE = 800
#: Blackhat kernel (width, height): larger than a character's stroke, so dark strokes stand out.
BLACKHAT_KERNEL = (15, 7)
#: Closing kernel (width, height): joins a row's characters, not two rows.
ROW_KERNEL = (21, 3)
#: A text row's blob is at least this many times longer than high (an MRZ row: 30-45 times).
ROW_RATIO = 10
#: ...and at least this share of the photo's width (a document fills a good part of its photo).
ROW_SHARE = 0.2
#: Rows at least this share of the widest row's width may belong to the MRZ.
SIMILAR_WIDTH = 0.6
#: Rows closer than this many row heights one above the other belong to one group.
ROW_GAP = 2.0
#: Rows counted at most in a group (an MRZ has 2 or 3).
MRZ_ROWS = 3


def mrz_rows(pixels: npt.NDArray[np.uint8]) -> tuple[int, int] | None:
    """The rows (top, bottom, in `pixels`' rows) holding the photo's MRZ with a row's height of
    margin above and below, or None when no stacked, long text rows are found. `pixels` is an
    H x W x 3 RGB array."""
    import cv2
    import numpy as np

    height, width = pixels.shape[:2]
    scale = min(1.0, WORK_SIDE / max(height, width))
    grey = cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        grey = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
    grey = cv2.GaussianBlur(grey, (3, 3), 0)
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, BLACKHAT_KERNEL)
    dark = cv2.morphologyEx(grey, cv2.MORPH_BLACKHAT, kernel)
    gradient = np.abs(cv2.Sobel(dark, cv2.CV_32F, 1, 0, ksize=-1))
    low, high = float(gradient.min()), float(gradient.max())
    if high - low < 1e-6:
        return None
    scaled = (255 * (gradient - low) / (high - low)).astype(np.uint8)
    joined = cv2.morphologyEx(
        scaled, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, ROW_KERNEL)
    )
    _, mask = cv2.threshold(joined, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    _, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    band = _mrz_group(
        [
            (int(top), int(top + tall), int(wide))
            for _, top, wide, tall, _ in stats[1:]
            if wide >= ROW_RATIO * tall and wide >= ROW_SHARE * grey.shape[1]
        ]
    )
    if band is None:
        return None
    top, bottom = band
    return max(0, int(top / scale)), min(height, int(bottom / scale) + 1)


def _mrz_group(rows: list[tuple[int, int, int]]) -> tuple[int, int] | None:
    """Of text rows (top, bottom, width), the stacked group most like an MRZ, as (top,
    bottom) with a row's height of margin each side."""
    if not rows:
        return None
    widest = max(width for _, _, width in rows)
    similar = sorted(row for row in rows if row[2] >= SIMILAR_WIDTH * widest)
    groups = [[similar[0]]]
    for row in similar[1:]:
        last = groups[-1][-1]
        tall = max(row[1] - row[0], last[1] - last[0])
        if row[0] - last[1] < ROW_GAP * tall:
            groups[-1].append(row)
        else:
            groups.append([row])
    best = max(groups, key=lambda group: (min(len(group), MRZ_ROWS), sum(r[2] for r in group)))
    margin = max(bottom - top for top, bottom, _ in best)
    return min(top for top, _, _ in best) - margin, max(bottom for _, bottom, _ in best) + margin
