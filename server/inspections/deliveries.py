"""Delivering an inspection's magic link: the `link_delivery` job and resends.

The job's attempt marks the delivery `sending` before it hands the message to the provider and
`sent` in the transaction that completes the job; a worker that dies in between leaves
`sending`, and the next attempt first asks the provider whether it accepted the message
(`find_sent`) before sending again. docs/delivery.md states the guarantee per provider.
"""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlmodel import Session

import runtime
from inspectlang.manifest import Template
from runtime.state import allows
from server import metrics
from server.auth import AuthContext
from server.boundary import name_problem
from server.common import run_runtime
from server.db import Database
from server.delivery.destinations import (
    CHANNELS,
    Destination,
    available_channels,
    parse_destination,
)
from server.delivery.messages import Message, compose
from server.delivery.providers.base import Outgoing, PermanentFailure, Provider, TransientFailure
from server.delivery.providers.choice import choose
from server.delivery.service import (
    MAX_RESENDS,
    add,
    latest,
    new_record,
    plan,
    resend_wait,
    set_view,
    view,
)
from server.delivery.tables import LinkDeliveryRecord
from server.errors import ApiError
from server.inspections.events import publish
from server.inspections.service import (
    Loaded,
    expired,
    find_inspection,
    load,
    parse_moment,
    save,
)
from server.inspections.tables import InspectionRecord
from server.jobs import GiveUp, JobContext, RetryLater
from server.settings import Settings
from server.tables import Company, JobRecord
from server.tokens import hash_token

logger = logging.getLogger("server.delivery")


def _company_name(session: Session, company_id: str) -> str:
    company = session.get(Company, company_id)
    return company.name if company is not None else "inspectlang"


def _outgoing(session: Session, record: LinkDeliveryRecord) -> Outgoing:
    assert record.link is not None
    company = _company_name(session, record.company_id)
    message = compose(record.locale, company, record.link, record.expires_at, record.note)
    return Outgoing(
        delivery_id=record.id,
        channel=record.channel,
        to=record.destination,
        company=company,
        link=record.link,
        message=message,
    )


def _unbuildable(outgoing: Outgoing) -> str | None:
    """Why the message can never be built (a header line that holds a control character), or
    None. Names are refused at every entry point (`server.boundary.name_problem`); this catches
    what was stored before."""
    for what, value in (("subject", outgoing.message.subject), ("recipient", outgoing.to)):
        why = name_problem(value)
        if why is not None:
            return f"the message cannot be built: its {what} {why}"
    return None


def run_link_delivery_job(ctx: JobContext) -> None:
    """One attempt of one delivery."""
    delivery_id = ctx.payload["deliveryId"]
    with ctx.db.session(immediate=True) as session:
        record = session.get(LinkDeliveryRecord, delivery_id)
        if record is None or record.status in ("sent", "failed") or record.link is None:
            ctx.complete_in(session)
            session.commit()
            return
        outgoing = _outgoing(session, record)
        unbuildable = _unbuildable(outgoing)
        if unbuildable is not None:
            # No attempt can ever build it: failed at once, its reason recorded (a company
            # name with CR/LF was retried 8 times as if transient, with `lastError` empty).
            record.last_error = unbuildable
            _finish(session, record, failed=True)
            session.commit()
            metrics.delivery_done(record.channel, "failed")
            raise GiveUp(unbuildable)
        interrupted = record.status == "sending"
        record.status = "sending"
        record.attempts += 1
        session.add(record)
        set_view(session, record)
        session.commit()
    provider = choose(ctx.settings, outgoing.channel, ctx.db)
    # After an attempt that died mid-send, ask the provider first; while it cannot be asked,
    # the row stays `sending`, so the next attempt asks again instead of sending.
    found = provider.find_sent(outgoing) if interrupted else None
    try:
        provider_id = found if found is not None else provider.send(outgoing)
    except TransientFailure as error:
        _record_failure(ctx, delivery_id, str(error), final=False)
        delay = error.retry_after
        if delay is not None:
            raise RetryLater(delay, str(error)) from None
        raise
    except PermanentFailure as error:
        _record_failure(ctx, delivery_id, str(error), final=True)
        raise GiveUp(str(error)) from None
    _record_sent(ctx, delivery_id, provider, provider_id)


def _record_sent(ctx: JobContext, delivery_id: str, provider: Provider, provider_id: str) -> None:
    with ctx.db.session(immediate=True) as session:
        record = session.get(LinkDeliveryRecord, delivery_id)
        assert record is not None
        record.status = "sent"
        record.sent_at = datetime.now(UTC)
        record.provider = provider.name
        record.provider_message_id = provider_id[:200]
        record.last_error = None
        record.link = None  # the access code is not kept once the message is on its way
        session.add(record)
        set_view(session, record)
        _publish(session, record, "delivery_sent")
        ctx.complete_in(session)
        channel = record.channel
        session.commit()
    metrics.delivery_done(channel, "sent")


def _record_failure(ctx: JobContext, delivery_id: str, error: str, *, final: bool) -> None:
    with ctx.db.session(immediate=True) as session:
        record = session.get(LinkDeliveryRecord, delivery_id)
        assert record is not None
        record.last_error = error[:1000]
        _finish(session, record, failed=final)
        session.commit()


def _finish(session: Session, record: LinkDeliveryRecord, *, failed: bool) -> None:
    record.status = "failed" if failed else "queued"
    if failed:
        record.link = None
    session.add(record)
    set_view(session, record)
    if failed:
        _publish(session, record, "delivery_failed")


def link_delivery_given_up(session: Session, job: JobRecord, error: str) -> None:
    """The last attempt failed (or a permanent failure): the delivery is `failed`."""
    record = session.get(LinkDeliveryRecord, job.payload.get("deliveryId"))
    if record is None or record.status in ("sent", "failed"):
        return
    record.last_error = (record.last_error or error)[:1000]
    _finish(session, record, failed=True)
    metrics.delivery_done(record.channel, "failed")
    logger.warning("link delivery %s failed: %s", record.id, error)


def _publish(session: Session, record: LinkDeliveryRecord, event: str) -> None:
    publish(
        session,
        company_id=record.company_id,
        testing=record.testing,
        event=event,
        payload={"inspectionId": record.inspection_id, "delivery": view(record)},
    )


# --- resend ------------------------------------------------------------------------------------


def link_expiry(
    manifest: Template, state: runtime.InspectionState, now: datetime
) -> datetime | None:
    """When a link sent at `now` stops working: the template's `link expires after` from now,
    never past the inspection's own `expiresAt` (the message states this moment)."""
    ends = parse_moment(state.expiresAt)
    hours = manifest.parameters.linkExpiresInHours
    if hours:
        window = now + timedelta(hours=hours)
        return window if ends is None else min(window, ends)
    return ends


def resend(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    channel: str | None,
    destination: str | None,
    country: str | None,
    now: datetime,
) -> dict[str, Any]:
    """Queue the link again (a new access code: the previous link stops working), while the
    inspection is created or started; at most `MAX_RESENDS` an hour (429 with Retry-After).

    An inspection whose time ran out (past `expiresAt`, or already blocked by its expiry) gets a
    fresh window first (`runtime.renew`: the template's lifetime from now), so the new link
    opens and its message states the link's real expiry."""
    with db.session(immediate=True) as session:
        record = find_inspection(session, auth, inspection_id, lock=True)
        loaded = load(session, record)
        renewing = expired(loaded.state, now) or runtime.blocked_by_expiry(loaded.state)
        if not allows(loaded.state, "send_link") and not renewing:
            raise ApiError.of(
                "delivery_not_possible",
                f"The inspection is {record.status}: its link is only sent while it is "
                "created or started (or blocked by its expiry, which a resend renews).",
            )
        last = latest(session, inspection_id)
        chosen = channel or (last.channel if last else None)
        if chosen not in CHANNELS:
            raise ApiError.of(
                "invalid_delivery_channel",
                "channel is required (email, sms or wsp): this inspection has no earlier delivery.",
                [{"field": "channel", "code": "invalid_delivery_channel", "message": "required"}],
            )
        if destination is None and last is not None and last.channel == chosen:
            destination = last.destination
        if destination is None:
            raise ApiError.of(
                "invalid_delivery_destination",
                f"destination is required to send over {chosen}.",
                [
                    {
                        "field": "destination",
                        "code": "invalid_delivery_destination",
                        "message": "required",
                    }
                ],
            )
        checked = parse_destination(chosen, destination, country, prefix="")
        if chosen not in available_channels(settings):
            raise ApiError.of(
                "delivery_channel_unavailable",
                f"No provider is configured for {chosen} on this service (docs/delivery.md).",
            )
        wait = resend_wait(session, inspection_id, now)
        if wait is not None:
            raise ApiError(
                "too_many_deliveries",
                429,
                f"At most {MAX_RESENDS} resends an hour per inspection; try again in "
                f"{int(wait)} seconds.",
                headers={"Retry-After": str(int(wait) + 1)},
            )
        state = loaded.state
        if renewing:
            state = run_runtime(runtime.renew, loaded.program, loaded.state, now=now)
            save(session, loaded, state, now, [])
        link = new_link(session, settings, record)
        expires_at = link_expiry(loaded.manifest, state, now)
        delivery = _queue(session, record, state.locale, checked, link, expires_at, now, note=None)
        session.commit()
        return {"message": "Delivery queued", "magicLink": link, "delivery": view(delivery)}


def new_link(session: Session, settings: Settings, record: InspectionRecord) -> str:
    """A new access code for the inspection (the previous link stops working): its link."""
    code = secrets.token_urlsafe(24)
    record.access_code_hash = hash_token(code)
    session.add(record)
    return f"{settings.public_url}/i/{record.id}?code={code}"


def _queue(
    session: Session,
    record: InspectionRecord,
    locale: str,
    destination: Destination,
    link: str,
    expires_at: datetime | None,
    now: datetime,
    *,
    note: str | None,
) -> LinkDeliveryRecord:
    planned = plan(destination, locale, link, expires_at)
    delivery = new_record(planned, record.id, record.company_id, record.testing, now)
    delivery.note = note
    add(session, delivery)
    set_view(session, delivery)
    return delivery


def deliver_retake(
    session: Session,
    settings: Settings,
    loaded: Loaded,
    state: runtime.InspectionState,
    note: str,
    now: datetime,
) -> tuple[str, dict[str, Any] | None]:
    """A retake's new link, queued through the inspection's last channel and destination with
    the reviewer's message (`note`), in the caller's transaction. Without an earlier delivery,
    or when that channel has no provider any more, the link is only returned (the caller
    gives it to the consumer)."""
    record = loaded.record
    last = latest(session, record.id)
    link = new_link(session, settings, record)
    if last is None or last.channel not in available_channels(settings):
        return link, None
    destination = Destination(cast(Any, last.channel), last.destination)
    expires_at = link_expiry(loaded.manifest, state, now)
    delivery = _queue(session, record, state.locale, destination, link, expires_at, now, note=note)
    return link, view(delivery)


def retake_message(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    note: str,
    now: datetime,
) -> Message:
    """The message a retake would send now (`deliver_retake`), for the reviewer's preview: the
    same composition, in the inspection's locale, with a placeholder instead of the new code."""
    with db.session() as session:
        loaded = load(session, find_inspection(session, auth, inspection_id, lock=False))
        company = _company_name(session, auth.company_id)
    link = f"{settings.public_url}/i/{inspection_id}?code=…"
    expires_at = link_expiry(loaded.manifest, loaded.state, now)
    return compose(loaded.state.locale, company, link, expires_at, note)
