"""Issue 35: a check whose evidence the consumer declined (the location) is not run; where it
is required, a person decides it, with the reason `location_declined` in the inspection's
language, never a red machine failure (docs/language.md, "Declined evidence")."""

from __future__ import annotations

import datetime as dt
from typing import Any

import runtime as rt
from inspectlang.compiler import compile_source
from runtime import review as rv
from runtime.cli import photo
from runtime.program import Program, load_program
from runtime.state import InspectionState
from runtime.validators import REGISTRY
from runtime.wording import review_reason_text
from tests.language.test_builtins import BARE_BODY

NOW = dt.datetime(2026, 3, 2, 12, 0, tzinfo=dt.UTC)
ANA = rv.Person.acting("m1", "Ana Reviewer")
GPS = [-34.6037, -58.3816]
SOURCE = """
template "Declined location"
    type: car
    locales: en_US, es_AR, pt_BR

settings
    max attempts: 2
    photo age limit: 24 hours
    photo distance limit: 500 meters
    minimum photo size: 64 x 48

image front
    label: "Front"
    validate complete
    validate distance{optional}

image back
    label: "Back"
    validate complete
    validate distance{optional}

verdict
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""


def program_of(required: bool = True) -> Program:
    source = SOURCE.replace("{optional}", "" if required else ", optional")
    return load_program(compile_source(source, "declined.insp"))


def started(program: Program, locale: str = "en_US") -> InspectionState:
    body = {**BARE_BODY, "car": {"plate": "AB123CD"}, "locale": locale}
    state = rt.create(program, body, inspection_type="car", now=NOW)
    return rt.start(program, state, now=NOW)


def upload(
    program: Program,
    state: InspectionState,
    identifier: str,
    *,
    gps: list[float] | None = None,
    declined: frozenset[str] = frozenset({"location"}),
) -> InspectionState:
    moment = NOW + dt.timedelta(minutes=1)
    data = photo({"gps": gps} if gps else {}, moment)
    upload = rt.ImageUpload(data, "image/jpeg", identifier=identifier, declined=declined)
    state, _ = rt.add_image(
        program, state, state.products[0].id, upload, now=moment, machine=frozenset(REGISTRY)
    )
    return state


def distance_of(state: InspectionState, index: int) -> Any:
    image = state.products[0].images[index]
    return next(v for v in image.validations if v.validation == "distance")


def both_photos(program: Program, state: InspectionState, **options: Any) -> InspectionState:
    for image in program.manifest.images:
        state = upload(program, state, image.identifier, **options)
    return state


def test_a_declined_location_is_not_run_and_a_person_decides_the_required_check() -> None:
    program = program_of()
    state = both_photos(program, started(program, "es_AR"))
    record = distance_of(state, 0)
    # Not run: no result, not a failure; a person's, so the photo is processed, not approved.
    assert (record.reported, record.valid, record.declined, record.route) == (
        False,
        None,
        "location",
        "person",
    )
    image = state.products[0].images[0]
    assert image.processed and not image.approved
    assert state.status == "started"
    state = rt.finish(program, state, completed_by="consumer", now=NOW + dt.timedelta(minutes=3))
    assert (state.status, state.veredict) == ("review", "not_defined")
    assert state.review is not None
    reasons = state.review.reasons
    assert [reason["code"] for reason in reasons] == ["location_declined"] * 2
    assert reasons[0]["message"] == (
        "front: quien hizo la inspección eligió no compartir su ubicación, así que distance no "
        "se verificó"
    )
    assert review_reason_text(reasons[0], "pt_BR") == (
        "front: quem fez a inspeção escolheu não compartilhar a localização, então distance não "
        "foi verificado"
    )
    assert review_reason_text(reasons[0], "en_US") == (
        "front: the consumer chose not to share their location, so distance was not checked"
    )
    # The person decides it as any check routed to them; then the machine's verdict approves.
    state = rv.claim(program, state, ANA, now=NOW + dt.timedelta(minutes=4))
    request = rv.ReviewRequest(
        results=tuple(
            rv.PersonResult(image.id, "distance", valid=True) for image in state.products[0].images
        )
    )
    state = rv.review(program, state, request, ANA, now=NOW + dt.timedelta(minutes=5))
    assert state.review is not None and state.review.machine is not None
    assert state.review.machine["veredict"] == "approved"
    assert rt.replay(program, state.events) == state


def test_without_declining_a_photo_with_no_position_still_fails_distance() -> None:
    """The rule is about a declined location: a missing position the consumer did not decline
    (an API upload with no coordinates) is the check failing, as before."""
    program = program_of()
    state = both_photos(program, started(program), declined=frozenset())
    record = distance_of(state, 0)
    assert (record.reported, record.valid, record.declined) == (True, False, None)
    state = rt.finish(program, state, completed_by="consumer", now=NOW + dt.timedelta(minutes=3))
    assert (state.status, state.veredict) == ("completed", "disapproved")


def test_a_photo_that_carries_its_own_position_is_checked_though_the_location_was_declined() -> (
    None
):
    program = program_of()
    state = both_photos(program, started(program), gps=GPS)
    record = distance_of(state, 1)
    assert (record.reported, record.valid, record.declined) == (True, True, None)
    state = rt.finish(program, state, completed_by="consumer", now=NOW + dt.timedelta(minutes=3))
    assert (state.status, state.veredict) == ("completed", "approved")


def test_an_optional_check_declined_is_left_out_and_needs_no_person() -> None:
    program = program_of(required=False)
    state = both_photos(program, started(program))
    assert distance_of(state, 0).declined == "location"
    assert all(image.approved for image in state.products[0].images)
    state = rt.finish(program, state, completed_by="consumer", now=NOW + dt.timedelta(minutes=3))
    assert (state.status, state.veredict) == ("completed", "approved")
