"""The durable job queue: safe concurrent claims, leases and fencing, backoff, give-up, and a
real `inspectlang worker` killed in the middle of a report."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlmodel import select

from server import jobs
from server.blobs import LocalBlobStore
from server.db import Database
from server.reports import service
from server.reports.renderer import ReportData
from server.reports.tables import ReportRequestRecord
from server.settings import Settings
from server.tables import JobRecord

from .conftest import Drain, Receiver
from .inspections import insert_inspection

ROOT = Path(__file__).resolve().parents[2]
HANDLED: list[int] = []
HANDLED_LOCK = threading.Lock()


def record_job(ctx: jobs.JobContext) -> None:
    """A job handler for these tests: remembers which job ran, slowly enough to overlap."""
    time.sleep(0.01)
    with HANDLED_LOCK:
        HANDLED.append(ctx.job_id)


NOOP = "test_noop"


@pytest.fixture
def registry() -> jobs.Registry:
    """The app's job kinds and `NOOP`, which records the jobs it ran in `HANDLED`."""
    from server.app import job_kinds

    found = job_kinds({})
    HANDLED.clear()
    return replace(found, kinds={**found.kinds, NOOP: jobs.JobKind(record_job)})


def _enqueue(db: Database, kind: str, count: int) -> list[int]:
    with db.session() as session:
        rows = [jobs.enqueue(session, kind, {"n": n}) for n in range(count)]
        session.commit()
        return [row.id for row in rows if row.id is not None]


def test_backoff_grows_with_jitter_and_a_cap() -> None:
    for attempt, full in ((1, 2.0), (2, 4.0), (3, 8.0), (10, 900.0)):
        delays = {jobs.backoff_seconds(attempt, 2.0, 900.0) for _ in range(50)}
        assert all(full / 2 <= d <= full for d in delays)
        assert len(delays) > 1  # jittered


def test_old_finished_jobs_are_purged(db: Database) -> None:
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    ids = _enqueue(db, NOOP, 4)
    ages = [("done", 8), ("done", 1), ("failed", 8), ("failed", 31)]
    with db.session() as session:
        for job_id, (status, days) in zip(ids, ages, strict=True):
            row = session.get(JobRecord, job_id)
            assert row is not None
            row.status, row.finished_at = status, now - timedelta(days=days)
            session.add(row)
        session.commit()
    assert jobs.purge_finished(db, now=now) >= 2
    with db.session() as session:
        left = {row.id for row in session.exec(select(JobRecord)).all()}
    assert [job_id in left for job_id in ids] == [False, True, True, False]


def test_a_job_of_a_kind_the_worker_does_not_run_fails_for_good(
    db: Database, settings: Settings, registry: jobs.Registry
) -> None:
    (job_id,) = _enqueue(db, "nope", 1)
    config = jobs.WorkerConfig(backoff_base_seconds=0.01)
    for _ in range(100):
        with db.session() as session:
            job = session.get(JobRecord, job_id)
            assert job is not None
            if job.status != "queued":
                break
        jobs.run_once(db, settings, config, registry=registry)
    assert (job.status, job.attempts, job.last_error) == ("failed", 1, "unknown job kind 'nope'")


def test_concurrent_workers_run_each_job_exactly_once(
    db: Database, settings: Settings, registry: jobs.Registry
) -> None:
    ids = _enqueue(db, NOOP, 40)
    stop = threading.Event()
    config = jobs.WorkerConfig(poll_seconds=0.02, lease_seconds=10)
    workers = [
        threading.Thread(
            target=jobs.run_worker,
            args=(db, settings),
            kwargs={"stop_event": stop, "config": config, "registry": registry},
        )
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with HANDLED_LOCK:
            if len(set(HANDLED) & set(ids)) == len(ids):
                break
        time.sleep(0.05)
    stop.set()
    for worker in workers:
        worker.join(30)
    counts = Counter(job_id for job_id in HANDLED if job_id in ids)
    assert set(counts) == set(ids)
    assert max(counts.values()) == 1
    with db.session() as session:
        rows = session.exec(select(JobRecord).where(JobRecord.kind == NOOP)).all()
        assert {row.status for row in rows if row.id in ids} == {"done"}
        assert {row.attempts for row in rows if row.id in ids} == {1}


def test_an_expired_lease_is_claimed_again_and_the_old_holder_is_fenced(
    db: Database, registry: jobs.Registry
) -> None:
    (job_id,) = _enqueue(db, NOOP, 1)
    first = jobs.claim(db, lease_seconds=0.3)
    assert first is not None and first.id == job_id and first.attempts == 1
    assert jobs.claim(db, lease_seconds=0.3) is None  # held
    time.sleep(0.5)
    second = jobs.claim(db, lease_seconds=30)
    assert second is not None and second.id == job_id and second.attempts == 2
    assert second.locked_by != first.locked_by
    assert (
        jobs._finish(db, first, registry, status="done") is False
    )  # the dead holder cannot finish it
    assert jobs._finish(db, second, registry, status="done") is True
    with db.session() as session:
        row = session.get(JobRecord, job_id)
        assert row is not None and row.status == "done"


class BrokenRenderer:
    def render(self, report: ReportData) -> bytes:
        raise RuntimeError("renderer exploded")


def test_a_report_that_keeps_failing_is_marked_failed_and_notified(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
    receiver: Receiver,
    drain: Drain,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(service, "RENDERER_FACTORY", BrokenRenderer)
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    report_id = client.post(
        f"/v1/inspection/{inspection_id}/report/request",
        json={"callbackURL": receiver.url},
        headers=headers,
    ).json()["_id"]
    drain()
    body = client.get(
        f"/v1/inspection/{inspection_id}/report/request/{report_id}", headers=headers
    ).json()
    assert body["status"] == "failed"
    assert body["failedAt"] is not None and body["completedAt"] is None
    assert "result" not in body
    with db.session() as session:
        job = next(
            j
            for j in session.exec(select(JobRecord)).all()
            if j.payload == {"reportRequestId": report_id}
        )
        assert job.status == "failed"
        assert job.attempts == service.REPORT_MAX_ATTEMPTS
        assert job.last_error is not None and "renderer exploded" in job.last_error
    (notification,) = receiver.wait_for(1)
    assert notification.json()["event"] == "report_failed"
    assert notification.json()["payload"]["status"] == "failed"


def _env(settings: Settings) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "INSPECTLANG_DATA_DIR": str(settings.data_dir),
        "INSPECTLANG_SECRET": settings.secret,
        "INSPECTLANG_ALLOW_LOOPBACK_WEBHOOKS": "1",
        # Workers and the test's own process share the SQLite file.
        "INSPECTLANG_SQLITE_EXCLUSIVE": "0",
        "PYTHONPATH": str(ROOT),
    }


SLOW_WORKER = """
import sys, time
from pathlib import Path
from server import jobs
from server.reports import service

class SlowRenderer:
    def render(self, report):
        Path(sys.argv[1]).write_text("rendering")
        time.sleep(120)
        raise RuntimeError("this worker was supposed to be killed")

service.RENDERER_FACTORY = SlowRenderer
jobs.DEFAULT_LEASE_SECONDS = 2.0
from server.main import main
sys.exit(main(["worker"]))
"""


def _wait(condition: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _report(db: Database, report_id: str) -> ReportRequestRecord:
    with db.session() as session:
        record = session.get(ReportRequestRecord, report_id)
        assert record is not None
        return record


def test_a_killed_worker_leaves_its_report_to_another_worker(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    settings: Settings,
    company: dict[str, Any],
    headers: dict[str, str],
    receiver: Receiver,
    tmp_path: Path,
) -> None:
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    report_id = client.post(
        f"/v1/inspection/{inspection_id}/report/request",
        json={"callbackURL": receiver.url},
        headers=headers,
    ).json()["_id"]
    marker = tmp_path / "rendering"
    with (tmp_path / "doomed.log").open("wb") as log:
        doomed = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(SLOW_WORKER), str(marker)],
            cwd=ROOT,
            env=_env(settings),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait(marker.exists, 180, "the first worker to start rendering")
        assert _report(db, report_id).status == "processing"
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(30)
    finally:
        if doomed.poll() is None:
            doomed.kill()
            doomed.wait(30)
    assert doomed.returncode == -signal.SIGKILL
    with db.session() as session:
        job = next(
            j
            for j in session.exec(select(JobRecord)).all()
            if j.payload == {"reportRequestId": report_id}
        )
        assert job.status == "running" and job.attempts == 1  # orphaned, lease still ticking

    rescuer = subprocess.Popen(
        [str(Path(sys.executable).with_name("inspectlang")), "worker"],
        cwd=ROOT,
        env=_env(settings),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait(lambda: _report(db, report_id).status == "completed", 180, "the rescue")
        receiver.wait_for(1, timeout=120)
    finally:
        rescuer.send_signal(signal.SIGTERM)
        _, stderr = rescuer.communicate(timeout=60)
    assert rescuer.returncode == 0, stderr
    assert "Traceback" not in stderr

    with db.session() as session:
        job = session.get(JobRecord, job.id)
        assert job is not None and job.status == "done" and job.attempts == 2
        completed = session.exec(
            select(ReportRequestRecord).where(ReportRequestRecord.inspection_id == inspection_id)
        ).all()
    assert [r.status for r in completed] == ["completed"]
    time.sleep(0.5)
    assert len(receiver.received) == 1  # one completion, one callback
    url = client.get(
        f"/v1/inspection/{inspection_id}/report/request/{report_id}", headers=headers
    ).json()["result"]["url"]
    assert httpx.get(url, timeout=30).content.startswith(b"%PDF")
