"""The expiry sweep: block inspections still open past their `expiresAt`, without waiting for
the next change to notice.

The durable worker (`server.jobs.run_worker`) calls `expire_overdue` every
`settings.expiry_sweep_seconds`. Each batch is one transaction that claims overdue rows safely
(`SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL, so concurrent sweeps split the work;
`BEGIN IMMEDIATE` on SQLite, so the second sweep waits and then finds nothing left) and blocks
each through `expire_loaded`, the path a change takes: state, filter columns, document and the
`inspection_blocked` event are written together, so an inspection is expired exactly once.

A batch writes one statement per inspection, and each statement moves rows of the maintained
counts (`server.inspections.counts`, `hour_counts`) in its own key order, so two batches (or a
batch and a request) can lock two counter rows in opposite orders. PostgreSQL then aborts one
transaction as a deadlock; the sweep runs that batch again (`DEADLOCK_ATTEMPTS`), as
PostgreSQL's documentation advises for transactions it rolls back, instead of leaving its
inspections open until the next sweep (two concurrent sweeps deadlocked so in a test run).
"""

from __future__ import annotations

import logging
import random
import time
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from runtime.state import statuses_allowing
from server.db import Database
from server.errors import ApiError
from server.inspections.service import expire_loaded, expired, load
from server.inspections.tables import InspectionRecord

logger = logging.getLogger("server.expiry")

#: Inspections claimed and blocked per transaction (keeps locks short and batches small).
DEFAULT_BATCH_SIZE = 50
#: Runs of a batch PostgreSQL rolled back to break a deadlock or a serialization conflict.
DEADLOCK_ATTEMPTS = 5
#: SQLSTATEs of a transaction PostgreSQL rolled back, to be run again.
_ROLLED_BACK = frozenset({"40P01", "40001"})


def expire_overdue(
    db: Database, now: datetime | None = None, *, batch_size: int = DEFAULT_BATCH_SIZE
) -> int:
    """Block every open inspection whose `expires_at` is at or before `now`; how many were."""
    moment = now or datetime.now(UTC)
    passed: set[str] = set()  # rows this sweep cannot expire: never claimed twice in one sweep
    total = 0
    while True:
        claimed, expired_count = _expire_batch_again_if_rolled_back(db, moment, batch_size, passed)
        total += expired_count
        if claimed < batch_size:
            return total


def _expire_batch_again_if_rolled_back(
    db: Database, now: datetime, batch_size: int, passed: set[str]
) -> tuple[int, int]:
    """`_expire_batch`, run again (after a short random pause) when PostgreSQL rolled it back
    as a deadlock or a serialization failure: nothing of it was written."""
    for attempt in range(1, DEADLOCK_ATTEMPTS):
        try:
            return _expire_batch(db, now, batch_size, passed)
        except OperationalError as error:
            if getattr(error.orig, "sqlstate", None) not in _ROLLED_BACK:
                raise
            logger.info("expiry batch rolled back (%s), attempt %d", error.orig, attempt)
            time.sleep(random.uniform(0.01, 0.05) * attempt)
    return _expire_batch(db, now, batch_size, passed)  # the last attempt: its error is raised


def _expire_batch(
    db: Database, now: datetime, batch_size: int, passed: set[str]
) -> tuple[int, int]:
    """One transaction: claim up to `batch_size` overdue rows and block them; (claimed, blocked)."""
    model = cast(Any, InspectionRecord)
    statement = (
        select(InspectionRecord)
        .where(
            model.status.in_(statuses_allowing("expire")),
            model.expires_at.is_not(None),
            model.expires_at <= now,
        )
        .order_by(model.expires_at, model.id)
        .limit(batch_size)
    )
    if passed:
        statement = statement.where(model.id.not_in(sorted(passed)))
    if db.dialect == "postgresql":
        statement = statement.with_for_update(skip_locked=True)
    blocked = 0
    with db.session(immediate=True) as session:
        records = list(session.execute(statement).scalars().all())
        for record in records:
            loaded = load(session, record)
            if not expired(loaded.state, now):  # the column disagrees with the state: skip
                passed.add(record.id)
                continue
            try:
                expire_loaded(session, loaded, now)
            except ApiError as error:  # refused before anything was written for this row
                logger.warning("inspection %s: expiry refused: %s", record.id, error)
                passed.add(record.id)
                continue
            blocked += 1
        session.commit()
    return len(records), blocked
