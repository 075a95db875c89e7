"""How large the consumer's page must keep a photo (`MAX_SIDE` in
server/consumer/static/offline.js; docs/consumer.md "Offline", docs/vision.md): the analyzers'
decisions on the real photographs (`../shared/vision-real`) downscaled to each candidate longest
side, against the same photos as they are (the baseline, measured in this run), and the bytes
a phone sends.

- plates: exact reads with nothing declared (`benchmarks.vision.real.plates`);
- faces: every pair of the real face photos (52, 13 people) and of dlib's example faces
  (`build/vision-data/faces`, `make vision-data`), decided at the shipped distance, each photo
  downscaled only when it is larger than the side (as the page does): the decisions that differ
  from the photos as they are, the faces no longer found, and the largest change of a pair's
  distance;
- bytes: the real photo with the most pixels (a 4352 px portrait) as JPEG 85, as the page
  encodes it.

    python benchmarks/bench_photo_side.py [--sides 2048,1600,1280,1024,800,640]

The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.vision import real

ROOT = Path(__file__).resolve().parent.parent


def shrunk(data: bytes, side: int | None) -> bytes:
    """The photo with its longest side at most `side` (never enlarged), JPEG 85, as the page
    makes it; unchanged for None."""
    from PIL import Image, ImageOps

    if side is None:
        return data
    with Image.open(io.BytesIO(data)) as opened:
        image = ImageOps.exif_transpose(opened).convert("RGB")
    if max(image.size) <= side:
        return data
    image.thumbnail((side, side), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=85)
    return buffer.getvalue()


def pixels(data: bytes) -> int:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return int(image.width * image.height)


def plate_reads(side: int | None) -> int:
    from runtime.vision import AnalysisSubject
    from runtime.vision.plates import PlateAnalyzer

    analyzer = PlateAnalyzer()
    return sum(
        analyzer.analyze(AnalysisSubject(data=shrunk(e.data(), side))).result == e.truth["text"]
        for e in real.entries("plate")
    )


#: dlib's example faces (Obama, Biden; `make vision-data`), beside the real set.
EXAMPLE_FACES = ROOT / "build" / "vision-data" / "faces"


def face_photos() -> list[bytes]:
    photos = [e.data() for e in real.entries("face")]
    if EXAMPLE_FACES.is_dir():
        photos += [path.read_bytes() for path in sorted(EXAMPLE_FACES.glob("*.jpg"))]
    return photos


def face_distances(side: int | None) -> list[float | None]:
    """Each pair of face photos: the distance of their embeddings, or None when a face is not
    found in one of them."""
    import numpy as np

    from runtime.vision.faces import SELFIE_EMBEDDING_SIDE, embedding
    from runtime.vision.pictures import rgb_array

    vectors = [
        embedding(rgb_array(shrunk(data, side), SELFIE_EMBEDDING_SIDE)) for data in face_photos()
    ]
    distances: list[float | None] = []
    for i, first in enumerate(vectors):
        for second in vectors[i + 1 :]:
            if first is None or second is None:
                distances.append(None)
            else:
                distances.append(float(np.linalg.norm(first - second)))
    return distances


def face_changes(faces: list[float | None], baseline: list[float | None]) -> dict[str, Any]:
    """How `faces` differs from the photos as they are: decisions at the shipped distance,
    pairs whose face is no longer found, and the largest change of a distance."""
    from runtime.vision.faces import DEFAULT_MAX_DISTANCE

    def decided(distance: float | None) -> bool | None:
        return None if distance is None else distance <= DEFAULT_MAX_DISTANCE

    pairs = list(zip(faces, baseline, strict=True))
    moved = [abs(a - b) for a, b in pairs if a is not None and b is not None]
    return {
        "face_pairs_changed": real.count(
            sum(decided(a) != decided(b) for a, b in pairs), len(pairs)
        ),
        "face_pairs_lost": real.count(
            sum(a is None and b is not None for a, b in pairs), len(pairs)
        ),
        "face_distance_max_change": round(max(moved), 4) if moved else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sides", default="2048,1600,1280,1024,800,640")
    args = parser.parse_args()
    if not real.available():
        print(json.dumps({"missing": str(real.REAL)}))
        return
    sides: list[int | None] = [None, *(int(s) for s in args.sides.split(","))]
    largest = max(real.entries("face"), key=lambda e: pixels(e.data()))
    plates_total = len(real.entries("plate"))
    baseline_faces: list[float | None] = []
    report: dict[str, Any] = {"plates": plates_total, "sides": {}}
    baseline_plates = 0
    for side in sides:
        started = time.monotonic()
        plates = plate_reads(side)
        faces = face_distances(side)
        if side is None:
            baseline_plates, baseline_faces = plates, faces
        size = len(shrunk(largest.data(), side))
        name = "as taken" if side is None else str(side)
        report["sides"][name] = {
            "plate_exact": real.count(plates, plates_total),
            "plate_ratio_to_baseline": round(plates / baseline_plates, 3)
            if baseline_plates
            else None,
            **face_changes(faces, baseline_faces),
            "largest_photo_bytes": size,
            "seconds": round(time.monotonic() - started, 1),
        }
        print(f"side {name}: {json.dumps(report['sides'][name])}", flush=True)
    print(json.dumps(report, separators=(",", ":")))


if __name__ == "__main__":
    main()
