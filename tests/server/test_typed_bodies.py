"""Typed request bodies (`server.bodies`): each JSON body is decoded into its Struct, and the
OpenAPI document shows the schema generated from that same Struct.

Before, handlers read `dict[str, Any]` and looked up the keys they knew: an unknown field (a
typo such as `expiresInSecond`) was ignored with a success, and the document's hand-written
schema could say something the handler did not do. Now an unknown field is 400
`unknown_field` naming it, a wrong type keeps the field's stable code, and the document's body
schema is closed (`additionalProperties: false`) exactly where the decoder is.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import msgspec
import pytest

from inspectlang.manifest import CONSUMER_FIELDS, PRODUCT_FIELDS
from server.bodies import schema_of
from server.inspections.schemas import (
    CreatedInspection,
    CreateInspectionBody,
    FinishedInspection,
    Image,
    Inspection,
    InspectionPage,
)
from server.templates.schemas import Template, TemplateSource
from tests.server.test_every_image_slot import creation_body, every_template
from tests.server.test_images import PHOTO, upload

SOURCE = 'template "Typed"\n    type: car\n\nverdict\n    approve when true\n'


def error_of(response: httpx.Response) -> tuple[int, str, str | None]:
    body = response.json()
    field = (body.get("errors") or [{}])[0].get("field")
    return response.status_code, body["code"], field


@pytest.fixture
def document(client: httpx.Client) -> dict[str, Any]:
    found: dict[str, Any] = client.get("/schema/openapi.json").json()
    return found


def _request_schema(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    schema: dict[str, Any] = document["paths"][path][method]["requestBody"]["content"][
        "application/json"
    ]["schema"]
    return schema


def test_template_body_unknown_field_and_wrong_type(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """`{"source": ..., "name": ...}` was a 201 that ignored `name`: now 400 `unknown_field`
    on `name`; `{"source": 5}` is 400 `invalid_body` on `source`; `{"src": ...}` still says
    the source is missing (400 `invalid_body` on `source`)."""
    url = "/v1/inspection/template"
    extra = client.post(url, json={"source": SOURCE, "name": "x"}, headers=test_headers)
    assert error_of(extra) == (400, "unknown_field", "name")
    wrong = client.post(url, json={"source": 5}, headers=test_headers)
    assert error_of(wrong) == (400, "invalid_body", "source")
    assert "source" in wrong.json()["description"]
    missing = client.post(url, json={"src": SOURCE}, headers=test_headers)
    assert error_of(missing) == (400, "invalid_body", "source")
    ok = client.post(url, json={"source": SOURCE}, headers=test_headers)
    assert ok.status_code == 201, ok.text


def test_template_body_schema_is_the_model(document: dict[str, Any]) -> None:
    """The document's body schema is generated from `TemplateSource`, closed like it."""
    for path, method in [
        ("/v1/inspection/template", "post"),
        ("/v1/inspection/template/{template_id}", "put"),
    ]:
        schema = _request_schema(document, path, method)
        assert schema == schema_of(TemplateSource)
        assert schema["additionalProperties"] is False
        assert schema["required"] == ["source"]


def test_webhook_body_unknown_field_and_wrong_types(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """`{"events", "endpoint", "secret"}` subscribed and ignored `secret`: now 400
    `unknown_field` on `secret`, nothing stored. Wrong types keep their codes: `events` not a
    list of known events is 400 `invalid_events`, `endpoint` not a text 400
    `invalid_callback_url`."""
    url = "/v1/notification/webhook"
    events = ["inspection_created"]
    extra = client.post(
        url,
        json={"events": events, "endpoint": "https://example.com/h", "secret": "mine"},
        headers=test_headers,
    )
    assert error_of(extra) == (400, "unknown_field", "secret")
    bad_event = client.post(
        url, json={"events": [1], "endpoint": "https://example.com/h"}, headers=test_headers
    )
    assert error_of(bad_event) == (400, "invalid_events", "events[0]")
    bad_endpoint = client.post(url, json={"events": events, "endpoint": 5}, headers=test_headers)
    assert error_of(bad_endpoint) == (400, "invalid_callback_url", "endpoint")
    listed = client.get(url, headers=test_headers).json()
    assert listed == {"webhooks": []}


def test_webhook_responses_are_documented_from_their_structs(document: dict[str, Any]) -> None:
    """Litestar derives the success responses from the handlers' return types."""
    operations = document["paths"]["/v1/notification/webhook"]
    created = operations["post"]["responses"]["201"]["content"]["application/json"]["schema"]
    listed = operations["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert created == {"$ref": "#/components/schemas/SubscriptionCreated"}
    assert listed == {"$ref": "#/components/schemas/SubscriptionList"}
    subscription = document["components"]["schemas"]["Subscription"]
    assert set(subscription["required"]) == {"_id", "endpoint", "events", "createdAt", "active"}


CREATION = {
    "templateId": "easy",
    "locale": "en_US",
    "delivery": {"channel": "email", "destination": "driver@example.com"},
}


def _inspection(client: httpx.Client, headers: dict[str, str]) -> str:
    response = client.post("/v1/inspection/car", json=CREATION, headers=headers)
    assert response.status_code == 201, response.text
    inspection_id: str = response.json()["inspectionId"]
    return inspection_id


def test_presign_body_unknown_field(client: httpx.Client, test_headers: dict[str, str]) -> None:
    """`{"expiresIn": 60}` (a misspelt `expiresInSeconds`) gave a 1-hour link, not the minute
    asked for: now 400 `unknown_field` on `expiresIn`. No body at all still signs a link for
    the default hour, and the response keeps its three fields."""
    path = f"/v1/inspection/presign/detail/{_inspection(client, test_headers)}"
    misspelt = client.post(path, json={"expiresIn": 60}, headers=test_headers)
    assert error_of(misspelt) == (400, "unknown_field", "expiresIn")
    wrong = client.post(path, json={"expiresInSeconds": "60"}, headers=test_headers)
    assert error_of(wrong) == (400, "invalid_expires_in", "expiresInSeconds")
    signed = client.post(path, headers=test_headers)
    assert signed.status_code == 200, signed.text
    assert set(signed.json()) == {"accessToken", "expiresAt", "url"}


def _described_exactly(value: Any, model: Any) -> None:
    """`value` decodes as `model` and encodes back to itself: every field of the real object
    is in the model, with its type (a field the model lacks would be dropped and differ)."""
    typed = msgspec.convert(value, model)
    differences = _differences(msgspec.to_builtins(typed), value)
    assert differences == [], "\n".join(sorted({re.sub(r"\[\d+\]", "[]", d) for d in differences}))


def _differences(got: Any, want: Any, path: str = "$") -> list[str]:
    """Where `got` differs from `want`; a number equals the same number of the other kind
    (the Structs document numbers as JSON numbers), a bool or text only itself."""
    if isinstance(want, dict) and isinstance(got, dict):
        found = [f"{path}.{key}: missing" for key in want if key not in got]
        found += [f"{path}.{key}: extra" for key in got if key not in want]
        for key in want.keys() & got.keys():
            found += _differences(got[key], want[key], f"{path}.{key}")
        return found
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        pairs = enumerate(zip(got, want, strict=True))
        return [d for i, (g, w) in pairs for d in _differences(g, w, f"{path}[{i}]")]
    same_kind = type(got) is type(want) or not isinstance(want, bool | str | dict | list)
    return [] if got == want and same_kind else [f"{path}: {got!r} != {want!r}"]


def test_every_response_object_is_exactly_its_struct(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """The document's Template, Image, Inspection, page and created-inspection schemas come
    from Structs while the hot paths build dicts (`runtime.api_view`): for every built-in and
    example template, the real objects (one photo per slot and an extra one, finished, listed,
    read through a presigned link) are exactly what their Structs describe."""
    templates = every_template(client, test_headers)
    _described_exactly(templates, list[Template])
    for template in templates:
        with_logic = client.get(
            f"/v1/inspection/template/{template['_id']}",
            params={"withLogic": "true"},
            headers=test_headers,
        ).json()
        _described_exactly(with_logic, Template)
        kind = template["inspectionType"]
        created = client.post(
            f"/v1/inspection/{kind}", json=creation_body(template), headers=test_headers
        )
        assert created.status_code == 201, (template["name"], created.text)
        _described_exactly(created.json(), CreatedInspection)
        product_id = created.json()["productId"]
        for data in [*({"side": slot["side"]} for slot in template["images"]), {"side": "extra"}]:
            image = upload(client, test_headers, product_id, data, image=PHOTO)
            assert image.status_code == 201, (template["name"], image.text)
            _described_exactly(image.json(), Image)
        inspection_id = created.json()["inspectionId"]
        _described_exactly(
            client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json(), Inspection
        )
        finished = client.post(f"/v1/inspection/finish/{inspection_id}", headers=test_headers)
        # 409 update_inputs_missing: a template with required update-stage inputs
        assert finished.status_code in (200, 409), (template["name"], finished.text)
        if finished.status_code == 200:
            _described_exactly(finished.json(), FinishedInspection)
        link = client.post(f"/v1/inspection/presign/detail/{inspection_id}", headers=test_headers)
        _described_exactly(client.get(link.json()["url"]).json(), Inspection)
    page = client.get("/v1/inspection", params={"limit": 100}, headers=test_headers)
    assert page.json()["totalInspections"] == len(templates)
    _described_exactly(page.json(), InspectionPage)


def test_damage_and_validation_bodies(client: httpx.Client, test_headers: dict[str, str]) -> None:
    """A damage with a misspelt `percent` was accepted and the percentage silently lost; an
    analysis result with `confidense` was refused only for the missing confidence. Now both
    name the unknown field (400 `unknown_field`); wrong types keep their codes (a damage's
    fields 400 `invalid_body`, a result's 400 `invalid_validation_result`)."""
    inspection_id = _inspection(client, test_headers)
    damage_url = f"/v1/inspection/{inspection_id}/damage"
    damage = {"part": "trunk", "damage": "dent", "severity": "minor"}
    misspelt = client.post(damage_url, json={**damage, "percent": 5}, headers=test_headers)
    assert error_of(misspelt) == (400, "unknown_field", "percent")
    too_long = client.post(damage_url, json={**damage, "part": "x" * 101}, headers=test_headers)
    assert error_of(too_long) == (400, "invalid_body", "part")
    wrong = client.post(damage_url, json={**damage, "productId": 5}, headers=test_headers)
    assert error_of(wrong) == (400, "invalid_body", "productId")

    document = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json()
    product_id = document["products"][0]["_id"]
    image = upload(client, test_headers, product_id, {"side": "front"}, image=PHOTO).json()
    url = f"/v1/inspection/{inspection_id}/image/{image['_id']}/validation"
    result = {"validation": "recaptured", "confidence": 93}
    typo = client.post(
        url, json={"validation": "recaptured", "confidense": 93}, headers=test_headers
    )
    assert error_of(typo) == (400, "invalid_validation_result", "confidence")
    extra = client.post(url, json={**result, "score": 1}, headers=test_headers)
    assert error_of(extra) == (400, "unknown_field", "score")
    bad_damage = client.post(
        url, json={**result, "damages": [{**damage, "percentage": 101}]}, headers=test_headers
    )
    assert error_of(bad_damage) == (400, "invalid_validation_result", "damages[0].percentage")
    recorded = client.post(url, json=result, headers=test_headers)
    assert recorded.status_code == 200, recorded.text
    views = recorded.json()["products"][0]["images"][0]["validations"]
    confidence = next(v["confidence"] for v in views if v["validation"] == "recaptured")
    assert confidence == 93


def test_creation_and_update_bodies_follow_the_vocabulary(document: dict[str, Any]) -> None:
    """The creation body's schema is generated from `CreateInspectionBody`, whose product
    fields and consumer fields come from `inspectlang.manifest`: a product type or consumer
    field added there appears in the document with no edit to the server."""
    create = _request_schema(document, "/v1/inspection/{inspection_type}", "post")
    assert create == schema_of(CreateInspectionBody)
    with_fields = {kind for kind, fields in PRODUCT_FIELDS.items() if fields}
    assert with_fields <= set(create["properties"])
    assert set(create["properties"]["consumer"]["properties"]) == set(CONSUMER_FIELDS)
    assert create["required"] == ["templateId", "locale"]  # the spec: locale is required
    product = _request_schema(document, "/v1/inspection/{inspection_type}/{product_id}", "put")
    # Beside the product objects: PHP's `productId` and inputs with their file parts.
    assert set(product["properties"]) == with_fields | {"productId", "inputs"}


@pytest.mark.parametrize("identifier", [["plate"], {"name": "plate"}])
def test_an_input_identifier_that_is_not_a_text_is_refused_naming_it(
    client: httpx.Client, test_headers: dict[str, str], identifier: Any
) -> None:
    """Issue 39 §4: a list or an object as `inputs[].identifier` was 500 `internal_error`
    (unhashable in `refuse_file_values`) on the creation and both updates. The bodies the
    runtime validates are now checked for their JSON types at the door (`decode_shape`): 400
    `invalid_body` naming the field, before any service code reads them."""
    inputs = [{"identifier": "x", "value": 1}, {"identifier": identifier, "value": "AB123CD"}]
    created = client.post(
        "/v1/inspection/car", json={**CREATION, "inputs": inputs}, headers=test_headers
    )
    assert error_of(created) == (400, "invalid_body", "inputs[1].identifier")
    inspection_id = _inspection(client, test_headers)
    product_id = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json()[
        "products"
    ][0]["_id"]
    for path in (f"/v1/inspection/{inspection_id}", f"/v1/inspection/car/{product_id}"):
        updated = client.put(path, json={"inputs": inputs}, headers=test_headers)
        assert error_of(updated) == (400, "invalid_body", "inputs[1].identifier"), path


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"consumer": {"firstName": ["Ana"]}}, "consumer.firstName"),
        ({"consumer": {"sex": ["F"]}}, "consumer.sex"),  # was a 500 too (the fuzz test's find)
        ({"car": {"plate": {"x": 1}}}, "car.plate"),
        ({"car": {"configuration": {"plate": {"run": "yes"}}}}, "car.configuration.plate.run"),
        (
            {"delivery": {"channel": "email", "destination": ["a@example.com"]}},
            "delivery.destination",
        ),
        ({"inputs": [{"identifier": "x", "value": {"size": "big"}}]}, "inputs[0].value.size"),
        ({"inputs": {"identifier": "x"}}, "inputs"),
    ],
)
def test_a_wrong_json_type_anywhere_in_a_creation_is_refused_naming_it(
    client: httpx.Client, test_headers: dict[str, str], body: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/inspection/car", json={**CREATION, **body}, headers=test_headers)
    assert error_of(response) == (400, "invalid_body", field)
