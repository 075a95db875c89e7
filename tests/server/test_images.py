"""Image endpoints over real HTTP: multipart uploads with the API key or an upload token,
signed `src` links, validation results from an analysis service, and every refusal."""

from __future__ import annotations

import io
import json
from typing import Any

import httpx
import pytest
from PIL import Image


def png(width: int = 4, height: int = 3) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


PHOTO = png()


def creation() -> dict[str, Any]:
    return {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "car": {"plate": "AB123CD"},
    }


@pytest.fixture
def inspection(client: httpx.Client, test_headers: dict[str, str]) -> dict[str, Any]:
    response = client.post("/v1/inspection/car", json=creation(), headers=test_headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def upload(
    client: httpx.Client,
    headers: dict[str, str],
    product_id: str,
    data: Any = None,
    image: bytes | None = PHOTO,
) -> httpx.Response:
    files: dict[str, Any] = {}
    if image is not None:
        files["image"] = ("photo.png", image, "image/png")
    if data is not None:
        files["data"] = (None, data if isinstance(data, str) else json.dumps(data))
    return client.post(f"/v1/inspection/image/{product_id}", files=files, headers=headers)


def error_of(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


def test_upload_and_read_back(
    client: httpx.Client,
    live_server: str,
    test_headers: dict[str, str],
    inspection: dict[str, Any],
) -> None:
    response = upload(client, test_headers, inspection["productId"], {"side": "front"})
    assert response.status_code == 201, response.text
    image = response.json()
    assert image["side"] == "front"
    assert image["templateImageIdentifier"].startswith("image_")
    assert image["target"] == "product"
    prefix = f"{live_server}/v1/inspection/image/{image['_id']}/content?token="
    assert image["src"].startswith(prefix)

    by_link = httpx.get(image["src"])
    assert by_link.status_code == 200
    assert by_link.content == PHOTO
    assert by_link.headers["content-type"] == "image/png"
    by_key = client.get(f"/v1/inspection/image/{image['_id']}/content", headers=test_headers)
    assert by_key.content == PHOTO

    document = client.get(f"/v1/inspection/{inspection['inspectionId']}", headers=test_headers)
    images = document.json()["products"][0]["images"]
    assert [i["_id"] for i in images] == [image["_id"]]
    assert images[0]["src"].startswith(prefix)


def test_content_refusals(
    client: httpx.Client, test_headers: dict[str, str], inspection: dict[str, Any]
) -> None:
    image = upload(client, test_headers, inspection["productId"], {"side": "back"}).json()
    url = f"/v1/inspection/image/{image['_id']}/content"
    assert error_of(client.get(url)) == (401, "unauthorized")
    token = image["src"].split("token=")[1]
    forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    assert error_of(client.get(url, params={"token": forged})) == (403, "invalid_link")
    other = upload(client, test_headers, inspection["productId"], {"side": "left"}).json()
    other_url = f"/v1/inspection/image/{other['_id']}/content"
    assert error_of(client.get(other_url, params={"token": token})) == (403, "invalid_link")
    missing = client.get("/v1/inspection/image/" + "0" * 24 + "/content", headers=test_headers)
    assert error_of(missing) == (404, "image_not_found")


def test_extra_image_outside_the_template(
    client: httpx.Client, test_headers: dict[str, str], inspection: dict[str, Any]
) -> None:
    data = {
        "side": "dashboard",
        "date": "2026-01-01T10:00:00Z",
        "coordinates": {"latitude": -34.6, "longitude": -58.4},
    }
    response = upload(client, test_headers, inspection["productId"], data)
    assert response.status_code == 201, response.text
    document = client.get(
        f"/v1/inspection/{inspection['inspectionId']}", headers=test_headers
    ).json()
    extra = document["products"][0]["extraImages"]
    assert [(e["_id"], e["side"]) for e in extra] == [(response.json()["_id"], "dashboard")]


@pytest.mark.parametrize(
    ("data", "image", "expected"),
    [
        ({"side": "front"}, None, (400, "invalid_body")),
        ({"side": "front"}, b"", (400, "invalid_body")),
        (None, PHOTO, (400, "invalid_body")),
        ("{not json", PHOTO, (400, "malformed_json")),
        ("[1, 2]", PHOTO, (400, "invalid_body")),
        ({}, PHOTO, (400, "invalid_body")),
        ({"side": 5}, PHOTO, (400, "invalid_body")),
        (
            {"side": "front", "coordinates": {"latitude": 91, "longitude": 0}},
            PHOTO,
            (400, "invalid_body"),
        ),
        (
            {"side": "front", "coordinates": {"latitude": "x", "longitude": 0}},
            PHOTO,
            (400, "invalid_body"),
        ),
        ({"side": "front", "coordinates": [1, 2]}, PHOTO, (400, "invalid_body")),
        ({"side": "front", "target": "planet"}, PHOTO, (400, "invalid_body")),
        (
            {"identifier": "image_00000000-0000-0000-0000-000000000000"},
            PHOTO,
            (404, "image_not_found"),
        ),
    ],
)
def test_upload_refusals(
    client: httpx.Client,
    test_headers: dict[str, str],
    inspection: dict[str, Any],
    data: Any,
    image: bytes | None,
    expected: tuple[int, str],
) -> None:
    response = upload(client, test_headers, inspection["productId"], data, image)
    assert error_of(response) == expected


def test_upload_needs_multipart_and_a_known_product(
    client: httpx.Client, test_headers: dict[str, str], inspection: dict[str, Any]
) -> None:
    as_json = client.post(
        f"/v1/inspection/image/{inspection['productId']}",
        json={"side": "front"},
        headers=test_headers,
    )
    assert error_of(as_json) == (400, "invalid_body")
    unknown = upload(client, test_headers, "0" * 24, {"side": "front"})
    assert error_of(unknown) == (404, "product_not_found")
    stray_field = client.post(
        f"/v1/inspection/image/{inspection['productId']}",
        files={"image": ("p.png", PHOTO, "image/png"), "side": (None, "front")},
        headers=test_headers,
    )
    assert error_of(stray_field) == (400, "invalid_multipart")
    broken = client.post(
        f"/v1/inspection/image/{inspection['productId']}",
        content=b'--xyz\r\nContent-Disposition: form-data; name="image"\r\n\r\nabc',
        headers={**test_headers, "content-type": "multipart/form-data; boundary=xyz"},
    )
    assert error_of(broken) == (400, "invalid_multipart")


def test_max_attempts_and_finished_inspections(
    client: httpx.Client, test_headers: dict[str, str], inspection: dict[str, Any]
) -> None:
    for _ in range(3):  # the built-in's max attempts
        assert (
            upload(client, test_headers, inspection["productId"], {"side": "right"}).status_code
            == 201
        )
    # Three photos without a capture date all fail `date`: with its attempts used up the
    # inspection is blocked (before issue 22 the built-in's `recaptured`, which nothing here
    # runs, kept every photo unprocessed and the inspection in `processing` instead).
    fourth = upload(client, test_headers, inspection["productId"], {"side": "right"})
    assert error_of(fourth) == (409, "inspection_not_editable")
    document = client.get(
        f"/v1/inspection/{inspection['inspectionId']}", headers=test_headers
    ).json()
    assert document["status"] == "blocked"
    finished = client.post(
        f"/v1/inspection/finish/{inspection['inspectionId']}", headers=test_headers
    )
    assert error_of(finished) == (409, "invalid_status_transition")


def test_upload_token(
    client: httpx.Client,
    test_headers: dict[str, str],
    inspection: dict[str, Any],
) -> None:
    response = client.post(
        f"/v1/inspection/image/token/{inspection['productId']}", headers=test_headers
    )
    assert response.status_code == 200, response.text
    issued = response.json()
    assert set(issued) == {"token", "expiresAt"}
    token_headers = {"x-image-token": issued["token"]}
    uploaded = upload(client, token_headers, inspection["productId"], {"side": "front"})
    assert uploaded.status_code == 201, uploaded.text

    other = client.post("/v1/inspection/car", json=creation(), headers=test_headers).json()
    foreign = upload(client, token_headers, other["productId"], {"side": "front"})
    assert error_of(foreign) == (403, "forbidden")
    read = client.get(f"/v1/inspection/{inspection['inspectionId']}", headers=token_headers)
    assert error_of(read) == (401, "unauthorized")
    garbage = upload(
        client, {"x-image-token": "abc.def"}, inspection["productId"], {"side": "front"}
    )
    assert error_of(garbage) == (401, "invalid_token")
    unknown = client.post("/v1/inspection/image/token/" + "0" * 24, headers=test_headers)
    assert error_of(unknown) == (404, "product_not_found")


def test_validation_results(
    client: httpx.Client, test_headers: dict[str, str], inspection: dict[str, Any]
) -> None:
    image = upload(client, test_headers, inspection["productId"], {"side": "front"}).json()
    url = f"/v1/inspection/{inspection['inspectionId']}/image/{image['_id']}/validation"
    result = {
        "validation": "plate",
        "confidence": 93,
        "result": "AB123CD",
        "damages": [{"part": "trunk", "damage": "dent", "severity": "minor", "percentage": 5}],
    }
    response = client.post(url, json=result, headers=test_headers)
    assert response.status_code == 200, response.text
    front = response.json()["products"][0]["images"][0]
    assert {
        k: v
        for k, v in next(v for v in front["validations"] if v["validation"] == "plate").items()
        if k != "_id"
    } == {
        "validation": "plate",
        "confidence": 93,
        "valid": True,
        "result": "AB123CD",
        "source": "machine",
    }
    assert front["damages"] == result["damages"]
    again = client.post(url, json=result, headers=test_headers)
    assert error_of(again) == (400, "invalid_validation_result")
    unknown = client.post(
        url, json={"validation": "face_comparison", "confidence": 50}, headers=test_headers
    )
    assert error_of(unknown) == (400, "unknown_validation")
    too_sure = client.post(
        url, json={"validation": "recaptured", "confidence": 101}, headers=test_headers
    )
    assert error_of(too_sure) == (400, "invalid_validation_result")
    bad_damages = client.post(
        url,
        json={"validation": "recaptured", "confidence": 1, "damages": "many"},
        headers=test_headers,
    )
    assert error_of(bad_damages) == (400, "invalid_validation_result")
    no_image = client.post(
        f"/v1/inspection/{inspection['inspectionId']}/image/{'0' * 24}/validation",
        json=result,
        headers=test_headers,
    )
    assert error_of(no_image) == (404, "image_not_found")


def test_upload_token_expires(
    serve_app: Any, settings: Any, db: Any, company: dict[str, Any]
) -> None:
    from datetime import UTC, datetime, timedelta

    from server.app import create_app

    moments = [datetime.now(UTC)]
    app = create_app(settings, db=db, clock=lambda: moments[0])
    headers = {"x-api-key": company["testKey"]}
    with serve_app(app) as base_url, httpx.Client(base_url=base_url, timeout=30) as http:
        created = http.post("/v1/inspection/car", json=creation(), headers=headers).json()
        issued = http.post(
            f"/v1/inspection/image/token/{created['productId']}", headers=headers
        ).json()
        token_headers = {"x-image-token": issued["token"]}
        moments[0] += timedelta(minutes=14)
        fresh = upload(http, token_headers, created["productId"], {"side": "front"})
        assert fresh.status_code == 201, fresh.text
        moments[0] += timedelta(minutes=2)
        late = upload(http, token_headers, created["productId"], {"side": "back"})
        assert error_of(late) == (401, "token_expired")


def test_listed_inspections_sign_their_image_links_like_a_get(
    client: httpx.Client,
    live_server: str,
    test_headers: dict[str, str],
    inspection: dict[str, Any],
) -> None:
    """The list decodes stored JSON text and signs only documents that link a file: a document
    with an image is signed there as in a GET, and the link works without a key."""
    image = upload(client, test_headers, inspection["productId"], {"side": "front"}).json()
    prefix = f"{live_server}/v1/inspection/image/{image['_id']}/content?token="
    listed = client.get("/v1/inspection", params={"limit": 100}, headers=test_headers).json()
    found = [d for d in listed["inspections"] if d["_id"] == inspection["inspectionId"]]
    assert len(found) == 1
    assert found[0]["testing"] is True
    src = found[0]["products"][0]["images"][0]["src"]
    assert src.startswith(prefix)
    assert httpx.get(src).content == PHOTO
