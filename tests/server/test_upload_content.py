"""Uploaded bytes are never served back as active content. Each upload says what it gets: an
image slot takes only JPEG, PNG or WebP that decodes within the pixel limit (else 400
`invalid_image`, nothing stored); content is served with the type detected from the bytes,
file inputs as attachments unless they are a picture (Pillow reads them as one); every content
response carries a CSP that allows nothing and `nosniff`.

Before: an HTML or SVG file uploaded as an "image" came back as `text/html` from the API's own
origin, to anyone holding its `src` link.
"""

from __future__ import annotations

import io
import json
import struct
import zlib
from typing import Any

import httpx
import pytest
from PIL import Image
from sqlmodel import select

from server.db import Database
from server.inspections.tables import ImageRecord
from tests.server.test_images import creation, upload

HTML = b"<!doctype html><script>alert(document.cookie)</script>"
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 2048
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


def encoded(kind: str, size: tuple[int, int] = (8, 6)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (10, 120, 200)).save(buffer, format=kind)
    return buffer.getvalue()


def png_header_only_bomb(width: int = 20_000, height: int = 20_000) -> bytes:
    """A real 1-bit PNG of `width` x `height` pixels, all zero: 400 million pixels that
    compress to about 50 KB (made by hand: Pillow would need gigabytes to draw it)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    row = b"\x00" * (1 + (width + 7) // 8)
    compressor = zlib.compressobj(9)
    data = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


@pytest.fixture
def product(client: httpx.Client, test_headers: dict[str, str]) -> dict[str, Any]:
    created = client.post("/v1/inspection/car", json=creation(), headers=test_headers)
    assert created.status_code == 201, created.text
    result: dict[str, Any] = created.json()
    return result


def stored_images(db: Database, inspection_id: str) -> int:
    with db.session() as session:
        rows = session.exec(select(ImageRecord).where(ImageRecord.inspection_id == inspection_id))
        return len(rows.all())


@pytest.mark.parametrize(
    ("name", "data", "declared"),
    [
        ("page.html", HTML, "image/png"),
        ("drawing.svg", SVG, "image/svg+xml"),
        ("truncated.jpg", encoded("JPEG", (64, 48))[:200], "image/jpeg"),
        ("animation.gif", encoded("GIF"), "image/gif"),
        ("scan.bmp", encoded("BMP"), "image/bmp"),
        ("bomb.png", png_header_only_bomb(), "image/png"),
        ("empty-ish.png", b"\x89PNG\r\n\x1a\n", "image/png"),
    ],
)
def test_an_image_slot_refuses_what_is_not_an_accepted_photo(
    client: httpx.Client,
    db: Database,
    test_headers: dict[str, str],
    product: dict[str, Any],
    name: str,
    data: bytes,
    declared: str,
) -> None:
    response = client.post(
        f"/v1/inspection/image/{product['productId']}",
        files={"image": (name, data, declared), "data": (None, '{"side": "front"}')},
        headers=test_headers,
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_image"), response.text
    assert stored_images(db, product["inspectionId"]) == 0


@pytest.mark.parametrize(
    ("kind", "media_type"), [("JPEG", "image/jpeg"), ("PNG", "image/png"), ("WEBP", "image/webp")]
)
def test_accepted_photos_are_served_with_the_detected_type_and_safe_headers(
    client: httpx.Client,
    test_headers: dict[str, str],
    product: dict[str, Any],
    kind: str,
    media_type: str,
) -> None:
    data = encoded(kind)
    response = client.post(
        f"/v1/inspection/image/{product['productId']}",
        files={"image": ("x.bin", data, "text/html"), "data": (None, '{"side": "front"}')},
        headers=test_headers,
    )
    assert response.status_code == 201, response.text
    served = httpx.get(response.json()["src"])
    assert served.status_code == 200
    assert served.headers["content-type"] == media_type  # never the declared text/html
    assert served.headers["content-security-policy"] == "default-src 'none'; sandbox"
    assert served.headers["x-content-type-options"] == "nosniff"
    assert served.headers["content-disposition"] == "inline"
    assert served.content == data


def test_a_polyglot_png_is_served_as_a_png(
    client: httpx.Client, test_headers: dict[str, str], product: dict[str, Any]
) -> None:
    """A valid PNG with HTML after it decodes as a PNG: it is stored, and served as image/png
    under a CSP that runs nothing, so the HTML inside never runs."""
    data = encoded("PNG") + HTML
    response = upload(client, test_headers, product["productId"], {"side": "front"}, image=data)
    assert response.status_code == 201, response.text
    served = httpx.get(response.json()["src"])
    assert served.headers["content-type"] == "image/png"
    assert served.headers["content-security-policy"] == "default-src 'none'; sandbox"


FILE_INPUT_TEMPLATE = """\
template "Files{suffix}"
    type: car
    locales: en_US

input invoice
    type: file
    label: "Invoice"
    asked at: create

verdict
    approve when true
"""


@pytest.mark.parametrize(
    ("name", "data", "expected_type", "inline"),
    [
        ("invoice.html", HTML, "application/octet-stream", False),
        ("invoice.svg", SVG, "application/octet-stream", False),
        (
            "invoice.pdf",
            b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n",
            "application/pdf",
            False,
        ),
        ("photo.jpg", encoded("JPEG"), "image/jpeg", True),
        # Issue 21 §2: inline only what really is a picture. A JPEG's magic number before HTML
        # is no picture (Pillow cannot read it), and a video is no picture either.
        ("fake.jpg", b"\xff\xd8\xff\xe0" + HTML, "image/jpeg", False),
        ("clip.mp4", MP4, "video/mp4", False),
    ],
)
def test_file_inputs_are_attachments_unless_a_picture(
    client: httpx.Client,
    test_headers: dict[str, str],
    name: str,
    data: bytes,
    expected_type: str,
    inline: bool,
) -> None:
    template = client.post(
        "/v1/inspection/template",
        content=FILE_INPUT_TEMPLATE.format(suffix=f" {name}").encode(),
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert template.status_code == 201, template.text
    body = template.json()
    identifier = body["inputs"][0]["identifier"]
    created = client.post(
        "/v1/inspection/car",
        files={
            "data": (None, json.dumps({**creation(), "templateId": body["_id"]})),
            identifier: (name, data, "text/html"),
        },
        headers=test_headers,
    )
    assert created.status_code == 201, created.text
    document = client.get(
        f"/v1/inspection/{created.json()['inspectionId']}", headers=test_headers
    ).json()
    link = next(i["value"] for i in document["template"]["inputs"] if i["identifier"] == identifier)
    served = httpx.get(link)
    assert served.status_code == 200, served.text
    assert served.headers["content-security-policy"] == "default-src 'none'; sandbox"
    assert served.headers["x-content-type-options"] == "nosniff"
    disposition = served.headers["content-disposition"]
    assert served.headers["content-type"] == expected_type
    if inline:
        assert disposition == "inline"
    else:
        assert disposition.startswith("attachment; ")
    assert served.content == data


def _picture(size: tuple[int, int], fmt: str, mode: str = "RGB", **options: Any) -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, size, 90).save(buffer, fmt, **options)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "make", "said"),
    [
        # Issue 39: a 142 KB PNG of 200000x250 (50 Mpx) cost the server ~900 MB.
        ("strip.png", lambda: _picture((200000, 250), "PNG"), "at most 20 times its short side"),
        ("tall.png", lambda: _picture((250, 5100), "PNG"), "at most 20 times its short side"),
        (
            "progressive.jpg",
            lambda: _picture((4100, 4100), "JPEG", progressive=True),
            "progressive JPEG) at most 16,000,000 pixels",
        ),
        ("deep.png", lambda: _picture((4100, 4100), "PNG", "I;16"), "16,000,000 pixels"),
    ],
)
def test_an_image_outside_the_memory_limits_is_refused_from_its_header(
    client: httpx.Client,
    db: Database,
    test_headers: dict[str, str],
    product: dict[str, Any],
    name: str,
    make: Any,
    said: str,
) -> None:
    """Each refusal is 400 `invalid_image` naming the limit, and nothing is stored."""
    response = client.post(
        f"/v1/inspection/image/{product['productId']}",
        files={"image": (name, make(), "image/png"), "data": (None, '{"side": "front"}')},
        headers=test_headers,
    )
    assert (response.status_code, response.json()["code"]) == (400, "invalid_image"), response.text
    assert said in response.json()["description"]
    assert stored_images(db, product["inspectionId"]) == 0


def test_a_photo_at_the_aspect_limit_is_accepted(
    client: httpx.Client, test_headers: dict[str, str], product: dict[str, Any]
) -> None:
    response = client.post(
        f"/v1/inspection/image/{product['productId']}",
        files={
            "image": ("panorama.png", _picture((5000, 250), "PNG"), "image/png"),
            "data": (None, '{"side": "front"}'),
        },
        headers=test_headers,
    )
    assert response.status_code == 201, response.text
