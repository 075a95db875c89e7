"""`Allow` says every method a path takes: on OPTIONS (204) and on 405 (RFC 9110 requires it).

schemathesis found Litestar's answers wrong where two routes share a path shape: OPTIONS of
`/v1/inspection/car` said `GET, OPTIONS` (POST missing: creation lives on
`/v1/inspection/{inspection_type}`), `/v1/inspection/{id}` and `/template/{id}` lacked PUT,
presign and `report/request` lacked GET; and TRACE or DELETE got 405 with no `Allow` at all.
"""

from __future__ import annotations

import httpx
import pytest

ID = "0123456789abcdef01234567"

#: Path -> the methods it takes (OPTIONS included), as the OpenAPI document lists them.
EXPECTED = {
    "/v1/inspection": "GET, OPTIONS",
    "/v1/inspection/car": "GET, OPTIONS, POST, PUT",  # create, and read/update by id
    f"/v1/inspection/{ID}": "GET, OPTIONS, POST, PUT",
    "/v1/inspection/template": "GET, OPTIONS, POST",
    f"/v1/inspection/template/{ID}": "GET, OPTIONS, PUT",
    f"/v1/inspection/presign/detail/{ID}": "GET, OPTIONS, POST",
    f"/v1/inspection/{ID}/report/request": "GET, OPTIONS, POST",
    f"/v1/inspection/finish/{ID}": "OPTIONS, POST",
    "/health": "GET, OPTIONS",
}


@pytest.mark.parametrize(("path", "allow"), EXPECTED.items())
def test_options_names_every_method_of_the_path(
    client: httpx.Client, path: str, allow: str
) -> None:
    response = client.options(path)
    assert response.status_code == 204
    assert response.headers["allow"] == allow


@pytest.mark.parametrize("method", ["TRACE", "DELETE", "PATCH"])
@pytest.mark.parametrize(("path", "allow"), EXPECTED.items())
def test_405_carries_allow(
    client: httpx.Client, test_headers: dict[str, str], method: str, path: str, allow: str
) -> None:
    response = client.request(method, path, headers=test_headers)
    assert (response.status_code, response.json()["code"]) == (405, "method_not_allowed")
    assert response.headers["allow"] == allow
