"""Fixtures of the report, job and webhook tests: blobs, key headers, a real HTTP receiver on
127.0.0.1 that answers a scripted list of statuses, and a worker that drains the queue."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from tests.http_threads import serve_in_thread

if TYPE_CHECKING:
    from server.blobs import LocalBlobStore
    from server.db import Database
    from server.jobs import WorkerConfig
    from server.settings import Settings


@dataclass
class Delivery:
    at: float
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A webhook receiver: answers `script` statuses in order (then 200), records every request."""

    url: str
    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    received: list[Delivery] = field(default_factory=list)
    delay_seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, count: int, timeout: float = 90.0) -> list[Delivery]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.02)
        raise AssertionError(f"expected {count} deliveries, got {len(self.received)}")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            if state.delay_seconds:
                time.sleep(state.delay_seconds)
            with state.lock:
                state.received.append(
                    Delivery(
                        time.monotonic(),
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                    )
                )
                status, headers = state.script.pop(0) if state.script else (200, {})
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = serve_in_thread(server)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    yield state
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture
def blobs(settings: Settings) -> LocalBlobStore:
    from server.blobs import LocalBlobStore

    return LocalBlobStore(settings.data_dir)


@pytest.fixture
def headers(company: dict[str, Any]) -> dict[str, str]:
    return {"x-api-key": company["testKey"]}


@pytest.fixture
def fast_config() -> WorkerConfig:
    """Short backoff and lease, so retries happen within a test."""
    from server.jobs import WorkerConfig

    return WorkerConfig(
        lease_seconds=5.0, poll_seconds=0.02, backoff_base_seconds=0.05, backoff_max_seconds=1.0
    )


Drain = Callable[..., None]


@pytest.fixture
def drain(db: Database, settings: Settings, fast_config: WorkerConfig) -> Drain:
    """Run due jobs in this thread until `until()` holds (default: no job left to run)."""
    from server import jobs
    from server.app import worker_jobs

    registry = worker_jobs(settings)

    def run(until: Callable[[], bool] | None = None, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ran = jobs.run_once(db, settings, fast_config, registry=registry)
            if until is not None and until():
                return
            if until is None and not ran and not pending_jobs(db):
                return
            if not ran:
                time.sleep(0.02)
        raise AssertionError("the queue did not reach the expected state in time")

    return run


def pending_jobs(db: Database) -> int:
    from sqlmodel import col, func, select

    from server.tables import JobRecord

    with db.session() as session:
        count = session.exec(
            select(func.count())
            .select_from(JobRecord)
            .where(col(JobRecord.status).in_(["queued", "running"]))
        ).one()
    return int(count)
