"""What a newcomer tripped on in the API (issue 24), and the creation body checked once with one
code per failure (issue 26), through the real HTTP client and database."""

from __future__ import annotations

from typing import Any

import httpx

from tests.server.test_images import PHOTO, upload

SOURCE = """\
template "Newcomer car {n}"
    type: car

input mileage
    type: numeric
    label: "Mileage"
    asked at: create
    required

verdict
    approve when inputs.mileage >= 0
"""


def _template(client: httpx.Client, headers: dict[str, str], **extra: str) -> dict[str, Any]:
    count = len(client.get("/v1/inspection/template", headers=headers).json())
    response = client.post(
        "/v1/inspection/template",
        content=SOURCE.format(n=count).encode(),
        headers={**headers, "content-type": "text/plain", **extra},
    )
    assert response.status_code == 201, response.text
    template: dict[str, Any] = response.json()
    return template


def _body(template_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "templateId": template_id,
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "car": {"plate": "AB123CD"},
        **extra,
    }


def test_an_input_may_be_named_by_its_name(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """`simulate` takes names, the API took identifiers only (400 `invalid_input_value` for
    `mileage` before); an unknown one lists the template's inputs with their identifiers."""
    template = _template(client, test_headers)
    (identifier,) = [i["identifier"] for i in template["inputs"]]
    created = client.post(
        "/v1/inspection/car",
        json=_body(template["_id"], inputs=[{"identifier": "mileage", "value": 1200}]),
        headers=test_headers,
    )
    assert created.status_code == 201, created.text
    read = client.get(f"/v1/inspection/{created.json()['inspectionId']}", headers=test_headers)
    assert {i["identifier"]: i["value"] for i in read.json()["template"]["inputs"]} == {
        identifier: 1200
    }
    typo = client.post(
        "/v1/inspection/car",
        json=_body(
            template["_id"],
            inputs=[
                {"identifier": "mileage", "value": 1},
                {"identifier": "milage", "value": 1200},
            ],
        ),
        headers=test_headers,
    )
    assert (typo.status_code, typo.json()["code"]) == (400, "invalid_input_value")
    (error,) = typo.json()["errors"]
    assert (error["field"], error["code"]) == ("milage", "unknown_input")
    assert f"mileage ({identifier})" in error["message"]


def test_a_missing_locale_says_it_is_missing(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    body = _body("easy")
    del body["locale"]
    response = client.post("/v1/inspection/car", json=body, headers=test_headers)
    assert (response.status_code, response.json()["code"]) == (400, "invalid_locale")
    assert "None" not in response.text and "missing" in response.json()["description"]


def test_upload_without_a_data_part_is_told_so(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """Told "The request body must be a JSON object" before."""
    created = client.post("/v1/inspection/car", json=_body("easy"), headers=test_headers)
    response = upload(client, test_headers, created.json()["productId"], data=None)
    assert (response.status_code, response.json()["code"]) == (400, "invalid_body")
    assert "`data` part" in response.json()["description"]
    assert response.json()["errors"][0]["field"] == "data"


def test_upload_with_an_unknown_side_warns_with_the_templates_sides(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """`"frnt"` was stored silently as an extra image while `front` stayed empty."""
    created = client.post("/v1/inspection/car", json=_body("easy"), headers=test_headers)
    product_id = created.json()["productId"]
    inspection = client.get(
        f"/v1/inspection/{created.json()['inspectionId']}", headers=test_headers
    )
    template_id = inspection.json()["template"]["_id"]
    template = client.get(f"/v1/inspection/template/{template_id}", headers=test_headers)
    sides = [image["side"] for image in template.json()["images"]]
    misspelt = upload(client, test_headers, product_id, {"side": "frnt"}, image=PHOTO)
    assert misspelt.status_code == 201, misspelt.text
    (warning,) = misspelt.json()["warnings"]
    assert warning["code"] == "unknown_side"
    assert "'frnt'" in warning["message"] and ", ".join(sides) in warning["message"]
    inspection = client.get(
        f"/v1/inspection/{created.json()['inspectionId']}", headers=test_headers
    )
    assert [i["side"] for i in inspection.json()["products"][0]["extraImages"]] == ["frnt"]
    assert "warnings" not in inspection.json()["products"][0]["extraImages"][0]
    slot = upload(client, test_headers, product_id, {"side": sides[0]}, image=PHOTO)
    assert slot.status_code == 201 and "warnings" not in slot.json()


def test_template_post_names_text_plain_and_reads_a_source_sent_without_content_type(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    count = len(client.get("/v1/inspection/template", headers=test_headers).json())
    source = SOURCE.format(n=f"{count} form").encode()
    form = client.post(
        "/v1/inspection/template",
        content=source,
        headers={**test_headers, "content-type": "application/x-www-form-urlencoded"},
    )
    assert (form.status_code, form.json()["code"]) == (415, "unsupported_media_type")
    assert "text/plain" in form.json()["description"]
    bare = client.post("/v1/inspection/template", content=source, headers=test_headers)
    assert "content-type" not in bare.request.headers
    assert bare.status_code == 201, bare.text
    # Elsewhere text is no body: the inspection routes name only what they take.
    other = client.post(
        "/v1/inspection/car",
        content=b"x",
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert other.status_code == 415
    assert other.json()["description"] == (
        "Send the body as application/json or multipart/form-data, not 'text/plain'."
    )


def test_creation_without_delivery_is_one_invalid_body(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """The template's JSON Schema refused it inside the runtime; now the delivery's own check
    does, with the same code, once."""
    body = _body("easy")
    del body["delivery"]
    response = client.post("/v1/inspection/car", json=body, headers=test_headers)
    assert (response.status_code, response.json()["code"]) == (400, "invalid_body")
    assert response.json()["errors"][0]["field"] == "delivery"


def test_metadata_on_update_takes_phps_empty_array_and_one_code(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    created = client.post(
        "/v1/inspection/car", json=_body("easy", metadata={"a": "1"}), headers=test_headers
    )
    url = f"/v1/inspection/{created.json()['inspectionId']}"
    empty = client.put(url, json={"metadata": [], "consumer": []}, headers=test_headers)
    assert empty.status_code == 200, empty.text
    bad = client.put(url, json={"metadata": {"b": 5, "c" * 51: "x"}}, headers=test_headers)
    assert (bad.status_code, bad.json()["code"]) == (400, "invalid_metadata")
    assert sorted(e["code"] for e in bad.json()["errors"]) == ["key_too_long", "value_not_string"]
    assert client.get(url, headers=test_headers).json()["metadata"] == {"a": "1"}
