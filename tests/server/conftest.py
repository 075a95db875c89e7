"""Fixtures for the HTTP tests: request headers, a fake clock, and a probe server.

The probe server is the real app (same middleware, errors, database) plus a few test-only routes
under `/test/...` that expose what the infrastructure does: who the caller is, a route that
creates one real row per call (to count executions), one that fails, one that is slow, one that
takes a JSON body, and one that accepts image tokens.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from litestar import Request, get, post, route
from litestar.params import FromPath, JSONBody
from pydantic import BaseModel
from sqlalchemy import func, select

from server.auth import add_member
from server.db import Database
from server.deps import IMAGE_TOKEN_OPT, auth_of, services
from server.settings import Settings
from server.tables import Member


@dataclass
class FakeClock:
    """A clock the tests move by hand (`advance`), starting at the real time."""

    now: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class Calls:
    """How many times each probe handler really ran (replays do not run it)."""

    counts: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hit(self, name: str) -> int:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + 1
            return self.counts[name]


class EchoBody(BaseModel):
    name: str
    count: int


def probe_routes(calls: Calls) -> list[Any]:
    @get("/test/whoami", sync_to_thread=False)
    def whoami(request: Request[Any, Any, Any]) -> dict[str, Any]:
        auth = auth_of(request)
        return {
            "companyId": auth.company_id,
            "mode": auth.mode,
            "testing": auth.testing,
            "scope": auth.scope,
        }

    @route(
        "/test/members",
        http_method=["POST", "PUT", "PATCH", "DELETE", "GET"],
        status_code=201,
        sync_to_thread=True,
    )
    def create_member(request: Request[Any, Any, Any]) -> Any:
        """Creates one real member row per execution, named by the execution number."""
        auth, db = auth_of(request), services(request).db
        number = calls.hit("members")
        member = add_member(db, auth.company_id, f"probe-{number}-{time.monotonic_ns()}")
        return {"memberId": member["memberId"], "method": request.method, "run": number}

    @post("/test/boom", sync_to_thread=False)
    def boom() -> None:
        calls.hit("boom")
        raise RuntimeError("secret internal detail that must not leak")

    @post("/test/slow", status_code=201, sync_to_thread=True)
    def slow() -> dict[str, Any]:
        run = calls.hit("slow")
        time.sleep(1.0)
        return {"run": run}

    @post("/test/echo", sync_to_thread=False)
    def echo(data: JSONBody[EchoBody]) -> dict[str, Any]:
        return data.model_dump()

    @get("/test/image/{product_id:str}", opt={IMAGE_TOKEN_OPT: True}, sync_to_thread=False)
    def image(request: Request[Any, Any, Any], product_id: FromPath[str]) -> dict[str, Any]:
        auth = auth_of(request)
        return {"productId": product_id, "scope": auth.scope, "mode": auth.mode}

    return [whoami, create_member, boom, slow, echo, image]


@dataclass
class Probe:
    base_url: str
    clock: FakeClock
    calls: Calls
    app: Any

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=30)


@contextmanager
def run_probe(settings: Settings, db: Database, serve_app: Any) -> Iterator[Probe]:
    """Serve the app's infrastructure with the probe routes (no resource controllers, so these
    tests depend on nothing else) and a fake clock; yields a `Probe`."""
    from server.app import create_app

    clock = FakeClock()
    calls = Calls()
    app = create_app(
        settings, db=db, clock=clock, extra_routes=probe_routes(calls), include_controllers=False
    )
    with serve_app(app) as base_url:
        yield Probe(base_url, clock, calls, app)


@pytest.fixture(scope="module")
def probe(settings: Settings, db: Database, serve_app: Any) -> Iterator[Probe]:
    """The probe server for this module."""
    with run_probe(settings, db, serve_app) as running:
        yield running


@pytest.fixture(scope="module")
def probe_with(db: Database, serve_app: Any) -> Any:
    """`with probe_with(settings) as probe:` a probe server with other settings."""

    def start(settings: Settings) -> AbstractContextManager[Probe]:
        return run_probe(settings, db, serve_app)

    return start


@pytest.fixture
def probe_client(probe: Probe) -> Iterator[httpx.Client]:
    with probe.client() as http:
        yield http


@pytest.fixture
def member_count(db: Database) -> Any:
    """`member_count(company_id)`: how many member rows the company has in the database."""

    def count(company_id: str) -> int:
        with db.session() as session:
            statement = (
                select(func.count()).select_from(Member).where(Member.company_id == company_id)  # type: ignore[arg-type]
            )
            return int(session.execute(statement).scalar_one())

    return count


@pytest.fixture
def test_headers(company: dict[str, Any]) -> dict[str, str]:
    """Headers authenticating with the company's test key."""
    return {"x-api-key": company["testKey"]}


@pytest.fixture
def live_headers(company: dict[str, Any]) -> dict[str, str]:
    """Headers authenticating with the company's live key."""
    return {"x-api-key": company["liveKey"]}
