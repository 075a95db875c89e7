"""Limits at and just past each bound, over real HTTP: metadata pairs, key and value lengths,
value types; page size; Idempotency-Key length; and the idempotent retry of a creation."""

from __future__ import annotations

from typing import Any

import httpx
import pytest


def creation(metadata: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
    }
    if metadata is not None:
        body["metadata"] = metadata
    return body


def post(client: httpx.Client, headers: dict[str, str], body: Any) -> httpx.Response:
    return client.post("/v1/inspection/car", json=body, headers=headers)


def pairs(count: int) -> dict[str, str]:
    return {f"key{i}": f"value{i}" for i in range(count)}


@pytest.mark.parametrize(
    ("metadata", "accepted", "field", "error"),
    [
        (pairs(50), True, None, None),
        (pairs(51), False, "metadata", "too_many_pairs"),
        ({"k" * 50: "v"}, True, None, None),
        ({"k" * 51: "v"}, False, "metadata." + "k" * 51, "key_too_long"),
        ({"k": "v" * 500}, True, None, None),
        ({"k": "v" * 501}, False, "metadata.k", "value_too_long"),
        ({"k": 5}, False, "metadata.k", "value_not_string"),
        ({"k": None}, False, "metadata.k", "value_not_string"),
        ({"k": {"nested": "x"}}, False, "metadata.k", "value_not_string"),
        (["not", "an", "object"], False, "metadata", "not_an_object"),
        ({}, True, None, None),
    ],
)
def test_metadata_limits_on_create(
    client: httpx.Client,
    test_headers: dict[str, str],
    metadata: Any,
    accepted: bool,
    field: str | None,
    error: str | None,
) -> None:
    response = post(client, test_headers, creation(metadata))
    if accepted:
        assert response.status_code == 201, response.text
        read = client.get(
            f"/v1/inspection/{response.json()['inspectionId']}", headers=test_headers
        ).json()
        assert read["metadata"] == metadata
        return
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_metadata"
    assert body["errors"] == [
        {"field": field, "code": error, "message": body["errors"][0]["message"]}
    ]
    assert str(field)[:60] in body["description"]


def test_metadata_limits_on_update(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = post(client, test_headers, creation(pairs(49))).json()
    url = f"/v1/inspection/{created['inspectionId']}"
    over = client.put(url, json={"metadata": pairs(51)}, headers=test_headers)
    assert (over.status_code, over.json()["code"]) == (400, "invalid_metadata")
    long_value = client.put(url, json={"metadata": {"x": "v" * 501}}, headers=test_headers)
    assert (long_value.status_code, long_value.json()["code"]) == (400, "invalid_metadata")
    fits = client.put(url, json={"metadata": {"key49": "new"}}, headers=test_headers)
    assert fits.status_code == 200
    merged_over = client.put(url, json={"metadata": {"another": "one"}}, headers=test_headers)
    assert (merged_over.status_code, merged_over.json()["code"]) == (400, "invalid_metadata")
    read = client.get(url, headers=test_headers).json()
    assert len(read["metadata"]) == 50


@pytest.mark.parametrize(("limit", "status"), [(100, 200), (101, 400), (1, 200), (0, 400)])
def test_page_size_bounds(
    client: httpx.Client, test_headers: dict[str, str], limit: int, status: int
) -> None:
    response = client.get("/v1/inspection", params={"limit": limit}, headers=test_headers)
    assert response.status_code == status
    if status == 200:
        assert response.json()["limit"] == limit
    else:
        assert response.json()["code"] == "invalid_limit"


def test_idempotency_key_length(client: httpx.Client, test_headers: dict[str, str]) -> None:
    fits = post(client, {**test_headers, "Idempotency-Key": "k" * 255}, creation())
    assert fits.status_code == 201, fits.text
    too_long = post(client, {**test_headers, "Idempotency-Key": "k" * 256}, creation())
    assert too_long.status_code == 400
    assert too_long.json()["code"] == "invalid_idempotency_key"


def test_idempotent_retry_creates_one_inspection(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    headers = {**test_headers, "Idempotency-Key": "retry-me-0001"}
    before = client.get("/v1/inspection", headers=test_headers).json()["totalInspections"]
    first = post(client, headers, creation({"try": "1"}))
    second = post(client, headers, creation({"try": "1"}))
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    after = client.get("/v1/inspection", headers=test_headers).json()["totalInspections"]
    assert after == before + 1
    other_body = post(client, headers, creation({"try": "2"}))
    assert (other_body.status_code, other_body.json()["code"]) == (422, "idempotency_key_reused")
