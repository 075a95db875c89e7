"""Issue 22's journey in a real Chromium: the consumer sends an inspection no machine here can
decide; a reviewer claims it, records `recaptured` and a damage, asks for a retake of one
photo; the consumer opens the new link, lands on that photo, retakes only it and sends; the
reviewer approves with a reason; the API says `completedBy: reviewer`, the PDF shows the
decision. Screenshots under tests/artifacts/test_review_browser/ (looked at by a person); the
reviewer's pages also at 360 px, axe-checked."""

from __future__ import annotations

import io
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pypdf
import pytest
from PIL import Image, ImageDraw

from server.dashboard import accounts
from server.db import Database
from server.delivery.service import outbox_messages
from tests.browser.conftest import submit
from tests.browser.test_dashboard_browser import PASSWORD, fits, sign_in

TEMPLATE = """
template "Roadside check"
    type: car
    locales: en_US

settings
    max attempts: 1
    photo age limit: 24 hours
    minimum photo size: 64 x 48

image front
    label: "Front of the car"
    validate recaptured
    validate complete

image back
    label: "Back of the car"
    validate complete
    validate damage, optional

verdict
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""


@pytest.fixture(scope="module")
def settings(settings: Any) -> Any:
    """The in-process worker sends the links to the outbox and renders the PDF."""
    return settings.model_copy(update={"worker": True})


@pytest.fixture(scope="module")
def team(db: Database, live_server: str) -> Iterator[dict[str, Any]]:
    from server.auth import create_company

    company = create_company(db, f"Roadside Insurance {secrets.token_hex(2)}", ["agent-1"])
    email = f"reviewer-{secrets.token_hex(3)}@roadside.example.com"
    accounts.create_account(db, company["companyId"], email, "reviewer", PASSWORD)
    headers = {"x-api-key": company["testKey"]}
    with httpx.Client(base_url=live_server, headers=headers, timeout=60) as api:
        saved = api.post("/v1/inspection/template", json={"source": TEMPLATE})
        assert saved.status_code == 201, saved.text
        assert [w["code"] for w in saved.json()["warnings"]] == ["W900"]
        yield {**company, "reviewer": email, "api": api, "template": saved.json()["_id"]}


@pytest.fixture(scope="module")
def camera(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("roadside")
    made = {}
    for name, colour in (
        ("front", (170, 40, 40)),
        ("back", (40, 90, 170)),
        ("back2", (40, 150, 90)),
    ):
        image = Image.new("RGB", (1600, 1200), colour)
        draw = ImageDraw.Draw(image)
        draw.rectangle([400, 500, 1200, 900], fill=(30, 30, 30))
        draw.ellipse([450, 800, 650, 1000], fill=(220, 220, 220))
        draw.ellipse([950, 800, 1150, 1000], fill=(220, 220, 220))
        path = folder / f"{name}.jpg"
        image.save(path, "JPEG", quality=90)
        made[name] = path
    return made


def take_photo(page: Any, path: Path) -> None:
    page.set_input_files("[data-camera]", str(path))
    page.wait_for_selector("[data-notice].ok", timeout=30_000)


def look(page: Any, name: str, screenshot: Any, axe_check: Any, *, narrow: bool = False) -> None:
    if narrow:
        fits(page)
    axe_check(page, name)
    screenshot(page, name)


def wait_for(check: Any, what: str, seconds: float = 60) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def link_sent_to(db: Database, address: str, subject: str) -> str:
    """The magic link of the newest outbox message to `address` whose subject has `subject`."""

    def find() -> str | None:
        for message in outbox_messages(db, 50, to=address):
            if subject in message.subject:
                found = re.search(r"https?://\S+/i/\S+code=\S+", message.text)
                if found:
                    return found.group(0)
        return None

    return str(wait_for(find, f"a message '{subject}' to {address}"))


ARTIFACTS = Path(__file__).parent.parent / "artifacts" / "test_review_browser"


def test_review_claim_result_damage_retake_and_approve(
    live_server: str,
    team: dict[str, Any],
    camera: dict[str, Path],
    db: Database,
    new_phone: Any,
    screenshot: Any,
    axe_check: Any,
) -> None:
    api = team["api"]
    consumer_address = f"driver-{secrets.token_hex(3)}@example.com"
    created = api.post(
        "/v1/inspection/car",
        json={
            "templateId": team["template"],
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": consumer_address},
            "car": {"plate": "AB123CD", "make": "Fiat"},
            "consumer": {"firstName": "Ana", "lastName": "Paz"},
        },
    )
    assert created.status_code == 201, created.text
    inspection_id = created.json()["inspectionId"]

    # --- the consumer sends both photos ---------------------------------------------------------
    _context, phone, _log = new_phone()
    phone.goto(created.json()["magicLink"])
    phone.check("input[name=consent]")
    phone.click("button[type=submit]")
    assert phone.locator("h1").first.inner_text() == "Front of the car"
    take_photo(phone, camera["front"])
    checks = phone.inner_text("[data-checks]")
    assert "Checking" not in checks  # recaptured goes to a person: nothing spins forever
    phone.click("[data-next]")
    take_photo(phone, camera["back"])
    phone.click("[data-next]")
    submit(phone, "button:has-text('Send inspection')")
    assert phone.locator("h1").first.inner_text() == "Thank you!"
    sent = api.get(f"/v1/inspection/{inspection_id}").json()
    assert sent["status"] == "review" and sent["veredict"] == "not_defined"
    front_id, back_id = (image["_id"] for image in sent["products"][0]["images"])

    # --- the reviewer: queue, claim, results, damage, retake -------------------------------------
    _context, desk, _log = new_phone(width=1280)
    sign_in(desk, live_server, team["reviewer"])
    assert desk.url.endswith("/dashboard/review")
    assert re.search(r"Review \(\d+\)", desk.inner_text("nav"))
    row = desk.locator("tr", has_text="AB123CD")
    assert "Ana Paz" in row.inner_text()  # the plate and the consumer name the case
    assert "“Not a photo of a screen” is not decided by a machine here" in row.inner_text()
    look(desk, "01-queue", screenshot, axe_check)
    row.get_by_role("button", name="Claim").click()
    desk.wait_for_url(f"**/dashboard/review/{inspection_id}")
    assert "AB123CD" in desk.inner_text("dl.facts") and "Ana Paz" in desk.inner_text("h1")
    look(desk, "02-review-page", screenshot, axe_check)

    desk.check(f"input[name='valid:{front_id}:recaptured'][value=yes]")
    desk.fill(f"input[name='note:{front_id}:recaptured']", "A real car in daylight")
    desk.check(f"input[name='valid:{back_id}:damage'][value=no]")
    desk.fill(f"input[name='damage-part:{back_id}']", "rear bumper")
    desk.fill(f"input[name='damage-damage:{back_id}']", "scratch")
    desk.select_option(f"select[name='damage-severity:{back_id}']", "minor")
    desk.get_by_role("button", name="Save results").click()
    desk.wait_for_selector("p.notice:has-text('Results saved.')")
    recorded = api.get(f"/v1/inspection/{inspection_id}").json()
    front = recorded["products"][0]["images"][0]
    assert any(
        v["validation"] == "recaptured" and v["source"] == "person" for v in front["validations"]
    )
    assert recorded["products"][0]["images"][1]["damages"][0]["part"] == "rear bumper"

    desk.locator("details.retake summary").click()
    desk.check(f"input[name=images][value='{back_id}']")
    desk.fill("#retake-message", "Please take the back again: the plate is cut off.")
    desk.get_by_role("button", name="Preview").click()
    preview = desk.locator(".preview-message")
    preview.wait_for()
    assert "please retake some photos" in preview.inner_text()
    assert "the plate is cut off" in preview.inner_text()
    look(desk, "03-retake-preview", screenshot, axe_check)
    desk.get_by_role("button", name="Send the retake").click()
    desk.wait_for_selector("p.notice:has-text('Retake requested')")
    # Sent back to the consumer: the old reasons no longer show, the retake's message does.
    assert "Why a person decides" not in desk.inner_text("main")
    assert "Waiting for the consumer" in desk.inner_text("main")
    assert api.get(f"/v1/inspection/{inspection_id}").json()["status"] == "started"

    # --- the consumer opens the new link: straight at the back photo -----------------------------
    link = link_sent_to(db, consumer_address, "retake")
    _context, again, _log = new_phone()
    again.goto(link)
    assert again.locator("h1").first.inner_text() == "Back of the car"
    assert "the plate is cut off" in again.inner_text(".notice.retake")
    look(again, "04-consumer-retake", screenshot, axe_check)
    take_photo(again, camera["back2"])
    again.click("[data-next]")
    submit(again, "button:has-text('Send inspection')")
    assert again.locator("h1").first.inner_text() == "Thank you!"
    resent = api.get(f"/v1/inspection/{inspection_id}").json()
    assert resent["status"] == "review"
    assert resent["products"][0]["images"][0]["_id"] == front_id  # only the back was retaken
    assert [i["_id"] for i in resent["products"][0]["replacedImages"]] == [back_id]

    # The review page with its forms at 360 px: nothing wider than the screen.
    _context, narrow, _log = new_phone(width=360)
    sign_in(narrow, live_server, team["reviewer"])
    narrow.goto(f"{live_server}/dashboard/review/{inspection_id}")
    assert narrow.locator("button", has_text="Decide").count() == 1
    assert "Retaken at" not in narrow.inner_text("main")
    look(narrow, "05a-review-page-360px", screenshot, axe_check, narrow=True)

    # --- the reviewer approves with a reason, by keys ---------------------------------------------
    desk.goto(f"{live_server}/dashboard/review/{inspection_id}")
    heights = {
        "1280x800": desk.evaluate("document.documentElement.scrollHeight"),
        "390": narrow.evaluate("document.documentElement.scrollHeight"),
    }
    print(f"review page heights: {heights}")
    # The decision is in view beside the first photo on a 1280x800 screen.
    desk.set_viewport_size({"width": 1280, "height": 800})
    assert desk.locator("button[value=decide]").is_visible()
    box = desk.locator("button[value=decide]").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 800, box
    screenshot_viewport = desk.screenshot(path=str(ARTIFACTS / "05b-review-1280x800-view.png"))
    assert screenshot_viewport
    desk.keyboard.press("a")  # approve: the reason box takes the focus
    assert desk.evaluate("document.activeElement.id") == "reason"
    desk.keyboard.press("Control+Enter")  # no reason yet: the browser refuses, nothing is sent
    assert desk.url.endswith(f"/dashboard/review/{inspection_id}")
    desk.keyboard.type("Retaken back photo shows the plate; damage is minor")
    desk.keyboard.press("Control+Enter")
    desk.wait_for_url("**/dashboard/review?done=approved-last")
    look(desk, "05-queue-after-decision", screenshot, axe_check)
    done = api.get(f"/v1/inspection/{inspection_id}").json()
    assert (done["status"], done["veredict"], done["completedBy"]) == (
        "completed",
        "approved",
        "reviewer",
    )
    assert [a["action"] for a in done["review"]["audit"]] == [
        "claim", "result", "result", "damage", "retake", "decision",
    ]  # fmt: skip

    # The review page read-only after the decision, at 360 px: the audit trail at the bottom.
    narrow.goto(f"{live_server}/dashboard/review/{inspection_id}")
    trail = narrow.inner_text("main")
    assert "History" in trail and "Approved the inspection" in trail
    assert "Asked the consumer to take photos again" in trail
    look(narrow, "06-decided-360px", screenshot, axe_check, narrow=True)
    narrow.goto(f"{live_server}/dashboard/review")
    look(narrow, "07-queue-360px", screenshot, axe_check, narrow=True)

    # --- the PDF states the decision ------------------------------------------------------------
    requested = api.post(f"/v1/inspection/{inspection_id}/report/request", json={})
    assert requested.status_code == 201, requested.text
    request_id = requested.json()["_id"]

    def ready() -> dict[str, Any] | None:
        state = api.get(f"/v1/inspection/{inspection_id}/report/request/{request_id}").json()
        return state if state["status"] == "completed" else None

    report = wait_for(ready, "the PDF report", 120)
    pdf = httpx.get(report["result"]["url"], timeout=30)
    assert pdf.status_code == 200
    artifacts = Path(__file__).parent.parent / "artifacts" / "test_review_browser"
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / "08-report.pdf").write_bytes(pdf.content)
    pages = pypdf.PdfReader(io.BytesIO(pdf.content)).pages
    # Lines wrap, and a long address may be cut inside a word: compare without spaces.
    text = "".join("".join(page.extract_text() for page in pages).split())
    assert f"Reviewedby{team['reviewer']}on" in text
    # The verdict in the report's words ("(Approved)" in en_US).
    assert "Retakenbackphotoshowstheplate;damageisminor(Approved)" in text
