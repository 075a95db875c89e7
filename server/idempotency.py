"""Idempotency keys: the first response to a key is stored and replayed for its retries.

Rules (spec "Idempotency", plus our choices where it is silent):
- only POST, PUT and PATCH look at `Idempotency-Key`; GET and DELETE ignore it;
- a key longer than 255 characters (or empty) gets 400 `invalid_idempotency_key`;
- records are per company + key mode + key, with a fingerprint: sha256 of method, path and the
  raw body; the same key with another fingerprint gets 422 `idempotency_key_reused`;
- this middleware runs after authentication, so unauthenticated requests store nothing;
- the key is claimed by an INSERT under a unique constraint BEFORE the handler runs, so two
  concurrent requests can never both run it: the loser waits for the winner's response (up to
  `WAIT_SECONDS`) and replays it, or gets 409 `idempotency_request_in_progress`;
- a claim names its owner (host, pid, a token per store) and holds a lease of `LEASE`, renewed
  every `RENEW_SECONDS` while the handler runs. A process that dies (killed, OOM, host lost)
  stops renewing: once the lease lapses the next retry takes the key over (a compare-and-set
  on the lapsed lease, so one taker only) and runs the request; before issue 16 such a key
  answered 409 for 24 hours. Storing the response and renewing are guarded by the owner, so a
  process that lost its lease cannot overwrite its successor's answer;
- exactly once where it matters most: a creation, an image upload, a change answered with
  the Inspection object (finish, start, a declared damage, a review decision:
  `changed_document`) and a retake (`server.inspections.service.store_answer`) store their
  answer in the claim in the very transaction that writes it (`current_claim`, `store_with`),
  so a crash after that commit replays what was done, and a crash before it leaves nothing to
  replay. Other handlers store after they return: a crash in that window runs them again on the
  retry;
- the first response, whatever its status (5xx included), is stored and replayed with the
  header `Idempotent-Replayed: true`; records expire after 24 hours and are then purged. A 503
  (storage or a service unavailable, `Retry-After`) is the exception: it asks for a retry, so
  the claim is released and the retry runs the request.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import os
import secrets
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import anyio
import anyio.to_thread
from litestar.enums import ScopeType
from litestar.serialization import encode_json
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from server.auth import AuthContext
from server.db import Database
from server.errors import ApiError, infrastructure_fault
from server.tables import IdempotencyRecord

logger = logging.getLogger(__name__)

HEADER = b"idempotency-key"
#: A response that asks the client to retry (`Retry-After`): never stored, never replayed.
UNAVAILABLE_STATUS = 503
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
#: How long a record is kept and replayed.
TTL = timedelta(hours=24)
#: How long a duplicate waits for the first request in flight before giving up with 409.
WAIT_SECONDS = 5.0
POLL_SECONDS = 0.05
#: How long a claim holds its key without being renewed: a retry after a crash is processed
#: this long after the crash at most. Far above a database stall we survive (`RENEW_SECONDS`).
LEASE = timedelta(seconds=30)
#: How often the owner renews its lease while its handler runs.
RENEW_SECONDS = 10.0
#: Expired records are purged at most this often per process.
PURGE_INTERVAL = timedelta(minutes=1)
METHODS = frozenset({"POST", "PUT", "PATCH"})

_table = cast(Any, IdempotencyRecord).__table__


@dataclass(frozen=True, slots=True)
class StoredResponse:
    status_code: int
    content_type: str | None
    body: bytes

    @classmethod
    def json(cls, status_code: int, body: Any) -> StoredResponse:
        """A handler's JSON answer, as Litestar will send it: what a handler stores with
        `store_with` in its own transaction."""
        return cls(status_code, "application/json", encode_json(body))


@dataclass(frozen=True, slots=True)
class Claim:
    """The outcome of trying to claim a key: ours to run, someone else's, or already answered."""

    record_id: int | None
    fingerprint: str
    stored: StoredResponse | None = None
    in_flight: bool = False
    #: In flight, and its owner stopped renewing its lease: the key can be taken over.
    lapsed: bool = False


@dataclass(frozen=True, slots=True)
class ClaimToken:
    """A claim this process holds: the record and the owner that must still hold it."""

    record_id: int
    owner: str


#: The claim of the request being handled (set by the middleware; threads copy it).
_current: contextvars.ContextVar[ClaimToken | None] = contextvars.ContextVar(
    "idempotency_claim", default=None
)


def current_claim() -> ClaimToken | None:
    """The claim of the request being handled, if it came with an `Idempotency-Key`."""
    return _current.get()


def store_with(connection: Any, token: ClaimToken, response: StoredResponse) -> None:
    """Store `response` for the claim inside the caller's transaction; raises 409
    `idempotency_request_in_progress` (so that transaction rolls back) when the claim's lease
    lapsed and another request took the key over: only one of them may commit."""
    result = connection.execute(
        update(_table)
        .where(_table.c.id == token.record_id, _table.c.owner == token.owner)
        .values(
            status_code=response.status_code,
            content_type=response.content_type,
            body=response.body,
        )
    )
    if result.rowcount != 1:
        raise ApiError.of(
            "idempotency_request_in_progress",
            "Another request with this Idempotency-Key took it over; retry to get its answer.",
        )


def _lapsed(row: Any, now: datetime) -> bool:
    """Whether an in-flight record's lease lapsed (records older than leases: by age)."""
    lease = row.lease_expires_at if row.lease_expires_at is not None else row.created_at + LEASE
    return bool(lease <= now)


def fingerprint(method: str, path: str, body: bytes) -> str:
    digest = hashlib.sha256()
    digest.update(method.upper().encode("ascii"))
    digest.update(b"\n")
    digest.update(path.encode("utf-8"))
    digest.update(b"\n")
    digest.update(body)
    return digest.hexdigest()


class IdempotencyStore:
    """Claims and answers of idempotency keys in the database (all methods are blocking)."""

    def __init__(self, db: Database, wait_seconds: float = WAIT_SECONDS) -> None:
        self.db = db
        #: How long a duplicate waits for the request in flight before getting 409.
        self.wait_seconds = wait_seconds
        #: This store's name on its claims: unique per process and per store.
        self.owner = f"{socket.gethostname()[:60]}:{os.getpid()}:{secrets.token_hex(6)}"
        self._last_purge: datetime | None = None

    def claim(self, auth: AuthContext, key: str, print_: str, now: datetime) -> Claim:
        """Insert an in-flight record for the key, or report the existing one."""
        self._maybe_purge(now)
        for _ in range(3):
            with self.db.engine.connect() as connection:
                try:
                    result = connection.execute(
                        insert(_table).values(
                            company_id=auth.company_id,
                            mode=auth.mode,
                            key=key,
                            fingerprint=print_,
                            created_at=now,
                            expires_at=now + TTL,
                            owner=self.owner,
                            lease_expires_at=now + LEASE,
                        )
                    )
                    connection.commit()
                    primary_key = result.inserted_primary_key
                    return Claim(
                        record_id=int(primary_key[0]) if primary_key else None, fingerprint=print_
                    )
                except IntegrityError:
                    connection.rollback()
                row = self._find(connection, auth, key)
                if row is None:
                    continue  # purged between our insert and our read: try again
                if row.expires_at <= now:
                    connection.execute(
                        delete(_table)
                        .where(_table.c.id == row.id)
                        .where(_table.c.expires_at <= now)
                    )
                    connection.commit()
                    continue
                existing = self._existing(row, now)
                if existing.lapsed and existing.fingerprint == print_:
                    if self._take_over(connection, row, now):
                        return Claim(record_id=int(row.id), fingerprint=print_)
                    continue  # another retry took it first: read it again
                return existing
        raise ApiError.of("idempotency_request_in_progress", "The key could not be claimed.")

    def _take_over(self, connection: Any, row: Any, now: datetime) -> bool:
        """Make a lapsed claim ours: a compare-and-set on the owner and lease we read, so of
        several retries arriving together exactly one wins."""
        same_lease = (
            _table.c.lease_expires_at.is_(None)
            if row.lease_expires_at is None
            else _table.c.lease_expires_at == row.lease_expires_at
        )
        same_owner = _table.c.owner.is_(None) if row.owner is None else _table.c.owner == row.owner
        result = connection.execute(
            update(_table)
            .where(_table.c.id == row.id, _table.c.status_code.is_(None), same_owner, same_lease)
            .values(owner=self.owner, lease_expires_at=now + LEASE)
        )
        connection.commit()
        return bool(result.rowcount == 1)

    def renew(self, record_id: int, now: datetime) -> bool:
        """Extend our lease on an in-flight claim; False when it is no longer ours."""
        with self.db.engine.begin() as connection:
            result = connection.execute(
                update(_table)
                .where(
                    _table.c.id == record_id,
                    _table.c.owner == self.owner,
                    _table.c.status_code.is_(None),
                )
                .values(lease_expires_at=now + LEASE)
            )
        return bool(result.rowcount == 1)

    def lookup(self, auth: AuthContext, key: str, now: datetime) -> Claim | None:
        with self.db.engine.connect() as connection:
            row = self._find(connection, auth, key)
        if row is None or row.expires_at <= now:
            return None
        return self._existing(row, now)

    @staticmethod
    def _find(connection: Any, auth: AuthContext, key: str) -> Any:
        return connection.execute(
            select(_table).where(
                _table.c.company_id == auth.company_id,
                _table.c.mode == auth.mode,
                _table.c.key == key,
            )
        ).first()

    @staticmethod
    def _existing(row: Any, now: datetime) -> Claim:
        if row.status_code is None:
            return Claim(
                record_id=row.id,
                fingerprint=row.fingerprint,
                in_flight=True,
                lapsed=_lapsed(row, now),
            )
        stored = StoredResponse(row.status_code, row.content_type, bytes(row.body or b""))
        return Claim(record_id=row.id, fingerprint=row.fingerprint, stored=stored)

    def store(self, record_id: int, response: StoredResponse) -> None:
        """Store the response sent (the one written in the handler's transaction, if any, is
        replaced by the bytes really sent); nothing when the claim was taken over."""
        with self.db.engine.begin() as connection:
            connection.execute(
                update(_table)
                .where(_table.c.id == record_id, _table.c.owner == self.owner)
                .values(
                    status_code=response.status_code,
                    content_type=response.content_type,
                    body=response.body,
                    owner=None,
                    lease_expires_at=None,
                )
            )

    def release(self, record_id: int) -> None:
        """Give the key up (delete the claim) so its next retry runs the request: after a 503,
        which says "try again", never something to replay for 24 hours. Best effort: storage
        that refuses this write too leaves a claim whose lease lapses (`LEASE`), and the retry
        after that takes it over."""
        try:
            with self.db.engine.begin() as connection:
                connection.execute(
                    delete(_table).where(_table.c.id == record_id, _table.c.owner == self.owner)
                )
        except Exception as error:  # the storage that failed the request may refuse this too
            logger.warning("could not release idempotency claim %s: %s", record_id, error)

    def purge_expired(self, now: datetime) -> int:
        with self.db.engine.begin() as connection:
            result = connection.execute(delete(_table).where(_table.c.expires_at <= now))
        return int(result.rowcount or 0)

    def _maybe_purge(self, now: datetime) -> None:
        if self._last_purge is None or now - self._last_purge >= PURGE_INTERVAL:
            self._last_purge = now
            self.purge_expired(now)


class IdempotencyMiddleware:
    """ASGI middleware applying the rules above; listed after `AuthMiddleware`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = str(cast(Any, scope).get("method", ""))
        if scope["type"] != ScopeType.HTTP or method not in METHODS:
            await self.app(scope, receive, send)
            return
        raw_key = next((value for name, value in scope["headers"] if name == HEADER), None)
        auth = scope.get("auth")
        if raw_key is None or not isinstance(auth, AuthContext):
            await self.app(scope, receive, send)
            return
        key = raw_key.decode("latin-1")
        if not key.strip() or len(key) > MAX_KEY_LENGTH:
            raise ApiError.of(
                "invalid_idempotency_key",
                f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters.",
            )
        state = scope["litestar_app"].state
        store: IdempotencyStore = state.idempotency
        body = await _read_body(receive, state.settings.max_body_bytes)
        if body is None:
            return  # the client went away before sending its whole body: nothing to run
        print_ = fingerprint(method, scope["path"], body)
        now: datetime = state.clock()
        claim = await anyio.to_thread.run_sync(store.claim, auth, key, print_, now)
        _check_fingerprint(claim, print_)
        claim = await _wait_while_in_flight(store, auth, key, claim, print_, state)
        _check_fingerprint(claim, print_)
        if claim.stored is not None:
            await _replay(claim.stored, send)
            return
        if claim.in_flight or claim.record_id is None:
            raise ApiError(
                "idempotency_request_in_progress",
                409,
                "A request with this Idempotency-Key is still being processed; retry shortly.",
                headers={"Retry-After": "1"},
            )
        token = _current.set(ClaimToken(claim.record_id, store.owner))
        failure: Exception | None = None
        try:
            async with anyio.create_task_group() as renewals:
                renewals.start_soon(_keep_renewing, store, claim.record_id, state)
                try:
                    await self._run_and_store(scope, body, receive, send, store, claim.record_id)
                except Exception as error:  # raised outside the group, not as an ExceptionGroup
                    failure = error
                finally:
                    renewals.cancel_scope.cancel()
        finally:
            _current.reset(token)
        if failure is not None:
            raise failure

    async def _run_and_store(
        self,
        scope: Scope,
        body: bytes,
        receive: Receive,
        send: Send,
        store: IdempotencyStore,
        record_id: int,
    ) -> None:
        status_code = 500
        content_type: str | None = None
        chunks: list[bytes] = []
        body_sent = False

        async def replay_receive() -> Any:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def capture_send(message: Message) -> None:
            nonlocal status_code, content_type
            if message["type"] == "http.response.start":
                status_code = int(message["status"])
                for name, value in message.get("headers", []):
                    if name.lower() == b"content-type":
                        content_type = value.decode("latin-1")
            elif message["type"] == "http.response.body":
                chunks.append(bytes(message.get("body", b"")))
            await send(message)

        try:
            await self.app(scope, cast(Receive, replay_receive), capture_send)
        except Exception as failure:
            if infrastructure_fault(failure) is not None:
                await anyio.to_thread.run_sync(store.release, record_id)
                raise
            error = ApiError.of("internal_error")
            stored = StoredResponse(500, "application/json", json.dumps(error.to_dict()).encode())
            await anyio.to_thread.run_sync(store.store, record_id, stored)
            raise
        if status_code == UNAVAILABLE_STATUS:
            await anyio.to_thread.run_sync(store.release, record_id)
            return
        stored = StoredResponse(status_code, content_type, b"".join(chunks))
        await anyio.to_thread.run_sync(store.store, record_id, stored)


async def _keep_renewing(store: IdempotencyStore, record_id: int, state: Any) -> None:
    """Renew the claim's lease every `RENEW_SECONDS` until cancelled (the handler is done)."""
    while True:
        await anyio.sleep(RENEW_SECONDS)
        await anyio.to_thread.run_sync(store.renew, record_id, state.clock())


def _check_fingerprint(claim: Claim, print_: str) -> None:
    if claim.fingerprint != print_:
        raise ApiError.of(
            "idempotency_key_reused",
            "This Idempotency-Key was used with a different request.",
        )


async def _wait_while_in_flight(
    store: IdempotencyStore, auth: AuthContext, key: str, claim: Claim, print_: str, state: Any
) -> Claim:
    """Poll a record someone else claimed until it has a response or `WAIT_SECONDS` pass."""
    waited = 0.0
    while claim.in_flight and waited < store.wait_seconds:
        await anyio.sleep(POLL_SECONDS)
        waited += POLL_SECONDS
        found = await anyio.to_thread.run_sync(store.lookup, auth, key, state.clock())
        if found is None or found.lapsed:
            # The first request's record expired or vanished, or its owner died: claim the key.
            return await anyio.to_thread.run_sync(store.claim, auth, key, print_, state.clock())
        claim = found
    return claim


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body (at most `limit` bytes); None if the client disconnected."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message: Any = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > limit:
            raise ApiError.of("body_too_large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _replay(stored: StoredResponse, send: Send) -> None:
    headers = [(REPLAYED_HEADER.lower().encode(), b"true")]
    if stored.content_type:
        headers.append((b"content-type", stored.content_type.encode("latin-1")))
    headers.append((b"content-length", str(len(stored.body)).encode()))
    await send({"type": "http.response.start", "status": stored.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": stored.body, "more_body": False})
