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


def test_source_keeps_its_indentation(opened: dict[str, Any]) -> None:
    page = opened["client"].get(f"/dashboard/inspections/{opened['id']}").text
    assert '<li id="line-7"><code>    type: car</code></li>' in page
