"""The consumer's steps follow the template's optional and conditional photos (issue 25): a
photo whose `ask when` does not hold is no step, an optional photo left out does not hold the
resume point, and neighbours skip what is not shown."""

from __future__ import annotations

import datetime as dt

import runtime as rt
from inspectlang.compiler import compile_source
from runtime.program import load_program
from server.consumer import flow

SOURCE = """\
template "KYC"
    type: people

input document
    type: select
    asked at: create
    option passport: "Passport"
    option dni: "DNI"

image front
    label: "Document front"

image back
    label: "DNI back"
    ask when: inputs.document = "dni"

image box_label
    label: "Box label, if you have it"
    optional

verdict
    approve when all(i in images where i.approved)
"""
NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def started(document: str) -> tuple[rt.Program, rt.InspectionState]:
    program = load_program(compile_source(SOURCE, "kyc.insp"))
    (identifier,) = program.manifest.logic.inputs
    body = {
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "inputs": [{"identifier": identifier, "value": document}],
    }
    state = rt.create(program, body, inspection_type="people", now=NOW)
    return program, rt.start(program, state, now=NOW)


def photo_keys(steps: list[flow.Step]) -> list[str]:
    return [step.key for step in steps if step.kind == "photo"]


def test_a_photo_not_asked_is_no_step_and_keys_keep_their_number() -> None:
    program, passport = started("passport")
    assert photo_keys(flow.steps(program)) == ["photo-1", "photo-2", "photo-3"]
    assert photo_keys(flow.steps(program, passport)) == ["photo-1", "photo-3"]
    _, dni = started("dni")
    assert photo_keys(flow.steps(program, dni)) == ["photo-1", "photo-2", "photo-3"]
    assert flow.neighbours(program, "photo-1", passport)[1].key == "photo-3"  # type: ignore[union-attr]
    # a step no longer shown is placed where it stands
    assert flow.neighbours(program, "photo-2", passport)[1].key == "photo-3"  # type: ignore[union-attr]


def test_an_optional_photo_left_out_does_not_hold_the_resume_point() -> None:
    program, passport = started("passport")
    flags = {"consent": True, "details": True, "damage": True}
    assert flow.resume_step(program, passport, flags).key == "photo-1"
    front = next(s for s in program.manifest.images if s.side == "front")
    uploaded, _ = rt.add_image(
        program,
        passport,
        passport.products[0].id,
        rt.ImageUpload(data=_jpeg(), content_type="image/jpeg", identifier=front.identifier),
        now=NOW,
    )
    # the DNI back is not asked and the box label is optional: nothing is left to take
    assert flow.resume_step(program, uploaded, flags).kind == "review"


def _jpeg() -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (1280, 960), (120, 40, 40)).save(buffer, "JPEG")
    return buffer.getvalue()
