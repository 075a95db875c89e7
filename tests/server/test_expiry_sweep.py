"""The worker's expiry sweep: inspections past `expiresAt` are blocked on time, not only by the
next change; once each, even under concurrent sweeps; completed ones are never touched."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

import runtime
from server import jobs
from server.app import worker_jobs
from server.db import Database
from server.inspections.expiry import expire_overdue
from server.inspections.service import load
from server.inspections.tables import InspectionRecord
from server.settings import Settings
from server.tables import JobRecord
from tests.http_threads import serve_in_thread

#: The built-in car template expires inspections 7 days after creation; these are created
#: 8 days ago (the app's clock), so they are overdue now and other tests' inspections are not.
BACKDATE = timedelta(days=8)


def creation(**extra: Any) -> dict[str, Any]:
    return {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "driver@example.com"},
        **extra,
    }


@pytest.fixture
def headers(company: dict[str, Any]) -> dict[str, str]:
    return {"x-api-key": company["testKey"]}


@pytest.fixture
def past(serve_app: Any, settings: Settings, db: Database) -> Iterator[httpx.Client]:
    """A client of the real app whose clock reads 8 days ago."""
    from server.app import create_app

    app = create_app(settings, db=db, clock=lambda: datetime.now(UTC) - BACKDATE)
    with serve_app(app) as base_url, httpx.Client(base_url=base_url, timeout=30) as http:
        yield http


@pytest.fixture
def hooks() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A real webhook receiver on 127.0.0.1: its URL and the JSON bodies it got."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            received.append(json.loads(body))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = serve_in_thread(server)
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def create(http: httpx.Client, headers: dict[str, str], **extra: Any) -> str:
    response = http.post("/v1/inspection/car", json=creation(**extra), headers=headers)
    assert response.status_code == 201, response.text
    inspection_id: str = response.json()["inspectionId"]
    return inspection_id


def stored(db: Database, inspection_id: str) -> InspectionRecord:
    with db.session() as session:
        record = session.get(InspectionRecord, inspection_id)
        assert record is not None
        return record


def blocked_jobs(db: Database, inspection_id: str) -> int:
    """Webhook deliveries of `inspection_blocked` queued for this inspection."""
    with db.session() as session:
        rows = session.execute(
            JobRecord.__table__.select().where(JobRecord.__table__.c.kind == "webhook")  # type: ignore[attr-defined]
        ).all()
    return sum(
        1
        for row in rows
        if row.payload.get("event") == "inspection_blocked"
        and (row.payload.get("body") or {}).get("payload", {}).get("_id") == inspection_id
    )


def test_expires_at_is_stored_at_creation(
    past: httpx.Client, headers: dict[str, str], db: Database
) -> None:
    record = stored(db, create(past, headers))
    assert record.expires_at is not None
    assert abs(record.expires_at - record.created_at - timedelta(days=7)) < timedelta(seconds=1)
    expected = datetime.fromisoformat(record.state["expiresAt"].replace("Z", "+00:00"))
    assert record.expires_at == expected


def test_one_sweep_blocks_an_overdue_inspection_and_tells_its_callback(
    past: httpx.Client,
    client: httpx.Client,
    headers: dict[str, str],
    db: Database,
    settings: Settings,
    hooks: tuple[str, list[dict[str, Any]]],
) -> None:
    url, received = hooks
    inspection_id = create(past, headers, callbackURL=url)
    listed = client.get(
        "/v1/inspection", params={"status": "created", "limit": 100}, headers=headers
    )
    assert inspection_id in [i["_id"] for i in listed.json()["inspections"]]

    assert expire_overdue(db) >= 1

    read = client.get(f"/v1/inspection/{inspection_id}", headers=headers).json()
    assert read["status"] == "blocked"
    listed = client.get(
        "/v1/inspection", params={"status": "created", "limit": 100}, headers=headers
    )
    assert inspection_id not in [i["_id"] for i in listed.json()["inspections"]]
    record = stored(db, inspection_id)
    assert record.status == "blocked"
    with db.session() as session:
        loaded = load(session, stored(db, inspection_id))
    assert [e.kind for e in loaded.state.events] == ["create", "expire"]
    assert runtime.replay(loaded.program, loaded.state.events) == loaded.state
    assert blocked_jobs(db, inspection_id) == 1

    deadline = time.monotonic() + 60
    while not any(
        b["event"] == "inspection_blocked" and b["payload"]["_id"] == inspection_id
        for b in received
    ):
        assert time.monotonic() < deadline, f"no inspection_blocked delivery: {received}"
        if not jobs.run_once(db, settings, registry=worker_jobs(settings)):
            time.sleep(0.05)
    expire_overdue(db)  # a second sweep finds it blocked and leaves it alone
    assert [e.kind for e in load_events(db, inspection_id)] == ["create", "expire"]


def load_events(db: Database, inspection_id: str) -> list[Any]:
    with db.session() as session:
        return list(load(session, stored(db, inspection_id)).state.events)


def test_completed_and_not_yet_due_inspections_are_untouched(
    past: httpx.Client, client: httpx.Client, headers: dict[str, str], db: Database
) -> None:
    done = create(past, headers)
    finished = past.post(f"/v1/inspection/finish/{done}", headers=headers)
    assert finished.status_code == 200, finished.text
    before = stored(db, done)
    fresh = create(client, headers)  # expires in 7 days from now

    expire_overdue(db)

    after = stored(db, done)
    assert (after.status, after.state) == ("completed", before.state)
    assert after.updated_at == before.updated_at
    assert stored(db, fresh).status == "created"


def test_two_concurrent_sweeps_expire_each_inspection_once(
    past: httpx.Client,
    headers: dict[str, str],
    db: Database,
    hooks: tuple[str, list[dict[str, Any]]],
) -> None:
    url, _ = hooks
    ids = [create(past, headers, callbackURL=url) for _ in range(12)]
    barrier = threading.Barrier(2)
    counts: list[int] = []
    errors: list[BaseException] = []

    def sweep() -> None:
        try:
            barrier.wait()
            counts.append(expire_overdue(db, batch_size=3))
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert sum(counts) >= len(ids)
    for inspection_id in ids:
        assert stored(db, inspection_id).status == "blocked"
        assert [e.kind for e in load_events(db, inspection_id)] == ["create", "expire"]
        assert blocked_jobs(db, inspection_id) == 1


def test_the_worker_sweeps_on_its_own(
    past: httpx.Client, headers: dict[str, str], db: Database, settings: Settings
) -> None:
    inspection_id = create(past, headers)
    handle = jobs.start_worker_thread(
        db,
        settings.model_copy(update={"expiry_sweep_seconds": 1}),
        registry=worker_jobs(settings),
    )
    try:
        deadline = time.monotonic() + 60
        while stored(db, inspection_id).status != "blocked":
            assert time.monotonic() < deadline, "the worker never expired the inspection"
            time.sleep(0.1)
    finally:
        handle.stop()


def test_the_sweep_interval_setting() -> None:
    from server.settings import SettingsError

    base = {"INSPECTLANG_SECRET": "s" * 32}
    assert Settings.from_env(base, data_dir="/tmp/x").expiry_sweep_seconds == 60
    tuned = Settings.from_env({**base, "INSPECTLANG_EXPIRY_SWEEP_SECONDS": "5"}, data_dir="/tmp/x")
    assert tuned.expiry_sweep_seconds == 5
    with pytest.raises(SettingsError):
        Settings.from_env({**base, "INSPECTLANG_EXPIRY_SWEEP_SECONDS": "soon"}, data_dir="/tmp/x")


def test_a_batch_rolled_back_as_a_deadlock_runs_again(
    past: httpx.Client, headers: dict[str, str], db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL rolls back one of two transactions that lock counter rows in opposite orders
    (two sweeps did, concurrently, in a test run): nothing of the batch was written, and the
    sweep runs it again instead of leaving its inspections open. Any other database error is
    the sweep's failure, not retried."""
    import psycopg
    from sqlalchemy.exc import OperationalError

    from server.inspections import expiry

    ids = [create(past, headers) for _ in range(3)]
    real = expiry._expire_batch
    calls: list[int] = []

    def deadlocked_once(*args: Any) -> tuple[int, int]:
        calls.append(1)
        if len(calls) == 1:
            error = psycopg.errors.DeadlockDetected("deadlock detected")
            raise OperationalError("UPDATE inspections ...", {}, error)
        return real(*args)

    monkeypatch.setattr(expiry, "_expire_batch", deadlocked_once)
    assert expire_overdue(db, batch_size=10) == len(ids)
    assert len(calls) == 2
    for inspection_id in ids:
        assert stored(db, inspection_id).status == "blocked"

    def broken(*args: Any) -> tuple[int, int]:
        raise OperationalError("SELECT ...", {}, psycopg.errors.UndefinedTable("no table"))

    monkeypatch.setattr(expiry, "_expire_batch", broken)
    with pytest.raises(OperationalError):
        expire_overdue(db)
