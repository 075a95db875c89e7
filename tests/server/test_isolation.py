"""Tenant isolation and key-mode separation: company B never sees or touches company A's
templates, inspections, products, images or links (always 404, never 403 or 200), and data
made with the test key is invisible to the live key and the other way round."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.server.test_images import PHOTO

SOURCE = """\
template "Private template"
    type: car

image front
    label: "Front"

verdict
    approve when true
"""


def creation(template_id: str = "easy") -> dict[str, Any]:
    return {
        "templateId": template_id,
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
    }


@pytest.fixture
def owned(client: httpx.Client, company: dict[str, Any]) -> dict[str, Any]:
    """Company A's test-key template, inspection, product and image."""
    headers = {"x-api-key": company["testKey"]}
    template = client.post(
        "/v1/inspection/template",
        content=SOURCE.encode(),
        headers={**headers, "content-type": "text/plain"},
    ).json()
    created = client.post(
        "/v1/inspection/car", json=creation(template["_id"]), headers=headers
    ).json()
    image = client.post(
        f"/v1/inspection/image/{created['productId']}",
        files={
            "image": ("front.png", PHOTO, "image/png"),
            "data": (None, json.dumps({"side": "front"})),
        },
        headers=headers,
    )
    assert image.status_code == 201, image.text
    return {
        "templateId": template["_id"],
        "inspectionId": created["inspectionId"],
        "productId": created["productId"],
        "imageId": image.json()["_id"],
    }


def requests_on(owned: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    inspection_id, product_id = owned["inspectionId"], owned["productId"]
    validation = {"validation": "plate", "confidence": 90}
    # A complete damage (bodies are decoded before the inspection is looked up: an incomplete
    # one is 400 for every caller alike, which tells nothing about another company's data).
    damage = {"part": "x", "damage": "y", "severity": "minor"}
    return [
        ("GET", f"/v1/inspection/{inspection_id}", {}),
        ("PUT", f"/v1/inspection/{inspection_id}", {"json": {"metadata": {"x": "y"}}}),
        ("PUT", f"/v1/inspection/car/{product_id}", {"json": {"car": {"color": "red"}}}),
        ("POST", f"/v1/inspection/{inspection_id}/start", {}),
        ("POST", f"/v1/inspection/finish/{inspection_id}", {}),
        ("POST", f"/v1/inspection/{inspection_id}/damage", {"json": damage}),
        (
            "POST",
            f"/v1/inspection/{inspection_id}/image/{owned['imageId']}/validation",
            {"json": validation},
        ),
        ("POST", f"/v1/inspection/image/token/{product_id}", {}),
        (
            "POST",
            f"/v1/inspection/image/{product_id}",
            {
                "files": {
                    "image": ("x.png", PHOTO, "image/png"),
                    "data": (None, '{"side": "front"}'),
                }
            },
        ),
        ("GET", f"/v1/inspection/image/{owned['imageId']}/content", {}),
        ("POST", f"/v1/inspection/presign/detail/{inspection_id}", {}),
        ("GET", f"/v1/inspection/template/{owned['templateId']}", {}),
        ("GET", f"/v1/inspection/template/{owned['templateId']}/source", {}),
        ("PUT", f"/v1/inspection/template/{owned['templateId']}", {"json": {"source": SOURCE}}),
    ]


NOT_FOUND_CODES = {
    "inspection_not_found",
    "product_not_found",
    "image_not_found",
    "not_found_template",
}


def _assert_all_not_found(client: httpx.Client, owned: dict[str, Any], key: str) -> None:
    for method, path, kwargs in requests_on(owned):
        response = client.request(method, path, headers={"x-api-key": key}, **kwargs)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["code"] in NOT_FOUND_CODES, (method, path)


def test_other_company_gets_404_everywhere(
    client: httpx.Client,
    company: dict[str, Any],
    other_company: dict[str, Any],
    owned: dict[str, Any],
) -> None:
    _assert_all_not_found(client, owned, other_company["testKey"])
    _assert_all_not_found(client, owned, other_company["liveKey"])
    headers = {"x-api-key": company["testKey"]}
    # Nothing was changed by the refused requests.
    inspection = client.get(f"/v1/inspection/{owned['inspectionId']}", headers=headers).json()
    assert inspection["status"] == "created"
    assert inspection["metadata"] == {}
    assert len(inspection["products"][0]["images"]) == 1


def test_live_key_does_not_see_test_data(
    client: httpx.Client, company: dict[str, Any], owned: dict[str, Any]
) -> None:
    live = {"x-api-key": company["liveKey"]}
    for method, path, kwargs in requests_on(owned):
        if "/template/" in path:
            continue  # templates belong to the company, whichever key made them
        response = client.request(method, path, headers=live, **kwargs)
        assert response.status_code == 404, (method, path, response.text)
    listed = client.get("/v1/inspection", headers=live).json()
    assert listed["totalInspections"] == 0
    test_list = client.get("/v1/inspection", headers={"x-api-key": company["testKey"]}).json()
    assert [i["_id"] for i in test_list["inspections"]] == [owned["inspectionId"]]


def test_templates_are_per_company(
    client: httpx.Client,
    company: dict[str, Any],
    other_company: dict[str, Any],
    owned: dict[str, Any],
) -> None:
    other = {"x-api-key": other_company["testKey"]}
    created = client.get("/v1/inspection/template", params={"type": "created"}, headers=other)
    assert created.json() == []
    refused = client.post("/v1/inspection/car", json=creation(owned["templateId"]), headers=other)
    assert (refused.status_code, refused.json()["code"]) == (404, "not_found_template")
    live = {"x-api-key": company["liveKey"]}
    mine = client.get("/v1/inspection/template", params={"type": "created"}, headers=live)
    assert [t["_id"] for t in mine.json()] == [owned["templateId"]]


def test_other_company_list_is_empty(
    client: httpx.Client, other_company: dict[str, Any], owned: dict[str, Any]
) -> None:
    for key in (other_company["testKey"], other_company["liveKey"]):
        body = client.get("/v1/inspection", headers={"x-api-key": key}).json()
        assert body["totalInspections"] == 0
        assert body["inspections"] == []


def test_no_key_and_wrong_key(client: httpx.Client, owned: dict[str, Any]) -> None:
    for headers in ({}, {"x-api-key": "sk_test_0000000000000000_nope"}, {"x-api-key": "junk"}):
        response = client.get(f"/v1/inspection/{owned['inspectionId']}", headers=headers)
        assert response.status_code == 401
        assert response.json()["code"] == "unauthorized"
