"""Webhooks to real receivers on 127.0.0.1: signatures, retries, Retry-After, 410, events."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlmodel import select

from server.app import worker_jobs
from server.blobs import LocalBlobStore
from server.db import Database
from server.inspections import events
from server.settings import Settings
from server.tables import JobRecord
from server.webhooks import service as webhooks
from server.webhooks.tables import WebhookAttemptRecord, WebhookSubscriptionRecord

from .conftest import Drain, Receiver
from .inspections import insert_inspection

TOLERANCE_SECONDS = 5 * 60


def verify_standard_webhook(
    secret: str, headers: dict[str, str], body: bytes, *, legacy: bool = True
) -> None:
    """Standard Webhooks verification, written from the specification (not the server code)."""
    assert secret.startswith("whsec_")
    key = base64.b64decode(secret[len("whsec_") :])
    message_id = headers["webhook-id"]
    timestamp = headers["webhook-timestamp"]
    assert abs(int(timestamp) - time.time()) < TOLERANCE_SECONDS
    content = f"{message_id}.{timestamp}.{body.decode('utf-8')}".encode()
    expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    given = [part.split(",", 1) for part in headers["webhook-signature"].split(" ")]
    assert any(
        version == "v1" and hmac.compare_digest(signature, expected) for version, signature in given
    ), "no valid v1 signature"
    if legacy:  # the older scheme: hex HMAC of the body keyed with the secret string as issued
        expected_legacy = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        assert hmac.compare_digest(headers["autoinspector-signature"], expected_legacy)


def attempts(db: Database, delivery_id: str) -> list[WebhookAttemptRecord]:
    return webhooks.attempts_of(db, delivery_id)


def _subscribe_to_completions(
    client: httpx.Client, headers: dict[str, str], endpoint: str
) -> httpx.Response:
    """Subscribe `endpoint` to `inspection_completed` through the API."""
    return client.post(
        "/v1/notification/webhook",
        json={"events": ["inspection_completed"], "endpoint": endpoint},
        headers=headers,
    )


def test_report_callback_is_signed_and_carries_a_fresh_link(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
    receiver: Receiver,
    drain: Drain,
) -> None:
    secret = webhooks.rotate_secret(db, company["companyId"])
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    created = client.post(
        f"/v1/inspection/{inspection_id}/report/request",
        json={"callbackURL": receiver.url},
        headers=headers,
    )
    assert created.status_code == 201
    drain()
    (delivery,) = receiver.wait_for(1)
    verify_standard_webhook(secret, delivery.headers, delivery.body)
    notification = delivery.json()
    assert notification["event"] == "report_completed"
    report = notification["payload"]
    assert report["_id"] == created.json()["_id"]
    assert report["status"] == "completed" and report["callbackURL"] == receiver.url
    pdf = httpx.get(report["result"]["url"], timeout=30)
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert delivery.headers["content-type"] == "application/json"


def test_rotated_secret_signs_later_deliveries(
    db: Database,
    company: dict[str, Any],
    receiver: Receiver,
    drain: Drain,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = webhooks.rotate_secret(db, company["companyId"])
    new = webhooks.rotate_secret(db, company["companyId"])
    assert old != new and new.startswith("whsec_")
    with db.session() as session:
        webhooks.enqueue_delivery(
            session,
            company_id=company["companyId"],
            event="inspection_created",
            url=receiver.url,
            body={"event": "inspection_created", "payload": {"_id": "x"}},
        )
        session.commit()
    drain()
    (delivery,) = receiver.wait_for(1)
    verify_standard_webhook(new, delivery.headers, delivery.body)
    verify_standard_webhook(old, delivery.headers, delivery.body, legacy=False)  # grace period
    assert len(delivery.headers["webhook-signature"].split(" ")) == 2  # new, then old
    assert (
        delivery.headers["autoinspector-signature"]
        == hmac.new(new.encode(), delivery.body, hashlib.sha256).hexdigest()
    )

    monkeypatch.setattr(webhooks, "ROTATION_GRACE", timedelta(0))  # the grace period is over
    _deliver(db, company["companyId"], receiver.url)
    drain()
    late = receiver.wait_for(2)[1]
    verify_standard_webhook(new, late.headers, late.body)
    with pytest.raises(AssertionError, match="no valid v1 signature"):
        verify_standard_webhook(old, late.headers, late.body, legacy=False)


def _deliver(db: Database, company_id: str, url: str, subscription_id: str | None = None) -> str:
    with db.session() as session:
        delivery_id = webhooks.enqueue_delivery(
            session,
            company_id=company_id,
            event="inspection_completed",
            url=url,
            body={"event": "inspection_completed", "payload": {"_id": "abc"}},
            subscription_id=subscription_id,
        )
        session.commit()
    return delivery_id


def test_failing_twice_then_succeeding_gets_three_attempts_with_one_id(
    db: Database, company: dict[str, Any], receiver: Receiver, drain: Drain
) -> None:
    secret = webhooks.rotate_secret(db, company["companyId"])
    receiver.script = [(500, {}), (502, {})]
    delivery_id = _deliver(db, company["companyId"], receiver.url)
    drain()
    received = receiver.wait_for(3)
    assert len(received) == 3
    assert {d.headers["webhook-id"] for d in received} == {delivery_id}
    for delivery in received:
        verify_standard_webhook(secret, delivery.headers, delivery.body)
    recorded = attempts(db, delivery_id)
    assert [(a.attempt, a.status_code) for a in recorded] == [(1, 500), (2, 502), (3, 200)]
    time.sleep(0.3)
    assert len(receiver.received) == 3  # nothing after the success


def test_gone_stops_retries_and_disables_the_subscription(
    client: httpx.Client,
    db: Database,
    company: dict[str, Any],
    headers: dict[str, str],
    receiver: Receiver,
    drain: Drain,
) -> None:
    created = _subscribe_to_completions(client, headers, receiver.url)
    subscription_id = created.json()["_id"]
    receiver.script = [(410, {})]
    delivery_id = _deliver(db, company["companyId"], receiver.url, subscription_id)
    drain()
    assert len(receiver.wait_for(1)) == 1
    time.sleep(0.3)
    assert len(receiver.received) == 1
    assert [a.status_code for a in attempts(db, delivery_id)] == [410]
    with db.session() as session:
        job = next(
            j
            for j in session.exec(select(JobRecord)).all()
            if j.payload.get("deliveryId") == delivery_id
        )
        assert job.status == "failed" and job.attempts == 1
        subscription = session.get(WebhookSubscriptionRecord, subscription_id)
        assert subscription is not None and subscription.disabled_at is not None
    listed = client.get("/v1/notification/webhook", headers=headers).json()["webhooks"]
    assert [w["active"] for w in listed if w["_id"] == subscription_id] == [False]


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_is_honoured(
    db: Database, company: dict[str, Any], receiver: Receiver, drain: Drain, status: int
) -> None:
    receiver.script = [(status, {"Retry-After": "2"})]
    delivery_id = _deliver(db, company["companyId"], receiver.url)
    drain()
    first, second = receiver.wait_for(2)
    # the worker's own backoff is 50 ms here: only Retry-After explains a 2 s pause
    assert second.at - first.at >= 1.9
    assert [a.status_code for a in attempts(db, delivery_id)] == [status, 200]


def test_unreachable_receiver_is_retried_then_given_up(
    db: Database, company: dict[str, Any], drain: Drain
) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    delivery_id = _deliver(db, company["companyId"], f"http://127.0.0.1:{port}/hook")
    drain()
    recorded = attempts(db, delivery_id)
    assert len(recorded) == webhooks.DELIVERY_MAX_ATTEMPTS
    assert all(a.status_code is None and a.error for a in recorded)


def test_delivery_rechecks_the_url_policy(
    db: Database, settings: Settings, company: dict[str, Any], receiver: Receiver
) -> None:
    """A URL allowed when registered but refused at delivery (DNS rebinding) is never called."""
    from server import jobs

    production = settings.model_copy(update={"env": "production", "allow_loopback_webhooks": False})
    delivery_id = _deliver(db, company["companyId"], receiver.url)
    config = jobs.WorkerConfig(backoff_base_seconds=0.01)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not attempts(db, delivery_id):
        jobs.run_once(db, production, config, registry=worker_jobs(production))
    (attempt,) = attempts(db, delivery_id)
    assert attempt.status_code is None and attempt.error == "callback_url_not_allowed"
    assert receiver.received == []


def test_production_delivery_connects_to_the_checked_address(
    db: Database,
    settings: Settings,
    company: dict[str, Any],
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The delivery goes to the address the policy approved, with the original Host header,
    so a DNS answer changing after the check (rebinding) cannot redirect it."""
    from server import jobs

    port = receiver.url.split(":")[2].split("/")[0]
    answers = {"hooks.customer.test": ["127.0.0.1"]}
    monkeypatch.setattr(webhooks, "RESOLVER", lambda host, _port: answers[host])
    production = settings.model_copy(update={"env": "production", "allow_loopback_webhooks": True})
    delivery_id = _deliver(db, company["companyId"], f"http://hooks.customer.test:{port}/in?x=1")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not attempts(db, delivery_id):
        jobs.run_once(
            db,
            production,
            jobs.WorkerConfig(backoff_base_seconds=0.01),
            registry=worker_jobs(production),
        )
    (delivery,) = receiver.wait_for(1)
    assert delivery.headers["host"] == f"hooks.customer.test:{port}"
    assert delivery.path == "/in?x=1"
    assert [a.status_code for a in attempts(db, delivery_id)] == [200]

    answers["hooks.customer.test"] = ["10.0.0.7"]  # rebinding to an internal address
    refused = _deliver(db, company["companyId"], f"http://hooks.customer.test:{port}/in")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not attempts(db, refused):
        jobs.run_once(
            db,
            production,
            jobs.WorkerConfig(backoff_base_seconds=0.01),
            registry=worker_jobs(production),
        )
    assert [a.error for a in attempts(db, refused)] == ["callback_url_not_allowed"]
    assert len(receiver.received) == 1


def test_pinned_urls_keep_host_port_path_and_tls_name() -> None:
    from server.urlsafety import CheckedURL

    url, extra, extensions = webhooks.pinned(
        CheckedURL(
            "https://hooks.example.com:8443/a/b?c=d",
            "hooks.example.com",
            8443,
            ("2606:2800:220:1::1",),
        )
    )
    assert url == "https://[2606:2800:220:1::1]:8443/a/b?c=d"
    assert extra == {"host": "hooks.example.com:8443"}
    assert extensions == {"sni_hostname": "hooks.example.com"}
    unchanged = webhooks.pinned(CheckedURL("http://x.test/p", "x.test", 80, ()))
    assert unchanged == ("http://x.test/p", {}, {})


def test_subscriptions_crud_and_secret_shown_once(
    client: httpx.Client,
    company: dict[str, Any],
    other_company: dict[str, Any],
    headers: dict[str, str],
    receiver: Receiver,
) -> None:
    body = {"events": ["inspection_created", "inspection_completed"], "endpoint": receiver.url}
    first = client.post("/v1/notification/webhook", json=body, headers=headers)
    assert first.status_code == 201
    assert first.json()["secret"].startswith("whsec_")
    second = client.post("/v1/notification/webhook", json=body, headers=headers)
    assert second.status_code == 201 and "secret" not in second.json()
    listed = client.get("/v1/notification/webhook", headers=headers).json()["webhooks"]
    assert [w["_id"] for w in listed] == [first.json()["_id"], second.json()["_id"]]
    assert listed[0]["events"] == body["events"] and listed[0]["endpoint"] == receiver.url
    live = client.get("/v1/notification/webhook", headers={"x-api-key": company["liveKey"]})
    assert live.json()["webhooks"] == []  # test-key subscriptions are not the live key's
    foreign = {"x-api-key": other_company["testKey"]}
    path = f"/v1/notification/webhook/{first.json()['_id']}"
    assert client.delete(path, headers=foreign).status_code == 404
    deleted = client.delete(path, headers=headers)
    assert deleted.status_code == 200
    again = client.delete(path, headers=headers)
    assert again.status_code == 404 and again.json()["code"] == "webhook_not_found"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"events": [], "endpoint": "http://127.0.0.1/x"}, "invalid_events"),
        ({"events": ["report_completed"], "endpoint": "http://127.0.0.1/x"}, "invalid_events"),
        ({"events": "inspection_created", "endpoint": "http://127.0.0.1/x"}, "invalid_events"),
        ({"events": ["inspection_created"], "endpoint": "gopher://x"}, "invalid_callback_url"),
        ({"events": ["inspection_created"]}, "invalid_callback_url"),
    ],
)
def test_bad_subscriptions_are_400(
    client: httpx.Client, headers: dict[str, str], body: dict[str, Any], code: str
) -> None:
    response = client.post("/v1/notification/webhook", json=body, headers=headers)
    assert response.status_code == 400
    assert response.json()["code"] == code


def test_production_refuses_internal_endpoints_at_subscription(
    serve_app: Any, db: Database, settings: Settings, company: dict[str, Any]
) -> None:
    from server.app import create_app

    production = settings.model_copy(update={"env": "production", "allow_loopback_webhooks": False})
    inspection = {"x-api-key": company["testKey"]}
    with serve_app(create_app(production, db=db)) as base_url:
        for endpoint in (
            "http://127.0.0.1:9/x",
            "http://[::1]/x",
            "http://10.0.0.8/x",
            "http://192.168.1.1/x",
            "http://169.254.169.254/latest/meta-data",
            "http://[fd00:ec2::254]/",
            "http://224.0.0.1/",
            "http://0.0.0.0/",
        ):
            response = httpx.post(
                f"{base_url}/v1/notification/webhook",
                json={"events": ["inspection_created"], "endpoint": endpoint},
                headers=inspection,
                timeout=30,
            )
            assert response.status_code == 400, endpoint
            assert response.json()["code"] == "callback_url_not_allowed", endpoint
            report = httpx.post(
                f"{base_url}/v1/inspection/{'0' * 24}/report/request",
                json={"callbackURL": endpoint},
                headers=inspection,
                timeout=30,
            )
            assert report.status_code == 400, endpoint
            assert report.json()["code"] == "callback_url_not_allowed"


def test_events_reach_subscribers_of_that_event_only(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
    receiver: Receiver,
    drain: Drain,
) -> None:
    created = _subscribe_to_completions(client, headers, receiver.url)
    secret = created.json()["secret"]
    inspection = insert_inspection(db, blobs, company["companyId"])
    with db.session() as session:
        for event in ("inspection_created", "inspection_completed"):
            events.publish(
                session,
                company_id=company["companyId"],
                testing=True,
                event=event,
                payload={"inspectionId": inspection["inspectionId"], "status": "completed"},
            )
        assert (
            events.publish(  # live data does not reach test-key subscriptions
                session,
                company_id=company["companyId"],
                testing=False,
                event="inspection_completed",
                payload={"inspectionId": inspection["inspectionId"]},
            )
            == 0
        )
        session.commit()
    drain()
    (delivery,) = receiver.wait_for(1)
    time.sleep(0.2)
    assert len(receiver.received) == 1
    verify_standard_webhook(secret, delivery.headers, delivery.body)
    body = json.loads(delivery.body)
    assert body["event"] == "inspection_completed"
    payload = body["payload"]
    assert payload["_id"] == inspection["inspectionId"]
    assert payload["type"] == "car" and payload["status"] == "completed"
    assert payload["veredict"] == "approved"
    assert payload["metadata"] == {"policy": "P-1"}
    assert payload["producer"]["companyId"] == company["companyId"]
    assert payload["template"]["name"] == "Report test car"
    assert payload["products"][0]["car"]["plate"] == "AB123CD"


def test_deleting_a_subscription_cancels_its_queued_deliveries(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
    receiver: Receiver,
    drain: Drain,
) -> None:
    subscription_id = _subscribe_to_completions(client, headers, receiver.url).json()["_id"]
    inspection = insert_inspection(db, blobs, company["companyId"])
    with db.session() as session:
        queued = events.publish(
            session,
            company_id=company["companyId"],
            testing=True,
            event="inspection_completed",
            payload={"inspectionId": inspection["inspectionId"]},
        )
        session.commit()
    assert queued == 1
    assert client.delete(f"/v1/notification/webhook/{subscription_id}", headers=headers).is_success
    drain()
    time.sleep(0.2)
    assert receiver.received == []
    with db.session() as session:
        errors = [
            attempt.error
            for attempt in session.exec(select(WebhookAttemptRecord)).all()
            if attempt.company_id == company["companyId"]
        ]
    assert errors == ["subscription_deleted"]


def test_unknown_event_names_are_a_programming_error(db: Database) -> None:
    with db.session() as session, pytest.raises(events.UnknownEventError):
        events.publish(session, company_id="c", testing=True, event="nope", payload={})


def test_retry_after_values() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from server.common import retry_after_seconds

    def parse(value: str | None) -> float | None:
        return retry_after_seconds(value, cap=webhooks.MAX_RETRY_AFTER_SECONDS)

    assert parse("7") == 7.0
    assert parse("999999") == webhooks.MAX_RETRY_AFTER_SECONDS
    assert parse(None) is None and parse("") is None and parse("soon") is None
    in_a_minute = format_datetime(datetime.now(UTC) + timedelta(seconds=60), usegmt=True)
    value = parse(in_a_minute)
    assert value is not None and 55 <= value <= 61
    assert parse("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: retry now
    # One parser for every server we call: link delivery and analysis providers read dates too.
    import httpx

    from server.delivery.providers import http as delivery_http
    from server.images import providers

    answer = httpx.Response(429, headers={"retry-after": in_a_minute})
    for read in (delivery_http._retry_after, providers._retry_after):
        waited = read(answer)
        assert waited is not None and 55 <= waited <= 61
