"""Delivering the magic link, with real components: an SMTP server (aiosmtpd) in the test, and
local HTTP servers speaking the shapes of Twilio's Messages API and Meta's Cloud API. Jobs are
run by `run_once` here (the test app has no in-process worker), and by a real worker process
that is SIGKILLed mid-send."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email import message_from_bytes
from email.message import Message
from email.policy import default as default_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from sqlmodel import col, select

from server.app import worker_jobs
from server.db import Database
from server.delivery.tables import LinkDeliveryRecord, OutboxMessageRecord
from server.jobs import WorkerConfig, run_once
from server.settings import Settings
from server.tables import JobRecord
from tests.http_threads import serve_in_thread

FAST = WorkerConfig(
    lease_seconds=5, poll_seconds=0.05, backoff_base_seconds=0.05, backoff_max_seconds=0.1
)
ROOT = Path(__file__).resolve().parents[2]


def body(**delivery: Any) -> dict[str, Any]:
    return {"templateId": "easy", "locale": "es_AR", "delivery": delivery}


def run_jobs(
    db: Database, settings: Settings, until: Callable[[], bool], seconds: float = 20
) -> None:
    deadline = time.monotonic() + seconds
    while not until():
        assert time.monotonic() < deadline, "the delivery did not finish"
        if not run_once(db, settings, FAST, registry=worker_jobs(settings)):
            time.sleep(0.05)


def drain(db: Database, settings: Settings) -> None:
    """Run every job that is due (earlier tests leave some), so a test sees only its own."""
    deadline = time.monotonic() + 60
    registry = worker_jobs(settings)
    while run_once(db, settings, FAST, registry=registry) and time.monotonic() < deadline:
        pass


def delivery_of(db: Database, inspection_id: str) -> LinkDeliveryRecord:
    with db.session() as session:
        return (
            session.execute(
                select(LinkDeliveryRecord)
                .where(col(LinkDeliveryRecord.inspection_id) == inspection_id)
                .order_by(col(LinkDeliveryRecord.created_at).desc())
            )
            .scalars()
            .first()
        )


# --- a real SMTP server ---


class Mailbox:
    """An aiosmtpd handler: keeps every message; `answers` scripts the reply to DATA."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.answers: list[str] = []
        self.hold = threading.Event()
        self.received = threading.Event()

    def to(self, address: str) -> list[Message]:
        return [message for message in self.messages if message["To"] == address]

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        answer = self.answers.pop(0) if self.answers else "250 OK"
        if answer.startswith("250"):
            self.messages.append(message_from_bytes(envelope.content, policy=default_policy))
            self.received.set()
            if self.hold.is_set():  # keep the client waiting for the reply (killed meanwhile)
                import asyncio

                await asyncio.sleep(3)
        return answer


@contextmanager
def smtp_server() -> Iterator[tuple[Mailbox, int]]:
    mailbox = Mailbox()
    with socket.socket() as probe:  # a free port (aiosmtpd connects to itself to start)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield mailbox, port
    finally:
        controller.stop()


@pytest.fixture
def mail(settings: Settings) -> Iterator[tuple[Mailbox, Settings]]:
    with smtp_server() as (mailbox, port):
        yield mailbox, settings.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{port}"})


@pytest.fixture
def api(serve_app: Any, db: Database) -> Callable[[Settings], Any]:
    from server.app import create_app

    @contextmanager
    def start(settings: Settings) -> Iterator[httpx.Client]:
        with (
            serve_app(create_app(settings, db=db)) as base_url,
            httpx.Client(base_url=base_url, timeout=30) as http,
        ):
            yield http

    return start


def create(http: httpx.Client, headers: dict[str, str], payload: dict[str, Any]) -> dict[str, Any]:
    response = http.post("/v1/inspection/car", json=payload, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


# --- what creation accepts ---


def test_creation_refuses_bad_deliveries_with_codes_and_stores_e164(
    api: Any, settings: Settings, db: Database, test_headers: dict[str, str]
) -> None:
    with api(settings) as http:

        def refused(payload: dict[str, Any]) -> tuple[int, str, str]:
            response = http.post("/v1/inspection/car", json=payload, headers=test_headers)
            error = response.json()
            return response.status_code, error["code"], error["errors"][0]["field"]

        assert refused(body(channel="pigeon", destination="x")) == (
            400, "invalid_delivery_channel", "delivery.channel",
        )  # fmt: skip
        assert refused(body(channel="email", destination="not an address")) == (
            400, "invalid_delivery_destination", "delivery.destination",
        )  # fmt: skip
        assert refused(body(channel="sms", destination="12")) == (
            400, "invalid_delivery_destination", "delivery.destination",
        )  # fmt: skip
        assert refused(body(channel="sms", destination="1122334455", countryISO="ZZ")) == (
            400, "invalid_delivery_destination", "delivery.countryISO",
        )  # fmt: skip
        # Nothing half-written: no delivery to any refused destination (the PostgreSQL run
        # shares one schema with other modules, so other deliveries may exist).
        with db.session() as session:
            refused_destinations = ["x", "not an address", "12", "1122334455"]
            refused_to = col(LinkDeliveryRecord.destination).in_(refused_destinations)
            assert session.execute(select(LinkDeliveryRecord).where(refused_to)).first() is None

        local = create(
            http, test_headers, body(channel="sms", destination="11 2233-4455", countryISO="AR")
        )
        assert delivery_of(db, local["inspectionId"]).destination == "+541122334455"
        shown = http.get(f"/v1/inspection/{local['inspectionId']}", headers=test_headers).json()
        assert shown["delivery"] == {
            "channel": "sms",
            "destination": "+54******4455",
            "status": "queued",
            "attempts": 0,
            "sentAt": None,
            "lastError": None,
        }

        handed_out = create(http, test_headers, body(disabled=True))
        assert delivery_of(db, handed_out["inspectionId"]) is None
        shown = http.get(f"/v1/inspection/{handed_out['inspectionId']}", headers=test_headers)
        assert shown.json()["delivery"]["status"] == "disabled"


def test_production_refuses_a_channel_without_a_provider(
    api: Any, settings: Settings, test_headers: dict[str, str]
) -> None:
    production = settings.model_copy(update={"env": "production", "smtp_url": "smtp://127.0.0.1:9"})
    with api(production) as http:
        response = http.post(
            "/v1/inspection/car",
            json=body(channel="sms", destination="+541122334455"),
            headers=test_headers,
        )
        assert (response.status_code, response.json()["code"]) == (
            400,
            "delivery_channel_unavailable",
        )
        assert (
            http.post(
                "/v1/inspection/car",
                json=body(channel="email", destination="a@example.com"),
                headers=test_headers,
            ).status_code
            == 201
        )


# --- email over SMTP ---


def test_email_arrives_with_both_parts_headers_locale_and_the_link(
    api: Any, mail: tuple[Mailbox, Settings], db: Database, test_headers: dict[str, str]
) -> None:
    mailbox, settings = mail
    with api(settings) as http:
        http.post(
            "/v1/notification/webhook",
            json={"endpoint": "http://127.0.0.1:9/hooks", "events": ["delivery_sent"]},
            headers=test_headers,
        )
        created = create(
            http, test_headers, body(channel="email", destination="Conductor@Example.com")
        )
        from server import metrics

        sent_before = metrics.DELIVERIES.labels("email", "sent")._value.get()
        run_jobs(db, settings, lambda: delivery_of(db, created["inspectionId"]).status == "sent")
        # run_jobs also runs deliveries queued earlier in this module: at least this one more.
        assert metrics.DELIVERIES.labels("email", "sent")._value.get() >= sent_before + 1
        (message,) = mailbox.to("Conductor@example.com")
        assert message["Subject"].startswith("Company")
        assert message["Subject"].endswith(": completá tu inspección")
        assert message["Content-Language"] == "es-AR"
        assert message["Message-ID"].endswith("@inspectlang.delivery>")
        text = message.get_body(preferencelist=("plain",)).get_content()
        html = message.get_body(preferencelist=("html",)).get_content()
        assert created["magicLink"] in text and "Abrí el enlace" in text
        assert created["magicLink"].replace("&", "&amp;") in html

        shown = http.get(f"/v1/inspection/{created['inspectionId']}", headers=test_headers).json()
        assert shown["delivery"]["status"] == "sent" and shown["delivery"]["attempts"] == 1
        assert shown["delivery"]["destination"] == "C***@example.com"
        assert shown["delivery"]["sentAt"] is not None
        record = delivery_of(db, created["inspectionId"])
        assert record.link is None and record.provider == "smtp"  # the code is not kept
        with db.session() as session:
            jobs = session.execute(select(JobRecord).where(col(JobRecord.kind) == "webhook"))
            events = [job.payload.get("event") for job in jobs.scalars()]
        assert "delivery_sent" in events


def test_smtp_421_then_250_takes_two_attempts_and_550_is_permanent(
    api: Any, mail: tuple[Mailbox, Settings], db: Database, test_headers: dict[str, str]
) -> None:
    mailbox, settings = mail
    with api(settings) as http:
        drain(db, settings)  # earlier tests' jobs
        mailbox.messages.clear()
        mailbox.answers = ["421 Try again later"]
        retried = create(http, test_headers, body(channel="email", destination="retry@example.com"))
        run_jobs(db, settings, lambda: delivery_of(db, retried["inspectionId"]).status == "sent")
        assert delivery_of(db, retried["inspectionId"]).attempts == 2
        assert len(mailbox.messages) == 1

        mailbox.answers = ["550 No such user"]
        refused = create(http, test_headers, body(channel="email", destination="gone@example.com"))
        run_jobs(db, settings, lambda: delivery_of(db, refused["inspectionId"]).status == "failed")
        record = delivery_of(db, refused["inspectionId"])
        assert record.attempts == 1 and "550" in (record.last_error or "")
        assert record.link is None
        shown = http.get(f"/v1/inspection/{refused['inspectionId']}", headers=test_headers).json()
        assert shown["delivery"]["status"] == "failed" and "550" in shown["delivery"]["lastError"]
        assert len(mailbox.messages) == 1


# --- SMS and WhatsApp over local servers speaking the providers' APIs ---


class Provider(BaseHTTPRequestHandler):
    """Twilio's Messages API and Meta's Cloud API, as far as the service uses them."""

    server: Any

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # Twilio: list messages
        state = self.server.state
        query = parse_qs(urlsplit(self.path).query)
        found = [m for m in state["twilio"] if m["to"] == query.get("To", [""])[0]]
        self._reply(200, {"messages": found})

    def do_POST(self) -> None:
        state = self.server.state
        raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        path = urlsplit(self.path).path
        status = state["answers"].pop(0) if state["answers"] else None
        if path.startswith("/2010-04-01/Accounts/AC123/Messages.json"):
            expected = "Basic " + base64.b64encode(b"AC123:secret-token").decode()
            if self.headers.get("Authorization") != expected:
                return self._reply(401, {"code": 20003, "message": "Authenticate"})
            if status == 429:
                return self._reply(429, {"message": "Too Many Requests"}, {"Retry-After": "0"})
            if status == 400:
                return self._reply(400, {"code": 21211, "message": "Invalid 'To' Phone Number"})
            form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
            message = {
                "sid": f"SM{len(state['twilio']):032d}",
                "to": form["To"],
                "from": form["From"],
                "body": form["Body"],
            }
            state["twilio"].append(message)
            if state.get("hold"):
                state["received"].set()
                time.sleep(3)  # the worker is killed while it waits for this answer
            return self._reply(201, message)
        if path == "/v20.0/PHONE123/messages":
            if self.headers.get("Authorization") != "Bearer meta-token":
                return self._reply(401, {"error": {"message": "Invalid OAuth access token"}})
            if status == 429:
                return self._reply(429, {"error": {"message": "rate limit"}})
            if status == 400:
                return self._reply(400, {"error": {"message": "template not found"}})
            sent = json.loads(raw)
            state["meta"].append(sent)
            return self._reply(200, {"messages": [{"id": f"wamid.{len(state['meta'])}"}]})
        return self._reply(404, {})


@contextmanager
def provider_server() -> Iterator[tuple[dict[str, Any], str]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    server.state = {"twilio": [], "meta": [], "answers": [], "received": threading.Event()}  # type: ignore[attr-defined]
    serve_in_thread(server)
    try:
        yield server.state, f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def twilio_settings(settings: Settings, base: str, token: str = "secret-token") -> Settings:
    return settings.model_copy(
        update={
            "twilio_account_sid": "AC123",
            "twilio_auth_token": token,
            "twilio_from": "+15005550006",
            "twilio_base_url": base,
        }
    )


def test_twilio_sms_429_then_201_is_retried_400_is_permanent_and_credentials_are_checked(
    api: Any, settings: Settings, db: Database, test_headers: dict[str, str]
) -> None:
    with provider_server() as (state, base):
        configured = twilio_settings(settings, base)
        with api(configured) as http:
            state["answers"] = [429]
            sent = create(http, test_headers, body(channel="sms", destination="+541122334455"))
            run_jobs(db, configured, lambda: delivery_of(db, sent["inspectionId"]).status == "sent")
            record = delivery_of(db, sent["inspectionId"])
            assert record.attempts == 2 and record.provider == "twilio"
            (message,) = state["twilio"]
            assert message["to"] == "+541122334455" and message["from"] == "+15005550006"
            assert sent["magicLink"] in message["body"] and "completá" in message["body"]

            state["answers"] = [400]
            bad = create(http, test_headers, body(channel="sms", destination="+541122334456"))
            run_jobs(
                db, configured, lambda: delivery_of(db, bad["inspectionId"]).status == "failed"
            )
            assert "HTTP 400" in (delivery_of(db, bad["inspectionId"]).last_error or "")

        wrong = twilio_settings(settings, base, token="wrong")
        with api(wrong) as http:
            refused = create(http, test_headers, body(channel="sms", destination="+541122334457"))
            run_jobs(db, wrong, lambda: delivery_of(db, refused["inspectionId"]).status == "failed")
            assert "HTTP 401" in (delivery_of(db, refused["inspectionId"]).last_error or "")
        assert len(state["twilio"]) == 1


def test_whatsapp_through_twilio_and_through_metas_cloud_api(
    api: Any, settings: Settings, db: Database, test_headers: dict[str, str]
) -> None:
    with provider_server() as (state, base):
        twilio = twilio_settings(settings, base).model_copy(
            update={"twilio_whatsapp_from": "+15005550007"}
        )
        with api(twilio) as http:
            sent = create(http, test_headers, body(channel="wsp", destination="+541122334455"))
            run_jobs(db, twilio, lambda: delivery_of(db, sent["inspectionId"]).status == "sent")
        assert state["twilio"][0]["to"] == "whatsapp:+541122334455"
        assert state["twilio"][0]["from"] == "whatsapp:+15005550007"

        meta = settings.model_copy(
            update={
                "meta_whatsapp_token": "meta-token",
                "meta_phone_number_id": "PHONE123",
                "meta_base_url": f"{base}/v20.0",
            }
        )
        with api(meta) as http:
            state["answers"] = [429]
            sent = create(http, test_headers, body(channel="wsp", destination="+5511987654321"))
            run_jobs(db, meta, lambda: delivery_of(db, sent["inspectionId"]).status == "sent")
            assert delivery_of(db, sent["inspectionId"]).attempts == 2
            (message,) = state["meta"]
            assert message["to"] == "5511987654321" and message["type"] == "template"
            assert message["template"]["language"]["code"] == "es_AR"
            parameters = message["template"]["components"][0]["parameters"]
            company_name, link = (p["text"] for p in parameters)
            assert company_name.startswith("Company") and link == sent["magicLink"]

            state["answers"] = [400]
            bad = create(http, test_headers, body(channel="wsp", destination="+5511987654322"))
            run_jobs(db, meta, lambda: delivery_of(db, bad["inspectionId"]).status == "failed")

        wrong = meta.model_copy(update={"meta_whatsapp_token": "stolen"})
        with api(wrong) as http:
            refused = create(http, test_headers, body(channel="wsp", destination="+5511987654323"))
            run_jobs(db, wrong, lambda: delivery_of(db, refused["inspectionId"]).status == "failed")
            assert "HTTP 401" in (delivery_of(db, refused["inspectionId"]).last_error or "")


# --- a worker killed mid-send ---

WORKER = """
import sys
from server.db import Database
from server.app import worker_jobs
from server.jobs import WorkerConfig, run_worker
from server.settings import Settings
settings = Settings.from_env(data_dir=sys.argv[2], database_url=sys.argv[1], secret="s")
config = WorkerConfig(
    lease_seconds=2, poll_seconds=0.05, backoff_base_seconds=0.05, backoff_max_seconds=0.1
)
run_worker(Database(sys.argv[1]), settings, registry=worker_jobs(settings), config=config)
"""


def start_worker(settings: Settings, environment: dict[str, str]) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "INSPECTLANG_EXPIRY_SWEEP_SECONDS": "3600",
        **environment,
    }
    with open(settings.data_dir / "worker.log", "ab") as log:  # the child keeps its own copy
        return subprocess.Popen(
            [sys.executable, "-c", WORKER, settings.database_url, str(settings.data_dir)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )


def kill_during_send(
    settings: Settings,
    environment: dict[str, str],
    received: threading.Event,
    done: Callable[[], bool],
) -> None:
    worker = start_worker(settings, environment)
    try:
        assert received.wait(60), "the worker never reached the provider"
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
    again = start_worker(settings, environment)
    try:
        deadline = time.monotonic() + 40
        while not done():
            assert time.monotonic() < deadline, "the restarted worker did not finish the delivery"
            time.sleep(0.1)
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(20)


def test_a_worker_killed_mid_send_leaves_exactly_one_message(
    api: Any, settings: Settings, db: Database, test_headers: dict[str, str]
) -> None:
    # Email: killed while the SMTP server holds its reply to DATA (it has the message). The
    # retry sends it again with the same Message-ID: one message, which mail systems dedupe.
    with smtp_server() as (mailbox, port):
        smtp = {"INSPECTLANG_SMTP_URL": f"smtp://127.0.0.1:{port}"}
        with api(settings.model_copy(update={"smtp_url": smtp["INSPECTLANG_SMTP_URL"]})) as http:
            drain(db, settings)
            mailbox.hold.set()
            created = create(http, test_headers, body(channel="email", destination="k@example.com"))
            kill_during_send(
                settings,
                smtp,
                mailbox.received,
                lambda: delivery_of(db, created["inspectionId"]).status == "sent",
            )
        ids = {message["Message-ID"] for message in mailbox.messages}
        assert len(ids) == 1

    # SMS: killed while Twilio holds its 201 (it accepted the message). The next attempt finds
    # it in Twilio's list and does not send again: exactly one message at the provider.
    with provider_server() as (state, base):
        state["hold"] = True
        twilio = {
            "INSPECTLANG_TWILIO_ACCOUNT_SID": "AC123",
            "INSPECTLANG_TWILIO_AUTH_TOKEN": "secret-token",
            "INSPECTLANG_TWILIO_FROM": "+15005550006",
            "INSPECTLANG_TWILIO_BASE_URL": base,
        }
        with api(twilio_settings(settings, base)) as http:
            drain(db, settings)
            created = create(http, test_headers, body(channel="sms", destination="+541122334499"))
            kill_during_send(
                settings,
                twilio,
                state["received"],
                lambda: delivery_of(db, created["inspectionId"]).status == "sent",
            )
        assert len(state["twilio"]) == 1
        assert (
            delivery_of(db, created["inspectionId"]).provider_message_id
            == state["twilio"][0]["sid"]
        )


# --- resends, the outbox ---


def test_resend_to_a_new_channel_rotates_the_link_and_is_rate_limited(
    api: Any, settings: Settings, db: Database, test_headers: dict[str, str]
) -> None:
    with api(settings) as http:
        created = create(http, test_headers, body(channel="email", destination="first@example.com"))
        path = f"/v1/inspection/{created['inspectionId']}/delivery"
        moved = http.post(
            path, json={"channel": "sms", "destination": "+541155556666"}, headers=test_headers
        )
        assert moved.status_code == 202, moved.text
        assert moved.json()["delivery"]["channel"] == "sms"
        assert moved.json()["magicLink"] != created["magicLink"]
        run_jobs(db, settings, lambda: delivery_of(db, created["inspectionId"]).status == "sent")
        with db.session() as session:
            kept = (
                session.execute(
                    select(OutboxMessageRecord).where(
                        col(OutboxMessageRecord.to) == "+541155556666"
                    )
                )
                .scalars()
                .one()
            )
        assert moved.json()["magicLink"] in kept.text

        assert http.post(path, json={"channel": "sms"}, headers=test_headers).status_code == 202
        assert http.post(path, headers=test_headers).status_code == 202
        limited = http.post(path, headers=test_headers)
        assert (limited.status_code, limited.json()["code"]) == (429, "too_many_deliveries")
        assert int(limited.headers["Retry-After"]) > 0

        bad = http.post(path, json={"channel": "email"}, headers=test_headers)
        assert bad.json()["code"] in ("invalid_delivery_destination", "too_many_deliveries")
        unknown = http.post("/v1/inspection/" + "0" * 24 + "/delivery", headers=test_headers)
        assert (unknown.status_code, unknown.json()["code"]) == (404, "inspection_not_found")
        finished = create(http, test_headers, body(disabled=True))
        http.post(f"/v1/inspection/finish/{finished['inspectionId']}", headers=test_headers)
        closed = http.post(
            f"/v1/inspection/{finished['inspectionId']}/delivery",
            json={"channel": "email", "destination": "late@example.com"},
            headers=test_headers,
        )
        assert (closed.status_code, closed.json()["code"]) == (409, "delivery_not_possible")
        no_channel = create(http, test_headers, body(disabled=True))
        first = http.post(
            f"/v1/inspection/{no_channel['inspectionId']}/delivery", headers=test_headers
        )
        assert (first.status_code, first.json()["code"]) == (400, "invalid_delivery_channel")


def test_outbox_command_lists_kept_messages(
    api: Any, settings: Settings, db: Database, test_headers: dict[str, str]
) -> None:
    with api(settings) as http:
        created = create(
            http, test_headers, body(channel="email", destination="outbox@example.com")
        )
        run_jobs(db, settings, lambda: delivery_of(db, created["inspectionId"]).status == "sent")
        page = http.get("/dev/outbox")
        assert page.status_code == 200 and "outbox@example.com" in page.text
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "server",
            "outbox",
            "--database-url",
            settings.database_url,
            "--json",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    messages = json.loads(listed.stdout)
    assert any(
        m["to"] == "outbox@example.com" and created["magicLink"] in m["text"] for m in messages
    )


def test_a_batch_of_deliveries_is_written_with_one_job_each(
    client: httpx.Client, test_headers: dict[str, str], db: Database
) -> None:
    """`add_many` as a group commit of several creations calls it (one statement for the batch
    on PostgreSQL): every delivery row has its queued job, pointing at it by id."""
    from datetime import UTC, datetime

    from server.delivery import service as deliveries
    from server.delivery.destinations import Destination

    now = datetime.now(UTC)
    inspection_ids = []
    for _ in range(3):
        created = client.post(
            "/v1/inspection/car", json=body(disabled=True), headers=test_headers
        ).json()
        inspection_ids.append(created["inspectionId"])
    company_id = client.get(f"/v1/inspection/{inspection_ids[0]}", headers=test_headers).json()[
        "producer"
    ]["companyId"]
    rows = [
        deliveries.new_row(
            deliveries.plan(Destination("email", f"batch{n}@example.com"), "en_US", "l", None),
            inspection_id,
            company_id,
            True,
            now,
        )
        for n, inspection_id in enumerate(inspection_ids)
    ]
    with db.session() as session:
        deliveries.add_many(session, rows)
        session.commit()
    with db.session() as session:
        written = session.exec(
            select(LinkDeliveryRecord).where(
                col(LinkDeliveryRecord.inspection_id).in_(inspection_ids)
            )
        ).all()
        jobs = session.exec(select(JobRecord).where(JobRecord.kind == "link_delivery")).all()
    assert sorted(r.inspection_id for r in written) == sorted(inspection_ids)
    assert all(r.status == "queued" and r.attempts == 0 and r.link == "l" for r in written)
    ids = {r.id for r in written}
    mine = [job for job in jobs if job.payload.get("deliveryId") in ids]
    assert len(mine) == 3
    assert {job.payload["deliveryId"] for job in mine} == ids
    assert all(
        job.status == "queued" and job.max_attempts == deliveries.MAX_ATTEMPTS for job in mine
    )


def local(link: str) -> str:
    """A magic link's path and query, to open on the test's own server."""
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}"


def test_a_resend_gives_an_expired_link_a_fresh_window(
    serve_app: Any, settings: Settings, db: Database, test_headers: dict[str, str]
) -> None:
    """Issue 24: the link's window counts from its own delivery, not from creation; an
    inspection blocked by its expiry opens again with the template's lifetime from the resend;
    the message states the link's real expiry. The built-in `easy` car: link 72 h, inspection
    7 days."""
    from datetime import UTC, datetime, timedelta

    from server.app import create_app

    moments = [datetime.now(UTC).replace(microsecond=0)]
    app = create_app(settings, db=db, clock=lambda: moments[0])
    with serve_app(app) as base_url, httpx.Client(base_url=base_url, timeout=30) as http:
        drain(db, settings)
        created = create(http, test_headers, body(channel="email", destination="late@example.com"))
        inspection = created["inspectionId"]
        path = f"/v1/inspection/{inspection}/delivery"

        moments[0] += timedelta(hours=73)  # the first link has expired, the inspection has not
        assert http.get(local(created["magicLink"])).status_code == 410
        renewed = http.post(path, headers=test_headers)
        assert renewed.status_code == 202, renewed.text
        link_ends = moments[0] + timedelta(hours=72)
        assert delivery_of(db, inspection).expires_at == link_ends
        opened = http.get(local(renewed.json()["magicLink"]), follow_redirects=True)
        assert opened.status_code == 200, opened.text
        run_jobs(db, settings, lambda: delivery_of(db, inspection).status == "sent")
        with db.session() as session:
            sent = session.execute(
                select(OutboxMessageRecord).where(col(OutboxMessageRecord.to) == "late@example.com")
            ).scalars()
            newest = max(sent, key=lambda message: message.created_at)
        assert str(link_ends.year) in newest.text and renewed.json()["magicLink"] in newest.text

        moments[0] += timedelta(days=8)  # now the inspection itself expired: blocked
        refused = http.put(
            f"/v1/inspection/{inspection}", json={"metadata": {"a": "b"}}, headers=test_headers
        )
        assert refused.json()["code"] == "inspection_not_editable"
        assert (
            http.get(f"/v1/inspection/{inspection}", headers=test_headers).json()["status"]
            == "blocked"
        )
        reopened = http.post(path, headers=test_headers)
        assert reopened.status_code == 202, reopened.text
        document = http.get(f"/v1/inspection/{inspection}", headers=test_headers).json()
        assert document["status"] in ("created", "started")
        expires = datetime.fromisoformat(document["expiresAt"].replace("Z", "+00:00"))
        assert expires == moments[0] + timedelta(days=7)
        assert (
            http.get(local(reopened.json()["magicLink"]), follow_redirects=True).status_code == 200
        )


def test_outbox_command_outside_a_project_creates_nothing(tmp_path: Path) -> None:
    """Issue 24: a read-only command never creates a database or a secret file."""
    empty = tmp_path / "nowhere"
    listed = subprocess.run(
        [sys.executable, "-m", "server", "outbox", "--data-dir", str(empty)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **{
                k: v
                for k, v in os.environ.items()
                if k not in ("DATABASE_URL", "INSPECTLANG_SECRET")
            },
            "PYTHONPATH": str(ROOT),
        },
        timeout=60,
    )
    assert listed.returncode == 1
    assert json.loads(listed.stderr)["code"] == "no_database"
    assert list(tmp_path.iterdir()) == []
    assert not (tmp_path / "data").exists()
