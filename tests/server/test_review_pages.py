"""The reviewer's pages over real HTTP (docs/review.md): the queue with its count in the
navigation, claiming, recording a result and a damage from the form, the retake preview in the
consumer's locale, a decision refused without its reason and accepted with it, the decisions
CSV, the audit trail on the inspection's timeline, and the PDF's "Reviewed by" line."""

from __future__ import annotations

import csv
import html
import io
import re
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from server.dashboard import accounts
from tests.server.test_dashboard_pages import PASSWORD, Browserish
from tests.server.test_review_api import finished_in_review

SOURCE = """
template "Pages review {n}"
    type: car

settings
    max attempts: 2
    photo age limit: 24 hours
    minimum photo size: 64 x 48

image front
    label: "Front"
    validate recaptured
    validate complete

image back
    label: "Back"
    validate complete
    validate damage, optional

verdict
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""


@pytest.fixture(scope="module")
def team(db: Any) -> dict[str, Any]:
    from server.auth import create_company

    company = create_company(db, f"Review team {secrets.token_hex(3)}", ["m"])
    emails = {}
    for role in ("reviewer", "viewer", "owner"):
        email = f"{role}-{secrets.token_hex(3)}@example.com"
        accounts.create_account(db, company["companyId"], email, role, PASSWORD)
        emails[role] = email
    return {**company, "emails": emails}


@pytest.fixture
def browsers(live_server: str) -> Iterator[Callable[[str], Browserish]]:
    """`browsers(email)`: a signed-in client, closed after the test."""
    opened: list[Browserish] = []

    def make(email: str) -> Browserish:
        browser = Browserish(live_server)
        opened.append(browser)
        assert browser.sign_in(email).status_code == 303
        return browser

    yield make
    for browser in opened:
        browser.http.close()


def in_review(client: httpx.Client, headers: dict[str, str], name: str) -> dict[str, Any]:
    saved = client.post(
        "/v1/inspection/template",
        content=SOURCE.replace("{n}", name),
        headers={**headers, "content-type": "text/plain"},
    )
    assert saved.status_code == 201, saved.text
    return finished_in_review(client, headers, saved.json())


def test_a_reviewer_works_a_case_from_the_queue_to_the_decision(
    client: httpx.Client, browsers: Callable[[str], Browserish], team: dict[str, Any]
) -> None:
    headers = {"x-api-key": team["testKey"]}
    document = in_review(client, headers, secrets.token_hex(3))
    inspection_id = document["_id"]
    front, back = (image["_id"] for image in document["products"][0]["images"])
    browser = browsers(team["emails"]["reviewer"])

    home = browser.get("/dashboard/")
    assert home.headers["location"] == "/dashboard/review"
    queue = browser.get("/dashboard/review")
    assert queue.status_code == 200
    assert re.search(r">Review \(\d+\)</a>", queue.text), "the count in the navigation"
    assert inspection_id in queue.text
    assert "“Not a photo of a screen” is not decided by a machine here" in queue.text
    assert "Inspections</a>" not in queue.text  # a reviewer has no inspections list

    claimed = browser.post(f"/dashboard/review/{inspection_id}/claim")
    assert claimed.status_code == 303
    page = browser.get(f"/dashboard/review/{inspection_id}")
    assert page.status_code == 200
    assert "Release" in page.text and "AB123CD" in page.text  # declared plate shown
    assert f'name="valid:{front}:recaptured"' in page.text
    assert f'name="damage-part:{back}"' in page.text

    saved = browser.post(
        f"/dashboard/review/{inspection_id}",
        data={
            "action": "save",
            f"valid:{front}:recaptured": "yes",
            f"note:{front}:recaptured": "A real car, not a screen",
            f"damage-part:{back}": "bumper",
            f"damage-damage:{back}": "scratch",
            f"damage-severity:{back}": "minor",
        },
    )
    assert saved.status_code == 303, saved.text
    state = client.get(f"/v1/inspection/{inspection_id}", headers=headers).json()
    images = state["products"][0]["images"]
    recaptured = next(v for v in images[0]["validations"] if v["validation"] == "recaptured")
    assert (recaptured["source"], recaptured["valid"]) == ("person", True)
    assert recaptured["reviewedBy"]["name"] == team["emails"]["reviewer"]
    assert images[1]["damages"] == [
        {"part": "bumper", "damage": "scratch", "severity": "minor", "percentage": None}
    ]

    preview = browser.post(
        f"/dashboard/review/{inspection_id}/retake",
        data={"action": "preview", "images": [back], "message": "Sacá la foto de atrás con luz"},
    )
    assert preview.status_code == 200
    assert "volvé a sacar algunas fotos" in preview.text  # es_AR: the consumer's locale
    assert "Sacá la foto de atrás con luz" in preview.text

    no_reason = browser.post(
        f"/dashboard/review/{inspection_id}", data={"action": "decide", "veredict": "approved"}
    )
    assert no_reason.status_code == 400
    assert "Write the reason for the decision" in no_reason.text
    assert "reason_required" not in no_reason.text  # words, not the API's code
    decided = browser.post(
        f"/dashboard/review/{inspection_id}",
        data={"action": "decide", "veredict": "approved", "reason": "Checked every photo"},
    )
    assert decided.status_code == 303, decided.text
    final = client.get(f"/v1/inspection/{inspection_id}", headers=headers).json()
    assert (final["status"], final["veredict"], final["completedBy"]) == (
        "completed",
        "approved",
        "reviewer",
    )
    assert [a["action"] for a in final["review"]["audit"]] == [
        "claim",
        "result",
        "result",
        "damage",
        "decision",
    ]
    exported = browser.get("/dashboard/review/decisions.csv")
    assert exported.status_code == 200
    assert exported.headers["content-type"] == "text/csv; charset=utf-8"  # once, not twice
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    mine = [row for row in rows if row["inspection_id"] == inspection_id]
    assert [(r["veredict"], r["reason"], r["reviewer"]) for r in mine] == [
        ("approved", "Checked every photo", team["emails"]["reviewer"])
    ]
    # The reviewer has no inspections page; an owner sees the audit on the timeline.
    assert browser.get(f"/dashboard/inspections/{inspection_id}").status_code == 403
    owner = browsers(team["emails"]["owner"])
    detail = owner.get(f"/dashboard/inspections/{inspection_id}")
    assert detail.status_code == 200
    assert "History" in detail.text and "Checked every photo" in detail.text
    assert "Approved the inspection" in detail.text and "Took the case" in detail.text
    exported = owner.get(f"/dashboard/inspections/{inspection_id}/history.csv")
    assert exported.status_code == 200, exported.text
    assert exported.headers["content-type"] == "text/csv; charset=utf-8"
    lines = list(csv.reader(io.StringIO(exported.text)))
    assert lines[0] == ["When", "Who", "What", "Photo", "Why"]
    assert [team["emails"]["reviewer"], "Approved the inspection", "", "Checked every photo"] in [
        line[1:] for line in lines
    ]
    assert ["Recorded a damage", "Back", "bumper · scratch · minor"] in [row[2:] for row in lines]
    # In the reader's language, the damage in the PDF's words (server/web/words.py).
    page = f"/dashboard/inspections/{inspection_id}"
    try:
        owner.post("/dashboard/language", data={"locale": "es_AR", "next": page})
        exported = owner.get(f"/dashboard/inspections/{inspection_id}/history.csv")
        lines = list(csv.reader(io.StringIO(exported.text)))
        assert lines[0] == ["Cuándo", "Quién", "Qué", "Foto", "Por qué"]
        assert ["Registró un daño", "Back", "paragolpes · rayón · leve"] in [
            row[2:] for row in lines
        ]
        assert "paragolpes · rayón · leve" in owner.get(page).text
    finally:
        owner.post("/dashboard/language", data={"locale": "en_US", "next": page})


def test_a_viewer_sees_the_queue_but_cannot_claim_or_decide(
    client: httpx.Client, browsers: Callable[[str], Browserish], team: dict[str, Any]
) -> None:
    headers = {"x-api-key": team["testKey"]}
    inspection_id = in_review(client, headers, secrets.token_hex(3))["_id"]
    browser = browsers(team["emails"]["viewer"])
    page = browser.get(f"/dashboard/review/{inspection_id}")
    assert page.status_code == 200
    assert "Claim this case" not in page.text and 'value="decide"' not in page.text
    assert browser.post(f"/dashboard/review/{inspection_id}/claim").status_code == 403
    refused = browser.post(
        f"/dashboard/review/{inspection_id}",
        data={"action": "decide", "veredict": "approved", "reason": "x"},
    )
    assert refused.status_code == 403


def test_the_pdf_says_who_reviewed_and_why() -> None:
    from server.reports.sections import reviewed_lines

    inspection = {
        "review": {
            "decisions": [
                {
                    "veredict": "approved",
                    "reason": "Checked every photo",
                    "by": {"id": "m1", "name": "ana@example.com"},
                    "at": "2026-11-25T16:00:00.000Z",
                }
            ]
        }
    }
    # Moments and verdicts in the report's words (h-dashboard's PDF formatting).
    assert reviewed_lines(inspection) == [
        "Reviewed by ana@example.com on Nov 25, 2026, 4:00:00\u202fPM (UTC): "
        "Checked every photo (Approved)"
    ]


def test_the_editor_warns_for_a_required_validation_that_goes_to_a_person(
    browsers: Callable[[str], Browserish], team: dict[str, Any]
) -> None:
    owner = browsers(team["emails"]["owner"])
    owner.get("/dashboard/templates")
    found = owner.post(
        "/dashboard/templates/check", json={"source": SOURCE.replace("{n}", "editor")}
    )
    assert found.status_code == 200, found.text
    warnings = [d for d in found.json()["diagnostics"] if d["code"] == "W900"]
    assert [(w["severity"], w["line"], w["sourceLine"].strip()) for w in warnings] == [
        ("warning", 12, "validate recaptured")
    ]  # `damage, optional` on the back photo gets none


def test_review_forms_need_the_sessions_csrf_token(
    client: httpx.Client, browsers: Callable[[str], Browserish], team: dict[str, Any]
) -> None:
    inspection_id = in_review(client, {"x-api-key": team["testKey"]}, secrets.token_hex(3))["_id"]
    reviewer = browsers(team["emails"]["reviewer"])
    reviewer.get("/dashboard/review")
    forged = reviewer.http.post(
        f"/dashboard/review/{inspection_id}/claim", headers={"x-csrftoken": "not-the-token"}
    )
    assert forged.status_code == 403
    state = client.get(f"/v1/inspection/{inspection_id}", headers={"x-api-key": team["testKey"]})
    assert state.json()["review"]["assignee"] is None  # nothing claimed


def test_the_rules_suggestion_in_the_reviewers_language(
    client: httpx.Client, browsers: Callable[[str], Browserish], team: dict[str, Any]
) -> None:
    """Issue 25: an es_AR inspection's suggestion is said in Spanish by the API and in the
    reviewer's own language on the case page (the template translates its reason)."""
    headers = {"x-api-key": team["testKey"]}
    source = SOURCE.replace("{n}", secrets.token_hex(3)).replace(
        "    type: car\n", "    type: car\n    locales: en_US, es_AR, pt_BR\n", 1
    )
    source = source.replace(
        '    otherwise "Some photos were not approved"\n',
        '    otherwise "Some photos were not approved"\n'
        '        reason es_AR: "Algunas fotos no fueron aprobadas"\n'
        '        reason pt_BR: "Algumas fotos não foram aprovadas"\n',
    )
    saved = client.post(
        "/v1/inspection/template",
        content=source,
        headers={**headers, "content-type": "text/plain"},
    )
    assert saved.status_code == 201, saved.text
    document = finished_in_review(client, headers, saved.json())
    assert document["review"]["suggestion"]["reasons"] == ["Algunas fotos no fueron aprobadas"]
    # Why it waits: written by the runtime in the inspection's locale, re-worded from its
    # fields in the reviewer's language on the case and queue pages.
    from runtime.wording import review_reason_text
    from server.web.history import reason_text

    [reason] = [r for r in document["review"]["reasons"] if r["code"] != "rule"][:1]
    assert reason["message"] == review_reason_text(reason, "es_AR")
    english, portuguese = (review_reason_text(reason, loc) for loc in ("en_US", "pt_BR"))
    assert len({reason["message"], english, portuguese}) == 3
    # The pages name the validation for people, never by its code.
    english, portuguese = (reason_text(reason, loc) for loc in ("en_US", "pt_BR"))
    assert "recaptured" not in english
    browser = browsers(team["emails"]["reviewer"])
    path = f"/dashboard/review/{document['_id']}"
    case_page = browser.get(path).text
    assert "Some photos were not approved" in case_page
    assert html.escape(english) in case_page
    assert html.escape(english) in browser.get("/dashboard/review").text
    try:
        browser.get(path)
        browser.post("/dashboard/language", data={"locale": "pt_BR", "next": path})
        case_page = browser.get(path).text
        assert "Algumas fotos não foram aprovadas" in case_page
        assert html.escape(portuguese) in case_page
        assert html.escape(portuguese) in browser.get("/dashboard/review").text
    finally:
        browser.get(path)
        browser.post("/dashboard/language", data={"locale": "en_US", "next": path})


def test_a_review_band_case_says_what_the_machine_saw(
    client: httpx.Client, browsers: Callable[[str], Browserish], team: dict[str, Any]
) -> None:
    """A machine result in the template's review band (issue 37): the case page says what the
    machine saw under the reason, and the history says it beside the machine's result."""
    headers = {"x-api-key": team["testKey"]}
    source = SOURCE.replace("{n}", secrets.token_hex(3)).replace(
        "    validate recaptured\n", "    validate recaptured, review below confidence 90\n"
    )
    saved = client.post(
        "/v1/inspection/template",
        content=source,
        headers={**headers, "content-type": "text/plain"},
    )
    assert saved.status_code == 201, saved.text

    def report(inspection_id: str, image_ids: list[str]) -> None:
        reported = client.post(
            f"/v1/inspection/{inspection_id}/image/{image_ids[0]}/validation",
            json={"validation": "recaptured", "confidence": 62, "result": "genuine"},
            headers=headers,
        )
        assert reported.status_code == 200, reported.text

    finished = finished_in_review(client, headers, saved.json(), report)
    inspection_id = finished["_id"]
    [reason] = finished["review"]["reasons"]
    assert reason["code"] == "low_confidence" and reason["result"] == "genuine"
    assert reason["machineSaw"] == "recaptured: se leyó genuine con 62%"  # the inspection's
    browser = browsers(team["emails"]["reviewer"])
    page = browser.get(f"/dashboard/review/{inspection_id}").text
    saw = "“Not a photo of a screen”: read genuine at 62%"
    assert html.escape(f"The machine saw: {saw}") in page
    assert html.escape(saw) in page.split('id="h-history"')[1]  # the history's "Why"
