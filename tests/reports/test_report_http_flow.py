"""End to end over HTTP only: subscribe, create an inspection from a built-in template, upload a
photo, finish it, receive the events, request a report with a callback, download the PDF."""

from __future__ import annotations

import io
import json
from typing import Any

import httpx
import pypdf

from .conftest import Drain, Receiver
from .samples import photo
from .test_report_webhooks import verify_standard_webhook


def test_inspection_events_report_and_callback_over_http(
    client: httpx.Client,
    headers: dict[str, str],
    receiver: Receiver,
    drain: Drain,
) -> None:
    subscription = client.post(
        "/v1/notification/webhook",
        json={"events": ["inspection_created", "inspection_completed"], "endpoint": receiver.url},
        headers=headers,
    )
    assert subscription.status_code == 201, subscription.text
    secret = subscription.json()["secret"]

    created = client.post(
        "/v1/inspection/car",
        json={
            "templateId": "easy",
            "locale": "es_AR",
            "delivery": {"channel": "email", "destination": "ana@example.com"},
            "car": {"plate": "HTTP123", "make": "Fiat"},
            "consumer": {"firstName": "Ana", "identification": "27123456"},
            "metadata": {"claim": "C-9"},
        },
        headers=headers,
    )
    assert created.status_code == 201, created.text
    inspection_id = created.json()["inspectionId"]
    product_id = created.json()["productId"]

    early = client.post(f"/v1/inspection/{inspection_id}/report/request", json={}, headers=headers)
    assert early.status_code == 409 and early.json()["code"] == "inspection_not_completed"

    uploaded = client.post(
        f"/v1/inspection/image/{product_id}",
        files={
            "image": ("front.jpg", photo(7, size=(1024, 768)), "image/jpeg"),
            "data": (None, json.dumps({"side": "front"}), "application/json"),
        },
        headers=headers,
    )
    assert uploaded.status_code == 201, uploaded.text
    finished = client.post(f"/v1/inspection/finish/{inspection_id}", json={}, headers=headers)
    assert finished.status_code == 200, finished.text
    verdict = finished.json()["veredict"]

    report = client.post(
        f"/v1/inspection/{inspection_id}/report/request",
        json={"callbackURL": receiver.url},
        headers=headers,
    )
    assert report.status_code == 201, report.text
    drain()

    deliveries = receiver.wait_for(3)
    for delivery in deliveries:
        verify_standard_webhook(secret, delivery.headers, delivery.body)
    by_event: dict[str, Any] = {d.json()["event"]: d.json() for d in deliveries}
    assert set(by_event) == {"inspection_created", "inspection_completed", "report_completed"}
    created_event = by_event["inspection_created"]["payload"]
    assert created_event["_id"] == inspection_id and created_event["type"] == "car"
    assert created_event["metadata"] == {"claim": "C-9"}
    assert "veredict" not in created_event
    completed_event = by_event["inspection_completed"]["payload"]
    assert completed_event["status"] == "completed"
    assert completed_event["veredict"] == verdict
    assert completed_event["products"][0]["car"]["plate"] == "HTTP123"
    assert completed_event["template"]["name"] == "Easy car inspection"

    callback = by_event["report_completed"]["payload"]
    assert callback["_id"] == report.json()["_id"] and callback["status"] == "completed"
    pdf = httpx.get(callback["result"]["url"], timeout=30)
    assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
    reader = pypdf.PdfReader(io.BytesIO(pdf.content))
    text = "\n".join(page.extract_text() for page in reader.pages)
    # In the inspection's language (es_AR): "DESAPROBADA" / "APROBADA".
    assert (
        "HTTP123" in text
        and {"approved": "APROBADA", "disapproved": "DESAPROBADA"}[verdict] in text
    )
    assert "Easy car inspection" in text
    assert "****3456" in text and "27123456" not in text
    assert len([image for page in reader.pages for image in page.images]) == 1


def test_an_inspection_created_with_a_callback_url_gets_its_events_there(
    client: httpx.Client,
    db: Any,
    company: dict[str, Any],
    headers: dict[str, str],
    receiver: Receiver,
    drain: Drain,
) -> None:
    from server.webhooks import service as webhooks

    secret = webhooks.rotate_secret(db, company["companyId"])
    created = client.post(
        "/v1/inspection/car",
        json={
            "templateId": "easy",
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "bo@example.com"},
            "car": {"plate": "CB0001"},
            "callbackURL": receiver.url,
        },
        headers=headers,
    )
    assert created.status_code == 201, created.text
    inspection_id = created.json()["inspectionId"]
    finished = client.post(f"/v1/inspection/finish/{inspection_id}", json={}, headers=headers)
    assert finished.status_code == 200, finished.text
    drain()
    deliveries = receiver.wait_for(3)  # created, completed and the link's delivery_sent
    for delivery in deliveries:
        verify_standard_webhook(secret, delivery.headers, delivery.body)
    # The link's own delivery events reach the callback too, whenever the mail goes out.
    inspection_events = [d for d in deliveries if not d.json()["event"].startswith("delivery_")]
    events = [d.json()["event"] for d in inspection_events]
    assert events[0] == "inspection_created" and events[-1] == "inspection_completed"
    assert {d.json()["payload"]["_id"] for d in inspection_events} == {inspection_id}
