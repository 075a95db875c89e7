"""Text lines in a photo, read by RapidOCR (PP-OCRv4 detection + recognition, ONNX on the CPU).

One engine per process, built on first use (the models ship inside the `rapidocr-onnxruntime`
wheel; nothing is downloaded). Inference holds a lock: the engine keeps per-call state
(`text_score`, box thresholds) and onnxruntime already uses every core for one image, so two
threads running it at once would only fight over the same cores.

Speed: the angle classifier is off (photos are upright once `open_rgb` applied their EXIF
orientation). Detection (finding where text is, the costly step) works on a copy at most
`DETECTION_SIDE` pixels long; recognition reads each line found from the photo at
`RECOGNITION_SIDE`, so small text keeps its pixels. One photo is read once: the lines are kept
by the photo's hash (`CACHE_SIZE` photos), and every validation that reads text (`plate`,
`serialNumber`, the identity fields) shares them.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runtime.vision.pictures import rgb_array

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DETECTION_SIDE",
    "RECOGNITION_SIDE",
    "TextLine",
    "forget_lines",
    "read_lines",
    "same_row",
]

#: Longest side (pixels) the text detector sees: its cost grows with the square of it. Text
#: lower than ~8 px after this scaling is not found (a plate on a whole car photographed from
#: 5 m is ~15 px at 800).
DETECTION_SIDE = 800
#: Longest side (pixels) of the photo the lines are cut from for recognition (each line is
#: scaled to 48 px high by the recognizer: more pixels only cost the decode).
RECOGNITION_SIDE = 1280
#: Photos whose lines are kept (a photo's lines are a few kilobytes).
CACHE_SIZE = 64
#: Lines whose recognition score is below this are dropped.
MIN_TEXT_SCORE = 0.3
#: The detector's box threshold (RapidOCR's default).
BOX_THRESHOLD = 0.5

_engine: Any = None
_engine_lock = threading.Lock()
_cache: OrderedDict[bytes, list[TextLine]] = OrderedDict()
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class TextLine:
    """One line of text: what was read, the recognizer's confidence (0..1), and its four
    corners in the pixels of the image given to `read_lines` (clockwise from top left)."""

    text: str
    confidence: float
    box: tuple[tuple[float, float], ...]

    @property
    def top(self) -> float:
        return min(y for _, y in self.box)

    @property
    def bottom(self) -> float:
        return max(y for _, y in self.box)

    @property
    def left(self) -> float:
        return min(x for x, _ in self.box)

    @property
    def right(self) -> float:
        return max(x for x, _ in self.box)

    @property
    def height(self) -> float:
        """Height of the bounding rectangle (a long tilted line's is much more than its text's)."""
        return self.bottom - self.top

    @property
    def thickness(self) -> float:
        """Height of the text itself: the mean of the box's left and right edges."""
        (_, y0), (_, y1), (_, y2), (_, y3) = self.box[:4]
        return max(1.0, (abs(y3 - y0) + abs(y2 - y1)) / 2)

    @property
    def middle(self) -> float:
        return sum(y for _, y in self.box) / len(self.box)


def same_row(first: TextLine, second: TextLine) -> bool:
    """Whether two lines sit side by side on one row: centres within half a text height, and
    barely overlapping across (lines one above the other overlap across entirely)."""
    overlap = min(first.right, second.right) - max(first.left, second.left)
    narrower = min(first.right - first.left, second.right - second.left)
    close = abs(first.middle - second.middle) < 0.5 * max(first.thickness, second.thickness)
    return close and overlap < 0.3 * max(narrower, 1.0)


def _get_engine() -> Any:
    """The process's engine, built on first call (caller holds `_engine_lock`)."""
    global _engine
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR

        _engine = RapidOCR(
            det_limit_type="max",
            det_limit_side_len=DETECTION_SIDE,
            text_score=MIN_TEXT_SCORE,
        )
    return _engine


def read_lines(
    image: bytes | npt.NDArray[np.uint8],
    *,
    detection_side: int = DETECTION_SIDE,
    recognition_side: int = RECOGNITION_SIDE,
) -> list[TextLine]:
    """The text lines of a photo (bytes, decoded by `pictures.rgb_array`, or an RGB array),
    top to bottom then left to right, in the pixels of the photo bounded to
    `recognition_side`; empty when no text is found. Photos given as bytes are read once
    (cached by their hash); the sides are parameters for the benchmark's comparisons."""
    if not isinstance(image, bytes):
        return _read(image, detection_side)
    key = hashlib.sha256(image).digest() + f":{detection_side}:{recognition_side}".encode()
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return list(_cache[key])
    lines = _read(rgb_array(image, recognition_side), detection_side)
    with _cache_lock:
        _cache[key] = lines
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return list(lines)


def forget_lines() -> None:
    """Empty the lines cache (benchmarks timing the OCR; tests)."""
    with _cache_lock:
        _cache.clear()


def _read(pixels: npt.NDArray[np.uint8], detection_side: int) -> list[TextLine]:
    """Detection on a copy at most `detection_side` long, recognition on `pixels`."""
    import numpy as np
    from PIL import Image

    height, width = pixels.shape[:2]
    scale = min(1.0, detection_side / max(height, width))
    small = pixels
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        small = np.asarray(Image.fromarray(pixels).resize(size, Image.Resampling.BILINEAR))
    bgr = pixels[:, :, ::-1].copy()  # the models were trained on OpenCV's BGR order
    with _engine_lock:
        engine = _get_engine()
        engine.text_det.postprocess_op.box_thresh = BOX_THRESHOLD
        # A very wide or very low picture is padded above and below first, as the engine does.
        padded, record = engine.maybe_add_letterbox(small[:, :, ::-1].copy(), {})
        boxes, _ = engine.auto_text_det(padded)
        if boxes is None:
            return []
        top = record["padding_1"]["top"]
        boxes = [
            np.clip((np.asarray(box) - (0, top)) / scale, 0, (width, height)).astype(np.float32)
            for box in boxes
        ]
        crops = engine.get_crop_img_list(bgr, boxes)
        recognized, _ = engine.text_rec(crops)
    lines = [
        TextLine(
            text=str(text),
            confidence=float(score),
            box=tuple((float(x), float(y)) for x, y in box),
        )
        for box, (text, score) in zip(boxes, recognized, strict=True)
        if score >= MIN_TEXT_SCORE and str(text).strip()
    ]
    lines.sort(key=lambda line: (line.top, line.left))
    return lines
