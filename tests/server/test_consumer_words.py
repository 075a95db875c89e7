"""Issue 35, the consumer's part: what the pages behind the magic link say (rerun on PostgreSQL
by `make test-postgres`; tests/browser/test_consumer_words_browser.py reads them in Chromium).

- A declined location: the welcome says what declining means, the review before Send says it
  again, and a required `distance` goes to a person (`location_declined`), never red.
- A plate check says what it read, beside what was declared.
- After one retaken photo Continue goes to Send, not through the photos already taken.
- Start without the consent answers the welcome with a message tied to the box.
- A built-in's name and the questions' noun in the consumer's language.
"""

from __future__ import annotations

import io
import json
import re
from typing import Any

import httpx
import pytest
from PIL import Image, ImageDraw

from inspectlang.builtins import builtin_templates
from runtime.state import ValidationRecord
from server.consumer.names import BUILTIN_NAMES
from server.consumer.photos import what_was_read
from server.db import Database
from server.web.templating import gettext

TEMPLATE = """
template "Words car"
    type: car
    locales: en_US, es_AR, pt_BR

settings
    max attempts: 2
    photo distance limit: 500 meters
    minimum photo size: 64 x 48

image front
    label: "Front"
    label es_AR: "Frente"
    validate complete
    validate distance

image back
    label: "Back"
    label es_AR: "Atrás"
    validate complete
    validate distance

image side
    label: "Side"
    optional
    validate complete

input mileage
    type: numeric
    label: "Mileage"
    label es_AR: "Kilometraje"
    asked at: update
    required

verdict
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""


@pytest.fixture(scope="module")
def company(live_server: str, db: Database) -> dict[str, Any]:
    from server.auth import create_company

    made = create_company(db, "Words Seguros", ["member-1"])
    headers = {"x-api-key": made["testKey"]}
    saved = httpx.post(
        f"{live_server}/v1/inspection/template", json={"source": TEMPLATE}, headers=headers
    )
    assert saved.status_code == 201, saved.text
    return {"headers": headers, "template": saved.json()["_id"]}


def create(live_server: str, company: dict[str, Any], locale: str, template: str) -> dict[str, Any]:
    created = httpx.post(
        f"{live_server}/v1/inspection/car",
        json={
            "templateId": template,
            "locale": locale,
            "car": {"plate": "AC321DF"},
            "delivery": {"disabled": True},
        },
        headers=company["headers"],
    )
    assert created.status_code == 201, created.text
    return dict(created.json())


def opened(browser: httpx.Client, created: dict[str, Any]) -> dict[str, str]:
    page = browser.get("/i/" + created["magicLink"].split("/i/", 1)[1], follow_redirects=True)
    token = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
    assert token is not None
    return {"x-csrftoken": token.group(1)}


def photo() -> bytes:
    image = Image.new("RGB", (800, 600), (120, 90, 60))
    ImageDraw.Draw(image).rectangle((200, 150, 600, 450), fill=(20, 20, 20))
    out = io.BytesIO()
    image.save(out, "JPEG")
    return out.getvalue()


def send_photo(
    browser: httpx.Client, csrf: dict[str, str], inspection_id: str, slot: str, **data: Any
) -> None:
    """A photo of `slot` as the page sends it (`data`: its `coordinates`, `locationDenied`)."""
    sent = browser.post(
        f"/i/{inspection_id}/photo",
        files={
            "data": (None, json.dumps({"identifier": slot, **data}), "application/json"),
            "image": ("p.jpg", photo(), "image/jpeg"),
        },
        headers={**csrf, "accept": "application/json"},
    )
    assert sent.status_code == 201, sent.text


def template_of(live_server: str, company: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.get(
        f"{live_server}/v1/inspection/template/{company['template']}", headers=company["headers"]
    )
    return dict(answer.json())


def slots(live_server: str, company: dict[str, Any]) -> list[str]:
    return [image["identifier"] for image in template_of(live_server, company)["images"]]


def begin(
    live_server: str, company: dict[str, Any], locale: str
) -> tuple[dict[str, Any], str, list[str]]:
    """An inspection of the module's template: the creation's answer, its id, its photo slots."""
    created = create(live_server, company, locale, company["template"])
    return created, created["inspectionId"], slots(live_server, company)


def test_declining_the_location_is_explained_and_sends_the_inspection_to_a_person(
    live_server: str, company: dict[str, Any]
) -> None:
    created, inspection_id, (front, back, _side) = begin(live_server, company, "es_AR")
    with httpx.Client(base_url=live_server) as browser:
        csrf = opened(browser, created)
        welcome = browser.get(f"/i/{inspection_id}/step/welcome").text
        assert "Sin tu ubicación no podemos verificar" in welcome
        assert 'aria-describedby="location-help"' in welcome
        # Consent given, the location box left unticked: declined.
        accepted = browser.post(
            f"/i/{inspection_id}/welcome", data={"consent": "yes"}, headers=csrf
        )
        assert accepted.status_code == 303
        answered = browser.post(
            f"/i/{inspection_id}/details",
            data={template_of(live_server, company)["inputs"][0]["identifier"]: "1000"},
            headers={**csrf, "accept": "application/json"},
        )
        assert answered.status_code == 200, answered.text
        for slot in (front, back):
            send_photo(browser, csrf, inspection_id, slot)
        status = browser.get(f"/i/{inspection_id}/status").json()
        # Not run, not failed: the phone shows no red "distance" result.
        listed = [v["validation"] for image in status["images"] for v in image["validations"]]
        assert "distance" not in listed
        review = browser.get(f"/i/{inspection_id}/step/review").text
        assert "Elegiste no compartir tu ubicación" in review
        assert "Words Seguros" in review
        sent = browser.post(f"/i/{inspection_id}/finish", headers=csrf)
        assert sent.status_code == 303
    document = httpx.get(
        f"{live_server}/v1/inspection/{inspection_id}", headers=company["headers"]
    ).json()
    assert document["status"] == "review"
    assert [reason["code"] for reason in document["review"]["reasons"]] == [
        "location_declined",
        "location_declined",
    ]


def test_a_location_shared_from_the_browser_runs_the_check(
    live_server: str, company: dict[str, Any]
) -> None:
    created, inspection_id, (front, _back, _side) = begin(live_server, company, "en_US")
    with httpx.Client(base_url=live_server) as browser:
        csrf = opened(browser, created)
        browser.post(
            f"/i/{inspection_id}/welcome", data={"consent": "yes", "location": "yes"}, headers=csrf
        )
        where = {"latitude": -34.6, "longitude": -58.38}
        send_photo(browser, csrf, inspection_id, front, coordinates=where)
        status = browser.get(f"/i/{inspection_id}/status").json()
        checks = {v["validation"]: v for image in status["images"] for v in image["validations"]}
        assert checks["distance"]["done"] and checks["distance"]["valid"]
        # The browser refused the position although the box was ticked: declined as well.
        send_photo(browser, csrf, inspection_id, front, locationDenied=True)
        status = browser.get(f"/i/{inspection_id}/status").json()
        listed = [v["validation"] for image in status["images"] for v in image["validations"]]
        assert "distance" not in listed


def test_continue_after_a_retaken_photo_goes_to_send(
    live_server: str, company: dict[str, Any]
) -> None:
    created, inspection_id, (front, back, _side) = begin(live_server, company, "en_US")
    with httpx.Client(base_url=live_server) as browser:
        csrf = opened(browser, created)
        browser.post(f"/i/{inspection_id}/welcome", data={"consent": "yes"}, headers=csrf)

        def continue_url(number: int) -> str:
            page = browser.get(f"/i/{inspection_id}/step/photo-{number}").text
            found = re.search(r'href="([^"]+)" data-next', page)
            assert found is not None
            return found.group(1)

        # The first time through, each photo leads to the next one.
        assert continue_url(1) == f"/i/{inspection_id}/step/photo-2"
        send_photo(browser, csrf, inspection_id, front)
        send_photo(browser, csrf, inspection_id, back)
        # The optional side photo, never taken, is still offered once more.
        assert continue_url(1) == f"/i/{inspection_id}/step/photo-3"
        assert continue_url(3) == f"/i/{inspection_id}/step/review"
        send_photo(browser, csrf, inspection_id, _side)
        # Every photo taken: the front retaken goes straight to Send.
        send_photo(browser, csrf, inspection_id, front)
        assert continue_url(1) == f"/i/{inspection_id}/step/review"


def test_start_without_the_consent_says_why_on_the_page(
    live_server: str, company: dict[str, Any]
) -> None:
    created = create(live_server, company, "pt_BR", company["template"])
    inspection_id = created["inspectionId"]
    with httpx.Client(base_url=live_server) as browser:
        csrf = opened(browser, created)
        page = browser.get(f"/i/{inspection_id}/step/welcome").text
        # The form checks it in the page (consumer.js), not only the browser's own bubble.
        assert "novalidate data-consent" in page
        refused = browser.post(f"/i/{inspection_id}/welcome", data={}, headers=csrf)
    assert refused.status_code == 400
    message = "Para começar, marque a caixa acima"
    error = re.search(
        r'<p class="error" id="consent-error" role="alert"[^>]*>([^<]*)</p>', refused.text
    )
    assert error is not None and message in error.group(1)
    assert 'aria-describedby="consent-error" aria-invalid="true"' in refused.text


def test_a_builtins_name_and_the_product_noun_in_the_consumers_language(
    live_server: str, company: dict[str, Any]
) -> None:
    created = create(live_server, company, "es_AR", "deep")
    with httpx.Client(base_url=live_server) as browser:
        opened(browser, created)
        page = browser.get(f"/i/{created['inspectionId']}/step/welcome").text
    assert "Inspección completa del auto" in page and "Deep car inspection" not in page
    own = create(live_server, company, "es_AR", company["template"])
    with httpx.Client(base_url=live_server) as browser:
        opened(browser, own)
        page = browser.get(f"/i/{own['inspectionId']}/step/welcome").text
    assert "1 pregunta sobre el auto" in page and "objeto" not in page
    assert "Words car" in page  # a company's own template keeps the name it wrote


def test_every_builtin_name_is_in_the_catalog_in_every_language() -> None:
    assert {template.name for template in builtin_templates()} == BUILTIN_NAMES
    for name in BUILTIN_NAMES:
        for locale in ("es_AR", "pt_BR"):
            assert gettext(locale, name) != name, (name, locale)


DECLARED_ES = "patente declarada es AC 321 DF"
DECLARED_PT = "placa declarada é AC 321 DF"


def record(result: Any, reported: bool = True) -> ValidationRecord:
    return ValidationRecord.model_validate(
        {"_id": "v1", "validation": "plate", "result": result, "reported": reported, "valid": False}
    )


@pytest.mark.parametrize(
    ("result", "declared", "locale", "words"),
    [
        ("AB123CD", {"plate": "AC 321 DF"}, "es_AR", f"Leímos AB 123 CD; la {DECLARED_ES}."),
        ("AB123CD", {"plate": "ac321df"}, "pt_BR", f"Lemos AB 123 CD; a {DECLARED_PT}."),
        ("AB123CD", {}, "en_US", "We read AB 123 CD."),
        (None, {"plate": "AC321DF"}, "es_AR", "No pudimos leer una patente en esta foto."),
    ],
)  # fmt: skip
def test_a_plate_check_says_what_it_read(
    result: Any, declared: dict[str, Any], locale: str, words: str
) -> None:
    assert what_was_read(record(result), declared, locale) == words


def test_a_check_that_reads_nothing_comparable_says_nothing_more() -> None:
    waiting = record(None, reported=False)
    assert what_was_read(waiting, {"plate": "AC321DF"}, "en_US") == ""
    color = ValidationRecord.model_validate(
        {"_id": "v2", "validation": "complete", "result": True, "reported": True}
    )
    assert what_was_read(color, {}, "en_US") == ""
