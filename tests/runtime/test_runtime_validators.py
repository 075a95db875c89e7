"""Validators on real JPEGs made with Pillow (EXIF capture time and GPS) in temporary files."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path
from typing import ClassVar

import pytest
from PIL import Image
from rt_support import NOW, compile_template, ids, jpeg

import runtime as rt
from runtime.imagemeta import read_meta
from runtime.validators import (
    REGISTRY,
    CompleteValidator,
    DateValidator,
    DistanceValidator,
    ImageUpload,
    ValidationContext,
    ValidationOutcome,
    haversine_meters,
    register,
)

BUENOS_AIRES = (-34.6037, -58.3816)
MONTEVIDEO = (-34.9011, -56.1645)


def stored(tmp_path: Path, data: bytes, name: str = "photo.jpg") -> bytes:
    """Write the photo to a real file and read it back, as an upload would arrive."""
    path = tmp_path / name
    path.write_bytes(data)
    return path.read_bytes()


def test_meta_reads_size_date_and_gps(tmp_path: Path) -> None:
    taken = dt.datetime(2024, 4, 30, 9, 15, 0)
    meta = read_meta(stored(tmp_path, jpeg(320, 240, taken=taken, gps=BUENOS_AIRES)))
    assert (meta.decoded, meta.width, meta.height, meta.format) == (True, 320, 240, "JPEG")
    assert meta.taken_at == taken.replace(tzinfo=dt.UTC)
    assert meta.latitude == pytest.approx(BUENOS_AIRES[0], abs=1e-4)
    assert meta.longitude == pytest.approx(BUENOS_AIRES[1], abs=1e-4)


@pytest.mark.parametrize("data", [b"", b"not an image", b"\xff\xd8\xff\xe0broken", b"GIF89a"])
def test_meta_of_garbage_is_not_decoded(data: bytes) -> None:
    assert read_meta(data).decoded is False


def test_meta_refuses_decompression_bombs(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    Image.new("1", (7100, 7100)).save(buffer, "PNG")
    meta = read_meta(stored(tmp_path, buffer.getvalue(), "bomb.png"))
    assert (meta.decoded, meta.width) == (False, 7100)


def context(**options: float) -> ValidationContext:
    return ValidationContext(now=NOW, options=dict(options))


@pytest.mark.parametrize(
    ("size", "options", "valid"),
    [
        ((800, 600), {"minWidth": 800, "minHeight": 600}, True),
        ((799, 600), {"minWidth": 800, "minHeight": 600}, False),
        ((800, 599), {"minWidth": 800, "minHeight": 600}, False),
        ((10, 10), {}, True),
    ],
)
def test_complete(
    tmp_path: Path, size: tuple[int, int], options: dict[str, float], valid: bool
) -> None:
    upload = ImageUpload(data=stored(tmp_path, jpeg(*size)))
    outcome = CompleteValidator().validate(upload, context(**options))
    assert outcome == ValidationOutcome(100.0 if valid else 0.0, valid, f"{size[0]}x{size[1]}")


def test_complete_not_an_image() -> None:
    outcome = CompleteValidator().validate(ImageUpload(data=b"%PDF-1.4"), context())
    assert outcome == ValidationOutcome(0.0, False, "not an image")


@pytest.mark.parametrize(
    ("hours_ago", "valid"), [(1, True), (23.9, True), (24.1, False), (-0.1, True), (-1, False)]
)
def test_date_from_exif(tmp_path: Path, hours_ago: float, valid: bool) -> None:
    taken = (NOW - dt.timedelta(hours=hours_ago)).replace(tzinfo=None, microsecond=0)
    upload = ImageUpload(data=stored(tmp_path, jpeg(taken=taken)))
    outcome = DateValidator().validate(upload, context(maxAgeHours=24))
    assert outcome.valid is valid
    assert outcome.result == round(hours_ago, 2)


def test_date_exif_wins_over_the_upload_date(tmp_path: Path) -> None:
    taken = (NOW - dt.timedelta(days=3)).replace(tzinfo=None)
    upload = ImageUpload(data=stored(tmp_path, jpeg(taken=taken)), date=NOW.isoformat())
    assert DateValidator().validate(upload, context(maxAgeHours=24)).valid is False


def test_date_falls_back_to_the_upload_date() -> None:
    upload = ImageUpload(data=jpeg(), date="2024-05-01T11:00:00Z")
    outcome = DateValidator().validate(upload, context(maxAgeHours=24))
    # The result is the photo's age in hours when it was checked.
    age = (NOW - dt.datetime(2024, 5, 1, 11, tzinfo=dt.UTC)).total_seconds() / 3600
    assert outcome == ValidationOutcome(100.0, True, round(age, 2))


def test_date_unknown_is_invalid() -> None:
    assert DateValidator().validate(ImageUpload(data=jpeg()), context()).valid is False
    bad = ImageUpload(data=jpeg(), date="yesterday")
    assert DateValidator().validate(bad, context()).valid is False


def test_haversine_known_distance() -> None:
    assert haversine_meters(BUENOS_AIRES, MONTEVIDEO) == pytest.approx(206_000, rel=0.02)
    assert haversine_meters(BUENOS_AIRES, BUENOS_AIRES) == 0


def test_distance_from_exif_against_the_first_photo(tmp_path: Path) -> None:
    near = (BUENOS_AIRES[0] + 0.002, BUENOS_AIRES[1])  # about 222 m north
    upload = ImageUpload(data=stored(tmp_path, jpeg(gps=near)))
    first = ValidationContext(
        now=NOW, options={"maxDistanceMeters": 300}, first_location=BUENOS_AIRES
    )
    assert DistanceValidator().validate(upload, first).valid is True
    strict = ValidationContext(
        now=NOW, options={"maxDistanceMeters": 200}, first_location=BUENOS_AIRES
    )
    outcome = DistanceValidator().validate(upload, strict)
    assert (outcome.valid, outcome.result) == (False, 222.4)


def test_distance_uses_upload_coordinates_without_exif() -> None:
    upload = ImageUpload(data=jpeg(), latitude=MONTEVIDEO[0], longitude=MONTEVIDEO[1])
    ctx = ValidationContext(
        now=NOW, options={"maxDistanceMeters": 500}, first_location=BUENOS_AIRES
    )
    assert DistanceValidator().validate(upload, ctx).valid is False
    assert DistanceValidator().validate(ImageUpload(data=jpeg()), ctx).valid is False


def test_the_first_photo_is_within_distance_of_itself() -> None:
    upload = ImageUpload(data=jpeg(gps=MONTEVIDEO))
    assert DistanceValidator().validate(upload, context(maxDistanceMeters=1)).valid is True


ANGLE_SOURCE = """
template "Angle"
    type: car

image front
    validate angle

verdict
    approve when all(i in images where i.approved)
"""


def test_adding_a_validator_is_one_class() -> None:
    @register
    class AngleValidator:
        name: ClassVar[str] = "angle"

        def validate(self, image: ImageUpload, context: ValidationContext) -> ValidationOutcome:
            return ValidationOutcome(confidence=91, valid=True, result="level")

    try:
        program = rt.load_program(compile_template(ANGLE_SOURCE))
        body = {"locale": "en_US", "delivery": {"channel": "e", "destination": "d"}, "car": {}}
        state = rt.create(program, body, inspection_type="car", now=NOW, ids=ids())
        upload = ImageUpload(data=jpeg(), side="front")
        state, image = rt.add_image(program, state, state.products[0].id, upload, now=NOW)
        assert [(v.validation, v.confidence, v.valid, v.local) for v in image.validations] == [
            ("angle", 91, True, True)
        ]
        assert image.approved and state.status == "created"
    finally:
        del REGISTRY["angle"]


def test_distance_is_checked_against_every_earlier_photo() -> None:
    east = (BUENOS_AIRES[0], BUENOS_AIRES[1] + 0.004)  # about 366 m east of the first photo
    west = (BUENOS_AIRES[0], BUENOS_AIRES[1] - 0.004)  # about 366 m west: 733 m from `east`
    upload = ImageUpload(data=jpeg(), latitude=west[0], longitude=west[1])
    only_first = ValidationContext(
        now=NOW, options={"maxDistanceMeters": 500}, first_location=BUENOS_AIRES
    )
    assert DistanceValidator().validate(upload, only_first).valid is True
    every = ValidationContext(
        now=NOW,
        options={"maxDistanceMeters": 500},
        first_location=BUENOS_AIRES,
        locations=(BUENOS_AIRES, east),
    )
    outcome = DistanceValidator().validate(upload, every)
    assert outcome.valid is False
    assert outcome.result == round(haversine_meters(east, west), 1)
    assert 700 < haversine_meters(east, west) < 760
