"""Per-key rate limits shared by every API process (two apps on one database, or on Redis), 429
`rate_limited` with `Retry-After`; `/ready`; `/metrics` in the Prometheus text format."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlmodel import Session

from server.app import create_app, worker_jobs
from server.db import Database
from server.settings import Settings
from tests.conftest import ServeApp

LIMIT = 5


def _limited(settings: Settings, **extra: Any) -> Settings:
    return settings.model_copy(
        update={"rate_limit_requests": LIMIT, "rate_limit_window_seconds": 3600, **extra}
    )


@pytest.fixture(params=["database", "redis"])
def two_apps(
    request: pytest.FixtureRequest, settings: Settings, db: Database, serve_app: ServeApp
) -> Iterator[tuple[str, str]]:
    """Two API processes' apps (each its own limiter) on one database, counting in
    PostgreSQL or in the Redis at 127.0.0.1:6379. On SQLite the "database" counters live in
    the process (one API process per file): both URLs are then the one app."""
    extra = {"redis_url": "redis://127.0.0.1:6379/0"} if request.param == "redis" else {}
    if request.param == "database" and db.dialect == "sqlite":
        with serve_app(create_app(_limited(settings), db=db)) as only:
            yield only, only
        return
    limited = _limited(settings, **extra)
    with (
        serve_app(create_app(limited, db=db)) as first,
        serve_app(create_app(limited, db=db)) as second,
    ):
        yield first, second


def test_the_limit_is_shared_by_every_process_and_per_key(
    two_apps: tuple[str, str], company: dict[str, Any], other_company: dict[str, Any]
) -> None:
    first, second = two_apps
    headers = {"x-api-key": company["testKey"]}
    answers = [
        httpx.get(f"{(first, second)[index % 2]}/v1/inspection", headers=headers)
        for index in range(LIMIT)
    ]
    assert [answer.status_code for answer in answers] == [200] * LIMIT
    refused = httpx.get(f"{second}/v1/inspection", headers=headers)
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    retry_after = int(refused.headers["retry-after"])
    assert 1 <= retry_after <= 3600
    assert httpx.get(f"{first}/v1/inspection", headers=headers).status_code == 429
    # Another key of the same company, and another company, have their own counters.
    assert (
        httpx.get(f"{first}/v1/inspection", headers={"x-api-key": company["liveKey"]}).status_code
        == 200
    )
    other = {"x-api-key": other_company["testKey"]}
    assert httpx.get(f"{second}/v1/inspection", headers=other).status_code == 200
    # Probes are not limited.
    assert httpx.get(f"{first}/health").status_code == 200


def test_the_window_resets(settings: Settings, db: Database) -> None:
    from server.ratelimit import make_limiter

    limiter = make_limiter(_limited(settings, rate_limit_window_seconds=10), db)
    bucket = f"window-test-{secrets.token_hex(4)}"
    assert limiter is not None
    decisions = [limiter.check(bucket, now=1_000_000.0 + i) for i in range(LIMIT + 1)]
    assert [d.allowed for d in decisions] == [True] * LIMIT + [False]
    assert (
        decisions[-1].retry_after == 5
    )  # at 1_000_005 the window [1_000_000, 1_000_010) ends in 5 s
    assert limiter.check(bucket, now=1_000_010.0).allowed


def test_rate_limit_settings_and_off(settings: Settings, db: Database) -> None:
    from server.ratelimit import make_limiter

    assert make_limiter(settings.model_copy(update={"rate_limit_requests": 0}), db) is None
    read = Settings.from_env({"INSPECTLANG_SECRET": "x" * 40, "INSPECTLANG_DATA_DIR": "/tmp"})
    assert (read.rate_limit_requests, read.rate_limit_window_seconds) == (1200, 60)
    off = Settings.from_env(
        {"INSPECTLANG_SECRET": "x" * 40, "INSPECTLANG_RATE_LIMIT_REQUESTS": "0"}
    )
    assert off.rate_limit_requests == 0


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_metrics_count_requests_and_jobs(
    client: httpx.Client, test_headers: dict[str, str], db: Database, settings: Settings
) -> None:
    from server import jobs

    assert client.get("/v1/inspection", headers=test_headers).status_code == 200
    assert client.get("/v1/inspection/0123456789abcdef01234567", headers=test_headers)
    with Session(db.engine) as session:  # a job whose handler fails: counted as failed
        job = jobs.enqueue(session, "webhook", {}, max_attempts=1)
        session.commit()
        job_id = job.id
    for _ in range(50):
        if not jobs.run_once(db, settings, registry=worker_jobs(settings)):
            break
    with Session(db.engine) as session:
        from server.tables import JobRecord

        assert session.get(JobRecord, job_id).status == "failed"  # type: ignore[union-attr]
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples = _samples(response.text)
    route = ("route", "/v1/inspection")
    listed = samples[
        ("inspectlang_http_requests_total", (("method", "GET"), route, ("status", "200")))
    ]
    assert listed >= 1
    by_id = [
        key
        for key in samples
        if key[0] == "inspectlang_http_requests_total"
        and ("status", "404") in key[1]
        and any(v.startswith("/v1/inspection/{") for _, v in key[1])
    ]
    assert by_id, "routes are labelled by template, not by raw path"
    assert samples[("inspectlang_jobs_total", (("kind", "webhook"), ("outcome", "failed")))] >= 1
    assert any(name == "inspectlang_job_duration_seconds_count" for name, _ in samples)
    # The counters other parts of the service increment are exposed.
    assert "inspectlang_deliveries_total" in response.text or "inspectlang_deliveries" in (
        response.text
    )
    assert "inspectlang_validations" in response.text


def test_ready_answers_503_when_the_database_is_down(
    settings: Settings, serve_app: ServeApp, tmp_path: Any
) -> None:
    from server.app import readiness
    from server.blobs import LocalBlobStore

    unreachable = Database("postgresql://nobody@127.0.0.1:1/none?connect_timeout=1")
    checks = readiness(unreachable, LocalBlobStore(tmp_path))
    assert checks["database"] != "ok"
    assert checks["blobs"] == "ok"
    unreachable.dispose()


def test_ready_over_http(client: httpx.Client) -> None:
    response = client.get("/ready")
    assert response.status_code == 200
    assert response.json()["checks"] == {"database": "ok", "blobs": "ok"}


def test_a_purge_keeps_the_windows_other_limiters_still_read(
    db: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API keys' limiter (one-minute windows) and the link throttle (ten-minute windows)
    share `rate_limit_counters`: a count that purged "every window before mine" deleted the
    links' current window (1 in 100 API requests), and the throttle forgot its failures."""
    from server import ratelimit

    monkeypatch.setattr(ratelimit.random, "random", lambda: 0.0)  # purge on every count
    counter = ratelimit.DatabaseCounter(db, keep_seconds=2 * ratelimit.LINK_WINDOW_SECONDS)
    links = ratelimit.LinkThrottle(counter)
    start = 10**9 // ratelimit.LINK_WINDOW_SECONDS * ratelimit.LINK_WINDOW_SECONDS
    for _ in range(ratelimit.LINK_FAILURES_PER_INSPECTION):
        links.failed("127.9.9.9", "a" * 24, now=start + 1)
    minute = start + 7 * 60  # the API's window seven minutes into the links' one
    counter.hit("company:test:key", minute, 120)
    assert links.refused("127.9.9.8", "a" * 24, now=start + 7 * 60 + 1) is not None
