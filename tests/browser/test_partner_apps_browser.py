"""Partner applications in a real Chromium at 360 px: the partner's owner registers an application
and copies its credentials; a member of another company, browsing in Spanish, follows the
application's link, signs in, sees the consent page in es_AR and allows it (the browser goes back
to the application with a code, which the library's exchange turns into a token that works);
asked again, refuses (back with `access_denied`); then revokes the authorization on "Connected
apps", and the token stops at once. The application's callback is a small real HTTP server on
this machine (a redirect URI may be http only to localhost), which records where the browser was
sent. Every page passes axe-core and is saved under tests/artifacts/."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from server.auth import create_company
from server.dashboard import accounts
from tests.browser.test_dashboard_browser import look, sign_in

PASSWORD = "member password 1"


@pytest.fixture(scope="module")
def people(db: Any) -> dict[str, Any]:
    partner = create_company(db, f"Broker {secrets.token_hex(2)}")
    dealer = create_company(db, f"Concesionaria Sur {secrets.token_hex(2)}")
    emails = {
        "partner": f"owner-{secrets.token_hex(3)}@broker.example",
        "member": f"vendedora-{secrets.token_hex(3)}@sur.example",
    }
    accounts.create_account(db, partner["companyId"], emails["partner"], "owner", PASSWORD)
    accounts.create_account(db, dealer["companyId"], emails["member"], "editor", PASSWORD)
    return {"partner": partner, "dealer": dealer, "emails": emails}


@pytest.fixture
def partner_site() -> Iterator[tuple[str, list[str]]]:
    """The application's own site, a real HTTP server on this machine: its callback URL and
    every path the browser was sent to."""
    seen: list[str] = []

    class Callback(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/oauth/callback"):  # not the browser's /favicon.ico
                seen.append(self.path)
            body = b"<!doctype html><html lang=en><title>Broker</title><h1>Broker</h1></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Callback)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{server.server_address[1]}/oauth/callback", seen
    server.shutdown()
    server.server_close()
    thread.join()


def test_consent_approval_refusal_and_revocation(
    live_server: str,
    people: dict[str, Any],
    partner_site: tuple[str, list[str]],
    new_phone: Any,
    screenshot: Any,
    axe_check: Any,
) -> None:
    callback, sent_back = partner_site
    # The partner's owner registers the application on the Developers page.
    _context, owner, _log = new_phone(width=360)
    sign_in(owner, live_server, people["emails"]["partner"], PASSWORD)
    owner.goto(f"{live_server}/dashboard/developers")
    owner.locator("#partner-apps").click()
    owner.wait_for_load_state()
    owner.get_by_label("Name members will see").fill("Broker Seguros")
    owner.get_by_label("Redirect URIs, one per line (exact match)").fill(callback)
    owner.locator("#register-app").click()
    owner.wait_for_load_state()
    look(owner, "01-application-registered", screenshot, axe_check)
    credentials = {
        "client_app_id": owner.locator("#client-id").inner_text(),
        "client_secret": owner.locator("#client-secret").inner_text(),
    }
    assert credentials["client_secret"].startswith("pas_")

    # A member of another company, browsing in Spanish, follows the application's link.
    _context, member, _log = new_phone(locale="es-AR", width=360)
    link = (
        f"{live_server}/dashboard/oauth/authorize?response_type=code"
        f"&client_id={credentials['client_app_id']}&state=abc123"
    )
    member.goto(link)
    assert "/dashboard/sign-in" in member.url
    member.get_by_label("Correo electrónico").fill(people["emails"]["member"])
    member.get_by_label("Contraseña").fill(PASSWORD)
    member.get_by_role("button", name="Iniciar sesión").click()
    member.wait_for_load_state()
    assert "/dashboard/oauth/authorize" in member.url
    heading = member.get_by_role("heading", level=1).inner_text()
    assert heading == "Broker Seguros quiere actuar en tu nombre"
    asked = member.locator("#asked-scopes").inner_text()
    assert "Crear inspecciones por vos" in asked and "Leer las inspecciones" in asked
    look(member, "02-consent-es_AR", screenshot, axe_check)

    member.get_by_role("button", name="Permitir").click()
    member.wait_for_load_state()
    assert member.url.startswith(callback + "?")
    approved = parse_qs(urlsplit(sent_back[-1]).query)
    assert sent_back[-1].startswith("/oauth/callback?") and approved["state"] == ["abc123"]
    key = {"x-api-key": people["partner"]["testKey"]}
    with httpx.Client(base_url=live_server, timeout=30) as api:
        granted = api.post(
            "/v1/account/oauth/exchange_code",
            json={"code": approved["code"][0], **credentials},
            headers=key,
        )
        assert granted.status_code == 200, granted.text
        bearer = {"Authorization": f"Bearer {granted.json()['access_token']}", **key}
        mine = api.get("/v1/account/membership/authenticated", headers=bearer)
        assert mine.status_code == 200 and mine.json()[0]["role"] == "editor"

        # Asked again, the member refuses: the application learns it, and gets no code.
        member.goto(link)
        member.wait_for_load_state()
        member.get_by_role("button", name="Rechazar").click()
        member.wait_for_load_state()
        refused = parse_qs(urlsplit(sent_back[-1]).query)
        assert refused["error"] == ["access_denied"] and "code" not in refused

        # A link with a redirect URI the application did not register: said, not followed.
        member.goto(f"{link}&redirect_uri=https%3A%2F%2Fevil.example%2F")
        member.wait_for_load_state()
        assert member.locator("#oauth-error-code").inner_text() == "invalid_redirect_uri"
        look(member, "03-wrong-redirect-es_AR", screenshot, axe_check)
        assert len(sent_back) == 2

        # "Aplicaciones conectadas": the member revokes, and the token stops at once.
        member.get_by_role("link", name="Aplicaciones conectadas").click()
        member.wait_for_load_state()
        assert "Broker Seguros" in member.locator("#authorizations").inner_text()
        look(member, "04-connected-apps-es_AR", screenshot, axe_check)
        member.get_by_role("button", name="Revocar Broker Seguros").click()
        member.wait_for_load_state()
        assert member.get_by_role("status").inner_text().startswith("Revocada")
        look(member, "05-revoked-es_AR", screenshot, axe_check)
        ended = api.get("/v1/account/membership/authenticated", headers=bearer)
        assert ended.status_code == 401 and ended.json()["code"] == "invalid_token"
