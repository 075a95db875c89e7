"""Issue 35: what people read is fit to sign. One retaken inspection in review per language
(en_US, es_AR, pt_BR); in each language a real Chromium reads the review queue, the review
page, the inspection page with its history, and the share page (opened at the presigned
detail URL, as a browser would), and every one of them must hold no internal code, field key,
Python literal or raw timestamp, nothing left in English that the catalogs translate, and
photos shown in their proportions (within 3%). The es_AR inspection is then decided and its PDF
rendered to PNG, one file a page, under tests/artifacts/test_readable_pages/ to be looked at."""

from __future__ import annotations

import io
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image, ImageDraw

from server.dashboard import accounts
from server.db import Database
from tests.browser.test_dashboard_browser import PASSWORD, sign_in
from tests.reports.test_report_readable import report_pdf

TEMPLATE = """
template "Readable check"
    type: car
    locales: en_US, es_AR, pt_BR

settings
    max attempts: 1
    photo age limit: 24 hours
    minimum photo size: 64 x 48

image front
    label: "Front"
    validate recaptured
    validate complete

image back
    label: "Back"
    validate complete

verdict
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""
LOCALES = ("en_US", "es_AR", "pt_BR")
#: Codes, keys and literals no person should read.
INTERNAL = re.compile(
    r"\b(no_machine_route|recaptured|firstName|lastName|not_defined|veredict|completedBy|"
    r"True|False|reason_required|review_conflict)\b|\bNone\b(?!\.)|\['|"
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}"
)
#: English words the catalogs translate: none may stay on an es_AR or pt_BR page.
ENGLISH = (
    "Review queue", "Why a person decides", "History", "Declared", "Approve", "Sent a photo",
    "The consumer", "Took the case", "Waiting", "Needs review", "Photos and validations",
    "Decided by a person", "Asked the consumer",
)  # fmt: skip
ARTIFACTS = Path(__file__).parent.parent / "artifacts" / "test_readable_pages"


def photo(colour: tuple[int, int, int], size: tuple[int, int] = (1600, 1000)) -> bytes:
    image = Image.new("RGB", size, colour)
    draw = ImageDraw.Draw(image)
    draw.rectangle(
        [size[0] // 4, size[1] // 3, size[0] * 3 // 4, size[1] * 2 // 3], fill=(20, 20, 20)
    )
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


@pytest.fixture(scope="module")
def settings(settings: Any) -> Any:
    """The in-process worker renders the PDF."""
    return settings.model_copy(update={"worker": True, "time_zone": "America/Sao_Paulo"})


@pytest.fixture(scope="module")
def team(db: Database, live_server: str) -> Iterator[dict[str, Any]]:
    from server.auth import create_company

    company = create_company(db, f"Readable Seguros {secrets.token_hex(2)}", ["agent-1"])
    emails = {}
    for role in ("reviewer", "owner"):
        emails[role] = f"{role}-{secrets.token_hex(3)}@readable.example.com"
        accounts.create_account(db, company["companyId"], emails[role], role, PASSWORD)
    with httpx.Client(
        base_url=live_server, headers={"x-api-key": company["testKey"]}, timeout=60
    ) as api:
        saved = api.post("/v1/inspection/template", json={"source": TEMPLATE})
        assert saved.status_code == 201, saved.text
        cases = {locale: retaken_in_review(api, saved.json()["_id"], locale) for locale in LOCALES}
        yield {"api": api, "emails": emails, "cases": cases}


def upload(api: httpx.Client, product_id: str, side: str, content: bytes) -> str:
    sent = api.post(
        f"/v1/inspection/image/{product_id}",
        files={"image": ("p.jpg", content, "image/jpeg"), "data": (None, f'{{"side": "{side}"}}')},
    )
    assert sent.status_code == 201, sent.text
    return str(sent.json()["_id"])


def retaken_in_review(api: httpx.Client, template_id: str, locale: str) -> str:
    """An inspection in `locale`: both photos, to review, the back retaken, back in review."""
    created = api.post(
        "/v1/inspection/car",
        json={
            "templateId": template_id,
            "locale": locale,
            "car": {"plate": f"AB{secrets.randbelow(900) + 100}CD", "make": "Fiat"},
            "consumer": {"firstName": "Ana", "lastName": "Paz"},
            "delivery": {"disabled": True},
        },
    )
    assert created.status_code == 201, created.text
    product_id, inspection_id = created.json()["productId"], created.json()["inspectionId"]
    upload(api, product_id, "front", photo((170, 40, 40)))
    back = upload(api, product_id, "back", photo((40, 90, 170), (1000, 1500)))
    assert api.post(f"/v1/inspection/finish/{inspection_id}").json()["status"] == "review"
    retake = api.post(
        f"/v1/inspection/{inspection_id}/retake",
        json={"images": [back], "message": "The plate is cut off"},
    )
    assert retake.status_code == 202, retake.text
    upload(api, product_id, "back", photo((40, 150, 90), (1000, 1500)))
    assert api.post(f"/v1/inspection/finish/{inspection_id}").json()["status"] == "review"
    return str(inspection_id)


def readable(
    page: Any,
    locale: str,
    where: str,
    *,
    photos: bool = True,
    english: tuple[str, ...] = ENGLISH,
    internal: re.Pattern[str] = INTERNAL,
) -> None:
    """No code, key, literal or raw timestamp (`internal`); no English the catalogs translate
    (`english`); photos in proportion."""
    page.wait_for_load_state("load")
    # The template's own source (and its conditions' text) is shown as written, for its authors.
    text = page.evaluate(
        """() => { const main = document.querySelector('main').cloneNode(true);
            main.querySelectorAll('[aria-labelledby=h-source], .cond-text, dl.values dt')
                .forEach(e => e.remove());
            document.body.appendChild(main); const text = main.innerText; main.remove();
            return text; }"""
    )
    found = internal.search(text)
    assert found is None, (
        f"{where} ({locale}): {text[max(0, found.start() - 80) : found.end() + 40]!r}"
    )
    if locale != "en_US":
        left = [word for word in english if word in text]
        assert not left, f"{where} ({locale}) left in English: {left}"
    page.evaluate(  # lazy photos load once scrolled to
        """async () => { window.scrollTo(0, document.body.scrollHeight);
            await Promise.all([...document.querySelectorAll('main img')].map(i => i.complete
                ? null : new Promise(done => { i.onload = i.onerror = done;
                    setTimeout(done, 5000); })));
            window.scrollTo(0, 0); }"""
    )
    ratios = page.evaluate(
        """() => [...document.querySelectorAll('main img')]
            .filter(i => i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().height > 0)
            .map(i => { const r = i.getBoundingClientRect();
                return [i.alt, (r.width / r.height) / (i.naturalWidth / i.naturalHeight)]; })"""
    )
    assert ratios or not photos, f"{where} ({locale}) shows no photo"
    squashed = [(src, ratio) for src, ratio in ratios if abs(ratio - 1) > 0.03]
    assert not squashed, f"{where} ({locale}): photos out of proportion {squashed}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{where}-{locale}.png"), full_page=True)


def choose_language(page: Any, base: str, locale: str) -> None:
    page.goto(f"{base}/dashboard/review")
    page.select_option("select[name=locale]", locale)
    page.locator("form:has(select[name=locale]) button[type=submit]").click()
    page.wait_for_load_state()


def test_every_surface_reads_as_people_read_in_three_languages(
    live_server: str, team: dict[str, Any], new_phone: Any
) -> None:
    api = team["api"]
    _context, desk, _log = new_phone(width=1280)
    sign_in(desk, live_server, team["emails"]["reviewer"])
    _context, owner, _log = new_phone(width=1280)
    sign_in(owner, live_server, team["emails"]["owner"])
    _context, outsider, _log = new_phone(width=1280)
    try:
        for locale in LOCALES:
            inspection_id = team["cases"][locale]
            choose_language(desk, live_server, locale)
            readable(desk, locale, "queue", photos=False)
            desk.goto(f"{live_server}/dashboard/review/{inspection_id}")
            readable(desk, locale, "review-page")
            choose_language(owner, live_server, locale)
            owner.goto(f"{live_server}/dashboard/inspections/{inspection_id}")
            readable(owner, locale, "inspection-page")
            history = owner.inner_text("section.history")
            assert "AB" not in history  # steps, not declared data
            link = api.post(f"/v1/inspection/presign/detail/{inspection_id}", json={})
            assert link.status_code == 200, link.text
            outsider.goto(link.json()["url"])  # the JSON URL: a browser gets the page
            assert "/share/" in outsider.url
            readable(outsider, locale, "share-page")
    finally:
        for page in (desk, owner):
            choose_language(page, live_server, "en_US")


def test_the_pdf_of_a_reviewed_retaken_inspection_in_es_ar(team: dict[str, Any]) -> None:
    api = team["api"]
    inspection_id = team["cases"]["es_AR"]
    document = api.get(f"/v1/inspection/{inspection_id}").json()
    front = document["products"][0]["images"][0]["_id"]
    decided = api.post(
        f"/v1/inspection/{inspection_id}/review",
        json={
            "validations": [
                {"imageId": front, "validation": "recaptured", "valid": True,
                 "note": "Auto real, de día"}
            ],
            "veredict": "approved",
            "reason": "La foto nueva muestra la patente",
        },
    )  # fmt: skip
    assert decided.status_code == 200, decided.text
    pdf = report_pdf(api, inspection_id)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "report-es_AR.pdf").write_bytes(pdf)
    pdftoppm = shutil.which("pdftoppm")
    assert pdftoppm is not None, "pdftoppm is missing: run `make system-deps`"
    subprocess.run(
        [pdftoppm, "-png", "-r", "60", str(ARTIFACTS / "report-es_AR.pdf"),
         str(ARTIFACTS / "report-es_AR")],
        check=True,
    )  # fmt: skip
    import pypdf

    text = " ".join(
        " ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(pdf)).pages).split()
    )
    # The reason once under the verdict, and again as the decision's step in the history.
    verdict_part, _, history_part = text.partition("Historial")
    assert verdict_part.count("La foto nueva muestra la patente") == 1, "printed once"
    assert "Aprobó la inspección - La foto nueva muestra la patente" in history_part
    assert "Auto real, de día" in history_part  # the reviewer's note
    # The earlier back photo, labelled as replaced, with the retake's message.
    assert "Fotos reemplazadas" in verdict_part and "Back (reemplazada)" in verdict_part
    assert "The plate is cut off" in verdict_part
    assert "Completada por Una persona, en revisión" in text and " car " not in text
    assert "(Horário de Brasília)" not in text  # es_AR words for the company's zone
    assert "(hora de Brasilia)" in text
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", text)
