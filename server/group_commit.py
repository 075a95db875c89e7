"""Group commit: the writes that are waiting at the same moment share one transaction.

A database commits one transaction at a time per lock (SQLite has a single writer; on
PostgreSQL concurrent creates of one company meet on the company's row). Committing every
create alone pays a transaction, a log flush and a round trip per statement each time, while
the other requests wait. `GroupCommit.write(item)` queues the item; whichever waiting thread
gets the commit lock takes every queued item (up to `max_batch`) and writes them together with
`write_batch`, in one transaction; the others find their item done and return. An item's
caller returns only once its transaction committed, so nothing is acknowledged before it is
durable.

When a batch fails, each of its items is written again alone, so one bad item (a constraint it
breaks, say) fails its own request only, with its own error, and the others still commit.

No thread of its own: the callers' threads take turns, so there is nothing to start or stop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

#: Most items written in one transaction.
MAX_BATCH = 64


class _Pending(Generic[T]):
    """A queued item and its outcome, set under the commit lock by the thread that wrote it
    (a `concurrent.futures.Future` would build a `Condition` per item that nobody waits on:
    callers wait on the commit lock)."""

    __slots__ = ("done", "error", "item")

    def __init__(self, item: T) -> None:
        self.item = item
        self.done = False
        self.error: BaseException | None = None


class GroupCommit(Generic[T]):
    """Writes queued items in shared transactions through `write_batch(items)`.

    `write_batch` must write every item in ONE transaction and commit it, or raise and leave
    nothing written.
    """

    def __init__(self, write_batch: Callable[[list[T]], None], max_batch: int = MAX_BATCH) -> None:
        self._write_batch = write_batch
        self._max_batch = max_batch
        self._queue: list[_Pending[T]] = []
        self._queue_lock = threading.Lock()
        self._commit_lock = threading.Lock()
        #: Transactions committed and items written by them (for tests and operators).
        self.batches = 0
        self.items = 0

    def write(self, item: T) -> None:
        """Write `item`; returns once it is committed, or raises what writing it raised."""
        pending = _Pending(item)
        with self._queue_lock:
            self._queue.append(pending)
        while True:
            with self._commit_lock:
                if pending.done:
                    break
                with self._queue_lock:
                    batch = self._queue[: self._max_batch]
                    del self._queue[: self._max_batch]
                self._commit(batch)
        if pending.error is not None:
            raise pending.error

    def _commit(self, batch: list[_Pending[T]]) -> None:
        try:
            self._write_batch([pending.item for pending in batch])
        except BaseException as error:
            if len(batch) == 1:
                batch[0].error = error
                batch[0].done = True
                return
            for pending in batch:  # one at a time: only the culprit fails
                self._commit([pending])
            return
        self.batches += 1
        self.items += len(batch)
        for pending in batch:
            pending.done = True
