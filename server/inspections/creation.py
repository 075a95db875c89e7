"""Creating inspections: read the client libraries' shapes (`client_shapes`), check what the
runtime does not know about (callback URL, delivery, producer, file parts), run
`runtime.create` (which checks the body itself, once), and store the inspection, its products,
its files and its events in one transaction."""

from __future__ import annotations

import functools
import secrets
import threading
import weakref
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import insert
from sqlmodel import Session

import runtime
from inspectlang.manifest import Template
from runtime import new_object_id
from server.auth import AuthContext, Mode, count_consumed, find_member
from server.blobs import BlobStore
from server.bodies import decode_shape
from server.common import run_runtime
from server.db import Database
from server.delivery import service as deliveries
from server.delivery.destinations import Destination, check_delivery
from server.errors import ApiError
from server.group_commit import GroupCommit
from server.idempotency import ClaimToken, StoredResponse, current_claim, store_with
from server.inspections import client_shapes
from server.inspections.events import publish
from server.inspections.files import (
    INSERT_FILES,
    file_rows,
    refuse_file_values,
    store_file_inputs,
    with_file_values,
)
from server.inspections.schemas import CreateInspectionBody
from server.inspections.service import (
    check_type,
    dump_state,
    filter_columns,
    product_ids,
    render,
)
from server.inspections.tables import InspectionRecord, ProductRecord
from server.multipart import UploadedFile
from server.settings import Settings
from server.templates import service as templates
from server.tokens import hash_token
from server.urlsafety import check_endpoint
from server.webhooks.service import active_subscriptions


def _table(model: type[Any]) -> Any:
    return cast(Any, model).__table__


#: Built once: executed with parameter dicts, so a create builds no statement and computes no
#: cache key (`insert(...).values(...)` per request cost about as much as the row itself).
_INSERT_INSPECTION = insert(_table(InspectionRecord))
_INSERT_PRODUCTS = insert(_table(ProductRecord))


def _producer_user(session: Session, company_id: str, producer: Any) -> str | None:
    if producer is None:
        return None
    if not isinstance(producer, dict):
        raise ApiError.of("invalid_body", "producer must be an object with `internalId`.")
    internal_id = producer.get("internalId")
    if internal_id is None:
        return None
    if not isinstance(internal_id, str) or not internal_id:
        raise ApiError.of("invalid_body", "producer.internalId must be a non-empty string.")
    member = find_member(session, company_id, internal_id)
    if member is None:
        raise ApiError.of(
            "not_found_user", f"No member of the company has internalId {internal_id!r}."
        )
    return member.id


# --- writing: creates waiting at the same moment share one transaction -------------------------


@dataclass(frozen=True, slots=True)
class NewInspection:
    """Everything one create writes: computed before, written by `_write_batch`."""

    company_id: str
    testing: bool
    mode: Mode
    manifest_key: str
    manifest: Template
    now: datetime
    row: dict[str, Any]
    products: list[dict[str, Any]]
    images: list[dict[str, Any]]
    events: tuple[str, ...]
    inspection: dict[str, Any]
    callback_url: str | None
    #: The magic link's delivery (server/delivery), None when `delivery.disabled`.
    delivery: Any = None
    #: The request's `Idempotency-Key` claim and its 201, stored in this same transaction: a
    #: process killed after the commit leaves the answer to replay, not a key to run again.
    idempotency: tuple[ClaimToken, StoredResponse] | None = None


def _write_batch(db: Database, items: list[NewInspection]) -> None:
    """Write new inspections in one transaction: rows, products, files, events, counters."""
    manifests = {item.manifest_key: item for item in items}
    # SQLite: the write lock from the start; this transaction only writes what was computed.
    with db.session(immediate=True) as session:
        for key, item in manifests.items():
            templates.ensure_stored(session, key, item.manifest, item.now)
        # Core inserts with prebuilt statements, one executemany per table.
        session.execute(_INSERT_INSPECTION, [item.row for item in items])
        products = [row for item in items for row in item.products]
        if products:
            session.execute(_INSERT_PRODUCTS, products)
        images = [row for item in items for row in item.images]
        if images:
            session.execute(INSERT_FILES, images)
        deliveries.add_many(session, [item.delivery for item in items if item.delivery])
        for item in items:
            if item.idempotency is not None:
                store_with(session, *item.idempotency)
        subscriptions: dict[tuple[str, bool, str], list[Any]] = {}
        for item in items:
            for event in item.events:
                found = subscriptions.get((item.company_id, item.testing, event))
                if found is None:
                    found = active_subscriptions(session, item.company_id, item.testing, event)
                    subscriptions[(item.company_id, item.testing, event)] = found
                publish(
                    session,
                    company_id=item.company_id,
                    testing=item.testing,
                    event=event,
                    payload={},
                    inspection=item.inspection,
                    callback_url=item.callback_url,
                    subscriptions=found,
                )
        # Last before the commit: on PostgreSQL this update locks the company's row, and
        # every other create of the company waits for that lock until this transaction ends.
        consumed = Counter(item.company_id for item in items if item.mode == "live")
        for company_id, count in sorted(consumed.items()):
            count_consumed(session, company_id, "live", count)
        session.commit()
        for key in manifests:
            templates.remember_stored(session, key)


_writers: weakref.WeakKeyDictionary[Database, GroupCommit[NewInspection]] = (
    weakref.WeakKeyDictionary()
)
_writers_lock = threading.Lock()


def _writer(db: Database) -> GroupCommit[NewInspection]:
    """The group commit of creates into `db` (one per database object)."""
    with _writers_lock:
        writer = _writers.get(db)
        if writer is None:
            writer = GroupCommit(functools.partial(_write_batch, db))
            _writers[db] = writer
        return writer


# --- create ------------------------------------------------------------------------------------


def create_inspection(
    db: Database,
    settings: Settings,
    blobs: BlobStore,
    auth: AuthContext,
    inspection_type: str,
    body: dict[str, Any],
    files: dict[str, UploadedFile],
    now: datetime,
) -> dict[str, Any]:
    """Create an inspection from the spec's creation body; the spec's 201 response body."""
    check_type(inspection_type)
    body, goods_list = client_shapes.creation_body(body, inspection_type)
    try:
        decode_shape(body, CreateInspectionBody)  # a wrong type anywhere: 400 naming it
        return _checked_create(db, settings, blobs, auth, inspection_type, body, files, now)
    except ApiError as error:
        raise client_shapes.as_sent(error, goods_list) from None


def _checked_create(
    db: Database,
    settings: Settings,
    blobs: BlobStore,
    auth: AuthContext,
    inspection_type: str,
    body: dict[str, Any],
    files: dict[str, UploadedFile],
    now: datetime,
) -> dict[str, Any]:
    callback = body.pop("callbackURL", None)
    # The guard of report callbacks and webhook endpoints: in production no internal address.
    callback_url = None if callback is None else check_endpoint(callback, settings)
    body["delivery"], destination = check_delivery(
        body.get("delivery"), settings, locale=body.get("locale")
    )
    access_code = secrets.token_urlsafe(24)
    stored_keys: list[str] = []
    try:
        return _create(
            db,
            settings,
            blobs,
            auth,
            inspection_type,
            body,
            files,
            now,
            callback_url,
            access_code,
            stored_keys,
            destination,
        )
    except BaseException:
        for blob_key in stored_keys:
            blobs.delete(blob_key)
        raise


def _create(
    db: Database,
    settings: Settings,
    blobs: BlobStore,
    auth: AuthContext,
    inspection_type: str,
    body: dict[str, Any],
    files: dict[str, UploadedFile],
    now: datetime,
    callback_url: str | None,
    access_code: str,
    stored_keys: list[str],
    destination: Destination | None,
) -> dict[str, Any]:
    # Reads and computation first, outside the write transaction: SQLite has one writer at a
    # time, so its write lock is held for the inserts and the commit only, not for the runtime.
    delegation = auth.delegation
    if delegation is not None:
        # A partner application's access token creates for its member: they are the producer.
        body = {**body, "producer": {"internalId": delegation.producer_internal_id}}
    with db.session() as session:
        key, manifest = templates.resolve_for_inspection(
            session, auth.company_id, body.get("templateId"), inspection_type
        )
        user_id = (
            delegation.producer_id
            if delegation is not None
            else _producer_user(session, auth.company_id, body.get("producer"))
        )
    program = templates.program_for(key, manifest)
    refuse_file_values(manifest, body.get("inputs"))
    file_values, stored_files = store_file_inputs(blobs, auth, manifest, files, settings)
    stored_keys.extend(item.blob_key for item in stored_files)
    body = with_file_values(body, file_values)
    state = run_runtime(
        runtime.create,
        program,
        body,
        inspection_type=inspection_type,
        now=now,
        ids=new_object_id,
        company_id=auth.company_id,
        user_id=user_id or "",
        testing=auth.testing,
    )
    document = dump_state(state)
    inspection = render(program, state)
    inspection_id = str(document.get("_id") or document.get("id"))
    values: dict[str, Any] = {
        "id": inspection_id,
        "company_id": auth.company_id,
        "testing": auth.testing,
        "type": inspection_type,
        "manifest_key": key,
        "access_code_hash": hash_token(access_code),
        "callback_url": callback_url,
        "created_at": now,
        "updated_at": now,
        "state": document,
        "document": inspection,
        **filter_columns(document),
    }
    product_rows = [
        {
            "id": product_id,
            "inspection_id": inspection_id,
            "company_id": auth.company_id,
            "testing": auth.testing,
            "type": inspection_type,
        }
        for product_id in product_ids(document)
    ]
    magic_link = f"{settings.public_url}/i/{inspection_id}?code={access_code}"
    delivery = _delivery(destination, body, manifest, magic_link, values, auth, now)
    values["delivery"] = deliveries.view(delivery) if delivery else deliveries.disabled_view()
    events = ["inspection_created"]
    if values["status"] == "started":
        events.append("inspection_started")
    ids = product_ids(document)
    response: dict[str, Any] = {
        "inspectionId": inspection_id,
        "productId": ids[0] if ids else None,
        # Every product, in order, whatever form the products were sent in (the client
        # libraries read `productIds` after creating goods from one object too).
        "productIds": ids,
        "message": "Inspection created",
        "magicLink": magic_link,
    }
    claim = current_claim()
    stored = None
    if claim is not None:
        stored = (claim, StoredResponse.json(201, response))
    _writer(db).write(
        NewInspection(
            company_id=auth.company_id,
            testing=auth.testing,
            mode=auth.mode,
            manifest_key=key,
            manifest=manifest,
            now=now,
            row=values,
            products=product_rows,
            images=file_rows(stored_files, inspection_id, auth, now),
            events=tuple(events),
            inspection=inspection,
            callback_url=callback_url,
            delivery=delivery,
            idempotency=stored,
        )
    )
    return response


def _delivery(
    destination: Destination | None,
    body: dict[str, Any],
    manifest: Template,
    magic_link: str,
    values: dict[str, Any],
    auth: AuthContext,
    now: datetime,
) -> Any:
    """The delivery row to write with the inspection (None when delivery is disabled): the
    link expires when the template's `link expires after` says, else with the inspection."""
    if destination is None:
        return None
    hours = manifest.parameters.linkExpiresInHours
    expires_at = now + timedelta(hours=hours) if hours else values.get("expires_at")
    planned = deliveries.plan(destination, body.get("locale"), magic_link, expires_at)
    return deliveries.new_row(planned, values["id"], auth.company_id, auth.testing, now)
