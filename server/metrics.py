"""Prometheus metrics (prometheus-client): requests, jobs, deliveries and validations.

Each process keeps its own counters in the default registry; `/metrics` of an API process shows
its requests and the jobs of its in-process worker, and a `worker` process started with
`--metrics-port` (or `INSPECTLANG_METRICS_PORT`) serves its own. Prometheus sums them across
processes (`sum by (kind) (rate(inspectlang_jobs_total[5m]))`). The queue's depth is read from
the database at scrape time, so it is the same whichever process answers.

Other parts of the service increment the counters here: deliveries call `delivery_done(channel,
outcome)`, validators `validation_done(validator, outcome)`; the job queue counts every job by
kind and outcome itself (`job_done`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from server.db import Database

REQUESTS = Counter(
    "inspectlang_http_requests",
    "HTTP requests answered, by method, route template and status code.",
    ["method", "route", "status"],
)
REQUEST_SECONDS = Histogram(
    "inspectlang_http_request_duration_seconds",
    "Time from the request's arrival to the start of its response, by method and route.",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
RATE_LIMITED = Counter(
    "inspectlang_rate_limited_requests", "Requests refused with 429 by the per-key rate limit."
)
JOBS = Counter(
    "inspectlang_jobs",
    "Job attempts finished, by kind and outcome (done, retry, failed).",
    ["kind", "outcome"],
)
JOB_SECONDS = Histogram(
    "inspectlang_job_duration_seconds",
    "Time one job attempt ran, by kind.",
    ["kind"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
DELIVERIES = Counter(
    "inspectlang_deliveries",
    "Messages delivered (or given up), by channel (email, sms, whatsapp, webhook) and outcome.",
    ["channel", "outcome"],
)
VALIDATIONS = Counter(
    "inspectlang_validations",
    "Image validations run, by validator and outcome (passed, failed, error).",
    ["validator", "outcome"],
)


def request_done(method: str, route: str, status: int, seconds: float) -> None:
    REQUESTS.labels(method, route, str(status)).inc()
    REQUEST_SECONDS.labels(method, route).observe(seconds)


def job_done(kind: str, outcome: str, seconds: float) -> None:
    JOBS.labels(kind, outcome).inc()
    JOB_SECONDS.labels(kind).observe(seconds)


def delivery_done(channel: str, outcome: str) -> None:
    DELIVERIES.labels(channel, outcome).inc()


def validation_done(validator: str, outcome: str) -> None:
    VALIDATIONS.labels(validator, outcome).inc()


class QueueCollector(Collector):
    """`inspectlang_jobs_in_queue{kind, status}`: queued and running jobs, from the database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterable[GaugeMetricFamily]:
        from server.tables import JobRecord

        table: Any = JobRecord.__table__  # type: ignore[attr-defined]
        family = GaugeMetricFamily(
            "inspectlang_jobs_in_queue",
            "Jobs queued or running, by kind.",
            labels=["kind", "status"],
        )
        with self.db.engine.connect() as connection:
            rows = connection.execute(
                select(table.c.kind, table.c.status, func.count())
                .where(table.c.status.in_(("queued", "running")))
                .group_by(table.c.kind, table.c.status)
            ).all()
        for kind, status, count in rows:
            family.add_metric([kind, status], count)
        yield family


def exposition(db: Database | None = None) -> tuple[bytes, str]:
    """This process's metrics (plus the queue's depth when `db` is given), in the text format."""
    body = generate_latest(REGISTRY)
    if db is not None:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(QueueCollector(db))
        body += generate_latest(registry)
    return body, CONTENT_TYPE_LATEST


def monotonic() -> float:
    return time.perf_counter()
