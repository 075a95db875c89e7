"""The durable job queue and its worker: rows in the service's own database.

A job is inserted with `enqueue(session, ...)` in the caller's transaction, so it exists exactly
when the work it stands for was committed. Any number of workers (threads or processes) claim
jobs safely: on PostgreSQL with `SELECT ... FOR UPDATE SKIP LOCKED`; on SQLite (one writer) by
an `UPDATE ... WHERE id = ? AND <still claimable>` whose row count says who won.

A claimed job carries a lease (`locked_until`) that a heartbeat thread extends while the handler
runs; a job whose worker died is claimed again once its lease is in the past. Every write of the
holder is fenced by its claim token (`locked_by`), so a worker that lost its lease cannot
complete a job that another worker now owns. Failures are retried with exponential backoff and
full jitter; after `max_attempts` the kind's give-up handler runs (a report is marked failed).

This module depends on none of the work it runs: the composition root (`server.app.job_kinds`)
names every kind's handlers and the worker's periodic chores in a `Registry`, in plain imports
the layering contracts see, and hands it to the worker it starts (`run_worker(registry=...)`):
nothing is held by the process, so two apps in one process each run their own. A job of a kind
the worker's registry does not name fails for good. Every `settings.expiry_sweep_seconds` the
worker also runs the expiry sweep, which blocks inspections still open past their `expiresAt`.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import secrets
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, insert, or_, update
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import Session, col, select

from server import metrics
from server.blobs import BlobStore, open_store
from server.db import Database
from server.errors import ServerError, infrastructure_fault
from server.settings import Settings
from server.tables import JobRecord

logger = logging.getLogger("server.jobs")


@dataclass(frozen=True, slots=True)
class JobKind:
    """What the worker does with one kind of job."""

    #: Runs a claimed job: `run(context)`; raises `RetryLater` or `GiveUp` to say otherwise.
    run: Callable[[JobContext], None]
    #: Runs in the transaction that marks a job failed for good: `(session, job, error)`.
    give_up: Callable[[Session, JobRecord, str], None] | None = None


@dataclass(frozen=True, slots=True)
class Registry:
    """Every job kind, and the chores the worker runs between jobs."""

    kinds: dict[str, JobKind]
    #: Blocks open inspections past their expiry; how many it blocked.
    expiry_sweep: Callable[[Database], int]
    #: Deletes expired browser sessions (`server.web.sessions`).
    purge_sessions: Callable[[Database, datetime], Any]
    #: Deletes partner applications' codes and tokens past use (`server.oauth.service`).
    purge_partner_tokens: Callable[[Database, datetime], Any] | None = None


#: Attempts of a job before it fails for good (a kind may pass its own to `enqueue`).
DEFAULT_MAX_ATTEMPTS = 5
#: How long a claim holds without a heartbeat. The heartbeat renews it every third of that.
DEFAULT_LEASE_SECONDS = 30.0
#: Idle wait between polls of an empty queue (an `enqueue` in this process wakes workers early).
DEFAULT_POLL_SECONDS = 0.5
#: Backoff: attempt n waits a random time in [delay/2, delay], delay = base * 2**(n-1) <= max.
DEFAULT_BACKOFF_BASE_SECONDS = 2.0
DEFAULT_BACKOFF_MAX_SECONDS = 15 * 60.0

#: Finished jobs are deleted after this long; failed ones are kept longer for operators.
DONE_RETENTION = timedelta(days=7)
FAILED_RETENTION = timedelta(days=30)
#: How often a worker purges old finished jobs.
PURGE_EVERY_SECONDS = 600.0

_wakeup = threading.Event()


def utcnow() -> datetime:
    return datetime.now(UTC)


class RetryLater(ServerError):
    """Raised by a handler: try again after `delay_seconds` (e.g. the receiver's Retry-After)."""

    def __init__(self, delay_seconds: float, reason: str) -> None:
        super().__init__(reason)
        self.delay_seconds = delay_seconds


class GiveUp(ServerError):
    """Raised by a handler: the job can never succeed (e.g. 410 Gone); fail it now."""


@dataclass(frozen=True)
class WorkerConfig:
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    poll_seconds: float = DEFAULT_POLL_SECONDS
    backoff_base_seconds: float = DEFAULT_BACKOFF_BASE_SECONDS
    backoff_max_seconds: float = DEFAULT_BACKOFF_MAX_SECONDS


def default_config() -> WorkerConfig:
    """The configuration from the module's `DEFAULT_*` values as they are now."""
    return WorkerConfig(
        lease_seconds=DEFAULT_LEASE_SECONDS,
        poll_seconds=DEFAULT_POLL_SECONDS,
        backoff_base_seconds=DEFAULT_BACKOFF_BASE_SECONDS,
        backoff_max_seconds=DEFAULT_BACKOFF_MAX_SECONDS,
    )


@dataclass
class JobContext:
    """What a handler gets: the job, the services, and a fenced way to finish in its own txn."""

    db: Database
    settings: Settings
    #: The blob store the worker was started with (the app's own, for the embedded worker).
    blobs: BlobStore
    job_id: int
    kind: str
    payload: dict[str, Any]
    attempt: int
    max_attempts: int
    token: str
    completed: bool = field(default=False)

    def complete_in(self, session: Session) -> bool:
        """Mark the job done inside `session` (commit is the caller's). False: lease lost."""
        result = session.execute(
            update(JobRecord)
            .where(col(JobRecord.id) == self.job_id, col(JobRecord.locked_by) == self.token)
            .where(col(JobRecord.status) == "running")
            .values(status="done", finished_at=utcnow(), locked_until=None)
        )
        self.completed = result.rowcount == 1  # type: ignore[attr-defined]
        return self.completed

    @property
    def last_attempt(self) -> bool:
        return self.attempt >= self.max_attempts


def enqueue(
    session: Session,
    kind: str,
    payload: dict[str, Any],
    *,
    delay_seconds: float = 0.0,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> JobRecord:
    """Add a job in the caller's transaction (it runs once that transaction commits)."""
    job = JobRecord(
        kind=kind,
        payload=payload,
        max_attempts=max_attempts,
        run_at=utcnow() + timedelta(seconds=delay_seconds),
    )
    session.add(job)
    _wakeup.set()
    return job


#: Built once: `enqueue_rows` runs it with parameter dicts (no ORM flush per job).
_INSERT_JOBS = insert(JobRecord.__table__)  # type: ignore[attr-defined]


def job_row(
    kind: str, payload: dict[str, Any], *, max_attempts: int = DEFAULT_MAX_ATTEMPTS
) -> dict[str, Any]:
    """A job as a row for `enqueue_rows` (what `enqueue` would add)."""
    now = utcnow()
    return {
        "kind": kind,
        "payload": payload,
        "status": "queued",
        "attempts": 0,
        "max_attempts": max_attempts,
        "run_at": now,
        "locked_until": None,
        "locked_by": None,
        "last_error": None,
        "created_at": now,
    }


def enqueue_rows(session: Session, rows: list[dict[str, Any]]) -> None:
    """Add many jobs in the caller's transaction with one executemany (the group commit of
    creations writes its deliveries' jobs this way)."""
    if rows:
        session.execute(_INSERT_JOBS, rows)
        _wakeup.set()


def enqueued() -> None:
    """Wake this process's worker: jobs were added by a statement of the caller's own."""
    _wakeup.set()


def backoff_seconds(attempt: int, base: float, maximum: float) -> float:
    """Exponential backoff with jitter for the retry after failed attempt number `attempt`."""
    delay = min(maximum, base * (2 ** max(0, attempt - 1)))
    return random.uniform(delay / 2, delay)


def _claimable(now: datetime) -> ColumnElement[bool]:
    return or_(
        and_(col(JobRecord.status) == "queued", col(JobRecord.run_at) <= now),
        and_(col(JobRecord.status) == "running", col(JobRecord.locked_until) < now),
    )


def claim(db: Database, *, lease_seconds: float) -> JobRecord | None:
    """Claim one due job (or one whose lease expired) for this caller; None when none is due."""
    token = secrets.token_hex(12)
    now = utcnow()
    values = {
        "status": "running",
        "locked_by": token,
        "locked_until": now + timedelta(seconds=lease_seconds),
        "attempts": col(JobRecord.attempts) + 1,
    }
    if db.dialect == "postgresql":
        with db.session() as session:
            row = session.exec(
                select(JobRecord)
                .where(_claimable(now))
                .order_by(col(JobRecord.run_at))
                .limit(1)
                .with_for_update(skip_locked=True)
            ).first()
            if row is None:
                return None
            session.execute(update(JobRecord).where(col(JobRecord.id) == row.id).values(**values))
            session.commit()
            return _load(db, row.id)
    with db.session() as session:
        candidates = session.exec(
            select(JobRecord.id).where(_claimable(now)).order_by(col(JobRecord.run_at)).limit(8)
        ).all()
    for job_id in candidates:
        with db.session() as session:
            result = session.execute(
                update(JobRecord)
                .where(col(JobRecord.id) == job_id)
                .where(_claimable(now))
                .values(**values)
            )
            if result.rowcount == 1:  # type: ignore[attr-defined]
                session.commit()
                return _load(db, job_id)
            session.rollback()
    return None


def _load(db: Database, job_id: int | None) -> JobRecord | None:
    with db.session() as session:
        return session.get(JobRecord, job_id)


@contextlib.contextmanager
def _heartbeat(db: Database, job: JobRecord, lease_seconds: float) -> Iterator[None]:
    """Renew the job's lease every third of it while the handler runs."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(lease_seconds / 3):
            try:
                with db.session() as session:
                    session.execute(
                        update(JobRecord)
                        .where(
                            col(JobRecord.id) == job.id, col(JobRecord.locked_by) == job.locked_by
                        )
                        .where(col(JobRecord.status) == "running")
                        .values(locked_until=utcnow() + timedelta(seconds=lease_seconds))
                    )
                    session.commit()
            except Exception:  # a missed beat only shortens the lease
                logger.warning("job %s: lease renewal failed", job.id, exc_info=True)

    thread = threading.Thread(target=beat, name=f"job-{job.id}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _finish(
    db: Database,
    job: JobRecord,
    registry: Registry,
    *,
    status: str,
    error: str | None = None,
    run_at: datetime | None = None,
) -> bool:
    """Fenced status change of a job this worker holds; runs the give-up handler on failure."""
    with db.session() as session:
        values: dict[str, Any] = {"status": status, "locked_until": None, "last_error": error}
        if status in ("done", "failed"):
            values["finished_at"] = utcnow()
        if run_at is not None:
            values["run_at"] = run_at
            values["locked_by"] = None
        result = session.execute(
            update(JobRecord)
            .where(col(JobRecord.id) == job.id, col(JobRecord.locked_by) == job.locked_by)
            .where(col(JobRecord.status) == "running")
            .values(**values)
        )
        if result.rowcount != 1:  # type: ignore[attr-defined]
            session.rollback()
            logger.warning("job %s: lease lost before it could be marked %s", job.id, status)
            return False
        known = registry.kinds.get(job.kind)
        give_up = known.give_up if known is not None and status == "failed" else None
        if give_up is not None:
            give_up(session, job, error or "failed")
        session.commit()
        return True


def run_job(
    db: Database,
    settings: Settings,
    job: JobRecord,
    config: WorkerConfig,
    blobs: BlobStore,
    registry: Registry,
) -> None:
    """Run one claimed job to its next state: done, queued again (retry) or failed; counted in
    `server.metrics` by kind and outcome."""
    started = time.perf_counter()
    outcome = "error"
    try:
        outcome = _run_job(db, settings, job, config, blobs, registry)
    finally:
        metrics.job_done(job.kind, outcome, time.perf_counter() - started)


def _run_job(
    db: Database,
    settings: Settings,
    job: JobRecord,
    config: WorkerConfig,
    blobs: BlobStore,
    registry: Registry,
) -> str:
    """Run one claimed job to its next state; its outcome: done, retry or failed."""
    assert job.id is not None and job.locked_by is not None
    finish = functools.partial(_finish, db, job, registry)
    if job.attempts > job.max_attempts:  # its workers kept dying: stop trying
        finish(status="failed", error=job.last_error or "worker lost too many times")
        return "failed"
    kind = registry.kinds.get(job.kind)
    if kind is None:  # nothing here runs it: retrying would not change that
        finish(status="failed", error=f"unknown job kind {job.kind!r}")
        return "failed"
    context = JobContext(
        db=db,
        settings=settings,
        blobs=blobs,
        job_id=job.id,
        kind=job.kind,
        payload=dict(job.payload),
        attempt=job.attempts,
        max_attempts=job.max_attempts,
        token=job.locked_by,
    )
    try:
        with _heartbeat(db, job, config.lease_seconds):
            kind.run(context)
    except GiveUp as error:
        finish(status="failed", error=str(error))
        return "failed"
    except Exception as error:
        message = f"{type(error).__name__}: {error}"
        if job.attempts >= job.max_attempts:
            logger.warning("job %s (%s) failed for good: %s", job.id, job.kind, message)
            finish(status="failed", error=message)
            return "failed"
        if isinstance(error, RetryLater):
            delay = max(error.delay_seconds, 0.0)  # the handler caps it
        else:
            delay = backoff_seconds(
                job.attempts, config.backoff_base_seconds, config.backoff_max_seconds
            )
            logger.info(
                "job %s (%s) attempt %s failed: %s", job.id, job.kind, job.attempts, message
            )
        run_at = utcnow() + timedelta(seconds=delay)
        finish(status="queued", error=message, run_at=run_at)
        return "retry"
    if not context.completed:
        finish(status="done")
    return "done"


def purge_finished(db: Database, *, now: datetime | None = None) -> int:
    """Delete done jobs older than DONE_RETENTION and failed ones older than FAILED_RETENTION."""
    now = now or utcnow()
    with db.session() as session:
        result = session.execute(
            delete(JobRecord).where(
                or_(
                    and_(
                        col(JobRecord.status) == "done",
                        col(JobRecord.finished_at) < now - DONE_RETENTION,
                    ),
                    and_(
                        col(JobRecord.status) == "failed",
                        col(JobRecord.finished_at) < now - FAILED_RETENTION,
                    ),
                )
            )
        )
        session.commit()
        return int(result.rowcount)  # type: ignore[attr-defined]


class OutageLog:
    """What a worker says while its database or blob store is down: one line when an outage
    begins (or changes kind) and one when it ends, instead of a traceback for every failed
    claim, each poll (issue 39). A failure that is no outage (a bug) keeps its traceback."""

    def __init__(self, name: str) -> None:
        self.name = name
        #: The outage going on (`storage_unavailable`, `service_unavailable`), or None.
        self.fault: str | None = None

    def failed(self, action: str, error: BaseException) -> None:
        fault = infrastructure_fault(error)
        if fault is None:
            logger.error("worker %s: %s failed", self.name, action, exc_info=error)
        elif fault != self.fault:
            self.fault = fault
            logger.error(
                "worker %s: %s (%s: %s); retrying every poll, quietly, until it answers",
                *(self.name, fault, type(error).__name__, error),
            )

    def succeeded(self) -> None:
        if self.fault is not None:
            logger.warning("worker %s: %s is over, jobs run again", self.name, self.fault)
            self.fault = None


def _purge_web_sessions(db: Database, chores: Registry, outage: OutageLog) -> None:
    """Delete expired browser sessions of the web pages (`server.web.sessions`), and the
    partner applications' codes and tokens no request can use any more."""
    try:
        chores.purge_sessions(db, utcnow())
    except Exception as error:
        outage.failed("purging expired web sessions", error)
    if chores.purge_partner_tokens is None:
        return
    try:
        chores.purge_partner_tokens(db, utcnow())
    except Exception as error:
        outage.failed("purging spent partner tokens", error)


def sweep_expired(
    db: Database, registry: Registry, name: str = "worker", outage: OutageLog | None = None
) -> int:
    """Run the expiry sweep of `registry` once; its failure is logged (through `outage` when
    given), never fatal to the worker."""
    try:
        blocked = int(registry.expiry_sweep(db))
    except Exception as error:
        if outage is not None:
            outage.failed("the expiry sweep", error)
        else:
            logger.warning("%s: expiry sweep failed", name, exc_info=True)
        return 0
    if blocked:
        logger.info("%s: expiry sweep blocked %s inspection(s)", name, blocked)
    return blocked


def run_once(
    db: Database,
    settings: Settings,
    config: WorkerConfig | None = None,
    *,
    registry: Registry,
    blobs: BlobStore | None = None,
) -> bool:
    """Claim and run at most one job with the handlers of `registry`; True when one ran.
    `blobs` defaults to the store `settings` configure (`server.blobs.open_store`)."""
    config = config or default_config()
    job = claim(db, lease_seconds=config.lease_seconds)
    if job is None:
        return False
    run_job(db, settings, job, config, blobs or open_store(settings, db), registry)
    return True


def run_worker(
    db: Database,
    settings: Settings,
    *,
    registry: Registry,
    stop_event: threading.Event | None = None,
    config: WorkerConfig | None = None,
    blobs: BlobStore | None = None,
) -> None:
    """Run jobs until `stop_event` is set (or SIGTERM/SIGINT when run in the main thread).
    Jobs use `blobs`, by default the store `settings` configure.

    A job being run when the stop comes is finished first; one that takes too long is simply
    claimed again by another worker after its lease, so stopping never loses work.
    """
    config = config or default_config()
    store = blobs or open_store(settings, db)
    stop = stop_event or threading.Event()
    restore: dict[signal.Signals, Any] = {}
    if stop_event is None and threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            restore[signum] = signal.signal(signum, lambda *_: stop.set())
    name = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
    logger.info("worker %s started", name)
    outage = OutageLog(name)
    next_purge = 0.0
    next_sweep = 0.0
    try:
        while not stop.is_set():
            # The chores wait while the database is down (the claims say when it is back).
            if outage.fault is None and time.monotonic() >= next_purge:
                next_purge = time.monotonic() + PURGE_EVERY_SECONDS
                try:
                    purge_finished(db)
                except Exception as error:
                    outage.failed("purging finished jobs", error)
                _purge_web_sessions(db, registry, outage)
            sweep_due = settings.expiry_sweep_seconds > 0 and time.monotonic() >= next_sweep
            if outage.fault is None and sweep_due:
                next_sweep = time.monotonic() + settings.expiry_sweep_seconds
                sweep_expired(db, registry, name, outage)
            try:
                ran = run_once(db, settings, config, registry=registry, blobs=store)
            except Exception as error:
                outage.failed("claiming or running a job", error)
                ran = False
            else:
                outage.succeeded()
            if not ran:
                _wakeup.wait(config.poll_seconds)
                _wakeup.clear()
    finally:
        for signum, handler in restore.items():
            signal.signal(signum, handler)
        logger.info("worker %s stopped", name)


class WorkerHandle:
    """Worker threads inside the server process; `stop()` lets the current jobs finish."""

    def __init__(self, threads: list[threading.Thread], stop_event: threading.Event) -> None:
        self.threads = threads
        self.stop_event = stop_event

    def stop(self, timeout: float | None = 30.0) -> None:
        self.stop_event.set()
        _wakeup.set()
        for thread in self.threads:
            thread.join(timeout)


def start_worker_thread(
    db: Database,
    settings: Settings,
    *,
    registry: Registry,
    workers: int = 1,
    config: WorkerConfig | None = None,
    blobs: BlobStore | None = None,
) -> WorkerHandle:
    """Start `workers` daemon threads running `run_worker` (the embedded worker of `serve`,
    given the app's blob store)."""
    stop = threading.Event()
    threads = [
        threading.Thread(
            target=run_worker,
            args=(db, settings),
            kwargs={"stop_event": stop, "config": config, "blobs": blobs, "registry": registry},
            name=f"inspectlang-worker-{index}",
            daemon=True,
        )
        for index in range(workers)
    ]
    for thread in threads:
        thread.start()
    return WorkerHandle(threads, stop)
