"""Issue 23 §2 through the API: `duplicate` finds a photo already used in another inspection
of the company (resized and recompressed) and names that inspection; another company's
inspections, and the test/live split, are never searched; `edited` names an editor."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.evidence_photos import camera_jpeg, scene

TEMPLATE = """
template "Fraud signals"
    type: custom
    locales: en_US

image front
    validate duplicate
    validate edited

image back
    validate duplicate

verdict
    approve when true
"""


def make_template(live_server: str, key: str) -> str:
    made = httpx.post(
        f"{live_server}/v1/inspection/template",
        json={"source": TEMPLATE},
        headers={"x-api-key": key},
    )
    assert made.status_code == 201, made.text
    return str(made.json()["_id"])


@pytest.fixture
def template_id(live_server: str, company: dict[str, Any]) -> str:
    return make_template(live_server, company["testKey"])


def new_inspection(live_server: str, key: str, template_id: str) -> dict[str, Any]:
    body = {
        "templateId": template_id,
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
    }
    response = httpx.post(
        f"{live_server}/v1/inspection/custom", json=body, headers={"x-api-key": key}
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def send(live_server: str, key: str, product_id: str, side: str, data: bytes) -> dict[str, str]:
    response = httpx.post(
        f"{live_server}/v1/inspection/image/{product_id}",
        files={"image": ("p.jpg", data, "image/jpeg"), "data": (None, json.dumps({"side": side}))},
        headers={"x-api-key": key},
        timeout=60,
    )
    assert response.status_code == 201, response.text
    return {v["validation"]: v for v in response.json()["validations"]}  # type: ignore[misc]


def test_a_photo_used_in_another_inspection_is_a_duplicate_naming_it(
    live_server: str, company: dict[str, Any], other_company: dict[str, Any], template_id: str
) -> None:
    key = company["testKey"]
    photo = scene(seed=11)
    first = new_inspection(live_server, key, template_id)
    checks = send(live_server, key, first["productId"], "front", camera_jpeg(photo))
    assert (checks["duplicate"]["valid"], checks["duplicate"]["result"]) == (True, None)
    assert checks["edited"]["valid"] is True

    # The same photo, resized and recompressed, a week later in another inspection.
    second = new_inspection(live_server, key, template_id)
    copy = camera_jpeg(photo.resize((1000, 750)), quality=60)
    checks = send(live_server, key, second["productId"], "front", copy)
    assert checks["duplicate"]["valid"] is False
    assert checks["duplicate"]["result"] == first["inspectionId"]
    # Another photo is new.
    checks = send(live_server, key, second["productId"], "back", camera_jpeg(scene(seed=12)))
    assert (checks["duplicate"]["valid"], checks["duplicate"]["result"]) == (True, None)

    # Live data and another company's inspections are never searched.
    live = new_inspection(live_server, company["liveKey"], template_id)
    checks = send(live_server, company["liveKey"], live["productId"], "front", copy)
    assert checks["duplicate"]["valid"] is True
    other_key = other_company["testKey"]
    elsewhere = new_inspection(live_server, other_key, make_template(live_server, other_key))
    checks = send(live_server, other_key, elsewhere["productId"], "front", copy)
    assert checks["duplicate"]["valid"] is True


def test_an_edited_photo_says_which_editor(
    live_server: str, company: dict[str, Any], template_id: str
) -> None:
    key = company["testKey"]
    inspection = new_inspection(live_server, key, template_id)
    photo = camera_jpeg(scene(seed=21), software="Adobe Photoshop 25.0 (Macintosh)")
    checks = send(live_server, key, inspection["productId"], "front", photo)
    assert checks["edited"]["valid"] is False
    assert checks["edited"]["result"] == "software: Adobe Photoshop 25.0 (Macintosh)"
