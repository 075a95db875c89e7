"""A photo reaches every image slot of every built-in template and every example, by side and by
identifier, and one extra photo (a side no slot declares) becomes an extra image: each is found
in the Inspection object afterwards.

Regression: on a `people` inspection an extra photo (side `dni_front` where the template says
`dni`) answered 500 "The uploaded image is missing from the inspection." because the Inspection
object dropped a person's extra images.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.test_images import PHOTO, upload

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.insp"))

#: Values for the text patterns the examples declare (a pattern cannot be inverted in general).
PATTERN_VALUES = {
    "^[A-Z]{2}[0-9]{9}[A-Z]{2}$": "RR123456789AR",
    "^[0-9]{15}$": "356938035643809",
}


def input_value(spec: dict[str, Any]) -> Any:
    """A value each create-stage input accepts, from its type and `validationSchema`."""
    schema = spec.get("validationSchema") or {}
    options = [option["label"] for option in spec.get("options") or []]
    kind = spec["type"]
    if kind == "numeric":
        return int(schema.get("minimum", 1))
    if kind == "date":
        return schema.get("minDate", "2026-01-01")
    if kind == "select":
        return options[0]
    if kind == "multiselect":
        return options[:1]
    if kind == "check":
        return True
    if "pattern" in schema:
        return PATTERN_VALUES[schema["pattern"]]
    return "x" * max(1, int(schema.get("minLength", 1)))


def creation_body(template: dict[str, Any]) -> dict[str, Any]:
    kind = template["inspectionType"]
    body: dict[str, Any] = {
        "templateId": template["_id"],
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "consumer": {
            "firstName": "Ana",
            "lastName": "Diaz",
            "identification": "30111222",
            "email": "ana@example.com",
        },
        "inputs": [
            {"identifier": spec["identifier"], "value": input_value(spec)}
            for spec in template["inputs"]
            if "create" in spec["stages"] and (spec.get("validationSchema") or {}).get("required")
        ],
    }
    if kind != "people":
        body[kind] = product_fields(template, kind)
    return body


def product_fields(template: dict[str, Any], kind: str) -> dict[str, Any]:
    """The product's fields the template's schema requires (draft-03 `required` flags)."""
    fields: dict[str, Any] = {"plate": "AB123CD"} if kind in ("car", "moto") else {}
    product = template["schema"]["properties"].get(kind) or {}
    for name, field in (product.get("properties") or {}).items():
        if field.get("required") and name not in fields:
            fields[name] = 1 if field.get("type") in ("number", "integer") else "x"
    return fields


def every_template(client: httpx.Client, headers: dict[str, str]) -> list[dict[str, Any]]:
    """The built-ins, and each example saved as a custom template."""
    for path in EXAMPLES:
        saved = client.post(
            "/v1/inspection/template",
            content=path.read_bytes(),
            headers={**headers, "content-type": "text/plain"},
        )
        assert saved.status_code in (201, 409), saved.text  # 409: saved by an earlier test
    listed = client.get("/v1/inspection/template", params={"limit": 100}, headers=headers)
    assert listed.status_code == 200, listed.text
    body = listed.json()
    templates: list[dict[str, Any]] = body if isinstance(body, list) else body["templates"]
    assert len(templates) >= 11 + len(EXAMPLES)
    return templates


@pytest.mark.parametrize("address", ["side", "identifier"])
def test_a_photo_reaches_every_slot_and_an_extra_one_is_kept(
    client: httpx.Client, test_headers: dict[str, str], address: str
) -> None:
    for template in every_template(client, test_headers):
        kind = template["inspectionType"]
        created = client.post(
            f"/v1/inspection/{kind}", json=creation_body(template), headers=test_headers
        )
        assert created.status_code == 201, (template["name"], created.text)
        product_id = created.json()["productId"]
        uploaded: dict[str, str] = {}
        for slot in template["images"]:
            data = {address: slot[address]}
            response = upload(client, test_headers, product_id, data, image=PHOTO)
            assert response.status_code == 201, (template["name"], slot["side"], response.text)
            uploaded[response.json()["_id"]] = slot["side"]
        extra = upload(client, test_headers, product_id, json.dumps({"side": "not_a_slot_side"}))
        assert extra.status_code == 201, (template["name"], extra.text)

        document = client.get(
            f"/v1/inspection/{created.json()['inspectionId']}", headers=test_headers
        ).json()
        holders = [*document["products"], document["identity"], document["custom"]]
        found = {view["_id"]: view["side"] for h in holders for view in h["images"]}
        extras = {view["_id"]: view["side"] for h in holders for view in h["extraImages"]}
        for image_id, side in uploaded.items():
            assert found.get(image_id) == side, (template["name"], side, found)
        assert extras == {extra.json()["_id"]: "not_a_slot_side"}, (template["name"], extras)
