"""Issue 23 §2: `edited` (editor software, a thumbnail of another picture, a screenshot's size,
camera data removed or absent) and `duplicate` (the same photo twice in one inspection), on
photos made like a phone makes them, and on the real photographs of ../shared/vision-real
(read from there, never copied)."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pytest
from PIL import ImageDraw
from rt_support import NOW, compile_template, ids

import runtime as rt
from runtime.evidence import EditedValidator, edited_signal
from runtime.imagemeta import read_meta
from runtime.photohash import NEAR_BITS, hashes, nearest
from runtime.program import Program, load_program
from runtime.state import ImageRecord
from runtime.validators import ImageUpload, ValidationContext
from tests.evidence_photos import camera_jpeg, scene, screenshot_png

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "vision-real"
TAKEN = dt.datetime(2024, 5, 1, 11, 0)


def edited(data: bytes) -> tuple[bool, object, float]:
    upload = ImageUpload(data=data)
    outcome = EditedValidator().validate(upload, ValidationContext(now=NOW))
    return outcome.valid, outcome.result, outcome.confidence


def test_a_phone_photo_is_not_edited() -> None:
    assert edited(camera_jpeg(taken=TAKEN, software="G991BXXU5CVLL")) == (True, None, 100.0)


@pytest.mark.parametrize(
    ("photo", "result", "confidence"),
    [
        (lambda: camera_jpeg(software="Adobe Photoshop 25.0 (Windows)"),
         "software: Adobe Photoshop 25.0 (Windows)", 0.0),
        (lambda: camera_jpeg(software="Snapseed 2.0"), "software: Snapseed 2.0", 0.0),
        (lambda: camera_jpeg(thumbnail=scene(seed=7)), "thumbnail differs", 0.0),
        (lambda: screenshot_png(), "screenshot 1170x2532", 0.0),
        (lambda: camera_jpeg(taken=TAKEN, make=None, model=None), "camera data removed", 0.0),
        (lambda: camera_jpeg(make=None, model=None, exposure=False, thumbnail=False),
         "no camera data", 30.0),
    ],
    ids=["photoshop", "snapseed", "thumbnail", "screenshot", "camera-removed", "no-camera"],
)  # fmt: skip
def test_each_sign_of_editing_is_named(photo: object, result: str, confidence: float) -> None:
    assert edited(photo()) == (False, result, confidence)  # type: ignore[operator]


def test_a_retouched_area_makes_the_thumbnail_differ() -> None:
    """The thumbnail shows the photo as taken; the photo was then retouched (an area pasted
    over): the thumbnail no longer matches. The photo with its own thumbnail passes."""
    original = scene(seed=2)
    retouched = original.copy()
    ImageDraw.Draw(retouched).rectangle((500, 300, 1100, 800), fill=(250, 250, 250))
    assert edited(camera_jpeg(retouched, thumbnail=original))[1] == "thumbnail differs"
    assert edited(camera_jpeg(original, thumbnail=original))[0] is True


SOURCE = """
template "Two photos"
    type: custom
    id: "65a1f0c2b3d4e5f6012345ee"
    locales: en_US

settings
    max attempts: 3

image first
    validate duplicate

image second
    validate duplicate

verdict
    approve when true
"""


IMAGE_IDS = ids("i")


def upload(
    program: Program, state: rt.InspectionState, side: str, data: bytes
) -> tuple[rt.InspectionState, ImageRecord]:
    product = state.products[0].id
    spec = next(i for i in program.manifest.images if i.side == side)
    image = ImageUpload(data=data, identifier=spec.identifier)
    return rt.add_image(program, state, product, image, now=NOW, ids=IMAGE_IDS)


def test_the_same_photo_in_two_slots_is_a_duplicate_named_by_its_inspection() -> None:
    program = load_program(compile_template(SOURCE))
    body = {"locale": "en_US", "delivery": {"channel": "email", "destination": "a@example.com"}}
    state = rt.create(
        program, body, inspection_type="custom", now=NOW, ids=ids(), company_id="c", user_id="u"
    )
    photo = scene(seed=1)
    state, _ = upload(program, state, "first", camera_jpeg(photo))
    # Retaking the same slot with the same photo is no duplicate.
    state, again = upload(program, state, "first", camera_jpeg(photo, quality=70))
    assert [v.valid for v in again.validations] == [True]
    # A resized, recompressed copy in the other slot is.
    small = photo.resize((800, 600))
    state, second = upload(program, state, "second", camera_jpeg(small, quality=60))
    (duplicate,) = second.validations
    assert (duplicate.valid, duplicate.result) == (False, state.id)


def test_crops_resizes_and_recompression_stay_near_other_photos_stay_far() -> None:
    photo = scene(seed=5)
    width, height = photo.size
    copies = [
        photo.resize((width // 3, height // 3)),
        photo.crop((48, 36, width - 48, height - 36)),  # 3% off every side
        photo.crop((0, 0, width - 80, height)),  # 5% off one side
    ]
    original = hashes(read_meta(camera_jpeg(photo)).picture)  # type: ignore[arg-type]
    for copy in copies:
        meta = read_meta(camera_jpeg(copy, quality=55))
        assert nearest((meta.phash, meta.phash_center), original) <= NEAR_BITS  # type: ignore[arg-type]
    other = read_meta(camera_jpeg(scene(seed=6)))
    assert nearest((other.phash, other.phash_center), original) > NEAR_BITS  # type: ignore[arg-type]


def real_photos() -> list[Path]:
    """Every photo of the real set once (a file labelled twice is read once)."""
    labels = json.loads((REAL / "labels.json").read_text())
    names = sorted({item["file"] for item in labels if isinstance(item, dict) and "file" in item})
    return [REAL / name for name in names]


def same_scene(a: str, b: str) -> bool:
    """The set's photo/recapture pairs show one scene (`kart_real_001`, `kart_screen_001`)."""
    return a.startswith("recapture/") and b.startswith("recapture/") and a[-7:] == b[-7:]


@pytest.mark.skipif(not (REAL / "labels.json").exists(), reason="../shared/vision-real absent")
def test_real_photos_a_resized_copy_is_found_and_no_two_different_ones_match() -> None:
    """On the 106 real photographs: every one's resized, recompressed copy is within
    `NEAR_BITS`; no two different photos are (a photo and its recapture of one scene aside)."""
    found = []
    for path in real_photos():
        meta = read_meta(path.read_bytes())
        assert meta.decoded and meta.picture is not None, path.name
        copy = io.BytesIO()
        picture = meta.picture.resize((meta.picture.width * 2 // 3, meta.picture.height * 2 // 3))
        picture.save(copy, "JPEG", quality=60)
        again = read_meta(copy.getvalue())
        stored = (meta.phash or 0, meta.phash_center or 0)
        assert nearest((again.phash or 0, again.phash_center or 0), stored) <= NEAR_BITS
        found.append((str(path.relative_to(REAL)), stored))
    assert len(found) == 106
    for index, (name, value) in enumerate(found):
        for other_name, other in found[index + 1 :]:
            if not same_scene(name, other_name):
                assert nearest(value, other) > NEAR_BITS, (name, other_name)


@pytest.mark.skipif(not (REAL / "labels.json").exists(), reason="../shared/vision-real absent")
def test_real_photos_edited_names_what_the_files_say() -> None:
    """What `edited` finds on the real set is true of each file: the many photos saved by
    Photoshop say so in EXIF Software; of the 29 with an embedded thumbnail, one shows another
    picture than the photo, and it is a real edit: `plate/us_us10.jpg`'s thumbnail reads
    CC 2281, the photo CC 2881 (a digit of the plate was changed after the shot)."""
    thumbnails = differing = 0
    for path in real_photos():
        meta = read_meta(path.read_bytes())
        signal = edited_signal(meta)
        if meta.thumbnail is not None:
            thumbnails += 1
        if signal is not None and signal[0] == "thumbnail differs":
            differing += 1
            assert path.name == "us_us10.jpg"
        if signal is not None and signal[0].startswith("software: "):
            assert any(name in signal[0].lower() for name in ("photoshop", "photo editor"))
    assert (thumbnails, differing) == (29, 1)
