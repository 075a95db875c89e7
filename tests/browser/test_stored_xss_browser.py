"""Issue 21 §2: a consumer's uploaded file never runs as script in a staff member's browser.

The attack, as the security probe made it: a magic-link holder uploads `a.js` (declared
`text/javascript`) and then `x.html` (declared `text/html`) whose `<script src>` loads that file
through the dashboard's photo route; an owner signed in to the dashboard opens the HTML. Before
the fix the dashboard served both with their declared types, inline, under the pages' CSP
(`script-src 'self'`), so the script ran as the owner: it read the members page's CSRF token and
invited an attacker as admin.

Now every stored file is served by `server.images.content.stored_file_response`: the HTML and
the script are downloads (`attachment`, type from the bytes), under `default-src 'none';
sandbox` and `nosniff`. The test drives the real consumer pages and the real dashboard in
Chromium and checks that no script ran: the members list is unchanged and the marker the script
sets (the page title) is absent.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

import httpx
import pytest
from playwright.sync_api import Error as PlaywrightError
from sqlmodel import select

from server.dashboard import accounts
from server.db import Database
from server.inspections.tables import ImageRecord
from tests.browser.conftest import submit

PASSWORD = "owner password 1"
ATTACKER = "attacker@evil.example"
MARKER = "script-ran"
TEMPLATE = """template "Paperwork"
    type: goods
    locales: en_US

image front
    side: "front"
    label: "The front"

input script_file
    type: file
    label: "Script file"
    asked at: update

input page_file
    type: file
    label: "Page file"
    asked at: update

verdict
    approve when true
"""

#: What the uploaded script does when it runs as the owner: invite the attacker as admin with
#: the members page's CSRF token, then set the marker.
SCRIPT = """
(async () => {
  try {
    const page = await (await fetch('/dashboard/members')).text();
    const token = page.match(/name="_csrf_token" value="([^"]+)"/)[1];
    const body = new URLSearchParams({_csrf_token: token, email: 'ATTACKER', role: 'admin'});
    await fetch('/dashboard/members/invite', {method: 'POST', body});
  } finally {
    document.title = 'MARKER';
  }
})();
"""
SCRIPT_BYTES = SCRIPT.replace("ATTACKER", ATTACKER).replace("MARKER", MARKER).encode()


@pytest.fixture(scope="module")
def team(db: Database) -> dict[str, Any]:
    from server.auth import create_company

    company = create_company(db, f"Victim Co {secrets.token_hex(2)}", ["driver-1"])
    email = f"owner-{secrets.token_hex(3)}@victim.example.com"
    accounts.create_account(db, company["companyId"], email, "owner", PASSWORD)
    return {**company, "owner": email}


def members(db: Database, team: dict[str, Any]) -> list[str]:
    actor = accounts.Actor(
        account_id="", company_id=team["companyId"], role="owner", email=team["owner"]
    )
    return sorted(row["email"] for row in accounts.list_accounts(db, actor))


def stored_file_id(db: Database, inspection_id: str, filename: str) -> str:
    with db.session() as session:
        row = session.exec(
            select(ImageRecord).where(
                ImageRecord.inspection_id == inspection_id, ImageRecord.filename == filename
            )
        ).one()
        return str(row.id)


def upload_through_the_consumer_pages(page: Any, step_url: str, label: str, name: str,
                                      mime: str, data: bytes) -> None:  # fmt: skip
    page.goto(step_url)
    control = page.locator("[data-field]", has_text=label).locator("input").first
    control.set_input_files({"name": name, "mimeType": mime, "buffer": data})
    submit(page)  # through the outbox, which moves on once the server answered


def test_an_uploaded_html_file_runs_no_script_in_the_dashboard(
    live_server: str, db: Database, team: dict[str, Any], new_phone: Any, screenshot: Any
) -> None:
    headers = {"x-api-key": team["testKey"]}
    with httpx.Client(base_url=live_server, headers=headers, timeout=30) as api:
        made = api.post("/v1/inspection/template", json={"source": TEMPLATE})
        assert made.status_code == 201, made.text
        created = api.post(
            "/v1/inspection/goods",
            json={
                "templateId": made.json()["_id"],
                "locale": "en_US",
                "delivery": {"channel": "email", "destination": "ana@example.com"},
                "goods": {"description": "Papers", "quantity": 1},
            },
        )
        assert created.status_code == 201, created.text
    inspection_id, magic_link = created.json()["inspectionId"], created.json()["magicLink"]
    before = members(db, team)

    # The consumer: consent, then the two files through the details step.
    _c, consumer, _l = new_phone()
    consumer.goto(magic_link)
    consumer.check("input[name=consent]")
    consumer.click("button[type=submit]")
    details = f"{live_server}/i/{inspection_id}/step/details"
    upload_through_the_consumer_pages(
        consumer, details, "Script file", "a.js", "text/javascript", SCRIPT_BYTES
    )
    script_id = stored_file_id(db, inspection_id, "a.js")
    script_src = f"/dashboard/inspections/{inspection_id}/photos/{script_id}"
    html = f'<!doctype html><title>x</title><script src="{script_src}"></script>'.encode()
    upload_through_the_consumer_pages(consumer, details, "Page file", "x.html", "text/html", html)
    page_id = stored_file_id(db, inspection_id, "x.html")

    # The owner, signed in, opens the HTML file's dashboard link.
    _c2, owner, _l2 = new_phone(width=360)
    owner.goto(f"{live_server}/dashboard/sign-in")
    owner.get_by_label("Email").fill(team["owner"])
    owner.get_by_label("Password").fill(PASSWORD)
    owner.get_by_role("button", name="Sign in").click()
    owner.wait_for_url(f"{live_server}/dashboard/inspections")
    html_url = f"{live_server}/dashboard/inspections/{inspection_id}/photos/{page_id}"
    with contextlib.suppress(PlaywrightError):  # a download now: Chromium aborts it
        owner.goto(html_url)
    # Wait up to 3 s for the marker (read through the DevTools protocol: a string predicate
    # evaluated in the page would itself be refused by the dashboard's CSP).
    for _tick in range(30):
        if owner.title() == MARKER:
            break
        owner.wait_for_timeout(100)
    screenshot(owner, "owner-opened-uploaded-html")
    assert ATTACKER not in members(db, team)
    assert members(db, team) == before
    assert owner.title() != MARKER

    # What the owner's browser got for each file.
    for file_id, name in ((page_id, "x.html"), (script_id, "a.js")):
        response = owner.request.get(
            f"{live_server}/dashboard/inspections/{inspection_id}/photos/{file_id}"
        )
        assert response.status == 200
        got = response.headers
        assert got["content-type"] == "application/octet-stream", name
        assert got["content-disposition"].startswith("attachment;"), name
        assert got["content-security-policy"] == "default-src 'none'; sandbox", name
        assert got["x-content-type-options"] == "nosniff", name
        assert got["cache-control"] == "private, max-age=300", name  # not the pages' no-store too
