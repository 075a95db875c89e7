"""The shared web layer (`server.web`) on the real app: a probe page area mounted the way the
consumer and dashboard areas are, served over HTTP.

- Pages carry the strict Content-Security-Policy, `Referrer-Policy: no-referrer` and friends;
  the HTML has no inline script or style.
- A form post without the CSRF token is refused (403); with the token from the page it passes.
  The API under `/v1` is untouched by CSRF (API-keyed, no cookie).
- Sessions live in the database: a token made by one app is accepted by another app on the same
  database; expired, unknown and other-kind tokens are no session; the cookie is HttpOnly,
  SameSite=Lax, Secure only behind https.
- Static assets are served from the package with a content hash in the URL and long caching.
- Translations follow the page's locale.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest
from litestar import Request, get, post
from litestar.enums import RequestEncodingType
from litestar.params import Body, FromPath
from litestar.response import Redirect, Response, Template

from server.app import PAGE_AREAS, create_app
from server.db import Database
from server.deps import services
from server.settings import Settings
from server.web import sessions
from server.web.routes import PageArea
from server.web.security import CONTENT_SECURITY_POLICY, page_router
from server.web.templating import page

PROBE_FORM = """{% extends "web/base.html" %}
{% block main %}
<h1>{{ _("Inspection") }}</h1>
<form method="post" action="/probe/form">{{ csrf_input | safe }}
<label for="name">Name</label><input id="name" name="name" type="text">
<button type="submit">Send</button></form>
<p id="who">{{ who }}</p>
{% endblock %}
"""


def probe_area(folder: Path) -> PageArea:
    (folder / "templates").mkdir(parents=True, exist_ok=True)
    (folder / "templates" / "form.html").write_text(PROBE_FORM)
    (folder / "static").mkdir(exist_ok=True)
    (folder / "static" / "probe.js").write_text("document.documentElement.dataset.probe = 'ran';\n")

    @get("/form", sync_to_thread=False)
    def show(request: Request[Any, Any, Any]) -> Template:
        shared = services(request)
        row = sessions.load_session(
            shared.db, sessions.session_token(request, "member"), "member", shared.clock()
        )
        return page(
            "probe/form.html",
            locale=request.query_params.get("locale", "en_US"),
            context={"who": row.subject_id if row else "nobody"},
        )

    @post("/form", sync_to_thread=False, status_code=200)
    def submit(
        data: Annotated[dict[str, str], Body(media_type=RequestEncodingType.URL_ENCODED)],
    ) -> dict[str, str]:
        return {"name": data.get("name", "")}

    @post("/sign-in/{subject:str}", sync_to_thread=True, status_code=303)
    def sign_in(request: Request[Any, Any, Any], subject: FromPath[str]) -> Response[Any]:
        shared = services(request)
        token = sessions.start_session(
            shared.db,
            kind="member",
            company_id=request.query_params["company"],
            subject_id=subject,
            now=shared.clock(),
            lifetime=timedelta(hours=1),
        )
        response: Response[Any] = Redirect("/probe/form", status_code=303)
        sessions.set_session_cookie(response, request, "member", token, lifetime=timedelta(hours=1))
        return response

    return PageArea(
        name="probe",
        templates=folder / "templates",
        static=folder / "static",
        routes=[page_router("/probe", [show, submit, sign_in])],
    )


@pytest.fixture(scope="module")
def web_server(
    settings: Settings, db: Database, tmp_path_factory: pytest.TempPathFactory, serve_app: Any
) -> Iterator[str]:
    area = probe_area(tmp_path_factory.mktemp("probe-area"))
    app = create_app(settings, db=db, page_areas=[*PAGE_AREAS, area])
    with serve_app(app) as base_url:
        yield base_url


@pytest.fixture
def web(web_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_server, timeout=30) as http:
        yield http


def test_pages_carry_the_security_headers_and_no_inline_code(web: httpx.Client) -> None:
    response = web.get("/probe/form")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["cache-control"] == "no-store"
    html = response.text
    assert not re.search(r"<script(?![^>]*\bsrc=)", html), "inline <script>"
    assert "<style" not in html and " style=" not in html
    assert re.search(r" on[a-z]+=", html) is None, "inline event handler"


def test_form_posts_need_the_csrf_token(web: httpx.Client) -> None:
    refused = web.post("/probe/form", data={"name": "x"})
    assert refused.status_code == 403
    page_html = web.get("/probe/form").text
    token = re.search(r'name="_csrf_token" value="([^"]+)"', page_html)
    assert token is not None
    meta = re.search(r'<meta name="csrf-token" content="([^"]+)"', page_html)
    assert meta is not None and meta.group(1) == token.group(1)
    accepted = web.post("/probe/form", data={"name": "Ana", "_csrf_token": token.group(1)})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json() == {"name": "Ana"}
    by_header = web.post(
        "/probe/form", data={"name": "Bo"}, headers={"x-csrftoken": token.group(1)}
    )
    assert by_header.status_code == 200
    # Another token of the same shape: its last two characters changed (never to themselves:
    # a token that already ended in "00" made this test fail once in a few hundred runs).
    real = token.group(1)
    other = real[:-2] + ("11" if real.endswith("00") else "00")
    forged = web.post("/probe/form", data={"name": "x", "_csrf_token": other})
    assert forged.status_code == 403
    cookie = next(c for c in web.cookies.jar if c.name == "inspectlang_csrf")
    assert cookie.has_nonstandard_attr("HttpOnly")


def test_the_api_is_not_under_csrf(web: httpx.Client, company: dict[str, Any]) -> None:
    response = web.post(
        "/v1/notification/webhook",
        json={"endpoint": "http://127.0.0.1:9/hook", "events": ["inspection_created"]},
        headers={"x-api-key": company["testKey"]},
    )
    assert response.status_code in (200, 201), response.text
    assert "inspectlang_csrf" not in response.headers.get("set-cookie", "")


def test_sessions_are_rows_any_process_accepts(
    web: httpx.Client, settings: Settings, db: Database, company: dict[str, Any], serve_app: Any
) -> None:
    token = re.search(r'value="([^"]+)"', web.get("/probe/form").text)
    assert token is not None
    signed = web.post(
        f"/probe/sign-in/member-1?company={company['companyId']}",
        headers={"x-csrftoken": token.group(1)},
        follow_redirects=False,
    )
    assert signed.status_code == 303
    set_cookie = signed.headers["set-cookie"]
    assert "inspectlang_member=" in set_cookie
    assert "HttpOnly" in set_cookie and "SameSite=lax" in set_cookie.replace("Lax", "lax")
    assert "Secure" not in set_cookie  # plain http here
    value = signed.cookies["inspectlang_member"]
    # Another process (another app on the same database) knows the session.
    other = create_app(
        settings, db=db, page_areas=[*PAGE_AREAS, probe_area(Path(settings.data_dir) / "p2")]
    )
    with serve_app(other) as other_url, httpx.Client(base_url=other_url) as second:
        second.cookies.set("inspectlang_member", value)
        assert 'id="who">member-1<' in second.get("/probe/form").text
        second.cookies.set("inspectlang_member", value + "x")
        assert 'id="who">nobody<' in second.get("/probe/form").text
    clock = services_clock(settings)
    assert sessions.load_session(db, value, "member", clock) is not None
    assert sessions.load_session(db, value, "consumer", clock) is None
    assert sessions.load_session(db, value, "member", clock + timedelta(hours=2)) is None
    sessions.purge_expired(db, clock)  # the worker's purge now keeps the live session
    assert sessions.load_session(db, value, "member", clock) is not None
    assert sessions.purge_expired(db, clock + timedelta(hours=2)) >= 1  # two hours later
    assert sessions.load_session(db, value, "member", clock) is None


def services_clock(settings: Settings) -> Any:
    from server.deps import system_clock

    return system_clock()


def test_session_cookie_is_secure_behind_https(settings: Settings, db: Database) -> None:
    from litestar.testing import TestClient

    secure_settings = settings.model_copy(update={"public_url": "https://inspect.example"})
    area = PageArea(name="probe2", routes=[])

    @get("/cookie", sync_to_thread=False)
    def cookie(request: Request[Any, Any, Any]) -> Response[Any]:
        response: Response[Any] = Response("ok")
        sessions.set_session_cookie(
            response, request, "consumer", "t", lifetime=timedelta(hours=1), path="/i/x"
        )
        return response

    app = create_app(
        secure_settings,
        db=db,
        page_areas=[*PAGE_AREAS, area],
        extra_routes=[page_router("/p", [cookie])],
    )

    with TestClient(app) as test_client:
        header = test_client.get("/p/cookie").headers["set-cookie"]
    assert "Secure" in header and "HttpOnly" in header and "Path=/i/x" in header


def test_static_assets_are_served_with_a_content_hash(web: httpx.Client) -> None:
    html = web.get("/probe/form").text
    href = re.search(r'href="(/static/web/base\.css\?v=[0-9a-f]{12})"', html)
    assert href is not None
    css = web.get(href.group(1))
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")
    assert "max-age=31536000" in css.headers["cache-control"]
    assert web.get("/static/probe/probe.js").status_code == 200
    assert web.get("/static/web/../../settings.py").status_code == 404


def test_pages_follow_the_locale(web: httpx.Client) -> None:
    assert "<h1>Vistoria</h1>" in web.get("/probe/form?locale=pt_BR").text
    assert '<html lang="es-AR">' in web.get("/probe/form?locale=es_AR").text
    assert "<h1>Inspection</h1>" in web.get("/probe/form?locale=xx").text
