"""Inspections: create, read and change inspections through the runtime, one transaction each.

Every change loads the inspection row under a write lock (`SELECT ... FOR UPDATE` on
PostgreSQL, `BEGIN IMMEDIATE` on SQLite), runs the pure runtime function on its state, and
saves the new state, the indexed filter columns and the events in the same transaction, so two
concurrent changes of one inspection never lose each other's work.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import select
from sqlmodel import Session

import runtime
from inspectlang.manifest import INSPECTION_TYPES, Template
from runtime import InspectionState, Program, intake, new_object_id
from runtime.state import ProductState
from server.auth import AuthContext, count_consumed, find_member
from server.blobs import BlobStore
from server.db import Database
from server.errors import ApiError
from server.multipart import UploadedFile
from server.records import ImageRecord, InspectionRecord, ProductRecord
from server.services import templates
from server.services.common import (
    content_url,
    not_found_inspection,
    publish,
    run_runtime,
    sign_sources,
)
from server.settings import Settings

#: Limits of `metadata` (spec "Limits"): pairs, key length, value length.
MAX_METADATA_PAIRS = 50
MAX_METADATA_KEY_CHARS = 50
MAX_METADATA_VALUE_CHARS = 500
#: Longest `callbackURL` accepted.
MAX_CALLBACK_URL_CHARS = 2048
#: Longest value copied into an indexed filter column (longer values are cut for the index).
MAX_INDEXED_CHARS = 200

#: Runtime statuses that publish an event when an operation moves an inspection into them.
STATUS_EVENTS = {
    "started": "inspection_started",
    "blocked": "inspection_blocked",
    "completed": "inspection_completed",
}


@dataclass(frozen=True, slots=True)
class Loaded:
    """An inspection row with its program and parsed state, inside a locked transaction."""

    record: InspectionRecord
    manifest: Template
    program: Program
    state: InspectionState
    #: The stored document as loaded (the record's `state` is replaced on save).
    state_document: dict[str, Any]


# --- validation of what the runtime does not know about ----------------------------------------


def _metadata_error(field: str, code: str, message: str) -> ApiError:
    return ApiError.of(
        "invalid_metadata",
        f"{field}: {message}",
        [{"field": field, "code": code, "message": message}],
    )


def validate_metadata(metadata: Any) -> None:
    """The spec's metadata limits; each breach is 400 `invalid_metadata` naming the field."""
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        raise _metadata_error("metadata", "not_an_object", "metadata must be an object of strings")
    if len(metadata) > MAX_METADATA_PAIRS:
        raise _metadata_error(
            "metadata",
            "too_many_pairs",
            f"metadata has {len(metadata)} pairs; at most {MAX_METADATA_PAIRS} are allowed",
        )
    for key, value in metadata.items():
        if len(key) > MAX_METADATA_KEY_CHARS:
            raise _metadata_error(
                f"metadata.{key[:60]}",
                "key_too_long",
                f"the key has {len(key)} characters; at most {MAX_METADATA_KEY_CHARS} are allowed",
            )
        if not isinstance(value, str):
            raise _metadata_error(f"metadata.{key}", "value_not_string", "values must be strings")
        if len(value) > MAX_METADATA_VALUE_CHARS:
            raise _metadata_error(
                f"metadata.{key}",
                "value_too_long",
                f"the value has {len(value)} characters; "
                f"at most {MAX_METADATA_VALUE_CHARS} are allowed",
            )


def _validate_callback_url(value: Any) -> str | None:
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or len(value) > MAX_CALLBACK_URL_CHARS
        or not value.startswith(("https://", "http://"))
        or any(ch.isspace() for ch in value)
    ):
        raise ApiError(
            "invalid_callback_url",
            400,
            f"callbackURL must be an http(s) URL of at most {MAX_CALLBACK_URL_CHARS} characters.",
            [{"field": "callbackURL", "message": "not an http(s) URL"}],
        )
    return value


def _check_type(inspection_type: str) -> None:
    if inspection_type not in INSPECTION_TYPES:
        raise ApiError(
            "invalid_inspection_type",
            400,
            f"Unknown inspection type {inspection_type!r}; one of {', '.join(INSPECTION_TYPES)}.",
        )


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


# --- columns, documents ------------------------------------------------------------------------


def dump_state(state: InspectionState) -> dict[str, Any]:
    return state.model_dump(mode="json", by_alias=True)


def _indexed(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value)[:MAX_INDEXED_CHARS]


def filter_columns(document: dict[str, Any]) -> dict[str, Any]:
    """The indexed list-filter columns of a stored state document."""
    consumer = document.get("consumer") or {}
    products = document.get("products") or []
    plate = None
    if products:
        first = products[0]
        data = first.get(first.get("type") or "") or first.get("data") or {}
        plate = (data.get("plate") if isinstance(data, dict) else None) or first.get("plate")
    template = document.get("template") or {}
    return {
        "status": str(document.get("status") or "created"),
        "veredict": str(document.get("veredict") or "not_defined"),
        "consumer_identification": _indexed(
            consumer.get("identification") if isinstance(consumer, dict) else None
        ),
        "plate": _indexed(plate),
        "template_id": str(template.get("_id") or template.get("id") or ""),
    }


def product_ids(document: dict[str, Any]) -> list[str]:
    return [str(p.get("_id") or p.get("id")) for p in document.get("products") or []]


def render(program: Program, state: InspectionState) -> dict[str, Any]:
    """The Inspection object as stored in the row's `document` column (unsigned links)."""
    return dict(runtime.to_api(program, state))


def present(
    document: dict[str, Any], inspection_id: str, company_id: str, testing: bool, public_url: str
) -> dict[str, Any]:
    """A stored document as the API returns it: `testing` from the row (the key mode it
    belongs to) and links to stored files signed for reading without a key."""
    document["_id"] = inspection_id
    document["testing"] = testing
    sign_sources(public_url, document, company_id, testing)
    return document


def to_document(
    program: Program, state: InspectionState, record: InspectionRecord, public_url: str
) -> dict[str, Any]:
    """The Inspection object of a state just computed."""
    return present(render(program, state), record.id, record.company_id, record.testing, public_url)


def _hash_code(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def _event_payload(record: InspectionRecord, **extra: Any) -> dict[str, Any]:
    return {
        "inspectionId": record.id,
        "type": record.type,
        "status": record.status,
        "veredict": record.veredict,
        **extra,
    }


# --- create ------------------------------------------------------------------------------------

#: Most products one `goods` inspection may declare in `products`.
MAX_PRODUCTS = 20


def _split_products(inspection_type: str, body: dict[str, Any]) -> list[Any]:
    """A goods body's `products: [...]`: the first becomes the runtime's product (`goods`), the
    others are returned to be added after creation. Other types may not send `products`."""
    products = body.pop("products", None)
    if products is None:
        return []
    if inspection_type != "goods":
        raise ApiError.of(
            "invalid_body", "Only goods inspections declare several products (`products`)."
        )
    if not isinstance(products, list) or not 1 <= len(products) <= MAX_PRODUCTS:
        raise ApiError.of(
            "invalid_body",
            f"products must be a list of 1 to {MAX_PRODUCTS} product objects.",
            [{"field": "products", "message": "expected 1 to 20 objects"}],
        )
    if "goods" in body:
        raise ApiError.of("invalid_body", "Send the products either as `goods` or as `products`.")
    body["goods"] = products[0]
    return products[1:]


def _add_products(state: InspectionState, inspection_type: str, products: list[Any]) -> None:
    """Append the further products of a goods inspection, validated like the first one."""
    for index, item in enumerate(products, start=1):
        fields = run_runtime(
            intake.check_fields,
            item,
            intake.product_fields(inspection_type),
            f"products.{index}",
        )
        state.products.append(ProductState(id=new_object_id(), type=inspection_type, data=fields))


def _store_file_inputs(
    blobs: BlobStore,
    auth: AuthContext,
    manifest: Template,
    files: dict[str, UploadedFile],
    settings: Settings,
) -> tuple[list[dict[str, Any]], list[tuple[str, UploadedFile, str]]]:
    """Store file parts named by a file/video input identifier; their input values and rows."""
    file_inputs = {i.identifier for i in manifest.inputs if i.type in ("file", "video")}
    values: list[dict[str, Any]] = []
    stored: list[tuple[str, UploadedFile, str]] = []
    for name, upload in files.items():
        if name not in file_inputs:
            raise ApiError(
                "unknown_file_input",
                400,
                f"The multipart file {name!r} is not a file or video input of the template.",
                [{"field": name, "message": "no file input with this identifier"}],
            )
        file_id = new_object_id()
        key = f"inputs/{auth.company_id}/{file_id}"
        blobs.put(key, upload.data)
        stored.append((file_id, upload, key))
        values.append(
            {
                "identifier": name,
                "value": {
                    "name": content_url(settings.public_url, file_id),
                    "contentType": upload.content_type,
                    "size": len(upload.data),
                },
            }
        )
    return values, stored


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
    _check_type(inspection_type)
    body = dict(body)
    validate_metadata(body.get("metadata"))
    callback_url = _validate_callback_url(body.pop("callbackURL", None))
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
) -> dict[str, Any]:
    with db.session(immediate=True) as session:
        key, manifest = templates.resolve_for_inspection(
            session, auth.company_id, body.get("templateId"), inspection_type, now
        )
        user_id = _producer_user(session, auth.company_id, body.get("producer"))
        program = templates.program_for(key, manifest)
        file_values, stored_files = _store_file_inputs(blobs, auth, manifest, files, settings)
        stored_keys.extend(blob_key for _, _, blob_key in stored_files)
        if file_values:
            given = body.get("inputs")
            body["inputs"] = [*(given if isinstance(given, list) else []), *file_values]
        extra_products = _split_products(inspection_type, body)
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
        _add_products(state, inspection_type, extra_products)
        document = dump_state(state)
        record = InspectionRecord(
            id=str(document.get("_id") or document.get("id")),
            company_id=auth.company_id,
            testing=auth.testing,
            type=inspection_type,
            manifest_key=key,
            access_code_hash=_hash_code(access_code),
            callback_url=callback_url,
            created_at=now,
            updated_at=now,
            state=document,
            document=render(program, state),
            **filter_columns(document),
        )
        session.add(record)
        session.flush()
        for product_id in product_ids(document):
            session.add(
                ProductRecord(
                    id=product_id,
                    inspection_id=record.id,
                    company_id=auth.company_id,
                    testing=auth.testing,
                    type=inspection_type,
                )
            )
        for file_id, upload, blob_key in stored_files:
            session.add(
                ImageRecord(
                    id=file_id,
                    inspection_id=record.id,
                    company_id=auth.company_id,
                    testing=auth.testing,
                    kind="input",
                    blob_key=blob_key,
                    content_type=upload.content_type,
                    size=len(upload.data),
                    filename=upload.filename[:500],
                    created_at=now,
                )
            )
        count_consumed(session, auth.company_id, auth.mode)
        publish(
            session,
            company_id=auth.company_id,
            testing=auth.testing,
            event="inspection_created",
            payload=_event_payload(record, callbackURL=callback_url),
        )
        if record.status == "started":
            publish(
                session,
                company_id=auth.company_id,
                testing=auth.testing,
                event="inspection_started",
                payload=_event_payload(record),
            )
        session.commit()
    ids = product_ids(document)
    response: dict[str, Any] = {
        "inspectionId": record.id,
        "productId": ids[0] if ids else None,
        "message": "Inspection created",
        "magicLink": f"{settings.public_url}/i/{record.id}?code={access_code}",
    }
    if len(ids) > 1:
        response["productIds"] = ids
    return response


# --- read --------------------------------------------------------------------------------------


def find_inspection(
    session: Session, auth: AuthContext, inspection_id: str, *, lock: bool
) -> InspectionRecord:
    statement = select(InspectionRecord).where(
        cast(Any, InspectionRecord.id) == inspection_id,
        cast(Any, InspectionRecord.company_id) == auth.company_id,
        cast(Any, InspectionRecord.testing) == auth.testing,
    )
    if lock:
        statement = statement.with_for_update()
    record: InspectionRecord | None = session.execute(statement).scalars().first()
    if record is None:
        raise not_found_inspection()
    return record


def load(session: Session, record: InspectionRecord) -> Loaded:
    manifest = templates.load_manifest(session, record.manifest_key)
    program = templates.program_for(record.manifest_key, manifest)
    state = InspectionState.model_validate(record.state)
    return Loaded(
        record=record, manifest=manifest, program=program, state=state, state_document=record.state
    )


def get_inspection(
    db: Database, settings: Settings, auth: AuthContext, inspection_id: str
) -> dict[str, Any]:
    """The spec's Inspection object; 404 `inspection_not_found` for anything not the caller's.

    Reads only the stored document (no state parsing, no runtime call).
    """
    model = cast(Any, InspectionRecord)
    statement = select(model.document).where(
        model.id == inspection_id,
        model.company_id == auth.company_id,
        model.testing == auth.testing,
    )
    with db.session() as session:
        found = session.execute(statement).first()
        if found is None:
            raise not_found_inspection()
        document = found[0] if found[0] is not None else stored_document(session, inspection_id)
    return present(document, inspection_id, auth.company_id, auth.testing, settings.public_url)


def stored_document(session: Session, inspection_id: str) -> dict[str, Any]:
    """Render the document of a row stored without one (written by other code paths)."""
    record = session.get(InspectionRecord, inspection_id)
    if record is None:
        raise not_found_inspection()
    loaded = load(session, record)
    return render(loaded.program, loaded.state)


# --- changes -----------------------------------------------------------------------------------

Change = Callable[[Loaded], InspectionState]
Events = Callable[[Loaded, InspectionState], list[tuple[str, dict[str, Any]]]]
After = Callable[[Session, Loaded, InspectionState], None]


def change(
    db: Database,
    auth: AuthContext,
    inspection_id: str,
    operation: Change,
    now: datetime,
    *,
    events: Events | None = None,
    after: After | None = None,
) -> tuple[Loaded, InspectionState]:
    """Run `operation` on the inspection under a write lock and save its result.

    `events` names extra events to publish; `after` adds rows in the same transaction.
    """
    with db.session(immediate=True) as session:
        loaded = load(session, find_inspection(session, auth, inspection_id, lock=True))
        new_state = operation(loaded)
        save(session, loaded, new_state, now, events(loaded, new_state) if events else [])
        if after is not None:
            after(session, loaded, new_state)
        session.commit()
    return loaded, new_state


def save(
    session: Session,
    loaded: Loaded,
    new_state: InspectionState,
    now: datetime,
    events: list[tuple[str, dict[str, Any]]],
) -> None:
    """Write the new state and its filter columns; publish status and extra events."""
    record = loaded.record
    old_status = record.status
    document = dump_state(new_state)
    for column, value in filter_columns(document).items():
        setattr(record, column, value)
    record.state = document
    record.document = render(loaded.program, new_state)
    record.updated_at = now
    session.add(record)
    known = set(product_ids(loaded.state_document))
    for product_id in product_ids(document):
        if product_id not in known:
            session.add(
                ProductRecord(
                    id=product_id,
                    inspection_id=record.id,
                    company_id=record.company_id,
                    testing=record.testing,
                    type=record.type,
                )
            )
    for event, payload in events:
        publish(
            session,
            company_id=record.company_id,
            testing=record.testing,
            event=event,
            payload=_event_payload(record, **payload),
        )
    if record.status != old_status and record.status in STATUS_EVENTS:
        publish(
            session,
            company_id=record.company_id,
            testing=record.testing,
            event=STATUS_EVENTS[record.status],
            payload=_event_payload(record, previousStatus=old_status),
        )


def update_inspection(
    db: Database, auth: AuthContext, inspection_id: str, body: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """The spec's PUT: only fields not yet defined are applied; created/started only."""
    metadata = body.get("metadata")
    validate_metadata(metadata)

    def operation(loaded: Loaded) -> InspectionState:
        if isinstance(metadata, dict) and loaded.state.metadata:
            merged = {**metadata, **loaded.state.metadata}
            if len(merged) > MAX_METADATA_PAIRS:
                raise _metadata_error(
                    "metadata",
                    "too_many_pairs",
                    f"with the keys already set the inspection would have {len(merged)} "
                    f"metadata pairs; at most {MAX_METADATA_PAIRS} are allowed",
                )
        return run_runtime(runtime.update, loaded.program, loaded.state, body, now=now)

    change(db, auth, inspection_id, operation, now)
    return {"message": "Inspection updated"}


def find_product(session: Session, auth: AuthContext, product_id: str) -> ProductRecord:
    product = session.get(ProductRecord, product_id)
    if product is None or product.company_id != auth.company_id or product.testing != auth.testing:
        raise ApiError.of("product_not_found", "No product with that id.")
    return product


def update_product(
    db: Database,
    auth: AuthContext,
    inspection_type: str,
    product_id: str,
    body: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """The spec's product PUT; `people` has no product (update the inspection's consumer)."""
    _check_type(inspection_type)
    if inspection_type == "people":
        raise ApiError(
            "product_update_not_supported",
            400,
            "People inspections have no product: update the inspection's `consumer` with "
            "PUT /v1/inspection/:inspectionId instead.",
        )
    with db.session() as session:
        product = find_product(session, auth, product_id)
    if product.type != inspection_type:
        raise ApiError.of("product_not_found", f"No {inspection_type} product with that id.")
    change(
        db,
        auth,
        product.inspection_id,
        lambda loaded: run_runtime(
            runtime.update_product, loaded.program, loaded.state, product_id, body, now=now
        ),
        now,
    )
    return {"message": "Product updated"}


def start_inspection(
    db: Database, settings: Settings, auth: AuthContext, inspection_id: str, now: datetime
) -> dict[str, Any]:
    loaded, state = change(
        db,
        auth,
        inspection_id,
        lambda loaded: run_runtime(runtime.start, loaded.program, loaded.state, now=now),
        now,
    )
    return to_document(loaded.program, state, loaded.record, settings.public_url)


def finish_inspection(
    db: Database, settings: Settings, auth: AuthContext, inspection_id: str, now: datetime
) -> dict[str, Any]:
    """The client finishes the inspection: the verdict is computed, `completedBy: client`."""
    loaded, state = change(
        db,
        auth,
        inspection_id,
        lambda loaded: run_runtime(
            runtime.finish, loaded.program, loaded.state, completed_by="client", now=now
        ),
        now,
    )
    return to_document(loaded.program, state, loaded.record, settings.public_url)


def declare_damage(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    body: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """A damage declared by the consumer (template feature `damage_declaration`)."""
    damage = {k: v for k, v in body.items() if k != "productId"}

    def operation(loaded: Loaded) -> InspectionState:
        product_id = body.get("productId")
        if product_id is None:
            products = product_ids(loaded.record.state)
            if not products:
                raise ApiError.of("product_not_found", "The inspection has no product.")
            product_id = products[0]
        if not isinstance(product_id, str):
            raise ApiError.of("invalid_body", "productId must be a string.")
        return run_runtime(
            runtime.declare_damage, loaded.program, loaded.state, product_id, damage, now=now
        )

    loaded, state = change(db, auth, inspection_id, operation, now)
    return to_document(loaded.program, state, loaded.record, settings.public_url)


def record_validation(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    image_id: str,
    body: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """An analysis service's result for one validation of an image."""
    damages = body.get("damages")
    result = {k: v for k, v in body.items() if k != "damages"}
    if damages is not None and not isinstance(damages, list):
        raise ApiError.of("invalid_validation_result", "damages must be a list.")

    def events(loaded: Loaded, state: InspectionState) -> list[tuple[str, dict[str, Any]]]:
        return [("image_processed", {"imageId": image_id, "validation": body.get("validation")})]

    loaded, state = change(
        db,
        auth,
        inspection_id,
        lambda loaded: run_runtime(
            runtime.record_validation,
            loaded.program,
            loaded.state,
            image_id,
            result,
            damages=damages or [],
            now=now,
        ),
        now,
        events=events,
    )
    return to_document(loaded.program, state, loaded.record, settings.public_url)
