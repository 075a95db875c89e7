"""One inspection in the dashboard, laid out for a person who decides in a minute: the verdict
and reasons first; the declared product, the consumer, the metadata and the link's delivery (with
a resend); each verdict condition once, as its own text with the values it read named by their
own text (what `inspectlang simulate` prints); the template source with its indentation."""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from server.dashboard import accounts
from server.dashboard.inspection_pages import span_text
from tests.server.test_dashboard_pages import PASSWORD, Browserish


def test_span_text_cuts_one_line_or_joins_several() -> None:
    lines = ["check a", "    valid when: x > 1 and", "        y < 2"]
    assert span_text(lines, [2, 17, 2, 22]) == "x > 1"
    assert span_text(lines, [2, 17, 3, 14]) == "x > 1 and y < 2"
    assert span_text(lines, [9, 1, 9, 2]) == ""
    assert span_text(lines, []) == ""


@pytest.fixture(scope="module")
def opened(live_server: str, db: Any) -> Iterator[dict[str, Any]]:
    from server.auth import create_company

    company = create_company(db, f"Detail {secrets.token_hex(3)}", ["m"])
    email = f"owner-{secrets.token_hex(3)}@example.com"
    accounts.create_account(db, company["companyId"], email, "owner", PASSWORD)
    headers = {"x-api-key": company["testKey"]}
    body = {
        "templateId": "easy",
        "locale": "es_AR",
        "consumer": {"firstName": "Ana", "lastName": "Pérez", "identification": "20111222",
                     "email": "ana.perez@correo.com.ar", "phone": "+5491155554444"},
        "metadata": {"poliza": "POL-7788", "sucursal": "Córdoba"},
        "delivery": {"channel": "email", "destination": "ana.perez@correo.com.ar"},
        "car": {"plate": "AB123CD", "make": "Toyota", "model": "Corolla", "year": 2019},
    }  # fmt: skip
    made = httpx.post(f"{live_server}/v1/inspection/car", json=body, headers=headers)
    assert made.status_code == 201, made.text
    client = Browserish(live_server)
    assert client.sign_in(email).status_code == 303
    yield {"id": made.json()["inspectionId"], "client": client, "headers": headers}
    client.http.close()


def _facts(page: str, heading: str) -> dict[str, str]:
    section = page.split(f">{heading}</h2>", 1)[1].split("</section>", 1)[0]
    pairs = re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", section, re.S)
    return {html.unescape(k).strip(): html.unescape(re.sub("<[^>]+>", "", v)).strip()
            for k, v in pairs}  # fmt: skip


def test_the_facts_a_person_decides_on(opened: dict[str, Any]) -> None:
    page = opened["client"].get(f"/dashboard/inspections/{opened['id']}").text
    assert _facts(page, "Declared product") == {
        "Plate": "AB123CD", "Make": "Toyota", "Model": "Corolla", "Year": "2019",
    }  # fmt: skip
    consumer = _facts(page, "Consumer")
    assert consumer["Name"] == "Ana Pérez" and consumer["Identification"] == "20111222"
    assert consumer["Email"] == "ana.perez@correo.com.ar" and consumer["Phone"] == "+5491155554444"
    assert consumer["poliza"] == "POL-7788" and consumer["sucursal"] == "Córdoba"
    delivery = _facts(page, "Link delivery")
    assert delivery["Channel"] == "email"
    assert "ana.perez@correo.com.ar" not in delivery["Destination"]  # masked
    assert delivery["Attempts"] in ("0", "1")
    assert "Send the link again" in page


def test_resend_from_the_page(opened: dict[str, Any]) -> None:
    client = opened["client"]
    client.get(f"/dashboard/inspections/{opened['id']}")
    answer = client.post(f"/dashboard/inspections/{opened['id']}/resend")
    assert answer.status_code == 200
    assert "The link was queued again" in answer.text
    assert client.post("/dashboard/inspections/000000000000000000000000/resend").status_code == 404


def test_each_condition_once_with_its_own_text(opened: dict[str, Any]) -> None:
    client = opened["client"]
    for path in ("start", f"finish/{opened['id']}"):
        target = (
            f"/v1/inspection/{opened['id']}/start" if path == "start" else f"/v1/inspection/{path}"
        )
        assert (
            httpx.post(client.http.base_url.join(target), headers=opened["headers"]).status_code
            == 200
        )
    page = client.get(f"/dashboard/inspections/{opened['id']}").text
    texts = [html.unescape(t) for t in re.findall(r'<p class="cond-text"><code>(.*?)</code>', page)]
    # The built-in `easy` template: one disapproval, an approval, one check.
    assert "not checks.live_photos" in texts
    assert "approved_photos = 4" in texts
    assert not [t for t in texts if t.startswith(("disapprove", "check "))], texts
    assert len(texts) == len(set(texts))
    # The approval's `otherwise` reason is said as such, not as the approval's label.
    assert "Otherwise: “Some photos of the car were not approved”" in html.unescape(page)
    values = re.findall(r'<dl class="values">(.*?)</dl>', page, re.S)
    for block in values:
        names = re.findall(r"<dt><code>(.*?)</code></dt>", block)
        assert len(names) == len(set(names)), names
    assert "<dt><code>approved_photos</code></dt><dd>0</dd>" in page


def test_reasons_in_the_readers_language(opened: dict[str, Any]) -> None:
    """Issue 25: the API's reasons are in the inspection's locale (es_AR here); the page says
    them in the member's language, the missing photos named by that language's labels."""
    client = opened["client"]
    document = httpx.get(
        client.http.base_url.join(f"/v1/inspection/{opened['id']}"), headers=opened["headers"]
    ).json()
    assert document["veredict"] == "disapproved", document
    assert document["reasons"][0].startswith("Falta la foto obligatoria: "), document["reasons"]

    def shown() -> list[str]:
        page = client.get(f"/dashboard/inspections/{opened['id']}").text
        block = page.split('<ul class="reasons"', 1)[1].split("</ul>", 1)[0]
        return [html.unescape(r) for r in re.findall(r"<li>(.*?)</li>", block)]

    assert shown()[0].startswith("Required photo not uploaded: "), shown()
    assert len(shown()) == len(document["reasons"])
    try:
        client.get(f"/dashboard/inspections/{opened['id']}")
        client.post("/dashboard/language", data={"locale": "pt_BR", "next": "/dashboard/"})
        assert shown()[0].startswith("Foto obrigatória não enviada: "), shown()
        client.get(f"/dashboard/inspections/{opened['id']}")
        client.post("/dashboard/language", data={"locale": "es_AR", "next": "/dashboard/"})
        assert shown() == document["reasons"]
    finally:
        client.get(f"/dashboard/inspections/{opened['id']}")
        client.post("/dashboard/language", data={"locale": "en_US", "next": "/dashboard/"})


def test_source_keeps_its_indentation(opened: dict[str, Any]) -> None:
    page = opened["client"].get(f"/dashboard/inspections/{opened['id']}").text
    assert '<li id="line-7"><code>    type: car</code></li>' in page


def _share(client: Browserish, inspection_id: str) -> tuple[str, str]:
    client.get(f"/dashboard/inspections/{inspection_id}")
    made = client.post(f"/dashboard/inspections/{inspection_id}/share")
    assert made.status_code == 200
    found = re.search(r'readonly value="([^"]+)" class="wide" id="share-link"', made.text)
    assert found is not None, made.text[-3000:]
    return html.unescape(found.group(1)), made.text


def test_share_link_opens_a_readable_page_and_the_json_stays(opened: dict[str, Any]) -> None:
    client = opened["client"]
    url, _page = _share(client, opened["id"])
    assert f"/share/{opened['id']}?token=" in url
    page = httpx.get(url)  # no session, no key: the link alone
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    text = html.unescape(page.text)
    assert 'lang="es-AR"' in page.text  # the inspection's language
    assert "AB123CD" in text and "Ana Pérez" in text
    assert "Sent" not in text and "Send the link again" not in text  # read-only: no actions
    assert "<form" not in page.text
    json_url = url.replace("/share/", "/v1/inspection/presign/detail/")
    as_json = httpx.get(json_url)
    assert as_json.status_code == 200 and as_json.json()["_id"] == opened["id"]
    # The same URL opened by a browser (HTML first) is the page; JSON or no preference: JSON.
    browser_accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    in_browser = httpx.get(json_url, headers={"accept": browser_accept}, follow_redirects=True)
    assert in_browser.headers["content-type"].startswith("text/html")
    assert "AB123CD" in in_browser.text and in_browser.url.path.startswith("/share/")
    for accept in ("application/json", "*/*", "application/json, text/html", "text/html;q=0"):
        answered = httpx.get(json_url, headers={"accept": accept})
        assert answered.status_code == 200 and answered.json()["_id"] == opened["id"], accept


def test_share_links_are_listed_and_revocable(opened: dict[str, Any]) -> None:
    client = opened["client"]
    url, page = _share(client, opened["id"])
    ids = re.findall(r"/share/([0-9a-f]{12})/revoke", page)
    assert ids, "the new link is listed with a revoke button"
    token = url.split("token=", 1)[1]
    from server.tokens import hash_token

    mine = hash_token(token)[:12]
    assert mine in ids
    revoked = client.post(f"/dashboard/inspections/{opened['id']}/share/{mine}/revoke")
    assert revoked.status_code == 200 and "was revoked" in revoked.text
    assert f'action="/dashboard/inspections/{opened["id"]}/share/{mine}/revoke"' not in revoked.text
    refused = httpx.get(url)
    assert refused.status_code == 403 and "revoked" in refused.text
    json_url = url.replace("/share/", "/v1/inspection/presign/detail/")
    assert httpx.get(json_url).json()["code"] == "link_revoked"
    again = client.post(f"/dashboard/inspections/{opened['id']}/share/{mine}/revoke")
    assert again.status_code == 404
    assert client.post(f"/dashboard/inspections/{opened['id']}/share/zz/revoke").status_code == 404


@pytest.mark.parametrize(("tamper", "code"), [("x", "invalid_link"), ("", "invalid_link")])
def test_altered_share_links_are_refused_with_a_page(
    opened: dict[str, Any], tamper: str, code: str
) -> None:
    url, _page = _share(opened["client"], opened["id"])
    broken = url[:-3] + tamper if tamper else url.split("?", 1)[0]
    answer = httpx.get(broken)
    assert answer.status_code == 403
    assert "not valid" in answer.text and answer.headers["content-type"].startswith("text/html")


def test_home_page_in_development(live_server: str) -> None:
    answer = httpx.get(f"{live_server}/", headers={"accept-language": "en"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
    for link in ('href="/dashboard/"', 'href="/schema"', 'href="/dev/outbox"'):
        assert link in answer.text


def test_home_page_in_production_names_nothing_internal(settings: Any, db: Any) -> None:
    from litestar.testing import TestClient

    from server.app import create_app

    production = settings.model_copy(update={"env": "production"})
    with TestClient(create_app(production, db=db)) as client:
        answer = client.get("/")
    assert answer.status_code == 200 and "The service is running." in answer.text
    assert "/dev/outbox" not in answer.text and "/schema" not in answer.text


def test_a_member_chooses_the_language_of_their_pages(live_server: str, db: Any) -> None:
    from server.auth import create_company

    company = create_company(db, f"Idioma {secrets.token_hex(3)}", ["m"])
    email = f"es-{secrets.token_hex(3)}@example.com"
    accounts.create_account(db, company["companyId"], email, "viewer", PASSWORD)
    made = httpx.post(
        f"{live_server}/v1/inspection/car",
        json={"templateId": "easy", "locale": "es_AR",
              "delivery": {"channel": "email", "destination": "a@example.com"},
              "car": {"plate": "AB123CD"}},
        headers={"x-api-key": company["testKey"]},
    )  # fmt: skip
    assert made.status_code == 201
    client = Browserish(live_server)
    try:
        assert client.sign_in(email).status_code == 303
        # No choice yet: the browser's language.
        page = client.http.get("/dashboard/inspections", headers={"accept-language": "pt-BR"})
        assert 'lang="pt-BR"' in page.text and "Vistorias" in page.text
        client.get("/dashboard/inspections")
        chosen = client.post(
            "/dashboard/language",
            data={"locale": "es_AR", "next": "/dashboard/inspections?q=ab"},
        )
        assert chosen.status_code == 303
        assert chosen.headers["location"] == "/dashboard/inspections?q=ab"
        # The choice wins over the browser's language, on every page.
        page = client.http.get("/dashboard/inspections", headers={"accept-language": "en-US"})
        text = html.unescape(page.text)
        assert 'lang="es-AR"' in page.text
        for word in ("Inspecciones", "Buscar", "Patente o producto", "Sin veredicto", "Lector"
                     .lower()):  # fmt: skip
            assert word in text, word
        # Dates by Babel in the member's language ("25 nov 2026" style, not "Nov 25").
        detail = html.unescape(
            client.get(f"/dashboard/inspections/{made.json()['inspectionId']}").text
        )
        assert re.search(r"creada el \d{1,2} [a-z]{3,4}\.? \d{4}", detail), detail[:3000]
        assert "Por qué este veredicto" in detail
        # A redirect elsewhere is not followed.
        outside = client.post(
            "/dashboard/language", data={"locale": "pt_BR", "next": "//evil.example"}
        )
        assert outside.headers["location"] == "/dashboard/inspections"
    finally:
        client.http.close()


@pytest.mark.parametrize(
    ("accept", "html"),
    [
        (None, False),
        ("*/*", False),
        ("application/json", False),
        ("application/json, text/html", False),
        ("text/html, application/json", True),
        ("text/html;q=0.5, application/json", False),
        ("text/html;q=0", False),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", True),
        ("application/json;q=0.4, text/html", True),
    ],
)
def test_a_detail_link_answers_html_only_to_who_puts_html_first(
    accept: str | None, html: bool
) -> None:
    from server.inspections.presign import prefers_html

    assert prefers_html(accept) is html
