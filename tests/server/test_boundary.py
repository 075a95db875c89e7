"""Texts that cannot be stored are refused at the door, and malformed tokens are refused as
tokens: each case says what it gets. Before `server.boundary`, a lone surrogate was stored with
201 and every later read of the record was a 500; a NUL was a 500 on PostgreSQL; a non-ASCII
token was a 500 (`UnicodeEncodeError` while signing it for comparison)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.server.test_images import PHOTO, upload

SURROGATE = "\ud800"
NUL = "\x00"


def post_json(
    client: httpx.Client, path: str, body: Any, headers: dict[str, Any]
) -> httpx.Response:
    """Send `body` as ASCII JSON, so a lone surrogate travels as the escape `\\ud800`."""
    return client.post(
        path,
        content=json.dumps(body).encode("ascii"),
        headers={**headers, "content-type": "application/json"},
    )


def car(**extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "car": {"plate": "AB123CD"},
    }
    body.update(extra)
    return body


def refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["code"] == "invalid_body"
    assert error["errors"][0]["field"] == field, error


@pytest.mark.parametrize("bad", [SURROGATE, NUL], ids=["surrogate", "nul"])
@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"metadata": {"k": "v{bad}"}}, "metadata.k"),
        ({"consumer": {"firstName": "A{bad}"}}, "consumer.firstName"),
        ({"consumer": {"identification": "12{bad}"}}, "consumer.identification"),
        ({"car": {"plate": "AB{bad}1"}}, "car.plate"),
        ({"metadata": {"k{bad}": "v"}}, "A key in metadata"),
    ],
)
def test_creation_refuses_bad_text(
    client: httpx.Client,
    test_headers: dict[str, str],
    extra: dict[str, Any],
    field: str,
    bad: str,
) -> None:
    filled = json.loads(json.dumps(extra).replace("{bad}", json.dumps(bad)[1:-1]))
    refused(post_json(client, "/v1/inspection/car", car(**filled), test_headers), field)
    listed = client.get("/v1/inspection", headers=test_headers)
    assert listed.status_code == 200  # nothing half-written poisons the list


def test_consumer_put_refuses_a_surrogate_and_the_inspection_stays_readable(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    created = post_json(client, "/v1/inspection/car", car(), test_headers)
    assert created.status_code == 201, created.text
    inspection_id = created.json()["inspectionId"]
    response = client.put(
        f"/v1/inspection/{inspection_id}",
        content=json.dumps({"consumer": {"firstName": SURROGATE}}).encode("ascii"),
        headers={**test_headers, "content-type": "application/json"},
    )
    refused(response, "consumer.firstName")
    assert client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).status_code == 200


def test_image_side_with_a_surrogate_through_an_upload_token(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    created = post_json(client, "/v1/inspection/car", car(), test_headers).json()
    issued = client.post(
        f"/v1/inspection/image/token/{created['productId']}", headers=test_headers
    ).json()
    token_headers = {"x-image-token": issued["token"]}
    response = upload(
        client, token_headers, created["productId"], json.dumps({"side": "front" + SURROGATE})
    )
    refused(response, "side")
    read = client.get(f"/v1/inspection/{created['inspectionId']}", headers=test_headers)
    assert read.status_code == 200


def test_multipart_file_name_with_nul(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = post_json(client, "/v1/inspection/car", car(), test_headers).json()
    # Written by hand: httpx would percent-escape the NUL in the file name.
    boundary = b"b0undary"
    body = b"".join(
        [
            b"--b0undary\r\n",
            b'Content-Disposition: form-data; name="image"; filename="a\x00.png"\r\n',
            b"Content-Type: image/png\r\n\r\n",
            PHOTO,
            b"\r\n--b0undary\r\n",
            b'Content-Disposition: form-data; name="data"\r\n\r\n{"side": "front"}\r\n',
            b"--b0undary--\r\n",
        ]
    )
    response = client.post(
        f"/v1/inspection/image/{created['productId']}",
        content=body,
        headers={
            **test_headers,
            "content-type": f"multipart/form-data; boundary={boundary.decode()}",
        },
    )
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "invalid_body"


def test_template_name_with_nul(client: httpx.Client, test_headers: dict[str, str]) -> None:
    source = 'template "Bad\x00name"\n    type: car\n\nverdict\n    approve when true\n'
    response = client.post(
        "/v1/inspection/template",
        content=source.encode(),
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "invalid_body"


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("plate=%00", "The query parameter 'plate'"),
        ("consumerIdentification=a%00b", "The query parameter 'consumerIdentification'"),
        ("plate=%ED%A0%80", "The query parameter 'plate'"),  # a surrogate, UTF-8 encoded
        ("plate=%FF", "The query parameter 'plate'"),  # not UTF-8 at all
    ],
)
def test_list_filters_with_bad_text_are_refused_before_authentication(
    client: httpx.Client, test_headers: dict[str, str], query: str, field: str
) -> None:
    refused(client.get(f"/v1/inspection?{query}", headers=test_headers), field)
    refused(client.get(f"/v1/inspection?{query}"), field)  # no key needed to be told


def test_nul_in_a_path_parameter(client: httpx.Client, test_headers: dict[str, str]) -> None:
    refused(client.get("/v1/inspection/abc%00def", headers=test_headers), "The path")


@pytest.mark.parametrize("value", ["\uff11", "\u0663", "1.0", "-1", "0"])  # fullwidth, Arabic-Indic
@pytest.mark.parametrize(("name", "code"), [("page", "invalid_page"), ("limit", "invalid_limit")])
def test_query_numbers_are_ascii_digits(
    client: httpx.Client, test_headers: dict[str, str], name: str, code: str, value: str
) -> None:
    response = client.get("/v1/inspection", params={name: value}, headers=test_headers)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == code


def test_non_ascii_tokens_are_malformed_tokens(
    client: httpx.Client, live_server: str, test_headers: dict[str, str]
) -> None:
    created = post_json(client, "/v1/inspection/car", car(), test_headers).json()
    inspection_id = created["inspectionId"]
    presigned = httpx.get(
        f"{live_server}/v1/inspection/presign/detail/{inspection_id}?token=%C3%A9.x"
    )
    assert (presigned.status_code, presigned.json()["code"]) == (403, "invalid_link")
    uploaded = upload(client, test_headers, created["productId"], {"side": "front"}).json()
    content = httpx.get(
        f"{live_server}/v1/inspection/image/{uploaded['_id']}/content?token=%C3%A9.x"
    )
    assert (content.status_code, content.json()["code"]) == (403, "invalid_link")
    header = client.post(
        f"/v1/inspection/image/{created['productId']}",
        files={"image": ("p.png", PHOTO, "image/png"), "data": (None, '{"side": "front"}')},
        headers={"x-image-token": "é.x".encode()},
    )
    assert (header.status_code, header.json()["code"]) == (401, "invalid_token")


@pytest.mark.parametrize(
    "key",
    ["é".encode(), b"sk_test_\xc3\xa9.x", b"sk_test_" + "é".encode() * 40, b"\xff\xfe"],
    ids=["non-ascii", "prefixed-non-ascii", "long-non-ascii", "not-utf8"],
)
def test_malformed_api_keys_are_401_unauthorized(client: httpx.Client, key: bytes) -> None:
    response = client.get("/v1/inspection", headers={"x-api-key": key})
    assert (response.status_code, response.json()["code"]) == (401, "unauthorized")


def test_a_non_ascii_idempotency_key_is_not_a_500(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """Header bytes arrive as Latin-1 text, so they are storable: the key simply works."""
    headers = {**test_headers, "idempotency-key": "clé-1".encode()}
    first = post_json(client, "/v1/inspection/car", car(), headers)
    again = post_json(client, "/v1/inspection/car", car(), headers)
    assert first.status_code == again.status_code == 201, first.text
    assert first.json()["inspectionId"] == again.json()["inspectionId"]
