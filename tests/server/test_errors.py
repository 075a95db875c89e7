"""Every error is JSON `{"code", "status", "description", "errors"?}`, whatever goes wrong."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from runtime import InspectionError
from server.errors import STATUS_BY_CODE, ApiError, from_inspection_error
from server.settings import Settings


def error_body(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    assert body["status"] == status
    assert isinstance(body["description"], str) and body["description"]
    assert set(body) <= {"code", "status", "description", "detail", "errors"}
    assert body["detail"] == body["description"]  # the client libraries read `detail`
    return body


def test_unknown_route_is_404_not_found(
    probe_client: httpx.Client, test_headers: dict[str, str]
) -> None:
    error_body(probe_client.get("/v1/nothing/here", headers=test_headers), 404, "not_found")
    error_body(probe_client.post("/nope", content=b"{}"), 404, "not_found")


def test_wrong_method_is_405_method_not_allowed(
    probe_client: httpx.Client, test_headers: dict[str, str]
) -> None:
    response = probe_client.delete("/test/echo", headers=test_headers)
    error_body(response, 405, "method_not_allowed")


@pytest.mark.parametrize("payload", [b"{", b"{'name': 'x'}", b"[1, 2", b"\xff\xfe", b"nul"])
def test_malformed_json_is_400_malformed_json(
    probe_client: httpx.Client, test_headers: dict[str, str], payload: bytes
) -> None:
    headers = {**test_headers, "content-type": "application/json"}
    response = probe_client.post("/test/echo", content=payload, headers=headers)
    error_body(response, 400, "malformed_json")


def test_invalid_body_is_400_with_errors_naming_fields(
    probe_client: httpx.Client, test_headers: dict[str, str]
) -> None:
    response = probe_client.post("/test/echo", json={"count": "many"}, headers=test_headers)
    body = error_body(response, 400, "invalid_body")
    assert isinstance(body["errors"], list) and body["errors"]
    messages = " ".join(str(error) for error in body["errors"])
    assert "name" in messages and "count" in messages
    assert all("message" in error for error in body["errors"])


def test_valid_body_passes(probe_client: httpx.Client, test_headers: dict[str, str]) -> None:
    response = probe_client.post("/test/echo", json={"name": "a", "count": 2}, headers=test_headers)
    assert response.status_code == 201
    assert response.json() == {"name": "a", "count": 2}


def test_unhandled_exception_is_500_without_leaking_details(
    probe_client: httpx.Client, test_headers: dict[str, str]
) -> None:
    response = probe_client.post("/test/boom", headers=test_headers)
    body = error_body(response, 500, "internal_error")
    assert "secret internal detail" not in response.text
    assert "Traceback" not in response.text
    assert "RuntimeError" not in response.text
    assert body == {
        "code": "internal_error",
        "status": 500,
        "description": "The server failed to handle the request.",
        "detail": "The server failed to handle the request.",
    }


def test_unauthorized_has_the_error_shape(probe_client: httpx.Client) -> None:
    error_body(probe_client.post("/test/echo", json={"name": "a", "count": 1}), 401, "unauthorized")


@pytest.fixture(scope="module")
def small_body_server(settings: Settings, probe_with: Any) -> Iterator[str]:
    """The probe app with a 1 KiB body limit."""
    with probe_with(settings.model_copy(update={"max_body_bytes": 1024})) as small:
        yield small.base_url


def test_body_over_the_limit_is_413_body_too_large(
    small_body_server: str, test_headers: dict[str, str]
) -> None:
    big = {"name": "x" * 5000, "count": 1}
    with httpx.Client(base_url=small_body_server, timeout=30) as http:
        error_body(http.post("/test/echo", json=big, headers=test_headers), 413, "body_too_large")
        # The same limit holds when the client streams the body without a content-length.
        chunks = iter([b'{"name": "', b"y" * 3000, b'", "count": 1}'])
        streamed = http.post("/test/echo", content=chunks, headers=test_headers)
        error_body(streamed, 413, "body_too_large")
        # With an Idempotency-Key, the idempotency layer reads the body: same limit, same answer.
        keyed = {**test_headers, "Idempotency-Key": "big-body"}
        error_body(http.post("/test/echo", json=big, headers=keyed), 413, "body_too_large")
        small = http.post("/test/echo", json={"name": "ok", "count": 1}, headers=test_headers)
        assert small.status_code == 201


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("wrong_template_provided", 400),
        ("input_value_not_provided", 400),
        ("inspection_not_editable", 409),
        ("product_not_found", 404),
        ("some_future_code", 400),
    ],
)
def test_runtime_errors_map_to_statuses(code: str, status: int) -> None:
    error = from_inspection_error(InspectionError(code, "why", [{"field": "input_1"}]))
    assert (error.code, error.status, error.description) == (code, status, "why")
    assert error.to_dict() == {
        "code": code,
        "status": status,
        "description": "why",
        "detail": "why",
        "errors": [{"field": "input_1"}],
    }


def test_runtime_error_without_details_has_no_errors_field() -> None:
    error = from_inspection_error(InspectionError("invalid_locale", "bad locale", []))
    assert "errors" not in error.to_dict()
    assert error.status == STATUS_BY_CODE["invalid_locale"]


def test_api_error_of_takes_status_from_the_table() -> None:
    assert ApiError.of("inspection_not_found").status == 404
    assert ApiError.of("idempotency_key_reused").status == 422
    assert ApiError.of("unheard_of").status == 400
