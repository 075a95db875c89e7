"""Issue 35: the review page on a phone. At 390 px the photo, what was declared, what was read
and the decision (approve or disapprove, the reason, Decide) are in one view without scrolling:
the decision is a bar kept at the bottom of the screen, the photos a strip swiped sideways.
A reviewer decides one retaken case by taps (counted) on a phone and by keys (counted) on a
1280x800 screen; both pages' heights are printed. Screenshots under
tests/artifacts/test_review_phone/, axe-checked."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.dashboard import accounts
from server.db import Database
from tests.browser.test_dashboard_browser import PASSWORD, sign_in
from tests.browser.test_readable_pages import TEMPLATE, choose_language, retaken_in_review

ARTIFACTS = Path(__file__).parent.parent / "artifacts" / "test_review_phone"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def team(db: Database, live_server: str) -> Iterator[dict[str, Any]]:
    from server.auth import create_company

    company = create_company(db, f"Phone Seguros {secrets.token_hex(2)}", ["agent-1"])
    reviewer = f"reviewer-{secrets.token_hex(3)}@phone.example.com"
    accounts.create_account(db, company["companyId"], reviewer, "reviewer", PASSWORD)
    with httpx.Client(
        base_url=live_server, headers={"x-api-key": company["testKey"]}, timeout=60
    ) as api:
        saved = api.post("/v1/inspection/template", json={"source": TEMPLATE})
        assert saved.status_code == 201, saved.text
        yield {"api": api, "reviewer": reviewer, "template": saved.json()["_id"]}


def in_view(page: Any, selector: str) -> dict[str, float]:
    """The element's box, asserted to lie inside the screen as it first shows and, unless it is
    part of the decision bar, above that bar (which covers the bottom of a phone's screen)."""
    box = page.locator(selector).first.bounding_box()
    height = page.viewport_size["height"]
    assert box is not None, selector
    inside_bar = page.locator(selector).first.evaluate("e => !!e.closest('.decision')")
    bar = page.locator(".decision").bounding_box()
    fixed = page.locator(".decision").evaluate("e => getComputedStyle(e).position === 'fixed'")
    if fixed and not inside_bar and bar is not None and 0 < bar["y"] < height:
        height = min(height, bar["y"])  # a bar fixed at the bottom hides what is under it
    assert box["y"] >= 0 and box["y"] + box["height"] <= height, (selector, box, height)
    return dict(box)


@pytest.mark.parametrize("locale", ["es_AR", "pt_BR"])
def test_one_view_on_a_phone_in_longer_words(
    live_server: str, team: dict[str, Any], new_phone: Any, locale: str
) -> None:
    """Spanish and Portuguese words are longer: the photo, the declared data, what was read and
    the decision still fit one 390x844 screen."""
    inspection_id = retaken_in_review(team["api"], team["template"], locale)
    _context, phone, _log = new_phone(width=PHONE["width"])
    phone.set_viewport_size(PHONE)
    sign_in(phone, live_server, team["reviewer"])
    try:
        choose_language(phone, live_server, locale)
        phone.goto(f"{live_server}/dashboard/review/{inspection_id}")
        phone.wait_for_load_state("load")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        phone.screenshot(path=str(ARTIFACTS / f"04-phone-390-view-{locale}.png"))
        for part in (
            ".review-photo img",
            "dl.facts",
            ".review-photo .read tbody tr",
            ".decision input[value=approved]",
            "#reason",
            "button[value=decide]",
        ):
            in_view(phone, part)
        assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        choose_language(phone, live_server, "en_US")


def test_one_case_in_one_view_on_a_phone_decided_in_four_taps(
    live_server: str, team: dict[str, Any], new_phone: Any, axe_check: Any
) -> None:
    api = team["api"]
    inspection_id = retaken_in_review(api, team["template"], "en_US")
    _context, phone, _log = new_phone(width=PHONE["width"])
    phone.set_viewport_size(PHONE)
    sign_in(phone, live_server, team["reviewer"])
    phone.goto(f"{live_server}/dashboard/review/{inspection_id}")
    phone.wait_for_load_state("load")
    phone.evaluate(
        """async () => { await Promise.all([...document.querySelectorAll('main img')]
            .map(i => i.complete ? null : new Promise(done => { i.onload = i.onerror = done; })));
        }"""
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    phone.screenshot(path=str(ARTIFACTS / "01-phone-390-view.png"))
    # The first photo, the declared data, what was read on it and the whole decision: one view.
    photo = in_view(phone, ".review-photo img")
    in_view(phone, "dl.facts")
    in_view(phone, ".review-photo .read tbody tr")
    for part in ("input[name=veredict][value=approved]", "#reason", "button[value=decide]"):
        in_view(phone, f".decision {part}" if part[0] != "#" else part)
    # The photos are a strip: the second card is beside the first, reached by swiping.
    cards = phone.locator(".case-photos > .review-photo")
    assert cards.count() == 2
    second = cards.nth(1).bounding_box()
    assert second is not None and second["x"] >= PHONE["width"] * 0.8, second
    assert second["y"] < photo["y"] + photo["height"]  # side by side, not one under the other
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    axe_check(phone, "review-phone")
    # The decision bar stays at the bottom of the screen while the page scrolls.
    phone.evaluate("window.scrollTo(0, document.body.scrollHeight / 2)")
    in_view(phone, "button[value=decide]")
    phone.evaluate("window.scrollTo(0, 0)")
    heights = {"390": phone.evaluate("document.documentElement.scrollHeight")}

    # One case by taps: valid on the photo's open choice, Approve, the reason box, Decide.
    taps = 0
    front = phone.locator(".review-photo").first
    front.locator("fieldset.decide input[value=yes]").first.tap()
    taps += 1
    phone.locator(".decision label:has(input[value=approved])").tap()
    taps += 1
    phone.locator("#reason").tap()
    taps += 1
    phone.keyboard.type("The new back photo shows the plate")
    phone.screenshot(path=str(ARTIFACTS / "02-phone-390-decided-before-send.png"))
    phone.locator("button[value=decide]").tap()
    taps += 1
    phone.wait_for_url("**done=approved*")
    decided = api.get(f"/v1/inspection/{inspection_id}").json()
    assert (decided["status"], decided["veredict"]) == ("completed", "approved")
    assert taps == 4

    # The same case on a 1280x800 screen, decided by keys: V, A, the reason, Ctrl+Enter.
    other = retaken_in_review(api, team["template"], "en_US")
    _context, desk, _log = new_phone(width=1280)
    desk.set_viewport_size({"width": 1280, "height": 800})
    sign_in(desk, live_server, team["reviewer"])
    desk.goto(f"{live_server}/dashboard/review/{other}")
    heights["1280x800"] = desk.evaluate("document.documentElement.scrollHeight")
    desk.screenshot(path=str(ARTIFACTS / "03-desk-1280x800-view.png"))
    in_view(desk, "button[value=decide]")
    in_view(desk, ".review-photo img")
    keys = 0
    for key in ("v", "a"):
        desk.keyboard.press(key)
        keys += 1
    desk.keyboard.type("The new back photo shows the plate")
    desk.keyboard.press("Control+Enter")
    keys += 1
    desk.wait_for_url("**done=approved*")
    assert api.get(f"/v1/inspection/{other}").json()["veredict"] == "approved"
    assert keys == 3
    print(f"review page heights: {heights}; taps on a phone: {taps}; keys on a desk: {keys}")
