"""Hostile multipart bodies and query strings on every operation of the OpenAPI document that
takes one: none may answer 5xx, and every refusal is a stable code (issue 39 §4).

`test_hostile_bodies` walks the JSON bodies. This walks what comes beside them:

- every operation whose body may be multipart/form-data (photo uploads, file inputs, and every
  JSON body, which may come as a `data` part) gets broken envelopes (no boundary, another
  boundary, no closing line, a part without headers or a name, a boundary of 200 characters,
  a thousand parts), missing parts, repeated parts, parts of the wrong type (`data` as a file,
  as invalid UTF-8, as a JSON scalar or list, `image` as text, as an empty file, as bytes that
  are no picture, with a file name of 10,000 characters or of control characters);
- every query parameter of every operation gets hostile values (empty, huge, negative, a float
  where an integer is wanted, a number past 64 bits, NUL, unicode, a lone surrogate, invalid
  UTF-8 and broken percent escapes), the key repeated, the key without a value, and unknown
  keys.

Each answer must be below 500, and each 4xx a JSON error whose `code` is one of
`server.errors.STATUS_BY_CODE` with that code's status. Bounded by count (about 3,000
requests), not by time; it prints the figure: requests sent, how many answered 5xx. Runs on
SQLite and on PostgreSQL (`make test-postgres`) alike. Path parameters are real resources of
the caller (those of `test_hostile_bodies`), so each request reaches the code that reads it.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest

from server.dashboard import accounts
from server.db import Database
from server.errors import STATUS_BY_CODE
from server.oauth import service as oauth
from server.settings import Settings
from tests.server.test_hostile_bodies import (
    CONCURRENT,
    CREATION,
    _url,
    answered_once_more_after_an_outage,
    fuzzing,
)
from tests.server.test_images import PHOTO

BOUNDARY = "hostile-boundary-7f3a"
DISPOSITION = "Content-Disposition: form-data"

#: One part of a hand-made multipart body: its header lines and its bytes.
Part = tuple[list[str], bytes]


def form_part(name: str, value: bytes) -> Part:
    return [f'Content-Disposition: form-data; name="{name}"'], value


def file_part(name: str, filename: str, value: bytes, media_type: str = "image/png") -> Part:
    return (
        [
            f'Content-Disposition: form-data; name="{name}"; filename="{filename}"',
            f"Content-Type: {media_type}",
        ],
        value,
    )


def envelope(parts: list[Part], boundary: str = BOUNDARY, *, close: bool = True) -> bytes:
    """The multipart body of `parts`, closed (`--boundary--`) unless not `close`."""
    out = b""
    for headers, value in parts:
        out += f"--{boundary}\r\n".encode()
        out += "".join(f"{line}\r\n" for line in headers).encode("utf-8", "surrogateescape")
        out += b"\r\n" + value + b"\r\n"
    if close:
        out += f"--{boundary}--\r\n".encode()
    return out


DATA = form_part("data", b'{"side": "front"}')
IMAGE = file_part("image", "front.png", PHOTO)

#: (label, Content-Type header, body) of each hostile multipart request.
MULTIPART: list[tuple[str, str, bytes]] = [
    ("no parts", f"multipart/form-data; boundary={BOUNDARY}", envelope([])),
    ("empty body", f"multipart/form-data; boundary={BOUNDARY}", b""),
    ("no boundary parameter", "multipart/form-data", envelope([DATA, IMAGE])),
    ("empty boundary", 'multipart/form-data; boundary=""', envelope([DATA, IMAGE])),
    ("another boundary", "multipart/form-data; boundary=other", envelope([DATA, IMAGE])),
    ("not closed", f"multipart/form-data; boundary={BOUNDARY}", envelope([DATA], close=False)),
    (
        "cut in a part",
        f"multipart/form-data; boundary={BOUNDARY}",
        envelope([DATA, IMAGE])[: len(envelope([DATA])) + 40],
    ),
    (
        "a part without headers",
        f"multipart/form-data; boundary={BOUNDARY}",
        envelope([([], b'{"side": "front"}'), IMAGE]),
    ),
    (
        "a part without a name",
        f"multipart/form-data; boundary={BOUNDARY}",
        envelope([(["Content-Disposition: form-data"], b"{}"), IMAGE]),
    ),
    (
        "a header line of garbage",
        f"multipart/form-data; boundary={BOUNDARY}",
        envelope([(["\u0000\u00ff: ::", "Content-Disposition"], b"{}")]),
    ),
    (
        "a boundary of 200 characters",
        f"multipart/form-data; boundary={'b' * 200}",
        envelope([DATA, IMAGE], "b" * 200),
    ),
    (
        "a thousand parts",
        f"multipart/form-data; boundary={BOUNDARY}",
        envelope([form_part(f"p{index}", b"x") for index in range(1000)]),
    ),
    ("data only", f"multipart/form-data; boundary={BOUNDARY}", envelope([DATA])),
    ("image only", f"multipart/form-data; boundary={BOUNDARY}", envelope([IMAGE])),
    (
        "data twice",
        f"multipart/form-data; boundary={BOUNDARY}",
        envelope([DATA, form_part("data", b"[1, 2]"), IMAGE]),
    ),
    ("image twice", f"multipart/form-data; boundary={BOUNDARY}", envelope([DATA, IMAGE, IMAGE])),
    (
        "data as a file",
        f"multipart/form-data; boundary={BOUNDARY}",
        envelope([file_part("data", "data.json", b'{"side": "front"}', "image/png"), IMAGE]),
    ),
    *[
        (
            f"data {label}",
            f"multipart/form-data; boundary={BOUNDARY}",
            envelope([form_part("data", value), IMAGE]),
        )
        for label, value in (
            ("empty", b""),
            ("not JSON", b"{"),
            ("invalid UTF-8", b'{"side": "\xff\xfe"}'),
            ("a lone surrogate", b'{"side": "\\ud800"}'),
            ("a list", b"[1, 2]"),
            ("a number", b"1e999"),
            ("null", b"null"),
            ("huge", b'{"side": "' + b"x" * 2_000_000 + b'"}'),
            ("deep", b"[" * 5000 + b"]" * 5000),
        )
    ],
    *[
        (
            f"image {label}",
            f"multipart/form-data; boundary={BOUNDARY}",
            envelope([DATA, part]),
        )
        for label, part in (
            ("as a text field", form_part("image", PHOTO)),
            ("empty", file_part("image", "front.png", b"")),
            ("not a picture", file_part("image", "front.png", b"%PDF-1.7 not a photo")),
            ("as HTML", file_part("image", "x.html", b"<script>1</script>", "text/html")),
            ("of a wrong type", file_part("image", "front.png", PHOTO, "application/x-evil")),
            ("named at length", file_part("image", "n" * 10_000 + ".png", PHOTO)),
            ("named with controls", file_part("image", "a\u0000b\u202e.png", PHOTO)),
            ("named in unicode", file_part("image", "фото 🚗.png", PHOTO)),
            (
                "with no type",
                (['Content-Disposition: form-data; name="image"; filename="a"'], PHOTO),
            ),
        )
    ],
    (
        "a file part of any name",
        f"multipart/form-data; boundary={BOUNDARY}",
        envelope([DATA, file_part("some_input", "x.bin", b"\x00" * 64, "application/pdf")]),
    ),
    (
        "a part's name quoted oddly",
        f"multipart/form-data; boundary={BOUNDARY}",
        envelope([(['Content-Disposition: form-data; name="da\\"ta"; name=data'], b"{}")]),
    ),
]

#: Values of each query parameter, as they appear in the query string (already encoded, so that
#: broken escapes and invalid UTF-8 reach the server as they are).
QUERY_VALUES: tuple[str, ...] = (
    "",
    "x" * 5000,
    "-1",
    "0",
    "1.5",
    "1e308",
    "99999999999999999999999",
    "true",
    "null",
    "%00",
    "%C3%A9%E2%98%83%F0%9D%84%9E",
    "%ED%A0%80",
    "%FF%FE",
    "%",
    "%zz",
    "%5B%5D",
    "a%26b%3Dc",
    "2026-13-45T99:99:99",
)


def query_strings(names: list[str], base: dict[str, str]) -> list[str]:
    """The hostile query strings for an operation with these query parameters: each one
    hostile in turn, beside the `base` values that let the request reach the handler (a
    link's token, the token's own membership)."""

    def joined(hostile: str, skip: str | None = None) -> str:
        kept = [f"{key}={quote(value)}" for key, value in base.items() if key != skip]
        return "&".join([*kept, hostile] if hostile else kept)

    found = [joined(f"{name}={value}", name) for name in names for value in QUERY_VALUES]
    found += [joined(f"{name}=1&{name}=2", name) for name in names]  # the key repeated
    found += [joined(name, name) for name in names]  # the key without a value
    found += [joined(f"{name}=a&{name}", name) for name in names]
    found += [joined(f"{name}={quote(value)}") for name, value in base.items()]  # twice
    found += [joined(hostile) for hostile in ("unknown=1", "%FF=1", "=1", "&&&", "a=" + "%" * 200)]
    found.append(joined("&".join(f"k{index}=v" for index in range(500))))
    return found


def _partner_token(
    db: Database, settings: Settings, http: httpx.Client, company_id: str
) -> tuple[str, str]:
    """A member of the caller's company and an OAuth access token of theirs
    (`inspections:read`), for the operations only a partner application reaches
    (`/v1/inspection/me`, `/all`)."""
    email = f"fuzz-{secrets.token_hex(3)}@example.com"
    account = accounts.create_account(db, company_id, email, "owner", None)
    actor = accounts.Actor(account["id"], company_id, email, "owner")
    callback = "https://partner.example/callback"
    app, secret = oauth.register_app(db, actor, "test", "Fuzz", [callback], ["inspections:read"])
    query = {"response_type": "code", "client_id": app.id, "redirect_uri": callback}
    location = oauth.decide(db, settings.public_url, actor, query, True, datetime.now(UTC))
    code = parse_qs(urlsplit(location).query)["code"][0]
    exchanged = http.post(
        "/v1/account/oauth/exchange_code",
        json={
            "code": code,
            "redirect_uri": callback,
            "client_app_id": app.id,
            "client_secret": secret,
        },
    )
    assert exchanged.status_code == 200, exchanged.text
    return str(account["id"]), str(exchanged.json()["access_token"])


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(method, path, operation) of the document, `finish` last so that the inspection stays
    open for the others."""
    found = [
        (method, path, operation)
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    ]
    return sorted(found, key=lambda item: "/finish/" in item[1])


def _problem(response: httpx.Response) -> str | None:
    """What is wrong with an answer: a 5xx, or a 4xx that is no stable error (a page's 4xx is
    a page in words, for a person: only its status counts)."""
    if response.status_code >= 500:
        return f"{response.status_code} {response.text[:300]}"
    if response.status_code < 400 or response.headers.get("content-type", "").startswith(
        "text/html"
    ):
        return None
    try:
        body = response.json()
    except ValueError:
        return f"{response.status_code} not JSON: {response.text[:200]}"
    code = body.get("code") if isinstance(body, dict) else None
    if STATUS_BY_CODE.get(str(code)) != response.status_code:
        return f"{response.status_code} with code {code!r}: {response.text[:200]}"
    return None


def test_no_hostile_multipart_body_or_query_string_gets_a_5xx(
    live_server: str,
    db: Database,
    settings: Settings,
    company: dict[str, Any],
    test_headers: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    failures: list[str] = []
    sent: list[int] = []
    retried: list[str] = []
    counted = {"multipart": 0, "query": 0}
    with fuzzing(live_server, test_headers) as (http, document, known):
        known["file_id"] = known["image_id"]  # the shared link's photo
        member, access = _partner_token(db, settings, http, company["companyId"])
        bearer = {"authorization": f"Bearer {access}"}
        presigned = http.post(f"/v1/inspection/presign/detail/{known['inspection_id']}", json={})
        assert presigned.status_code in (200, 201), presigned.text
        link = parse_qs(urlsplit(presigned.json()["url"]).query)["token"][0]
        #: The query values that let each operation's request reach its handler.
        bases = {
            "/v1/inspection/me": {"membershipId": member},
            "/v1/inspection/all": {"membershipId": member},
            "/v1/inspection/presign/detail/{inspection_id}": {"token": link},
            "/v1/inspection/presign/detail/{inspection_id}/file/{file_id}": {"token": link},
        }
        requests: list[tuple[str, Callable[[], httpx.Response]]] = []
        multipart_operations: list[str] = []
        query_operations: list[str] = []
        for method, path, operation in _operations(document):
            parameters = operation.get("parameters", [])
            url = _url(path, parameters, known)
            label = f"{method.upper()} {path}"
            content = operation.get("requestBody", {}).get("content", {})
            if "multipart/form-data" in content:
                multipart_operations.append(label)
                for case, media_type, body in MULTIPART:
                    requests.append((
                        f"{label} multipart {case}",
                        lambda m=method, u=url, t=media_type, b=body: http.request(  # type: ignore[misc]
                            m, u, content=b, headers={"content-type": t}
                        ),
                    ))  # fmt: skip
                    counted["multipart"] += 1
            names = [p["name"] for p in parameters if p.get("in") == "query"]
            # The member's own listings answer only a partner application's token.
            headers = bearer if path in ("/v1/inspection/me", "/v1/inspection/all") else {}
            if names:
                query_operations.append(label)
                for query in query_strings(names, bases.get(path, {})):
                    target = httpx.URL(live_server + url).copy_with(query=query.encode())
                    requests.append((
                        f"{label} ?{query[:80]}",
                        lambda m=method, t=target, h=headers: http.request(m, t, headers=h),  # type: ignore[misc]
                    ))  # fmt: skip
                    counted["query"] += 1
        # The consumer's uploads (through the magic link's session, not the document): its
        # photos (`consumer.js`) and the details form's file inputs.
        consumer = httpx.Client(
            base_url=live_server, timeout=60, limits=httpx.Limits(max_connections=CONCURRENT)
        )
        created = http.post("/v1/inspection/car", json=CREATION)
        assert created.status_code == 201, created.text
        opened = consumer.get(
            "/i/" + created.json()["magicLink"].split("/i/", 1)[1], follow_redirects=True
        )
        csrf = re.search(r'name="csrf-token" content="([^"]+)"', opened.text)
        assert csrf is not None, opened.text[:500]
        visit = f"/i/{created.json()['inspectionId']}"
        for route in ("photo", "details"):
            multipart_operations.append(f"POST {visit}/{route}")
            for case, media_type, body in MULTIPART:
                requests.append((
                    f"POST /i/ID/{route} multipart {case}",
                    lambda u=f"{visit}/{route}", t=media_type, b=body: consumer.post(  # type: ignore[misc]
                        u, content=b, headers={"content-type": t, "x-csrftoken": csrf[1]}
                    ),
                ))  # fmt: skip
                counted["multipart"] += 1
        assert len(multipart_operations) >= 15, multipart_operations
        assert len(query_operations) >= 8, query_operations

        def send(request: tuple[str, Callable[[], httpx.Response]]) -> None:
            label, call = request
            response = answered_once_more_after_an_outage(call, label, retried)
            sent.append(response.status_code)

            problem = _problem(response)
            if problem is not None:
                failures.append(f"{label} -> {problem}")

        try:
            with ThreadPoolExecutor(CONCURRENT) as pool:
                list(pool.map(send, requests))
        finally:
            consumer.close()
    server_errors = sum(status >= 500 for status in sent)
    with capsys.disabled():
        print(
            f"\nhostile multipart bodies and query strings: {len(sent)} requests "
            f"({counted['multipart']} multipart over {len(multipart_operations)} operations, "
            f"{counted['query']} query strings over {len(query_operations)}), "
            f"{server_errors} answered 5xx ({len(retried)} sent again after a 503 "
            "service_unavailable)"
        )
    assert not failures, "\n".join(failures[:30])
