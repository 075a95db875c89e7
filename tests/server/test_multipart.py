"""Multipart bodies over real HTTP: any JSON body may come as a `data` part; file inputs come
as parts named by their input identifier, are stored, and are checked by the template's rules."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

SOURCE = """\
template "Paperwork"
    type: machinery

input invoice
    type: file
    label: "Invoice"
    asked at: create, update
    required
    accepts: "application/pdf"
    maximum size: 1 KB

input hours
    type: numeric
    label: "Hours"
    asked at: create

verdict
    approve when true
"""

PDF = b"%PDF-1.4\n% tiny test file\n%%EOF\n"


@pytest.fixture
def paperwork(client: httpx.Client, test_headers: dict[str, str]) -> dict[str, Any]:
    response = client.post(
        "/v1/inspection/template",
        content=SOURCE.encode(),
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert response.status_code == 201, response.text
    template: dict[str, Any] = response.json()
    return template


def ids(template: dict[str, Any]) -> dict[str, str]:
    return {i["label"]: i["identifier"] for i in template["inputs"]}


def data_part(template: dict[str, Any], **extra: Any) -> str:
    body = {
        "templateId": template["_id"],
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "inputs": [{"identifier": ids(template)["Hours"], "value": 1200}],
        **extra,
    }
    return json.dumps(body)


def error_of(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


def test_create_with_a_file_input(
    client: httpx.Client,
    live_server: str,
    test_headers: dict[str, str],
    paperwork: dict[str, Any],
) -> None:
    invoice = ids(paperwork)["Invoice"]
    response = client.post(
        "/v1/inspection/machinery",
        files={
            "data": (None, data_part(paperwork)),
            invoice: ("invoice.pdf", PDF, "application/pdf"),
        },
        headers=test_headers,
    )
    assert response.status_code == 201, response.text
    inspection_id = response.json()["inspectionId"]
    document = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json()
    values = {i["identifier"]: i["value"] for i in document["template"]["inputs"]}
    assert values[ids(paperwork)["Hours"]] == 1200
    link = values[invoice]
    assert link.startswith(f"{live_server}/v1/inspection/image/")
    assert "/content?token=" in link
    stored = httpx.get(link)
    assert stored.status_code == 200
    assert stored.content == PDF
    assert stored.headers["content-type"] == "application/pdf"


def test_file_input_rules(
    client: httpx.Client, test_headers: dict[str, str], paperwork: dict[str, Any]
) -> None:
    invoice = ids(paperwork)["Invoice"]

    def post(files: dict[str, Any]) -> httpx.Response:
        return client.post("/v1/inspection/machinery", files=files, headers=test_headers)

    wrong_type = post(
        {"data": (None, data_part(paperwork)), invoice: ("a.png", b"\x89PNG....", "image/png")}
    )
    assert error_of(wrong_type) == (400, "invalid_input_value")
    too_big = post(
        {
            "data": (None, data_part(paperwork)),
            invoice: ("a.pdf", PDF + b"x" * 2000, "application/pdf"),
        }
    )
    assert error_of(too_big) == (400, "invalid_input_value")
    missing = post({"data": (None, data_part(paperwork))})
    assert error_of(missing) == (400, "input_value_not_provided")
    unknown = post(
        {
            "data": (None, data_part(paperwork)),
            invoice: ("a.pdf", PDF, "application/pdf"),
            "input_unknown": ("b.pdf", PDF, "application/pdf"),
        }
    )
    assert error_of(unknown) == (400, "unknown_file_input")
    hours = post(
        {
            "data": (None, data_part(paperwork)),
            ids(paperwork)["Hours"]: ("h.txt", b"12", "text/plain"),
        }
    )
    assert error_of(hours) == (400, "unknown_file_input")


def test_data_part_forms(client: httpx.Client, test_headers: dict[str, str]) -> None:
    body = json.dumps(
        {
            "templateId": "easy",
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
        }
    )
    as_field = client.post("/v1/inspection/car", files={"data": (None, body)}, headers=test_headers)
    assert as_field.status_code == 201, as_field.text
    as_file = client.post(
        "/v1/inspection/car",
        files={"data": ("data.json", body.encode(), "application/json")},
        headers=test_headers,
    )
    assert as_file.status_code == 201, as_file.text
    update = client.put(
        f"/v1/inspection/{as_field.json()['inspectionId']}",
        files={"data": (None, json.dumps({"metadata": {"via": "multipart"}}))},
        headers=test_headers,
    )
    assert update.status_code == 200, update.text
    read = client.get(f"/v1/inspection/{as_field.json()['inspectionId']}", headers=test_headers)
    assert read.json()["metadata"] == {"via": "multipart"}


def test_bad_multipart_bodies(client: httpx.Client, test_headers: dict[str, str]) -> None:
    def post(**kwargs: Any) -> tuple[int, str]:
        return error_of(client.post("/v1/inspection/car", headers=test_headers, **kwargs))

    assert post(files={"data": (None, "{oops")}) == (400, "malformed_json")
    assert post(files={"data": (None, "[]")}) == (400, "invalid_body")
    assert post(files={"other": (None, "x")}) == (400, "invalid_multipart")
    truncated = client.post(
        "/v1/inspection/car",
        content=b'--b\r\nContent-Disposition: form-data; name="data"\r\n\r\n{}',
        headers={**test_headers, "content-type": "multipart/form-data; boundary=b"},
    )
    assert error_of(truncated) == (400, "invalid_multipart")
    no_boundary = client.post(
        "/v1/inspection/car",
        content=b"whatever",
        headers={**test_headers, "content-type": "multipart/form-data"},
    )
    assert error_of(no_boundary)[0] == 400
    twice = client.post(
        "/v1/inspection/car",
        files=[("data", (None, "{}")), ("data", (None, "{}"))],
        headers=test_headers,
    )
    assert error_of(twice) == (400, "invalid_multipart")
    latin = client.post(
        "/v1/inspection/car",
        content=(
            b'--b\r\nContent-Disposition: form-data; name="data"\r\n'
            b"Content-Type: text/plain; charset=nope\r\n\r\n{}\r\n--b--\r\n"
        ),
        headers={**test_headers, "content-type": "multipart/form-data; boundary=b"},
    )
    assert error_of(latin)[0] == 400


def test_other_media_types(client: httpx.Client, test_headers: dict[str, str]) -> None:
    xml = client.post(
        "/v1/inspection/car",
        content=b"<inspection/>",
        headers={**test_headers, "content-type": "application/xml"},
    )
    assert error_of(xml) == (415, "unsupported_media_type")
    text = client.post(
        "/v1/inspection/car",
        content=b"templateId=easy",
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert error_of(text) == (415, "unsupported_media_type")
    empty = client.post("/v1/inspection/car", headers=test_headers)
    assert error_of(empty) == (400, "invalid_body")
    nested = client.post(
        "/v1/inspection/car",
        content=b"[" * 100 + b"]" * 100,
        headers={**test_headers, "content-type": "application/json"},
    )
    assert error_of(nested) == (400, "malformed_json")
    nan = client.post(
        "/v1/inspection/car",
        content=b'{"templateId": NaN}',
        headers={**test_headers, "content-type": "application/json"},
    )
    assert error_of(nan) == (400, "malformed_json")
