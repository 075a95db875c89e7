"""The review through the API (docs/review.md): capabilities, the save warning, status
`review`, `POST .../review` and `POST .../retake` with every refusal's code, the webhook
events, the queue and decision rows, and two reviewers deciding at once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlmodel import col, select

from runtime.cli import photo
from server.db import Database
from server.delivery.tables import LinkDeliveryRecord
from server.inspections.review_tables import ReviewDecisionRecord, ReviewQueueRecord
from server.tables import JobRecord

SOURCE = """
template "Review API car {n}"
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
    validate complete
    validate make, optional

verdict
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""

CALLBACK = "http://127.0.0.1:9/review-hook"


def error_of(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


def save_template(client: httpx.Client, headers: dict[str, str], name: str) -> dict[str, Any]:
    saved = client.post(
        "/v1/inspection/template",
        content=SOURCE.replace("{n}", name),
        headers={**headers, "content-type": "text/plain"},
    )
    assert saved.status_code == 201, saved.text
    template: dict[str, Any] = saved.json()
    return template


def jpeg() -> bytes:
    return photo({"gps": [-34.6, -58.38]}, datetime.now(UTC))


def finished_in_review(
    client: httpx.Client,
    headers: dict[str, str],
    template: dict[str, Any],
    before_finish: Callable[[str, list[str]], None] | None = None,
) -> dict[str, Any]:
    """An es_AR inspection of `template` with its front and back uploaded, finished into
    review; `before_finish(inspection_id, image_ids)` runs between the uploads and the finish."""
    created = client.post(
        "/v1/inspection/car",
        json={
            "templateId": template["_id"],
            "locale": "es_AR",
            "car": {"plate": "AB123CD"},
            "delivery": {"channel": "email", "destination": "ana@example.com"},
            "callbackURL": CALLBACK,
        },
        headers=headers,
    )
    assert created.status_code == 201, created.text
    product_id = created.json()["productId"]
    image_ids = []
    for side in ("front", "back"):
        uploaded = client.post(
            f"/v1/inspection/image/{product_id}",
            files={
                "image": ("p.jpg", jpeg(), "image/jpeg"),
                "data": (None, f'{{"side": "{side}"}}'),
            },
            headers=headers,
        )
        assert uploaded.status_code == 201, uploaded.text
        assert uploaded.json()["processed"] is True  # nothing here runs recaptured or make
        image_ids.append(uploaded.json()["_id"])
    inspection_id = created.json()["inspectionId"]
    if before_finish is not None:
        before_finish(inspection_id, image_ids)
    document = client.get(f"/v1/inspection/{inspection_id}", headers=headers).json()
    assert document["status"] == "created"  # never `processing` waiting on nobody
    finished = client.post(f"/v1/inspection/finish/{inspection_id}", headers=headers)
    assert finished.status_code == 200, finished.text
    body: dict[str, Any] = finished.json()
    assert body["status"] == "review"
    return body


def webhook_events(db: Database, inspection_id: str) -> list[str]:
    with db.session() as session:
        jobs = session.execute(
            select(JobRecord).where(col(JobRecord.kind) == "webhook").order_by(col(JobRecord.id))
        ).scalars()
        return [
            job.payload["body"]["event"]
            for job in jobs
            if (job.payload.get("body") or {}).get("payload", {}).get("_id") == inspection_id
        ]


def test_capabilities_say_which_validations_go_to_a_person(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    answer = client.get("/v1/capabilities", headers=test_headers)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["validations"]["complete"] == "local"
    assert found["validations"]["recaptured"] == "person"
    assert "recaptured" in found["person"] and "complete" in found["machine"]
    assert client.get("/v1/capabilities").status_code == 401


def test_a_save_warns_for_each_required_validation_that_goes_to_a_person(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    template = save_template(client, test_headers, "warned")
    assert [(w["code"], w["image"], w["validation"]) for w in template["warnings"]] == [
        ("W900", "front", "recaptured")
    ]  # `make` is optional: no warning


def test_the_whole_review_through_the_api(
    client: httpx.Client, test_headers: dict[str, str], db: Database
) -> None:
    template = save_template(client, test_headers, "flow")
    document = finished_in_review(client, test_headers, template)
    inspection_id = document["_id"]
    front = document["products"][0]["images"][0]
    back = document["products"][0]["images"][1]
    assert document["veredict"] == "not_defined"
    assert document["review"]["pending"] == [{"imageId": front["_id"], "validation": "recaptured"}]
    assert document["review"]["reasons"][0]["code"] == "no_machine_route"
    with db.session() as session:
        row = session.get(ReviewQueueRecord, inspection_id)
        assert row is not None and row.pending == 1
        assert row.reasons[0]["code"] == "no_machine_route"

    url = f"/v1/inspection/{inspection_id}/review"
    refusals = [
        ({"veredict": "approved"}, (400, "reason_required")),
        ({"veredict": "approved", "reason": ""}, (400, "reason_required")),
        ({"validations": [{"imageId": "0" * 24, "validation": "recaptured", "valid": True}]},
         (404, "image_not_found")),
        ({"validations": [{"imageId": front["_id"], "validation": "plate", "valid": True}]},
         (404, "validation_not_found")),
        ({"validations": [{"imageId": front["_id"], "validation": "recaptured", "valid": 1}]},
         (400, "invalid_body")),
        ({"veredict": "perhaps", "reason": "x"}, (400, "invalid_body")),
    ]  # fmt: skip
    for body, expected in refusals:
        assert error_of(client.post(url, json=body, headers=test_headers)) == expected, body
    assert error_of(
        client.post(f"/v1/inspection/{'0' * 24}/review", json={}, headers=test_headers)
    ) == (
        404,
        "inspection_not_found",
    )

    recorded = client.post(
        url,
        json={
            "validations": [
                {"imageId": front["_id"], "validation": "recaptured", "valid": True, "note": "ok"}
            ]
        },
        headers=test_headers,
    )
    assert recorded.status_code == 200, recorded.text
    view = next(
        v
        for v in recorded.json()["products"][0]["images"][0]["validations"]
        if v["validation"] == "recaptured"
    )
    assert (view["source"], view["confidence"], view["note"]) == ("person", 100, "ok")
    assert view["reviewedBy"]["id"].startswith("key:")

    # The retake: the back photo's slot reopens, the inspection goes back to `started`.
    retake = client.post(
        f"/v1/inspection/{inspection_id}/retake",
        json={"images": [back["_id"]], "message": "Sacá de nuevo la foto de atrás"},
        headers=test_headers,
    )
    assert retake.status_code == 202, retake.text
    answer = retake.json()
    assert answer["status"] == "started"
    assert answer["magicLink"].startswith("http") and "code=" in answer["magicLink"]
    assert answer["delivery"]["channel"] == "email"
    with db.session() as session:
        assert session.get(ReviewQueueRecord, inspection_id) is None  # out of the queue
        latest = (
            session.execute(
                select(LinkDeliveryRecord)
                .where(col(LinkDeliveryRecord.inspection_id) == inspection_id)
                .order_by(col(LinkDeliveryRecord.created_at).desc())
            )
            .scalars()
            .first()
        )
        assert latest is not None and latest.note == "Sacá de nuevo la foto de atrás"
    reopened = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json()
    assert reopened["status"] == "started"
    assert [i["_id"] for i in reopened["products"][0]["replacedImages"]] == [back["_id"]]
    assert reopened["review"]["retake"]["identifiers"] == [back["templateImageIdentifier"]]

    product_id = reopened["products"][0]["_id"]
    again = client.post(
        f"/v1/inspection/image/{product_id}",
        files={"image": ("p.jpg", jpeg(), "image/jpeg"), "data": (None, '{"side": "back"}')},
        headers=test_headers,
    )
    assert again.status_code == 201, again.text
    finished = client.post(f"/v1/inspection/finish/{inspection_id}", headers=test_headers)
    # The person's result on the front photo stands; the reviewer who asked for the new back
    # photo looks at it before any verdict.
    back_again = finished.json()
    assert back_again["status"] == "review", back_again["review"]
    assert [r["code"] for r in back_again["review"]["reasons"]] == ["retake"]
    assert back_again["review"]["pending"] == []
    decided = client.post(
        url, json={"veredict": "approved", "reason": "New back photo is fine"}, headers=test_headers
    )
    assert decided.json()["completedBy"] == "reviewer"
    # Decided by a person: another decision is a conflict with theirs.
    assert error_of(
        client.post(url, json={"veredict": "approved", "reason": "x"}, headers=test_headers)
    ) == (409, "review_conflict")
    assert error_of(
        client.post(
            f"/v1/inspection/{inspection_id}/retake",
            json={"images": [front["_id"]], "message": "again"},
            headers=test_headers,
        )
    ) == (409, "retake_not_possible")
    events = webhook_events(db, inspection_id)
    assert "inspection_review_required" in events and "retake_requested" in events


def test_a_decision_completes_as_reviewer_and_is_recorded(
    client: httpx.Client, test_headers: dict[str, str], db: Database
) -> None:
    template = save_template(client, test_headers, "decide")
    document = finished_in_review(client, test_headers, template)
    inspection_id = document["_id"]
    decided = client.post(
        f"/v1/inspection/{inspection_id}/review",
        json={"veredict": "disapproved", "reason": "The front is a photo of a screen"},
        headers=test_headers,
    )
    assert decided.status_code == 200, decided.text
    body = decided.json()
    assert (body["status"], body["veredict"], body["completedBy"]) == (
        "completed",
        "disapproved",
        "reviewer",
    )
    assert body["reasons"] == ["The front is a photo of a screen"]
    assert body["review"]["decisions"][0]["reason"] == "The front is a photo of a screen"
    assert [a["action"] for a in body["review"]["audit"]] == ["decision"]
    with db.session() as session:
        assert session.get(ReviewQueueRecord, inspection_id) is None
        rows = (
            session.execute(
                select(ReviewDecisionRecord).where(
                    col(ReviewDecisionRecord.inspection_id) == inspection_id
                )
            )
            .scalars()
            .all()
        )
        assert [(r.veredict, r.reason) for r in rows] == [
            ("disapproved", "The front is a photo of a screen")
        ]
    events = webhook_events(db, inspection_id)
    assert events[-2:] == ["inspection_reviewed", "inspection_completed"] or set(events[-2:]) == {
        "inspection_reviewed",
        "inspection_completed",
    }
    again = client.post(
        f"/v1/inspection/{inspection_id}/review",
        json={"veredict": "approved", "reason": "changed my mind"},
        headers=test_headers,
    )
    assert error_of(again) == (409, "review_conflict")


@pytest.mark.parametrize("attempt", range(2))
def test_two_reviewers_deciding_at_once_one_wins_the_other_gets_review_conflict(
    client: httpx.Client, test_headers: dict[str, str], db: Database, attempt: int
) -> None:
    template = save_template(client, test_headers, f"race {attempt}")
    inspection_id = finished_in_review(client, test_headers, template)["_id"]
    answers: list[httpx.Response] = []
    barrier = threading.Barrier(2)

    def decide(veredict: str) -> None:
        with httpx.Client(base_url=str(client.base_url), timeout=30) as own:
            barrier.wait()
            answers.append(
                own.post(
                    f"/v1/inspection/{inspection_id}/review",
                    json={"veredict": veredict, "reason": f"{veredict} by a racer"},
                    headers=test_headers,
                )
            )

    threads = [threading.Thread(target=decide, args=(v,)) for v in ("approved", "disapproved")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 409], [a.text for a in answers]
    loser = next(a for a in answers if a.status_code == 409)
    assert loser.json()["code"] == "review_conflict"
    winner = next(a for a in answers if a.status_code == 200).json()
    final = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json()
    assert final["veredict"] == winner["veredict"]
    assert len(final["review"]["decisions"]) == 1  # nothing of the loser's was applied
    with db.session() as session:
        rows = (
            session.execute(
                select(ReviewDecisionRecord).where(
                    col(ReviewDecisionRecord.inspection_id) == inspection_id
                )
            )
            .scalars()
            .all()
        )
        assert len(rows) == 1


def test_capabilities_name_each_route_of_the_deployment(settings: Any) -> None:
    from server import routing

    configured = settings.model_copy(
        update={
            "validation_providers": {"make": "https://provider.example/make"},
            "validation_provider_secret": "s" * 32,
            "posted_validations": frozenset({"damage"}),
        }
    )
    analyzers = routing.local_analyzers(configured)
    routes = routing.capabilities(configured, analyzers)["validations"]
    assert (routes["make"], routes["damage"], routes["date"], routes["recaptured"]) == (
        "provider",
        "api",
        "local",
        "person",
    )
    machine = routing.machine_validations(configured, analyzers)
    assert {"make", "damage", "date"} <= machine and "recaptured" not in machine
