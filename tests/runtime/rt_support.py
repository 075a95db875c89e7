"""Shared helpers of the runtime tests: templates from source, clocks, ids and real JPEGs."""

from __future__ import annotations

import datetime as dt
import io
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

import runtime as rt
from inspectlang.compiler import compile_source
from inspectlang.manifest import Template
from runtime import InspectionState, load_program
from runtime.program import Program

ROOT = Path(__file__).resolve().parents[2]
NOW = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.UTC)

#: A car template with every kind of rule, check and verdict line the tests need.
CAR_SOURCE = """
template "Runtime test car"
    type: car
    id: "65a1f0c2b3d4e5f6012345aa"
    locales: en_US, es_AR

settings
    max attempts: 2
    minimum confidence: 80
    photo age limit: 24 hours
    photo distance limit: 500 meters
    minimum photo size: 64 x 48

variable score: numeric = 100
variable risk: text = "low"
variable uploads: numeric = 0

product
    require plate

image front
    label: "Front"
    label es_AR: "Frente"
    validate plate, required, minimum confidence 85
    validate color
    validate complete
    validate date
    validate recaptured, not run
    feature damage_declaration

image back
    validate damage, optional
    validate distance

input mileage
    type: numeric
    label: "Mileage"
    label es_AR: "Kilometraje"
    asked at: create
    required
    minimum: 0
    maximum: 500000
    whole number

input use
    type: select
    label: "Use"
    option private: "Private"
    option private es_AR: "Particular"
    option commercial: "Commercial"

input notes
    type: text
    label: "Notes"
    asked at: update
    required
    maximum length: 20

feature damage_declaration: on

on image uploaded
    set uploads to uploads + 1

on damage declared
    if damage.severity = "minor"
        set score to score - 10
    else if damage.severity = "severe"
        set score to score - 40
    else
        set score to score - 20

on validation failed plate of front
    set risk to "high"

check plate_matches
    name: "Plate matches"
    description: "The declared plate matches the plate read from the front photo"
    valid when: lower(car.plate) = lower(images.front.plate.result)

verdict
    disapprove "The plate does not match the declared one" when not checks.plate_matches
    disapprove "Too much damage" when score < 60
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""


def compile_template(source: str, name: str = "test.insp") -> Template:
    return compile_source(source, name)


def car_program() -> Program:
    return load_program(compile_template(CAR_SOURCE, "car.insp"))


def ids(prefix: str = "") -> Callable[[], str]:
    """Deterministic 24-hex ids."""
    counter = itertools.count(1)
    width = 24 - len(prefix)
    return lambda: f"{prefix}{next(counter):0{width}x}"


def at(minutes: int) -> dt.datetime:
    return NOW + dt.timedelta(minutes=minutes)


def jpeg(
    width: int = 200,
    height: int = 150,
    *,
    taken: dt.datetime | None = None,
    gps: tuple[float, float] | None = None,
) -> bytes:
    """A real JPEG, with EXIF DateTimeOriginal and GPS when asked. It shows something (a
    shape on a background): `complete` refuses blank photos."""
    image = Image.new("RGB", (width, height), (120, 30, 200))
    ImageDraw.Draw(image).ellipse(
        (width // 4, height // 4, 3 * width // 4, 3 * height // 4), fill=(240, 200, 40)
    )
    exif = Image.Exif()
    if taken is not None:
        exif.get_ifd(0x8769)[36867] = taken.strftime("%Y:%m:%d %H:%M:%S")
    if gps is not None:
        latitude, longitude = gps

        def dms(value: float) -> tuple[float, float, float]:
            value = abs(value)
            degrees = int(value)
            minutes = int((value - degrees) * 60)
            seconds = (value - degrees - minutes / 60) * 3600
            return (float(degrees), float(minutes), round(seconds, 4))

        gps_ifd = exif.get_ifd(0x8825)
        gps_ifd[1] = "N" if latitude >= 0 else "S"
        gps_ifd[2] = dms(latitude)
        gps_ifd[3] = "E" if longitude >= 0 else "W"
        gps_ifd[4] = dms(longitude)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif)
    return buffer.getvalue()


def create_body(**extra: Any) -> dict[str, Any]:
    program = car_program()
    mileage = next(i.identifier for i in program.manifest.inputs if i.label == "Mileage")
    body: dict[str, Any] = {
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "car": {"plate": "AB123CD", "year": 2015},
        "consumer": {"email": "c@example.com"},
        "inputs": [{"identifier": mileage, "value": 42000}],
    }
    body.update(extra)
    return body


def input_id(program: Program, label: str) -> str:
    return next(i.identifier for i in program.manifest.inputs if i.label == label)


def image_id(program: Program, side: str) -> str:
    return next(i.identifier for i in program.manifest.images if i.side == side)


GPS = (-34.6037, -58.3816)


def created(program: Program | None = None, **extra: Any) -> InspectionState:
    program = program or car_program()
    return rt.create(
        program,
        create_body(**extra),
        inspection_type="car",
        now=NOW,
        ids=ids(),
        company_id="c1",
        user_id="u1",
    )


def upload_front(
    program: Program, state: InspectionState, minutes: int = 1
) -> tuple[InspectionState, Any]:
    photo = jpeg(taken=at(minutes).replace(tzinfo=None), gps=GPS)
    upload = rt.ImageUpload(data=photo, content_type="image/jpeg", side="front")
    return rt.add_image(program, state, state.products[0].id, upload, now=at(minutes), ids=ids("a"))


def upload_back(
    program: Program, state: InspectionState, gps: tuple[float, float] = GPS
) -> tuple[InspectionState, Any]:
    upload = rt.ImageUpload(data=jpeg(gps=gps), content_type="image/jpeg", side="back")
    return rt.add_image(program, state, state.products[0].id, upload, now=at(3), ids=ids("b"))


def complete_run(program: Program, plate: str = "ab123cd") -> InspectionState:
    state = rt.start(program, created(program), now=at(0))
    state, front = upload_front(program, state)
    state = rt.record_validation(
        program,
        state,
        front.id,
        {"validation": "plate", "confidence": 90, "result": plate},
        now=at(2),
    )
    state = rt.record_validation(
        program,
        state,
        front.id,
        {"validation": "color", "confidence": 95, "result": "red"},
        now=at(2),
    )
    state, back = upload_back(program, state)
    state = rt.record_validation(
        program, state, back.id, {"validation": "damage", "confidence": 88}, now=at(4)
    )
    notes = input_id(program, "Notes")
    state = rt.update(program, state, {"inputs": [{"identifier": notes, "value": "ok"}]}, now=at(5))
    return rt.finish(program, state, completed_by="client", now=at(6))
