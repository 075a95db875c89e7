"""Text lines in a photo, read by RapidOCR (PP-OCRv4 detection + recognition, ONNX on the CPU).

One engine per process, built on first use (the models ship inside the `rapidocr-onnxruntime`
wheel; nothing is downloaded). Inference holds a lock: the engine keeps per-call state
(`text_score`, box thresholds) and onnxruntime already uses every core for one image, so two
threads running it at once would only fight over the same cores.

Speed: the angle classifier is off (photos are upright once `open_rgb` applied their EXIF
orientation) and detection works on at most `DETECTION_SIDE` pixels, which on the 2-core
benchmark machine keeps a plate photo near half a second.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runtime.vision.pictures import rgb_array

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["DETECTION_SIDE", "TextLine", "read_lines", "same_row"]

#: Longest side (pixels) the text detector sees; text smaller than ~12 px after this scaling
#: is lost, larger values cost time quadratically.
DETECTION_SIDE = 1280
#: Lines whose recognition score is below this are dropped by the engine itself.
MIN_TEXT_SCORE = 0.3

_engine: Any = None
_engine_lock = threading.Lock()


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


def read_lines(image: bytes | npt.NDArray[np.uint8]) -> list[TextLine]:
    """The text lines of a photo (bytes, decoded by `pictures.rgb_array`, or an RGB array),
    top to bottom then left to right; empty when no text is found."""
    pixels = rgb_array(image, DETECTION_SIDE) if isinstance(image, bytes) else image
    bgr = pixels[:, :, ::-1].copy()  # the models were trained on OpenCV's BGR order
    with _engine_lock:
        raw, _elapsed = _get_engine()(bgr, use_cls=False, text_score=MIN_TEXT_SCORE)
    lines = [
        TextLine(
            text=str(text),
            confidence=float(score),
            box=tuple((float(x), float(y)) for x, y in box),
        )
        for box, text, score in (raw or [])
    ]
    lines.sort(key=lambda line: (line.top, line.left))
    return lines
