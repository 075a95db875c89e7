"""Requests the OpenAPI document allows, decided one by one (docs/api.md, "Decisions on edge
values"): the server either accepts them or refuses them with a stable code that the document
must then describe. Each test says what the request gets.

schemathesis found these: `page=0`, empty `inspectionType=`/`type=` filters, a whole number
written as a float (`"expiresInSeconds": 75643.0`) and `{"source": ""}`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest


def created_inspection(client: httpx.Client, headers: dict[str, str]) -> str:
    response = client.post(
        "/v1/inspection/car",
        json={
            "templateId": "easy",
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
        },
        headers=headers,
    )
    assert response.status_code == 201, response.text
    return str(response.json()["inspectionId"])


def code_of(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


@pytest.mark.parametrize(("name", "code"), [("page", "invalid_page"), ("limit", "invalid_limit")])
def test_page_and_limit_start_at_one(
    client: httpx.Client, test_headers: dict[str, str], name: str, code: str
) -> None:
    """Pages are numbered from 1: `page=0` (and `limit=0`) is 400, not a silent first page."""
    response = client.get("/v1/inspection", params={name: "0"}, headers=test_headers)
    assert code_of(response) == (400, code)


@pytest.mark.parametrize("query", ["inspectionType=", "type=", "inspectionType=&type="])
def test_an_empty_template_filter_means_no_filter(
    client: httpx.Client, test_headers: dict[str, str], query: str
) -> None:
    """As on `GET /v1/inspection` (where `plate=` or `page=` is as if absent), an empty filter
    value on the template list is no filter (200, every template), not 400 `invalid_filter`."""
    everything = client.get("/v1/inspection/template", headers=test_headers)
    response = client.get(f"/v1/inspection/template?{query}", headers=test_headers)
    assert response.status_code == 200, response.text
    assert response.json() == everything.json()


def test_a_bad_template_filter_is_still_refused(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    for query in ("inspectionType=spaceship", "type=borrowed"):
        response = client.get(f"/v1/inspection/template?{query}", headers=test_headers)
        assert code_of(response) == (400, "invalid_filter"), query


def _presign(client: httpx.Client, headers: dict[str, str], body: Any) -> httpx.Response:
    inspection_id = created_inspection(client, headers)
    return client.post(f"/v1/inspection/presign/detail/{inspection_id}", json=body, headers=headers)


@pytest.mark.parametrize("value", [75643.0, 1e3, 120.0])
def test_expires_in_seconds_may_be_a_whole_number_written_as_a_float(
    client: httpx.Client, test_headers: dict[str, str], value: float
) -> None:
    """JSON has one number type, and JSON Schema's `integer` is any number with no fractional
    part: `75643.0` is the whole number 75643 (200), as `75643` is."""
    before = datetime.now().astimezone()
    response = _presign(client, test_headers, {"expiresInSeconds": value})
    assert response.status_code == 200, response.text
    expires_at = datetime.fromisoformat(response.json()["expiresAt"].replace("Z", "+00:00"))
    expected = before + timedelta(seconds=value)
    assert abs((expires_at - expected).total_seconds()) < 5


@pytest.mark.parametrize("value", [75643.5, 0.0, 1e30, True, "60", -5.0])
def test_expires_in_seconds_that_are_not_whole_numbers_in_range_are_refused(
    client: httpx.Client, test_headers: dict[str, str], value: Any
) -> None:
    response = _presign(client, test_headers, {"expiresInSeconds": value})
    assert code_of(response) == (400, "invalid_expires_in")


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b'{"source": ""}', "application/json"),
        (b'{"source": "  \\n\\t "}', "application/json"),
        (b"  \n ", "text/plain"),
    ],
    ids=["empty-json-source", "blank-json-source", "blank-text-body"],
)
def test_an_empty_template_source_is_400_invalid_body(
    client: httpx.Client, test_headers: dict[str, str], content: bytes, content_type: str
) -> None:
    """Nothing to compile is a missing body, not a template with errors: 400 `invalid_body`
    naming `source`, the same however the empty source is sent (before, `{"source": ""}` was
    422 `invalid_template` while an empty text body was 400)."""
    response = client.post(
        "/v1/inspection/template",
        content=content,
        headers={**test_headers, "content-type": content_type},
    )
    assert code_of(response) == (400, "invalid_body"), response.text
    assert response.json()["errors"][0]["field"] == "source"


def test_empty_values_on_the_inspection_list_are_as_if_absent(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    created_inspection(client, test_headers)
    everything = client.get("/v1/inspection", headers=test_headers)
    query = "page=&limit=&status=&veredict=&type=&plate=&consumerIdentification=&templateId="
    response = client.get(f"/v1/inspection?{query}", headers=test_headers)
    assert response.status_code == 200, response.text
    assert response.json()["totalInspections"] == everything.json()["totalInspections"] >= 1
    assert response.json()["limit"] == 10
