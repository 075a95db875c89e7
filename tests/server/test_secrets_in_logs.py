"""No secret in any log line at any level (issue 39 §5).

The access log printed each request's query string: magic-link codes (`/i/ID?code=…`) and the
signed tokens of images, shares and presigned details, in plain text, though only their hashes
are stored. `server.log_redaction` now redacts every log record as it is made. This test serves
the real app with uvicorn's access log on and every logger at DEBUG, walks a consumer's flow, a
share (its page and its photos), a presign and an upload with an image token, and searches
everything logged for each secret it met.
"""

from __future__ import annotations

import logging
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from server import log_redaction
from server.auth import create_company
from server.db import Database
from server.inspections import shares
from tests.server.test_images import PHOTO


class Captured(logging.Handler):
    """Every record, formatted with its traceback, as one text."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def logged_server(settings: Any, db: Database) -> Iterator[tuple[str, Captured]]:
    """The app on uvicorn with its access log on, every logger at DEBUG, captured."""
    from server.app import create_app

    captured = Captured()
    # The root, and uvicorn's loggers that an earlier server's logging config may have cut
    # from it (`propagate: False`).
    loggers = [logging.getLogger(name) for name in ("", "uvicorn", "uvicorn.access")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(captured)
        logger.setLevel(logging.DEBUG)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(
        create_app(settings, db=db), log_config=None, log_level="debug", access_log=True
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", captured
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(captured)
            logger.setLevel(level)


def _query(url: str, name: str) -> str:
    found = re.search(rf"[?&]{name}=([^&\"'\s]+)", url)
    assert found is not None, url
    return found.group(1)


def test_no_secret_reaches_the_log(
    logged_server: tuple[str, Captured], db: Database, settings: Any
) -> None:
    base_url, captured = logged_server
    company = create_company(db, "Logged Co", ["member-1"])
    key = company["testKey"]
    secrets: dict[str, str] = {"API key": key}
    headers = {"x-api-key": key}
    with httpx.Client(base_url=base_url, timeout=30, headers=headers) as api:
        created = api.post(
            "/v1/inspection/car",
            json={
                "templateId": "easy",
                "locale": "en_US",
                "delivery": {"channel": "email", "destination": "a@example.com"},
            },
        ).json()
        inspection_id, product_id = created["inspectionId"], created["productId"]
        secrets["magic-link code"] = _query(created["magicLink"], "code")

        # The consumer opens the link and walks on with their session.
        with httpx.Client(base_url=base_url, timeout=30) as phone:
            opened = phone.get(created["magicLink"].removeprefix(settings.public_url))
            assert opened.status_code == 303, opened.text
            assert phone.get(opened.headers["location"]).status_code == 200
            wrong = phone.get(f"/i/{inspection_id}?code=not-the-{secrets['magic-link code']}")
            assert wrong.status_code in (303, 404)

        # An upload with an image token instead of the key.
        token = api.post(f"/v1/inspection/image/token/{product_id}").json()["token"]
        secrets["image upload token"] = token
        uploaded = httpx.post(
            f"{base_url}/v1/inspection/image/{product_id}",
            headers={"x-image-token": token},
            files={"image": ("a.png", PHOTO, "image/png"), "data": (None, '{"side": "front"}')},
        )
        assert uploaded.status_code == 201, uploaded.text

        # A presigned detail, read with its token; its photos' signed URLs opened.
        signed = api.post(f"/v1/inspection/presign/detail/{inspection_id}").json()
        secrets["presign token"] = signed["accessToken"]
        detail = httpx.get(signed["url"].replace(settings.public_url, base_url))
        assert detail.status_code == 200, detail.text
        photo_urls = re.findall(r'"(http[^"]+/file/[^"]+\?token=[^"]+)"', detail.text)
        assert photo_urls, detail.text[:500]

    # A share: its page, its JSON and the photos on the page.
    from server.auth import authenticate_key

    auth = authenticate_key(db, key)
    share = shares.create(db, settings, auth, inspection_id, "member-1", _now())
    secrets["share token"] = _query(share.url, "token")
    page = httpx.get(share.url.replace(settings.public_url, base_url))
    assert page.status_code == 200, page.text
    photo_urls += re.findall(r'(?:src|href)="([^"]+\?token=[^"]+)"', page.text)
    for number, url in enumerate(photo_urls):
        url = url.replace("&amp;", "&").replace(settings.public_url, base_url)
        secrets[f"photo token {number}"] = _query(url, "token")
        assert httpx.get(url).status_code == 200, url

    log = "\n".join(captured.lines)
    assert f"/i/{inspection_id}?code={log_redaction.REDACTED}" in log  # the access log ran
    leaked = [name for name, secret in secrets.items() if secret in log]
    assert not leaked, leaked


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ('"GET /dashboard/reset?token=Zm9vYmFyYmF6cXV4 HTTP/1.1" 200', "Zm9vYmFyYmF6cXV4"),
        ("GET /dashboard/accept?next=/&token=aW52aXRhdGlvbg", "aW52aXRhdGlvbg"),
        ("POST /sign-in?email=a@b.c&password=hunter2-hunter2", "hunter2-hunter2"),
        ("GET /v1/report/file/1?expires=9&signature=c2lnbmF0dXJl", "c2lnbmF0dXJl"),
        ("x-api-key: sk_live_0123abcd_S3cr3t-part_of-the-key", "S3cr3t-part_of-the-key"),
        ("token eyJraW5kIjoiaW1hZ2UifQ.c2lnbmF0dXJlLXBhcnQ in a message", "c2lnbmF0dXJlLXBhcnQ"),
        ("GET /i/abc?CODE=bWFnaWM&lang=en", "bWFnaWM"),
    ],
)
def test_every_secret_shape_is_redacted(line: str, secret: str) -> None:
    redacted = log_redaction.redact(line)
    assert secret not in redacted and log_redaction.REDACTED in redacted


def test_a_record_is_redacted_in_its_arguments_and_its_traceback() -> None:
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "%s %d", ("/i/1?code=abc", 5), None)
    try:
        raise ValueError("failed on https://h/share/1?token=dG9rZW4")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    log_redaction.redact_record(record)
    text = logging.Formatter().format(record)
    assert "abc" not in text.split("\n")[0] and "dG9rZW4" not in text
    assert record.getMessage() == f"/i/1?code={log_redaction.REDACTED} 5"
