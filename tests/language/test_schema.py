"""The creation body's JSON Schema: valid draft 3, in the spec's shape, and it accepts exactly the
bodies the template allows (inputs converted from the spec's array to an object first)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft3Validator

from inspectlang.compiler import compile_source
from inspectlang.manifest import Template
from inspectlang.schema import creation_validator, human_label, inputs_to_object

SOURCE = """template "Schema"
    type: car
product
    require plate
consumer
    require email
input km
    type: numeric
    required
    minimum: 0
    maximum: 1000
    whole number
input code
    type: text
    pattern: "^[A-Z]{3}$"
    maximum length: 3
input mail
    type: textarea
    email
input born
    type: date
input use
    type: select
    option private: "Private"
    option work: "Work"
input extras
    type: multiselect
    option gps: "GPS"
    option roof: "Roof"
    maximum choices: 1
input agree
    type: check
input invoice
    type: file
input later
    type: text
    asked at: update
    required
verdict
"""


@pytest.fixture(scope="module")
def template() -> Template:
    return compile_source(SOURCE, "schema.insp")


def ids(template: Template) -> dict[str, str]:
    return {template.logic.inputs[i.identifier].name: i.identifier for i in template.inputs}


def body(template: Template, **values: Any) -> dict[str, Any]:
    identifiers = ids(template)
    data: dict[str, Any] = {
        "locale": "es_AR",
        "delivery": {"channel": "email", "destination": "ana@example.com", "countryISO": "AR"},
        "car": {"plate": "AB123CD"},
        "consumer": {"email": "ana@example.com"},
        "inputs": [{"identifier": identifiers["km"], "value": 10}],
    }
    for name, value in values.items():
        data["inputs"].append({"identifier": identifiers[name], "value": value})
    return data


def errors(template: Template, data: dict[str, Any]) -> list[str]:
    converted = {**data, "inputs": inputs_to_object(data.get("inputs"))}
    found = creation_validator(template).iter_errors(converted)
    return sorted(".".join(str(p) for p in e.absolute_path) or e.message for e in found)


def test_the_schema_is_valid_draft_3_in_the_spec_shape(template: Template) -> None:
    schema = template.schema_
    Draft3Validator.check_schema(schema)
    assert schema["$schema"] == "http://json-schema.org/draft-03/schema#"
    assert schema["type"] == "object"
    properties = schema["properties"]
    assert {"locale", "delivery", "inputs", "car", "consumer"} <= set(properties)
    assert set(properties["delivery"]["properties"]) >= {"channel", "countryISO", "destination"}
    assert properties["delivery"]["properties"]["channel"]["required"] is True
    assert properties["delivery"]["properties"]["destination"]["required"] is True
    assert set(properties["inputs"]["properties"]) == {i.identifier for i in template.inputs}
    for prop in properties["inputs"]["properties"].values():
        assert isinstance(prop["required"], bool)
        assert isinstance(prop["type"], str)
        assert isinstance(prop["label"], str)


def test_schemas_of_every_shipped_shape_pass_the_metaschema(template: Template) -> None:
    small = compile_source('template "S"\n    type: people\nverdict\n')
    for schema in (template.schema_, small.schema_):
        Draft3Validator.check_schema(schema)
    assert "people" not in small.schema_["properties"]  # people have no product object


def test_a_complete_valid_body_passes(template: Template) -> None:
    data = body(
        template,
        code="ABC",
        mail="a@b.co",
        born="1990-05-01",
        use="Work",
        extras=["GPS"],
        agree=True,
        invoice="invoice.pdf",
    )
    assert errors(template, data) == []


def test_required_create_input_missing_is_an_error(template: Template) -> None:
    data = body(template)
    data["inputs"] = []
    km = ids(template)["km"]
    assert errors(template, data) == [f"inputs.{km}"]


def test_update_stage_inputs_are_not_required_at_creation(template: Template) -> None:
    later = ids(template)["later"]
    assert template.schema_["properties"]["inputs"]["properties"][later]["required"] is False
    assert errors(template, body(template)) == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("code", "abc"),
        ("code", "ABCD"),
        ("mail", "not an address"),
        ("born", "01/05/1990"),
        ("use", "Private use"),
        ("extras", ["GPS", "Roof"]),
        ("extras", ["Sunroof"]),
        ("agree", "yes"),
        ("invoice", 12),
    ],
)
def test_bad_input_values_are_reported_at_the_input(
    template: Template, name: str, value: Any
) -> None:
    identifier = ids(template)[name]
    found = errors(template, body(template, **{name: value}))
    assert found and all(path.startswith(f"inputs.{identifier}") for path in found)


def test_numeric_bounds_and_whole_numbers(template: Template) -> None:
    km = ids(template)["km"]
    for value in (-1, 1001, 2.5, "10"):
        data = body(template)
        data["inputs"] = [{"identifier": km, "value": value}]
        assert errors(template, data) == [f"inputs.{km}"]


def test_required_product_consumer_and_delivery_fields(template: Template) -> None:
    data = body(template)
    data["car"] = {}
    data["consumer"] = {"email": 3}
    del data["delivery"]["destination"]
    assert errors(template, data) == ["car.plate", "consumer.email", "delivery.destination"]
    del data["locale"]
    assert errors(template, data) == [
        "car.plate",
        "consumer.email",
        "delivery.destination",
        "locale",
    ]


def test_inputs_to_object_maps_the_spec_array_and_leaves_anything_else() -> None:
    items = [{"identifier": "input_a", "value": 1}, {"identifier": "input_b", "value": "x"}]
    assert inputs_to_object(items) == {"input_a": 1, "input_b": "x"}
    assert inputs_to_object(
        [{"identifier": "input_a", "value": 1}, {"identifier": "input_a", "value": 2}]
    ) == {"input_a": 2}
    assert inputs_to_object("nonsense") == "nonsense"
    assert inputs_to_object([{"value": 1}]) == [{"value": 1}]
    assert inputs_to_object(None) is None


def test_a_non_object_inputs_value_is_reported_by_the_schema(template: Template) -> None:
    data = body(template)
    data["inputs"] = "nonsense"
    assert errors(template, data) == ["inputs"]


def test_human_labels_of_fixed_fields() -> None:
    assert human_label("firstName") == "First name"
    assert human_label("plate") == "Plate"
    assert human_label("face_comparison") == "Face comparison"


ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "examples").glob("*.insp")) + sorted(
    (ROOT / "inspectlang/builtins").glob("*.insp")
)


@pytest.mark.parametrize("path", SHIPPED, ids=[p.name for p in SHIPPED])
def test_every_shipped_template_schema_passes_the_draft_3_metaschema(path: Path) -> None:
    kind = "built-in" if path.parent.name == "builtins" else "created"
    template = compile_source(path.read_text(encoding="utf-8"), str(path), template_kind=kind)
    Draft3Validator.check_schema(template.schema_)
    properties = template.schema_["properties"]
    assert set(properties["inputs"]["properties"]) == {i.identifier for i in template.inputs}


ASK_WHEN = """template "T"
    type: car
    locales: en_US, es_AR
input use
    type: select
    option private: "Private"
    option commercial: "Commercial"
    option commercial es_AR: "Comercial"
input company
    type: text
    required
    ask when: inputs.use = "commercial" and car.year >= 2000
verdict
    approve when all(i in images where i.approved)
"""


def test_ask_when_makes_a_required_input_conditional_for_draft7_clients() -> None:
    from jsonschema import Draft7Validator

    template = compile_source(ASK_WHEN, "ask.insp")
    schema = template.schema_
    use, company = (spec.identifier for spec in template.inputs)
    assert schema["properties"]["inputs"]["properties"][company]["required"] is False
    draft7 = Draft7Validator({"allOf": schema["allOf"]})
    new_car = {"year": 2015}
    assert draft7.is_valid({"inputs": {use: "Private"}, "car": new_car})
    for spelling in ("Commercial", "commercial", "Comercial"):
        assert not draft7.is_valid({"inputs": {use: spelling}, "car": new_car})
        assert draft7.is_valid({"inputs": {use: spelling}, "car": {"year": 1990}})
    assert draft7.is_valid({"inputs": {use: "Commercial", company: "ACME"}, "car": new_car})
    # The server's draft 3 validator ignores the draft 7 keywords: the runtime decides.
    assert Draft3Validator(schema).is_valid(
        {
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@b.c"},
            "inputs": {use: "Commercial"},
            "consumer": {},
        }
    )


def test_a_choice_accepts_its_labels_and_its_keys() -> None:
    template = compile_source(ASK_WHEN, "ask.insp")
    use = template.inputs[0].identifier
    enum = template.schema_["properties"]["inputs"]["properties"][use]["enum"]
    assert enum == ["Private", "Commercial", "private", "commercial"]
