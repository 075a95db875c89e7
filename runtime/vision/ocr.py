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
`serialNumber`, the identity fields) shares them. A reader may ask for some lines first
(`keep`: the MRZ-shaped ones of a document): the boxes found and the lines recognized stay in
the cache, so asking for the rest later recognizes only the rest. A reader may also say which
rows of the photo to look in (`rows`: `mrz_band.mrz_rows` for a document's MRZ): the detector
then sees only that band, at the scale it would see the whole photo, for a fraction of the cost.
Only what the models see is resampled or turned to BGR (`FRUGAL`): the band's rows, each
line's crop, not the whole photo; and a photo looked at twice (a plate's rows, then the whole
photo) is decoded once.

CPU: each model runs on `THREADS` onnxruntime threads. With onnxruntime's default (a thread per
core) a photo's CPU time grew by about a third on a busy machine (threads spinning while they
wait for each other) for the same lines; the service runs one analysis per worker.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runtime.vision.pictures import rgb_array

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DETECTION_SIDE",
    "FRUGAL",
    "RECOGNITION_BATCH",
    "RECOGNITION_SIDE",
    "THREADS",
    "Rows",
    "TextLine",
    "find_boxes",
    "forget_lines",
    "long_box",
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
#: Photos whose decoded pixels are kept: the last one (7.7 MB at 1600 x 1600), so that a reader
#: looking twice at one photo with other options (a plate's rows, then the whole photo when they
#: do not settle it) decodes it once (~10 ms of a 1600 px JPEG).
DECODED_SIZE = 1
#: Lines whose recognition score is below this are dropped.
MIN_TEXT_SCORE = 0.3
#: The detector's box threshold (RapidOCR's default).
BOX_THRESHOLD = 0.5
#: The detector's stride: a band cut at multiples of it is seen as in the whole photo (the
#: network downsamples by 32, and the engine rounds each side to a multiple of 32).
DETECTION_STRIDE = 32
#: RapidOCR pads a picture more than this many times wider than high above and below (its
#: `width_height_ratio`), which would double a band's cost: a band is at least this high.
WIDEST_BAND = 8
#: Lines the recognizer reads in one call. RapidOCR's default (6) pads every line of a call to
#: the longest's width; one at a time, each line costs its own width only: on the 11 real
#: specimens' MRZ rows, 0.36 s of CPU against 0.59 s (median; even two rows of one width cost
#: more together), as until 2026-11-28 (the cost benchmark measures both).
RECOGNITION_BATCH = 1
#: Resample only a band's rows to the detector's scale (PIL's `resize(box=...)`), turn only
#: each line's crop to BGR for the recognizer, not the whole photo first, and keep the last
#: photo's pixels (`DECODED_SIZE`): the same pixels (a band's within one level), so the same
#: lines, for about 20 ms less CPU on a 1600 px photo (of a plate's ~0.13 s: a full resample to
#: 576 px cost ~12 ms, a BGR copy ~8 ms), and a decode less (~10 ms) when the whole photo is
#: read after its rows. False is the reading until 2026-11-29 (the cost benchmark measures both).
FRUGAL = True
#: onnxruntime threads per model (0: onnxruntime's default, one per core, as until 2026-11-28;
#: the cost benchmark measures both).
THREADS = 1

_engines: dict[int, Any] = {}
_engine_lock = threading.Lock()
_cache: OrderedDict[bytes, _PhotoText] = OrderedDict()
_decoded: OrderedDict[bytes, npt.NDArray[np.uint8]] = OrderedDict()
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class TextLine:
    """One line of text: what was read, the recognizer's confidence (0..1), and its four
    corners in the pixels of the image given to `read_lines` (clockwise from top left).
    `characters` holds each character's confidence (0..1, one per character of `text`; the
    line's `confidence` is their mean), empty when not known: a line whose mean is high may
    still hold one letter the recognizer hesitated on, which is what a reader deciding on a
    single character (a name's, a serial's) needs to know."""

    text: str
    confidence: float
    box: tuple[tuple[float, float], ...]
    characters: tuple[float, ...] = ()

    def character_confidence(self, index: int) -> float:
        """The confidence of `text[index]`: the line's when the characters' are not known."""
        return self.characters[index] if len(self.characters) == len(self.text) else self.confidence

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


@dataclass
class _PhotoText:
    """What is known of one photo's text: the boxes found (in recognition pixels) and the
    lines recognized so far, by box index (None: recognized, no text kept)."""

    boxes: list[Any]
    read: dict[int, TextLine | None]


def _get_engine(threads: int = THREADS) -> Any:
    """The process's engine for `threads`, built on first call (caller holds `_engine_lock`)."""
    if threads not in _engines:
        from rapidocr_onnxruntime import RapidOCR

        per_model = {"intra_op_num_threads": threads, "inter_op_num_threads": 1} if threads else {}
        _engines[threads] = RapidOCR(
            det_limit_type="max",
            det_limit_side_len=DETECTION_SIDE,
            text_score=MIN_TEXT_SCORE,
            **per_model,
        )
    return _engines[threads]


#: Which lines to recognize, by their box (four corners in recognition pixels): all when None.
Keep = Callable[[tuple[tuple[float, float], ...]], bool]


#: Which rows of a photo to look for text in, given its pixels: (top, bottom) in them, or None
#: when there is nothing to look at (no line is then found).
Rows = Callable[["npt.NDArray[np.uint8]"], tuple[int, int] | None]


def long_box(box: tuple[tuple[float, float], ...], ratio: float) -> bool:
    """Whether a box is at least `ratio` times longer than high (its top edge against the mean
    of its left and right edges): an MRZ row is 20-30 times."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = box[:4]
    length = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
    height = ((x3 - x0) ** 2 + (y3 - y0) ** 2) ** 0.5 + ((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5
    return bool(length >= ratio * max(height / 2, 1.0))


def read_lines(
    image: bytes | npt.NDArray[np.uint8],
    *,
    detection_side: int = DETECTION_SIDE,
    recognition_side: int = RECOGNITION_SIDE,
    threads: int = THREADS,
    keep: Keep | None = None,
    rows: Rows | None = None,
    batch: int = RECOGNITION_BATCH,
    frugal: bool = FRUGAL,
) -> list[TextLine]:
    """The text lines of a photo (bytes, decoded by `pictures.rgb_array`, or an RGB array),
    top to bottom then left to right, in the pixels of the photo bounded to
    `recognition_side`; empty when no text is found. With `keep`, only the lines whose box it
    keeps are recognized and returned. With `rows`, text is looked for only in the band of
    the photo it names (the whole width; boxes still in the photo's pixels). Photos given as
    bytes are read once (their boxes and recognized lines cached by their hash: a later call
    recognizes only boxes not recognized yet); the sides, threads, batch and `frugal` are
    parameters for the benchmark's comparisons."""
    if not isinstance(image, bytes):
        text = _detect(image, detection_side, threads, rows, frugal)
        return _recognize(image, text, keep, threads, batch, frugal)
    band = rows.__qualname__ if rows is not None else ""
    options = f":{detection_side}:{recognition_side}:{threads}:{band}:{batch}"
    digest = hashlib.sha256(image).digest()
    key = digest + options.encode()
    with _cache_lock:
        known = _cache.get(key)
        if known is not None:
            _cache.move_to_end(key)
            wanted = _wanted(known, keep)
            if all(index in known.read for index in wanted):
                return _lines(known, wanted)
    pixels = _pixels(image, digest, recognition_side, frugal)
    if known is None:
        known = _detect(pixels, detection_side, threads, rows, frugal)
    lines = _recognize(pixels, known, keep, threads, batch, frugal)
    with _cache_lock:
        _cache[key] = known
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return lines


def _pixels(image: bytes, digest: bytes, side: int, frugal: bool) -> npt.NDArray[np.uint8]:
    """The photo decoded (`pictures.rgb_array`), or with `frugal` its pixels kept from the
    last decode."""
    key = digest + f":{side}".encode()
    with _cache_lock:
        pixels = _decoded.get(key) if frugal else None
    if pixels is None:
        pixels = rgb_array(image, side)
        pixels.flags.writeable = False  # shared by the threads reading this photo: never changed
        with _cache_lock:
            _decoded[key] = pixels
            while len(_decoded) > DECODED_SIZE:
                _decoded.popitem(last=False)
    return pixels


def find_boxes(
    pixels: npt.NDArray[np.uint8],
    detection_side: int,
    threads: int = THREADS,
    reducing_gap: float | None = None,
) -> list[tuple[tuple[float, float], ...]]:
    """The text boxes of an RGB array (four corners each, in its pixels), found by the
    detector on a copy at most `detection_side` long and not read: a reader's look for where
    its text is (`plates.plate_rows`). `reducing_gap` is PIL's for that copy (a box reduction
    by an integer factor first, cheaper than resampling every source pixel bilinearly)."""
    found = _detect(pixels, detection_side, threads, reducing_gap=reducing_gap)
    return [_corners(box) for box in found.boxes]


def forget_lines() -> None:
    """Empty the lines cache and the decoded pixels (benchmarks timing the OCR; tests)."""
    with _cache_lock:
        _cache.clear()
        _decoded.clear()


def _detect(
    pixels: npt.NDArray[np.uint8],
    detection_side: int,
    threads: int,
    rows: Rows | None = None,
    frugal: bool = FRUGAL,
    reducing_gap: float | None = None,
) -> _PhotoText:
    """The text boxes of `pixels`, found on a copy at most `detection_side` long (only in the
    band `rows` names, when given; resampled with PIL's `reducing_gap`)."""
    import numpy as np

    height, width = pixels.shape[:2]
    scale = min(1.0, detection_side / max(height, width))
    size = (width, height)
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
    band_top, band_bottom = 0, size[1]
    if rows is not None:
        band = rows(pixels)
        if band is None:
            return _PhotoText([], {})
        band_top, band_bottom = _aligned_band(band, scale, size[1], size[0])
    small = _scaled(pixels, size, (band_top, band_bottom), frugal, reducing_gap)
    with _engine_lock:
        engine = _get_engine(threads)
        engine.text_det.postprocess_op.box_thresh = BOX_THRESHOLD
        # A very wide or very low picture is padded above and below first, as the engine does.
        padded, record = engine.maybe_add_letterbox(small[:, :, ::-1].copy(), {})
        boxes, _ = engine.auto_text_det(padded)
    if boxes is None:
        return _PhotoText([], {})
    top = record["padding_1"]["top"] - band_top
    return _PhotoText(
        [
            np.clip((np.asarray(box) - (0, top)) / scale, 0, (width, height)).astype(np.float32)
            for box in boxes
        ],
        {},
    )


def _scaled(
    pixels: npt.NDArray[np.uint8],
    size: tuple[int, int],
    band: tuple[int, int],
    frugal: bool,
    reducing_gap: float | None = None,
) -> npt.NDArray[np.uint8]:
    """The rows `band` (top, bottom) of `pixels` resampled (bilinear) to `size` (width, height):
    with `frugal`, only those rows are resampled (PIL reads the source rows their filter
    needs, so the pixels are those of the whole photo resampled, then cut, within one level).
    With `reducing_gap` (PIL's), the whole photo is resampled so and then cut."""
    import numpy as np
    from PIL import Image

    height, width = pixels.shape[:2]
    top, bottom = band
    if size == (width, height):
        return pixels[top:bottom]
    picture = Image.fromarray(pixels)
    if not frugal or reducing_gap is not None:
        resampled = picture.resize(size, Image.Resampling.BILINEAR, reducing_gap=reducing_gap)
        return np.asarray(resampled)[top:bottom]
    step = height / size[1]
    box = (0.0, top * step, float(width), bottom * step)
    return np.asarray(picture.resize((size[0], bottom - top), Image.Resampling.BILINEAR, box=box))


def _aligned_band(band: tuple[int, int], scale: float, height: int, width: int) -> tuple[int, int]:
    """A band of rows (in the photo's pixels) in the detector's pixels (`scale`), widened to
    multiples of `DETECTION_STRIDE` and to at least 1/`WIDEST_BAND` of the `width`, within
    the `height`."""
    stride = DETECTION_STRIDE
    top = math.floor(band[0] * scale / stride) * stride
    bottom = math.ceil(band[1] * scale / stride) * stride
    lowest = math.ceil(width / WIDEST_BAND / stride) * stride
    bottom = min(height, max(bottom, top + lowest))
    if bottom - top < lowest:  # at the photo's foot: widened upwards
        top = max(0, (height - lowest) // stride * stride)
    return top, bottom


def _corners(box: Any) -> tuple[tuple[float, float], ...]:
    return tuple((float(x), float(y)) for x, y in box)


def _wanted(text: _PhotoText, keep: Keep | None) -> list[int]:
    return [i for i, box in enumerate(text.boxes) if keep is None or keep(_corners(box))]


def _lines(text: _PhotoText, wanted: list[int]) -> list[TextLine]:
    lines = [line for i in wanted if (line := text.read.get(i)) is not None]
    lines.sort(key=lambda line: (line.top, line.left))
    return lines


def _characters(found: str, word_box: list[Any]) -> tuple[float, ...]:
    """Each character's confidence from the recognizer's word-box answer (its fifth item, one
    probability per decoded character), empty when it does not line up with the text."""
    if not word_box or len(word_box[0]) < 5:
        return ()
    characters = tuple(float(probability) for probability in word_box[0][4])
    return characters if len(characters) == len(found) else ()


def _recognize(
    pixels: npt.NDArray[np.uint8],
    text: _PhotoText,
    keep: Keep | None,
    threads: int,
    batch: int = RECOGNITION_BATCH,
    frugal: bool = FRUGAL,
) -> list[TextLine]:
    """Recognize the kept boxes not recognized yet (cut from `pixels`, in BGR as the models
    were trained), and return every kept box's line. With `frugal`, each crop is turned to
    BGR rather than the whole photo (the crop's interpolation treats each channel alike)."""
    import numpy as np

    wanted = _wanted(text, keep)
    missing = [i for i in wanted if i not in text.read]
    if missing:
        boxes = [text.boxes[i] for i in missing]
        with _engine_lock:
            engine = _get_engine(threads)
            engine.text_rec.rec_batch_num = batch
            if frugal:
                crops = [
                    np.ascontiguousarray(crop[:, :, ::-1])
                    for crop in engine.get_crop_img_list(pixels, boxes)
                ]
            else:
                crops = engine.get_crop_img_list(pixels[:, :, ::-1].copy(), boxes)
            # return_word_box: the decoder's per-character probabilities come back too.
            recognized, _ = engine.text_rec(crops, return_word_box=True)
        for index, (found, score, *word_box) in zip(missing, recognized, strict=True):
            keep_it = score >= MIN_TEXT_SCORE and str(found).strip()
            characters = _characters(str(found), word_box)
            text.read[index] = (
                TextLine(str(found), float(score), _corners(text.boxes[index]), characters)
                if keep_it
                else None
            )
    return _lines(text, wanted)
