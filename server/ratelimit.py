"""Per-key rate limits shared by every API process: fixed windows counted in PostgreSQL (the
table `rate_limit_counters`) or, when `INSPECTLANG_REDIS_URL` is set, in Redis. On SQLite (one
API process per database file) the counters are in the process's memory.

Each authenticated request adds one to the counter of (its key, the current window); past
`rate_limit_requests` in a window of `rate_limit_window_seconds` the request is refused with 429
`rate_limited` and a `Retry-After` header (seconds until the window ends). Since every process
increments the same counter, N processes behind a load balancer allow the configured rate in
total, not N times it. The count is one atomic statement (`INSERT ... ON CONFLICT DO UPDATE ...
RETURNING` / Redis `INCR`); on PostgreSQL it commits without waiting for the WAL flush
(`synchronous_commit = off`): a crash may forget the last few counts, never a stored inspection.

Defaults (docs/operations.md): 1200 requests per key per 60 s; `INSPECTLANG_RATE_LIMIT_REQUESTS=0`
turns the limit off.
"""

from __future__ import annotations

import contextlib
import math
import random
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

import anyio
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send
from sqlalchemy import delete, text

from server.auth import AuthContext
from server.db import Database
from server.errors import ApiError
from server.settings import Settings

#: Chance that a count also deletes windows that ended (keeps the table a few rows per key).
PURGE_PROBABILITY = 0.01


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    count: int
    retry_after: int


class Counter(Protocol):
    def hit(self, bucket: str, window_start: int, ttl: int) -> int:
        """Add one to the counter of (bucket, window) and return its new value."""
        ...

    def peek(self, bucket: str, window_start: int) -> int:
        """The counter of (bucket, window), unchanged."""
        ...


class DatabaseCounter:
    """Counters in `rate_limit_counters` (PostgreSQL or SQLite, both have upserts).

    The table is shared by every limiter of the deployment (the API keys' one-minute windows,
    the consumer links' ten-minute ones), so a count purges only rows older than
    `keep_seconds`, the longest any of them still reads: purging "every window before mine"
    deleted the links' current window each time an API request purged (1 in 100), and the
    link throttle forgot its failures."""

    def __init__(self, db: Database, keep_seconds: int | None = None) -> None:
        self.db = db
        self.keep_seconds = 2 * LINK_WINDOW_SECONDS if keep_seconds is None else keep_seconds

    def hit(self, bucket: str, window_start: int, ttl: int) -> int:
        from server.tables import RateLimitCounter

        with self.db.engine.begin() as connection:
            if self.db.dialect == "postgresql":
                connection.execute(text("SET LOCAL synchronous_commit = off"))
            count = connection.execute(
                text(
                    "INSERT INTO rate_limit_counters (bucket, window_start, count) "
                    "VALUES (:bucket, :window, 1) "
                    "ON CONFLICT (bucket, window_start) "
                    "DO UPDATE SET count = rate_limit_counters.count + 1 "
                    "RETURNING count"
                ),
                {"bucket": bucket, "window": window_start},
            ).scalar_one()
            if random.random() < PURGE_PROBABILITY:
                table: Any = cast(Any, RateLimitCounter).__table__
                oldest = window_start - self.keep_seconds
                connection.execute(delete(table).where(table.c.window_start < oldest))
        return int(count)

    def peek(self, bucket: str, window_start: int) -> int:
        with self.db.engine.connect() as connection:
            count = connection.execute(
                text(
                    "SELECT count FROM rate_limit_counters "
                    "WHERE bucket = :bucket AND window_start = :window"
                ),
                {"bucket": bucket, "window": window_start},
            ).scalar()
        return int(count or 0)


class MemoryCounter:
    """Counters in this process's memory: what SQLite gets (one `serve` process per database
    file, so nothing to share), sparing every request a synchronous write to the file."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, int], int] = {}
        self.lock = threading.Lock()

    def hit(self, bucket: str, window_start: int, ttl: int) -> int:
        with self.lock:
            if len(self.counts) > 10_000:  # drop ended windows now and then
                self.counts = {k: v for k, v in self.counts.items() if k[1] >= window_start}
            count = self.counts.get((bucket, window_start), 0) + 1
            self.counts[(bucket, window_start)] = count
            return count

    def peek(self, bucket: str, window_start: int) -> int:
        with self.lock:
            return self.counts.get((bucket, window_start), 0)


class RedisCounter:
    """Counters as Redis keys `inspectlang:rl:<bucket>:<window>` (`INCR`, then `EXPIRE`), over
    a minimal RESP connection per thread (no client library needed for two commands)."""

    def __init__(self, url: str) -> None:
        parsed = urlsplit(url)
        if parsed.scheme != "redis":
            raise ValueError(f"INSPECTLANG_REDIS_URL must be redis://host:port/db, not {url!r}")
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or 6379
        self.db = int(parsed.path.strip("/") or 0)
        self.password = parsed.password
        self.local = threading.local()
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()

    def _connection(self) -> Any:
        connection = getattr(self.local, "connection", None)
        if connection is None:
            sock = socket.create_connection((self.host, self.port), timeout=5)
            connection = sock.makefile("rwb")
            self.local.connection = connection
            self.local.socket = sock
            with self.lock:
                self.sockets.append(sock)
            if self.password:
                self._command(connection, "AUTH", self.password)
            if self.db:
                self._command(connection, "SELECT", str(self.db))
        return connection

    @staticmethod
    def _command(connection: Any, *parts: str) -> Any:
        encoded = [part.encode() for part in parts]
        connection.write(
            b"*%d\r\n" % len(encoded)
            + b"".join(b"$%d\r\n%s\r\n" % (len(part), part) for part in encoded)
        )
        connection.flush()
        return RedisCounter._reply(connection)

    @staticmethod
    def _reply(connection: Any) -> Any:
        line = connection.readline()
        if not line:
            raise ConnectionError("Redis closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"-":
            raise ConnectionError(f"Redis: {rest.decode(errors='replace')}")
        if kind == b":":
            return int(rest)
        if kind == b"+":
            return rest.decode()
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else connection.read(size + 2)[:-2]
        if kind == b"*":
            return [RedisCounter._reply(connection) for _ in range(int(rest))]
        raise ConnectionError(f"unexpected Redis reply {line!r}")

    def hit(self, bucket: str, window_start: int, ttl: int) -> int:
        key = f"inspectlang:rl:{bucket}:{window_start}"
        try:
            connection = self._connection()
            count = self._command(connection, "INCR", key)
            if count == 1:
                self._command(connection, "EXPIRE", key, str(ttl))
        except (OSError, ConnectionError):
            self._drop()  # reconnect on the next request
            raise
        return int(count)

    def peek(self, bucket: str, window_start: int) -> int:
        try:
            found = self._command(
                self._connection(), "GET", f"inspectlang:rl:{bucket}:{window_start}"
            )
        except (OSError, ConnectionError):
            self._drop()
            raise
        return int(found) if found else 0

    def ping(self) -> None:
        self._command(self._connection(), "PING")

    def _drop(self) -> None:
        sock = getattr(self.local, "socket", None)
        self.local.connection = None
        self.local.socket = None
        if sock is not None:
            with self.lock:
                if sock in self.sockets:
                    self.sockets.remove(sock)
            sock.close()

    def close(self) -> None:
        """Close every thread's connection (at shutdown)."""
        with self.lock:
            sockets, self.sockets = self.sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()


class RateLimiter:
    """Fixed-window limiter of `limit` requests per `window` seconds per bucket."""

    def __init__(self, counter: Counter, limit: int, window: int) -> None:
        self.counter = counter
        self.limit = limit
        self.window = window

    def close(self) -> None:
        close = getattr(self.counter, "close", None)
        if callable(close):
            close()

    def check(self, bucket: str, now: float | None = None) -> Decision:
        moment = time.time() if now is None else now
        window_start = int(moment // self.window) * self.window
        count = self.counter.hit(bucket, window_start, self.window * 2)
        retry_after = max(1, math.ceil(window_start + self.window - moment))
        return Decision(count <= self.limit, count, retry_after)


def make_counter(settings: Settings, db: Database) -> Counter:
    """Where counts are kept: Redis when configured, else PostgreSQL, else this process."""
    if settings.redis_url:
        return RedisCounter(settings.redis_url)
    if db.dialect == "postgresql":
        longest = max(settings.rate_limit_window_seconds, LINK_WINDOW_SECONDS)
        return DatabaseCounter(db, keep_seconds=2 * longest)
    return MemoryCounter()


def make_limiter(settings: Settings, db: Database) -> RateLimiter | None:
    """The limiter the settings ask for; None when the limit is off (0 requests)."""
    if settings.rate_limit_requests <= 0:
        return None
    return RateLimiter(
        make_counter(settings, db), settings.rate_limit_requests, settings.rate_limit_window_seconds
    )


#: Failed attempts to open a consumer link with a code (`/i/<id>?code=`: a wrong code or an
#: unknown id), per client address and per inspection id (issue 21 §4: 300 wrong codes in 3.3 s
#: all answered). The id's count is kept whether or not an inspection has that id, so a wrong
#: code and an unknown id behave alike: 404 until the limit, then 429 for either, and for the
#: right code too (an attacker learns nothing while refused). Right codes are not counted, and
#: a consumer already in the flow continues with their session (`/i/<id>` without a code).
LINK_WINDOW_SECONDS = 600
LINK_FAILURES_PER_ADDRESS = 30
LINK_FAILURES_PER_INSPECTION = 20


class LinkThrottle:
    """`refused(address, inspection_id)`: seconds to wait (`Retry-After`) while either count is
    at its limit, else None; `failed(...)` counts one failure for both."""

    def __init__(self, counter: Counter) -> None:
        self.counter = counter

    def _buckets(self, address: str, inspection_id: str) -> list[tuple[str, int]]:
        return [
            (f"link:ip:{address}"[:96], LINK_FAILURES_PER_ADDRESS),
            (f"link:id:{inspection_id}"[:96], LINK_FAILURES_PER_INSPECTION),
        ]

    def refused(self, address: str, inspection_id: str, now: float | None = None) -> int | None:
        moment = time.time() if now is None else now
        window_start = int(moment // LINK_WINDOW_SECONDS) * LINK_WINDOW_SECONDS
        for bucket, limit in self._buckets(address, inspection_id):
            if self.counter.peek(bucket, window_start) >= limit:
                return max(1, math.ceil(window_start + LINK_WINDOW_SECONDS - moment))
        return None

    def failed(self, address: str, inspection_id: str, now: float | None = None) -> None:
        moment = time.time() if now is None else now
        window_start = int(moment // LINK_WINDOW_SECONDS) * LINK_WINDOW_SECONDS
        for bucket, _limit in self._buckets(address, inspection_id):
            self.counter.hit(bucket, window_start, LINK_WINDOW_SECONDS * 2)

    def close(self) -> None:
        close = getattr(self.counter, "close", None)
        if callable(close):
            close()


def bucket_of(auth: AuthContext) -> str:
    """One bucket per API key (image tokens: one per company and key mode)."""
    return f"{auth.company_id}:{auth.mode}:{auth.key_id}"[:96]


class RateLimitMiddleware:
    """After authentication: 429 `rate_limited` (with `Retry-After`) past the key's limit."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        auth = scope.get("auth") if scope["type"] == ScopeType.HTTP else None
        limiter: RateLimiter | None = (
            scope["app"].state.get("rate_limiter") if isinstance(auth, AuthContext) else None
        )
        if limiter is not None and isinstance(auth, AuthContext):
            decision = await anyio.to_thread.run_sync(limiter.check, bucket_of(auth))
            if not decision.allowed:
                from server import metrics

                metrics.RATE_LIMITED.inc()
                raise ApiError(
                    "rate_limited",
                    429,
                    f"Too many requests for this key: at most {limiter.limit} per "
                    f"{limiter.window} s. Retry after {decision.retry_after} s.",
                    headers={"Retry-After": str(decision.retry_after)},
                )
        await self.app(scope, receive, send)
