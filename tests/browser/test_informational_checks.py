"""Issue 33: what people read speaks their language and tells what decides.

A check marked `for information` is told apart from one that decides wherever a person reads
results. One es_AR inspection in review whose deciding check passes and whose
informational check fails: the reviewer's page, the inspection page and the share page, in a
real Chromium at 360 px and at 1280 px, tag the informational check "informativo" (never the
English), show its failure in plain ink (never a refusal's red, never "keeps the inspection from
approval"), and leave the deciding check untagged. The template editor's Simulate panel, in
es_AR, words its step lines and explanation in Spanish (a refused event too), the English of
`inspectlang simulate` nowhere. Screenshots under
tests/artifacts/test_informational_checks/, axe-checked."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from server.dashboard import accounts
from server.db import Database
from tests.browser.test_dashboard_browser import PASSWORD, fits, sign_in
from tests.browser.test_readable_pages import choose_language, photo, upload

TEMPLATE = """
template "Marked check"
    type: car
    locales: en_US, es_AR

settings
    max attempts: 1
    photo age limit: 24 hours
    minimum photo size: 64 x 48

image front
    label: "Front"
    validate recaptured
    validate complete

check known_make
    name: "Known make"
    name es_AR: "Marca conocida"
    valid when: lower(car.make) = "fiat"

check renault_fleet
    name: "Renault fleet"
    name es_AR: "Flota Renault"
    valid when: lower(car.make) = "renault"
    for information

verdict
    disapprove "Unknown make" when not checks.known_make
        reason es_AR: "Marca desconocida"
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
        reason es_AR: "Algunas fotos no se aprobaron"
"""
#: What an es_AR reader must not see of the marks and check names.
ENGLISH = ("for information", "Shown for information", "Renault fleet", "Known make")


@pytest.fixture(scope="module")
def team(db: Database, live_server: str) -> Iterator[dict[str, Any]]:
    from server.auth import create_company

    company = create_company(db, f"Marca Seguros {secrets.token_hex(2)}", ["agent-1"])
    emails = {}
    for role in ("reviewer", "owner"):
        emails[role] = f"{role}-{secrets.token_hex(3)}@marca.example.com"
        accounts.create_account(db, company["companyId"], emails[role], role, PASSWORD)
    with httpx.Client(
        base_url=live_server, headers={"x-api-key": company["testKey"]}, timeout=60
    ) as api:
        saved = api.post("/v1/inspection/template", json={"source": TEMPLATE})
        assert saved.status_code == 201, saved.text
        created = api.post(
            "/v1/inspection/car",
            json={
                "templateId": saved.json()["_id"],
                "locale": "es_AR",
                "car": {"plate": "AB123CD", "make": "Fiat"},
                "consumer": {"firstName": "Ana", "lastName": "Paz"},
                "delivery": {"disabled": True},
            },
        )
        assert created.status_code == 201, created.text
        upload(api, created.json()["productId"], "front", photo((170, 40, 40)))
        inspection_id = created.json()["inspectionId"]
        finished = api.post(f"/v1/inspection/finish/{inspection_id}").json()
        assert finished["status"] == "review"
        # The deciding check passes (a Fiat), the informational one fails (not a Renault).
        checks = {g["name"]: g["valid"] for g in finished["globalValidations"]}
        assert checks == {"Marca conocida": True, "Flota Renault": False}
        yield {
            "api": api,
            "emails": emails,
            "inspection": inspection_id,
            "template": saved.json()["_id"],
        }


def marked(page: Any, scope: str) -> None:
    """In `scope`, the informational check carries the es_AR tag and a plain result; the
    deciding one has no tag; no English of the marks is left on the page."""
    informational = page.locator(f"{scope} li", has_text="Flota Renault").first
    tag = informational.locator(".info-tag")
    assert tag.inner_text().strip() == "informativo"
    assert "no decide el veredicto" in (tag.get_attribute("title") or "")
    assert informational.locator(".holds-info").count() == 1
    assert informational.locator(".verdict-disapproved, .holds-false, .decided-tag").count() == 0
    deciding = page.locator(f"{scope} li", has_text="Marca conocida").first
    assert deciding.locator(".info-tag").count() == 0
    # The template's own source (and its conditions' text) is shown as written, for its authors.
    text = page.evaluate(
        """() => { const main = document.querySelector('main').cloneNode(true);
            main.querySelectorAll('[aria-labelledby=h-source], .cond-text, dl.values dt')
                .forEach(e => e.remove());
            return main.textContent; }"""
    )
    for english in ENGLISH:
        assert english not in text, (english, page.url)


@pytest.mark.parametrize("width", [360, 1280])
def test_the_mark_on_every_page_a_person_reads_in_es_ar(
    live_server: str,
    team: dict[str, Any],
    new_phone: Any,
    screenshot: Any,
    axe_check: Any,
    width: int,
) -> None:
    inspection_id = team["inspection"]
    _context, reviewer, _log = new_phone(width=width)
    _context, owner, _log = new_phone(width=width)
    _context, outsider, _log = new_phone(width=width)
    sign_in(reviewer, live_server, team["emails"]["reviewer"])
    sign_in(owner, live_server, team["emails"]["owner"])
    try:
        choose_language(reviewer, live_server, "es_AR")
        reviewer.goto(f"{live_server}/dashboard/review/{inspection_id}")
        reviewer.wait_for_load_state("load")
        marked(reviewer, ".case-info .checks")
        if width == 360:
            fits(reviewer)
        axe_check(reviewer, f"review-{width}")
        screenshot(reviewer, f"01-review-es_AR-{width}")

        choose_language(owner, live_server, "es_AR")
        owner.goto(f"{live_server}/dashboard/inspections/{inspection_id}")
        owner.wait_for_load_state("load")
        # Both where the verdict is explained and in the list of global validations.
        marked(owner, "ol.explain")
        marked(owner, "[aria-labelledby=h-inputs] ul")
        if width == 360:
            fits(owner)
        axe_check(owner, f"inspection-{width}")
        screenshot(owner, f"02-inspection-es_AR-{width}")

        link = team["api"].post(f"/v1/inspection/presign/detail/{inspection_id}", json={})
        assert link.status_code == 200, link.text
        outsider.goto(link.json()["url"])
        outsider.wait_for_load_state("load")
        marked(outsider, "[aria-labelledby=h-checks]")
        if width == 360:
            fits(outsider)
        axe_check(outsider, f"share-{width}")
        screenshot(outsider, f"03-share-es_AR-{width}")
    finally:
        for page in (reviewer, owner):
            choose_language(page, live_server, "en_US")


#: The script run in the editor: a Fiat approved on its front photo, then a start refused.
SCRIPT = {
    "events": [
        {
            "event": "create",
            "body": {"locale": "es_AR", "car": {"plate": "AB123CD", "make": "Fiat"}},
        },
        {"event": "start"},
        {
            "event": "image",
            "image": "front",
            "validations": [{"validation": "recaptured", "confidence": 97, "result": False}],
        },
        {"event": "finish"},
        {"event": "start"},
    ]
}
#: What `inspectlang simulate` says in English; none of it may reach an es_AR panel.
SIMULATE_ENGLISH = (
    "status=", "veredict=", "REFUSED", "Verdict", "reason:", "holds", "Checks:", "Validations",
    "for information", "refused", "(line", "threshold", "required", "Approved", "Completed",
    "Renault fleet", "Known make", "otherwise", "decided",
)  # fmt: skip


@pytest.mark.parametrize("width", [360, 1280])
def test_the_simulate_panel_speaks_es_ar(
    live_server: str,
    team: dict[str, Any],
    new_phone: Any,
    screenshot: Any,
    axe_check: Any,
    width: int,
) -> None:
    _context, owner, _log = new_phone(width=width)
    sign_in(owner, live_server, team["emails"]["owner"])
    try:
        choose_language(owner, live_server, "es_AR")
        owner.goto(f"{live_server}/dashboard/templates/{team['template']}")
        owner.locator("#events").fill(json.dumps(SCRIPT, indent=1))
        owner.locator("#simulate-button").click()
        result = owner.locator("#simulate-result")
        owner.wait_for_function(
            "() => document.querySelector('#simulate-result').textContent.includes('Veredicto:')"
        )
        ran = result.inner_text()
        lines = ran.splitlines()
        assert lines[:5] == [
            "#1 create: Creada, Sin veredicto",
            "#2 start: Iniciada, Sin veredicto",
            "#3 image: Iniciada, Sin veredicto",
            "#4 finish: Completada, Aprobada",
            "#5 start: rechazado, el estado de la inspección no lo permite",
        ], ran
        # Lines as the editor numbers them (a textarea drops the source's first newline).
        for said in (
            "Veredicto: Aprobada (Completada)",
            "Líneas del veredicto:",
            "  desaprobar “Marca desconocida” (línea 27): no se cumple",
            "  aprobar cuando (línea 29): se cumple · decidió el veredicto",
            "Controles:",
            "  Marca conocida (línea 15): pasa",
            "  Flota Renault (línea 20): falla · informativo",
            "      car.make = “Fiat”",
            "Validaciones:",
            "  Frente, No es foto de una pantalla: válida (confianza 97, umbral 80, obligatorio)",
        ):
            assert said in lines, (said, ran)
        for english in SIMULATE_ENGLISH:
            assert english not in ran, (english, ran)
        if width == 360:
            fits(owner)
        axe_check(owner, f"editor-{width}")
        result.scroll_into_view_if_needed()
        screenshot(owner, f"04-simulate-es_AR-{width}")
    finally:
        choose_language(owner, live_server, "en_US")
