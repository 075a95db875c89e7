"""Webhooks: signing (Standard Webhooks), delivery with retries, subscriptions, the secret.

Every POST carries `webhook-id` (the delivery id, the same on every retry), `webhook-timestamp`
(seconds), `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` keyed with
the company's secret `whsec_<base64>`), and `autoinspector-signature` (hex HMAC-SHA256 of the
raw body keyed with the secret string as issued, `whsec_...` included) for clients of the older
scheme. A delivery is a job (`server.jobs`):
non-2xx answers are retried with backoff, `Retry-After` on 429/503 is honoured, 410 Gone stops
(and disables an event subscription). The URL is checked again before every attempt, because
DNS may now point elsewhere. Every attempt is recorded in `webhook_attempts`.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec
from sqlalchemy import bindparam, literal_column, select
from sqlmodel import Session, col
from standardwebhooks.webhooks import Webhook

from inspectlang.timestamps import utc_timestamp
from server.common import retry_after_seconds
from server.db import Database
from server.errors import ApiError, ServerError
from server.jobs import GiveUp, JobContext, RetryLater, enqueue
from server.settings import Settings
from server.tables import Company, JobRecord
from server.tokens import hmac_sha256
from server.urlsafety import (
    CheckedURL,
    Resolver,
    UnsafeURLError,
    check_endpoint,
    check_url_for,
    system_resolver,
)
from server.webhooks.schemas import (
    EVENT_NAMES,
    Subscription,
    SubscriptionCreated,
    SubscriptionList,
    SubscriptionRequest,
    WebhookEvent,
)
from server.webhooks.tables import (
    RetiredWebhookSecretRecord,
    WebhookAttemptRecord,
    WebhookSubscriptionRecord,
)

logger = logging.getLogger("server.webhooks")

#: Events an endpoint can subscribe to.
EVENTS: tuple[str, ...] = EVENT_NAMES
#: Events of report requests, sent to the request's `callbackURL` (not subscribable).
REPORT_EVENTS: tuple[str, ...] = ("report_completed", "report_failed")
#: Seconds a receiver has to answer one attempt.
DELIVERY_TIMEOUT_SECONDS = 15.0
#: Attempts of one delivery before it is given up.
DELIVERY_MAX_ATTEMPTS = 8
#: Longest wait a `Retry-After` may impose before the next attempt.
MAX_RETRY_AFTER_SECONDS = 3600.0
#: Subscriptions per company and key mode.
MAX_SUBSCRIPTIONS = 20
SECRET_PREFIX = "whsec_"
#: How long after a rotation deliveries are also signed with the previous secret.
ROTATION_GRACE = timedelta(hours=24)
USER_AGENT = "inspectlang-webhooks/1"
#: The job kind of an event delivery (registered in `server.app.job_kinds`).
WEBHOOK_JOB = "webhook"


# --- secret and signatures ---------------------------------------------------------------------


def new_secret() -> str:
    """A fresh signing secret: `whsec_` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The Standard Webhooks signature header value, `v1,<base64 HMAC-SHA256>`, made by the
    reference library (`standardwebhooks`) that clients verify with."""
    moment = datetime.fromtimestamp(timestamp, UTC)
    return Webhook(secret).sign(message_id, moment, body.decode("utf-8"))


def legacy_signature(secret: str, body: bytes) -> str:
    """`autoinspector-signature`: hex HMAC-SHA256 of the raw body keyed with the secret string
    exactly as issued (`whsec_...`, UTF-8), as the client libraries verify it
    (`createHmac('sha256', secret).update(body).digest('hex')`), not with its decoded bytes."""
    return hmac_sha256(secret.encode("utf-8"), body).hex()


def signed_headers(
    secret: str,
    message_id: str,
    timestamp: int,
    body: bytes,
    retired: tuple[str, ...] = (),
) -> dict[str, str]:
    """The delivery's headers. `webhook-signature` carries one `v1,` signature per secret:
    the current one first, then those retired less than ROTATION_GRACE ago."""
    signatures = " ".join(sign(key, message_id, timestamp, body) for key in (secret, *retired))
    return {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signatures,
        "autoinspector-signature": legacy_signature(secret, body),
    }


def ensure_secret(session: Session, company_id: str) -> tuple[str, bool]:
    """The company's secret, created in `session` when it has none; (secret, created)."""
    company = session.get(Company, company_id, with_for_update=True)
    if company is None:
        raise LookupError(f"no company {company_id!r}")
    if company.webhook_secret:
        return company.webhook_secret, False
    company.webhook_secret = new_secret()
    session.add(company)
    return company.webhook_secret, True


def company_secret(db: Database, company_id: str) -> str:
    """The company's secret, created on first need (a read first; a write lock only then)."""
    with db.session() as session:
        company = session.get(Company, company_id)
        if company is not None and company.webhook_secret:
            return company.webhook_secret
    with db.session(immediate=True) as session:
        secret, _ = ensure_secret(session, company_id)
        session.commit()
        return secret


def rotate_secret(db: Database, company_id: str) -> str:
    """Replace the company's webhook secret. Deliveries are signed with the new one, and for
    ROTATION_GRACE also with the old one (a second `v1,` signature)."""
    with db.session(immediate=True) as session:
        company = session.get(Company, company_id, with_for_update=True)
        if company is None:
            raise LookupError(f"no company {company_id!r}")
        if company.webhook_secret:
            session.add(
                RetiredWebhookSecretRecord(company_id=company_id, secret=company.webhook_secret)
            )
        company.webhook_secret = new_secret()
        session.add(company)
        session.commit()
        return company.webhook_secret


def retired_secrets(db: Database, company_id: str) -> tuple[str, ...]:
    """Secrets retired less than ROTATION_GRACE ago, newest first."""
    since = datetime.now(UTC) - ROTATION_GRACE
    with db.session() as session:
        rows = session.execute(
            select(RetiredWebhookSecretRecord)
            .where(col(RetiredWebhookSecretRecord.company_id) == company_id)
            .where(col(RetiredWebhookSecretRecord.retired_at) >= since)
            .order_by(col(RetiredWebhookSecretRecord.retired_at).desc())
        ).scalars()
        return tuple(row.secret for row in rows)


# --- enqueueing --------------------------------------------------------------------------------


def enqueue_delivery(
    session: Session,
    *,
    company_id: str,
    event: str,
    url: str,
    body: dict[str, Any] | None = None,
    subscription_id: str | None = None,
    kind: str = WEBHOOK_JOB,
    fields: dict[str, Any] | None = None,
) -> str:
    """Queue one delivery in the caller's transaction; returns its `webhook-id`.

    An event delivery carries its `body`. A sender whose body must be built at each attempt
    (a report callback carries a fresh `result.url`) passes its own job `kind`, whose handler
    calls `deliver` with the body, and the `fields` that handler needs; this module then knows
    nothing of that sender.
    """
    delivery_id = "msg_" + secrets.token_hex(12)
    enqueue(
        session,
        kind,
        {
            "deliveryId": delivery_id,
            "companyId": company_id,
            "event": event,
            "url": url,
            "body": body,
            "subscriptionId": subscription_id,
            **(fields or {}),
        },
        max_attempts=DELIVERY_MAX_ATTEMPTS,
    )
    return delivery_id


# --- delivery (the job) ------------------------------------------------------------------------


def _retry_after(value: str | None) -> float | None:
    return retry_after_seconds(value, cap=MAX_RETRY_AFTER_SECONDS)


def _record_attempt(
    db: Database,
    payload: dict[str, Any],
    attempt: int,
    *,
    status_code: int | None,
    error: str | None,
    started: float,
) -> None:
    with db.session() as session:
        session.add(
            WebhookAttemptRecord(
                delivery_id=payload["deliveryId"],
                company_id=payload["companyId"],
                event=payload["event"],
                url=payload["url"],
                attempt=attempt,
                status_code=status_code,
                error=error,
                duration_ms=int((time.monotonic() - started) * 1000),
            )
        )
        session.commit()


def _stored_body(ctx: JobContext) -> dict[str, Any]:
    body: dict[str, Any] = ctx.payload.get("body") or {}
    return body


#: How delivery resolves host names (tests swap in a fixed table).
RESOLVER: Resolver = system_resolver


def pinned(checked: CheckedURL) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The request aimed at the address that passed the check, not at a fresh DNS answer.

    Returns (url with the host replaced by that address, extra headers with the original
    `host`, httpx extensions with the TLS server name), so a DNS answer that changes between
    the check and the connection (rebinding) cannot redirect the delivery. Without resolved
    addresses (outside production) the URL is used as it is.
    """
    if not checked.addresses:
        return checked.url, {}, {}
    parts = urlsplit(checked.url)
    address = checked.addresses[0]
    literal = f"[{address}]" if ":" in address else address
    netloc = f"{literal}:{parts.port}" if parts.port is not None else literal
    url = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
    host = parts.netloc.rpartition("@")[2]
    extensions: dict[str, Any] = {"sni_hostname": checked.host} if parts.scheme == "https" else {}
    return url, {"host": host}, extensions


def run_delivery_job(ctx: JobContext) -> None:
    """One attempt of one event delivery (the body stored in the job)."""
    deliver(ctx, _stored_body)


def deliver(ctx: JobContext, build_body: Callable[[JobContext], dict[str, Any]]) -> None:
    """One attempt of one delivery job; raises to retry (backoff) or to give up.

    `build_body` makes the JSON body once the URL and the subscription were checked."""
    payload = ctx.payload
    started = time.monotonic()
    try:
        checked = check_url_for(ctx.settings, payload["url"], resolver=RESOLVER)
    except UnsafeURLError as error:
        _record_attempt(
            ctx.db, payload, ctx.attempt, status_code=None, error=error.code, started=started
        )
        raise GiveUp(f"{error.code}: {error.description}") from None
    inactive = _inactive_subscription(ctx.db, payload.get("subscriptionId"))
    if inactive is not None:
        _record_attempt(
            ctx.db, payload, ctx.attempt, status_code=None, error=inactive, started=started
        )
        raise GiveUp(f"{inactive}: the delivery is no longer wanted")
    secret = company_secret(ctx.db, payload["companyId"])
    body = json.dumps(build_body(ctx), separators=(",", ":"), ensure_ascii=False).encode()
    headers = signed_headers(
        secret,
        payload["deliveryId"],
        int(time.time()),
        body,
        retired_secrets(ctx.db, payload["companyId"]),
    )
    url, host_header, extensions = pinned(checked)
    try:
        with httpx.Client(
            timeout=DELIVERY_TIMEOUT_SECONDS, follow_redirects=False, trust_env=False
        ) as client:
            response = client.post(
                url, content=body, headers={**headers, **host_header}, extensions=extensions
            )
    except httpx.HTTPError as error:
        message = f"{type(error).__name__}: {error}"
        _record_attempt(
            ctx.db, payload, ctx.attempt, status_code=None, error=message, started=started
        )
        raise
    status = response.status_code
    if 200 <= status < 300:
        _record_attempt(
            ctx.db, payload, ctx.attempt, status_code=status, error=None, started=started
        )
        return
    _record_attempt(
        ctx.db, payload, ctx.attempt, status_code=status, error=f"HTTP {status}", started=started
    )
    if status == 410:
        _disable_subscription(ctx.db, payload.get("subscriptionId"))
        raise GiveUp("the receiver answered 410 Gone")
    if status in (429, 503):
        delay = _retry_after(response.headers.get("retry-after"))
        if delay is not None:
            raise RetryLater(delay, f"HTTP {status}, Retry-After {delay:.0f}s")
    raise DeliveryError(f"HTTP {status}")


class DeliveryError(ServerError):
    """The receiver answered with a status that is retried with backoff."""


def _inactive_subscription(db: Database, subscription_id: str | None) -> str | None:
    """Why an event delivery must not be sent anymore (its subscription went away), or None."""
    if not subscription_id:
        return None
    with db.session() as session:
        record = session.get(WebhookSubscriptionRecord, subscription_id)
    if record is None:
        return "subscription_deleted"
    return "subscription_disabled" if record.disabled_at is not None else None


def _disable_subscription(db: Database, subscription_id: str | None) -> None:
    if not subscription_id:
        return
    with db.session(immediate=True) as session:
        record = session.get(WebhookSubscriptionRecord, subscription_id)
        if record is not None and record.disabled_at is None:
            record.disabled_at = datetime.now(UTC)
            session.add(record)
            session.commit()


def delivery_given_up(session: Session, job: JobRecord, error: str) -> None:
    """Nothing to undo: the attempts are recorded; log it for operators."""
    logger.warning(
        "delivery %s to %s given up: %s",
        job.payload.get("deliveryId"),
        job.payload.get("url"),
        error,
    )


def attempts_of(db: Database, delivery_id: str) -> list[WebhookAttemptRecord]:
    """The recorded attempts of one delivery, oldest first."""
    with db.session() as session:
        rows = session.execute(
            select(WebhookAttemptRecord)
            .where(col(WebhookAttemptRecord.delivery_id) == delivery_id)
            .order_by(col(WebhookAttemptRecord.id))
        ).scalars()
        return list(rows)


# --- subscriptions -----------------------------------------------------------------------------


def subscription_object(record: WebhookSubscriptionRecord) -> Subscription:
    return Subscription(
        id=record.id,
        endpoint=record.endpoint,
        events=cast(list[WebhookEvent], list(record.events)),
        createdAt=utc_timestamp(record.created_at),
        active=record.disabled_at is None,
    )


def create_subscription(
    db: Database, settings: Settings, company_id: str, testing: bool, body: SubscriptionRequest
) -> SubscriptionCreated:
    """Subscribe an endpoint; the response carries `secret` when the company had none yet."""
    events: list[str] = list(dict.fromkeys(body.events))
    endpoint = check_endpoint(body.endpoint, settings)
    with db.session(immediate=True) as session:
        count = len(_subscriptions(session, company_id, testing))
        if count >= MAX_SUBSCRIPTIONS:
            raise ApiError(
                "too_many_subscriptions",
                409,
                f"At most {MAX_SUBSCRIPTIONS} webhook subscriptions per key mode.",
            )
        secret, created = ensure_secret(session, company_id)
        record = WebhookSubscriptionRecord(
            company_id=company_id, testing=testing, endpoint=endpoint, events=events
        )
        session.add(record)
        session.commit()
        return SubscriptionCreated(id=record.id, secret=secret if created else msgspec.UNSET)


def _subscriptions(
    session: Session, company_id: str, testing: bool
) -> list[WebhookSubscriptionRecord]:
    rows = session.execute(
        select(WebhookSubscriptionRecord)
        .where(col(WebhookSubscriptionRecord.company_id) == company_id)
        .where(col(WebhookSubscriptionRecord.testing) == testing)
        .order_by(col(WebhookSubscriptionRecord.created_at), col(WebhookSubscriptionRecord.id))
    ).scalars()
    return list(rows)


_subscriptions_table = cast(Any, WebhookSubscriptionRecord).__table__
#: Built once: does the company have any enabled subscription in this mode? Executed with a
#: parameter dict on every publish (indexed on company_id, testing), so the usual case, a
#: company without webhooks, skips loading records and rebuilding a statement per event.
_HAS_ENABLED_SUBSCRIPTION: Any = (
    select(literal_column("1"))
    .select_from(_subscriptions_table)
    .where(_subscriptions_table.c.company_id == bindparam("company_id"))
    .where(_subscriptions_table.c.testing == bindparam("testing"))
    .where(_subscriptions_table.c.disabled_at.is_(None))
    .limit(1)
)


def active_subscriptions(
    session: Session, company_id: str, testing: bool, event: str
) -> list[WebhookSubscriptionRecord]:
    """Enabled subscriptions of the company to `event`, read from the database each time
    (several server processes share it: a new subscription gets the very next event)."""
    params = {"company_id": company_id, "testing": testing}
    if session.execute(_HAS_ENABLED_SUBSCRIPTION, params).first() is None:
        return []
    return [
        record
        for record in _subscriptions(session, company_id, testing)
        if record.disabled_at is None and event in record.events
    ]


def list_subscriptions(db: Database, company_id: str, testing: bool) -> SubscriptionList:
    with db.session() as session:
        records = _subscriptions(session, company_id, testing)
    return SubscriptionList(webhooks=[subscription_object(record) for record in records])


def delete_subscription(db: Database, company_id: str, testing: bool, subscription_id: str) -> None:
    with db.session(immediate=True) as session:
        record = session.get(WebhookSubscriptionRecord, subscription_id)
        if record is None or record.company_id != company_id or record.testing != testing:
            raise ApiError("webhook_not_found", 404, "No webhook subscription with that id.")
        session.delete(record)
        session.commit()
