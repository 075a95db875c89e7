"""The API docs pages work offline: every script and style they load is served by this app.

Before, `/schema`, `/schema/swagger` and `/schema/redoc` loaded their JavaScript from a CDN and
rendered blank without internet access."""

from __future__ import annotations

import re

import httpx
import pytest

ASSET = re.compile(r"""(?:src|href)=["']([^"']+)["']""")

CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css"}


@pytest.mark.parametrize("page", ["/schema", "/schema/swagger", "/schema/redoc"])
def test_docs_pages_load_only_assets_this_app_serves(client: httpx.Client, page: str) -> None:
    response = client.get(page)
    assert response.status_code == 200, response.text
    html = response.text
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", html), html
    assert "fonts.googleapis" not in html
    assets = [url for url in ASSET.findall(html) if url.endswith((".js", ".css"))]
    assert assets, html
    for url in assets:
        assert url.startswith("/schema/assets/"), url
        served = client.get(url)  # no API key: the docs are public
        assert served.status_code == 200, url
        expected = CONTENT_TYPES[url[url.rindex(".") :]]
        assert served.headers["content-type"].startswith(expected), served.headers
        assert len(served.content) > 10_000, url


def test_the_openapi_document_is_still_served(client: httpx.Client) -> None:
    document = client.get("/schema/openapi.json").json()
    assert document["openapi"].startswith("3.1")


def test_every_operation_has_its_own_name(client: httpx.Client) -> None:
    """Handlers run in a thread were named after Litestar's wrapper: "Asynccallable"."""
    operations = [
        op for ops in client.get("/schema/openapi.json").json()["paths"].values()
        for op in ops.values()
    ]  # fmt: skip
    ids = [op["operationId"] for op in operations]
    assert len(ids) == len(set(ids))
    names = [(op["operationId"] + " " + op["summary"]).lower() for op in operations]
    assert not [name for name in names if "callable" in name]
