"""Issue 35, held out: the PDF an adjuster signs reads as people read, in en_US, es_AR and
pt_BR. A template unlike test_readable_pages' (a check, a color read, a damage, a duplicate
photo) runs through the real API: the back photo is the front one again (a duplicate), a
reviewer asks for it again with a message, the new one arrives, the reviewer records a result
with a note and disapproves with a reason, and the report is made by the worker. Its text must
hold no internal code, field key, Python literal or raw timestamp, nothing the catalogs
translate left in English, the reason once above the history, the note, and the replaced photo
labelled as such with when and why. Every page is rendered to PNG under
tests/artifacts/test_report_readable/ to be looked at."""

from __future__ import annotations

import io
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pypdf
import pytest
from PIL import Image, ImageDraw

from server.db import Database

TEMPLATE = """
template "Held-out motor policy"
    type: car
    locales: en_US, es_AR, pt_BR

settings
    max attempts: 2
    minimum photo size: 64 x 48

image front
    label: "Front"
    label es_AR: "Frente"
    label pt_BR: "Frente"
    validate recaptured
    validate color
    validate damage, optional
    validate complete

image back
    label: "Back"
    label es_AR: "Parte trasera"
    label pt_BR: "Traseira"
    validate duplicate
    validate complete

check color_declared
    name: "Color declared"
    name es_AR: "Color declarado"
    name pt_BR: "Cor declarada"
    description: "The consumer said which color the car is"
    description es_AR: "El cliente dijo de qué color es el auto"
    description pt_BR: "O cliente disse de que cor é o carro"
    valid when: defined(car.color)

verdict
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
        reason es_AR: "Algunas fotos no fueron aprobadas"
        reason pt_BR: "Algumas fotos não foram aprovadas"
"""
#: What each language's report must say (the reviewer's words are theirs, in their language).
WORDS = {
    "en_US": {
        "reason": "The dent is larger than declared",
        "note": "Real car, daylight",
        "retake": "This is the front photo again",
        "expect": ["DISAPPROVED", "Color declared", "The consumer said which color the car is",
                   "grey", "dent", "minor", "Already in this inspection", "Replaced photos",
                   "Back (replaced)", "Retake asked by", "Note: \"Real car, daylight\"",
                   "A person, on review"],
    },
    "es_AR": {
        "reason": "La abolladura es mayor que la declarada",
        "note": "Auto real, de día",
        "retake": "Es otra vez la foto del frente",
        "expect": ["DESAPROBADA", "Color declarado", "El cliente dijo de qué color es el auto",
                   "gris", "abolladura", "leve", "Ya está en esta inspección",
                   "Fotos reemplazadas", "Parte trasera (reemplazada)", "Repetición pedida por",
                   "Nota: \"Auto real, de día\"", "Una persona, en revisión", "blanco"],
    },
    "pt_BR": {
        "reason": "O amassado é maior que o declarado",
        "note": "Carro real, de dia",
        "retake": "É de novo a foto da frente",
        "expect": ["REPROVADA", "Cor declarada", "O cliente disse de que cor é o carro", "cinza",
                   "amassado", "leve", "Já está nesta vistoria", "Fotos substituídas",
                   "Traseira (substituída)", "Nova foto pedida por",
                   "Nota: \"Carro real, de dia\"", "branco"],
    },
}  # fmt: skip
#: Codes, keys and literals no person should read; raw ISO moments.
INTERNAL = re.compile(
    r"\b(no_machine_route|recaptured|duplicate|firstName|lastName|not_defined|veredict|"
    r"completedBy|reviewer|division_by_zero|True|False|None)\b|"
    r"\['|\{'|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}"
)
#: The API's and the analyzers' English codes for values: words of the language instead.
RAW_VALUES = re.compile(r"\b(car|white|grey|trunk|dent|minor|private)\b")
#: English the report's catalogs translate: none may stay in an es_AR or pt_BR report.
ENGLISH = (
    "Inspection report", "Approved", "Disapproved", "Reviewed by", "Photos", "Replaced",
    "History", "Validation", "Confidence", "Value", "Valid", "Uploaded", "Why", "Who",
    "Completed by", "A person, on review", "The company", "Sent a photo", "Note",
    "Already in", "Some photos were not approved", "Color declared", "page",
)  # fmt: skip
ARTIFACTS = Path(__file__).parent.parent / "artifacts" / "test_report_readable"


@pytest.fixture(scope="module")
def settings(settings: Any) -> Any:
    """The in-process worker renders the PDF; an Argentine company's time zone."""
    return settings.model_copy(
        update={"worker": True, "time_zone": "America/Argentina/Buenos_Aires"}
    )


def photo(colour: tuple[int, int, int], box: tuple[int, int, int, int]) -> bytes:
    image = Image.new("RGB", (1200, 800), colour)
    ImageDraw.Draw(image).ellipse(box, fill=(240, 240, 240))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85)
    return out.getvalue()


@pytest.fixture(scope="module")
def api(db: Database, live_server: str) -> Iterator[httpx.Client]:
    from server.auth import create_company

    company = create_company(db, f"Held-out Seguros {secrets.token_hex(2)}", ["agent-1"])
    with httpx.Client(
        base_url=live_server, headers={"x-api-key": company["testKey"]}, timeout=60
    ) as client:
        yield client


def upload(api: httpx.Client, product_id: str, side: str, content: bytes) -> dict[str, Any]:
    sent = api.post(
        f"/v1/inspection/image/{product_id}",
        files={"image": ("p.jpg", content, "image/jpeg"), "data": (None, f'{{"side": "{side}"}}')},
    )
    assert sent.status_code == 201, sent.text
    return dict(sent.json())


def reviewed_retaken_report(api: httpx.Client, template_id: str, locale: str) -> bytes:
    """The PDF of an inspection in `locale`: its back photo a duplicate of the front, retaken
    on a reviewer's message, then disapproved by the reviewer with a note and a reason."""
    words = WORDS[locale]
    created = api.post(
        "/v1/inspection/car",
        json={
            "templateId": template_id,
            "locale": locale,
            "car": {"plate": "AC456BD", "make": "Renault", "color": "white"},
            "consumer": {"firstName": "Julia", "lastName": "Ríos"},
            "delivery": {"disabled": True},
        },
    )
    assert created.status_code == 201, created.text
    product_id, inspection_id = created.json()["productId"], created.json()["inspectionId"]
    front_photo = photo((150, 150, 155), (300, 200, 900, 600))
    front = upload(api, product_id, "front", front_photo)["_id"]
    back = upload(api, product_id, "back", front_photo)["_id"]  # the same photo again
    for body in (
        {"validation": "color", "confidence": 93, "result": "grey"},
        {"validation": "damage", "confidence": 88, "result": None,
         "damages": [{"part": "trunk", "damage": "dent", "severity": "minor", "percentage": 7}]},
    ):  # fmt: skip
        posted = api.post(f"/v1/inspection/{inspection_id}/image/{front}/validation", json=body)
        assert posted.status_code in (200, 201), posted.text
    assert api.post(f"/v1/inspection/finish/{inspection_id}").json()["status"] == "review"
    retake = api.post(
        f"/v1/inspection/{inspection_id}/retake",
        json={"images": [back], "message": words["retake"]},
    )
    assert retake.status_code == 202, retake.text
    upload(api, product_id, "back", photo((60, 60, 70), (0, 0, 300, 800)))
    assert api.post(f"/v1/inspection/finish/{inspection_id}").json()["status"] == "review"
    decided = api.post(
        f"/v1/inspection/{inspection_id}/review",
        json={
            "validations": [{"imageId": front, "validation": "recaptured", "valid": True,
                             "note": words["note"]}],
            "veredict": "disapproved",
            "reason": words["reason"],
        },
    )  # fmt: skip
    assert decided.status_code == 200, decided.text
    return report_pdf(api, inspection_id)


def report_pdf(api: httpx.Client, inspection_id: str) -> bytes:
    """The inspection's PDF as a client gets it: asked for, made by the worker, downloaded."""
    requested = api.post(f"/v1/inspection/{inspection_id}/report/request", json={})
    assert requested.status_code == 201, requested.text
    request_id = requested.json()["_id"]
    deadline = time.monotonic() + 120
    while True:
        state = api.get(f"/v1/inspection/{inspection_id}/report/request/{request_id}").json()
        if state["status"] == "completed":
            break
        assert state["status"] != "failed", state
        assert time.monotonic() < deadline, "the PDF was not made in 2 minutes"
        time.sleep(0.5)
    return httpx.get(state["result"]["url"], timeout=30).content


@pytest.fixture(scope="module")
def template_id(api: httpx.Client) -> str:
    saved = api.post("/v1/inspection/template", json={"source": TEMPLATE})
    assert saved.status_code == 201, saved.text
    return str(saved.json()["_id"])


@pytest.mark.parametrize("locale", ["es_AR", "pt_BR", "en_US"])
def test_the_pdf_reads_as_people_read(api: httpx.Client, template_id: str, locale: str) -> None:
    pdf = reviewed_retaken_report(api, template_id, locale)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    source = ARTIFACTS / f"report-{locale}.pdf"
    source.write_bytes(pdf)
    for old in ARTIFACTS.glob(f"report-{locale}-*.png"):
        old.unlink()
    pdftoppm = shutil.which("pdftoppm")
    assert pdftoppm is not None, "pdftoppm is missing: run `make system-deps`"
    subprocess.run(
        [pdftoppm, "-png", "-r", "70", str(source), str(ARTIFACTS / f"report-{locale}")],
        check=True,
        timeout=120,
    )
    pages = pypdf.PdfReader(io.BytesIO(pdf)).pages
    assert len(sorted(ARTIFACTS.glob(f"report-{locale}-*.png"))) == len(pages)
    # One space for every run of white space (a cell's text wraps over lines).
    text = " ".join(" ".join(page.extract_text() for page in pages).replace("\xa0", " ").split())
    words = WORDS[locale]
    found = INTERNAL.search(text)
    assert found is None, f"{locale}: {text[max(0, found.start() - 80) : found.end() + 40]!r}"
    if locale != "en_US":
        left = [word for word in ENGLISH if re.search(rf"\b{word}\b", text)]
        assert not left, f"{locale} left in English: {left}"
        raw = RAW_VALUES.search(text)
        assert raw is None, f"{locale}: {text[max(0, raw.start() - 80) : raw.end() + 40]!r}"
    for expected in words["expect"]:
        assert expected in text, (locale, expected)
    # The reason once under the verdict (the decision's line), once as the history's step.
    assert text.count(words["reason"]) == 2, text.count(words["reason"])
    assert text.count(words["note"]) == 2  # the photo's result, the history's step
    assert text.count(words["retake"]) == 2  # the replaced photo's why, the history's step
