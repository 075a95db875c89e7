"""A shared photo's URL dies with its share (issue 39 §6).

A share page's photos carried their own content tokens, valid for an hour: after the share was
revoked (page and JSON both 403 `link_revoked`) its photo URLs still answered 200. Now the
share page and the presigned JSON serve every photo and file through the link's own token
(`GET /v1/inspection/presign/detail/:id/file/:fileId?token=`), checked on each request as the
page is: revoked or expired, the photos go with it.
"""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from server.auth import authenticate_key, create_company
from server.db import Database
from server.inspections import shares
from tests.server.test_images import PHOTO


def _inspection_with_a_photo(http: httpx.Client) -> str:
    created = http.post(
        "/v1/inspection/car",
        json={"templateId": "easy", "locale": "en_US", "delivery": {"disabled": True}},
    ).json()
    uploaded = http.post(
        f"/v1/inspection/image/{created['productId']}",
        files={"image": ("a.png", PHOTO, "image/png"), "data": (None, '{"side": "front"}')},
    )
    assert uploaded.status_code == 201, uploaded.text
    return str(created["inspectionId"])


def _local(url: str, settings: Any, base_url: str) -> str:
    return html.unescape(url).replace(settings.public_url, base_url)


def test_a_revoked_share_takes_its_photos_with_it(
    live_server: str, db: Database, settings: Any
) -> None:
    company = create_company(db, "Sharing Co", ["member-1"])
    with httpx.Client(
        base_url=live_server, timeout=30, headers={"x-api-key": company["testKey"]}
    ) as http:
        inspection_id = _inspection_with_a_photo(http)
    auth = authenticate_key(db, company["testKey"])
    share = shares.create(db, settings, auth, inspection_id, "member-1", datetime.now(UTC))
    page = httpx.get(_local(share.url, settings, live_server))
    assert page.status_code == 200, page.text
    photos = [
        _local(src, settings, live_server) for src in re.findall(r'<img src="([^"]+)"', page.text)
    ]
    assert photos, page.text[-2000:]
    token = share.url.split("token=", 1)[1]
    as_json = httpx.get(_local(share.json_url, settings, live_server)).json()
    in_json = [image["src"] for product in as_json["products"] for image in product["images"]]
    assert in_json and all(
        f"/v1/inspection/presign/detail/{inspection_id}/file/" in src and src.endswith(token)
        for src in in_json
    ), in_json
    photos += [_local(src, settings, live_server) for src in in_json]
    for url in photos:
        served = httpx.get(url)
        assert served.status_code == 200, url
        if url.endswith("&size=thumb"):  # the page shows thumbnails (test_kept_thumbnails)
            assert served.headers["content-type"] == "image/jpeg", url
        else:
            assert served.content == PHOTO, url

    assert shares.revoke(db, auth, inspection_id, share.id, datetime.now(UTC))
    for url in photos:
        refused = httpx.get(url)
        assert (refused.status_code, refused.json()["code"]) == (403, "link_revoked"), url


def test_an_expired_link_takes_its_photos_with_it(
    live_server: str, db: Database, settings: Any, serve_app: Any
) -> None:
    """A presigned link of a minute: its photos answer within the minute, and 403
    `link_expired` after it (the server's clock moved on), where a content token would have
    lived for the hour. Another inspection's photo is never served through the link."""
    from server.app import create_app

    company = create_company(db, "Expiring Co", ["member-1"])
    with httpx.Client(
        base_url=live_server, timeout=30, headers={"x-api-key": company["testKey"]}
    ) as http:
        inspection_id = _inspection_with_a_photo(http)
        other_id = _inspection_with_a_photo(http)
        signed = http.post(
            f"/v1/inspection/presign/detail/{inspection_id}", json={"expiresInSeconds": 60}
        ).json()
        other = http.get(f"/v1/inspection/{other_id}").json()
    document = httpx.get(_local(signed["url"], settings, live_server)).json()
    photo = _local(document["products"][0]["images"][0]["src"], settings, live_server)
    assert httpx.get(photo).status_code == 200
    foreign_id = other["products"][0]["images"][0]["_id"]
    foreign = re.sub(r"/file/[0-9a-f]{24}", f"/file/{foreign_id}", photo)
    assert httpx.get(foreign).status_code == 404

    later = datetime.now(UTC) + timedelta(minutes=2)
    with serve_app(create_app(settings, db=db, clock=lambda: later)) as base_url:
        expired = httpx.get(photo.replace(live_server, base_url))
    assert (expired.status_code, expired.json()["code"]) == (403, "link_expired")
