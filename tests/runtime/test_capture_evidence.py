"""Issue 23 §1: each image record says what it was judged on: the capture time and its source
(`exif`, `browser`, `upload`), the position and its source, the device, the slot's attempt; and
`date`/`distance` judge the photo's own data first."""

from __future__ import annotations

import datetime as dt

from rt_support import NOW, car_program, created, image_id

import runtime as rt
from runtime.api_view import capture_view
from runtime.imagemeta import read_meta
from runtime.state import ImageRecord
from runtime.validators import DateValidator, ImageUpload, ValidationContext
from tests.evidence_photos import camera_jpeg, scene

CORDOBA = (-31.4201, -64.1888)
BUENOS_AIRES = (-34.6037, -58.3816)


def upload_front(data: bytes, **declared: object) -> ImageRecord:
    program = car_program()
    state = created(program)
    upload = ImageUpload(data=data, identifier=image_id(program, "front"), **declared)  # type: ignore[arg-type]
    _, record = rt.add_image(program, state, state.products[0].id, upload, now=NOW)
    return record


def test_the_photo_s_own_exif_is_judged_and_named_as_the_source() -> None:
    taken = (NOW - dt.timedelta(hours=2)).replace(tzinfo=None)
    photo = camera_jpeg(taken=taken, offset="+00:00", gps=CORDOBA, software="V12.5.3")
    record = upload_front(
        photo,
        date=(NOW - dt.timedelta(minutes=1)).isoformat(),
        latitude=BUENOS_AIRES[0],
        longitude=BUENOS_AIRES[1],
    )
    capture = capture_view(record)
    assert capture == {
        "takenAt": "2024-05-01T10:00:00.000Z",
        "takenAtSource": "exif",
        "latitude": capture["latitude"],
        "longitude": capture["longitude"],
        "locationSource": "exif",
        "device": {"make": "Motorola", "model": "moto g(8)", "software": "V12.5.3"},
    }
    assert (round(capture["latitude"], 3), round(capture["longitude"], 3)) == (-31.42, -64.189)
    assert record.attempt == 1
    date = next(v for v in record.validations if v.validation == "date")
    assert date.result == 2.0


def test_what_the_client_declared_is_the_source_when_the_photo_says_nothing() -> None:
    photo = camera_jpeg(make=None, model=None, exposure=False, thumbnail=False)
    record = upload_front(
        photo, date="2024-05-01T08:30:00-03:00", latitude=BUENOS_AIRES[0], longitude=BUENOS_AIRES[1]
    )
    assert capture_view(record) == {
        "takenAt": "2024-05-01T11:30:00.000Z",
        "takenAtSource": "browser",
        "latitude": BUENOS_AIRES[0],
        "longitude": BUENOS_AIRES[1],
        "locationSource": "browser",
        "device": None,
    }


def test_with_no_capture_time_the_upload_time_is_shown_and_date_fails() -> None:
    record = upload_front(camera_jpeg(make=None, model=None, exposure=False, thumbnail=False))
    capture = capture_view(record)
    assert capture["takenAtSource"] == "upload"
    assert capture["takenAt"] == record.uploadedAt
    assert capture["locationSource"] is None and capture["latitude"] is None
    date = next(v for v in record.validations if v.validation == "date")
    assert (date.valid, date.result) == (False, None)


def test_a_retake_counts_its_attempt() -> None:
    program = car_program()
    state = created(program)
    front = image_id(program, "front")
    product = state.products[0].id
    for number in (1, 2):
        upload = ImageUpload(data=camera_jpeg(scene(seed=number)), identifier=front)
        state, record = rt.add_image(program, state, product, upload, now=NOW)
        assert record.attempt == number


def test_an_exif_time_without_offset_is_read_in_the_offset_the_phone_declared() -> None:
    """A phone in Argentina (UTC-3) writes its local 09:00 without OffsetTimeOriginal; the page
    sends its local time with `-03:00`: the photo was taken at 12:00 UTC, not 09:00 UTC."""
    photo = camera_jpeg(taken=dt.datetime(2024, 5, 1, 9, 0), thumbnail=False)
    meta = read_meta(photo)
    upload = ImageUpload(data=photo, date="2024-05-01T09:05:00-03:00")
    context = ValidationContext(now=NOW, options={"maxAgeHours": 1}, meta=meta)
    outcome = DateValidator().validate(upload, context)
    assert (outcome.valid, outcome.result) == (True, 0.0)
    # Declared in UTC (an API client sending `Z`): read as UTC, as before.
    utc = ImageUpload(data=photo, date="2024-05-01T12:05:00Z")
    assert DateValidator().validate(utc, context).result == 3.0
