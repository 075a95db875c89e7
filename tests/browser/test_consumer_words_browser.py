"""Issue 35, the consumer's part, read in a real Chromium on a 390 px phone in en_US, es_AR and
pt_BR: the magic-link flow of a car with a reviewer's retake. Start pressed without the
consent says why on the page; the location is declined, so the review page says what that
means and the finish goes to a person (`location_declined`); the plate check says what it read
beside the declared plate; the reviewer asks for the front again, and after that one retaken
photo Continue goes to Send. Every page must hold no internal code, field key, Python literal
or raw timestamp, nothing left in English that the catalogs translate, and photos in their
proportions (within 3%): `readable` of tests/browser/test_readable_pages.py. Screenshots under
tests/artifacts/test_readable_pages/consumer-*.png."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.db import Database
from tests.browser.conftest import submit
from tests.browser.test_consumer_flow import take_photo
from tests.browser.test_readable_pages import INTERNAL, LOCALES, photo, readable

TEMPLATE = """
template "Consumer retake words"
    type: car
    locales: en_US, es_AR, pt_BR

settings
    max attempts: 1
    photo distance limit: 500 meters
    minimum photo size: 64 x 48

image front
    label: "Front, with the plate"
    label es_AR: "Frente, con la patente"
    label pt_BR: "Frente, com a placa"
    validate complete
    validate distance
    validate plate

image back
    label: "Rear of the car"
    label es_AR: "Parte trasera del auto"
    label pt_BR: "Traseira do carro"
    validate complete
    validate distance

input owner
    type: text
    label: "Owner's name"
    label es_AR: "Nombre del titular"
    label pt_BR: "Nome do proprietário"
    asked at: update
    required

verdict
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""
#: The consumer pages' English words the catalogs translate: none may stay on es_AR or pt_BR.
ENGLISH = (
    "Welcome", "What we will ask", "question about", "Your consent", "Start", "Take photo",
    "Retake photo", "Continue", "Skip for now", "Please take this photo again",
    "Review and send", "Your answers", "Your photos", "Send inspection", "Photo received",
    "Not passed", "Plate readable", "We read", "declared plate", "You chose not to share",
    "Without your location", "To start, tick", "Step ", "Thank you", "Privacy",
    "cannot be sent again", "more time",
)  # fmt: skip
#: Codes and keys of the flow itself, besides those `readable` already refuses.
CONSUMER_INTERNAL = re.compile(
    INTERNAL.pattern
    + r"|\b(location_declined|no_machine_route|locationDenied|max_attempts_exceeded|"
    r"inspection_not_editable|photo-\d|[0-9a-f]{24})\b"
)
#: What each locale must read (catalog words, written here so a lost translation fails).
EXPECTED = {
    "en_US": {
        "consent": "To start, tick the box above",
        "read": "We read AB 123 CD; the declared plate is AC 321 DF.",
        "matched": "We read AC 321 DF; the declared plate is AC 321 DF.",
        "declined": "You chose not to share your location",
        "noun": "1 question about the car",
        "retake": "The plate is cut off",
    },
    "es_AR": {
        "consent": "Para empezar, marcá la casilla de arriba",
        "read": "Leímos AB 123 CD; la patente declarada es AC 321 DF.",
        "matched": "Leímos AC 321 DF; la patente declarada es AC 321 DF.",
        "declined": "Elegiste no compartir tu ubicación",
        "noun": "1 pregunta sobre el auto",
        "retake": "La patente está cortada",
    },
    "pt_BR": {
        "consent": "Para começar, marque a caixa acima",
        "read": "Lemos AB 123 CD; a placa declarada é AC 321 DF.",
        "matched": "Lemos AC 321 DF; a placa declarada é AC 321 DF.",
        "declined": "Você escolheu não compartilhar a localização",
        "noun": "1 pergunta sobre o carro",
        "retake": "A placa está cortada",
    },
}


@pytest.fixture(scope="module")
def settings(settings: Any) -> Any:
    """`plate` is posted by the company (an outside reader): a machine's, answered through the
    API while the page waits for it."""
    return settings.model_copy(update={"posted_validations": frozenset({"plate"})})


@pytest.fixture(scope="module")
def api(db: Database, live_server: str) -> Iterator[tuple[httpx.Client, str]]:
    from server.auth import create_company

    company = create_company(db, f"Seguros Paz {secrets.token_hex(2)}", ["agent-1"])
    with httpx.Client(
        base_url=live_server, headers={"x-api-key": company["testKey"]}, timeout=60
    ) as client:
        saved = client.post("/v1/inspection/template", json={"source": TEMPLATE})
        assert saved.status_code == 201, saved.text
        yield client, saved.json()["_id"]


@pytest.fixture(scope="module")
def pictures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A landscape front, a portrait rear and a retaken front, as files a camera gives."""
    folder = tmp_path_factory.mktemp("consumer-words")
    made = {
        "front": photo((170, 40, 40)),
        "back": photo((40, 90, 170), (1000, 1500)),
        "retake": photo((40, 150, 90)),
    }
    for name, content in made.items():
        (folder / f"{name}.jpg").write_bytes(content)
    return {name: folder / f"{name}.jpg" for name in made}


def post_plate(
    client: httpx.Client, inspection_id: str, read: str, confidence: float
) -> dict[str, Any]:
    """The company's plate reader answers for the current front photo."""
    document = client.get(f"/v1/inspection/{inspection_id}").json()
    front = next(image for image in document["products"][0]["images"] if image["side"] == "front")
    posted = client.post(
        f"/v1/inspection/{inspection_id}/image/{front['_id']}/validation",
        json={"validation": "plate", "confidence": confidence, "result": read},
    )
    assert posted.status_code == 200, posted.text
    return dict(front)


def check_line(page: Any, tone: str, words: str) -> str:
    """The photo's result line of `tone` (`ok`/`bad`) once it shows `words`."""
    line = page.locator(f"[data-checks] li.{tone}", has_text=words)
    line.wait_for(timeout=60_000)
    return str(line.inner_text())


def retake_flow(
    page: Any, client: httpx.Client, template_id: str, locale: str, pictures: dict[str, Path]
) -> None:
    words = EXPECTED[locale]

    def look(where: str, photos: bool = True) -> None:
        readable(
            page,
            locale,
            f"consumer-{where}",
            photos=photos,
            english=ENGLISH,
            internal=CONSUMER_INTERNAL,
        )

    created = client.post(
        "/v1/inspection/car",
        json={
            "templateId": template_id,
            "locale": locale,
            "car": {"plate": "AC 321 DF"},
            "delivery": {"disabled": True},
        },
    )
    assert created.status_code == 201, created.text
    inspection_id = created.json()["inspectionId"]
    page.goto(created.json()["magicLink"])
    assert words["noun"] in page.inner_text("main")
    look("welcome", photos=False)
    # Start without the consent: a message on the page, tied to the box, not only a bubble.
    page.click("button[type=submit]")
    error = page.locator("#consent-error")
    error.wait_for(state="visible")
    assert words["consent"] in error.inner_text()
    assert error.get_attribute("role") == "alert"
    box = page.locator("input[name=consent]")
    assert box.get_attribute("aria-invalid") == "true"
    assert box.get_attribute("aria-describedby") == "consent-error"
    assert page.url.endswith("/step/welcome")
    page.screenshot(path=str(Path(page_folder()) / f"consumer-consent-error-{locale}.png"))
    # Consent given, the location declined.
    page.check("input[name=consent]")
    assert error.is_hidden()
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/step/details$"))
    page.locator("[data-field] input").first.fill("Ana Paz")
    submit(page)
    page.wait_for_url(re.compile(r"/step/photo-1$"))
    take_photo(page, pictures["front"])
    post_plate(client, inspection_id, "AB123CD", 12)
    assert words["read"] in check_line(page, "bad", words["read"])
    look("photo-read")
    page.click("[data-next]")
    page.wait_for_url(re.compile(r"/step/photo-2$"))
    take_photo(page, pictures["back"])
    page.click("[data-next]")
    page.wait_for_url(re.compile(r"/step/review$"))
    assert words["declined"] in page.inner_text("[data-location-declined]")
    look("review")
    with page.expect_navigation(url=re.compile(r"/done$"), timeout=30_000):
        page.click("button[type=submit]")
    look("done", photos=False)
    document = client.get(f"/v1/inspection/{inspection_id}").json()
    assert document["status"] == "review"
    assert {reason["code"] for reason in document["review"]["reasons"]} == {"location_declined"}
    # The reviewer asks for the front again; the new link opens at it, with the message.
    front = next(i for i in document["products"][0]["images"] if i["side"] == "front")
    asked = client.post(
        f"/v1/inspection/{inspection_id}/retake",
        json={"images": [front["_id"]], "message": words["retake"]},
    )
    assert asked.status_code == 202, asked.text
    page.goto(asked.json()["magicLink"])
    page.wait_for_url(re.compile(r"/step/photo-1$"))
    assert words["retake"] in page.inner_text(".notice.retake")
    look("retake", photos=False)  # the slot reopened: its old photo is the reviewer's
    take_photo(page, pictures["retake"])
    post_plate(client, inspection_id, "AC321DF", 97)
    check_line(page, "ok", words["matched"])
    look("retaken")
    # One photo retaken, the rest unchanged: Continue goes to Send, not to the rear photo.
    page.click("[data-next]")
    page.wait_for_url(re.compile(r"/step/review$"))
    look("review-after-retake")
    with page.expect_navigation(url=re.compile(r"/done$"), timeout=30_000):
        page.click("button[type=submit]")
    assert client.get(f"/v1/inspection/{inspection_id}").json()["status"] == "review"


def page_folder() -> Path:
    from tests.browser.test_readable_pages import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.mark.parametrize("locale", LOCALES)
def test_the_consumer_retake_flow_reads_as_people_read(
    locale: str,
    api: tuple[httpx.Client, str],
    pictures: dict[str, Path],
    new_phone: Any,
) -> None:
    client, template_id = api
    _context, page, _log = new_phone(locale=locale.replace("_", "-"), width=390)
    retake_flow(page, client, template_id, locale, pictures)
