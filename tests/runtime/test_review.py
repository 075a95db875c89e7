"""A person in the loop (issue 22, docs/review.md): routing, status `review`, a person's
results and decision, retakes, and every built-in and example reaching a verdict."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import typing
import uuid
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import given
from hypothesis import strategies as st

import runtime as rt
from inspectlang.builtins import get_builtin
from inspectlang.compiler import compile_source
from inspectlang.manifest import Disapproval, Template
from runtime import review as rv
from runtime.cli import Simulation, photo
from runtime.errors import InspectionError
from runtime.program import Program, load_program
from runtime.state import InspectionState
from runtime.validators import REGISTRY
from tests.language.test_builtins import BARE_BODY, PAIRS, REQUIRED_UPDATES

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.insp"))
NOW = dt.datetime(2026, 3, 2, 12, 0, tzinfo=dt.UTC)
ANA = rv.Person.acting("m1", "Ana Reviewer")
BEA = rv.Person.acting("m2", "Bea Reviewer")
GPS = (-34.6037, -58.3816)


def _vision_names() -> frozenset[str]:
    from runtime import vision

    return frozenset(vision.load_analyzers())


#: What a default install decides by machine: the runtime's validators and the analyzers.
DEFAULT_MACHINE = frozenset(REGISTRY) | _vision_names()
#: The same with the vision analyzers off: only `complete`, `date`, `distance`.
BARE_MACHINE = frozenset(REGISTRY)

SOURCE = """
template "Review test car"
    type: car
    id: "65a1f0c2b3d4e5f6012345ab"

settings
    max attempts: 1
    minimum confidence: 80
    photo age limit: 24 hours
    minimum photo size: 64 x 48

image front
    label: "Front"
    validate recaptured
    validate complete
    validate plate, optional

image back
    validate complete

input divisor
    type: numeric
    label: "Divisor"
    asked at: create
    minimum: 0
    maximum: 10

check live_photos
    name: "Live photos"
    description: "No recaptured photo"
    valid when: not any(i in images where i.recaptured.ran and not i.recaptured.valid)

verdict
    disapprove "A photo was taken from a screen" when not checks.live_photos
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""


def at(minutes: int) -> dt.datetime:
    return NOW + dt.timedelta(minutes=minutes)


def program_of(source: str = SOURCE) -> Program:
    return load_program(compile_source(source, "review.insp"))


def started(program: Program, body: dict[str, Any] | None = None) -> InspectionState:
    state = rt.create(
        program,
        {**BARE_BODY, "car": {"plate": "AB123CD"}, **(body or {})},
        inspection_type="car",
        now=NOW,
    )
    return rt.start(program, state, now=NOW)


def upload(
    program: Program,
    state: InspectionState,
    identifier: str,
    minutes: int = 1,
    machine: frozenset[str] | None = BARE_MACHINE,
) -> tuple[InspectionState, rt.state.ImageRecord]:
    data = photo({"gps": list(GPS)}, at(minutes))
    upload = rt.ImageUpload(data, "image/jpeg", identifier=identifier)
    return rt.add_image(
        program, state, state.products[0].id, upload, now=at(minutes), machine=machine
    )


def ident(program: Program, side: str) -> str:
    found = program.image_by_side(side)
    assert found is not None
    return found.identifier


def decide(veredict: rv.Veredict, reason: str) -> rv.ReviewRequest:
    return rv.ReviewRequest(decision=rv.Decision(veredict, reason))


def in_review(program: Program) -> InspectionState:
    state = started(program)
    state, _ = upload(program, state, ident(program, "front"))
    state, _ = upload(program, state, ident(program, "back"))
    state = rt.finish(program, state, completed_by="consumer", now=at(5))
    assert state.status == "review"
    return state


# --- routing -----------------------------------------------------------------------------------


def test_a_validation_nothing_runs_never_holds_processing() -> None:
    program = program_of()
    state, record = upload(program, started(program), ident(program, "front"))
    assert state.status == "started"
    assert record.processed
    routes = {v.validation: v.route for v in record.validations}
    assert routes == {"recaptured": "person", "complete": "machine", "plate": "person"}
    assert not record.approved  # a required validation waits for a person


def test_without_routing_every_validation_waits_for_a_machine_as_before() -> None:
    program = program_of()
    state, record = upload(program, started(program), ident(program, "front"), machine=None)
    assert state.status == "processing"
    assert not record.processed


def test_the_finish_sends_a_required_validation_with_no_machine_to_review() -> None:
    program = program_of()
    state = in_review(program)
    assert state.veredict == "not_defined"
    assert state.completedBy is None
    document = rt.to_api(program, state)
    review = document["review"]
    front = state.products[0].images[0]
    assert review["pending"] == [{"imageId": front.id, "validation": "recaptured"}]
    assert [r["code"] for r in review["reasons"]] == ["no_machine_route"]
    assert review["reasons"][0]["validation"] == "recaptured"
    assert review["suggestion"]["veredict"] == "disapproved"
    assert review["since"] == rt.engine.iso(at(5))
    assert review["decisions"] == []


def test_an_optional_validation_with_no_machine_does_not_need_a_person() -> None:
    source = SOURCE.replace("    validate recaptured\n", "    validate recaptured, optional\n")
    program = program_of(source)
    state = started(program)
    state, _ = upload(program, state, ident(program, "front"))
    state, _ = upload(program, state, ident(program, "back"))
    state = rt.finish(program, state, completed_by="consumer", now=at(5))
    assert (state.status, state.veredict) == ("completed", "approved")
    assert state.review is None
    assert rt.to_api(program, state)["review"] is None


def test_missing_photos_disapprove_without_a_person() -> None:
    program = program_of()
    state, _ = upload(program, started(program), ident(program, "front"))
    state = rt.finish(program, state, now=at(5))
    assert (state.status, state.veredict) == ("completed", "disapproved")


def test_a_late_machine_result_completes_an_inspection_that_only_waited_for_it() -> None:
    program = program_of()
    state = started(program)
    machine = BARE_MACHINE | {"recaptured"}
    state, front = upload(program, state, ident(program, "front"), machine=machine)
    state, _ = upload(program, state, ident(program, "back"), machine=machine)
    assert state.status == "processing"
    state = rt.finish(program, state, completed_by="consumer", now=at(5))
    assert state.status == "review"
    assert [r["code"] for r in state.review.reasons] == ["no_result"]  # type: ignore[union-attr]
    result = {"validation": "recaptured", "confidence": 97, "result": None}
    state = rt.record_validation(program, state, front.id, result, now=at(6))
    assert (state.status, state.veredict, state.completedBy) == (
        "completed",
        "approved",
        "consumer",
    )


# --- the person's results and decision ---------------------------------------------------------


def test_a_person_records_a_result_and_approves_with_a_reason() -> None:
    program = program_of()
    state = in_review(program)
    front = state.products[0].images[0]
    state = rv.claim(program, state, ANA, now=at(6))
    found = rv.FoundDamage(part="bumper", damage="scratch", severity="minor")
    result = rv.PersonResult(front.id, "recaptured", True, note="A real car", damages=(found,))
    state = rv.review(program, state, rv.ReviewRequest(results=(result,)), ANA, now=at(7))
    assert state.status == "review"
    assert state.review is not None and state.review.machine == {
        "veredict": "approved",
        "reasons": [],
    }
    document = rt.to_api(program, state)
    view = next(
        v
        for v in document["products"][0]["images"][0]["validations"]
        if v["validation"] == "recaptured"
    )
    assert view["source"] == "person"
    assert (view["confidence"], view["valid"], view["note"]) == (100.0, True, "A real car")
    assert view["reviewedBy"] == ANA.to_json()
    assert view["reviewedAt"] == rt.engine.iso(at(7))
    assert document["products"][0]["images"][0]["damages"][0]["part"] == "bumper"
    assert document["review"]["pending"] == []
    state = rv.review(
        program,
        state,
        decide("approved", "Photos checked by hand"),
        ANA,
        now=at(8),
    )
    document = rt.to_api(program, state)
    assert (document["status"], document["veredict"], document["completedBy"]) == (
        "completed",
        "approved",
        "reviewer",
    )
    assert document["review"]["decisions"] == [
        {
            "veredict": "approved",
            "reason": "Photos checked by hand",
            "by": ANA.to_json(),
            "at": rt.engine.iso(at(8)),
        }
    ]
    actions = [(a["action"], a["by"]["id"]) for a in document["review"]["audit"]]
    assert actions == [("claim", "m1"), ("result", "m1"), ("damage", "m1"), ("decision", "m1")]
    result = document["review"]["audit"][1]
    assert result["before"] is None
    assert result["after"] == {"valid": True, "confidence": 100.0, "source": "person"}
    # The state is a pure function of its log: replaying it gives the same state.
    assert rt.replay(program, state.events) == state


def test_a_disapproval_keeps_the_reason_and_an_invalid_result_has_confidence_zero() -> None:
    program = program_of()
    state = in_review(program)
    front = state.products[0].images[0]
    request = rv.ReviewRequest(
        results=(rv.PersonResult(front.id, "recaptured", False),),
        decision=rv.Decision("disapproved", "The front photo is a photo of a screen"),
    )
    state = rv.review(program, state, request, ANA, now=at(7))
    record = next(
        v for v in state.products[0].images[0].validations if v.validation == "recaptured"
    )
    assert (record.confidence, record.valid) == (0.0, False)
    assert state.veredict == "disapproved"
    assert state.reasons == ["The front photo is a photo of a screen"]


@pytest.mark.parametrize(
    ("result", "code"),
    [
        (rv.PersonResult("nope", "recaptured", True), "image_not_found"),
        (rv.PersonResult("FRONT", "color", True), "validation_not_found"),
    ],
)
def test_a_result_naming_what_the_inspection_lacks_gets_its_code(
    result: rv.PersonResult, code: str
) -> None:
    """A well-formed request (a bad body is refused at the server's edge, tests/server/
    test_review_bodies.py) still names a photo or validation only the state can check."""
    program = program_of()
    state = in_review(program)
    front = state.products[0].images[0].id
    image_id = front if result.image_id == "FRONT" else result.image_id
    request = rv.ReviewRequest(results=(dataclasses.replace(result, image_id=image_id),))
    with pytest.raises(InspectionError) as refused:
        rv.review(program, state, request, ANA, now=at(7))
    assert refused.value.code == code


def test_the_same_result_twice_in_one_request_is_refused() -> None:
    program = program_of()
    state = in_review(program)
    result = rv.PersonResult(state.products[0].images[0].id, "recaptured", True)
    with pytest.raises(InspectionError) as refused:
        rv.review(program, state, rv.ReviewRequest(results=(result, result)), ANA, now=at(7))
    assert refused.value.code == "invalid_body"


def test_a_person_acting_is_made_once_with_an_id_and_a_bounded_name() -> None:
    """`who` is typed, made at the server's edge (an API key or a member): the audit trail's
    `{id, name}` comes from it, the name bounded and never blank."""
    assert rv.Person.acting("m1", "").to_json() == {"id": "m1", "name": "m1"}
    assert rv.Person.acting("m1", None).name == "m1"
    assert rv.Person.acting("m1", "x" * 300).name == "x" * rv.MAX_NAME_CHARS
    with pytest.raises(ValueError, match="needs an id"):
        rv.Person.acting("")
    program = program_of()
    state = rv.claim(program, in_review(program), ANA, now=at(6))
    assert state.review is not None and state.review.assignee == ANA.to_json()
    assert state.review.audit[-1]["by"] == ANA.to_json()


def test_review_takes_typed_requests_and_refuses_none_for_its_shape() -> None:
    """`runtime.review` reads typed requests only (the server decodes each body at its edge),
    so it checks no shape by hand: an empty request records nothing, and a reason longer than
    the API takes is not the runtime's to refuse."""
    assert typing.get_type_hints(rv.review)["request"] is rv.ReviewRequest
    assert typing.get_type_hints(rv.retake)["request"] is rv.RetakeRequest
    program = program_of()
    state = in_review(program)
    assert rv.review(program, state, rv.ReviewRequest(), ANA, now=at(7)) is state
    decided = rv.review(program, state, decide("approved", "x" * 5_000), ANA, now=at(7))
    assert decided.status == "completed" and decided.review is not None
    assert decided.review.decisions[-1]["reason"] == "x" * 5_000


_IN_REVIEW = in_review(program_of())
_DECIDABLE = sorted(
    (image.id, record.validation)
    for product in _IN_REVIEW.products
    for image in product.images
    for record in image.validations
    if record.run
)
_TEXTS = st.text(min_size=1, max_size=30)
VEREDICTS: tuple[rv.Veredict, ...] = typing.get_args(rv.Veredict)


@hypothesis.settings(max_examples=40, deadline=None)
@given(
    chosen=st.lists(st.sampled_from(_DECIDABLE), unique=True, max_size=len(_DECIDABLE)),
    valid=st.booleans(),
    note=st.none() | _TEXTS,
    damages=st.lists(
        st.builds(
            rv.FoundDamage,
            _TEXTS,
            _TEXTS,
            _TEXTS,
            st.none() | st.floats(min_value=0, max_value=100),
        ),
        max_size=2,
    ),
    decision=st.none() | st.builds(rv.Decision, st.sampled_from(VEREDICTS), _TEXTS),
)
def test_every_typed_request_on_what_the_inspection_has_is_taken(
    chosen: list[tuple[str, str]],
    valid: bool,
    note: str | None,
    damages: list[rv.FoundDamage],
    decision: rv.Decision | None,
) -> None:
    """Whatever a `ReviewRequest` can express about the photos and validations the inspection
    has is taken: the runtime refuses no request for its shape, only for the state."""
    program = program_of()
    results = tuple(
        rv.PersonResult(image_id, name, valid, note=note, damages=tuple(damages))
        for image_id, name in chosen
    )
    request = rv.ReviewRequest(results=results, decision=decision)
    after = rv.review(program, _IN_REVIEW, request, ANA, now=at(7))
    if decision is not None:
        assert (after.status, after.veredict) == ("completed", decision.veredict)


def test_a_review_of_an_inspection_not_in_review_is_refused() -> None:
    program = program_of()
    state = started(program)
    with pytest.raises(InspectionError) as refused:
        rv.review(program, state, decide("approved", "x"), ANA, now=at(7))
    assert refused.value.code == "inspection_not_in_review"


def test_two_reviewers_deciding_one_wins_the_other_gets_review_conflict() -> None:
    program = program_of()
    state = in_review(program)
    decided = rv.review(program, state, decide("approved", "ok"), ANA, now=at(7))
    with pytest.raises(InspectionError) as refused:
        rv.review(program, decided, decide("disapproved", "no"), BEA, now=at(7))
    assert refused.value.code == "review_conflict"
    assert "Ana Reviewer" in refused.value.description
    assert decided.veredict == "approved"  # nothing of the loser's request was applied


def test_a_case_held_by_another_reviewer_cannot_be_claimed_or_its_results_overwritten() -> None:
    program = program_of()
    state = in_review(program)
    state = rv.claim(program, state, ANA, now=at(6))
    with pytest.raises(InspectionError) as refused:
        rv.claim(program, state, BEA, now=at(6))
    assert refused.value.code == "review_conflict"
    front = state.products[0].images[0].id
    result = rv.ReviewRequest(results=(rv.PersonResult(front, "recaptured", True),))
    state = rv.review(program, state, result, ANA, now=at(7))
    with pytest.raises(InspectionError) as refused:
        rv.review(program, state, result, BEA, now=at(8))
    assert refused.value.code == "review_conflict"
    released = rv.claim(program, state, ANA, release=True, now=at(9))
    assert released.review is not None and released.review.assignee is None
    assert rv.claim(program, released, BEA, now=at(9)).review.assignee == BEA.to_json()  # type: ignore[union-attr]


# --- retakes -----------------------------------------------------------------------------------


def test_a_retake_reopens_the_slot_keeps_the_old_photo_and_takes_one_more_upload() -> None:
    program = program_of()  # max attempts: 1
    state = in_review(program)
    old = state.products[0].images[0]
    message = "Please take the front again, in daylight"
    state = rv.retake(program, state, rv.RetakeRequest((old.id,), message), ANA, now=at(6))
    assert state.status == "started"
    assert state.retake is not None and state.retake.identifiers == [ident(program, "front")]
    assert [i.id for i in state.products[0].replacedImages] == [old.id]
    assert state.products[0].replacedImages[0].replacedAt == rt.engine.iso(at(6))
    document = rt.to_api(program, state)
    replaced = document["products"][0]["replacedImages"]
    assert replaced[0]["_id"] == old.id and replaced[0]["replaced"] is True
    assert document["review"]["retake"]["message"] == message
    state, new = upload(program, state, ident(program, "front"), minutes=7)
    assert new.attempt == 2
    with pytest.raises(InspectionError) as refused:  # the retake gave one upload, not more
        upload(program, state, ident(program, "front"), minutes=8)
    assert refused.value.code == "max_attempts_exceeded"
    state = rt.finish(program, state, completed_by="consumer", now=at(9))
    assert state.status == "review"  # the reviewer who asked looks at the new photo
    assert state.retake is None
    assert [r["code"] for r in state.review.reasons] == ["no_machine_route", "retake"]  # type: ignore[union-attr]
    # Back in review at 9, first there at 5: the decision's waiting time counts from 5.
    assert state.review is not None
    assert (state.review.since, state.review.firstSince) == (
        rt.engine.iso(at(9)),
        rt.engine.iso(at(5)),
    )
    state = rv.review(
        program,
        state,
        rv.ReviewRequest(
            results=(rv.PersonResult(new.id, "recaptured", True),),
            decision=rv.Decision("approved", "Retaken in daylight"),
        ),
        ANA,
        now=at(10),
    )
    assert (state.status, state.veredict, state.completedBy) == (
        "completed",
        "approved",
        "reviewer",
    )
    assert rt.replay(program, state.events) == state


def test_a_retake_after_the_finish_is_refused() -> None:
    program = program_of()
    state = in_review(program)
    front = state.products[0].images[0].id
    state = rv.review(program, state, decide("approved", "ok"), ANA, now=at(7))
    with pytest.raises(InspectionError) as refused:
        rv.retake(program, state, rv.RetakeRequest((front,), "again"), ANA, now=at(8))
    assert refused.value.code == "retake_not_possible"


def test_a_retake_of_a_photo_the_inspection_lacks_is_image_not_found() -> None:
    program = program_of()
    state = in_review(program)
    with pytest.raises(InspectionError) as refused:
        rv.retake(program, state, rv.RetakeRequest(("nope",), "x"), ANA, now=at(7))
    assert refused.value.code == "image_not_found"


# --- the hook the language feeds: review below confidence, review rules, rule errors -----------


def with_logic(program: Program, **changes: Any) -> Program:
    manifest: Template = program.manifest
    verdict = manifest.logic.verdict.model_copy(update=changes.get("verdict", {}))
    images = dict(manifest.logic.images)
    for identifier, settings in changes.get("images", {}).items():
        image = images[identifier]
        validations = {
            name: image.validations[name].model_copy(update=update)
            for name, update in settings.items()
        }
        images[identifier] = image.model_copy(
            update={"validations": {**image.validations, **validations}}
        )
    logic = manifest.logic.model_copy(
        update={
            "verdict": verdict,
            "images": images,
            "revision": f"{manifest.logic.revision}-{uuid.uuid4().hex}",
        }
    )
    return load_program(manifest.model_copy(update={"logic": logic}))


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_a_result_below_its_review_confidence_goes_to_a_person(path: str) -> None:
    base = program_of(SOURCE.replace("    validate recaptured\n", ""))
    program = with_logic(
        base, images={ident(base, "front"): {"complete": {"reviewBelow": 101.0}}}
    ).with_path(path)  # type: ignore[arg-type]
    state = started(program)
    state, _ = upload(program, state, ident(program, "front"))
    state, _ = upload(program, state, ident(program, "back"))
    state = rt.finish(program, state, now=at(5))
    assert state.status == "review"
    assert [r["code"] for r in state.review.reasons] == ["low_confidence"]  # type: ignore[union-attr]
    assert rt.to_api(program, state)["review"]["pending"] == [
        {"imageId": state.products[0].images[0].id, "validation": "complete"}
    ]


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_a_review_rule_that_holds_sends_the_inspection_to_a_person(path: str) -> None:
    base = program_of(SOURCE.replace("    validate recaptured\n", ""))
    # `review "A declared plate goes to a person" when defined(car.plate)`, as the language
    # will write it.
    rule = Disapproval(
        reason="A declared plate goes to a person", when=_plate_node(), span=[90, 5, 90, 40]
    )
    program = with_logic(base, verdict={"review": [rule]}).with_path(path)  # type: ignore[arg-type]
    assert len(program.reviews) == 1
    state = started(program)
    state, _ = upload(program, state, ident(program, "front"))
    state, _ = upload(program, state, ident(program, "back"))
    state = rt.finish(program, state, now=at(5))
    assert state.status == "review"
    assert state.review is not None
    assert state.review.reasons == [
        {"code": "rule", "message": "A declared plate goes to a person", "span": [90, 5, 90, 40]}
    ]
    assert state.review.machine == {"veredict": "approved", "reasons": []}


def _plate_node() -> dict[str, Any]:
    """The IR of `defined(car.plate)`, taken from a compiled template (the IR's spelling)."""
    program = program_of(
        SOURCE.replace(
            'disapprove "A photo was taken from a screen" when not checks.live_photos',
            'disapprove "A photo was taken from a screen" when defined(car.plate)',
        )
    )
    return dict(program.manifest.logic.verdict.disapprove[0].when)


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_a_verdict_rule_that_cannot_be_evaluated_never_approves(path: str) -> None:
    source = SOURCE.replace("    validate recaptured\n", "").replace(
        "    approve when all(i in images where i.approved)",
        '    disapprove "Too many" when 100 / inputs.divisor > 50\n'
        "    approve when all(i in images where i.approved)",
    )
    program = program_of(source).with_path(path)  # type: ignore[arg-type]
    divisor = next(i.identifier for i in program.manifest.inputs)
    state = started(program, {"inputs": [{"identifier": divisor, "value": 0}]})
    state, _ = upload(program, state, ident(program, "front"))
    state, _ = upload(program, state, ident(program, "back"))
    state = rt.finish(program, state, now=at(5))
    assert state.veredict != "approved"
    assert state.status == "review"
    assert state.review is not None
    assert [r["code"] for r in state.review.reasons] == ["rule_error"]
    assert "division_by_zero" in state.review.reasons[0]["message"]


# --- every built-in and example reaches a verdict ----------------------------------------------


def journey(
    program: Program,
    inspection_type: str,
    body: dict[str, Any],
    machine: frozenset[str],
    *,
    updates: list[dict[str, Any]] = (),  # type: ignore[assignment]
    results: dict[str, dict[str, dict[str, Any]]] | None = None,
) -> InspectionState:
    """Create, start, upload every photo (as the consumer would), let the machines answer what
    they decide here (95, or the result a script gives), finish as the consumer; a person
    decides when the inspection waits in review."""
    simulation = Simulation(program, {"start": NOW.isoformat()})
    state = rt.create(program, simulation.body(body), inspection_type=inspection_type, now=NOW)
    if state.status == "created":
        state = rt.start(program, state, now=NOW)
    product = state.products[0].id
    for minute, spec in enumerate(program.manifest.images, start=1):
        data = photo({"gps": list(GPS), "width": 1600, "height": 1200}, at(minute))
        upload = rt.ImageUpload(data, "image/jpeg", identifier=spec.identifier)
        state, record = rt.add_image(
            program, state, product, upload, now=at(minute), machine=machine
        )
        logic = program.manifest.logic.images.get(spec.identifier)
        given = (results or {}).get(logic.name if logic is not None else spec.side, {})
        for validation in record.validations:
            if validation.run and not validation.reported and validation.route == "machine":
                outcome = given.get(validation.validation, {"confidence": 95})
                result = {"validation": validation.validation, "result": None, **outcome}
                state = rt.record_validation(
                    program,
                    state,
                    record.id,
                    {k: v for k, v in result.items() if k != "damages"},
                    damages=outcome.get("damages", []),
                    now=at(minute),
                )
        assert state.status != "processing", program.manifest.name
    for item in updates:
        state = rt.update(program, state, simulation.body(item), now=at(30))
    state = rt.finish(program, state, completed_by="consumer", now=at(31))
    if state.status == "review":
        pending = rt.to_api(program, state)["review"]["pending"]
        decision = rv.ReviewRequest(
            results=tuple(
                rv.PersonResult(item["imageId"], item["validation"], True) for item in pending
            ),
            decision=rv.Decision("approved", "Checked by a person"),
        )
        state = rv.review(program, state, decision, ANA, now=at(40))
        assert state.completedBy == "reviewer"
    assert state.status == "completed", (program.manifest.name, state.status)
    assert state.veredict in ("approved", "disapproved")
    return state


def builtin_body(alias: str, inspection_type: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    inputs = REQUIRED_UPDATES.get((alias, inspection_type), {})
    updates = [{"inputs": [{"input": k, "value": v} for k, v in inputs.items()]}] if inputs else []
    return dict(BARE_BODY), updates


@pytest.mark.parametrize(("alias", "inspection_type"), PAIRS)
def test_every_builtin_completes_on_a_default_install_with_no_person(
    alias: str, inspection_type: str
) -> None:
    template = get_builtin(alias, inspection_type)
    assert template is not None
    program = load_program(template)
    body, updates = builtin_body(alias, inspection_type)
    state = journey(program, inspection_type, body, DEFAULT_MACHINE, updates=updates)
    assert state.completedBy == "consumer", "a built-in asked for a person on a default install"


@pytest.mark.parametrize(("alias", "inspection_type"), PAIRS)
def test_every_builtin_reaches_a_verdict_with_the_analyzers_off(
    alias: str, inspection_type: str
) -> None:
    template = get_builtin(alias, inspection_type)
    assert template is not None
    body, updates = builtin_body(alias, inspection_type)
    journey(load_program(template), inspection_type, body, BARE_MACHINE, updates=updates)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("machine", [DEFAULT_MACHINE, BARE_MACHINE], ids=["default", "bare"])
def test_every_example_reaches_a_verdict(path: Path, machine: frozenset[str]) -> None:
    program = load_program(compile_source(path.read_text(encoding="utf-8"), path.name))
    script = json.loads(path.with_suffix(".events.json").read_text(encoding="utf-8"))
    events = script["events"]
    finish = max(i for i, e in enumerate(events) if e["event"] == "finish")
    body = next(e["body"] for e in events if e["event"] == "create")
    updates = [e["body"] for e in events[:finish] if e["event"] == "update"]
    results = {
        str(e["image"]): {
            v["validation"]: {k: x for k, x in v.items() if k != "validation"}
            for v in e.get("validations", [])
        }
        for e in events
        if e["event"] == "image"
    }
    kind = program.manifest.inspectionType
    journey(program, kind, body, machine, updates=updates, results=results)


# --- the reasons' language ---------------------------------------------------------------------


def test_review_reasons_are_in_the_inspections_locale_and_keep_what_they_are_made_of() -> None:
    """The runtime writes `review.reasons[].message` in the inspection's locale (as it writes
    the verdict's reasons), and keeps the fields the message is made of, so a reviewer's page
    re-words it in the reviewer's language (issue 25)."""
    from runtime.wording import review_reason_text

    program = program_of()
    state = started(program, {"locale": "es_AR"})
    state, _ = upload(program, state, ident(program, "front"))
    state, _ = upload(program, state, ident(program, "back"))
    state = rt.finish(program, state, completed_by="consumer", now=at(5))
    assert state.review is not None
    [reason] = state.review.reasons
    assert reason["code"] == "no_machine_route"
    assert reason["message"] == "front: ninguna máquina decide recaptured aquí"
    assert (reason["label"], reason["validation"]) == ("front", "recaptured")
    assert review_reason_text(reason, "en_US") == (
        "front: recaptured is not decided by a machine here"
    )
    assert review_reason_text(reason, "pt_BR") == "front: nenhuma máquina decide recaptured aqui"
    # A reason kept before its fields were (or a template's own `rule` text) stays as written.
    assert review_reason_text({"code": "no_result", "message": "as stored"}, "es_AR") == (
        "as stored"
    )
    assert review_reason_text({"code": "rule", "message": "Check it"}, "pt_BR") == "Check it"


def test_a_low_confidence_reason_words_its_numbers_in_each_language() -> None:
    from runtime.wording import review_reason_text

    reason = {
        "code": "low_confidence",
        "message": "…",
        "label": "front",
        "validation": "complete",
        "confidence": 42.0,
        "reviewBelow": 101.0,
    }
    assert review_reason_text(reason, "en_US") == ("front: complete confidence 42 is below 101")
    assert review_reason_text(reason, "es_AR") == (
        "front: la confianza de complete, 42, es menor que 101"
    )
    retake = {"code": "retake", "message": "…", "by": "Ana", "retakeMessage": "Otra foto"}
    assert review_reason_text(retake, "pt_BR") == "Fotos refeitas a pedido de Ana: Otra foto"


def test_every_locale_of_the_runtimes_wording_says_the_same_things() -> None:
    """Each text the runtime writes exists in every locale with the same `{values}`: a missing
    key or placeholder would fail at the finish of an inspection in that language."""
    import string

    from runtime.wording import REVIEW_REASON_FIELDS, TEXTS

    def placeholders(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    english = TEXTS["en_US"]
    for locale, table in TEXTS.items():
        assert table.keys() == english.keys(), locale
        for key, text in table.items():
            assert placeholders(text) == placeholders(english[key]), (locale, key)
    for code, fields in REVIEW_REASON_FIELDS.items():
        key = "rule_error" if code == "rule_error" else code
        assert placeholders(english[key]) <= set(fields) | {"code", "line"}, code


# --- what the machine saw (issue 37) -------------------------------------------------------------


def _plate_in_the_review_band(locale: str, result: dict[str, Any]) -> InspectionState:
    """A plate result of confidence 62 where the template sends under 70 to a person."""
    base = program_of(SOURCE.replace("    validate recaptured\n", ""))
    program = with_logic(base, images={ident(base, "front"): {"plate": {"reviewBelow": 70.0}}})
    state = started(program, {"locale": locale})
    machine = BARE_MACHINE | {"plate"}
    state, front = upload(program, state, ident(program, "front"), machine=machine)
    state, _ = upload(program, state, ident(program, "back"), machine=machine)
    state = rt.record_validation(program, state, front.id, result, now=at(4))
    return rt.finish(program, state, completed_by="consumer", now=at(5))


def test_a_review_band_reason_says_what_the_machine_saw_in_the_inspections_language() -> None:
    result = {"validation": "plate", "confidence": 62.4, "result": "AB123CD"}
    state = _plate_in_the_review_band("es_AR", result)
    assert state.status == "review" and state.review is not None
    [reason] = state.review.reasons
    assert reason["code"] == "low_confidence"
    assert reason["result"] == "AB123CD"
    assert "seen" not in reason  # the plate says nothing beyond its read
    assert reason["machineSaw"] == "plate: se leyó AB123CD con 62%"
    from runtime.wording import machine_saw

    assert machine_saw(reason, "en_US") == "plate: read AB123CD at 62%"
    assert machine_saw(reason, "pt_BR") == "plate: leu AB123CD com 62%"


def test_what_an_analyzer_saw_is_kept_and_worded_per_kind() -> None:
    """A color read between two colorless shades says so; a face says its distance and the
    limit; the state keeps the structured `seen` for pages to re-word."""
    from runtime.wording import machine_saw

    seen = {"kind": "color", "colors": ["white", "grey"], "colorless": True}
    result = {"validation": "plate", "confidence": 55.0, "result": "white", "seen": seen}
    state = _plate_in_the_review_band("en_US", result)
    assert state.review is not None
    [reason] = state.review.reasons
    assert reason["seen"] == seen
    assert reason["machineSaw"] == (
        "body color between white and grey, a paint without hue: light and shade decide which"
    )
    assert machine_saw(reason, "es_AR") == (
        "color de carrocería entre blanco y gris, un color sin matiz: la luz y la sombra deciden "
        "cuál"
    )
    colored = {**reason, "seen": {"kind": "color", "colors": ["red", "orange"], "colorless": False}}
    assert machine_saw(colored, "pt_BR") == "cor da carroceria entre vermelho e laranja"
    face = {"confidence": 30, "seen": {"kind": "face", "distance": 0.52, "limit": 0.5}}
    assert machine_saw(face, "en_US") == "faces at distance 0.52 (the same person up to 0.5)"
    nothing = {"validation": "serialNumber", "confidence": 12.0, "result": None}
    assert machine_saw(nothing, "es_AR") == "serialNumber: no se leyó nada (12%)"
    assert machine_saw({"validation": "plate", "result": "AB123CD"}, "en_US") is None


@pytest.mark.parametrize(
    "seen",
    [
        "white",
        {"kind": "paint", "colors": ["white", "grey"]},
        {"kind": "color", "colors": ["white"], "colorless": True},
        {"kind": "color", "colors": ["white", "pink"], "colorless": True},
        {"kind": "color", "colors": ["white", "grey"], "colorless": "yes"},
        {"kind": "color", "colors": ["white", "grey"], "colorless": True, "extra": 1},
        {"kind": "face", "distance": "far", "limit": 0.5},
        {"kind": "face", "distance": True, "limit": 0.5},
    ],
)
def test_a_result_whose_seen_has_another_shape_is_refused(seen: Any) -> None:
    with pytest.raises(InspectionError) as raised:
        _plate_in_the_review_band(
            "en_US", {"validation": "plate", "confidence": 50, "result": "X", "seen": seen}
        )
    assert raised.value.code == "invalid_validation_result"
