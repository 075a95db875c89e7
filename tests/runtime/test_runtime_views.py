"""`to_api` (the spec's Inspection object, labels in the inspection's locale) and `explain`."""

from __future__ import annotations

from rt_support import (
    NOW,
    ROOT,
    at,
    car_program,
    compile_template,
    complete_run,
    created,
    ids,
    input_id,
    jpeg,
    upload_front,
)

import runtime as rt
from runtime.explain import render_text

SPEC_KEYS = {
    "_id", "type", "status", "veredict", "completedBy", "template", "producer", "metadata",
    "identity", "custom", "variables", "globalValidations", "products", "createdAt",
    "updatedAt", "testing",
}  # fmt: skip


def test_to_api_has_every_field_of_the_spec() -> None:
    program = car_program()
    state = complete_run(program)
    document = rt.to_api(program, state)
    assert set(document) >= SPEC_KEYS
    assert document["status"] == "completed"
    assert document["veredict"] == "approved"
    assert document["completedBy"] == "client"
    assert document["testing"] is False
    assert document["template"]["_id"] == program.manifest.id
    assert {i["label"] for i in document["template"]["inputs"]} == {"Mileage", "Use", "Notes"}
    assert document["variables"] == [
        {"name": "score", "value": 100},
        {"name": "risk", "value": "low"},
        {"name": "uploads", "value": 2},
    ]
    assert document["globalValidations"] == [
        {
            "_id": program.checks[0].id,
            "name": "Plate matches",
            "description": "The declared plate matches the plate read from the front photo",
            "valid": True,
        }
    ]
    product = document["products"][0]
    assert product["car"] == {"plate": "AB123CD", "year": 2015}
    assert set(product) >= {"_id", "type", "car", "inputs", "images", "extraImages"}
    front = product["images"][0]
    assert set(front) >= {
        "_id",
        "templateImageIdentifier",
        "side",
        "target",
        "type",
        "processed",
        "approved",
        "uploadedAt",
        "src",
        "validations",
        "damages",
    }
    assert front["validations"][0] == {
        "_id": front["validations"][0]["_id"],
        "validation": "plate",
        "confidence": 90.0,
        "valid": True,
        "result": "ab123cd",
        "source": "machine",
    }
    assert "recaptured" not in [v["validation"] for v in front["validations"]]
    assert document["producer"] == {"companyId": "c1", "userId": "u1"}
    assert document["identity"]["email"] == "c@example.com"


def test_labels_and_options_in_the_inspection_locale() -> None:
    program = car_program()
    use = input_id(program, "Use")
    inputs = [
        {"identifier": input_id(program, "Mileage"), "value": 1},
        {"identifier": use, "value": "private"},
    ]
    state = created(program, locale="es_AR", inputs=inputs)
    state, _ = upload_front(program, state)
    document = rt.to_api(program, state)
    labels = {i["identifier"]: (i["label"], i["value"]) for i in document["template"]["inputs"]}
    assert labels[input_id(program, "Mileage")] == ("Kilometraje", 1)
    assert labels[use] == ("Use", "Particular")
    assert document["products"][0]["images"][0]["label"] == "Frente"
    english = rt.to_api(program, created(program, inputs=inputs))
    assert {i["value"] for i in english["template"]["inputs"]} >= {"Private"}


def test_people_images_go_to_identity() -> None:
    source = (ROOT / "inspectlang" / "builtins" / "people_easy.insp").read_text()
    program = rt.load_program(compile_template(source, "people_easy.insp"))
    body = {
        "locale": "en_US",
        "delivery": {"channel": "sms", "destination": "+5411"},
        "consumer": {"firstName": "Ana"},
    }
    state = rt.create(program, body, inspection_type="people", now=NOW, ids=ids())
    upload = rt.ImageUpload(data=jpeg(), side="selfie")
    state, _ = rt.add_image(program, state, state.products[0].id, upload, now=at(1))
    document = rt.to_api(program, state)
    assert document["products"] == []
    assert [i["side"] for i in document["identity"]["images"]] == ["selfie"]
    assert document["identity"]["firstName"] == "Ana"


def test_explain_a_disapproval() -> None:
    program = car_program()
    state = complete_run(program, plate="ZZ999ZZ")
    explanation = rt.explain(program, state)
    assert explanation.veredict == "disapproved"
    decided = [line for line in explanation.verdict if line.decided]
    assert [line.label for line in decided] == ["The plate does not match the declared one"]
    assert decided[0].span[0] > 0
    check = explanation.checks[0]
    assert (check.label, check.holds, check.decided) == ("Plate matches", False, True)
    seen = {value.value for value in check.values}
    assert {"AB123CD", "ZZ999ZZ"} <= seen
    assert {v.validation for v in explanation.validations} >= {"plate", "color", "complete"}
    assert [v.validation for v in explanation.validations if v.decided] == []
    assert [rule.sets for rule in explanation.rules] == [["uploads"]]
    text = render_text(explanation)
    assert "Verdict: disapproved" in text
    assert "reason: The plate does not match the declared one" in text
    assert f"line {check.span[0]}" in text


def test_explain_before_completion() -> None:
    program = car_program()
    explanation = rt.explain(program, created(program))
    assert explanation.veredict == "not_defined"
    assert explanation.status == "created"
    assert explanation.validations == []
    assert [line.kind for line in explanation.verdict] == [
        "disapprove",
        "disapprove",
        "approve_when",
    ]


def test_explain_is_data() -> None:
    program = car_program()
    data = rt.explain(program, complete_run(program)).model_dump(mode="json")
    assert set(data) == {
        "veredict",
        "reasons",
        "status",
        "missing",
        "verdict",
        "checks",
        "validations",
        "rules",
        "variables",
        "ruleErrors",
        "reviewReasons",  # why a person decides, when the inspection went to review
        "machine",  # the verdict the machine would have given
    }


def test_explain_points_at_the_validation_that_kept_a_photo_out() -> None:
    program = car_program()
    state, front = upload_front(program, created(program))
    state = rt.record_validation(
        program, state, front.id, {"validation": "plate", "confidence": 99}, now=at(2)
    )
    explanation = rt.explain(program, state)
    assert [(v.validation, v.reported) for v in explanation.validations if v.decided] == [
        ("color", False)
    ]
    assert " * front.color: pending" in render_text(explanation)
