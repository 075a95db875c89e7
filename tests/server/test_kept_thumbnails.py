"""A thumbnail is made once and kept (issue 39 §3).

The dashboard's `?size=thumb` (loaded for every photo of an inspection page), the share page's
photos and a report's pictures decoded the whole photo at every request. Now each stored
photo's thumbnail of each size is derived the first time it is asked for, kept in the blob
store beside the photo, and served from there: these tests count the decodes
(`server.thumbnails.reduced_picture`), not the time.
"""

from __future__ import annotations

import io
import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from PIL import Image
from sqlmodel import select

import server.thumbnails
from server.auth import authenticate_key, create_company
from server.blobs import LocalBlobStore
from server.dashboard import accounts
from server.db import Database
from server.inspections import shares
from server.inspections.tables import ImageRecord
from server.thumbnails import (
    THUMBNAIL_QUALITY,
    THUMBNAIL_SIZE,
    thumbnail_key,
)

PASSWORD = "thumbnail owner password"
TOKEN = re.compile(r'name="_csrf_token" value="([^"]+)"')


def photo(seed: int, size: tuple[int, int] = (1600, 1200)) -> bytes:
    """A JPEG larger than a thumbnail, different for each seed."""
    picture = Image.linear_gradient("L").resize(size).convert("RGB")
    picture.paste((seed * 40 % 256, 90, 200 - seed), (0, 0, size[0] // 2, size[1] // 3))
    out = io.BytesIO()
    picture.save(out, format="JPEG", quality=85)
    return out.getvalue()


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each thumbnail decode, by the side asked for (the live server runs in this process)."""
    made: list[int] = []
    decode = server.thumbnails.reduced_picture

    def counted(data: bytes, side: int) -> Any:
        made.append(side)
        return decode(data, side)

    monkeypatch.setattr(server.thumbnails, "reduced_picture", counted)
    return made


@pytest.fixture
def owner(db: Database, live_server: str) -> Iterator[tuple[dict[str, Any], httpx.Client]]:
    """A company, and its owner signed in to the dashboard."""
    company = create_company(db, f"Thumbnail Co {secrets.token_hex(3)}", ["member-1"])
    email = f"owner-{secrets.token_hex(3)}@thumbs.example.com"
    accounts.create_account(db, company["companyId"], email, "owner", PASSWORD)
    with httpx.Client(base_url=live_server, timeout=30) as browser:
        token = TOKEN.search(browser.get("/dashboard/sign-in").text)
        assert token is not None
        signed = browser.post(
            "/dashboard/sign-in",
            data={"email": email, "password": PASSWORD, "_csrf_token": token[1]},
            follow_redirects=False,
        )
        assert signed.status_code == 303, signed.text
        yield company, browser


def _inspection(api: httpx.Client) -> dict[str, Any]:
    created = api.post(
        "/v1/inspection/car",
        json={"templateId": "easy", "locale": "en_US", "delivery": {"disabled": True}},
    )
    assert created.status_code == 201, created.text
    return dict(created.json())


def _upload(api: httpx.Client, product_id: str, data: bytes) -> str:
    uploaded = api.post(
        f"/v1/inspection/image/{product_id}",
        files={"image": ("a.jpg", data, "image/jpeg"), "data": (None, '{"side": "front"}')},
    )
    assert uploaded.status_code == 201, uploaded.text
    return str(uploaded.json()["_id"])


def _blob_key(db: Database, image_id: str) -> str:
    with db.session() as session:
        record = session.exec(select(ImageRecord).where(ImageRecord.id == image_id)).one()
    return record.blob_key


def _thumbnail_of(response: httpx.Response) -> tuple[int, int]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/jpeg"
    with Image.open(io.BytesIO(response.content)) as image:
        return image.size


def test_the_dashboard_thumbnail_is_made_once_and_kept(
    live_server: str, db: Database, settings: Any, owner: Any, decodes: list[int]
) -> None:
    company, browser = owner
    with httpx.Client(
        base_url=live_server, timeout=30, headers={"x-api-key": company["testKey"]}
    ) as api:
        created = _inspection(api)
        first = _upload(api, created["productId"], photo(1))
        inspection = created["inspectionId"]
        url = f"/dashboard/inspections/{inspection}/photos/{first}"
        made = browser.get(url, params={"size": "thumb"})
        assert _thumbnail_of(made) == (THUMBNAIL_SIZE, 300)
        assert decodes == [THUMBNAIL_SIZE]
        again = browser.get(url, params={"size": "thumb"})
        assert again.content == made.content
        assert decodes == [THUMBNAIL_SIZE]  # served from the store: no second decode
        # Kept in the blob store beside the photo, under its own key.
        store = LocalBlobStore(settings.data_dir)
        key = thumbnail_key(_blob_key(db, first), THUMBNAIL_SIZE, THUMBNAIL_QUALITY)
        assert store.get(key) == made.content
        # The full size is still the photo itself, and decodes nothing.
        assert browser.get(url).content == photo(1)
        assert decodes == [THUMBNAIL_SIZE]

        # A replaced photo (a new upload of the same side) gets its own thumbnail.
        second = _upload(api, created["productId"], photo(5))
        assert second != first
        replaced = browser.get(
            f"/dashboard/inspections/{inspection}/photos/{second}", params={"size": "thumb"}
        )
        assert _thumbnail_of(replaced) == (THUMBNAIL_SIZE, 300)
        assert replaced.content != made.content
        assert decodes == [THUMBNAIL_SIZE, THUMBNAIL_SIZE]
        assert browser.get(url, params={"size": "thumb"}).content == made.content
        assert len(decodes) == 2


def test_the_share_page_shows_kept_thumbnails(
    live_server: str, db: Database, settings: Any, decodes: list[int]
) -> None:
    company = create_company(db, f"Sharing thumbs {secrets.token_hex(3)}", ["member-1"])
    with httpx.Client(
        base_url=live_server, timeout=30, headers={"x-api-key": company["testKey"]}
    ) as api:
        created = _inspection(api)
        _upload(api, created["productId"], photo(2))
    auth = authenticate_key(db, company["testKey"])
    share = shares.create(
        db, settings, auth, created["inspectionId"], "member-1", datetime.now(UTC)
    )
    page = httpx.get(share.url.replace(settings.public_url, live_server))
    assert page.status_code == 200, page.text
    sources = re.findall(r'<img src="([^"]+)"', page.text)
    assert len(sources) == 1 and sources[0].endswith("&amp;size=thumb"), sources
    thumb_url = sources[0].replace("&amp;", "&").replace(settings.public_url, live_server)
    shown = httpx.get(thumb_url)
    assert _thumbnail_of(shown) == (THUMBNAIL_SIZE, 300)
    assert httpx.get(thumb_url).content == shown.content
    assert decodes == [THUMBNAIL_SIZE]
    whole = httpx.get(thumb_url.replace("&size=thumb", ""))
    assert whole.content == photo(2)
    refused = httpx.get(thumb_url.replace("size=thumb", "size=huge"))
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid_body")
