"""The inspection state machine: every event, every refusal with its code, replay."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from rt_support import (
    NOW,
    ROOT,
    at,
    car_program,
    compile_template,
    complete_run,
    create_body,
    created,
    ids,
    image_id,
    input_id,
    jpeg,
    upload_back,
    upload_front,
)

import runtime as rt
from runtime import InspectionError, InspectionState, Program


def code_of(call: Any, *args: Any, **kwargs: Any) -> InspectionError:
    with pytest.raises(InspectionError) as caught:
        call(*args, **kwargs)
    return caught.value


# -- create ------------------------------------------------------------------------------------


def test_create_sets_up_the_inspection() -> None:
    program = car_program()
    state = created(program)
    assert state.status == "created"
    assert state.veredict == "not_defined"
    assert state.variables == {"score": 100, "risk": "low", "uploads": 0}
    assert state.products[0].data == {"plate": "AB123CD", "year": 2015}
    assert state.inputs == {input_id(program, "Mileage"): 42000}
    assert state.producer == {"companyId": "c1", "userId": "u1"}
    assert state.template.revision == program.revision
    assert [g.valid for g in state.globalValidations] == [False]
    assert [e.kind for e in state.events] == ["create"]


def test_initial_status_started() -> None:
    state = created(initialStatus="started")
    assert (state.status, state.startedAt) == ("started", "2024-05-01T12:00:00.000Z")


def test_wrong_template_type() -> None:
    error = code_of(rt.create, car_program(), create_body(), inspection_type="moto", now=NOW)
    assert error.code == "wrong_template_provided"


@pytest.mark.parametrize("locale", ["en", "EN_us", "en-US", None, 5, "en_USA"])
def test_invalid_locale(locale: Any) -> None:
    error = code_of(created, locale=locale)
    assert error.code == "invalid_locale"


@pytest.mark.parametrize("status", ["completed", "blocked", "processing", ""])
def test_invalid_initial_status(status: str) -> None:
    assert code_of(created, initialStatus=status).code == "invalid_initial_status"


@pytest.mark.parametrize(
    ("metadata", "rule"),
    [
        ({f"k{i}": "v" for i in range(51)}, "too_many_pairs"),
        ({"k" * 51: "v"}, "key_too_long"),
        ({"k": "v" * 501}, "value_too_long"),
        ({"k": 5}, "value_not_string"),
    ],
)
def test_metadata_limits(metadata: dict[str, Any], rule: str) -> None:
    error = code_of(created, metadata=metadata)
    assert error.code == "invalid_metadata"  # the API's code: one code per failure
    assert rule in [e["code"] for e in error.errors]


def test_metadata_at_the_limits_is_accepted() -> None:
    metadata = {f"{i:02d}" + "k" * 48: "v" * 500 for i in range(50)}
    assert created(metadata=metadata).metadata == metadata


def test_required_create_input_missing() -> None:
    error = code_of(created, inputs=[])
    assert error.code == "input_value_not_provided"
    assert error.errors[0]["field"] == input_id(car_program(), "Mileage")


@pytest.mark.parametrize(
    ("label", "value", "rule"),
    [
        ("Mileage", 500001, "maximum"),
        ("Mileage", -1, "minimum"),
        ("Mileage", 10.5, "integer"),
        ("Mileage", "many", "not_a_number"),
        ("Mileage", True, "not_a_number"),
        ("Mileage", 1e16, "too_large"),
        ("Use", "Business", "option"),
        ("Notes", "x" * 21, "max_length"),
        ("Notes", 5, "not_a_text"),
    ],
)
def test_invalid_input_values(label: str, value: Any, rule: str) -> None:
    program = car_program()
    inputs = [{"identifier": input_id(program, "Mileage"), "value": 1}]
    inputs = [i for i in inputs if i["identifier"] != input_id(program, label)]
    inputs.append({"identifier": input_id(program, label), "value": value})
    error = code_of(created, program, inputs=inputs)
    assert error.code == "invalid_input_value"
    assert error.errors == [
        {"field": input_id(program, label), "code": rule, "message": error.errors[0]["message"]}
    ]


def test_unknown_input_refused() -> None:
    program = car_program()
    inputs = [
        {"identifier": input_id(program, "Mileage"), "value": 1},
        {"identifier": "input_nope", "value": 1},
    ]
    error = code_of(created, program, inputs=inputs)
    assert (error.code, error.errors[0]["code"]) == ("invalid_input_value", "unknown_input")


def test_select_by_key_or_label_and_numeric_text() -> None:
    program = car_program()
    inputs = [
        {"identifier": input_id(program, "Mileage"), "value": "1200"},
        {"identifier": input_id(program, "Use"), "value": "commercial"},
    ]
    state = created(program, inputs=inputs)
    assert state.inputs[input_id(program, "Mileage")] == 1200
    assert state.inputs[input_id(program, "Use")] == "Commercial"


def test_required_product_field_missing() -> None:
    error = code_of(created, car={"year": 2010})
    assert error.code == "invalid_body"
    assert [e["field"] for e in error.errors] == ["car.plate"]


def test_delivery_is_recorded_as_given_and_checked_by_its_sender() -> None:
    """The runtime checks a body once, with one code per failure; the delivery of the link is
    the server's (`server/delivery/destinations.py`: `invalid_delivery_destination`), so the
    template's JSON Schema no longer refuses it here with a second code."""
    state = created(delivery={"channel": "email"})
    assert state.delivery == {"channel": "email"}


def test_unknown_product_field_refused() -> None:
    error = code_of(created, car={"plate": "X", "wings": 2})
    assert (error.code, error.errors[0]["field"]) == ("invalid_body", "car.wings")


# -- update, update_product, start -----------------------------------------------------------


def test_update_applies_only_undefined_values() -> None:
    program = car_program()
    state = created(program, consumer={"email": "first@example.com"}, metadata={"a": "1"})
    mileage, notes = input_id(program, "Mileage"), input_id(program, "Notes")
    body = {
        "consumer": {"email": "second@example.com", "firstName": "Ana"},
        "metadata": {"a": "2", "b": "3"},
        "inputs": [{"identifier": mileage, "value": 7}, {"identifier": notes, "value": "hi"}],
    }
    state = rt.update(program, state, body, now=at(1))
    assert state.consumer == {"email": "first@example.com", "firstName": "Ana"}
    assert state.metadata == {"a": "1", "b": "3"}
    assert state.inputs == {mileage: 42000, notes: "hi"}


def test_update_validates_new_inputs() -> None:
    program = car_program()
    notes = input_id(program, "Notes")
    body = {"inputs": [{"identifier": notes, "value": "x" * 30}]}
    assert code_of(rt.update, program, created(program), body, now=at(1)).code == (
        "invalid_input_value"
    )


def test_update_product() -> None:
    program = car_program()
    state = created(program)
    product = state.products[0].id
    state = rt.update_product(
        program, state, product, {"car": {"milage": 1000, "color": "red"}}, now=at(1)
    )
    assert state.products[0].data == {
        "plate": "AB123CD",
        "year": 2015,
        "milage": 1000,
        "color": "red",
    }
    assert code_of(rt.update_product, program, state, "nope", {"car": {}}, now=at(1)).code == (
        "product_not_found"
    )
    error = code_of(rt.update_product, program, state, product, {"car": {"year": "old"}}, now=at(1))
    assert error.code == "invalid_body"


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"color": "red"}, ["color"]),
        ({"moto": {"color": "red"}}, ["moto"]),
        ({"car": {"colour": "red"}}, ["car.colour"]),
        ({"car": {"wheels": 4, "year": "old"}, "x": 1}, ["x", "car.wheels"]),
    ],
)
def test_update_product_refuses_unknown_keys(body: dict[str, Any], fields: list[str]) -> None:
    """Regression: an unknown top-level key was ignored (the update "succeeded" and changed
    nothing). Unknown keys at both levels are `unknown_field`, each named, before types."""
    program = car_program()
    state = created(program)
    error = code_of(rt.update_product, program, state, state.products[0].id, body, now=at(1))
    assert error.code == "unknown_field"
    assert [item["field"] for item in error.errors] == fields
    assert {item["code"] for item in error.errors} == {"unknown_field"}


def test_start_once() -> None:
    program = car_program()
    state = rt.start(program, created(program), now=at(1))
    assert state.status == "started"
    assert code_of(rt.start, program, state, now=at(2)).code == "invalid_status_transition"


# -- images and validations ------------------------------------------------------------------


def test_start_while_processing_photos_taken_before() -> None:
    program = car_program()
    state, front = upload_front(program, created(program))
    assert state.status == "processing"
    state = rt.start(program, state, now=at(2))
    assert (state.status, state.startedAt) == ("processing", "2024-05-01T12:02:00.000Z")
    for name in ("plate", "color"):
        state = rt.record_validation(
            program, state, front.id, {"validation": name, "confidence": 90}, now=at(3)
        )
    assert state.status == "started"
    assert code_of(rt.start, program, state, now=at(4)).code == "invalid_status_transition"


def test_upload_runs_local_validators_and_waits_for_the_others() -> None:
    program = car_program()
    state = rt.start(program, created(program), now=at(0))
    state, front = upload_front(program, state)
    results = {v.validation: (v.reported, v.valid, v.run) for v in front.validations}
    assert results == {
        "plate": (False, None, True),
        "color": (False, None, True),
        "complete": (True, True, True),
        "date": (True, True, True),
        "recaptured": (False, None, False),
    }
    assert state.status == "processing"
    assert state.variables["uploads"] == 1
    assert state.attempts == {image_id(program, "front"): 1}


def test_status_returns_after_processing() -> None:
    program = car_program()
    state = rt.start(program, created(program), now=at(0))
    state, front = upload_front(program, state)
    for name in ("plate", "color"):
        state = rt.record_validation(
            program, state, front.id, {"validation": name, "confidence": 90}, now=at(2)
        )
    image = state.find_image(front.id)
    assert image is not None
    assert (image[1].processed, image[1].approved) == (True, True)
    assert state.status == "started"


def test_threshold_per_validation() -> None:
    program = car_program()
    state, front = upload_front(program, created(program))
    low = rt.record_validation(
        program, state, front.id, {"validation": "plate", "confidence": 84.9}, now=at(2)
    )
    high = rt.record_validation(
        program, state, front.id, {"validation": "plate", "confidence": 85}, now=at(2)
    )
    assert low.variables["risk"] == "high"
    assert high.variables["risk"] == "low"


def test_failed_required_validation_disapproves_image() -> None:
    program = car_program()
    state, front = upload_front(program, created(program))
    state = rt.record_validation(
        program, state, front.id, {"validation": "plate", "confidence": 10}, now=at(2)
    )
    state = rt.record_validation(
        program, state, front.id, {"validation": "color", "confidence": 99}, now=at(2)
    )
    image = state.find_image(front.id)
    assert image is not None
    assert (image[1].processed, image[1].approved) == (True, False)


def test_optional_validation_does_not_block_approval() -> None:
    program = car_program()
    state, back = upload_back(program, created(program))
    state = rt.record_validation(
        program, state, back.id, {"validation": "damage", "confidence": 5}, now=at(4)
    )
    image = state.find_image(back.id)
    assert image is not None and image[1].approved


@pytest.mark.parametrize(
    ("result", "code"),
    [
        ({"validation": "recaptured", "confidence": 90}, "unknown_validation"),
        ({"validation": "face_comparison", "confidence": 90}, "unknown_validation"),
        ({"validation": "plate", "confidence": 101}, "invalid_validation_result"),
        ({"validation": "plate", "confidence": -1}, "invalid_validation_result"),
        ({"validation": "plate", "confidence": "high"}, "invalid_validation_result"),
        ({"validation": "plate", "confidence": True}, "invalid_validation_result"),
        (
            {"validation": "plate", "confidence": 50, "result": {"a": 1}},
            "invalid_validation_result",
        ),
    ],
)
def test_refused_validation_results(result: dict[str, Any], code: str) -> None:
    program = car_program()
    state, front = upload_front(program, created(program))
    assert code_of(rt.record_validation, program, state, front.id, result, now=at(2)).code == code


def test_validation_result_only_once_and_for_known_images() -> None:
    program = car_program()
    state, front = upload_front(program, created(program))
    state = rt.record_validation(
        program, state, front.id, {"validation": "plate", "confidence": 90}, now=at(2)
    )
    again = code_of(
        rt.record_validation,
        program,
        state,
        front.id,
        {"validation": "plate", "confidence": 90},
        now=at(2),
    )
    assert again.code == "invalid_validation_result"
    missing = code_of(
        rt.record_validation,
        program,
        state,
        "f" * 24,
        {"validation": "plate", "confidence": 90},
        now=at(2),
    )
    assert missing.code == "image_not_found"


def test_reported_damages_are_kept_on_the_image() -> None:
    program = car_program()
    state, back = upload_back(program, created(program))
    damage = {"part": "trunk", "damage": "dent", "severity": "minor", "percentage": 12}
    state = rt.record_validation(
        program,
        state,
        back.id,
        {"validation": "damage", "confidence": 90},
        damages=[damage],
        now=at(4),
    )
    image = state.find_image(back.id)
    assert image is not None
    assert [(d.part, d.declared) for d in image[1].damages] == [("trunk", False)]


def test_unknown_side_is_an_extra_image() -> None:
    program = car_program()
    state = created(program)
    upload = rt.ImageUpload(data=jpeg(), side="interior")
    state, record = rt.add_image(program, state, state.products[0].id, upload, now=at(1))
    assert [i.side for i in state.products[0].extraImages] == ["interior"]
    assert record.templateImageIdentifier is None
    assert state.status == "created"


def test_src_names_the_new_image() -> None:
    program = car_program()
    state = created(program)
    upload = rt.ImageUpload(data=jpeg(), side="front", src="https://x.test/images/{id}/content")
    state, record = rt.add_image(program, state, state.products[0].id, upload, now=at(1))
    assert record.src == f"https://x.test/images/{record.id}/content"
    assert state.find_image(record.id) == (state.products[0], record)
    assert rt.replay(program, state.events) == state


def test_upload_by_identifier_and_unknown_identifier() -> None:
    program = car_program()
    state = created(program)
    product = state.products[0].id
    upload = rt.ImageUpload(data=jpeg(), identifier=image_id(program, "back"))
    state, record = rt.add_image(program, state, product, upload, now=at(1))
    assert record.side == "back"
    wrong = rt.ImageUpload(data=jpeg(), identifier="image_nope")
    assert code_of(rt.add_image, program, state, product, wrong, now=at(1)).code == (
        "image_not_found"
    )
    assert code_of(rt.add_image, program, state, "x", upload, now=at(1)).code == (
        "product_not_found"
    )
    nothing = rt.ImageUpload(data=jpeg())
    assert code_of(rt.add_image, program, state, product, nothing, now=at(1)).code == (
        "invalid_body"
    )


def test_max_attempts_then_blocked() -> None:
    program = car_program()  # max attempts: 2
    state = created(program)
    state, _first = upload_front(program, state)
    state, second = upload_front(program, state)
    assert state.attempts == {image_id(program, "front"): 2}
    assert [i.id for i in state.products[0].images] == [second.id]
    error = code_of(upload_front, program, state)
    assert error.code == "max_attempts_exceeded"
    state = rt.record_validation(
        program, state, second.id, {"validation": "plate", "confidence": 1}, now=at(3)
    )
    state = rt.record_validation(
        program, state, second.id, {"validation": "color", "confidence": 1}, now=at(3)
    )
    assert state.status == "blocked"
    assert code_of(upload_back, program, state).code == "inspection_not_editable"


def test_distance_validator_against_the_first_photo() -> None:
    program = car_program()
    state, _ = upload_front(program, created(program))
    near, _ = upload_back(program, state, gps=(-34.6040, -58.3816))
    far, _ = upload_back(program, state, gps=(-34.7037, -58.3816))
    distance = {
        name: next(
            v.valid for v in s.products[0].images[-1].validations if v.validation == "distance"
        )
        for name, s in (("near", near), ("far", far))
    }
    assert distance == {"near": True, "far": False}


# -- damage, finish, expire ----------------------------------------------------------------


def test_declared_damage_runs_rules() -> None:
    program = car_program()
    state = created(program)
    product = state.products[0].id
    for severity in ("minor", "severe", "moderate"):
        state = rt.declare_damage(
            program,
            state,
            product,
            {"part": "door", "damage": "dent", "severity": severity},
            now=at(1),
        )
    assert state.variables["score"] == 100 - 10 - 40 - 20


def test_damage_needs_the_feature() -> None:
    source = (
        'template "No damage"\n    type: car\n\nimage front\n    validate plate\n\n'
        "verdict\n    approve when true\n"
    )
    program = rt.load_program(compile_template(source))
    body = {"locale": "en_US", "delivery": {"channel": "e", "destination": "d"}, "car": {}}
    state = rt.create(program, body, inspection_type="car", now=NOW)
    damage = {"part": "door", "damage": "dent", "severity": "minor"}
    error = code_of(rt.declare_damage, program, state, state.products[0].id, damage, now=at(1))
    assert error.code == "feature_not_enabled"


@pytest.mark.parametrize(
    "damage",
    [
        {"part": "door"},
        {"part": "d", "damage": "x", "severity": "minor", "percentage": 120},
        "dent",
    ],
)
def test_invalid_damage(damage: Any) -> None:
    program = car_program()
    state = created(program)
    error = code_of(rt.declare_damage, program, state, state.products[0].id, damage, now=at(1))
    assert error.code == "invalid_body"


def test_finish_needs_update_inputs() -> None:
    program = car_program()
    state = created(program)
    error = code_of(rt.finish, program, state, completed_by="client", now=at(1))
    assert error.code == "update_inputs_missing"
    assert error.errors[0]["field"] == input_id(program, "Notes")
    expired = rt.finish(program, state, completed_by="expiration", now=at(1))
    assert expired.completedBy == "expiration"


def test_full_run_approved() -> None:
    program = car_program()
    state = complete_run(program)
    assert (state.status, state.veredict, state.reasons) == ("completed", "approved", [])
    assert state.completedBy == "client"
    assert [g.valid for g in state.globalValidations] == [True]
    assert state.ruleErrors == []


def test_full_run_plate_mismatch() -> None:
    state = complete_run(car_program(), plate="ZZ999ZZ")
    assert state.veredict == "disapproved"
    assert state.reasons == ["The plate does not match the declared one"]


def test_verdict_otherwise_reason() -> None:
    program = car_program()
    notes = input_id(program, "Notes")
    state = rt.update(
        program, created(program), {"inputs": [{"identifier": notes, "value": "n"}]}, now=at(1)
    )
    state, front = upload_front(program, state)
    state = rt.record_validation(
        program,
        state,
        front.id,
        {"validation": "plate", "confidence": 99, "result": "AB123CD"},
        now=at(2),
    )
    state = rt.finish(program, state, completed_by="consumer", now=at(3))
    # The back photo was never uploaded: that reason comes first, then the template's own.
    assert (state.veredict, state.reasons) == (
        "disapproved",
        ["Required photo not uploaded: back", "Some photos were not approved"],
    )


def test_finished_inspection_refuses_everything() -> None:
    program = car_program()
    state = complete_run(program)
    product = state.products[0].id
    image = state.products[0].images[0].id
    calls = [
        lambda: rt.update(program, state, {"metadata": {"z": "1"}}, now=at(9)),
        lambda: rt.update_product(program, state, product, {"car": {}}, now=at(9)),
        lambda: rt.start(program, state, now=at(9)),
        lambda: upload_back(program, state),
        lambda: rt.record_validation(
            program, state, image, {"validation": "color", "confidence": 1}, now=at(9)
        ),
        lambda: rt.declare_damage(
            program, state, product, {"part": "a", "damage": "b", "severity": "minor"}, now=at(9)
        ),
        lambda: rt.finish(program, state, now=at(9)),
        lambda: rt.expire(program, state, now=at(9)),
    ]
    codes = [code_of(call).code for call in calls]
    editable, transition = "inspection_not_editable", "invalid_status_transition"
    assert codes == [
        editable,
        editable,
        transition,
        editable,
        editable,
        editable,
        transition,
        transition,
    ]


def test_expire() -> None:
    source = (
        'template "Expiring"\n    type: car\n\nsettings\n    inspection expires after: 2 hours\n\n'
        "image front\n    validate plate\n\nverdict\n    approve when true\n"
    )
    program = rt.load_program(compile_template(source))
    body = {"locale": "en_US", "delivery": {"channel": "e", "destination": "d"}, "car": {}}
    state = rt.create(program, body, inspection_type="car", now=NOW)
    assert state.expiresAt == "2024-05-01T14:00:00.000Z"
    assert code_of(rt.expire, program, state, now=at(60)).code == "invalid_status_transition"
    blocked = rt.expire(program, state, now=NOW + dt.timedelta(hours=2))
    assert blocked.status == "blocked"
    assert code_of(rt.expire, program, blocked, now=at(200)).code == "invalid_status_transition"


# -- replay --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_replay_gives_the_same_state(path: str) -> None:
    program = car_program()
    state = complete_run(program)
    assert rt.replay(program.with_path(path), state.events) == state
    dumped = [e.model_dump(mode="json") for e in state.events]
    assert rt.replay(program, dumped) == state


def test_replay_keeps_its_own_copy_of_the_log() -> None:
    program = car_program()
    state = complete_run(program)
    log = [e.model_copy(deep=True) for e in state.events]
    replayed = rt.replay(program, log)
    for event in log:  # the caller changes its log afterwards
        event.data.clear()
        event.kind = "changed"
    assert replayed == state
    assert all(event.kind != "changed" for event in replayed.events)


def test_replay_of_bad_logs() -> None:
    program = car_program()
    state = complete_run(program)
    assert code_of(rt.replay, program, []).code == "invalid_event"
    assert code_of(rt.replay, program, state.events[1:]).code == "invalid_event"
    assert code_of(rt.replay, program, [*state.events, state.events[0]]).code == "invalid_event"


def test_state_round_trips_through_json() -> None:
    state = complete_run(car_program())
    document = state.model_dump(mode="json", by_alias=True)
    assert InspectionState.model_validate(document) == state
    assert document["_id"] == state.id


# -- every input rule, on the goods delivery example --------------------------------------------


def goods() -> tuple[Program, InspectionState]:
    source = (ROOT / "examples" / "goods_delivery.insp").read_text()
    program = rt.load_program(compile_template(source, "goods_delivery.insp"))
    names = {logic.name: ident for ident, logic in program.manifest.logic.inputs.items()}
    body = {
        "locale": "en_US",
        "delivery": {"channel": "sms", "destination": "+5491100000000"},
        "goods": {"description": "boxes", "quantity": 2},
        "inputs": [
            {"identifier": names["promised_date"], "value": "2024-05-02"},
            {"identifier": names["tracking_code"], "value": "AR123456789BA"},
            {"identifier": names["packages"], "value": 2},
        ],
    }
    return program, rt.create(program, body, inspection_type="goods", now=NOW, ids=ids())


@pytest.mark.parametrize(
    ("name", "value", "rule"),
    [
        ("delivery_date", "2023-12-31", "min_date"),
        ("delivery_date", "2031-01-01", "max_date"),
        ("delivery_date", "03/05/2024", "not_a_date"),
        ("recipient_name", "Al", "min_length"),
        ("package_state", "Broken", "option"),
        ("contents", [], "min_items"),
        ("contents", ["electronics", "furniture", "documents", "clothing"], "max_items"),
        ("contents", ["Electronics", "Gold"], "option"),
        ("contents", "electronics", "not_a_list"),
        ("received", "yes", "not_a_boolean"),
        ("signature", {"name": "s.gif", "contentType": "image/gif", "size": 10}, "media_type"),
        (
            "signature",
            {"name": "s.png", "contentType": "image/png", "size": 6_000_000},
            "too_large",
        ),
        ("signature", 42, "not_a_file"),
        ("unboxing", "clip.avi", "media_type"),
    ],
)
def test_every_input_rule(name: str, value: Any, rule: str) -> None:
    program, state = goods()
    names = {logic.name: ident for ident, logic in program.manifest.logic.inputs.items()}
    body = {"inputs": [{"identifier": names[name], "value": value}]}
    error = code_of(rt.update, program, state, body, now=at(1))
    assert error.code == "invalid_input_value"
    assert [(e["field"], e["code"]) for e in error.errors] == [(names[name], rule)]


@pytest.mark.parametrize(
    ("name", "value", "rule"),
    [("tracking_code", "AR12345", "pattern"), ("packages", 51, "maximum")],
)
def test_create_input_rules(name: str, value: Any, rule: str) -> None:
    program, _ = goods()
    names = {logic.name: ident for ident, logic in program.manifest.logic.inputs.items()}
    body = {
        "locale": "en_US",
        "delivery": {"channel": "sms", "destination": "+54"},
        "goods": {"description": "boxes", "quantity": 2},
        "inputs": [
            {"identifier": names["promised_date"], "value": "2024-05-02"},
            {"identifier": names["tracking_code"], "value": "AR123456789BA"},
            {"identifier": names["packages"], "value": 2},
        ],
    }
    for item in body["inputs"]:
        if item["identifier"] == names[name]:
            item["value"] = value
    error = code_of(rt.create, program, body, inspection_type="goods", now=NOW)
    assert [(e["field"], e["code"]) for e in error.errors] == [(names[name], rule)]


def test_email_rule() -> None:
    source = (ROOT / "examples" / "person_onboarding.insp").read_text()
    program = rt.load_program(compile_template(source, "person_onboarding.insp"))
    body = {
        "locale": "en_US",
        "delivery": {"channel": "e", "destination": "d"},
        "consumer": {"firstName": "A", "lastName": "B", "email": "a@b.co"},
    }
    state = rt.create(program, body, inspection_type="people", now=NOW)
    email = next(i for i, logic in program.manifest.logic.inputs.items() if logic.name == "email")
    error = code_of(
        rt.update,
        program,
        state,
        {"inputs": [{"identifier": email, "value": "not-an-email"}]},
        now=at(1),
    )
    assert [e["code"] for e in error.errors] == ["email"]


# -- the step limit inside a whole event ---------------------------------------------------------

BOMB_SOURCE = """
template "Bomb"
    type: car

variable n: numeric = 0
variable after: numeric = 0

image front
    validate damage

on validation passed
    set n to count(a in damages where count(b in damages where b.percentage > 1) > 0)

on validation passed
    set after to 1

check fine
    name: "Fine"
    description: "Always"
    valid when: n = 0

verdict
    approve when checks.fine
"""


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_step_limit_skips_the_rest_of_the_event(path: str) -> None:
    program = rt.load_program(compile_template(BOMB_SOURCE)).with_path(path)
    body = {"locale": "en_US", "delivery": {"channel": "e", "destination": "d"}, "car": {}}
    state = rt.create(program, body, inspection_type="car", now=NOW, ids=ids())
    state, image = rt.add_image(
        program, state, state.products[0].id, rt.ImageUpload(data=jpeg(), side="front"), now=at(1)
    )
    damages = [{"part": "door", "damage": "dent", "severity": "minor", "percentage": 5}] * 400
    state = rt.record_validation(
        program,
        state,
        image.id,
        {"validation": "damage", "confidence": 90},
        damages=damages,
        now=at(2),
    )
    assert state.variables == {"n": 0, "after": 0}
    assert [(e.code, e.source.split(":")[0]) for e in state.ruleErrors] == [("step_limit", "rule")]
    assert [g.valid for g in state.globalValidations] == [False]
    assert rt.replay(program, state.events) == state


def test_a_later_input_item_wins() -> None:
    program = car_program()
    mileage = input_id(program, "Mileage")
    inputs = [{"identifier": mileage, "value": 1}, {"identifier": mileage, "value": 2}]
    assert created(program, inputs=inputs).inputs == {mileage: 2}


@pytest.mark.parametrize("inputs", [{"x": 1}, "inputs", [5], [{"value": 1}]])
def test_malformed_inputs(inputs: Any) -> None:
    error = code_of(created, inputs=inputs)
    assert error.code == "invalid_body"


def test_events_never_change_earlier_states() -> None:
    program = car_program()
    states = [created(program)]
    states.append(
        rt.update_product(
            program, states[-1], states[-1].products[0].id, {"car": {"color": "red"}}, now=at(1)
        )
    )
    states.append(upload_front(program, states[-1])[0])
    front = states[-1].products[0].images[0].id
    snapshots = [s.model_dump() for s in states]
    states.append(
        rt.record_validation(
            program,
            states[-1],
            front,
            {"validation": "plate", "confidence": 90},
            now=at(2),
            damages=[{"part": "a", "damage": "b", "severity": "minor"}],
        )
    )
    states.append(
        rt.declare_damage(
            program,
            states[-1],
            states[-1].products[0].id,
            {"part": "a", "damage": "b", "severity": "minor"},
            now=at(3),
        )
    )
    states.append(upload_front(program, states[-1], minutes=4)[0])
    states.append(
        rt.update(
            program,
            states[-1],
            {"consumer": {"firstName": "Ana"}, "metadata": {"k": "v"}},
            now=at(5),
        )
    )
    states.append(rt.finish(program, states[-1], completed_by="expiration", now=at(6)))
    assert [s.model_dump() for s in states[:3]] == snapshots
    assert states[3].products[0].images[0].validations[0].reported is True
    assert states[2].products[0].images[0].validations[0].reported is False


def test_global_validations_follow_the_data_as_it_arrives() -> None:
    program = car_program()
    state = rt.start(program, created(program), now=at(0))
    assert [g.valid for g in state.globalValidations] == [False]  # no plate read yet
    state, front = upload_front(program, state)
    assert [g.valid for g in state.globalValidations] == [False]
    result = {"validation": "plate", "confidence": 90, "result": "ab123cd"}
    state = rt.record_validation(program, state, front.id, result, now=at(2))
    assert state.status != "completed"
    assert [g.valid for g in state.globalValidations] == [True]  # before any finish
    changed = rt.update_product(
        program, state, state.products[0].id, {"car": {"plate": "ZZ999ZZ"}}, now=at(3)
    )
    assert [g.valid for g in changed.globalValidations] == [False]
    assert [g.valid for g in state.globalValidations] == [True]  # the earlier state is kept


@pytest.mark.parametrize(
    ("upload", "field", "code"),
    [
        ({"latitude": 91.0, "longitude": 0.0}, "latitude", "range"),
        ({"latitude": 0.0, "longitude": -180.5}, "longitude", "range"),
        ({"latitude": float("nan"), "longitude": 0.0}, "latitude", "range"),
        ({"latitude": "north", "longitude": 0.0}, "latitude", "type"),
        ({"latitude": True, "longitude": 0.0}, "latitude", "type"),
        ({"date": "2024-05-01T12:00:00Z" + " " * 30}, "date", "type"),
        ({"date": 20240501}, "date", "type"),
    ],
)
def test_malformed_upload_fields_refused(upload: dict[str, Any], field: str, code: str) -> None:
    program = car_program()
    state = created(program)
    photo = rt.ImageUpload(data=jpeg(), side="front", **upload)
    error = code_of(rt.add_image, program, state, state.products[0].id, photo, now=at(1))
    assert error.code == "invalid_body"
    assert [(e["field"], e["code"]) for e in error.errors] == [(field, code)]
    assert state.attempts == {}


def test_empty_side_refused() -> None:
    program = car_program()
    state = created(program)
    photo = rt.ImageUpload(data=jpeg(), side="")
    error = code_of(rt.add_image, program, state, state.products[0].id, photo, now=at(1))
    assert (error.code, error.errors[0]["field"]) == ("invalid_body", "side")
