"""Issue 35: a share link that is altered, expired or revoked opens a page in the reader's
language (the browser's `Accept-Language`: en_US, es_AR, pt_BR) saying why, with a 403; a
client asking for JSON at the same URL gets the API's error object. Opened in a real Chromium in
three locales, at the share URL and at the presigned JSON URL (which sends a browser to the
page); screenshots under tests/artifacts/test_share_refusals/."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from server.auth import AuthContext
from server.db import Database

#: What each refusal says, by the browser's language (the heading, then the reason).
SAID = {
    "en-US": ("Link not available", {
        "invalid_link": "This link is not valid. Check that it was copied whole.",
        "link_expired": "This link has expired. Ask whoever sent it for a new one.",
        "link_revoked": "This link was revoked by the company that made it.",
    }),
    "es-AR": ("Enlace no disponible", {
        "invalid_link": "Este enlace no es válido. Revisá que se haya copiado completo.",
        "link_expired": "Este enlace venció. Pedile uno nuevo a quien te lo envió.",
        "link_revoked": "La empresa que creó este enlace lo revocó.",
    }),
    "pt-BR": ("Link indisponível", {
        "invalid_link": "Este link não é válido. Confira se foi copiado inteiro.",
        "link_expired": "Este link expirou. Peça um novo a quem o enviou.",
        "link_revoked": "A empresa que criou este link o revogou.",
    }),
}  # fmt: skip


@pytest.fixture(scope="module")
def links(db: Database, settings: Any, live_server: str) -> Iterator[dict[str, str]]:
    """Share page URLs of one inspection: altered, expired and revoked."""
    from server.auth import create_company
    from server.inspections import presign, shares

    company = create_company(db, f"Refusal Seguros {secrets.token_hex(2)}", ["agent-1"])
    with httpx.Client(
        base_url=live_server, headers={"x-api-key": company["testKey"]}, timeout=60
    ) as api:
        created = api.post(
            "/v1/inspection/car",
            json={
                "templateId": "easy",
                "locale": "en_US",
                "car": {"plate": "AB123CD"},
                "delivery": {"disabled": True},
            },
        )
        assert created.status_code == 201, created.text
    inspection_id = created.json()["inspectionId"]
    auth = AuthContext(company_id=company["companyId"], mode="test", key_id="test")
    now = datetime.now(UTC)
    good = shares.create(db, settings, auth, inspection_id, "someone", now)
    altered = good.url[:-3] + ("xyz" if not good.url.endswith("xyz") else "abc")
    old = presign.presign_link(db, settings, auth, inspection_id, 60, now - timedelta(days=2))
    expired = shares.page_url(live_server, inspection_id, old.accessToken)
    revoked = shares.create(db, settings, auth, inspection_id, "someone", now - timedelta(hours=1))
    assert shares.revoke(db, auth, inspection_id, revoked.id, now)
    yield {"invalid_link": altered, "link_expired": expired, "link_revoked": revoked.url}


@pytest.mark.parametrize("locale", list(SAID))
def test_a_refused_link_is_a_page_in_the_readers_language(
    links: dict[str, str], new_phone: Any, screenshot: Any, axe_check: Any, locale: str
) -> None:
    heading, reasons = SAID[locale]
    _context, page, _log = new_phone(locale=locale, width=1280)
    for code, url in links.items():
        for opened in (url, url.replace("/share/", "/v1/inspection/presign/detail/")):
            answer = page.goto(opened)
            assert answer is not None and answer.status == 403, (code, opened)
            assert "/share/" in page.url  # the JSON URL sends a browser to the page
            assert page.get_attribute("html", "lang") == locale
            assert page.inner_text("h1") == heading
            assert page.inner_text("[role=alert]") == reasons[code]
        screenshot(page, f"{code}-{locale}")
    axe_check(page, f"share-refused-{locale}")


@pytest.mark.parametrize("accept", ["application/json", "application/json, text/html;q=0.5"])
def test_a_client_asking_for_json_gets_the_error_object(links: dict[str, str], accept: str) -> None:
    for code, url in links.items():
        answer = httpx.get(url, headers={"accept": accept, "accept-language": "es-AR"})
        assert answer.status_code == 403, (code, answer.text)
        assert answer.headers["content-type"].startswith("application/json")
        assert answer.json()["code"] == code
