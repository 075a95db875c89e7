"""The daily work of an operations team in a real Chromium, at a desktop width (1280 px) and a
phone's (360 px): find an inspection by a name typed without accents and by part of a plate,
filter and sort, export; read one inspection; open its share link as a person outside the company
would. Every page passes axe-core (no serious or critical violation), fits the width, and is
saved under tests/artifacts/test_dashboard_work/ for a person to look at."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
import pytest

from server.dashboard import accounts
from tests.browser.test_dashboard_browser import png

PASSWORD = "owner password 1"
PEOPLE = [
    ("Ana", "Pérez", "20111222", "ana.perez@correo.com.ar", "AB123CD", "POL-7788"),
    ("João", "Gonçalves", "30999888", "joao@exemplo.com.br", "XYZ9K87", "POL-1234"),
    ("María José", "Núñez de la Cruz", "27555666", "mj@example.com", "AC456FG", "POL-5555"),
]
WIDTHS = {"desktop": 1280, "phone": 360}


@pytest.fixture(scope="module")
def settings(settings: Any) -> Any:
    """The in-process worker on: deliveries and reports happen."""
    return settings.model_copy(update={"worker": True})


@pytest.fixture(scope="module")
def team(db: Any, live_server: str) -> dict[str, Any]:
    from server.auth import create_company

    company = create_company(db, f"Seguros del Plata {secrets.token_hex(2)}", ["driver-1"])
    email = f"ops-{secrets.token_hex(3)}@seguros.example.com"
    accounts.create_account(db, company["companyId"], email, "owner", PASSWORD)
    ids = []
    with httpx.Client(base_url=live_server, timeout=60,
                      headers={"x-api-key": company["testKey"]}) as api:  # fmt: skip
        for first, last, identification, mail, plate, policy in PEOPLE:
            created = api.post(
                "/v1/inspection/car",
                json={
                    "templateId": "easy",
                    "locale": "es_AR",
                    "consumer": {"firstName": first, "lastName": last,
                                 "identification": identification, "email": mail},
                    "metadata": {"poliza": policy},
                    "delivery": {"channel": "email", "destination": mail},
                    "car": {"plate": plate, "make": "Toyota", "model": "Corolla", "year": 2019},
                },
            )  # fmt: skip
            assert created.status_code == 201, created.text
            ids.append(created.json()["inspectionId"])
            product = created.json()["productId"]
        # The last one finished with a photo.
        assert api.post(f"/v1/inspection/{ids[-1]}/start").status_code == 200
        uploaded = api.post(
            f"/v1/inspection/image/{product}",
            files={"image": ("front.png", png(), "image/png"), "data": (None, '{"side": "front"}')},
        )
        assert uploaded.status_code in (200, 201), uploaded.text
        assert api.post(f"/v1/inspection/finish/{ids[-1]}").status_code == 200
    return {**company, "email": email, "ids": ids}


def fits(page: Any, width: int) -> None:
    scroll = page.evaluate("() => document.documentElement.scrollWidth")
    assert scroll <= width + 1, f"{page.url} is {scroll}px wide at {width}px"


def look(page: Any, name: str, width: int, screenshot: Any, axe_check: Any) -> None:
    fits(page, width)
    axe_check(page, name)
    screenshot(page, name)


def signed_in_page(new_phone: Any, base: str, email: str, width: int, locale: str = "en-US") -> Any:
    _context, page, _log = new_phone(locale=locale, width=width)
    page.goto(f"{base}/dashboard/sign-in")
    page.locator("#email").fill(email)
    page.locator("#password").fill(PASSWORD)
    page.locator("form.stack button[type=submit]").click()
    page.wait_for_url("**/dashboard/inspections")
    return page


@pytest.mark.parametrize("size", list(WIDTHS))
def test_find_read_and_share(
    new_phone: Any, live_server: str, team: dict[str, Any], size: str, screenshot: Any,
    axe_check: Any,
) -> None:  # fmt: skip
    width = WIDTHS[size]
    page = signed_in_page(new_phone, live_server, team["email"], width)
    look(page, f"{size}-01-list", width, screenshot, axe_check)
    assert page.locator("table.inspections tbody tr").count() == 3

    page.locator("#f-q").fill("nunez de la cruz")
    page.locator("form.search .search-row button").click()
    page.wait_for_url("**q=nunez*")
    rows = page.locator("table.inspections tbody tr")
    assert rows.count() == 1 and "Núñez de la Cruz" in rows.first.inner_text()
    look(page, f"{size}-02-search-name", width, screenshot, axe_check)

    page.goto(f"{live_server}/dashboard/inspections?q=b12&sort=plate&status=created")
    assert page.locator("table.inspections tbody tr").count() == 1
    assert page.locator("details.more-filters").get_attribute("open") is not None
    look(page, f"{size}-03-search-plate-filtered", width, screenshot, axe_check)

    page.goto(f"{live_server}/dashboard/inspections/{team['ids'][-1]}")
    head = page.locator(".inspection-head").inner_text()
    assert "Disapproved" in head or "Approved" in head
    assert "Núñez de la Cruz" in page.locator("#h-consumer + dl").inner_text()
    assert "AC456FG" in page.locator("#h-product + dl").inner_text()
    # Validations by their names for people, not `complete` or `date`.
    names = page.locator("table.validations tbody td:first-child").all_inner_texts()
    assert "Photo opens and is large enough" in names and "complete" not in names, names
    # The template source keeps its indentation.
    lines = page.locator(".source li code").all_inner_texts()
    assert any(line.startswith("    ") and line.strip() for line in lines), lines[:10]
    look(page, f"{size}-04-detail", width, screenshot, axe_check)

    page.locator(
        "#h-share ~ form button, section[aria-labelledby=h-share] form button"
    ).last.click()
    page.wait_for_selector("#share-link")
    url = page.locator("#share-link").input_value()
    look(page, f"{size}-05-detail-shared", width, screenshot, axe_check)
    _context, outsider, _log = new_phone(locale="es-AR", width=width)
    outsider.goto(url)
    assert "AC456FG" in outsider.content()
    assert "La foto abre y es lo bastante grande" in outsider.content()  # es_AR inspection
    look(outsider, f"{size}-06-share-page", width, screenshot, axe_check)
    outsider.goto(f"{live_server}/")
    look(outsider, f"{size}-07-home", width, screenshot, axe_check)


def test_spanish_pages_and_the_simulator(
    new_phone: Any, live_server: str, team: dict[str, Any], screenshot: Any, axe_check: Any
) -> None:
    """A member whose browser speaks Spanish: the list, one inspection and the template editor
    in es_AR; the simulator's first script runs to a verdict."""
    page = signed_in_page(new_phone, live_server, team["email"], 360, locale="es-AR")
    assert page.locator("h1").inner_text() == "Inspecciones"
    look(page, "es-01-list", 360, screenshot, axe_check)
    page.goto(f"{live_server}/dashboard/inspections/{team['ids'][-1]}")
    assert page.get_by_role("heading", name="Por qué este veredicto").count() == 1
    look(page, "es-02-detail", 360, screenshot, axe_check)
    from inspectlang.builtins import ALIAS_TABLE

    page.goto(f"{live_server}/dashboard/templates/new?start={ALIAS_TABLE['easy']['car']}")
    # The editor's script speaks the page's language too.
    page.locator("#source").press("End")
    page.locator("#source").type(" ")
    page.wait_for_function(
        "() => document.querySelector('#check-status').textContent.includes('Sin problemas')"
    )
    page.locator("#simulate-button").click()
    result = page.locator("#simulate-result")
    result.wait_for(state="visible")
    page.wait_for_function(
        "() => document.querySelector('#simulate-result').textContent.includes('#1 create')"
    )
    ran = result.inner_text()
    assert "first event must be create" not in ran and "rechazado" not in ran, ran
    # The step lines in the page's language (issue 33), not `inspectlang simulate`'s English.
    assert "#3 finish: Completada" in ran and "status=" not in ran, ran
    look(page, "es-03-editor-simulated", 360, screenshot, axe_check)
    for path, heading, name in (
        ("members", "Miembros", "es-04-members"),
        ("developers", "Desarrolladores", "es-05-developers"),
    ):
        page.goto(f"{live_server}/dashboard/{path}")
        assert page.locator("h1").inner_text() == heading
        look(page, name, 360, screenshot, axe_check)
